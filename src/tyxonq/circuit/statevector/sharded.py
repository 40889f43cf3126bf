"""A state vector sharded across the ranks of a distributed run, and its results without gathering it.

``2^k`` ranks each hold ``2^(n-k)`` amplitudes: the qubits at the ``k`` global physical positions
index the rank (:mod:`~tyxonq.circuit.statevector.shard_plan`). A sweep runs the blocks of the
one-process :class:`~tyxonq.circuit.statevector.sweep.SweepProgram` on each rank's shard (the same
placements, on an ``n-k`` qubit register; a diagonal block on global qubits takes the slice of its
diagonal that the rank's bits select) and the plan's swaps exchange half of each shard with the
rank across the swapped global qubit (:meth:`~tyxonq.numerics.distributed.Communicator.exchange`).
Where the backend updates pieces of an array (NumPy and PyTorch in place, JAX into a donated
buffer), blocks, swaps and readouts go chunk by chunk (:mod:`tyxonq.numerics.chunks`): a rank
holds its shard and a few cache-sized chunks.

Results come from local partial sums and one collective: Pauli strings and sums (a string that
flips global qubits reads the shard of the rank it maps this one to: one exchange per distinct
global flip, whatever the number of strings), marginal probabilities, amplitudes, and samples
drawn by inverse CDF over the ranks' cumulative weights from the uniforms the one-process sampler
draws with the same seed (so the samples are those of one process). Every rank returns the same
result; ``exchanges`` and ``bytes_sent`` count what this rank sent.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ...numerics.chunks import chunk_amplitudes, contiguous_chunks, read_in_chunks, update_in_chunks
from ...numerics.distributed import Communicator
from ...numerics.progress import progress
from ...numerics.protocol import ArrayBackend
from ...operators.pauli import PauliSum
from ...operators.streamed_strings import applied_in_chunks, source_phase
from ..operations.operation import Operation
from .adjoint import transition_on
from .placement import _bit_order_index, apply_placed, place
from .shard_plan import BlockStep, ShardPlan, Swap, global_count_of, shard_plan
from .sweep import SweepBlock, bind_matrices, block_operators, sweep_program

__all__ = ["ShardedState", "sharded_sweep", "apply_sharded_block", "rank_bit", "shard_transition",
           "chunked_inner"]


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
                        adjoint: bool = False) -> Any:
    """A sweep block's operator (or its adjoint) on a rank's shard, its qubits at physical
    ``positions``: a diagonal block sliced by the rank's global bits, any
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
        if not local:  # one factor for the whole shard
            return update_in_chunks(K, shard, (), num_qubits - k, lambda chunk, _: chunk * operator)
    max_ndim = K.capabilities.max_ndim
    diagonal = block.diagonal and \
        place(local, num_qubits - k, diagonal=True, max_ndim=max_ndim).kind == "diagonal"
    if block.diagonal and not diagonal:  # past max_ndim: the full matrix
        operator = K.diag(operator)

    def update(chunk: Any, cut: Any) -> Any:  # the block on one chunk (or the whole shard)
        return apply_placed(K, chunk, operator, place(cut.qubits, cut.chunk_qubits, diagonal=diagonal,
                                                       max_ndim=max_ndim))

    return update_in_chunks(K, shard, local, num_qubits - k, update)


