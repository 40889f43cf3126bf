"""``tq.value_and_grad``: one objective, the right gradient method for the active backend.

A user writes the objective once -- a function of a parameter array that builds circuits and
returns an energy -- and ``tq.value_and_grad(objective)`` differentiates it:

* ``"adjoint"`` (the default on NumPy, cuPyNumeric and PyTorch): exact, every expectation value
  differentiated by one adjoint sweep over the state (or reverse mode through its light-cone
  contractions). On NumPy and cuPyNumeric the parameters are traced as dual numbers through the
  objective's arithmetic; on PyTorch autograd differentiates the objective and each expectation
  value is one autograd node whose backward pass is that sweep
  (:mod:`tyxonq.circuit.differentiation.node`).
* ``"autograd"`` (the default on JAX): autograd through the simulator, every gate.
* ``"parameter-shift"``: exact, like adjoint, but each angle's derivative comes from shifted
  evaluations (through the cached contraction plans, so light cones still apply).
* ``"finite-difference"``: central differences (backends without autograd).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .circuit.differentiation.tracing import Dual, TracingError, gradient_method, traced_array
from .numerics import get_backend
from .numerics.autodiff import check_argnums_in_range, normalize_argnums, split_value_and_aux
from .numerics.lanes import Lanes, LanesError

__all__ = ["value_and_grad", "grad", "gradient_method", "GRADIENT_METHODS"]

GRADIENT_METHODS = ("autograd", "adjoint", "parameter-shift", "finite-difference")


def _default_method(K: Any) -> str:
    autograd_only = K.capabilities.autodiff == "autograd" and not K.capabilities.gradient_nodes
    return "autograd" if autograd_only else "adjoint"


def value_and_grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
                   method: str | None = None, backend: Any = None) -> Callable[..., Any]:
    """Value and exact gradient of a real scalar objective, on the active (or given) backend.

    Parameters
    ----------
    fn : callable
        Returns a real scalar (or ``(scalar, aux)`` with ``has_aux=True``), typically an energy
        of circuits built from the parameters.
    argnums : int or tuple of int
        Positional arguments to differentiate (real scalars or arrays).
    has_aux : bool
        ``fn`` returns ``(value, aux)``; the result is then ``((value, aux), grads)``.
    method : {"autograd", "adjoint", "parameter-shift", "finite-difference"}, optional
        Default: ``"adjoint"``, except on JAX (``"autograd"``, which its compiler makes fast).
        On PyTorch the exact methods run inside autograd (each expectation value one node), so
        ``fn`` may use any torch operation.
    backend : ArrayBackend, optional
        Fix the backend instead of using the one active at each call.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> def energy(t):
    ...     c = tq.Circuit(2).ry(0, t[0]).cx(0, 1).rx(1, 2 * t[1])
    ...     return c.expectation_ps(z=[1]) + 0.5 * c.expectation_ps(x=[0])
    >>> with tq.use_backend("numpy"):
    ...     value, gradient = tq.value_and_grad(energy)(np.array([0.3, 0.2]))
    >>> np.round(gradient, 6).tolist()
    [-0.272192, -0.744051]
    """
    normalize_argnums(argnums)
    if method is not None and method not in GRADIENT_METHODS:
        raise ValueError(f"method={method!r} must be one of {GRADIENT_METHODS}")

    @functools.wraps(fn)
    def transformed(*args: Any, **kwargs: Any) -> Any:
        K = backend if backend is not None else get_backend()
        chosen = method or _default_method(K)
        if chosen == "autograd" and K.capabilities.autodiff != "autograd":
            raise ValueError(
                f"method='autograd' needs a backend with autograd (pytorch); the {K.name} backend "
                "differentiates with 'adjoint', 'parameter-shift' or 'finite-difference'"
            )
        if chosen == "finite-difference" and K.capabilities.autodiff != "finite-difference":
            raise ValueError(
                f"method='finite-difference' runs on the numpy or cupynumeric backends; the "
                f"{K.name} backend has exact autograd"
            )
        if chosen == "finite-difference":
            return K.value_and_grad(fn, argnums, has_aux)(*args, **kwargs)
        if chosen == "autograd" or K.capabilities.gradient_nodes:
            with gradient_method(chosen):  # exact methods as gradient nodes inside autograd
                return K.value_and_grad(fn, argnums, has_aux)(*args, **kwargs)
        return _traced_value_and_grad(K, fn, argnums, has_aux, chosen, args, kwargs)

    return transformed


def grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
         method: str | None = None, backend: Any = None) -> Callable[..., Any]:
    """The gradient only; see :func:`value_and_grad`.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> with tq.use_backend("numpy"):
    ...     g = tq.grad(lambda t: tq.Circuit(1).rx(0, t).expectation_ps(z=[0]))(0.4)
    >>> bool(abs(float(g) + np.sin(0.4)) < 1e-12)
    True
    """
    value_and_gradient = value_and_grad(fn, argnums, has_aux, method=method, backend=backend)

    @functools.wraps(fn)
    def gradient(*args: Any, **kwargs: Any) -> Any:
        value, grads = value_and_gradient(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return gradient


def _traced_value_and_grad(K: Any, fn: Callable[..., Any], argnums: Any, has_aux: bool,
                           method: str, args: tuple, kwargs: dict) -> Any:
    nums, single = normalize_argnums(argnums)
    check_argnums_in_range(nums, len(args))
    values = []
    for a in nums:
        if isinstance(args[a], Lanes) or (isinstance(args[a], np.ndarray) and args[a].dtype == object
                                          and any(isinstance(x, Lanes) for x in args[a].flat)):
            raise LanesError(f"exact gradients (method={method!r}) of a batch of parameter sets: "
                             "they run one set at a time (vectorize_or_fallback loops)")
        host = np.asarray(K.to_numpy(K.asarray(args[a])))
        if host.dtype.kind == "c":
            raise TypeError(f"argument {a}: method={method!r} differentiates real parameters; "
                            "got a complex array")
        values.append(host.astype(np.float64))
    total = sum(v.size for v in values)
    traced_args, offset = list(args), 0
    for a, value in zip(nums, values):
        traced = traced_array(value, offset, total)
        traced_args[a] = traced.item() if traced.shape == () else traced
        offset += value.size
    with gradient_method(method):
        output = fn(*traced_args, **kwargs)
    result, aux = split_value_and_aux(output, has_aux)
    result = _scalar_dual(K, result, total)
    gradients, offset = [], 0
    for value in values:
        piece = result.gradient[offset: offset + value.size].reshape(value.shape)
        gradients.append(K.asarray(piece.astype(np.float64), K.real_dtype))
        offset += value.size
    scalar = K.asarray(float(result.value), K.real_dtype)
    output_value = (scalar, _untraced(K, aux)) if has_aux else scalar
    return output_value, gradients[0] if single else tuple(gradients)


def _scalar_dual(K: Any, result: Any, total: int) -> Dual:
    if not isinstance(result, Dual) and K.is_array(result):
        result = np.asarray(K.to_numpy(result))  # a constant on the backend (cuPyNumeric, ...)
    if isinstance(result, np.ndarray):
        if result.size != 1:
            raise ValueError(f"value_and_grad needs fn to return a scalar; got shape {result.shape}")
        result = result.reshape(-1)[0]
    if isinstance(result, (int, float, np.floating, np.integer)):
        return Dual(float(result), np.zeros(total))  # fn does not depend on the parameters
    if not isinstance(result, Dual):
        raise TracingError(
            f"fn returned {type(result).__name__}, which carries no gradient; with exact methods "
            "return expectation values (or arithmetic on them)"
        )
    if np.iscomplexobj(result.value) and np.imag(result.value) != 0:
        raise TypeError("value_and_grad needs fn to return a real scalar; it returned a complex "
                        "value. Return its real part")
    return Dual(float(np.real(result.value)), np.real(result.gradient))


def _untraced(K: Any, tree: Any) -> Any:
    if isinstance(tree, Dual):
        return K.asarray(tree.value)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_untraced(K, item) for item in tree)
    if isinstance(tree, dict):
        return {key: _untraced(K, item) for key, item in tree.items()}
    if isinstance(tree, np.ndarray) and tree.dtype == object:
        return K.asarray(np.vectorize(lambda d: d.value if isinstance(d, Dual) else d)(tree))
    return tree
