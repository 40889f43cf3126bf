"""What a sharded state costs, before it runs: the route's estimated work (against the light
cones) and a rehearsal's account of the ranks, global qubits, exchanges and bytes each rank sends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...numerics.protocol import ArrayBackend
from ..contraction.rehearsal import record
from ..contraction.route_costs import RouteCost, readout_passes
from ..operations.operation import Operation
from .shard_plan import global_count_of, shard_plan
from .sweep import SweepProgram, sweep_program

__all__ = ["ShardingReport", "record_sharding", "sharded_sweep_cost", "EXCHANGE_PASS_WEIGHT"]

#: An amplitude sent to another rank costs this many element-wise passes over one in memory (a
#: 10 GB/s link against ~50 GB/s of memory bandwidth, and the copies on either side).
EXCHANGE_PASS_WEIGHT = 8.0


@dataclass(frozen=True)
class ShardingReport:
    """A state vector sharded across ranks, as planned.

    Attributes
    ----------
    ranks : int
        Ranks sharing the state (``2^k``).
    global_qubits : tuple of int
        The qubits indexing the rank when the sweep starts.
    swaps : int
        Exchanges of half of each shard in one sweep (a gradient sweeps forwards and back).
    exchanges : int
        Exchanges per rank for the whole result (swaps, and one per group of Pauli strings that
        flip global qubits).
    bytes_sent : int
        Bytes each rank sends for the result.
    shard_bytes : int
        One shard (``2^(n-k)`` amplitudes).
    peak_bytes : int
        What the result holds per rank at most: ``copies`` shards (one for values; ``psi``,
        ``lambda`` and a term of it for a gradient) and one exchange buffer (half a shard).
    """

    ranks: int
    global_qubits: tuple[int, ...]
    swaps: int
    exchanges: int
    bytes_sent: int
    shard_bytes: int
    peak_bytes: int

    def __str__(self) -> str:
        return (f"sharded over {self.ranks} ranks (global qubits {list(self.global_qubits)}): {self.swaps} "
                f"swap(s) per sweep, {self.exchanges} exchange(s) and {self.bytes_sent / 2 ** 20:.4g} MiB "
                f"sent per rank, shards of {self.shard_bytes / 2 ** 20:.4g} MiB")


def _global_flips(strings: Sequence[str], layout: Sequence[int], global_count: int) -> int:
    """Distinct nonzero sets of global qubits the strings flip (one exchange each)."""
    masks = {tuple(string[layout[p]] in "XY" for p in range(global_count)) for string in strings}
    return sum(1 for mask in masks if any(mask))


def sharded_sweep_cost(program: SweepProgram, ranks: int, strings: Sequence[str], fixed: bool) -> RouteCost:
    """The ``"state"`` route's work per rank for a state sharded over ``ranks``: its share of the
    blocks' arithmetic, the swaps' and the strings' exchanges (:data:`EXCHANGE_PASS_WEIGHT`) and
    its share of the readout.

    Examples
    --------
    >>> from tyxonq.circuit.statevector.sweep import sweep_program
    >>> ops = [Operation("h", (q,)) for q in range(6)]
    >>> [block.qubits for block in sweep_program(6, ops).blocks]  # 32 amplitudes per rank
    [(0, 1, 2, 3), (4, 5)]
    >>> sharded_sweep_cost(sweep_program(6, ops), 2, ["XIIIII"], fixed=False).madds  # 32 (16 + 4)
    640.0
    """
    k = global_count_of(ranks)
    plan = shard_plan(program, k, fixed)
    local = 2.0 ** (program.num_qubits - k)
    madds = sum(local * 2 ** len(block.qubits) for block in program.blocks if not block.diagonal)
    passes = sum(local for block in program.blocks if block.diagonal)
    exchanged = plan.swaps * local / 2 + _global_flips(strings, plan.final, k) * local
    readout = readout_passes(program.num_qubits, strings, density=False) / ranks
    return RouteCost("state", len(program.blocks) + 2 * len(strings), madds,
                     passes=passes + readout + EXCHANGE_PASS_WEIGHT * exchanged)


def record_sharding(K: ArrayBackend, ranks: int, num_qubits: int, operations: Sequence[Operation],
                    fixed: bool, copies: int, strings: Sequence[str] = (),
                    gradient: bool = False) -> ShardingReport:
    """Record a sharded result in the active rehearsal (route ``"sharded-state"``) and return its
    :class:`ShardingReport` (``gradient``: a forward and a backward sweep, ``psi`` and ``lambda``
    swapped together on the way back)."""
    k = global_count_of(ranks)
    program = sweep_program(num_qubits, operations, K.capabilities.max_ndim)
    plan = shard_plan(program, k, fixed)
    itemsize = 16 if K.precision == "complex128" else 8
    shard = 2 ** (num_qubits - k) * itemsize
    flips = _global_flips(strings, plan.final, k)
    exchanges = plan.swaps * (3 if gradient else 1) + flips
    sent = plan.swaps * shard // 2 * (3 if gradient else 1) + flips * shard
    report = ShardingReport(ranks, tuple(sorted(plan.initial[:k])), plan.swaps, exchanges, sent, shard,
                            copies * shard + shard // 2)
    record("route", name="sharded-state")
    record("sharding", report=report)
    return report
