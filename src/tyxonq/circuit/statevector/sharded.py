"""A state vector sharded across the ranks of a distributed run, and its results without gathering it.

``2^k`` ranks each hold ``2^(n-k)`` amplitudes: the qubits at the ``k`` global physical positions
index the rank (:mod:`~tyxonq.circuit.statevector.shard_plan`). A sweep runs the blocks of the
one-process :class:`~tyxonq.circuit.statevector.sweep.SweepProgram` on each rank's shard (the same
placements, on an ``n-k`` qubit register; a diagonal block on global qubits takes the slice of its
diagonal that the rank's bits select) and the plan's swaps exchange half of each shard with the
rank across the swapped global qubit (:meth:`~tyxonq.numerics.distributed.Communicator.exchange`).

Results come from local partial sums and one collective: Pauli strings and sums (a string that
flips global qubits reads the shard of the rank it maps this one to: one exchange per distinct
global flip, whatever the number of strings), marginal probabilities, amplitudes, and samples
drawn by inverse CDF over the ranks' cumulative weights from the uniforms the one-process sampler
draws with the same seed (so the samples are those of one process). Every rank returns the same
result; ``exchanges`` and ``bytes_sent`` count what this rank sent.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ...numerics.distributed import Communicator
from ...numerics.protocol import ArrayBackend
from ...operators.pauli import PauliSum
from ...operators.pauli_action import apply_pauli_sum
from ...operators.state_expectation import apply_pauli_string
from ..operations.operation import Operation
from .placement import apply_placed, place
from .shard_plan import BlockStep, ShardPlan, Swap, global_count_of, shard_plan
from .sweep import SweepBlock, bind_matrices, block_operators, sweep_program

__all__ = ["ShardedState", "sharded_sweep", "apply_sharded_block", "rank_bit"]


def rank_bit(rank: int, global_count: int, position: int) -> int:
    """The bit of global physical ``position`` on ``rank`` (position 0 the most significant).

    Examples
    --------
    >>> [rank_bit(2, 2, p) for p in (0, 1)]
    [1, 0]
    """
    return (rank >> (global_count - 1 - position)) & 1


@register_function_cache
@functools.lru_cache(maxsize=1024)
def _sliced_diagonal_index(size: int, fixed: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The entries of a ``2^size`` diagonal (bit ``i`` of qubit ``i``, qubit 0 most significant)
    whose bits ``fixed`` (``(qubit, bit)`` pairs) hold, ordered by the other qubits' bits."""
    entries = np.arange(2 ** size)
    keep = np.ones(2 ** size, dtype=bool)
    for qubit, bit in fixed:
        keep &= ((entries >> (size - 1 - qubit)) & 1) == bit
    return tuple(entries[keep].tolist())


def apply_sharded_block(K: ArrayBackend, shard: Any, operator: Any, block: SweepBlock,
                        positions: tuple[int, ...], rank: int, global_count: int, num_qubits: int,
                        lead: int = 1, adjoint: bool = False) -> Any:
    """A sweep block's operator (or its adjoint) on a rank's shard (``lead`` stacked shards), its
    qubits at physical ``positions``: a diagonal block sliced by the rank's global bits, any
    other with every qubit local (the plan's swaps see to that).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> from tyxonq.circuit.statevector.sweep import sweep_program
    >>> K = tq.get_backend("numpy")
    >>> block = sweep_program(2, [Operation("z", (0,))]).blocks[0]
    >>> apply_sharded_block(K, np.ones(2, dtype=complex), np.array([1, -1], dtype=complex), block,
    ...                     (0,), rank=1, global_count=1, num_qubits=2).real.tolist()  # qubit 0 is 1 here
    [-1.0, -1.0]
    """
    if adjoint:
        operator = K.conj(operator) if block.diagonal else K.conj(K.transpose(operator))
    k = global_count
    fixed = tuple((i, rank_bit(rank, k, p)) for i, p in enumerate(positions) if p < k)
    local = tuple(p - k for p in positions if p >= k)
    if fixed:
        if not block.diagonal:
            raise ValueError(f"block on physical positions {positions} mixes global qubits: swap them first")
        operator = K.take(operator, list(_sliced_diagonal_index(len(positions), fixed)), axis=0)
        if not local:
            return shard * operator
    placement = place(local, num_qubits - k, lead=lead, diagonal=block.diagonal,
                      max_ndim=K.capabilities.max_ndim)
    if block.diagonal and placement.kind != "diagonal":
        operator = K.diag(operator)
    return apply_placed(K, shard, operator, placement)


