"""State-vector sweeps: a circuit applied block by block to a state vector, and the adjoint sweep
that differentiates an expectation value with respect to every gate angle at once.

A :class:`SweepProgram` depends only on the circuit's structure and is cached: the operations
fused into blocks of at most :data:`MAX_BLOCK_QUBITS` qubits (the greedy fusion of contraction
plans), each block diagonal or not. Evaluation binds the angles (each gate kind's matrices built
in one vectorised call), multiplies every block's members into one matrix (or one diagonal) and
applies blocks through cached :class:`~tyxonq.circuit.statevector.Placement` s: matmuls on views
of the state, element-wise products for diagonal blocks.

The adjoint sweep goes backwards over blocks with the state and the co-state ``H|psi>`` stacked
in one array (one call undoes a block on both). For a block ``B`` it forms the ``2^k x 2^k``
transition matrix ``X = Tr_rest |psi><lambda|`` once; every angle of the block then costs only
``2^k``-sized work: ``dE/dθ = 2 Re Tr(M X_g)`` with ``M = (dU/dθ) U^†`` and ``X_g`` the
transition matrix just after gate ``g`` (``X_{g-1} = U_g^† X_g U_g``).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..numerics import get_backend
from .executor import permute
from .gates import _GENERATORS, CONSTANT_MATRICES, DIAGONAL_GATES, gate_derivative, gate_matrices, gate_matrix
from .operations import Operation
from .statevector import Placement, apply_placed, place

__all__ = ["MAX_BLOCK_QUBITS", "SweepBlock", "SweepProgram", "sweep_program", "fuse_for_sweep",
           "bind_matrices", "member_embeddings", "block_operators", "run_sweep", "sweep_state",
           "zero_state", "adjoint_sweep"]

#: Largest fused block: 16 x 16 matrices keep the per-angle work small while merging a layer of
#: one-qubit gates and its entanglers into a few passes over the state.
MAX_BLOCK_QUBITS = 4

#: Largest diagonal block: applied element-wise, its cost hardly depends on its size.
MAX_DIAGONAL_QUBITS = 10

_SCAN = 16  # how many of the newest blocks a gate may join besides the one last on its qubits


@dataclass(frozen=True)
class SweepBlock:
    """Operations (indices, circuit order) fused into one operator on ascending ``qubits``."""

    qubits: tuple[int, ...]
    members: tuple[int, ...]
    member_qubits: tuple[tuple[int, ...], ...]  # each member's qubits as positions in ``qubits``
    diagonal: bool


@dataclass(frozen=True)
class SweepProgram:
    """The blocks of one circuit structure, in application order."""

    num_qubits: int
    blocks: tuple[SweepBlock, ...]

    def placement(self, block: SweepBlock, lead: int, max_ndim: int) -> Placement:
        return place(block.qubits, self.num_qubits, lead=lead, diagonal=block.diagonal,
                     max_ndim=max_ndim)


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


def _build_program(num_qubits: int, operations: Sequence[Operation], max_ndim: int) -> SweepProgram:
    blocks = []
    for qubits, members, diagonal in fuse_for_sweep(operations, max_ndim):
        ordered = tuple(sorted(qubits))
        blocks.append(SweepBlock(
            ordered, tuple(members),
            tuple(tuple(ordered.index(q) for q in operations[m].qubits) for m in members), diagonal))
    return SweepProgram(num_qubits, tuple(blocks))


def fuse_for_sweep(operations: Sequence[Operation], max_ndim: int = 64) -> list[tuple[set, list, bool]]:
    """Greedy fusion into blocks that apply cheaply to a state vector: ``(qubits, members, diagonal)``.

    A block is either *diagonal* (diagonal gates on any qubits, at most :data:`MAX_DIAGONAL_QUBITS`
    and within ``max_ndim``: one element-wise product) or a *window* of at most
    :data:`MAX_BLOCK_QUBITS` adjacent qubits (one matmul on a view, no copies). A gate joins the
    block last on its qubits when the kinds agree and the block stays within its size (moving
    it before later blocks on other qubits, with which it commutes), or else one of the
    :data:`_SCAN` newest blocks that can take it; a gate that fits no window
    (far-apart qubits) is a block of its own.

    Examples
    --------
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("rx", (1,), (0.2,)),
    ...        Operation("cx", (0, 1)), Operation("rzz", (0, 5), (0.3,)), Operation("rz", (5,), (0.4,))]
    >>> [(sorted(q), m, d) for q, m, d in fuse_for_sweep(ops)]
    [([0, 1], [0, 1, 2], False), ([0, 5], [3, 4], True)]
    """
    diagonal_limit = min(MAX_DIAGONAL_QUBITS, (max_ndim - 1) // 2)
    blocks: list[tuple[set, list, bool]] = []
    latest: dict[int, int] = {}  # qubit -> the last block that touches it

    def joinable(index: int, qubits: tuple[int, ...], diagonal: bool) -> set | None:
        touched, _, block_diagonal = blocks[index]
        union = touched | set(qubits)
        if diagonal and block_diagonal:
            return union if len(union) <= diagonal_limit else None
        window = set(range(min(union), max(union) + 1))
        if len(window) > MAX_BLOCK_QUBITS or any(latest.get(q, -1) > index for q in window - touched):
            return None
        return window

    for position, op in enumerate(operations):
        diagonal = op.gate in DIAGONAL_GATES
        owners = [latest[q] for q in op.qubits if q in latest]
        earliest = max(owners) if owners else max(0, len(blocks) - _SCAN)
        grown, target = None, -1
        for candidate in [earliest] + list(range(len(blocks) - 1, earliest, -1))[:_SCAN]:
            if candidate < len(blocks):
                grown = joinable(candidate, op.qubits, diagonal)
                if grown is not None:
                    target = candidate
                    break
        if grown is None:
            low, high = min(op.qubits), max(op.qubits)
            if diagonal and len(op.qubits) <= diagonal_limit:
                grown = set(op.qubits)
            elif not diagonal and high - low + 1 <= MAX_BLOCK_QUBITS:
                grown = set(range(low, high + 1))
            else:
                grown, diagonal = set(op.qubits), False
            blocks.append([grown, [position], diagonal])
            target = len(blocks) - 1
        else:  # later blocks may act on the block's other qubits: only these become its own
            grown = (grown - blocks[target][0]) | set(op.qubits)
            blocks[target][0].update(grown)
            blocks[target][1].append(position)
            blocks[target][2] = blocks[target][2] and diagonal
        for q in grown:
            latest[q] = target
    return [tuple(block) for block in blocks]


# -- binding --------------------------------------------------------------------------------
def bind_matrices(K: Any, operations: Sequence[Operation]) -> list[Any]:
    """Every operation's matrix; parametrised gates of one kind are built in one call.

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
    for index, op in enumerate(operations):
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


