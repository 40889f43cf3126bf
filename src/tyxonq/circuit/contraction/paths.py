"""Circuit-aware path finding: the cheapest of a greedy path, a growing-tensor path and,
for large networks, a cotengra hyper-optimised search.

Greedy pairwise contraction suits closed, shallow networks (amplitudes, light cones) but can
build intermediates far larger than the result on dense-state networks (measured: a 22-qubit,
10-layer state peaked at 17 GiB for a 64 MiB state). A *growing* path keeps one accumulated
tensor and always absorbs the neighbour that keeps it smallest; for a circuit this is state-vector
simulation, whose largest tensor is about the state itself. Both paths are costed as flops plus
64 x elements written (memory traffic dominates on CPUs) and the cheaper one is used.

When the cheaper of them would take longer than :data:`SEARCH_ABOVE_SECONDS` to contract, a
seeded random-greedy search (:mod:`~tyxonq.circuit.contraction.greedy_search`: cotengra's greedy
trials without its per-trial bookkeeping) joins them, and cotengra's hyper-optimiser with kahypar
partitions for expensive networks, with a time budget proportional to the estimated
contraction time: an eager plan (for a call that runs at once) stops once it has searched a
quarter of the time its best path would take to contract (:data:`EAGER_SEARCH_FRACTION`), so a
first call costs little more than a later one. A plan compiled into a reused program (made while
``jax.jit`` traces) is *thorough*: it searches :data:`THOROUGH_SLOWDOWN` times the contraction
time, with more elimination trials.

Planning is deterministic: search times are counted in trials (:func:`trial_seconds`), never read
from a clock, and every random choice is seeded, so a network gets the same path (and a result
the same answer to "does it fit") in every process and on every machine.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from typing import Any, Sequence

import opt_einsum

from ...numerics.progress import progress
from .elimination import ELIMINATION_MAX_LEGS, elimination_path
from .greedy_search import GreedySearch, seeded_greedy, seeded_randomness
from .leg_masks import LegMasks, PairwiseContraction

__all__ = ["circuit_path", "greedy_path", "growing_path", "path_cost", "cotengra_path", "PathSearchWarning"]

WRITE_WEIGHT = 64


def path_cost(inputs: Sequence[set], output: set, size_dict: dict,
              path: Sequence[Sequence[int]], write_weight: float = WRITE_WEIGHT) -> float:
    """``flops + 64 x elements written`` of a linear-format path (pairwise steps); another
    ``write_weight`` weighs the writes differently (``0``: flops only). Sizes are exact integers
    (legs as bits: :class:`~tyxonq.circuit.contraction.leg_masks.LegMasks`).

    Examples
    --------
    >>> path_cost([{"a"}, {"a", "b"}, {"b"}], set(), {"a": 2, "b": 2}, [(0, 1), (0, 1)])
    198.0
    """
    legs = LegMasks(inputs, output, size_dict)
    masks, size, pairs = list(legs.masks), legs.exact_size, PairwiseContraction(legs)
    cost = 0.0
    for step in path:
        chosen = [masks[i] for i in step]
        for i in sorted(step, reverse=True):
            masks.pop(i)
        merged = chosen[0]
        for other in chosen[1:]:
            union, merged = merged | other, pairs.contract(merged, other)
            cost += size(union) + write_weight * size(merged)
        masks.append(merged)
    return cost


def growing_path(inputs: Sequence[set], output: set, size_dict: dict,
                 memory_limit: Any = None) -> list[tuple[int, int]]:
    """Grow one tensor from the first input, absorbing the neighbour that keeps it smallest.

    Examples
    --------
    >>> growing_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    if len(inputs) < 2:
        return []
    legs = LegMasks(inputs, output, size_dict)
    remaining, size, pairs = list(legs.masks), legs.size, PairwiseContraction(legs)
    accumulator = remaining.pop(0)
    path: list[tuple[int, int]] = []
    first = True
    while remaining:
        best, best_key = 0, None
        for position, mask in enumerate(remaining):
            key = (not accumulator & mask, size(pairs.result(accumulator, mask)))
            if best_key is None or key < best_key:
                best, best_key = position, key
        accumulator_index = 0 if first else len(remaining)
        path.append((accumulator_index, best + 1) if first else (best, accumulator_index))
        accumulator = pairs.contract(accumulator, remaining.pop(best))
        first = False
    return path


