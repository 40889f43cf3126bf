"""Lanes: one traced value per element of a batch, so a function runs once for the whole batch.

Backends without a vectorising compiler (NumPy, cuPyNumeric) batch a function by calling it once
with its batched arguments replaced by :class:`Lanes`: each holds a backend array whose leading
axis runs over the batch (one *lane* per batch element), and arithmetic, elementwise functions
(``np.cos``, ``K.exp``...), reductions and indexing act on every lane at once. Simulators that
recognise lanes (the state-vector ``Circuit``) evaluate all of them in one batched sweep, so a
batch of parameter sets costs a few large backend calls instead of a Python loop.

Anything that cannot act on all lanes at once (reading a lane's value as a number, converting
lanes to a plain array, a simulator without batched evaluation) raises :class:`LanesError`;
:func:`~tyxonq.numerics.vectorize.vectorize_or_fallback` then loops over the batch instead (same
values, slower, warned once).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .axes import per_argument_axes
from .protocol import ArrayBackend

__all__ = ["Lanes", "LanesError", "lane_arguments", "lane_results", "lane_count"]


class LanesError(TypeError):
    """An operation cannot act on all lanes of a batch at once (the batch loops instead)."""


def _expanded(value: Any, lane_ndim: int, rank: int) -> Any:
    """``value`` (lane axis first, ``lane_ndim`` axes per lane) with per-lane rank ``rank``."""
    if rank == lane_ndim:
        return value
    return value[(slice(None),) + (None,) * (rank - lane_ndim)]


def _plain_shape(other: Any) -> tuple[int, ...] | None:
    """The shape of a plain (non-lane, non-object) number or array; ``None`` for anything else."""
    if isinstance(other, (bool, int, float, complex, np.number)):
        return ()
    shape = getattr(other, "shape", None)
    if shape is None or np.dtype(getattr(other, "dtype", None) or float) == np.dtype(object):
        return None
    return tuple(shape)


class Lanes:
    """One value per lane of a batch: ``value`` is a backend array whose first axis is the lane.

    ``shape`` is one lane's shape; indexing acts on it. Lanes have no ``len``: NumPy then treats
    them as one object (``np.cos(lanes)`` calls ``lanes.cos()``) instead of a sequence.

    Examples
    --------
    >>> import numpy as np
    >>> angles = Lanes(np.array([0.0, np.pi]))
    >>> (2 * np.cos(angles) + 1).value.tolist()
    [3.0, -1.0]
    >>> Lanes(np.arange(6.0).reshape(2, 3))[1:].sum().value.tolist()
    [3.0, 9.0]
    """

    __slots__ = ("value",)
    __array_priority__ = 1000  # NumPy defers arithmetic with lanes to these methods

    def __init__(self, value: Any) -> None:
        self.value = value

    # -- shape and indexing (per lane) ------------------------------------------------------
    @property
    def lanes(self) -> int:
        return int(self.value.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape[1:])

    @property
    def ndim(self) -> int:
        return len(self.value.shape) - 1

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    def __getitem__(self, index: Any) -> Lanes:
        parts = index if isinstance(index, tuple) else (index,)
        if any(isinstance(part, Lanes) for part in parts):
            raise LanesError("indexing by a batched index")
        if index is Ellipsis:
            return self
        return Lanes(self.value[(slice(None),) + (index if isinstance(index, tuple) else (index,))])

    def reshape(self, *shape: Any, order: str = "C") -> Lanes:
        if order != "C":
            raise LanesError("lanes reshape in C order only")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return Lanes(self.value.reshape((self.lanes,) + tuple(int(s) for s in shape)))

    # -- arithmetic (every lane at once) -----------------------------------------------------
    def _binary(self, other: Any, operation: Any, reflected: bool = False) -> Any:
        if isinstance(other, Lanes):
            rank = max(self.ndim, other.ndim)
            mine, theirs = _expanded(self.value, self.ndim, rank), _expanded(other.value, other.ndim, rank)
        else:
            shape = _plain_shape(other)
            if shape is None:
                return NotImplemented  # object arrays apply the operation element by element
            mine, theirs = _expanded(self.value, self.ndim, max(self.ndim, len(shape))), other
        return Lanes(operation(theirs, mine) if reflected else operation(mine, theirs))

    def __add__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a + b)

    def __radd__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a + b, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a - b)

    def __rsub__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a - b, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a * b)

    def __rmul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a * b, reflected=True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a / b)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a / b, reflected=True)

    def __pow__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a ** b)

    def __rpow__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a ** b, reflected=True)

    def __matmul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a @ b) if self.ndim and _rank(other) else _no_matmul()

    def __rmatmul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a @ b, reflected=True) if self.ndim and _rank(other) \
            else _no_matmul()

    def __neg__(self) -> Lanes:
        return Lanes(-self.value)

    def __pos__(self) -> Lanes:
        return self

    def __abs__(self) -> Lanes:
        return Lanes(abs(self.value))

    # -- functions NumPy calls on object arrays and on lanes (np.sin(lanes) -> lanes.sin()) ----
    def sin(self) -> Lanes:
        return Lanes(np.sin(self.value))

    def cos(self) -> Lanes:
        return Lanes(np.cos(self.value))

    def tan(self) -> Lanes:
        return Lanes(np.tan(self.value))

    def exp(self) -> Lanes:
        return Lanes(np.exp(self.value))

    def sqrt(self) -> Lanes:
        return Lanes(np.sqrt(self.value))

    def log(self) -> Lanes:
        return Lanes(np.log(self.value))

    def arctan(self) -> Lanes:
        return Lanes(np.arctan(self.value))

    def conjugate(self) -> Lanes:
        return Lanes(np.conj(self.value))

    conj = conjugate

    @property
    def real(self) -> Lanes:
        return Lanes(self.value.real)

    @property
    def imag(self) -> Lanes:
        return Lanes(self.value.imag)

    def _reduced(self, name: str, axis: Any, dtype: Any, out: Any, keepdims: bool) -> Lanes:
        """``value.<name>`` over this lane's axes (``axis`` counts them, as for one lane)."""
        if out is not None or dtype is not None:
            raise LanesError(f"{name} of lanes with out= or dtype=")
        if axis is None:
            axes = tuple(range(1, self.ndim + 1))
        else:
            axes = tuple(a + 1 if a >= 0 else a for a in (axis if isinstance(axis, tuple) else (axis,)))
        return Lanes(getattr(self.value, name)(axis=axes, keepdims=keepdims))

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            **unused: Any) -> Lanes:
        return self._reduced("sum", axis, dtype, out, keepdims)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             **unused: Any) -> Lanes:
        return self._reduced("mean", axis, dtype, out, keepdims)

    # -- comparisons and conversions: a lane's value cannot be read while tracing ---------------
    def __bool__(self) -> bool:
        raise LanesError(
            "a batched value was used as a Python bool (control flow on values differs per lane)"
        )

    def __float__(self) -> float:
        raise LanesError(
            "a batched value was converted to a plain number; vectorize_or_fallback loops over the "
            "batch for such functions"
        )

    __int__ = __complex__ = __index__ = __float__  # type: ignore[assignment]

    def __lt__(self, other: Any) -> Any:
        raise LanesError("comparison of batched values")

    __le__ = __gt__ = __ge__ = __lt__

    def __repr__(self) -> str:
        return f"Lanes({self.value!r})"


