"""The adjoint sweep: ``<psi|O|psi>`` and its derivatives with respect to every gate angle, from
one forward and one backward sweep over the state vector (:mod:`tyxonq.circuit.statevector.sweep`).

Backwards over blocks, the state and the co-state ``lambda = O|psi>`` are stacked in one array
(one call undoes a block on both). For a block ``B = E_m ... E_1`` (``E`` its members embedded
in its ``2^k``-dimensional space) the transition matrix ``X = Tr_rest |psi_B><lambda_B|`` is
formed once; then, for every angle of the block,

    dE/dθ_g = 2 Re Tr(A_g X),    A_g = S_g M_g S_g^†,    S_g = B P_g^†,

with ``M_g = (dU_g/dθ) U_g^†`` (a constant times the generator, for rotations and phase gates),
``P_g = E_g ... E_1`` kept by the forward sweep and ``S_g`` the rest of the block. All of a
block's angles cost a few batched ``2^k``-sized calls.

The forward sweep keeps the state after every block that carries angles when those states fit in
a quarter of the memory budget (:data:`KEPT_STATES_SHARE`,
:func:`~tyxonq.numerics.memory.fits_in_memory`): the backward sweep then undoes blocks on
``lambda`` alone. Otherwise ``psi`` is undone beside ``lambda``, one call on both stacked, twice
the arithmetic (measured, NumPy, 18-qubit Heisenberg gradient of a 4-layer ansatz: 120 ms kept,
160-175 ms undone).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.constants import backend_constant
from ...numerics.memory import fits_in_memory
from ...numerics.moves import permute
from ...numerics.protocol import ArrayBackend
from ..operations.gates import _GENERATORS, CONSTANT_MATRICES, constant, gate_derivative
from ..operations.operation import Operation
from .placement import apply_placed, place
from .products import neutral
from .sweep import (
    SweepBlock,
    apply_block,
    bind_matrices,
    block_operators,
    run_sweep,
    sweep_program,
    zero_state,
)

__all__ = ["adjoint_sweep", "block_traces", "transition_on", "traced_entries"]

#: A transition over a view with at most this many trailing entries is one ``tensordot`` rather
#: than a batch of ``(2^k x right) @ (right x 2^k)`` products (measured, 14 qubits, 4-qubit
#: block: right = 2: 120 against 243 us on NumPy, 289 against 531 us on PyTorch).
SMALL_RIGHT = 4

#: The forward states are kept while they take at most this share of the memory budget.
KEPT_STATES_SHARE = 0.25

Entry = tuple[int, int, int, int]  # (member position in its block, operation, slot, parameter)


def adjoint_sweep(K: ArrayBackend, operations: Sequence[Operation], num_qubits: int, state: Any,
                  apply_observable: Callable[[Any, Any], Any],
                  wanted: dict[int, list[tuple[int, int]]], slot_count: int) -> tuple[float, np.ndarray]:
    """``<psi|O|psi>`` and its derivative for every wanted angle.

    ``wanted`` maps an operation index to its ``(slot, parameter index)`` pairs; the second
    result holds one derivative per slot. ``state`` is the input state (``None``: ``|0...0>``);
    ``apply_observable(K, psi)`` returns ``O|psi>`` for a Hermitian ``O``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (0.3,))]  # <Z> = cos(θ), d<Z>/dθ = -sin(θ)
    >>> z = lambda K, psi: psi * K.asarray([1.0, -1.0])
    >>> value, gradient = adjoint_sweep(K, ops, 1, None, z, {0: [(0, 0)]}, 1)
    >>> round(value, 6), np.round(gradient, 6).tolist()
    (0.955336, [-0.29552])
    """
    max_ndim = K.capabilities.max_ndim
    program = sweep_program(num_qubits, operations, max_ndim)
    matrices = bind_matrices(K, operations)
    traced, keep = traced_entries(program, wanted)
    prefixes: dict[int, list[Any]] = {}
    operators = block_operators(K, program, matrices, keep, prefixes)
    psi = zero_state(K, num_qubits) if state is None else state
    kept: dict[int, Any] | None = None
    if fits_in_memory(K, int(len(traced) * 2 ** num_qubits / KEPT_STATES_SHARE)):
        kept = {}
        for b, (block, operator) in enumerate(zip(program.blocks, operators)):
            psi = apply_block(K, psi, operator, block.placement, block.diagonal)
            if b in traced:
                kept[b] = psi
    else:
        psi = run_sweep(K, program, operators, psi)
    lam = apply_observable(K, psi)
    value = K.real(K.sum(K.conj(psi) * lam))
    # backwards: lambda alone beside the kept states, or lambda and psi stacked
    carried = lam if kept is not None else K.stack([psi, lam])
    pieces: list[Any] = []
    slots: list[int] = []
    factors: list[complex] = []
    first = min(traced) if traced else len(program.blocks)
    for b in range(len(program.blocks) - 1, first - 1, -1):
        block = program.blocks[b]
        if b in traced:
            entries = traced[b]
            if kept is not None:
                transition = _transition(K, kept[b], carried, block, num_qubits, max_ndim)
            else:
                transition = _transition(K, carried[0], carried[1], block, num_qubits, max_ndim)
            piece, block_factors = block_traces(K, operations, matrices, block, entries, transition,
                                                operators[b], prefixes.get(b), keep.get(b), max_ndim)
            pieces.append(piece)
            slots += [entry[2] for entry in entries]
            factors += block_factors
        if b == first:
            break
        placement = block.placement if kept is not None else block.stacked_placement
        carried = apply_block(K, carried, operators[b], placement, block.diagonal, adjoint=True)
    gradient = np.zeros(slot_count)
    if pieces:
        traces = np.asarray(K.to_numpy(K.concatenate(pieces))).reshape(-1)
        gradient[np.asarray(slots)] = 2.0 * np.real(np.asarray(factors) * traces)
    return float(K.to_numpy(value)), gradient


def traced_entries(program: Any, wanted: dict[int, list[tuple[int, int]]]
                   ) -> tuple[dict[int, list[Entry]], dict[int, list[int]]]:
    """The blocks that carry wanted angles with their entries, and (non-diagonal blocks) the
    member positions whose prefix products the backward sweep needs."""
    traced = {b: entries for b, block in enumerate(program.blocks)
              if (entries := [(position, member, slot, index)
                              for position, member in enumerate(block.members)
                              for slot, index in wanted.get(member, ())])}
    keep = {b: sorted({entry[0] for entry in entries}) for b, entries in traced.items()
            if not program.blocks[b].diagonal}
    return traced, keep


def block_traces(K: ArrayBackend, operations: Sequence[Operation], matrices: Sequence[Any], block: SweepBlock,
                 entries: list[Entry], transition: Any, operator: Any, prefixes: list[Any] | None,
                 kept: list[int] | None, max_ndim: int) -> tuple[Any, list[complex]]:
    """``Tr(A_g X)`` for every entry of a block (linear in the transition ``X``: partial
    transitions give partial traces) and the factors ``dE/dθ = 2 Re(factor * trace)`` takes."""
    generators = [_generator(K, operations[m], j, matrices[m]) for _, m, _, j in entries]
    embedded = _embedded_generators(K, block, entries, [g for g, _ in generators], max_ndim)
    if block.diagonal:
        return K.matmul(embedded, transition), [factor for _, factor in generators]
    prefix = K.stack([prefixes[kept.index(entry[0])] for entry in entries])
    suffix = K.matmul(operator, K.conj(K.transpose(prefix, (0, 2, 1))))
    heisenberg = K.matmul(K.matmul(suffix, embedded), K.conj(K.transpose(suffix, (0, 2, 1))))
    return K.sum(heisenberg * K.transpose(transition), axis=(1, 2)), [factor for _, factor in generators]


def _transition(K: ArrayBackend, psi: Any, lam: Any, block: SweepBlock, n: int, max_ndim: int) -> Any:
    """``X[a, b] = sum_rest psi[a, rest] conj(lambda[b, rest])`` over the block's qubits (only its
    diagonal, for a diagonal block)."""
    return transition_on(K, psi, lam, block.qubits, block.diagonal, n, max_ndim)


def transition_on(K: ArrayBackend, psi: Any, lam: Any, qubits: tuple[int, ...], diagonal: bool, n: int,
                  max_ndim: int) -> Any:
    """``X[a, b] = sum_rest psi[a, rest] conj(lambda[b, rest])`` over ascending ``qubits`` of an
    ``n``-qubit register (only its diagonal, for a ``diagonal`` block)."""
    if diagonal:
        single = place(qubits, n, diagonal=True, max_ndim=max_ndim)
        if single.kind == "diagonal":
            summed = tuple(i for i, f in enumerate(single.factor_shape) if f == 1)
            product = K.reshape(psi * K.conj(lam), single.view)
            return K.reshape(K.sum(product, axis=summed) if summed else product, (single.size,))
    placement = place(qubits, n, max_ndim=max_ndim)
    size, rest = placement.size, 2 ** n // placement.size
    if placement.kind == "view":
        left, _, right = placement.view
        views = K.reshape(psi, (left, size, right)), K.conj(K.reshape(lam, (left, size, right)))
        if right <= SMALL_RIGHT:  # one product over (left, right): batched tiny products are slow
            transition = K.tensordot(views[0], views[1], ([0, 2], [0, 2]))
        else:
            transition = K.sum(K.matmul(views[0], K.transpose(views[1], (0, 2, 1))), axis=0)
    elif placement.kind == "right":
        transition = K.matmul(K.transpose(K.reshape(psi, (rest, size))), K.conj(K.reshape(lam, (rest, size))))
    else:
        moved_psi = K.reshape(permute(K, psi, placement.to_front), (size, rest))
        moved_lam = K.reshape(permute(K, lam, placement.to_front), (size, rest))
        transition = K.matmul(moved_psi, K.transpose(K.conj(moved_lam)))
    return K.diag(transition) if diagonal else transition


def _generator(K: ArrayBackend, op: Operation, index: int, matrix: Any) -> tuple[Any, complex]:
    """``M`` and a factor with ``(dU/dθ) U^† = factor * M`` for parameter ``index`` of ``op``
    (``M`` a constant's name for rotations and phase gates)."""
    if op.gate in _GENERATORS:
        factor, name = _GENERATORS[op.gate]
        return name, (np.conj(factor) if op.dagger else factor)
    derivative = gate_derivative(K, op.gate, op.params, index, op.dagger)
    return K.matmul(derivative, K.conj(K.transpose(matrix))), 1.0


def _embed(K: ArrayBackend, block: SweepBlock, position: int, matrix: Any) -> Any:
    """A member's matrix on all of the block's qubits (its diagonal, for a diagonal block)."""
    k = len(block.qubits)
    if block.diagonal:
        matrix = K.diag(matrix)
    if block.member_qubits[position] == tuple(range(k)):
        return matrix
    return apply_placed(K, neutral(K, 2 ** k, block.diagonal), matrix, block.member_placements[position])


def _embedded_generators(K: ArrayBackend, block: SweepBlock, entries: list[Entry], generators: list[Any],
                         max_ndim: int) -> Any:
    """The entries' ``M`` embedded in the block, stacked; cached per backend when all are named
    constants (rotations and phase gates)."""
    if all(isinstance(g, str) for g in generators):
        host = get_backend("numpy")
        key = ("generators", block.qubits, block.member_qubits, block.diagonal, max_ndim,
               tuple((entry[0], g) for entry, g in zip(entries, generators)))
        return backend_constant(K, key, lambda: np.stack([
            np.asarray(_embed(host, block, entry[0], CONSTANT_MATRICES[g]))
            for entry, g in zip(entries, generators)]))
    return K.stack([_embed(K, block, entry[0], constant(K, g) if isinstance(g, str) else g)
                    for entry, g in zip(entries, generators)])