#: Contraction speed assumed when weighing planning against contracting, in cost units (flops +
#: 64 x elements written) per second; measured on 2 cores with NumPy, complex128, 1e9 - 1e11
#: cost units per contraction: see :func:`estimated_seconds`.
CONTRACTION_RATE = 1e10
#: A network whose cheapest cheap path is estimated to contract faster than this is planned no
#: further; above it cotengra's hyper-optimised search (when installed) runs until the time spent
#: searching exceeds the estimated contraction time of the best path found ("rate" stopping).
SEARCH_ABOVE_SECONDS = 0.002
#: Above this estimated time the min-fill elimination runs its randomised trials too (a few
#: milliseconds each for a light cone of a hundred tensors).
ELIMINATION_TRIALS_ABOVE_SECONDS = 1e-5
#: A thorough plan (compiled into a program that is reused: JAX) searches as if contractions ran
#: this much slower, i.e. longer.
THOROUGH_SLOWDOWN = 8
#: Most trials of the hyper-optimised search (each milliseconds to seconds).
HYPER_REPEATS = 256
THOROUGH_REPEATS = 512
#: The search runs at least this long (greedy trials take a millisecond or two: about 150 fit, which
#: tames the spread of a random search: with an eighth of a second, the seeded search planned a
#: 16-qubit state at 7.1e7 cost units; with a quarter, 4.6e7, as with half a second), and adds
#: kahypar's partitions (slower trials, better for large networks) once the best path would take
#: longer than KAHYPAR_ABOVE_SECONDS to contract.
MIN_SEARCH_SECONDS = 0.25
KAHYPAR_ABOVE_SECONDS = 1.0
#: A search that has not beaten the cheap paths (greedy, growing, min-fill elimination) after this
#: long (scaled as the floor is) and its rate budget stops there instead of at the floor: it rarely
#: does later. Measured on the suite's searched networks (best of the search over the cheap paths'
#: cost, at 64 chunks of trials): the 10-qubit noisy energy's 1.55, the 12-qubit noisy density
#: matrix's 1.56, the 36-qubit lattice's three 1.7-2.4 (min-fill elimination wins each: 0.25 s of
#: search for nothing, per network); the 16-, 20- and 22-qubit states' searches beat their cheap
#: paths within 2, 1 and 2 chunks (of 4 trials) and keep the whole floor.
PROBATION_SECONDS = MIN_SEARCH_SECONDS / 4
#: A thorough search (its rate THOROUGH_SLOWDOWN times lower) adds the partitions, and searches
#: THOROUGH_SLOWDOWN times the floor, above this: a 20-qubit state (0.77 s here) kept its
#: partitioned path (78 ms a call compiled; 94 ms from greedy trials alone), while a 10-qubit
#: noisy density matrix (0.21 s, 616 tensors, each partition trial counted at 1.3 s) is planned
#: in half a second instead of six, for the same call time.
THOROUGH_KAHYPAR_ABOVE_SECONDS = 0.5
#: Every path writes the output (64 cost units per entry): a cheap path within this factor of that
#: bound leaves little to find, and no search runs.
OUTPUT_BOUND_FACTOR = 4
#: Randomised min-fill elimination trials of a thorough plan, and of an eager one (the first trial
#: is the deterministic elimination). An eager plan searches a quarter of its contraction's time,
#: and a trial costs more than that wherever one runs (1.6 ms for a QAOA p = 3 light cone of 116
#: tensors that contracts in 0.04 ms, estimated), so an eager plan runs one random trial, not
#: three: the QAOA p = 3 energy's first call ran 168 trials (0.29 s) for no change in its steady
#: time, while a 50-qubit depth-10 brickwork's <Z_25> still plans at width 9, not 10 (8 with
#: four trials; quimb's: 8).
ELIMINATION_TRIALS = 8
EAGER_ELIMINATION_TRIALS = 2
#: An eager plan (made for a call that runs at once) stops its search after this fraction of the
#: best path's estimated contraction time, so a first call costs little more than a later one.
EAGER_SEARCH_FRACTION = 0.25
#: The search never runs longer than this (a thorough one: THOROUGH_SLOWDOWN times longer), however
#: long the best path found would take.
MAX_SEARCH_SECONDS = 10.0