def _member_placement(block: SweepBlock, position: int, max_ndim: int) -> Placement:
    """Where member ``position`` acts in the block's ``2^k``-dimensional space."""
    k = len(block.qubits)
    if block.diagonal:
        return place(block.member_qubits[position], k, diagonal=True, max_ndim=max_ndim)
    return place(block.member_qubits[position], k, trail=2 ** k, max_ndim=max_ndim, shape=(2 ** k, 2 ** k))


_BACKEND_CONSTANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _backend_constant(K: Any, key: tuple, build: Callable[[], np.ndarray]) -> Any:
    """A host-built constant converted once per backend (identities, embedded generators)."""
    per_backend = _BACKEND_CONSTANTS.setdefault(K, {})
    if key not in per_backend:
        per_backend[key] = K.constant(build(), K.precision)
    return per_backend[key]


def _neutral(K: Any, size: int, diagonal: bool) -> Any:
    """The identity of a block's space: ``ones(size)`` for diagonals, else ``eye(size)``."""
    return _backend_constant(K, ("neutral", size, diagonal),
                             lambda: np.ones(size, complex) if diagonal else np.eye(size, dtype=complex))


def member_embeddings(K: Any, block: SweepBlock, matrices: Sequence[Any], max_ndim: int) -> list[Any]:
    """Each member's matrix on all the block's qubits (its diagonal, for a diagonal block)."""
    k = len(block.qubits)
    embeddings = []
    for position, member in enumerate(block.members):
        matrix = K.diag(matrices[member]) if block.diagonal else matrices[member]
        if block.member_qubits[position] != tuple(range(k)):
            matrix = apply_placed(K, _neutral(K, 2 ** k, block.diagonal), matrix,
                                  _member_placement(block, position, max_ndim))
        embeddings.append(matrix)
    return embeddings