class ShardedState:
    """This rank's shard of a ``num_qubits`` state vector spread over ``comm``'s ranks.

    Attributes
    ----------
    shard : array
        ``(2^(n-k),)`` amplitudes of this rank (its global bits: the rank).
    layout : tuple of int
        ``layout[p]``: the qubit at physical position ``p`` (the first ``k`` global).
    exchanges, bytes_sent : int
        Exchanges this rank took part in and the bytes it sent, since the sweep began.
    """

    def __init__(self, K: ArrayBackend, comm: Communicator, num_qubits: int, shard: Any,
                 layout: Sequence[int]) -> None:
        self.K, self.comm, self.num_qubits = K, comm, num_qubits
        self.global_count = global_count_of(comm.size)
        self.rank = comm.rank
        self.shard = shard
        self.layout = tuple(layout)
        self.exchanges = 0
        self.bytes_sent = 0

    @property
    def local_count(self) -> int:
        return self.num_qubits - self.global_count

    # -- moving qubits between ranks ------------------------------------------------------
    def fetch(self, array: Any, partner: int) -> Any:
        """``partner``'s array of the same shape (an exchange, counted)."""
        K = self.K
        outgoing = array if self.comm.name == "torch" and K.name == "pytorch" else K.to_numpy(array)
        self.exchanges += 1
        self.bytes_sent += int(np.prod(K.shape(array))) * (16 if K.precision == "complex128" else 8)
        return K.asarray(self.comm.exchange(outgoing, partner))

    def swap(self, array: Any, swap: Swap, lead: int = 1) -> Any:
        """``array`` (this rank's shard, or ``lead`` stacked) after the qubits at ``swap``'s global
        and local positions trade places: the half whose local bit differs from the rank's
        global bit goes to the partner rank, whose half comes back in its place."""
        K, k, local = self.K, self.global_count, self.local_count
        bit = rank_bit(self.rank, k, swap.global_position)
        partner = self.rank ^ (1 << (k - 1 - swap.global_position))
        before = swap.local_position - k
        view = K.reshape(array, (lead, 2 ** before, 2, 2 ** (local - before - 1)))
        kept, sent = view[:, :, bit:bit + 1, :], view[:, :, 1 - bit:2 - bit, :]
        received = self.fetch(sent, partner)
        halves = [kept, received] if bit == 0 else [received, kept]
        return K.reshape(K.concatenate(halves, axis=2), K.shape(array))

    def apply_swap(self, swap: Swap) -> None:
        """Swap the shard's qubits (:meth:`swap`) and update the layout."""
        self.shard = self.swap(self.shard, swap)
        layout = list(self.layout)
        layout[swap.global_position], layout[swap.local_position] = \
            layout[swap.local_position], layout[swap.global_position]
        self.layout = tuple(layout)

    def canonical(self) -> ShardedState:
        """The same state with qubit ``q`` at position ``q`` (rank-major amplitude order, as one
        process holds it): swaps for the global positions, then one local transpose."""
        k, n = self.global_count, self.num_qubits
        for g in range(k):
            if self.layout[g] == g:
                continue
            where = self.layout.index(g)
            if where < k:  # at a later global position: through a local one
                self.apply_swap(Swap(where, k))
                where = k
            self.apply_swap(Swap(g, where))
        if self.layout != tuple(range(n)):
            K = self.K
            axes = [self.layout.index(q) - k for q in range(k, n)]
            self.shard = K.reshape(K.transpose(K.reshape(self.shard, (2,) * (n - k)), axes), (-1,))
            self.layout = tuple(range(n))
        return self

    # -- results --------------------------------------------------------------------------
    def _physical(self, string: str) -> str:
        return "".join(string[q] for q in self.layout)

    def _flip_groups(self, strings: Sequence[str]) -> dict[int, list[tuple[int, str]]]:
        """Strings in physical order, grouped by the global qubits they flip (as a rank mask)."""
        k = self.global_count
        groups: dict[int, list[tuple[int, str]]] = {}
        for index, string in enumerate(strings):
            physical = self._physical(string)
            mask = sum(1 << (k - 1 - p) for p in range(k) if physical[p] in "XY")
            groups.setdefault(mask, []).append((index, physical))
        return groups

    def _global_factor(self, letters: str, source: int) -> complex:
        """The phase the global letters give the amplitudes that come from rank ``source``."""
        factor = 1.0 + 0j
        for position, letter in enumerate(letters):
            bit = rank_bit(source, self.global_count, position)
            if letter == "Z":
                factor *= -1 if bit else 1
            elif letter == "Y":
                factor *= -1j if bit else 1j
        return factor

    def pauli_values(self, strings: Sequence[str]) -> np.ndarray:
        """``<psi|P|psi>`` (real) of every Pauli string: local partial sums, one all-reduce.

        Examples
        --------
        >>> import tyxonq as tq
        >>> from tyxonq.numerics.distributed import SingleProcess
        >>> K = tq.get_backend("numpy")
        >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1))]
        >>> sharded_sweep(K, SingleProcess(), 2, ops).pauli_values(["ZZ", "XX", "ZI"]).round(12).tolist()
        [1.0, 1.0, 0.0]
        """
        K, k = self.K, self.global_count
        partial = np.zeros(len(strings), dtype=complex)
        bra = K.conj(self.shard)
        for mask, members in self._flip_groups(strings).items():
            other = self.shard if mask == 0 else self.fetch(self.shard, self.rank ^ mask)
            for index, physical in members:
                applied = apply_pauli_string(K, other, physical[k:])
                value = K.to_numpy(K.sum(bra * applied))
                partial[index] = self._global_factor(physical[:k], self.rank ^ mask) * complex(value)
        return np.real(self.comm.all_reduce_sum(partial))

    def apply_pauli_sum(self, hamiltonian: PauliSum) -> Any:
        """This rank's shard of ``H|psi>``: the terms grouped by the global qubits they flip, each
        group one local sum applied to the shard of the rank it maps this one to."""
        terms = [(coefficient, string) for coefficient, string in hamiltonian]
        k = self.global_count
        groups = self._flip_groups([string for _, string in terms])
        result = None
        for mask, members in groups.items():
            other = self.shard if mask == 0 else self.fetch(self.shard, self.rank ^ mask)
            local = tuple((complex(terms[index][0]) * self._global_factor(physical[:k], self.rank ^ mask),
                           physical[k:]) for index, physical in members)
            applied = apply_pauli_sum(self.K, other, _local_sum(local, self.local_count))
            result = applied if result is None else result + applied
        return result

    def expectation(self, hamiltonian: PauliSum) -> float:
        """``<psi|H|psi>`` (real part) of a Pauli sum."""
        K = self.K
        lam = self.apply_pauli_sum(hamiltonian)
        partial = complex(K.to_numpy(K.sum(K.conj(self.shard) * lam)))
        return float(np.real(self.comm.all_reduce_sum(np.array([partial]))[0]))

    def marginal(self, qubits: Sequence[int]) -> np.ndarray:
        """The probabilities of ``qubits``' bits (qubit ``qubits[0]`` most significant): each rank
        sums its amplitudes' weights over the other local qubits, then one all-reduce."""
        K, k, local_count = self.K, self.global_count, self.local_count
        positions = [self.layout.index(q) for q in qubits]
        weights = K.reshape(K.real(K.conj(self.shard) * self.shard), (2,) * local_count)
        local_axes = [p - k for p in positions if p >= k]
        summed = tuple(a for a in range(local_count) if a not in local_axes)
        reduced = K.sum(weights, axis=summed) if summed else weights
        order = sorted(local_axes)
        reduced = K.transpose(reduced, [order.index(a) for a in local_axes]) if local_axes else reduced
        full = np.zeros((2,) * len(qubits))
        index = tuple(rank_bit(self.rank, k, p) if p < k else slice(None) for p in positions)
        full[index] = np.asarray(K.to_numpy(reduced))
        return self.comm.all_reduce_sum(full.reshape(-1))

    def amplitude(self, bits: Sequence[int]) -> complex:
        """``<bits|psi>`` (``bits[q]`` the bit of qubit ``q``): read by the rank that holds it."""
        k, local_count = self.global_count, self.local_count
        physical = [bits[q] for q in self.layout]
        owner = int("".join(map(str, physical[:k])) or "0", 2)
        value = np.zeros(1, dtype=complex)
        if owner == self.rank:
            index = int("".join(map(str, physical[k:])) or "0", 2) if local_count else 0
            value[0] = complex(self.K.to_numpy(self.shard[index]))
        return complex(self.comm.all_reduce_sum(value)[0])

    def sample_indices(self, shots: int, seed: int | None) -> np.ndarray:
        """``shots`` basis indices drawn with the one-process sampler's uniforms for ``seed``
        (``K.choice`` inverts the CDF of the same uniforms): each rank resolves the draws that
        fall in its share of the cumulative weight, one all-reduce joins them."""
        K = self.K
        self.canonical()
        weights = np.asarray(K.to_numpy(K.real(K.conj(self.shard) * self.shard)), dtype=np.float64)
        weights = (weights + np.abs(weights)) / 2
        cumulative = np.cumsum(weights)
        totals = self.comm.all_gather(cumulative[-1:])[:, 0]
        offset = float(np.sum(totals[:self.rank]))
        uniforms = np.asarray(K.to_numpy(K.uniform(0.0, 1.0, shots, dtype="float64", rng=K.rng(seed))))
        targets = uniforms * float(np.sum(totals))
        mine = (targets >= offset) & (targets < offset + totals[self.rank])
        if self.rank == self.comm.size - 1:
            mine |= targets >= offset + totals[self.rank]
        drawn = np.zeros(shots)
        found = np.searchsorted(cumulative, targets[mine] - offset, side="right")
        local = np.minimum(found, weights.size - 1)
        drawn[mine] = local + self.rank * weights.size
        return self.comm.all_reduce_sum(drawn).astype(np.int64)

    def gather(self) -> Any:
        """The whole state in qubit order, on every rank (for checks and small states)."""
        self.canonical()
        K = self.K
        return K.asarray(self.comm.all_gather(K.to_numpy(self.shard)).reshape(-1))


