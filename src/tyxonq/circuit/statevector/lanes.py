"""A batch of circuits that differ only in their angles, swept as one stack of state vectors.

When a function is batched over its parameters on NumPy or cuPyNumeric
(:mod:`tyxonq.numerics.lanes`), a circuit's angles are :class:`~tyxonq.numerics.lanes.Lanes`: one
value per batch element. The circuit's :class:`~tyxonq.circuit.statevector.sweep.SweepProgram`
(cached per structure, as for one circuit) runs once on a ``(lanes, 2^n)`` stack: each gate kind's
matrices for every gate and lane are built in one call, each fused block's matrix is a stack of
one per lane, and each block meets the stack in one batched matmul (lane placements:
:mod:`tyxonq.circuit.statevector.placement`). Gates without lane angles are shared by all lanes.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics.constants import backend_constant
from ...numerics.lanes import Lanes, LanesError
from ...numerics.protocol import ArrayBackend
from ..operations.gates import GATES, gate_matrices
from ..operations.operation import Operation
from .placement import apply_placed, place
from .sweep import SweepBlock, bind_matrices, sweep_program

__all__ = ["operation_lanes", "lane_matrices", "lane_state", "sweep_lanes", "block_matrix",
           "full_matrices", "stacks_states"]


def operation_lanes(operations: Sequence[Operation]) -> int | None:
    """The number of lanes of the operations' angles (``None`` if none is batched); angles of
    different batch sizes raise."""
    counts = {p.lanes for op in operations for p in op.params if isinstance(p, Lanes)}
    if len(counts) > 1:
        raise LanesError(f"angles batched over different sizes {sorted(counts)}")
    return counts.pop() if counts else None


def stacks_states(apply_observable: Any, expectation: Any = None) -> Any:
    """Mark ``apply_observable(K, state)`` as acting row by row on a stack of states
    ``(batch, 2^n)`` too (batched circuits then apply it once to all their states);
    ``expectation(K, stack)``, if given, returns every row's ``<psi|O|psi>`` directly."""
    apply_observable.stacks_states = True
    apply_observable.stack_expectation = expectation
    return apply_observable


def _lane_column(K: ArrayBackend, value: Any, lanes: int) -> Any:
    if isinstance(value, Lanes):
        return K.asarray(value.value, K.real_dtype)
    return K.ones((lanes,), K.real_dtype) * value


def lane_matrices(K: ArrayBackend, operations: Sequence[Operation], lanes: int) -> list[Any]:
    """Every operation's matrix: ``(lanes, 2^k, 2^k)`` for gates with lane angles (each gate kind
    built in one call for all its gates and lanes), ``(2^k, 2^k)`` for the others.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (Lanes(np.array([0.0, np.pi])),)), Operation("h", (0,))]
    >>> [K.shape(m) for m in lane_matrices(K, ops, 2)]
    [(2, 2, 2), (2, 2)]
    """
    batched = [i for i, op in enumerate(operations) if any(isinstance(p, Lanes) for p in op.params)]
    lane_set = set(batched)
    matrices = bind_matrices(K, operations, [i for i in range(len(operations)) if i not in lane_set])
    kinds: dict[tuple[str, bool], list[int]] = {}
    for index in batched:
        op = operations[index]
        if op.gate == "unitary":
            raise LanesError("a batched unitary gate's matrix")
        kinds.setdefault((op.gate, op.dagger), []).append(index)
    for (gate, dagger), indices in kinds.items():
        count = len(GATES[gate].param_names)
        columns = K.stack([K.stack([_lane_column(K, p, lanes) for p in operations[i].params], axis=1)
                           for i in indices])  # (gates, lanes, parameters)
        built = gate_matrices(K, gate, K.reshape(columns, (len(indices) * lanes, count)), dagger)
        size = K.shape(built)[-1]
        built = K.reshape(built, (len(indices), lanes, size, size))
        for position, index in enumerate(indices):
            matrices[index] = built[position]
    return matrices


def _diagonal_of(K: ArrayBackend, matrix: Any) -> Any:
    """The diagonal of a matrix, or of each matrix of a stack (last two axes)."""
    size = K.shape(matrix)[-1]
    return K.sum(matrix * K.eye(size, dtype=K.dtype_of(matrix)), axis=-1)


def _lane_identity(K: ArrayBackend, count: int, size: int, diagonal: bool) -> Any:
    """``count`` identities of a ``size``-dimensional space (their diagonals if ``diagonal``)."""
    shape = (count, size) if diagonal else (count, size, size)

    def build() -> np.ndarray:
        eye = np.ones(size, complex) if diagonal else np.eye(size, dtype=complex)
        return np.broadcast_to(eye, shape).copy()

    return backend_constant(K, ("lane identity",) + shape, build)


def _embedded(K: ArrayBackend, matrix: Any, inner: tuple[int, ...], size: int, max_ndim: int) -> Any:
    """``matrix`` on positions ``inner`` of a ``size``-dimensional space, as that space's matrix
    (one per lane if ``matrix`` has lanes)."""
    count = K.shape(matrix)[0] if len(K.shape(matrix)) == 3 else 1
    k = size.bit_length() - 1
    identity = _lane_identity(K, count, size, diagonal=False)
    placement = place(inner, k, lead=count, trail=size, max_ndim=max_ndim, shape=(count, size, size),
                      lanes=True)
    return apply_placed(K, identity, matrix, placement)


