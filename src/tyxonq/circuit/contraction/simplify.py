"""Rank simplification: contracting neighbours whose product is no larger than they are.

Once a network's gates have their reduced forms (:mod:`~tyxonq.circuit.contraction.tensor_forms`)
and its fixed legs are sliced out, many of its tensors are vectors on hyperindices, scalars, or
runs of two-leg tensors along a wire. Contracting a pair whose result is no larger than the larger
of the two (quimb's ``rank_simplify``) never makes the contraction costlier and leaves the path
finder a much smaller network: a run of one-qubit gates becomes one tensor, a phase vector joins
its neighbour, a ``|+>``-vector and the RZZ tensors on its wire merge.

It works on leg sets only, so it is made once per structure and becomes the first steps of the
contraction path (opt_einsum's linear format).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict

__all__ = ["rank_simplify", "ssa_to_linear"]


def ssa_to_linear(ssa: list[tuple[int, int]], count: int) -> list[tuple[int, ...]]:
    """A path of pairs of ids (inputs ``0..count-1``, each result the next id) in opt_einsum's
    linear format (positions in the shrinking list; results appended); it may leave tensors apart.

    Examples
    --------
    >>> ssa_to_linear([(1, 2), (0, 3)], 3)
    [(1, 2), (0, 1)]
    """
    alive = list(range(count))  # ids in list order: the linear format's positions
    linear: list[tuple[int, ...]] = []
    for pair in ssa:
        step = tuple(sorted(alive.index(i) for i in pair))
        for i in sorted(step, reverse=True):
            alive.pop(i)
        alive.append(count + len(linear))
        linear.append(step)
    return linear


def rank_simplify(inputs: list[set], output: set, size_dict: dict) -> list[tuple[int, int]]:
    """Merge neighbours whose result is no larger than the larger input, smallest results first;
    then every scalar into its smallest neighbour. Updates ``inputs`` in place, as opt_einsum's
    linear path format does, and returns those steps.

    Examples
    --------
    >>> inputs = [{"a"}, {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d"}]
    >>> steps = rank_simplify(inputs, set(), {leg: 2 for leg in "abcd"})
    >>> len(steps), inputs
    (4, [set()])
    """
    legs = {i: frozenset(term) for i, term in enumerate(inputs)}
    keep = frozenset(output)
    holders: dict = defaultdict(set)  # leg -> ids of the tensors that have it
    for i, term in legs.items():
        for leg in term:
            holders[leg].add(i)
    next_id = len(legs)
    ssa: list[tuple[int, int]] = []

    def size(term: frozenset) -> int:
        return math.prod(size_dict[leg] for leg in term)

    sizes = {i: size(term) for i, term in legs.items()}

    def survives(leg: str, a: int, b: int) -> bool:
        """Whether ``leg`` stays open when ``a`` and ``b`` are contracted: it is an output leg or
        another tensor holds it."""
        return leg in keep or len(held := holders[leg]) > (a in held) + (b in held)

    def merged(a: int, b: int) -> frozenset:
        return frozenset(leg for leg in legs[a] | legs[b] if survives(leg, a, b))

    def merged_size(a: int, b: int) -> int:
        """The size of :func:`merged` ``(a, b)``, without building it."""
        return math.prod(size_dict[leg] for leg in legs[a] | legs[b] if survives(leg, a, b))

    def candidates(i: int, above: int = -1) -> list[tuple[int, int, int, int]]:
        """The pairs of ``i`` and a neighbour (numbered above ``above``) worth merging."""
        found = []
        for j in set().union(*(holders[leg] for leg in legs[i])) - {i}:
            if j <= above:
                continue
            result = merged_size(i, j)
            if result <= max(sizes[i], sizes[j]):
                found.append((result, min(i, j), max(i, j), 0))
        return found

    heap = [c for i in legs for c in candidates(i, above=i)]  # each pair once
    heapq.heapify(heap)
    while heap:
        _, a, b, _ = heapq.heappop(heap)
        if a not in legs or b not in legs:
            continue
        result = merged(a, b)
        result_size = size(result)
        if result_size > max(sizes[a], sizes[b]):
            continue  # stale: a neighbour changed since this pair was queued
        for i in (a, b):
            for leg in legs.pop(i):
                holders[leg].discard(i)
        legs[next_id], sizes[next_id] = result, result_size
        for leg in result:
            holders[leg].add(next_id)
        ssa.append((a, b))
        for candidate in candidates(next_id):
            heapq.heappush(heap, candidate)
        next_id += 1
    while len(legs) > 1:
        scalar = next((i for i, term in legs.items() if not term), None)
        if scalar is None:
            break
        smallest = min((j for j in legs if j != scalar), key=lambda j: (sizes[j], j))
        legs[next_id] = legs.pop(smallest)
        sizes[next_id] = sizes[smallest]
        legs.pop(scalar)
        ssa.append((scalar, smallest))
        next_id += 1
    linear = ssa_to_linear(ssa, len(inputs))
    counts = Counter(leg for term in inputs for leg in term)  # holders among the current inputs
    for step in linear:
        terms = [inputs[i] for i in step]
        for i in sorted(step, reverse=True):
            inputs.pop(i)
        for term in terms:
            counts.subtract(term)
        result = {leg for leg in set().union(*terms) if leg in keep or counts[leg] > 0}
        counts.update(result)
        inputs.append(result)
    return linear