def estimated_seconds(cost: float, thorough: bool = False) -> float:
    """The time a contraction of ``cost`` (flops + 64 x writes) is planned for.

    Examples
    --------
    >>> estimated_seconds(1e10)
    1.0
    """
    return cost / CONTRACTION_RATE * (THOROUGH_SLOWDOWN if thorough else 1)


def _installed(module: str) -> bool:
    """Whether ``module`` is installed, found without importing it (cotengra's import costs 80 ms,
    which a search of greedy trials alone never needs)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def circuit_path(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any = None,
                 thorough: bool = False) -> list[tuple[int, ...]]:
    """The cheapest (flops + 64 x writes) of :func:`greedy_path`, :func:`growing_path` (for
    networks with open legs), a min-fill elimination path
    (:func:`~tyxonq.circuit.contraction.elimination.elimination_path`, with randomised trials when
    the contraction is worth :data:`ELIMINATION_TRIALS_ABOVE_SECONDS`) and,
    for networks whose cheap paths would take more than :data:`SEARCH_ABOVE_SECONDS`, a cotengra
    hyper-optimised search (greedy and, where it installs, kahypar partitions) that minimises the
    same cost and stops once searching took :data:`EAGER_SEARCH_FRACTION` of the time the best
    path would contract. A ``thorough`` plan searches :data:`THOROUGH_SLOWDOWN` times that
    contraction time, and runs every elimination trial.

    Examples
    --------
    >>> circuit_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    candidates = [greedy_path(inputs, output, size_dict, memory_limit)]
    if output:  # a dense state: grow it like a state vector
        candidates.append(growing_path(inputs, output, size_dict))
    costs = [path_cost(inputs, output, size_dict, path) for path in candidates]
    bound = OUTPUT_BOUND_FACTOR * WRITE_WEIGHT * math.prod(size_dict[leg] for leg in output)
    search = estimated_seconds(min(costs), thorough) > SEARCH_ABOVE_SECONDS and min(costs) > bound \
        and memory_limit is None
    if len(set().union(*inputs)) <= ELIMINATION_MAX_LEGS and memory_limit is None:
        # randomised trials where the contraction is worth them, fewer for an eager plan (see
        # EAGER_ELIMINATION_TRIALS)
        worth = estimated_seconds(min(costs), thorough) > ELIMINATION_TRIALS_ABOVE_SECONDS
        trials = (ELIMINATION_TRIALS if thorough else EAGER_ELIMINATION_TRIALS) if worth else 1
        candidates.append(elimination_path(inputs, output, size_dict, trials=trials))
        costs.append(path_cost(inputs, output, size_dict, candidates[-1]))
    if search:
        rate = CONTRACTION_RATE / THOROUGH_SLOWDOWN if thorough else CONTRACTION_RATE / EAGER_SEARCH_FRACTION
        hyper = _hyper_path(inputs, output, size_dict, THOROUGH_REPEATS if thorough else HYPER_REPEATS,
                            rate, min(costs))
        if hyper is not None:
            candidates.append(hyper)
            costs.append(path_cost(inputs, output, size_dict, hyper))
    return candidates[costs.index(min(costs))]


def greedy_path(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any = None
                ) -> list[tuple[int, ...]]:
    """A greedy pairwise path (linear format): cotengrust's compiled ``optimize_greedy`` where it
    is installed and no memory limit applies (each tensor's legs sorted, so the path never depends
    on a set's order), else opt_einsum's ``greedy``. The same heuristic (contract the pair whose
    result most shrinks the tensors); cotengrust's takes a sixth of the time (the 42 light cones of
    the 100-node p = 3 QAOA energy: 27 against 166 ms), and over the 109 plans the suite's rows
    make, the paths chosen with it cost 0.6 % less on average (6 cheaper, 3 dearer by at most
    7.8 %, the rest equal).

    Examples
    --------
    >>> greedy_path([{"a"}, {"a", "b"}, {"b", "c"}], {"c"}, {"a": 2, "b": 2, "c": 2})
    [(0, 1), (0, 1)]
    """
    if memory_limit is None and _installed("cotengrust"):
        from cotengrust import optimize_greedy

        return [tuple(step) for step in optimize_greedy([sorted(legs) for legs in inputs], sorted(output),
                                                        size_dict, use_ssa=False)]
    return [tuple(step) for step in opt_einsum.paths.greedy(inputs, output, size_dict, memory_limit)]


