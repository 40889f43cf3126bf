"""Applying small matrices to some qubits of state vectors (or stacks of them), within max_ndim.

How to apply a ``2^k x 2^k`` matrix to qubits of a register depends only on the qubits and the
register, so it is worked out once (:func:`place`, cached) as a :class:`Placement`:

* ``"view"``: the qubits are adjacent: one ``matmul`` on a 3-d view ``(left, 2^k, right)`` of
  the array (or ``view @ M^T`` when nothing lies to the right, ``view @ (M ⊗ I_right)^T`` when
  little does: :data:`WIDENED_RIGHT`), no copies of the state;
* ``"diagonal"``: a diagonal matrix on any qubits: one element-wise product with the diagonal
  broadcast over a view that gives each qubit its own axis;
* ``"moves"``: otherwise the qubits' legs are moved to the front (grouped moves within
  ``max_ndim``), one ``matmul``, and moved back.

Qubits given out of ascending order are handled by permuting the (small) matrix, not the state.

A *lane* placement (``lanes=True``) applies one matrix per lead row: the array holds ``lead``
registers (the lanes of a batch, :mod:`tyxonq.numerics.lanes`) and the matrix a leading axis of
``lead`` matrices (or of one, shared by every lane); the lane axis stays first in every view.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ...numerics.moves import Move, permutation_moves, permute
from ...numerics.protocol import ArrayBackend

__all__ = ["Placement", "place", "apply_placed", "apply_matrix"]


#: A ``"view"`` with at most this many trailing entries is applied as ``M ⊗ I_right`` from the
#: right, one product over all rows: a batch of ``(2^k x 2^k) @ (2^k x right)`` products is slow
#: for tiny ``right`` (measured, NumPy, 16 qubits, a 4-qubit matrix: right = 2: 306 against
#: 1326 us; right = 4: 555 against 590 us; right = 8: 1047 against 439 us).
WIDENED_RIGHT = 4


@dataclass(frozen=True)
class Placement:
    """How a matrix meets its qubits in an array of ``lead x 2^n x trail`` elements."""

    kind: str  # "view" | "right" | "diagonal" | "moves"
    shape: tuple[int, ...]  # the array's shape, before and after
    view: tuple[int, ...]  # view / right / diagonal: the array viewed as this
    factor_shape: tuple[int, ...]  # diagonal: the diagonal viewed as this (broadcasts)
    matrix_axes: tuple[int, ...] | None  # transpose of the matrix as (2,)*2k (or diagonal (2,)*k)
    to_front: tuple[Move, ...] = ()
    to_back: tuple[Move, ...] = ()
    size: int = 2  # 2^k
    lanes: bool = False  # one matrix per lead row (a leading axis on the matrix)


@register_function_cache
@functools.lru_cache(maxsize=4096)
def place(qubits: tuple[int, ...], num_qubits: int, lead: int = 1, trail: int = 1,
          diagonal: bool = False, max_ndim: int = 64, shape: tuple[int, ...] | None = None,
          lanes: bool = False) -> Placement:
    """The :class:`Placement` of a matrix on ``qubits`` of an ``num_qubits`` register.

    The array holds ``lead`` registers' worth of leading rows and ``trail`` trailing columns per
    basis state (``shape`` defaults to ``(lead, 2^n * trail)``, or ``(2^n,)`` for a single state).
    ``lanes``: each of the ``lead`` registers gets its own matrix (see the module docstring).

    Examples
    --------
    >>> place((1, 2), 4).kind, place((2, 1), 4).view
    ('view', (2, 4, 2))
    >>> place((0, 3), 4).kind, place((0, 3), 4, diagonal=True).kind
    ('moves', 'diagonal')
    """
    k = len(qubits)
    if len(set(qubits)) != k or not all(0 <= q < num_qubits for q in qubits):
        raise ValueError(f"qubits {qubits} must be distinct indices of a {num_qubits}-qubit register")
    if shape is None:
        shape = (2 ** num_qubits,) if lead == trail == 1 and not lanes else (lead, 2 ** num_qubits * trail)
    if lanes:
        return _lane_placement(qubits, num_qubits, lead, trail, diagonal, max_ndim, shape)
    ordered = tuple(sorted(qubits))
    order = [qubits.index(q) for q in ordered]
    in_order = order == list(range(k))
    if diagonal:
        view, factor = _diagonal_view(ordered, num_qubits, lead, trail)
        if len(view) <= max_ndim:
            return Placement("diagonal", shape, view, factor, None if in_order else tuple(order),
                             size=2 ** k)
    # every other kind takes the full matrix (a diagonal past max_ndim too)
    axes = None if in_order else tuple(order) + tuple(k + i for i in order)
    if ordered == tuple(range(ordered[0], ordered[0] + k)):
        left = lead * 2 ** ordered[0]
        right = 2 ** (num_qubits - ordered[-1] - 1) * trail
        if right == 1:
            return Placement("right", shape, (left, 2 ** k), (), axes, size=2 ** k)
        return Placement("view", shape, (left, 2 ** k, right), (), axes, size=2 ** k)
    legs = (-1,) + tuple(range(num_qubits)) + (-2,)
    sizes = {leg: 2 for leg in legs} | {-1: lead, -2: trail}
    front = ordered + tuple(leg for leg in legs if leg not in ordered)
    return Placement("moves", shape, (2 ** k, lead * trail * 2 ** (num_qubits - k)), (), axes,
                     tuple(permutation_moves(legs, front, sizes, max_ndim)),
                     tuple(permutation_moves(front, legs, sizes, max_ndim)), 2 ** k)


def _lane_placement(qubits: tuple[int, ...], num_qubits: int, lead: int, trail: int,
                    diagonal: bool, max_ndim: int, shape: tuple[int, ...]) -> Placement:
    """:func:`place` with ``lanes=True``: the views of :func:`place` for one register, behind a
    lane axis of ``lead``; moves keep the lane axis first."""
    k = len(qubits)
    ordered = tuple(sorted(qubits))
    order = [qubits.index(q) for q in ordered]
    in_order = order == list(range(k))
    if diagonal:
        view, factor = _diagonal_view(ordered, num_qubits, 1, trail)
        if len(view) < max_ndim:
            return Placement("diagonal", shape, (lead,) + view, factor,
                             None if in_order else tuple(order), size=2 ** k, lanes=True)
    axes = None if in_order else tuple(order) + tuple(k + i for i in order)
    if ordered == tuple(range(ordered[0], ordered[0] + k)):
        left = 2 ** ordered[0]
        right = 2 ** (num_qubits - ordered[-1] - 1) * trail
        if right == 1:
            return Placement("right", shape, (lead, left, 2 ** k), (), axes, size=2 ** k, lanes=True)
        return Placement("view", shape, (lead, left, 2 ** k, right), (), axes, size=2 ** k, lanes=True)
    legs = (-1,) + tuple(range(num_qubits)) + (-2,)
    sizes = {leg: 2 for leg in legs} | {-1: lead, -2: trail}
    front = (-1,) + ordered + tuple(leg for leg in legs if leg not in ordered and leg != -1)
    return Placement("moves", shape, (lead, 2 ** k, trail * 2 ** (num_qubits - k)), (), axes,
                     tuple(permutation_moves(legs, front, sizes, max_ndim)),
                     tuple(permutation_moves(front, legs, sizes, max_ndim)), 2 ** k, lanes=True)


def _diagonal_view(ordered: tuple[int, ...], n: int, lead: int, trail: int) -> tuple[tuple, tuple]:
    view, factor = [], []
    left = lead * 2 ** ordered[0]
    if left > 1:
        view.append(left)
        factor.append(1)
    for i, q in enumerate(ordered):
        view.append(2)
        factor.append(2)
        gap = (ordered[i + 1] if i + 1 < len(ordered) else n) - q - 1
        between = 2 ** gap * (trail if i + 1 == len(ordered) else 1)
        if between > 1:
            view.append(between)
            factor.append(1)
    return tuple(view), tuple(factor)


def _ordered_matrix(K: ArrayBackend, matrix: Any, placement: Placement, diagonal: bool) -> Any:
    """The matrix (or diagonal) in the placement's qubit order, by gathers of its rows and
    columns (two dimensions whatever the qubit count: within cuPyNumeric's six)."""
    if placement.matrix_axes is None:
        return matrix
    k = int(math.log2(placement.size))
    index = _bit_order_index(placement.matrix_axes[:k], k)
    if diagonal:
        return K.take(matrix, list(index), axis=0)
    return K.take(K.take(matrix, list(index), axis=0), list(index), axis=1)


@register_function_cache
@functools.lru_cache(maxsize=None)
def _bit_order_index(order: tuple[int, ...], k: int) -> list[int]:
    """``index[new] = old``: the basis index whose bit ``order[i]`` is bit ``i`` of ``new``
    (bit 0 the most significant)."""
    new = np.arange(2 ** k)
    bits = (new[:, None] >> np.arange(k - 1, -1, -1)[None, :]) & 1
    old = np.zeros(2 ** k, dtype=np.int64)
    for i, source in enumerate(order):
        old += bits[:, i] << (k - 1 - source)
    return tuple(old.tolist())


def _ordered_lane_matrices(K: ArrayBackend, matrices: Any, placement: Placement, diagonal: bool) -> Any:
    """Lane matrices ``(lanes or 1, 2^k, 2^k)`` (diagonals ``(lanes or 1, 2^k)``) in the
    placement's qubit order: rows and columns permuted one after the other (within 6 axes)."""
    size = placement.size
    matrices = K.reshape(matrices, (-1, size) if diagonal else (-1, size, size))
    if placement.matrix_axes is None:
        return matrices
    k = size.bit_length() - 1
    order = placement.matrix_axes[:k]
    rows = (0,) + tuple(1 + a for a in order)
    if diagonal:
        return K.reshape(K.transpose(K.reshape(matrices, (-1,) + (2,) * k), rows), (-1, size))
    permuted = K.transpose(K.reshape(matrices, (-1,) + (2,) * k + (size,)), rows + (k + 1,))
    permuted = K.transpose(K.reshape(permuted, (-1, size) + (2,) * k), (0, 1) + tuple(2 + a for a in order))
    return K.reshape(permuted, (-1, size, size))


def _apply_lanes(K: ArrayBackend, array: Any, matrices: Any, placement: Placement) -> Any:
    """:func:`apply_placed` for a lane placement: ``matrices`` holds one matrix (diagonal) per
    lane, or one for all, along its first axis (a single matrix counts as one for all)."""
    kind = placement.kind
    matrices = _ordered_lane_matrices(K, matrices, placement, kind == "diagonal")
    if kind == "diagonal":
        factor = K.reshape(matrices, (-1,) + placement.factor_shape)
        return K.reshape(K.reshape(array, placement.view) * factor, placement.shape)
    size = placement.size
    if kind == "view":
        result = K.matmul(K.reshape(matrices, (-1, 1, size, size)), K.reshape(array, placement.view))
    elif kind == "right":
        result = K.matmul(K.reshape(array, placement.view), K.transpose(matrices, (0, 2, 1)))
    else:
        moved = K.reshape(permute(K, array, placement.to_front), placement.view)
        result = permute(K, K.matmul(matrices, moved), placement.to_back)
    return K.reshape(result, placement.shape)


def apply_placed(K: ArrayBackend, array: Any, matrix: Any, placement: Placement) -> Any:
    """``matrix`` applied as ``placement`` says; for a ``"diagonal"`` placement ``matrix`` is the
    diagonal (a vector of ``2^k`` entries). Returns an array of ``placement.shape``.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> x = np.array([[0, 1], [1, 0]], dtype=complex)
    >>> apply_placed(K, np.eye(4, dtype=complex)[0], x, place((1,), 2)).real.tolist()
    [0.0, 1.0, 0.0, 0.0]
    """
    if placement.lanes:
        return _apply_lanes(K, array, matrix, placement)
    kind = placement.kind
    if kind == "diagonal":
        factor = K.reshape(_ordered_matrix(K, matrix, placement, True), placement.factor_shape)
        return K.reshape(K.reshape(array, placement.view) * factor, placement.shape)
    matrix = _ordered_matrix(K, matrix, placement, False)
    if kind == "view" and placement.view[2] <= WIDENED_RIGHT:
        left, size, right = placement.view
        widened = K.kron(matrix, K.eye(right, dtype=K.dtype_of(matrix)))
        result = K.matmul(K.reshape(array, (left, size * right)), K.transpose(widened))
    elif kind == "view":
        result = K.matmul(matrix, K.reshape(array, placement.view))
    elif kind == "right":
        result = K.matmul(K.reshape(array, placement.view), K.transpose(matrix))
    else:
        moved = K.reshape(permute(K, array, placement.to_front), placement.view)
        result = permute(K, K.matmul(matrix, moved), placement.to_back)
    return K.reshape(result, placement.shape)


def apply_matrix(K: ArrayBackend, state: Any, matrix: Any, qubits: Sequence[int], num_qubits: int) -> Any:
    """``matrix`` (``2^k x 2^k``, any matrix) applied to ``qubits`` of a ``2^n`` state vector.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> x = np.array([[0, 1], [1, 0]], dtype=complex)
    >>> apply_matrix(K, np.eye(4, dtype=complex)[0], x, [1], 2).real.tolist()  # |00> -> |01>
    [0.0, 1.0, 0.0, 0.0]
    """
    placement = place(tuple(qubits), num_qubits, max_ndim=K.capabilities.max_ndim)
    return apply_placed(K, state, matrix, placement)