def block_operators(K: Any, program: SweepProgram, matrices: Sequence[Any],
                    embeddings: dict[int, list[Any]] | None = None) -> list[Any]:
    """Each block's operator: its ``2^k x 2^k`` matrix, or its diagonal for a diagonal block.

    With ``embeddings``, the members' embedded matrices of every block are stored there too.
    """
    max_ndim = K.capabilities.max_ndim
    operators = []
    for index, block in enumerate(program.blocks):
        members = member_embeddings(K, block, matrices, max_ndim)
        operator = members[0]
        for matrix in members[1:]:
            operator = operator * matrix if block.diagonal else K.matmul(matrix, operator)
        operators.append(operator)
        if embeddings is not None:
            embeddings[index] = members
    return operators


def _apply_block(K: Any, array: Any, operator: Any, placement: Placement, diagonal: bool,
                 adjoint: bool = False) -> Any:
    if adjoint:
        operator = K.conj(operator) if diagonal else K.conj(K.transpose(operator))
    if diagonal and placement.kind != "diagonal":
        operator = K.diag(operator)
    return apply_placed(K, array, operator, placement)


def zero_state(K: Any, num_qubits: int) -> Any:
    """``|0...0>`` on the backend."""
    return K.concatenate([K.ones((1,), K.dtype), K.zeros((2 ** num_qubits - 1,), K.dtype)])


def run_sweep(K: Any, program: SweepProgram, operators: Sequence[Any], state: Any) -> Any:
    """The state after every block of ``program`` applied to ``state`` (shape ``(2^n,)``)."""
    max_ndim = K.capabilities.max_ndim
    for block, operator in zip(program.blocks, operators):
        state = _apply_block(K, state, operator, program.placement(block, 1, max_ndim), block.diagonal)
    return state


def sweep_state(K: Any, num_qubits: int, operations: Sequence[Operation], state: Any = None) -> Any:
    """The state of a circuit by one sweep (``state``: input state, ``None`` for ``|0...0>``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1))]
    >>> np.round(sweep_state(K, 2, ops).real, 6).tolist()
    [0.707107, 0.0, 0.0, 0.707107]
    """
    program = sweep_program(num_qubits, operations, K.capabilities.max_ndim)
    operators = block_operators(K, program, bind_matrices(K, operations))
    return run_sweep(K, program, operators, zero_state(K, num_qubits) if state is None else state)


