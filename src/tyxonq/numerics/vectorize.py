"""Batching: ``vmap`` of backends without a native one (lanes, else a loop) and
``vectorize_or_fallback``.

On NumPy and cuPyNumeric a batched function is first traced once with :class:`~tyxonq.numerics.
lanes.Lanes` (every batch element a lane of one array, evaluated together); a function that cannot
run on lanes is called once per batch element instead (the same values), with one warning. On
PyTorch and JAX, arguments in host memory that nothing tracks run on the lanes of the NumPy host
twin first (:func:`host_lanes`), else through the backend's own vmap.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

from .arguments import checked_choice
from .axes import per_argument_axes
from .host_twin import draw_free_twin, on_host_twin, reads_on_host
from .protocol import ArrayBackend

__all__ = ["loop_vmap", "lane_vmap", "host_lanes", "vectorize_or_fallback",
           "VectorizationFallbackWarning", "POLICIES"]

POLICIES = ("auto", "force", "off")


class VectorizationFallbackWarning(RuntimeWarning):
    """Native vectorisation failed and a loop over the batch is used instead (slower, same values)."""


def loop_vmap(backend: ArrayBackend, fn: Callable[..., Any], in_axes: Any = 0,
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
        axes = per_argument_axes(in_axes, len(args))
        size = _batch_size(backend, args, axes, in_axes)
        results = []
        for index in range(size):
            sliced = [
                arg if axis is None else backend.moveaxis(arg, axis, 0)[index]
                for arg, axis in zip(args, axes)
            ]
            results.append(fn(*sliced, **kwargs))
        return _stack_outputs(backend, results, out_axes)

    return batched


def _batch_size(backend: ArrayBackend, args: Sequence[Any], axes: Sequence[int | None], in_axes: Any) -> int:
    sizes = {backend.shape(arg)[axis] for arg, axis in zip(args, axes) if axis is not None}
    if len(sizes) != 1:
        raise ValueError(
            "vmap needs at least one batched argument and equal batch sizes; got sizes "
            f"{sorted(sizes)} for in_axes={in_axes!r}"
        )
    return sizes.pop()


def trace_lanes(backend: ArrayBackend, fn: Callable[..., Any], in_axes: Any = 0,
                out_axes: Any = 0) -> Callable[..., Any]:
    """Vectorise ``fn`` by one call with its batched arguments as lanes; raises
    :class:`~tyxonq.numerics.lanes.LanesError` (or whatever ``fn`` raises) where ``fn`` cannot run
    on lanes. Results as :func:`loop_vmap` returns them.

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> trace_lanes(K, lambda x, y: K.cos(x) * y, in_axes=(0, None))(K.zeros(2, "float64"), 3.0).tolist()
    [3.0, 3.0]
    """
    from .lanes import lane_arguments, lane_results

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        axes = per_argument_axes(in_axes, len(args))
        size = _batch_size(backend, args, axes, in_axes)
        traced = [lane_arguments(backend, arg, axis) for arg, axis in zip(args, axes)]
        return lane_results(backend, fn(*traced, **kwargs), size, out_axes)

    return batched


def host_lanes(backend: ArrayBackend, fn: Callable[..., Any], in_axes: Any = 0,
               out_axes: Any = 0) -> Callable[..., Any]:
    """``fn`` traced with lanes on ``backend``'s host twin (NumPy), in ``backend``'s place
    (:func:`~tyxonq.numerics.host_twin.on_host_twin`): the arguments read in place, array results
    handed back as ``backend`` arrays. Raises where ``fn`` cannot run on the twin's lanes (it calls
    the backend's own functions, reads a tracked array, or draws random numbers).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> energies = host_lanes(K, lambda t: tq.Circuit(1).rx(0, t).expectation_ps(z=[0]))
    >>> [round(e, 6) for e in energies(K.asarray([0.0, 3.141592653589793])).tolist()]
    [1.0, -1.0]
    """
    return on_host_twin(backend, trace_lanes(draw_free_twin(backend), fn, in_axes, out_axes))


def lane_vmap(backend: ArrayBackend, fn: Callable[..., Any], in_axes: Any = 0,
              out_axes: Any = 0) -> Callable[..., Any]:
    """The ``vmap`` of backends without a vectorising compiler: :func:`trace_lanes`, and where
    ``fn`` cannot run on lanes, :func:`loop_vmap` from then on (warned once; same values).

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> lane_vmap(K, lambda x: K.sum(K.sin(x)))(K.zeros((3, 2), "float64")).tolist()
    [0.0, 0.0, 0.0]
    """
    return _with_fallback(backend, fn, trace_lanes(backend, fn, in_axes, out_axes),
                          loop_vmap(backend, fn, in_axes, out_axes), {}, in_axes)


def _with_fallback(backend: ArrayBackend, fn: Callable[..., Any], native: Callable[..., Any],
                   looped: Callable[..., Any], failures: dict, in_axes: Any) -> Callable[..., Any]:
    """``native``, and after its first failure on a backend ``looped`` (warned once); batch
    sizes are checked first (a mismatch raises, whichever runs)."""

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        _batch_size(backend, args, per_argument_axes(in_axes, len(args)), in_axes)
        if backend.name not in failures:
            try:
                return native(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - any failure of the transform falls back
                failures[backend.name] = error
                warnings.warn(
                    f"vectorising {getattr(fn, '__name__', fn)!r} on the {backend.name} backend "
                    f"failed ({type(error).__name__}: {error}); looping over the batch instead "
                    "(same values, slower). Pass policy='off' to silence this.",
                    VectorizationFallbackWarning,
                    stacklevel=3,
                )
        return looped(*args, **kwargs)

    return batched


def _rank_lanes(K: ArrayBackend, batched: Callable[..., Any], args: Sequence[Any], kwargs: dict,
                in_axes: Any, out_axes: Any) -> Any:
    """The whole batch from this rank's share of its lanes, or ``None`` where it is not shared."""
    from .distributed import communicator
    from .sharing import shared_lanes, sharing

    axes = per_argument_axes(in_axes, len(args))
    if sharing() is None or out_axes != 0 or any(axis not in (0, None) for axis in axes) \
            or any(K.is_array(arg) and K.needs_gradient(arg) for arg in args):
        return None
    size = _batch_size(K, args, axes, in_axes)
    if size < communicator().size:  # fewer lanes than ranks: every rank computes them all
        return None
    return shared_lanes(K, lambda start, stop: batched(*[arg if axis is None else arg[start:stop]
                                                         for arg, axis in zip(args, axes)], **kwargs), size)


