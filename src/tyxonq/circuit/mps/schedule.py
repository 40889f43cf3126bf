"""The order in which a circuit's gates reach the matrix-product state, and which of them are
applied together.

Three savings, all exact without truncation:

* one-qubit gates are not applied on their own: they wait on their qubit (multiplied together)
  and enter the next gate that touches it, as a factor of its matrix; what is left waits until
  the end;
* gates are taken in any order their qubits allow (a gate waits only for the earlier gates on its
  qubits), nearest the orthogonality centre first, so the centre moves a site or two between
  gates instead of back across the chain at every layer;
* outside ``jit``, a gate on neighbours is fused with the gates that become
  ready on an overlapping pair (at most three sites together, around bonds of at most 16): a
  brickwork's even gate on sites 2, 3 and the odd gate on sites 1, 2 that it releases are one
  three-site block, split by two SVDs, and the next block starts where this one leaves the
  centre -- no QR moves between them.

With truncation, a fused block is truncated once per bond it splits instead of after each of its
gates: the same bounds hold (every cut is optimal in the 2-norm), the cuts land elsewhere.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Sequence

from ...numerics.protocol import ArrayBackend
from .state import MPSState, _permuted

__all__ = ["apply_operations"]

#: the most sites a fused block spans
FUSED_SITES = 3
#: bonds up to which fusing pays: a three-site block's first SVD (``2D x 4D``) costs about two
#: two-site ones, which only the saved QR move and per-call overhead repay while ``D`` is small
#: (measured with every block fused: a 100-site quench, bonds <= 10, 153 -> 116 ms; a 50-qubit
#: brickwork at bond 64, 1.09 -> 1.51 s)
FUSED_BOND = 16


class _Products:
    """Gate matrices combined (one-qubit factors absorbed, gates embedded in a block and
    multiplied), each combination of the same matrices built once per simulation: a Trotter
    circuit repeats its few matrices thousands of times. Inputs are kept alive with their
    results, so their ids stay theirs."""

    def __init__(self, K: ArrayBackend) -> None:
        self.K = K
        self._made: dict[tuple, tuple[Any, tuple]] = {}

    def _memo(self, key: tuple, inputs: tuple, build: Callable[[], Any]) -> Any:
        key = key + tuple(id(x) for x in inputs)
        if key not in self._made:
            self._made[key] = (build(), inputs)
        return self._made[key][0]

    def one_qubit(self, matrices: list) -> Any:
        """The product of one qubit's waiting gates (in circuit order)."""
        K = self.K
        product = matrices[0]
        for matrix in matrices[1:]:
            product = self._memo(("times",), (matrix, product), lambda m=matrix, p=product: K.matmul(m, p))
        return product

    def absorbed(self, matrix: Any, factors: list) -> Any:
        """``matrix`` times the one-qubit factors of its qubits (``None``: none waits there)."""
        if all(factor is None for factor in factors):
            return matrix
        K = self.K

        def build() -> Any:
            before = None
            for factor in factors:
                factor = factor if factor is not None else K.eye(2, dtype=K.dtype)
                before = factor if before is None else K.kron(before, factor)
            return K.matmul(matrix, before)

        return self._memo(("absorbed", tuple(f is None for f in factors)),
                          (matrix,) + tuple(f for f in factors if f is not None), build)

    def fused(self, parts: list[tuple[Any, tuple[int, ...]]], first: int, width: int) -> Any:
        """The ``2^width`` matrix of two-qubit gates ``(matrix, qubits)`` on neighbouring sites of
        sites ``first .. first + width - 1``, applied in order."""
        K = self.K
        key = (("fused", first, width) + tuple(qubits for _, qubits in parts))

        def build() -> Any:
            total = None
            for matrix, qubits in parts:
                low = min(qubits)
                if qubits[0] > qubits[1]:  # in ascending qubit order
                    matrix = _permuted(K, matrix, [1, 0])
                before, after = low - first, first + width - low - 2
                if before:
                    matrix = K.kron(K.eye(2 ** before, dtype=K.dtype), matrix)
                if after:
                    matrix = K.kron(matrix, K.eye(2 ** after, dtype=K.dtype))
                total = matrix if total is None else K.matmul(matrix, total)
            return total

        return self._memo(key, tuple(matrix for matrix, _ in parts), build)


def _span(qubits: tuple[int, ...]) -> tuple[int, int]:
    return min(qubits), max(qubits)


def _fusable(qubits: tuple[int, ...]) -> bool:
    return len(qubits) == 2 and abs(qubits[0] - qubits[1]) == 1


