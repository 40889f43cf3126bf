"""Which qubits index the rank, gate by gate: the plan of a state vector sharded across ``2^k`` ranks.

A sharded state's ``n`` qubits sit at *physical positions*: positions ``0 .. k-1`` are *global*
(their bits are the rank, position 0 the most significant), positions ``k .. n-1`` *local* (the
index within a rank's ``2^(n-k)`` amplitudes). A block of a sweep
(:class:`~tyxonq.circuit.statevector.sweep.SweepProgram`) runs on each rank alone when every
qubit it mixes is local; a diagonal block never needs its qubits local (a global qubit's bit is
fixed on each rank: the diagonal is sliced). Otherwise a global qubit is first *swapped* with a
local one, a pairwise exchange of half of each shard (:class:`Swap`).

:func:`shard_plan` orders those swaps once per circuit structure (cached): before a block that
mixes global qubits, each is swapped with the local qubit whose next use by a mixing block lies
furthest ahead (Belady's rule, the choice cache-blocking and qubit-reordering simulators make),
so that blocks between swaps run locally and exchanges are few. A state that starts as
``|0...0>`` is the same on any layout, so its first global qubits are those mixed last.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ...numerics.cache_registry import register_function_cache
from .sweep import SweepProgram

__all__ = ["Swap", "BlockStep", "ShardPlan", "shard_plan", "initial_layout", "global_count_of"]


@dataclass(frozen=True)
class Swap:
    """Exchange the qubits at a global and a local physical position (half of each shard travels
    between the two ranks that differ in the global position's bit)."""

    global_position: int
    local_position: int


@dataclass(frozen=True)
class BlockStep:
    """Apply block ``index`` of the sweep with its qubits (in the block's order) at ``positions``."""

    index: int
    positions: tuple[int, ...]


@dataclass(frozen=True)
class ShardPlan:
    """The steps of a sharded sweep: blocks and swaps, in order, from ``initial`` to ``final``
    layouts (``layout[p]``: the qubit at physical position ``p``)."""

    num_qubits: int
    global_count: int
    initial: tuple[int, ...]
    steps: tuple[BlockStep | Swap, ...]
    final: tuple[int, ...]

    @property
    def swaps(self) -> int:
        """How many exchanges the sweep makes."""
        return sum(isinstance(step, Swap) for step in self.steps)


def global_count_of(size: int) -> int:
    """``k`` with ``2^k == size`` ranks; a ``ValueError`` for a count that is not a power of two.

    Examples
    --------
    >>> global_count_of(4)
    2
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"a sharded state vector needs a power-of-two number of ranks (1, 2, 4, 8, ...); "
                         f"this run has {size}: launch with a power of two, or use fewer ranks")
    return size.bit_length() - 1


def initial_layout(program: SweepProgram, global_count: int, fixed: bool) -> tuple[int, ...]:
    """The layout a sweep starts from: the identity (``fixed``: an input state given in qubit
    order), else the qubits mixed last at the global positions (``|0...0>`` looks the same on
    every layout).

    Examples
    --------
    >>> from tyxonq.circuit.operations.operation import Operation
    >>> from tyxonq.circuit.statevector.sweep import sweep_program
    >>> ops = [Operation("h", (q,)) for q in (2, 3, 1, 0)]
    >>> initial_layout(sweep_program(4, ops), 1, fixed=False)[0]  # qubit 0 is mixed last
    0
    """
    n = program.num_qubits
    if fixed or global_count == 0:
        return tuple(range(n))
    first_use = {q: len(program.blocks) for q in range(n)}
    for index in reversed(range(len(program.blocks))):
        block = program.blocks[index]
        if not block.diagonal:
            for q in block.qubits:
                first_use[q] = index
    latest = sorted(range(n), key=lambda q: (-first_use[q], q))[:global_count]
    return tuple(sorted(latest)) + tuple(q for q in range(n) if q not in latest)


@register_function_cache
@functools.lru_cache(maxsize=64)
def _cached_plan(program: SweepProgram, global_count: int, fixed: bool) -> ShardPlan:
    n, k = program.num_qubits, global_count
    layout = list(initial_layout(program, k, fixed))
    initial = tuple(layout)
    position = {q: p for p, q in enumerate(layout)}
    uses: dict[int, list[int]] = {q: [] for q in range(n)}  # mixing blocks of each qubit, in order
    for index, block in enumerate(program.blocks):
        if not block.diagonal:
            for q in block.qubits:
                uses[q].append(index)
    cursor = {q: 0 for q in range(n)}
    steps: list[BlockStep | Swap] = []

    def next_use(q: int, after: int) -> int:
        while cursor[q] < len(uses[q]) and uses[q][cursor[q]] <= after:
            cursor[q] += 1
        return uses[q][cursor[q]] if cursor[q] < len(uses[q]) else len(program.blocks)

    for index, block in enumerate(program.blocks):
        if not block.diagonal:
            if len(block.qubits) > n - k:
                raise ValueError(f"a block of {len(block.qubits)} qubits does not fit the {n - k} local "
                                 f"qubits of {2 ** k} ranks: use fewer ranks for {n} qubits")
            for q in block.qubits:
                if position[q] >= k:
                    continue
                candidates = [p for p in range(k, n) if layout[p] not in block.qubits]
                victim = max(candidates, key=lambda p: (next_use(layout[p], index), -p))
                g = position[q]
                steps.append(Swap(g, victim))
                layout[g], layout[victim] = layout[victim], layout[g]
                position[layout[g]], position[layout[victim]] = g, victim
        steps.append(BlockStep(index, tuple(position[q] for q in block.qubits)))
    return ShardPlan(n, k, initial, tuple(steps), tuple(layout))


def shard_plan(program: SweepProgram, global_count: int, fixed: bool = False) -> ShardPlan:
    """The cached :class:`ShardPlan` of a sweep over ``2^global_count`` ranks (``fixed``: the
    input state is given in qubit order, so the sweep starts from the identity layout).

    Examples
    --------
    >>> from tyxonq.circuit.operations.operation import Operation
    >>> from tyxonq.circuit.statevector.sweep import sweep_program
    >>> ops = [Operation("h", (q,)) for q in range(6)] + [Operation("cx", (0, 5))]
    >>> plan = shard_plan(sweep_program(6, ops), 1)
    >>> plan.swaps, plan.global_count
    (1, 1)
    """
    return _cached_plan(program, global_count, fixed)