def _merged_members(K: ArrayBackend, block: SweepBlock, matrices: Sequence[Any],
                    max_ndim: int) -> tuple[list, list]:
    """The block's members with small ones folded into larger ones first: a member on qubits of
    the last member on all of them is multiplied into it, and members whose qubits nothing later
    touches are multiplied into a later member on a superset of them (they commute with what lies
    between). A layer of rotations and an entangler become one small matrix, so fewer members
    make passes over the block's ``lanes x 2^k x 2^k`` matrix."""
    members: list[Any] = []
    positions: list[tuple[int, ...] | None] = []
    last: dict[int, int] = {}  # block position -> the merged member that touched it last
    for qubits, member in zip(block.member_qubits, block.members):
        matrix = matrices[member]
        owners = {last.get(q) for q in qubits}
        if len(owners) == 1 and (j := owners.pop()) is not None and set(qubits) <= set(positions[j]):
            inner = tuple(positions[j].index(q) for q in qubits)
            small = matrix if qubits == positions[j] else _embedded(K, matrix, inner, 2 ** len(positions[j]),
                                                                    max_ndim)
            members[j] = K.matmul(small, members[j])
            continue
        for j, earlier in enumerate(positions):  # earlier members nothing else touched since
            if (earlier is not None and set(earlier) <= set(qubits)
                    and all(last.get(q) == j for q in earlier)):
                inner = tuple(qubits.index(q) for q in earlier)
                matrix = K.matmul(matrix, _embedded(K, members[j], inner, 2 ** len(qubits), max_ndim))
                positions[j] = None
        for q in qubits:
            last[q] = len(members)
        members.append(matrix)
        positions.append(qubits)
    kept = [i for i, p in enumerate(positions) if p is not None]
    return [members[i] for i in kept], [positions[i] for i in kept]


def block_matrix(K: ArrayBackend, block: SweepBlock, matrices: Sequence[Any], lanes: int,
                 max_ndim: int) -> Any:
    """The block's matrix (diagonal, for a diagonal block): one per lane, or one for all lanes
    when none of its members has lane angles."""
    members, positions = _merged_members(K, block, matrices, max_ndim)
    k = len(block.qubits)
    size = 2 ** k
    diagonal = block.diagonal
    if len(members) == 1 and positions[0] == tuple(range(k)):
        return _diagonal_of(K, members[0]) if diagonal else members[0]
    count = 1 if all(len(K.shape(m)) == 2 for m in members) else lanes  # 1: shared by all lanes
    shape = (count, size) if diagonal else (count, size, size)
    product = _lane_identity(K, count, size, diagonal)
    for qubits, matrix in zip(positions, members):
        placement = place(qubits, k, lead=count, trail=1 if diagonal else size, diagonal=diagonal,
                          max_ndim=max_ndim, shape=shape, lanes=True)
        if diagonal and placement.kind != "diagonal":
            raise LanesError("a diagonal block past the backend's dimensions")
        product = apply_placed(K, product, _diagonal_of(K, matrix) if diagonal else matrix, placement)
    return product[0] if count == 1 else product


def full_matrices(K: ArrayBackend, diagonal: Any) -> Any:
    """Matrices from diagonals (last axis)."""
    size = K.shape(diagonal)[-1]
    return K.reshape(diagonal, K.shape(diagonal) + (1,)) * K.eye(size, dtype=K.dtype_of(diagonal))


def lane_state(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation], lanes: int,
               state: Any = None) -> Any:
    """The ``(lanes, 2^n)`` stack of output states of a circuit with lane angles (``state``: one
    input state for every lane, ``None`` for ``|0...0>``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (Lanes(np.array([0.0, np.pi])),)), Operation("cx", (0, 1))]
    >>> (np.round(lane_state(K, 2, ops, 2).real, 6) + 0.0).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """
    return sweep_lanes(K, num_qubits, operations, lane_matrices(K, operations, lanes), lanes, state)


def sweep_lanes(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation], matrices: Sequence[Any],
                lanes: int, state: Any = None) -> Any:
    """The ``(lanes, 2^n)`` stack after the operations' sweep program with the given matrices:
    ``(lanes, 2^k, 2^k)`` for an operation that differs per lane, ``(2^k, 2^k)`` for one shared
    by all (``state``: one input state for every lane, ``None`` for ``|0...0>``)."""
    max_ndim = K.capabilities.max_ndim
    program = sweep_program(num_qubits, operations, max_ndim)
    dimension = 2 ** num_qubits
    if state is None:
        stack = K.concatenate([K.ones((lanes, 1), K.dtype), K.zeros((lanes, dimension - 1), K.dtype)],
                              axis=1)
    else:
        stack = K.reshape(state, (1, dimension)) * K.ones((lanes, 1), K.dtype_of(state))
    for block in program.blocks:
        operator = block_matrix(K, block, matrices, lanes, max_ndim)
        placement = place(block.qubits, num_qubits, lead=lanes, diagonal=block.diagonal,
                          max_ndim=max_ndim, lanes=True)
        if block.diagonal and placement.kind != "diagonal":
            operator = full_matrices(K, operator)
        stack = apply_placed(K, stack, operator, placement)
    return stack