class PathSearchWarning(RuntimeWarning):
    """A contraction path was planned without a random-greedy search (neither cotengra nor cotengrust
    installed): results are the same, only slower."""


_warned_no_cotengra = False


def _hyper_path(inputs: Sequence[set], output: set, size_dict: dict, repeats: int,
                rate: float, known_cost: float) -> list[tuple[int, ...]] | None:
    """:func:`cotengra_path`, or ``None`` without cotengra and cotengrust (the cheap paths then
    stand; only speed differs, and a :class:`PathSearchWarning` says so once per process)."""
    global _warned_no_cotengra
    try:
        return cotengra_path(inputs, output, size_dict, repeats=repeats, rate=rate, known_cost=known_cost)
    except ImportError:
        if not _warned_no_cotengra:
            _warned_no_cotengra = True
            warnings.warn("neither cotengra nor cotengrust is installed, so this large network's contraction "
                          "path comes from the cheap path finders only: the same results, possibly slower. "
                          "pip install 'tyxonq[contract]' for hyper-optimised paths.",
                          PathSearchWarning, stacklevel=2)
        return None


def cotengra_path(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any = None,
                  repeats: int = HYPER_REPEATS, rate: float | None = None,
                  known_cost: float = math.inf) -> list[tuple[int, ...]]:
    """cotengra's hyper-optimised path minimising flops + 64 x bytes written ("combo"): greedy
    trials, and kahypar partitions for expensive networks where kahypar is installed.

    ``rate`` (cost units per second) stops the search once it has run for
    :data:`MIN_SEARCH_SECONDS` and longer than the best path found would take to contract, or
    for :data:`MAX_SEARCH_SECONDS`; without it all ``repeats`` trials run. Times are counted in
    trials (:func:`trial_seconds`), not read from a clock, and every trial's randomness is
    seeded: the same network gets the same path in every process. A rate below
    :data:`CONTRACTION_RATE` (a thorough search) searches that much longer for the same cost, and
    scales the cap up by the ratio. kahypar's partitions and subtree reconfiguration join the
    greedy trials for expensive contractions (whose ``known_cost``, the cost of a path already in
    hand, over ``rate`` exceeds :data:`KAHYPAR_ABOVE_SECONDS`, or a thorough search's
    :data:`THOROUGH_KAHYPAR_ABOVE_SECONDS`); a thorough search with them also scales its floor up
    by the ratio. Cheaper ones get fast greedy trials only, for the unscaled floor. A search whose
    best is still costlier than ``known_cost`` after :data:`PROBATION_SECONDS` (scaled as the
    floor) and its rate budget stops there. For a longer
    search pass a callable of your own to :func:`~tyxonq.set_contractor`.
    """
    with seeded_randomness():
        return _hyper_search(inputs, output, size_dict, memory_limit, repeats, rate, known_cost)


#: the name of :func:`_seeded_greedy_trial` among cotengra's hyper functions
SEEDED_GREEDY = "tyxonq-seeded-greedy"


def _seeded_greedy_trial(inputs: Any, output: Any, size_dict: dict, random_strength: float = 0.0,
                         temperature: float = 0.0, costmod: float = 1.0, seed: int = 0) -> Any:
    """cotengra's greedy trial with its randomness drawn from ``seed`` (a hyper-parameter the
    seeded search samples): cotengra's own trial leaves cotengrust's generator unseeded."""
    from cotengra import ContractionTree
    from cotengra.core import jitter_dict

    jittered = jitter_dict(size_dict, random_strength, seed) if random_strength else size_dict
    ssa_path = seeded_greedy()(inputs, output, jittered, costmod, temperature, seed)
    return ContractionTree.from_path(inputs, output, size_dict, ssa_path=ssa_path)


def _register_seeded_greedy() -> None:
    from cotengra.hyperoptimizers import hyper

    if SEEDED_GREEDY not in hyper.list_hyper_functions():
        hyper.register_hyper_function(SEEDED_GREEDY, _seeded_greedy_trial, space={
            "random_strength": {"type": "FLOAT_EXP", "min": 0.001, "max": 1.0},
            "temperature": {"type": "FLOAT_EXP", "min": 0.001, "max": 1.0},
            "costmod": {"type": "FLOAT", "min": 0.1, "max": 4.0},
            "seed": {"type": "INT", "min": 0, "max": 2 ** 31 - 1},
        })


