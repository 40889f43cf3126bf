"""State-vector sweeps: a circuit applied block by block to a state vector.

A :class:`SweepProgram` depends only on the circuit's structure and is cached: the operations
fused (:func:`~tyxonq.circuit.operations.fusion.fuse_for_sweep`) into windows of adjacent qubits and
diagonal blocks. Evaluation binds the angles (each gate kind's matrices built in one vectorised
call), multiplies every block's members into one matrix (or one diagonal) and applies blocks
through cached :class:`~tyxonq.circuit.statevector.placement.Placement` s: matmuls on views of the state,
element-wise products for diagonal blocks. :mod:`tyxonq.circuit.statevector.adjoint` runs it backwards.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...numerics.cache_registry import register_cache
from ...numerics.host_twin import refuse_larger_in_place
from ...numerics.protocol import ArrayBackend
from ..operations.fusion import fuse_for_sweep
from ..operations.gates import gate_matrices, gate_matrix
from ..operations.operation import Operation
from .placement import Placement, apply_placed, place
from .products import BlockShape, block_products, group_blocks

__all__ = ["SweepBlock", "SweepProgram", "sweep_program", "bind_matrices", "block_operators",
           "run_sweep", "sweep_state", "zero_state", "apply_block"]


@dataclass(frozen=True)
class SweepBlock:
    """Operations (indices, circuit order) fused into one operator on ascending ``qubits``."""

    qubits: tuple[int, ...]
    members: tuple[int, ...]
    member_qubits: tuple[tuple[int, ...], ...]  # each member's qubits as positions in ``qubits``
    diagonal: bool
    placement: Placement  # on a state vector
    stacked_placement: Placement  # on a stack of two state vectors
    member_placements: tuple[Placement, ...]  # each member's, in the block's 2^k-dim space


@dataclass(frozen=True)
class SweepProgram:
    """The blocks of one circuit structure, in application order."""

    num_qubits: int
    blocks: tuple[SweepBlock, ...]
    shapes: tuple[BlockShape, ...]  # per block: (diagonal, member placements)
    groups: tuple[tuple[int, ...], ...]  # blocks multiplied together (same shape)


_PROGRAMS: dict[tuple, SweepProgram] = {}
_PROGRAMS_LOCK = threading.Lock()
_PROGRAMS_LIMIT = 256


def sweep_program(num_qubits: int, operations: Sequence[Operation], max_ndim: int = 64) -> SweepProgram:
    """The cached :class:`SweepProgram` of a circuit structure.

    Examples
    --------
    >>> ops = [Operation("ry", (q,), (0.1,)) for q in range(3)] + [Operation("cx", (0, 1))]
    >>> [(b.qubits, b.members) for b in sweep_program(3, ops).blocks]
    [((0, 1, 2), (0, 1, 2, 3))]
    """
    key = (num_qubits, max_ndim, tuple(op.structure for op in operations))
    program = _PROGRAMS.get(key)
    if program is None:
        program = _build_program(num_qubits, operations, max_ndim)
        with _PROGRAMS_LOCK:
            if len(_PROGRAMS) >= _PROGRAMS_LIMIT:
                _PROGRAMS.pop(next(iter(_PROGRAMS)))
            _PROGRAMS[key] = program
    return program


def _clear_sweep_programs() -> None:
    with _PROGRAMS_LOCK:
        _PROGRAMS.clear()


register_cache("sweep programs", lambda: len(_PROGRAMS), _clear_sweep_programs)


def _build_program(num_qubits: int, operations: Sequence[Operation], max_ndim: int) -> SweepProgram:
    blocks = []
    for qubits, members, diagonal in fuse_for_sweep(operations, max_ndim):
        ordered = tuple(sorted(qubits))
        positions = tuple(tuple(ordered.index(q) for q in operations[m].qubits) for m in members)
        k = len(ordered)
        inner = tuple(place(p, k, diagonal=True, max_ndim=max_ndim) if diagonal else
                      place(p, k, trail=2 ** k, max_ndim=max_ndim, shape=(2 ** k, 2 ** k))
                      for p in positions)
        blocks.append(SweepBlock(
            ordered, tuple(members), positions, diagonal,
            place(ordered, num_qubits, diagonal=diagonal, max_ndim=max_ndim),
            place(ordered, num_qubits, lead=2, diagonal=diagonal, max_ndim=max_ndim), inner))
    shapes = tuple((block.diagonal, block.member_placements) for block in blocks)
    return SweepProgram(num_qubits, tuple(blocks), shapes, group_blocks(shapes))


# -- binding --------------------------------------------------------------------------------
def bind_matrices(K: ArrayBackend, operations: Sequence[Operation],
                  wanted: Sequence[int] | None = None) -> list[Any]:
    """Every operation's matrix (only the ``wanted`` indices', the rest ``None``); parametrised
    gates of one kind are built in one call.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("rx", (0,), (0.3,)), Operation("h", (1,)), Operation("rx", (1,), (0.5,))]
    >>> bool(np.allclose(bind_matrices(K, ops)[2], gate_matrix(K, "rx", (0.5,))))
    True
    """
    matrices: list[Any] = [None] * len(operations)
    kinds: dict[tuple[str, bool], list[int]] = {}
    for index in range(len(operations)) if wanted is None else wanted:
        op = operations[index]
        if op.params and op.gate != "unitary":
            kinds.setdefault((op.gate, op.dagger), []).append(index)
        else:
            matrices[index] = gate_matrix(K, op.gate, op.params, op.dagger)
    for (gate, dagger), indices in kinds.items():
        params = [operations[i].params for i in indices]
        if all(isinstance(p, (int, float, np.number)) for ps in params for p in ps):
            columns = np.asarray(params, dtype=np.float64)
        else:
            columns = K.stack([K.stack([K.asarray(p, K.real_dtype) for p in ps]) for ps in params])
        batch = gate_matrices(K, gate, columns, dagger)
        for position, index in enumerate(indices):
            matrices[index] = batch[position]
    return matrices


def block_operators(K: ArrayBackend, program: SweepProgram, matrices: Sequence[Any],
                    keep: dict[int, Sequence[int]] | None = None,
                    prefixes: dict[int, list[Any]] | None = None) -> list[Any]:
    """Each block's operator: its ``2^k x 2^k`` matrix, or its diagonal for a diagonal block.

    ``keep`` maps a block index to member positions whose prefix products ``P_g = E_g ... E_1``
    (``E`` a member embedded in the block) go to ``prefixes[index]``, in position order. On a
    host twin computing in another backend's place, a state larger than that backend computes on
    its twin is refused (:func:`~tyxonq.numerics.host_twin.refuse_larger_in_place`): the backend
    sweeps it itself.
    """
    refuse_larger_in_place(2.0 ** program.num_qubits, "a state-vector sweep")
    return block_products(K, program.shapes, [block.members for block in program.blocks],
                          program.groups, matrices, keep, prefixes)


def apply_block(K: ArrayBackend, array: Any, operator: Any, placement: Placement, diagonal: bool,
                adjoint: bool = False) -> Any:
    """A block's operator (or its adjoint) applied to an array as ``placement`` says."""
    if adjoint:
        operator = K.conj(operator) if diagonal else K.conj(K.transpose(operator))
    if diagonal and placement.kind != "diagonal":
        operator = K.diag(operator)
    return apply_placed(K, array, operator, placement)


def zero_state(K: ArrayBackend, num_qubits: int) -> Any:
    """``|0...0>`` on the backend."""
    return K.concatenate([K.ones((1,), K.dtype), K.zeros((2 ** num_qubits - 1,), K.dtype)])


def run_sweep(K: ArrayBackend, program: SweepProgram, operators: Sequence[Any], state: Any) -> Any:
    """The state after every block of ``program`` applied to ``state`` (shape ``(2^n,)``)."""
    for block, operator in zip(program.blocks, operators):
        state = apply_block(K, state, operator, block.placement, block.diagonal)
    return state


def sweep_state(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation], state: Any = None) -> Any:
    """The state of a circuit by one sweep (``state``: input state, ``None`` for ``|0...0>``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1))]
    >>> (np.round(sweep_state(K, 2, ops).real, 6) + 0.0).tolist()
    [0.707107, 0.0, 0.0, 0.707107]
    """
    program = sweep_program(num_qubits, operations, K.capabilities.max_ndim)
    operators = block_operators(K, program, bind_matrices(K, operations))
    return run_sweep(K, program, operators, zero_state(K, num_qubits) if state is None else state)
