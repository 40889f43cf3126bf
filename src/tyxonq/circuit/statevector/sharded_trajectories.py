"""Noisy trajectories on a sharded state vector: one trajectory at a time, every rank holding its
shard of it.

A trajectory (:mod:`~tyxonq.circuit.statevector.trajectories`) follows one Kraus branch per
channel, drawn with probability ``p_a = ||K_a psi||^2 = Tr(K_a^dagger K_a rho_C)``. Sharded, the
channel is one more block of the plan (:func:`~tyxonq.circuit.statevector.shard_plan.shard_plan`):
its qubits are made local like a mixing gate's, each rank adds up its part of the channel qubits'
reduced density matrix ``rho_C`` (chunk by chunk) and one all-reduce gives every rank the same
probabilities; every rank draws from the same seeded generator, so all choose the same branch and
apply ``K_a / sqrt(p_a)`` to their shards. The draws are those of one process running the
trajectories one at a time with the same generator (as it does for states too large to batch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ...numerics.distributed import Communicator
from ...numerics.protocol import ArrayBackend
from ..operations.operation import Operation
from .shard_plan import global_count_of, shard_plan
from .sharded import ShardedState, apply_sharded_block, initial_shard, run_plan, shard_transition
from .trajectories import drawn_branches, prepared_segments

__all__ = ["ChannelBlock", "sharded_trajectory_values"]


@dataclass(frozen=True)
class ChannelBlock:
    """A channel in a sharded plan: its qubits (in the Kraus operators' order) must be local."""

    qubits: tuple[int, ...]
    diagonal: bool = False


@dataclass(frozen=True)
class TrajectoryProgram:
    """The blocks of a noisy circuit's gate runs and its channels, in order (what
    :func:`~tyxonq.circuit.statevector.shard_plan.shard_plan` reads of a sweep program)."""

    num_qubits: int
    blocks: tuple[Any, ...]


def _program(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation]
             ) -> tuple[TrajectoryProgram, list[Any]]:
    """The plan's program and, per block, a gate block's operator or a channel's ``(Kraus stack,
    K_a^dagger K_a on the host, fixed weights or None)``."""
    blocks: list[Any] = []
    payloads: list[Any] = []
    for kind, first, second in prepared_segments(K, num_qubits, operations):
        if kind == "gates":
            blocks += first.blocks
            payloads += list(second)
        else:
            stack, products, fixed = second
            blocks.append(ChannelBlock(tuple(first)))
            payloads.append((stack, np.asarray(K.to_numpy(products)), fixed))
    return TrajectoryProgram(num_qubits, tuple(blocks)), payloads


def _branch(state: ShardedState, block: ChannelBlock, positions: tuple[int, ...], payload: tuple,
            rng: np.random.Generator) -> None:
    """One channel on the sharded trajectory: the branch drawn as one process draws it (a batch
    of one), its Kraus operator applied to every shard."""
    stack, products, fixed = payload
    K, k, n = state.K, state.global_count, state.num_qubits
    if fixed is None:
        reduced = shard_transition(K, state.shard, state.shard, False, positions, state.rank, k, n)
        reduced = state.comm.all_reduce_sum(np.asarray(K.to_numpy(reduced), dtype=complex))
        weights = np.real(np.einsum("aji,ij->a", products, reduced))
    else:
        weights = np.asarray(fixed, dtype=float)
    choice, scale = drawn_branches(weights[None, :], rng)
    matrix = K.cast(stack[int(choice[0])] * float(scale[0]), K.dtype_of(state.shard))
    state.shard = apply_sharded_block(K, state.shard, matrix, block, positions, state.rank, k, n)


def sharded_trajectories(K: ArrayBackend, comm: Communicator, num_qubits: int,
                         operations: Sequence[Operation], inputs: Any, trajectories: int,
                         rng: np.random.Generator) -> Iterator[ShardedState]:
    """The final sharded state of each of ``trajectories`` trajectories, one after another (the
    same branches on every rank: ``rng`` seeded alike on all).

    Examples
    --------
    >>> import tyxonq as tq
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> c = tq.Circuit(1).x(0).amplitude_damping(0, gamma=1.0)  # always decays to |0>
    >>> K = tq.get_backend("numpy")
    >>> [bool(np.allclose(s.gather(), [1, 0])) for s in sharded_trajectories(
    ...     K, SingleProcess(), 1, c.operations, None, 2, np.random.default_rng(0))]
    [True, True]
    """
    program, payloads = _program(K, num_qubits, operations)
    plan = shard_plan(program, global_count_of(comm.size), fixed=inputs is not None)

    def channel(state: ShardedState, block: Any, positions: tuple[int, ...], payload: tuple) -> None:
        _branch(state, block, positions, payload, rng)

    for _ in range(trajectories):
        state = ShardedState(K, comm, num_qubits, initial_shard(K, plan, comm.rank, inputs), plan.initial)
        run_plan(state, plan, program, payloads, channel)
        yield state


def sharded_trajectory_values(K: ArrayBackend, comm: Communicator, num_qubits: int,
                              operations: Sequence[Operation], inputs: Any, trajectories: int,
                              seed: int | None, value: Callable[[ShardedState], float]) -> np.ndarray:
    """``value`` of each trajectory's final sharded state (the same on every rank), drawn from
    one generator seeded by ``seed`` on every rank.

    Examples
    --------
    >>> import tyxonq as tq
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> c = tq.Circuit(2).h(0).cx(0, 1).depolarizing(0, p=0.3)
    >>> zz = lambda state: state.expectation(tq.PauliSum([(1.0, "ZZ")]))
    >>> K = tq.get_backend("numpy")
    >>> values = sharded_trajectory_values(K, SingleProcess(), 2, c.operations, None, 4, 1, zz)
    >>> values.shape, bool(np.all(np.abs(np.abs(values) - 1) < 1e-12))
    ((4,), True)
    """
    rng = np.random.default_rng(seed)
    return np.array([value(state) for state in sharded_trajectories(K, comm, num_qubits, operations, inputs,
                                                                    trajectories, rng)], dtype=float)