def shard_transition(K: ArrayBackend, psi: Any, lam: Any, diagonal: bool, positions: tuple[int, ...],
                     rank: int, k: int, n: int) -> Any:
    """This rank's part of ``X = Tr_rest |psi_B><lambda_B|`` for a block whose qubits (in its
    order) sit at physical ``positions`` (only the diagonal of ``X`` for a ``diagonal`` block):
    summed over its local qubits chunk by chunk, placed at the entries its global bits select
    (diagonal blocks; others are local). With ``lam = psi``: the reduced density matrix."""
    local = [(i, p - k) for i, p in enumerate(positions) if p >= k]
    fixed = tuple((i, rank_bit(rank, k, p)) for i, p in enumerate(positions) if p < k)
    max_ndim = K.capabilities.max_ndim
    if not local:
        partial = K.reshape(chunked_inner(K, lam, psi), (1,))
    else:
        qubits = tuple(q for _, q in local)
        ordered = tuple(sorted(qubits))
        partial = sum(transition_on(K, psi_part, lam_part, cut.qubits, diagonal, cut.chunk_qubits,
                                    max_ndim)
                      for (psi_part, lam_part), cut in read_in_chunks(K, [psi, lam], ordered, n - k))
        if ordered != qubits:  # rows (and columns) from ascending local order to the block's
            index = list(_bit_order_index(tuple(ordered.index(q) for q in qubits), len(qubits)))
            partial = K.take(partial, index, axis=0)
            if not diagonal:
                partial = K.take(partial, index, axis=1)
    if not fixed:
        return partial
    # a diagonal block on global qubits: this rank's entries, zeros elsewhere
    size = len(positions)
    selected = _sliced_diagonal_index(size, fixed)
    where = {entry: i for i, entry in enumerate(selected)}
    gather = [where.get(entry, len(selected)) for entry in range(2 ** size)]
    return K.take(K.concatenate([partial, K.zeros((1,), K.dtype_of(partial))]), gather, axis=0)