def _hyper_search(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any, repeats: int,
                  rate: float | None, known_cost: float) -> list[tuple[int, ...]]:
    spent, done, chunk = 0.0, 0, repeats if rate is None else 4
    searches: dict[bool, Any] = {}
    partitions = _installed("cotengra")  # without it, greedy trials only
    best, best_cost = None, math.inf
    scale = 1.0 if rate is None else max(1.0, CONTRACTION_RATE / rate)
    with progress(repeats, "contraction path search", unit="trial") as report:
        while done < repeats:
            above = THOROUGH_KAHYPAR_ABOVE_SECONDS if scale > 1 else KAHYPAR_ABOVE_SECONDS
            partition = (rate is None or min(best_cost, known_cost) / rate > above) and partitions
            if partition not in searches:  # each search continues where it stopped when called again
                searches[partition] = _partition_search(chunk) if partition else \
                    GreedySearch(inputs, output, size_dict)
            if partition:
                path = searches[True](inputs, output, size_dict, memory_limit)
                cost = path_cost(inputs, output, size_dict, path)
            else:
                searches[False].run(chunk)
                path, cost = searches[False].best_path, searches[False].best_cost
            done += chunk
            spent += chunk * trial_seconds(len(inputs), partition)
            if cost < best_cost:
                best, best_cost = path, cost
            report.advance(chunk, best_log10_cost=round(math.log10(max(best_cost, 1.0)), 2))
            floor = MIN_SEARCH_SECONDS * (scale if partition else 1)
            enough = spent > floor and spent > best_cost / rate if rate is not None else True
            behind = rate is not None and best_cost > known_cost and spent > floor * PROBATION_SECONDS \
                / MIN_SEARCH_SECONDS and spent > known_cost / rate  # see PROBATION_SECONDS
            if enough or behind or spent > MAX_SEARCH_SECONDS * scale:
                break
    return best


def _partition_search(chunk: int) -> Any:
    """cotengra's hyper-optimiser over seeded greedy trials and (where installed) kahypar
    partitions with subtree reconfiguration: ``chunk`` trials a call, its own search continued."""
    import cotengra

    _register_seeded_greedy()
    methods = [SEEDED_GREEDY] + (["kahypar"] if _installed("kahypar") else [])
    optimizer = cotengra.HyperOptimizer(methods=methods, max_repeats=chunk, minimize="combo", optlib="random",
                                        optlib_opts={"seed": 0}, reconf_opts={}, parallel=False,
                                        progbar=False)

    def search(inputs: Sequence[set], output: set, size_dict: dict, memory_limit: Any) -> list:
        ordered = [tuple(sorted(term)) for term in inputs]
        path = optimizer(ordered, tuple(sorted(output)), size_dict, memory_limit)
        return [tuple(step) for step in path]

    return search


#: A search trial's time on this project's reference machine (2 cores), ``a n + b n^2`` seconds for
#: ``n`` tensors. A seeded greedy trial (:class:`~tyxonq.circuit.contraction.greedy_search.GreedySearch`,
#: cotengrust): 1.2 ms at 154 tensors, 2.2 ms at 234 (circuit states), 7.8 ms at 807 and 25 ms at
#: 2013 (amplitudes). A hyper-optimiser trial with subtree reconfiguration and kahypar partitions:
#: 0.54 s at 367 tensors.
GREEDY_TRIAL_SECONDS = (7.5e-6, 2.5e-9)
PARTITION_TRIAL_SECONDS = (6e-4, 2.4e-6)


def trial_seconds(num_tensors: int, partition: bool) -> float:
    """The time a search trial is planned to take: the search counts trials against its budget
    with this estimate rather than a clock, so the same network gets the same plan in every
    process and on every machine.

    Examples
    --------
    >>> round(trial_seconds(1000, partition=False), 4)
    0.01
    """
    a, b = PARTITION_TRIAL_SECONDS if partition else GREEDY_TRIAL_SECONDS
    return a * num_tensors + b * num_tensors ** 2
