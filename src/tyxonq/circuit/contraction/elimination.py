"""Contraction paths by variable elimination in min-fill order.

Summing out the legs (indices) of a network one at a time, each by contracting every tensor that
holds it, is a contraction path whose largest intermediate is set by the elimination order (the
order's induced width). The min-fill heuristic -- eliminate next the leg whose neighbours in the
leg graph are closest to a clique -- finds good orders for the tree-like, locally connected networks
circuits make: the light cones of QAOA terms on regular graphs plan two to eight times narrower
than a greedy pairwise path, in milliseconds. A few trials with random tie-breaking (seeded, so
plans are reproducible) add a little more. Legs are bits
(:class:`~tyxonq.circuit.contraction.leg_masks.LegMasks`): the leg graph, the fill counts and the
contractions' surviving legs are integer operations.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Sequence

from .leg_masks import LegMasks
from .simplify import ssa_to_linear

__all__ = ["elimination_path", "ELIMINATION_MAX_LEGS"]

#: Networks with more legs are left to the other finders (min-fill bookkeeping is quadratic in
#: a leg's neighbourhood, and such networks are whole states, where it is not better).
ELIMINATION_MAX_LEGS = 600


def _edges_among_neighbours(adjacency: list[int], leg: int) -> int:
    """Edges between ``leg``'s neighbours (on bit masks: each counted from both ends)."""
    neighbours = adjacency[leg]
    total, rest = 0, neighbours
    while rest:
        low = rest & -rest
        rest ^= low
        total += (neighbours & adjacency[low.bit_length() - 1]).bit_count()
    return total // 2


def _score(degree: int, edges: int) -> tuple[int, int]:
    """A leg's min-fill score: the pairs of its neighbours that are not neighbours of each other
    (the fill its elimination adds), then its degree."""
    return degree * (degree - 1) // 2 - edges, degree


def _bits(mask: int) -> list[int]:
    """The positions of a mask's set bits, ascending."""
    positions = []
    while mask:
        low = mask & -mask
        mask ^= low
        positions.append(low.bit_length() - 1)
    return positions


def elimination_path(inputs: Sequence[set], output: set, size_dict: dict, trials: int = 8,
                     seed: int = 0) -> list[tuple[int, ...]]:
    """The cheapest (by contracted sizes) of ``trials`` min-fill elimination paths, in
    opt_einsum's linear format; ties in the first trial go to the lowest leg, later trials break
    them at random (seeded).

    Examples
    --------
    >>> elimination_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    best, best_cost = None, math.inf
    generator = random.Random(seed)
    start = _Start(inputs, output, size_dict)
    for trial in range(trials):
        path, cost = _one_elimination(start, generator if trial else None)
        if cost < best_cost:
            best, best_cost = path, cost
    return best or []


class _Start:
    """What every trial starts from (the leg graph and its fill scores), made once."""

    def __init__(self, inputs: Sequence[set], output: set, size_dict: dict) -> None:
        self.count = len(inputs)
        masks = LegMasks(inputs, output, size_dict)  # leg i is bit i, legs in sorted (str) order
        self.keep, self.size, self.counts = masks.output, masks.size, list(masks.counts)
        self.legs = dict(enumerate(masks.masks))
        self.holders: dict[int, set[int]] = {}
        self.adjacency = [0] * len(self.counts)
        for i, term in self.legs.items():
            for leg in _bits(term):
                self.holders.setdefault(leg, set()).add(i)
                self.adjacency[leg] |= term & ~(1 << leg)
        self.held_once, self.held_twice = masks.held_by(1), masks.held_by(2)
        self.edges = [_edges_among_neighbours(self.adjacency, leg) for leg in range(len(self.counts))]
        self.scores = {leg: _score(self.adjacency[leg].bit_count(), self.edges[leg])
                       for leg in self.holders if not self.keep >> leg & 1}


def _one_elimination(start: _Start, generator: random.Random | None) -> tuple[list[tuple[int, ...]], float]:
    keep, size, counts = start.keep, start.size, list(start.counts)
    legs = dict(start.legs)
    holders = {leg: set(tensors) for leg, tensors in start.holders.items()}
    adjacency, edges = list(start.adjacency), list(start.edges)
    held_once, held_twice = start.held_once, start.held_twice  # summed when one / both operands hold them
    scores = dict(start.scores)
    next_id, ssa, cost = len(legs), [], 0.0

    def surviving(a: int, b: int) -> int:
        first, second = legs[a], legs[b]
        shared = first & second
        return (first | second) & ~((shared & held_twice) | ((first ^ second) & held_once))

    def contract(a: int, b: int) -> int:
        nonlocal next_id, cost, held_once, held_twice
        union, result = legs[a] | legs[b], surviving(a, b)
        for tensor in (a, b):
            for leg in _bits(legs.pop(tensor)):
                holders[leg].discard(tensor)
        for leg in _bits(union):  # holders counted again: the result holds what survives
            counts[leg] = len(holders[leg]) + (result >> leg & 1)
            bit = 1 << leg
            if not keep & bit:
                held_once = held_once | bit if counts[leg] == 1 else held_once & ~bit
                held_twice = held_twice | bit if counts[leg] == 2 else held_twice & ~bit
        cost += size(union) + 64 * size(result)
        legs[next_id] = result
        for leg in _bits(result):
            holders[leg].add(next_id)
        ssa.append((a, b))
        next_id += 1
        return next_id - 1

    while scores:
        lowest = min(scores.values())
        tied = [leg for leg, score in scores.items() if score == lowest]
        leg = min(tied) if generator is None else generator.choice(sorted(tied))
        group = sorted(holders.get(leg, ()))
        while len(group) > 1:  # the smallest result first
            a, b = min(itertools.combinations(group, 2),
                       key=lambda pair: (surviving(*pair).bit_count(), pair))
            group = [g for g in group if g not in (a, b)] + [contract(a, b)]
        neighbours = adjacency[leg]
        adjacency[leg] = 0
        del scores[leg]
        members = _bits(neighbours)
        for other in members:  # the leg leaves: so do its edges to other's neighbours
            edges[other] -= (adjacency[other] & neighbours).bit_count()
            adjacency[other] &= ~(1 << leg)
        changed = neighbours
        for i, a in enumerate(members):  # the neighbours become a clique, one new edge at a time
            for b in members[i + 1:]:
                if adjacency[a] >> b & 1:
                    continue
                common = adjacency[a] & adjacency[b]
                for other in _bits(common):  # a and b are neighbours of other's
                    edges[other] += 1
                shared = common.bit_count()  # edges from b to a's neighbours, and from a to b's
                edges[a] += shared
                edges[b] += shared
                adjacency[a] |= 1 << b
                adjacency[b] |= 1 << a
                changed |= common
        for other in _bits(changed):
            if other in scores:
                scores[other] = _score(adjacency[other].bit_count(), edges[other])
    remaining = sorted(legs)
    while len(remaining) > 1:  # what is left shares no summed leg: outer products, or the output
        remaining.append(contract(remaining.pop(0), remaining.pop(0)))
    return ssa_to_linear(ssa, start.count), cost
