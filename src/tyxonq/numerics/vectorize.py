"""Batching: the loop ``vmap`` of backends without a native one, and ``vectorize_or_fallback``."""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

__all__ = ["loop_vmap", "vectorize_or_fallback", "VectorizationFallbackWarning", "POLICIES"]

POLICIES = ("auto", "force", "off")


class VectorizationFallbackWarning(RuntimeWarning):
    """Native vectorisation failed and a loop over the batch is used instead (slower, same values)."""


def _per_argument_axes(in_axes: Any, n_args: int) -> tuple[int | None, ...]:
    if in_axes is None or isinstance(in_axes, int):
        return (in_axes,) * n_args
    if isinstance(in_axes, (tuple, list)) and len(in_axes) == n_args:
        return tuple(in_axes)
    raise ValueError(
        f"in_axes={in_axes!r} must be an int, None, or a tuple with one entry per positional "
        f"argument ({n_args} given)"
    )


def loop_vmap(backend: Any, fn: Callable[..., Any], in_axes: Any = 0,
              out_axes: Any = 0) -> Callable[..., Any]:
    """Vectorise ``fn`` by calling it once per batch element and stacking the results.

    ``in_axes`` is an int, ``None`` (broadcast the argument) or one entry per argument;
    ``out_axes`` an int or one entry per output. Outputs may be arrays, numbers, or tuples, lists
    and dicts of them.

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> batched = loop_vmap(K, lambda x, y: x * y, in_axes=(0, None))
    >>> batched(K.asarray([1.0, 2.0]), 3.0).tolist()
    [3.0, 6.0]
    """

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        axes = _per_argument_axes(in_axes, len(args))
        sizes = {backend.shape(arg)[axis] for arg, axis in zip(args, axes) if axis is not None}
        if len(sizes) != 1:
            raise ValueError(
                "vmap needs at least one batched argument and equal batch sizes; got sizes "
                f"{sorted(sizes)} for in_axes={in_axes!r}"
            )
        (size,) = sizes
        results = []
        for index in range(size):
            sliced = [
                arg if axis is None else backend.moveaxis(arg, axis, 0)[index]
                for arg, axis in zip(args, axes)
            ]
            results.append(fn(*sliced, **kwargs))
        return _stack_outputs(backend, results, out_axes)

    return batched


def _stack_outputs(backend: Any, results: Sequence[Any], out_axes: Any) -> Any:
    first = results[0]
    if isinstance(first, (tuple, list)):
        axes = _per_argument_axes(out_axes, len(first))
        stacked = [
            _stack_outputs(backend, [r[i] for r in results], axes[i]) for i in range(len(first))
        ]
        return type(first)(stacked)
    if isinstance(first, dict):
        return {key: _stack_outputs(backend, [r[key] for r in results], out_axes) for key in first}
    if out_axes is None:
        return first
    return backend.stack([backend.asarray(r) for r in results], axis=out_axes)


def vectorize_or_fallback(fn: Callable[..., Any], backend: Any = None, policy: str = "auto",
                          in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """Batch ``fn`` over a leading axis: natively where the backend can, else by a loop.

    Parameters
    ----------
    fn : callable
        Function of unbatched arguments.
    backend : ArrayBackend, optional
        Backend to use; by default the one active when the batched function is called.
    policy : {"auto", "force", "off"}
        ``"off"`` loops over the batch; ``"force"`` uses the backend's native vmap or raises
        :class:`~tyxonq.numerics.errors.VectorizationError`; ``"auto"`` uses native vmap and, if
        that fails, warns once (naming the error) and loops from then on. Every policy returns
        the same values with the same shape.
    in_axes, out_axes
        As for :meth:`ArrayBackend.vmap`.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> energies = vectorize_or_fallback(lambda t: K.sum(K.cos(t)), backend=K)
    >>> energies(K.zeros((3, 2), dtype="float64")).tolist()
    [2.0, 2.0, 2.0]
    """
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r} is not one of {POLICIES}")
    native_failures: dict[str, BaseException] = {}

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        from .selection import get_backend

        active = backend if backend is not None else get_backend()
        looped = loop_vmap(active, fn, in_axes, out_axes)
        if policy == "off":
            return looped(*args, **kwargs)
        native = active.capabilities.vmap == "native"
        if policy == "force":
            if not native:
                from .errors import VectorizationError

                raise VectorizationError(
                    f"policy='force' needs native vmap, but the {active.name} backend only loops; "
                    "use policy='auto' or 'off', or a backend with native vmap (pytorch)"
                )
            return active.vmap(fn, in_axes, out_axes)(*args, **kwargs)
        if native and active.name not in native_failures:
            try:
                return active.vmap(fn, in_axes, out_axes)(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - any failure of the transform falls back
                native_failures[active.name] = error
                warnings.warn(
                    f"native vmap of {getattr(fn, '__name__', fn)!r} on the {active.name} backend "
                    f"failed ({type(error).__name__}: {error}); looping over the batch instead "
                    "(same values, slower). Pass policy='off' to silence this.",
                    VectorizationFallbackWarning,
                    stacklevel=2,
                )
        return looped(*args, **kwargs)

    return batched
