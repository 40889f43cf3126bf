"""Monte-Carlo trajectories of a noisy circuit: a batch of state vectors, one Kraus branch each.

Each channel ``E(rho) = sum_a K_a rho K_a^dagger`` met by a trajectory in state ``|psi>`` picks
branch ``a`` with probability ``p_a = ||K_a psi||^2`` and continues in ``K_a |psi> / sqrt(p_a)``;
the average of ``<psi|O|psi>`` over trajectories is ``Tr(O rho)``. A batch of trajectories is one
``(batch, 2^n)`` array: gates between channels are applied in fused blocks to the whole batch,
and at a channel every trajectory's branch probabilities come from one contraction (the reduced
density matrices of the channel's qubits against ``K_a^dagger K_a``), its branch from the seeded
host generator, and its new state from one batched matrix product. Nothing loops over
trajectories, on any backend.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ...numerics.moves import permutation_moves, permute
from ...numerics.protocol import ArrayBackend
from ...operators.channels import reset
from ..operations.operation import Operation
from .placement import apply_placed, place
from .sweep import apply_block, bind_matrices, block_operators, sweep_program

__all__ = ["trajectory_states", "batch_size", "TRAJECTORY_BATCH_ENTRIES", "prepared_segments",
           "drawn_branches"]

#: Entries of one batch of states (``batch x 2^n``); a state larger than this runs one at a time.
TRAJECTORY_BATCH_ENTRIES = 2 ** 23


def batch_size(num_qubits: int, trajectories: int) -> int:
    """Trajectories simulated together for a register of ``num_qubits`` qubits."""
    return max(1, min(trajectories, TRAJECTORY_BATCH_ENTRIES // 2 ** num_qubits))


def _segments(operations: Sequence[Operation]) -> list[tuple[str, Any]]:
    """Runs of gates and the channels between them, in order (a reset is the reset channel:
    unravelled, it is exact)."""
    segments: list[tuple[str, Any]] = []
    run: list[Operation] = []
    for op in operations:
        if op.gate == "reset":
            op = Operation("channel", op.qubits, channel=reset())
        elif op.is_dynamic:
            raise ValueError(
                "trajectories of a circuit with mid-circuit measurements, conditions or post-selections: "
                "c.expectation(...) averages over the outcomes exactly (deferred measurement), and "
                "c.sample(...) draws them shot by shot")
        if op.channel is None:
            run.append(op)
            continue
        if run:
            segments.append(("gates", run))
            run = []
        segments.append(("channel", op))
    if run:
        segments.append(("gates", run))
    return segments


def prepared_segments(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation]) -> list[tuple]:
    """Per segment what every batch reuses: a gate run's fused blocks and their operators, a
    channel's Kraus stack and ``K_a^dagger K_a``."""
    max_ndim = K.capabilities.max_ndim
    prepared = []
    for kind, item in _segments(operations):
        if kind == "gates":
            program = sweep_program(num_qubits, item, max_ndim)
            prepared.append(("gates", program, block_operators(K, program, bind_matrices(K, item))))
        else:
            stack = item.channel.stacked(K)
            products = K.einsum("aki,akj->aij", K.conj(stack), stack)
            prepared.append(("channel", item.qubits, (stack, products, _fixed_weights(item.channel))))
    return prepared


def _fixed_weights(channel: Any) -> np.ndarray | None:
    """The branch probabilities of a mixture of unitaries (``K_a^dagger K_a = w_a I``: depolarising,
    Pauli, bit and phase flips), which do not depend on the state; ``None`` otherwise."""
    operators = channel.operators
    if not isinstance(operators, np.ndarray):
        return None
    products = np.einsum("aki,akj->aij", operators.conj(), operators)
    weights = np.real(np.einsum("aii->a", products)) / products.shape[1]
    identity = np.eye(products.shape[1])
    if np.allclose(products, weights[:, None, None] * identity, atol=1e-12):
        return weights
    return None