def chunked_inner(K: ArrayBackend, bra: Any, ket: Any) -> Any:
    """``<bra|ket>`` added up chunk by chunk (no temporary as large as the shard)."""
    parts = read_in_chunks(K, [bra, ket], (), K.shape(bra)[0].bit_length() - 1)
    return sum(K.sum(K.conj(bra_part) * ket_part) for (bra_part, ket_part), _ in parts)


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
    def fetch(self, array: Any, partner: int, counted: bool = True) -> Any:
        """``partner``'s array of the same shape (bytes counted; an exchange counted unless it
        is a later piece of one)."""
        K = self.K
        outgoing = array if self.comm.name == "torch" and K.name == "pytorch" else K.to_numpy(array)
        self.exchanges += int(counted)
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
        if K.updates_in_pieces(array):  # piece by piece, in place: no second shard
            rows, columns = 2 ** before, 2 ** (local - before - 1)
            view = (rows, 2, columns)
            step = max(1, chunk_amplitudes() // columns)
            pieces = [((start, 1 - bit, 0), (min(step, rows - start), 1, columns))
                      for start in range(0, rows, step)] if columns <= chunk_amplitudes() \
                else [((row, 1 - bit, part.start), (1, 1, part.stop - part.start))
                      for row in range(rows) for part in contiguous_chunks(columns)]
            for number, (starts, sizes) in enumerate(pieces):
                received = self.fetch(K.read_piece(array, view, starts, sizes), partner, counted=number == 0)
                array = K.write_piece(array, view, starts, received)
            return array
        view = K.reshape(array, (2 ** before, 2, 2 ** (local - before - 1)))
        kept, sent = view[:, bit:bit + 1, :], view[:, 1 - bit:2 - bit, :]
        received = self.fetch(sent, partner)
        halves = [kept, received] if bit == 0 else [received, kept]
        return K.reshape(K.concatenate(halves, axis=1), K.shape(array))

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

    def _partner_chunks(self, mask: int) -> Iterator[Any]:
        """The chunks of the shard of rank ``rank ^ mask`` (this rank's own for ``mask == 0``),
        in order, fetched one by one (this rank sends its own in return)."""
        for number, part in enumerate(contiguous_chunks(2 ** self.local_count)):
            own = self.shard[part]
            yield own if mask == 0 else self.fetch(own, self.rank ^ mask, counted=number == 0)

    def _applied_strings(self, strings: Sequence[str]) -> Iterator[tuple[int, int, complex, Any]]:
        """This rank's share of every ``P|psi>``, chunk by chunk: ``(index, target, factor,
        applied)`` with ``factor * applied`` a part of ``P_index|psi>`` in this rank's chunk
        ``target`` (:func:`~tyxonq.operators.streamed_strings.applied_in_chunks` on the chunks of
        the rank the amplitudes come from, whose bits give the global letters' phase)."""
        k = self.global_count
        count = len(contiguous_chunks(2 ** self.local_count))
        for mask, members in self._flip_groups(strings).items():
            phases = [source_phase(physical[:k], self.rank ^ mask) for _, physical in members]
            local = [physical[k:] for _, physical in members]
            found = applied_in_chunks(self.K, self._partner_chunks(mask), local, count)
            for member, target, factor, applied in found:
                yield members[member][0], target, phases[member] * factor, applied

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
        K = self.K
        parts = contiguous_chunks(2 ** self.local_count)
        partial = np.zeros(len(strings), dtype=complex)
        for index, target, factor, applied in self._applied_strings(strings):
            partial[index] += factor * complex(K.to_numpy(K.sum(K.conj(self.shard[parts[target]]) * applied)))
        return np.real(self.comm.all_reduce_sum(partial))

    def apply_pauli_sum(self, hamiltonian: PauliSum) -> Any:
        """This rank's shard of ``H|psi>``, added up chunk by chunk (piece by piece where the
        backend updates pieces: the shard and a few chunks, no per-term arrays)."""
        K = self.K
        coefficients = [complex(coefficient) for coefficient, _ in hamiltonian]
        size = 2 ** self.local_count
        parts = contiguous_chunks(size)
        result = K.zeros((size,), K.dtype_of(self.shard))
        in_place = K.updates_in_pieces(result)
        pending: list[Any] = [None] * len(parts)
        for index, target, factor, applied in self._applied_strings([string for _, string in hamiltonian]):
            contribution = applied * (coefficients[index] * factor)
            if in_place:
                start, width = (parts[target].start,), (parts[target].stop - parts[target].start,)
                piece = K.read_piece(result, (size,), start, width)
                if K.writes_in_place(result):  # a view: added into, no temporary
                    piece += contribution
                else:
                    result = K.write_piece(result, (size,), start, piece + contribution)
            else:
                pending[target] = contribution if pending[target] is None else pending[target] + contribution
        return result if in_place or pending[0] is None else K.concatenate(pending)

    def expectation(self, hamiltonian: PauliSum) -> float:
        """``<psi|H|psi>`` (real part) of a Pauli sum: its strings' values weighted (``H|psi>``
        is never formed)."""
        weights = np.real(np.array([complex(coefficient) for coefficient, _ in hamiltonian]))
        return float(weights @ self.pauli_values([string for _, string in hamiltonian]))

    def marginal(self, qubits: Sequence[int]) -> np.ndarray:
        """The probabilities of ``qubits``' bits (qubit ``qubits[0]`` most significant): each rank
        sums its amplitudes' weights over the other local qubits, chunk by chunk, then one
        all-reduce."""
        K, k = self.K, self.global_count
        parts = contiguous_chunks(2 ** self.local_count)
        high = (len(parts) - 1).bit_length()
        low = self.local_count - high
        positions = [self.layout.index(q) for q in qubits]
        axes = [p - k - high for p in positions if p >= k + high]  # marginal axes within a chunk
        summed = tuple(a for a in range(low) if a not in axes)
        order = sorted(axes)
        full = np.zeros((2,) * len(qubits))
        for chunk, part in enumerate(parts):
            piece = self.shard[part]
            weights = K.reshape(K.real(K.conj(piece) * piece), (2,) * low)
            reduced = K.sum(weights, axis=summed) if summed else weights
            reduced = K.transpose(reduced, [order.index(a) for a in axes]) if axes else reduced
            index = tuple(rank_bit(self.rank, k, p) if p < k else rank_bit(chunk, high, p - k) if p < k + high
                          else slice(None) for p in positions)
            full[index] += np.asarray(K.to_numpy(reduced))
        return self.comm.all_reduce_sum(full.reshape(-1))

    def make_local(self, qubits: Sequence[int]) -> None:
        """Swap every one of ``qubits`` at a global position with a local position that holds
        none of them (a ``ValueError`` where they are more than the local qubits)."""
        k = self.global_count
        if len(set(qubits)) > self.local_count:
            raise ValueError(f"{len(set(qubits))} qubits do not fit the {self.local_count} local qubits of "
                             f"{self.comm.size} ranks: use fewer ranks")
        for q in qubits:
            where = self.layout.index(q)
            if where < k:
                victim = max(p for p in range(k, self.num_qubits) if self.layout[p] not in qubits)
                self.apply_swap(Swap(where, victim))

    def operator_value(self, matrices: Sequence[Any], groups: Sequence[Sequence[int]]) -> complex:
        """``<psi|O_1 ... O_m|psi>`` of matrices on disjoint qubit groups (``matrices[i]`` on
        ``groups[i]``): the groups' qubits made local (:meth:`make_local`), then chunk by chunk,
        one all-reduce."""
        K, k = self.K, self.global_count
        self.make_local([q for group in groups for q in group])
        positions = {q: self.layout.index(q) - k for group in groups for q in group}
        held = tuple(sorted(positions.values()))
        total = 0.0 + 0j
        for (piece,), cut in read_in_chunks(K, [self.shard], held, self.local_count):
            inner = dict(zip(held, cut.qubits))
            applied = piece
            for matrix, group in zip(matrices, groups):
                where = tuple(inner[positions[q]] for q in group)
                applied = apply_placed(K, applied, matrix, place(where, cut.chunk_qubits,
                                                                 max_ndim=K.capabilities.max_ndim))
            total += complex(K.to_numpy(K.sum(K.conj(piece) * applied)))
        return complex(self.comm.all_reduce_sum(np.array([total]))[0])

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


def initial_shard(K: ArrayBackend, plan: ShardPlan, rank: int, inputs: Any) -> Any:
    """This rank's shard of the input state (``None``: ``|0...0>``, which only rank 0 holds)."""
    local = 2 ** (plan.num_qubits - plan.global_count)
    if inputs is None:
        shard = K.zeros((local,), K.dtype)
        if rank == 0 and K.updates_in_pieces(shard):  # no second shard-sized array
            shard = K.write_piece(shard, (local,), (0,), K.ones((1,), K.dtype))
        elif rank == 0:
            shard = K.concatenate([K.ones((1,), K.dtype), shard[1:]])
        return shard
    # a copy (concatenated), never a view of the caller's array: shards are updated in place
    return K.concatenate([K.reshape(K.asarray(inputs), (-1,))[rank * local:(rank + 1) * local]])


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


def run_plan(state: ShardedState, plan: ShardPlan, program: Any, operators: Sequence[Any],
             other: Callable[[ShardedState, Any, tuple[int, ...], Any], None] | None = None) -> None:
    """Every step of ``plan`` on ``state``'s shard: a :class:`SweepBlock` applied with its
    operator, any other block of ``program`` (a channel) by ``other(state, block, positions,
    operators[index])``; a progress bar (rank 0) counts the steps."""
    swaps = 0
    with progress(len(plan.steps), "sharded state: blocks and swaps", unit="step") as report:
        for step in plan.steps:
            if isinstance(step, Swap):
                state.apply_swap(step)
                swaps += 1
                report.advance(swaps=swaps)
                continue
            assert isinstance(step, BlockStep)
            block, operator = program.blocks[step.index], operators[step.index]
            if isinstance(block, SweepBlock):
                state.shard = apply_sharded_block(state.K, state.shard, operator, block, step.positions,
                                                  state.rank, state.global_count, state.num_qubits)
            else:
                assert other is not None, f"no way given to apply {block}"
                other(state, block, step.positions, operator)
            report.advance(swaps=swaps)
    state.layout = plan.final
