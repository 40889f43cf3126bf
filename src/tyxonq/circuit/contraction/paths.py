"""Circuit-aware path finding: the cheapest of opt_einsum's greedy path, a growing-tensor path and,
for large networks, a cotengra hyper-optimised search.

Greedy pairwise contraction suits closed, shallow networks (amplitudes, light cones) but can
build intermediates far larger than the result on dense-state networks (measured: a 22-qubit,
10-layer state peaked at 17 GiB for a 64 MiB state). A *growing* path keeps one accumulated
tensor and always absorbs the neighbour that keeps it smallest; for a circuit this is state-vector
simulation, whose largest tensor is about the state itself. Both paths are costed as flops plus
64 x elements written (memory traffic dominates on CPUs) and the cheaper one is used.

Above a cost threshold a cotengra hyper-optimised search joins them. Its seconds of planning pay
off sooner where a plan is compiled into a reused program (JAX), so a *thorough* plan uses a lower
threshold (:data:`THOROUGH_NETWORK_COST`); elsewhere planning a 20-qubit, 10-layer state stays at
about 0.2 s.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any, Sequence

import opt_einsum

__all__ = ["circuit_path", "growing_path", "path_cost", "cotengra_path", "PathSearchWarning"]

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


#: A network whose best cheap path costs more than this (about a 21-qubit dense state) is worth
#: a hyper-optimised search, when cotengra is installed: seconds of planning, once per structure.
LARGE_NETWORK_COST = 1e10
#: The same for a thorough plan (about a 14-qubit dense state): on JAX, where a plan is compiled
#: into a program that is reused and compilation already takes seconds. Measured (2 cores, jit,
#: benchmarks/run.py): the 16-qubit QAOA energy and gradient 57 -> 13-18 ms, the 50-qubit
#: brickwork amplitude and <Z> 7.6 -> 2.4-3.2 ms, a 16-qubit state 11.6 -> 5.3-5.5 ms.
THOROUGH_NETWORK_COST = 5e6
#: Trials of the hyper-optimised search; a thorough plan runs more (the best of 8 trials for a
#: 22-qubit state varied by 40% in cost between runs, the best of 32 by 15%).
HYPER_REPEATS = 8
THOROUGH_REPEATS = 32


def circuit_path(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any = None,
                 thorough: bool = False) -> list[tuple[int, ...]]:
    """The cheapest (flops + 64 x writes) of opt_einsum's greedy path, :func:`growing_path` and,
    for networks costing more than :data:`LARGE_NETWORK_COST` when cotengra is installed, a
    cotengra hyper-optimised greedy search that minimises the same cost. ``thorough`` searches
    from :data:`THOROUGH_NETWORK_COST` with :data:`THOROUGH_REPEATS` trials.

    Examples
    --------
    >>> circuit_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    candidates = [[tuple(step) for step in opt_einsum.paths.greedy(inputs, output, size_dict, memory_limit)],
                  growing_path(inputs, output, size_dict)]
    costs = [path_cost(inputs, output, size_dict, path) for path in candidates]
    hyper_above = THOROUGH_NETWORK_COST if thorough else LARGE_NETWORK_COST
    if min(costs) > hyper_above and memory_limit is None:
        hyper = _hyper_path(inputs, output, size_dict, THOROUGH_REPEATS if thorough else HYPER_REPEATS)
        if hyper is not None:
            candidates.append(hyper)
            costs.append(path_cost(inputs, output, size_dict, hyper))
    return candidates[costs.index(min(costs))]


class PathSearchWarning(RuntimeWarning):
    """A contraction path was planned without cotengra: results are the same, only slower."""


_warned_no_cotengra = False


def _hyper_path(inputs: Sequence[set], output: set, size_dict: dict,
                repeats: int) -> list[tuple[int, ...]] | None:
    """:func:`cotengra_path`, or ``None`` without cotengra (the cheap paths then stand; only
    speed differs, and a :class:`PathSearchWarning` says so once per process)."""
    global _warned_no_cotengra
    try:
        return cotengra_path(inputs, output, size_dict, repeats=repeats)
    except ImportError:
        if not _warned_no_cotengra:
            _warned_no_cotengra = True
            warnings.warn("cotengra is not installed, so this large network's contraction path comes "
                          "from opt_einsum's greedy search only: the same results, possibly slower. "
                          "pip install 'tyxonq[contract]' for hyper-optimised paths.",
                          PathSearchWarning, stacklevel=2)
        return None


def cotengra_path(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any = None,
                  repeats: int = HYPER_REPEATS) -> list[tuple[int, ...]]:
    """cotengra's hyper-optimised greedy path minimising flops + 64 x bytes written ("combo").

    Each trial costs tens of milliseconds to seconds (a 22-qubit state: ~1 s); for a longer search
    pass a callable of your own to :func:`~tyxonq.set_contractor`.
    """
    import cotengra

    optimizer = cotengra.HyperOptimizer(methods=["greedy"], max_repeats=repeats, minimize="combo",
                                        optlib="random", parallel=False, progbar=False)
    ordered = [tuple(sorted(term)) for term in inputs]
    return [tuple(step) for step in optimizer(ordered, tuple(sorted(output)), size_dict, memory_limit)]
