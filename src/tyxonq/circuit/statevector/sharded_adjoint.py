"""The adjoint sweep on a sharded state vector: ``<psi|H|psi>`` of a Pauli sum and its derivative
with respect to every gate angle, with no rank holding more than its shards of ``psi`` and
``lambda = H|psi>``.

The forward sweep is :func:`~tyxonq.circuit.statevector.sharded.sharded_sweep`'s; ``lambda`` comes
from :meth:`~tyxonq.circuit.statevector.sharded.ShardedState.apply_pauli_sum`. Backwards, the plan's
steps run in reverse on ``psi`` and ``lambda`` (a swap is its own inverse, a block is undone by its
adjoint; the two are kept apart, so that no array is larger than a shard). A block's transition matrix
``X = Tr_rest |psi_B><lambda_B|`` is a sum over the ranks' amplitudes, and every angle's derivative
is linear in it (:func:`~tyxonq.circuit.statevector.adjoint.block_traces`): each rank adds up its
partial traces and one all-reduce at the end carries the value and every derivative.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics.distributed import Communicator
from ...numerics.progress import progress
from ...numerics.protocol import ArrayBackend
from ...operators.pauli import PauliSum
from ..operations.operation import Operation
from .adjoint import block_traces, traced_entries
from .shard_plan import BlockStep, Swap, global_count_of, shard_plan
from .sharded import (
    ShardedState,
    apply_sharded_block,
    chunked_inner,
    initial_shard,
    run_plan,
    shard_transition,
)
from .sweep import bind_matrices, block_operators, sweep_program

__all__ = ["sharded_adjoint"]


def sharded_adjoint(K: ArrayBackend, comm: Communicator, operations: Sequence[Operation], num_qubits: int,
                    inputs: Any, hamiltonian: PauliSum, wanted: dict[int, list[tuple[int, int]]],
                    slot_count: int) -> tuple[float, np.ndarray, ShardedState]:
    """``<psi|H|psi>`` and its derivative for every wanted angle (``wanted``: operation index ->
    ``(slot, parameter index)`` pairs, as :func:`~tyxonq.circuit.statevector.adjoint.adjoint_sweep`),
    the same on every rank; also the final sharded state (its counters say what was exchanged).

    Examples
    --------
    >>> import tyxonq as tq
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (0.3,))]
    >>> value, gradient, _ = sharded_adjoint(K, SingleProcess(), ops, 1, None, tq.PauliSum([(1.0, "Z")]),
    ...                                      {0: [(0, 0)]}, 1)
    >>> round(value, 6), np.round(gradient, 6).tolist()
    (0.955336, [-0.29552])
    """
    k = global_count_of(comm.size)
    program = sweep_program(num_qubits, operations, K.capabilities.max_ndim)
    plan = shard_plan(program, k, fixed=inputs is not None)
    matrices = bind_matrices(K, operations)
    traced, keep = traced_entries(program, wanted)
    prefixes: dict[int, list[Any]] = {}
    operators = block_operators(K, program, matrices, keep, prefixes)
    state = ShardedState(K, comm, num_qubits, initial_shard(K, plan, comm.rank, inputs), plan.initial)
    run_plan(state, plan, program, operators)
    lam = state.apply_pauli_sum(hamiltonian)
    value = chunked_inner(K, state.shard, lam)
    psi = state.shard
    pieces: list[Any] = []
    slots: list[int] = []
    factors: list[complex] = []
    first = min(traced) if traced else len(program.blocks)
    with progress(len(plan.steps), "sharded gradient: steps back", unit="step") as report:
        for step in reversed(plan.steps):
            if isinstance(step, Swap):  # psi and lambda one after the other: no array larger than a shard
                psi, lam = state.swap(psi, step), state.swap(lam, step)
                report.advance()
                continue
            assert isinstance(step, BlockStep)
            b, block = step.index, program.blocks[step.index]
            if b in traced:
                transition = shard_transition(K, psi, lam, block.diagonal, step.positions, comm.rank, k,
                                              num_qubits)
                piece, block_factors = block_traces(K, operations, matrices, block, traced[b], transition,
                                                    operators[b], prefixes.get(b), keep.get(b),
                                                    K.capabilities.max_ndim)
                pieces.append(piece)
                slots += [entry[2] for entry in traced[b]]
                factors += block_factors
            report.advance()
            if b == first:
                break
            psi, lam = (apply_sharded_block(K, array, operators[b], block, step.positions, comm.rank, k,
                                            num_qubits, adjoint=True) for array in (psi, lam))
    traces = np.asarray(K.to_numpy(K.concatenate(pieces))).reshape(-1) if pieces else np.zeros(0, complex)
    summed = comm.all_reduce_sum(np.concatenate([[complex(K.to_numpy(value))], traces]).astype(complex))
    gradient = np.zeros(slot_count)
    if pieces:
        np.add.at(gradient, np.asarray(slots), 2.0 * np.real(np.asarray(factors) * summed[1:]))
    return float(np.real(summed[0])), gradient, state