# -- the adjoint sweep ----------------------------------------------------------------------
def _transition(K: Any, stacked: Any, block: SweepBlock, n: int, max_ndim: int) -> Any:
    """``X[a, b] = sum_rest psi[a, rest] conj(lambda[b, rest])`` over the block's qubits (only its
    diagonal, for a diagonal block), from the stacked ``(psi, lambda)``."""
    if block.diagonal:
        single = place(block.qubits, n, diagonal=True, max_ndim=max_ndim)
        if single.kind == "diagonal":
            summed = tuple(i for i, f in enumerate(single.factor_shape) if f == 1)
            product = K.reshape(stacked[0] * K.conj(stacked[1]), single.view)
            return K.reshape(K.sum(product, axis=summed) if summed else product, (single.size,))
    placement = place(block.qubits, n, lead=2, max_ndim=max_ndim)
    size, rest = placement.size, 2 ** n // placement.size
    if placement.kind == "view":
        left, _, right = placement.view
        views = K.reshape(stacked, (2, left // 2, size, right))
        product = K.matmul(views[0], K.transpose(K.conj(views[1]), (0, 2, 1)))
        transition = K.sum(product, axis=0) if left > 2 else K.reshape(product, (size, size))
    elif placement.kind == "right":
        views = K.reshape(stacked, (2, rest, size))
        transition = K.matmul(K.transpose(views[0]), K.conj(views[1]))
    else:
        moved = K.reshape(permute(K, stacked, placement.to_front), (size, 2, rest))
        transition = K.matmul(moved[:, 0, :], K.transpose(K.conj(moved[:, 1, :])))
    return K.diag(transition) if block.diagonal else transition


def _generator(K: Any, op: Operation, index: int, matrix: Any) -> tuple[Any, complex]:
    """``M`` and a factor with ``(dU/dθ) U^† = factor * M`` for parameter ``index`` of ``op``
    (``M`` a constant's name for rotations and phase gates)."""
    if op.gate in _GENERATORS:
        factor, name = _GENERATORS[op.gate]
        return name, (np.conj(factor) if op.dagger else factor)
    derivative = gate_derivative(K, op.gate, op.params, index, op.dagger)
    return K.matmul(derivative, K.conj(K.transpose(matrix))), 1.0


def _paired_generator(K: Any, block: SweepBlock, position: int, generator: Any, max_ndim: int) -> Any:
    """``G`` embedded in the block, laid out so that ``Tr(G X) = sum(paired * X)`` (its diagonal
    for a diagonal block); cached per backend when ``G`` is a named constant."""
    k = len(block.qubits)

    def embed(backend: Any, matrix: Any) -> Any:
        if block.diagonal:
            matrix = backend.diag(matrix)
        if block.member_qubits[position] != tuple(range(k)):
            matrix = apply_placed(backend, _neutral(backend, 2 ** k, block.diagonal), matrix,
                                  _member_placement(block, position, max_ndim))
        return matrix if block.diagonal else backend.transpose(matrix)

    if isinstance(generator, str):
        host = get_backend("numpy")
        return _backend_constant(K, ("generator", generator, block.member_qubits[position], k,
                                     block.diagonal, max_ndim),
                                 lambda: np.asarray(embed(host, CONSTANT_MATRICES[generator])))
    return embed(K, generator)


def adjoint_sweep(K: Any, operations: Sequence[Operation], num_qubits: int, state: Any,
                  apply_observable: Callable[[Any, Any], Any],
                  wanted: dict[int, list[tuple[int, int]]], slot_count: int) -> tuple[float, np.ndarray]:
    """``<psi|O|psi>`` and ``d/dθ`` of it for every wanted angle.

    ``wanted`` maps an operation index to ``(slot, parameter index)`` pairs; the result's second
    entry holds one derivative per slot. ``state`` is the input state (``None``: ``|0...0>``).
    """
    max_ndim = K.capabilities.max_ndim
    program = sweep_program(num_qubits, operations, max_ndim)
    matrices = bind_matrices(K, operations)
    embeddings: dict[int, list[Any]] = {}  # the members' embedded matrices, for the backward pass
    operators = block_operators(K, program, matrices, embeddings)
    psi = run_sweep(K, program, operators, zero_state(K, num_qubits) if state is None else state)
    lam = apply_observable(K, psi)
    value = K.real(K.sum(K.conj(psi) * lam))
    traces: list[Any] = []
    factors: list[complex] = []
    slots: list[int] = []
    stacked = K.stack([psi, lam])
    has_traced = [any(m in wanted for m in block.members) for block in program.blocks]
    last_needed = has_traced.index(True) if any(has_traced) else len(has_traced)
    for b in range(len(program.blocks) - 1, last_needed - 1, -1):
        block = program.blocks[b]
        if has_traced[b]:
            transition = _transition(K, stacked, block, num_qubits, max_ndim)
            for slot, factor, trace in _block_traces(K, block, operations, matrices, embeddings[b],
                                                     transition, wanted, max_ndim):
                slots.append(slot)
                factors.append(factor)
                traces.append(trace)
        if b == last_needed:
            break
        stacked = _apply_block(K, stacked, operators[b], program.placement(block, 2, max_ndim),
                               block.diagonal, adjoint=True)
    gradient = np.zeros(slot_count)
    if traces:
        values = np.asarray(K.to_numpy(K.stack(traces))).reshape(-1)
        for slot, factor, trace in zip(slots, factors, values):
            gradient[slot] = 2.0 * float(np.real(factor * trace))
    return float(K.to_numpy(value)), gradient


def _block_traces(K: Any, block: SweepBlock, operations: Sequence[Operation], matrices: Sequence[Any],
                  embeddings: list[Any], transition: Any, wanted: dict, max_ndim: int) -> Iterator[tuple]:
    """``(slot, factor, Tr(M X_g))`` for every wanted angle of the block, backwards through its
    members; ``X_{g-1} = E_g^† X_g E_g`` with ``E_g`` the member's embedded matrix."""
    earliest = next(p for p, m in enumerate(block.members) if m in wanted)
    for position in range(len(block.members) - 1, earliest - 1, -1):
        member = block.members[position]
        for slot, index in wanted.get(member, ()):
            generator, factor = _generator(K, operations[member], index, matrices[member])
            yield slot, factor, K.sum(_paired_generator(K, block, position, generator, max_ndim) * transition)
        if position > earliest and not block.diagonal:
            embedded = embeddings[position]
            transition = K.matmul(K.matmul(K.conj(K.transpose(embedded)), transition), embedded)
