"""Circuit-aware path finding: the cheaper of opt_einsum's greedy path and a growing-tensor path.

Greedy pairwise contraction suits closed, shallow networks (amplitudes, light cones) but can
build intermediates far larger than the result on dense-state networks (measured: a 22-qubit,
10-layer state peaked at 17 GiB for a 64 MiB state). A *growing* path keeps one accumulated
tensor and always absorbs the neighbour that keeps it smallest; for a circuit this is state-vector
simulation, whose largest tensor is about the state itself. Both paths are costed as flops plus
64 x elements written (memory traffic dominates on CPUs) and the cheaper one is used.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

import opt_einsum

__all__ = ["circuit_path", "growing_path", "path_cost"]

WRITE_WEIGHT = 64


def path_cost(inputs: Sequence[set], output: set, size_dict: dict,
              path: Sequence[Sequence[int]]) -> float:
    """``flops + 64 x elements written`` of a linear-format path (pairwise steps)."""
    legs = [frozenset(x) for x in inputs]
    counts = Counter(leg for term in legs for leg in term)
    keep = frozenset(output)
    cost = 0.0
    for step in path:
        chosen = [legs[i] for i in step]
        for i in sorted(step, reverse=True):
            legs.pop(i)
        merged = chosen[0]
        for other in chosen[1:]:
            union = merged | other
            for leg in merged:
                counts[leg] -= 1
            for leg in other:
                counts[leg] -= 1
            result = frozenset(leg for leg in union if leg in keep or counts[leg] > 0)
            cost += math.prod(size_dict[leg] for leg in union)
            cost += WRITE_WEIGHT * math.prod(size_dict[leg] for leg in result)
            for leg in result:
                counts[leg] += 1
            merged = result
        legs.append(merged)
    return cost


def growing_path(inputs: Sequence[set], output: set, size_dict: dict,
                 memory_limit: Any = None) -> list[tuple[int, int]]:
    """Grow one tensor from the first input, absorbing the neighbour that keeps it smallest.

    Examples
    --------
    >>> growing_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    remaining = [frozenset(x) for x in inputs]
    if len(remaining) < 2:
        return []
    keep = frozenset(output)
    counts = Counter(leg for term in remaining for leg in term)
    accumulator = remaining.pop(0)
    path: list[tuple[int, int]] = []
    first = True
    while remaining:
        best, best_key = 0, None
        for position, legs in enumerate(remaining):
            union = accumulator | legs
            shared = accumulator & legs
            result = [leg for leg in union
                      if leg in keep or counts[leg] - (leg in accumulator) - (leg in legs) > 0]
            key = (not shared, math.prod(size_dict[leg] for leg in result))
            if best_key is None or key < best_key:
                best, best_key = position, key
        accumulator_index = 0 if first else len(remaining)
        path.append((accumulator_index, best + 1) if first else (best, accumulator_index))
        legs = remaining.pop(best)
        for leg in accumulator:
            counts[leg] -= 1
        for leg in legs:
            counts[leg] -= 1
        accumulator = frozenset(leg for leg in accumulator | legs if leg in keep or counts[leg] > 0)
        for leg in accumulator:
            counts[leg] += 1
        first = False
    return path


def circuit_path(inputs: Sequence[set], output: set, size_dict: dict,
                 memory_limit: Any = None) -> list[tuple[int, ...]]:
    """The cheaper of opt_einsum's greedy path and :func:`growing_path` (flops + 64 x writes)."""
    greedy = [tuple(step) for step in opt_einsum.paths.greedy(inputs, output, size_dict, memory_limit)]
    growing = growing_path(inputs, output, size_dict)
    if path_cost(inputs, output, size_dict, growing) < path_cost(inputs, output, size_dict, greedy):
        return growing
    return greedy
