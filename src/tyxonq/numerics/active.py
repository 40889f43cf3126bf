"""Transforms that run on whichever backend is active when the transformed function is called.

``tq.value_and_grad(f)`` can be made once and used under ``numpy`` and ``pytorch`` alike.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .autodiff import normalize_argnums
from .selection import get_backend

__all__ = ["value_and_grad", "grad", "vmap"]


def value_and_grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False,
                   *, backend: Any = None) -> Callable[..., Any]:
    """Value and gradient of a real scalar function, on the active (or given) backend.

    Autograd on PyTorch; central finite differences on NumPy and cuPyNumeric. For a complex
    argument ``z`` the gradient is ``df/dRe(z) + 1j * df/dIm(z)`` everywhere.

    Parameters
    ----------
    fn : callable
        Returns a real scalar (or ``(scalar, aux)`` with ``has_aux=True``).
    argnums : int or tuple of int
        Positional arguments to differentiate; a tuple gives a tuple of gradients.
    has_aux : bool
        Whether ``fn`` returns ``(value, aux)``; then the result is ``((value, aux), grads)``.
    backend : ArrayBackend, optional
        Fix the backend instead of using the one active at call time.

    Examples
    --------
    >>> import tyxonq as tq
    >>> f = tq.value_and_grad(lambda x, y: (x * y) ** 2, argnums=(0, 1))
    >>> value, (dx, dy) = f(2.0, 3.0)
    >>> round(float(value), 6), round(float(dx), 5), round(float(dy), 5)
    (36.0, 36.0, 24.0)
    """
    normalize_argnums(argnums)
    return _on_call_time_backend("value_and_grad", fn, backend, argnums, has_aux)


def grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False,
         *, backend: Any = None) -> Callable[..., Any]:
    """Gradient of a real scalar function; see :func:`value_and_grad`.

    Examples
    --------
    >>> import tyxonq as tq
    >>> round(float(tq.grad(lambda x: x ** 3)(2.0)), 5)
    12.0
    """
    normalize_argnums(argnums)
    return _on_call_time_backend("grad", fn, backend, argnums, has_aux)


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         *, backend: Any = None) -> Callable[..., Any]:
    """Batch ``fn``: ``torch.func.vmap`` on PyTorch, a loop on NumPy and cuPyNumeric.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> tq.vmap(lambda x: K.sum(x), backend=K)(K.ones((3, 2), dtype="float64")).tolist()
    [2.0, 2.0, 2.0]
    """
    return _on_call_time_backend("vmap", fn, backend, in_axes, out_axes)


def _on_call_time_backend(transform: str, fn: Callable[..., Any], backend: Any,
                          *options: Any) -> Callable[..., Any]:
    """``backend.<transform>(fn, *options)``, the backend being the active one at each call."""

    @functools.wraps(fn)
    def transformed(*args: Any, **kwargs: Any) -> Any:
        active = backend if backend is not None else get_backend()
        return getattr(active, transform)(fn, *options)(*args, **kwargs)

    return transformed