def _stack_outputs(backend: ArrayBackend, results: Sequence[Any], out_axes: Any) -> Any:
    first = results[0]
    if isinstance(first, (tuple, list)):
        axes = per_argument_axes(out_axes, len(first))
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
        ``"off"`` loops over the batch; ``"force"`` vectorises (the backend's vmap on PyTorch and
        JAX, lanes on NumPy and cuPyNumeric: :mod:`tyxonq.numerics.lanes`) and lets its errors
        through; ``"auto"`` vectorises and, if that fails, warns once (naming the error) and
        loops from then on. Every policy returns the same values with the same shape.

        On PyTorch and JAX, ``"auto"`` first runs ``fn`` on the lanes of the backend's host twin
        (:func:`host_lanes`: NumPy, at its cost per operation, about half of ``torch.func.vmap``'s
        on a 10-qubit batch of 64) where every argument is an array the twin reads -- in host
        memory, untracked, untraced -- or a number. Where ``fn`` cannot run there (it calls the
        backend's own functions, or reads a tracked array), the backend's vmap runs instead, for
        this and every later call, without a warning: it is the native path, with the same values.
    in_axes, out_axes
        As for :meth:`ArrayBackend.vmap`.

    In a distributed run (:mod:`tyxonq.numerics.distributed`) each rank computes its share of the
    batch's lanes (in order) and every rank returns the whole batch
    (:func:`~tyxonq.numerics.sharing.shared_lanes`), where the arguments are readable arrays
    batched along axis 0 and the outputs stacked along axis 0; otherwise (traced or recorded
    arguments, other axes) every rank computes every lane.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> energies = vectorize_or_fallback(lambda t: K.sum(K.cos(t)), backend=K)
    >>> energies(K.zeros((3, 2), dtype="float64")).tolist()
    [2.0, 2.0, 2.0]
    """
    checked_choice(policy, POLICIES, "policy")
    failures: dict[str, BaseException] = {}

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        from .selection import get_backend

        active = backend if backend is not None else get_backend()
        shared = _rank_lanes(active, batched, args, kwargs, in_axes, out_axes)
        if shared is not None:  # a distributed run: this rank's lanes, then everyone's
            return shared
        looped = loop_vmap(active, fn, in_axes, out_axes)
        kind = active.capabilities.vmap
        if policy == "off":
            return looped(*args, **kwargs)
        if kind == "loop":
            if policy == "force":
                from .errors import VectorizationError

                raise VectorizationError(
                    f"policy='force' needs native vmap, but the {active.name} backend only loops; "
                    "use policy='auto' or 'off', or a backend with native vmap (pytorch)"
                )
            return looped(*args, **kwargs)
        if policy == "auto" and kind == "native" and ("host lanes", active.name) not in failures \
                and reads_on_host(active, args):
            _batch_size(active, args, per_argument_axes(in_axes, len(args)), in_axes)
            try:
                return host_lanes(active, fn, in_axes, out_axes)(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - fn needs the backend's own vmap
                failures["host lanes", active.name] = error
        native = (active.vmap(fn, in_axes, out_axes) if kind == "native"
                  else trace_lanes(active, fn, in_axes, out_axes))
        if policy == "force":
            return native(*args, **kwargs)
        return _with_fallback(active, fn, native, looped, failures, in_axes)(*args, **kwargs)

    return batched