def trajectory_states(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation], inputs: Any,
                      trajectories: int, rng: np.random.Generator) -> Iterator[Any]:
    """The final states of ``trajectories`` trajectories, in batches of shape ``(batch, 2^n)``
    (``batch`` is 1 for states too large to batch, past 22 qubits in complex128)."""
    n, max_ndim = num_qubits, K.capabilities.max_ndim
    prepared = prepared_segments(K, n, operations)
    size = batch_size(n, trajectories)
    for start in range(0, trajectories, size):
        count = min(size, trajectories - start)
        states = _initial(K, n, inputs, count)
        for kind, first, second in prepared:
            if kind == "gates":
                for block, operator in zip(first.blocks, second):
                    placement = place(block.qubits, n, lead=count, diagonal=block.diagonal,
                                      max_ndim=max_ndim)
                    states = apply_block(K, states, operator, placement, block.diagonal)
            else:
                states = _branch(K, states, first, *second, n, count, rng)
        yield K.reshape(states, (count, 2 ** n))  # a batch of one too (its blocks drop the lead axis)


def _initial(K: ArrayBackend, n: int, inputs: Any, count: int) -> Any:
    if inputs is None:
        return K.concatenate([K.ones((count, 1), K.dtype), K.zeros((count, 2 ** n - 1), K.dtype)], axis=1)
    return K.ones((count, 1), K.dtype_of(inputs)) * K.reshape(inputs, (1, 2 ** n))


def drawn_branches(weights: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each trajectory's branch drawn by its (unnormalised) weights ``(count, branches)``, one
    uniform per trajectory from ``rng``, and the factor ``1 / sqrt(weight)`` that renormalises it.

    Examples
    --------
    >>> choice, scale = drawn_branches(np.array([[0.0, 4.0]]), np.random.default_rng(0))
    >>> choice.tolist(), scale.tolist()
    ([1], [0.5])
    """
    weights = np.clip(weights, 0.0, None)
    cumulative = np.cumsum(weights, axis=1)
    drawn = rng.random(len(weights)) * cumulative[:, -1]
    choice = np.minimum((cumulative < drawn[:, None]).sum(axis=1), weights.shape[1] - 1)
    return choice, 1.0 / np.sqrt(weights[np.arange(len(weights)), choice])


def _branch(K: ArrayBackend, states: Any, qubits: tuple[int, ...], stack: Any, products: Any,
            fixed_weights: np.ndarray | None, n: int, count: int, rng: np.random.Generator) -> Any:
    """Every trajectory through one channel: its branch drawn with probability ``||K_a psi||^2``
    (``fixed_weights``, when the channel is a mixture of unitaries)."""
    d, max_ndim = 2 ** len(qubits), K.capabilities.max_ndim
    legs = (-1,) + tuple(range(n))
    front = (-1,) + tuple(qubits) + tuple(q for q in range(n) if q not in qubits)
    sizes = {leg: 2 for leg in range(n)} | {-1: count}
    moved = K.reshape(permute(K, states, permutation_moves(legs, front, sizes, max_ndim)), (count, d, -1))
    rows = [moved[:, i, :] for i in range(d)]  # (count, rest) each; d is 2 or 4: no batched matmul
    if fixed_weights is not None:
        weights = np.broadcast_to(fixed_weights, (count, len(fixed_weights)))
    else:
        conjugated = [K.conj(row) for row in rows]
        reduced = K.reshape(K.stack([K.sum(rows[i] * conjugated[j], axis=1)
                                     for i in range(d) for j in range(d)], axis=1), (count, d, d))
        weights = np.asarray(K.to_numpy(K.real(K.einsum("aji,tij->ta", products, reduced))))
    choice, scale = drawn_branches(weights, rng)
    chosen = K.take(stack, choice) * K.reshape(K.asarray(scale.astype(complex)), (count, 1, 1))
    chosen = K.cast(chosen, K.dtype_of(states))
    branched = K.stack([sum(K.reshape(chosen[:, i, j], (count, 1)) * rows[j] for j in range(d))
                        for i in range(d)], axis=1)
    restored = permute(K, branched, permutation_moves(front, legs, sizes, max_ndim))
    return K.reshape(restored, (count, 2 ** n))


def local_values(K: ArrayBackend, states: Any, matrices: Sequence[Any], groups: Sequence[tuple[int, ...]],
                 n: int) -> Any:
    """``<psi|O_1 ... O_m|psi>`` (complex) of every state in a batch ``(batch, 2^n)``."""
    count = K.shape(states)[0]
    applied = states
    for matrix, qubits in zip(matrices, groups):
        placement = place(tuple(qubits), n, lead=count, max_ndim=K.capabilities.max_ndim)
        applied = apply_placed(K, applied, matrix, placement)
    return K.sum(K.conj(states) * applied, axis=1)