_LOCAL_SUMS: OrderedDict = OrderedDict()


def _local_sum(terms: tuple, local_count: int) -> PauliSum:
    """The kept :class:`PauliSum` of a group's local terms (its bound form and sparse product
    are kept on it, so a repeated energy reuses them)."""
    key = (terms, local_count)
    found = _LOCAL_SUMS.get(key)
    if found is None:
        found = _LOCAL_SUMS[key] = PauliSum(list(terms), n_qubits=local_count)
        if len(_LOCAL_SUMS) > 64:
            _LOCAL_SUMS.popitem(last=False)
    return found


def initial_shard(K: ArrayBackend, plan: ShardPlan, rank: int, inputs: Any) -> Any:
    """This rank's shard of the input state (``None``: ``|0...0>``, which only rank 0 holds)."""
    local = 2 ** (plan.num_qubits - plan.global_count)
    if inputs is None:
        first = K.ones((1,), K.dtype) if rank == 0 else K.zeros((1,), K.dtype)
        return K.concatenate([first, K.zeros((local - 1,), K.dtype)])
    return K.reshape(K.asarray(inputs), (-1,))[rank * local:(rank + 1) * local]


def sharded_sweep(K: ArrayBackend, comm: Communicator, num_qubits: int, operations: Sequence[Operation],
                  inputs: Any = None) -> ShardedState:
    """A circuit's state, sharded over ``comm``'s ranks (a power of two), by the blocks and swaps
    of its :func:`~tyxonq.circuit.statevector.shard_plan.shard_plan` (``inputs``: the input state
    vector in qubit order, ``None`` for ``|0...0>``).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> K = tq.get_backend("numpy")
    >>> state = sharded_sweep(K, SingleProcess(), 1, [Operation("x", (0,))])
    >>> state.gather().real.tolist()
    [0.0, 1.0]
    """
    program = sweep_program(num_qubits, operations, K.capabilities.max_ndim)
    plan = shard_plan(program, global_count_of(comm.size), fixed=inputs is not None)
    operators = block_operators(K, program, bind_matrices(K, operations))
    state = ShardedState(K, comm, num_qubits, initial_shard(K, plan, comm.rank, inputs), plan.initial)
    run_plan(state, plan, program, operators)
    return state


def run_plan(state: ShardedState, plan: ShardPlan, program: Any, operators: Sequence[Any]) -> None:
    """Every step of ``plan`` on ``state``'s shard."""
    for step in plan.steps:
        if isinstance(step, Swap):
            state.apply_swap(step)
        else:
            assert isinstance(step, BlockStep)
            state.shard = apply_sharded_block(state.K, state.shard, operators[step.index],
                                              program.blocks[step.index], step.positions, state.rank,
                                              state.global_count, state.num_qubits)
    state.layout = plan.final