def _rank(other: Any) -> int:
    return len(other.shape) if isinstance(other, Lanes) else len(_plain_shape(other) or ())


def _no_matmul() -> Any:
    raise LanesError("matmul with scalar lanes")


def lane_count(value: Any) -> int | None:
    """The number of lanes of a :class:`Lanes`, else ``None``."""
    return value.lanes if isinstance(value, Lanes) else None


def lane_arguments(backend: ArrayBackend, arg: Any, axis: int | None) -> Any:
    """``arg`` with its batch axis ``axis`` turned into lanes: a :class:`Lanes` of scalars for a
    1-d argument, else an object array (of the per-lane shape) of scalar lanes, the form traced
    parameters take; ``axis=None`` leaves the argument as it is."""
    if axis is None:
        return arg
    array = backend.moveaxis(backend.asarray(arg), axis, 0)
    shape = tuple(backend.shape(array))
    if len(shape) == 1:
        return Lanes(array)
    flat = backend.reshape(array, (shape[0], -1))
    cells = np.empty(flat.shape[1], dtype=object)
    for i in range(flat.shape[1]):
        cells[i] = Lanes(flat[:, i])
    return cells.reshape(shape[1:])


def lane_results(backend: ArrayBackend, result: Any, lanes: int, out_axes: Any) -> Any:
    """A traced function's output as backend arrays with the batch axis at ``out_axes``: lanes
    become their values, object arrays of lanes are stacked, outputs that do not depend on the
    batch are repeated (tuples, lists and dicts of them alike)."""
    if isinstance(result, (tuple, list)):
        axes = per_argument_axes(out_axes, len(result))
        return type(result)(lane_results(backend, item, lanes, axis) for item, axis in zip(result, axes))
    if isinstance(result, dict):
        return {key: lane_results(backend, item, lanes, out_axes) for key, item in result.items()}
    if out_axes is None:
        if isinstance(result, Lanes) or (isinstance(result, np.ndarray) and result.dtype == object):
            raise LanesError("out_axes=None for an output that differs per lane")
        return result
    stacked = _lane_values(backend, result, lanes)
    return stacked if out_axes == 0 else backend.moveaxis(stacked, 0, out_axes)


def _lane_values(backend: ArrayBackend, result: Any, lanes: int) -> Any:
    if isinstance(result, Lanes):
        return result.value
    if isinstance(result, np.ndarray) and result.dtype == object:
        columns = [_lane_values(backend, item, lanes) for item in result.reshape(-1)]
        stacked = backend.stack(columns, axis=1) if columns else backend.zeros((lanes, 0))
        return backend.reshape(stacked, (lanes,) + result.shape)
    value = backend.asarray(result)
    return backend.stack([value] * lanes)  # the same for every lane