def apply_operations(state: MPSState, operations: Sequence[Any],
                     matrix_of: Callable[[Any], Any]) -> None:
    """Apply ``operations`` (gates with ``.qubits``; ``matrix_of(op)`` is the gate's matrix) to
    ``state``."""
    products = _Products(state.K)
    # one-qubit gates wait for the next gate on their qubit; multi-qubit gates form a DAG
    gates: list[Any] = []
    factors: list[list] = []  # per gate and qubit: the waiting one-qubit matrices, or None
    waiting: dict[int, list] = {}
    last_on: dict[int, int] = {}
    predecessors: list[int] = []
    successors: dict[int, list[int]] = defaultdict(list)
    for op in operations:
        if len(op.qubits) == 1:
            waiting.setdefault(op.qubits[0], []).append(matrix_of(op))
            continue
        index = len(gates)
        gates.append(op)
        factors.append([products.one_qubit(waiting.pop(q)) if q in waiting else None for q in op.qubits])
        before = {last_on[q] for q in op.qubits if q in last_on}
        predecessors.append(len(before))
        for other in before:
            successors[other].append(index)
        for q in op.qubits:
            last_on[q] = index
    spans = [_span(op.qubits) for op in gates]
    fusable = [_fusable(op.qubits) for op in gates]
    ready_at: dict[int, set[int]] = defaultdict(set)  # site -> ready gates spanning it

    def release(index: int) -> None:
        low, high = spans[index]
        for site in range(low, high + 1):
            ready_at[site].add(index)

    def take(index: int) -> None:
        low, high = spans[index]
        for site in range(low, high + 1):
            ready_at[site].discard(index)

    def done(index: int) -> None:
        for after in successors.get(index, ()):
            predecessors[after] -= 1
            if predecessors[after] == 0:
                release(after)

    def partner(low: int, high: int) -> int | None:
        """The earliest ready gate on neighbours overlapping sites ``low .. high`` that keeps the
        block within :data:`FUSED_SITES` sites."""
        best = None
        for site in range(low, high + 1):
            for index in ready_at.get(site, ()):
                other_low, other_high = spans[index]
                if fusable[index] and max(high, other_high) - min(low, other_low) < FUSED_SITES \
                        and (best is None or index < best):
                    best = index
        return best

    for index, count in enumerate(predecessors):
        if count == 0:
            release(index)
    n, remaining, rightwards = state.num_sites, len(gates), True
    while remaining:
        seed = _nearest(ready_at, state.centre, n)
        take(seed)
        done(seed)
        block, (low, high) = [seed], spans[seed]
        # fusing saves per-call overhead, which a compiled program does not pay: inside jit (where
        # the splits cannot read their values) only the larger SVDs would remain (measured: the
        # 32-qubit energy + gradient under jax.jit took 22.6 ms fused, 10.4 ms not)
        fuse = (fusable[seed] and not state.truncation.blind
                and _seed_bond(state, low, high) <= FUSED_BOND)
        while fuse:  # extend by the ready gates overlapping the block
            chosen = partner(low, high)
            if chosen is None:
                break
            take(chosen)
            done(chosen)
            block.append(chosen)
            low, high = min(low, spans[chosen][0]), max(high, spans[chosen][1])
        remaining -= len(block)
        if state.centre < low:
            rightwards = True
        elif state.centre > high:
            rightwards = False
        parts = [(products.absorbed(matrix_of(gates[i]), factors[i]), gates[i].qubits) for i in block]
        if len(block) == 1:
            state.apply(parts[0][0], parts[0][1], centre_left=not rightwards)
        else:
            state.apply(products.fused(parts, low, high - low + 1), tuple(range(low, high + 1)),
                        centre_left=not rightwards)
    for q, matrices in waiting.items():
        state.apply(products.one_qubit(matrices), (q,))


def _seed_bond(state: MPSState, low: int, high: int) -> int:
    """The largest of the three bonds around a gate on neighbouring sites ``low``, ``high``."""
    K = state.K
    left, _, middle = K.shape(state.sites[low])
    return max(left, middle, K.shape(state.sites[high])[2])


def _nearest(ready_at: dict[int, set[int]], centre: int, n: int) -> int:
    """The ready gate nearest the centre (the earliest in the circuit among equals)."""
    for distance in range(n + 1):
        found = ready_at.get(centre - distance, set()) | ready_at.get(centre + distance, set())
        if found:
            return min(found)
    raise RuntimeError("no gate is ready although some remain: the schedule is inconsistent")
