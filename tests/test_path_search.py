"""The path search's pieces on bit masks: the scorer, the seeded random-greedy search, the
growing path and the min-fill elimination, each against a plain set-based reference."""

from __future__ import annotations

import itertools
import math
import random
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tyxonq.circuit.contraction import elimination, paths
from tyxonq.circuit.contraction.greedy_search import GreedySearch, PathScorer
from tyxonq.circuit.contraction.simplify import ssa_to_linear


@st.composite
def networks(draw, max_tensors=9, max_legs=8):
    """Tensors on legs of sizes 1-4, legs held by one, two or three tensors (hyperedges), some open."""
    count = draw(st.integers(2, max_tensors))
    names = [f"l{i}" for i in range(max_legs)]
    inputs = [set(draw(st.lists(st.sampled_from(names), max_size=4, unique=True))) for _ in range(count)]
    held = sorted(set().union(*inputs))
    output = {leg for leg in held if draw(st.booleans())}
    sizes = {leg: draw(st.sampled_from([1, 2, 2, 3, 4])) for leg in held}
    return inputs, output, sizes


def random_ssa_path(draw, count: int) -> list[tuple[int, int]]:
    alive, path, fresh = list(range(count)), [], count
    while len(alive) > 1:
        first = alive.pop(draw(st.integers(0, len(alive) - 1)))
        second = alive.pop(draw(st.integers(0, len(alive) - 1)))
        path.append((first, second))
        alive.append(fresh)
        fresh += 1
    return path


@settings(max_examples=150, deadline=None)
@given(network=networks(), data=st.data())
def test_the_scorer_counts_a_path_as_path_cost_does(network, data):
    inputs, output, sizes = network
    ssa_path = random_ssa_path(data.draw, len(inputs))
    expected = paths.path_cost(inputs, output, sizes, ssa_to_linear(ssa_path, len(inputs)))
    assert PathScorer(inputs, output, sizes).cost(ssa_path) == pytest.approx(expected, rel=1e-12)


def reference_growing_path(inputs, output, size_dict):
    """The growing path on sets: absorb the neighbour that keeps the accumulated tensor smallest."""
    remaining = [frozenset(x) for x in inputs]
    counts = Counter(leg for term in remaining for leg in term)
    accumulator, path, first = remaining.pop(0), [], True
    while remaining:
        best, best_key = 0, None
        for position, legs in enumerate(remaining):
            result = [leg for leg in accumulator | legs
                      if leg in output or counts[leg] - (leg in accumulator) - (leg in legs) > 0]
            key = (not accumulator & legs, math.prod(size_dict[leg] for leg in result))
            if best_key is None or key < best_key:
                best, best_key = position, key
        path.append((0, best + 1) if first else (best, len(remaining)))
        legs = remaining.pop(best)
        for leg in accumulator | legs:
            counts[leg] -= (leg in accumulator) + (leg in legs)
        accumulator = frozenset(leg for leg in accumulator | legs if leg in output or counts[leg] > 0)
        for leg in accumulator:
            counts[leg] += 1
        first = False
    return path


@settings(max_examples=150, deadline=None)
@given(network=networks())
def test_the_growing_path_on_bit_masks_is_the_set_based_one(network):
    inputs, output, sizes = network
    assert paths.growing_path(inputs, output, sizes) == reference_growing_path(inputs, output, sizes)


def reference_elimination(inputs, output, size_dict, generator):
    """Min-fill elimination on sets (ties to the lowest leg by name, or drawn by ``generator``)."""
    keep = frozenset(output)
    legs = {i: frozenset(term) for i, term in enumerate(inputs)}
    holders, adjacency = {}, {}
    for i, term in legs.items():
        for leg in term:
            holders.setdefault(leg, set()).add(i)
            adjacency.setdefault(leg, set()).update(term - {leg})
    order = {leg: position for position, leg in enumerate(sorted(adjacency, key=str))}

    def fill(leg):
        neighbours = adjacency[leg]
        return (sum(len(neighbours - adjacency[a]) for a in neighbours) - len(neighbours)) // 2

    scores = {leg: (fill(leg), len(adjacency[leg])) for leg in adjacency if leg not in keep}
    fresh, ssa, cost = len(legs), [], 0.0

    def contract(a, b):
        nonlocal fresh, cost
        union = legs[a] | legs[b]
        for tensor in (a, b):
            for leg in legs.pop(tensor):
                holders[leg].discard(tensor)
        result = frozenset(leg for leg in union if leg in keep or holders[leg])
        cost += math.prod(size_dict[leg] for leg in union) + 64 * math.prod(size_dict[leg] for leg in result)
        legs[fresh] = result
        for leg in result:
            holders[leg].add(fresh)
        ssa.append((a, b))
        fresh += 1
        return fresh - 1

    while scores:
        lowest = min(scores.values())
        tied = sorted((leg for leg, score in scores.items() if score == lowest), key=order.__getitem__)
        leg = tied[0] if generator is None else generator.choice(tied)
        group = sorted(holders.get(leg, ()))
        while len(group) > 1:
            a, b = min(itertools.combinations(group, 2), key=lambda pair: (
                sum(1 for x in legs[pair[0]] | legs[pair[1]] if x in keep or holders[x] - set(pair)), pair))
            group = [g for g in group if g not in (a, b)] + [contract(a, b)]
        neighbours = adjacency.pop(leg)
        del scores[leg]
        for other in neighbours:
            adjacency[other].discard(leg)
            adjacency[other].update(neighbours - {other})
        for other in set(neighbours).union(*(adjacency[other] for other in neighbours)):
            if other in scores:
                scores[other] = (fill(other), len(adjacency[other]))
    remaining = sorted(legs)
    while len(remaining) > 1:
        remaining.append(contract(remaining.pop(0), remaining.pop(0)))
    return ssa_to_linear(ssa, len(inputs)), cost


@settings(max_examples=150, deadline=None)
@given(network=networks(), seed=st.integers(0, 2 ** 16))
def test_min_fill_elimination_on_bit_masks_is_the_set_based_one(network, seed):
    inputs, output, sizes = network
    for generator in (None, random.Random(seed)):
        replay = None if generator is None else random.Random(seed)
        start = elimination._Start(inputs, output, sizes)
        path, cost = elimination._one_elimination(start, generator)
        assert elimination._one_elimination(start, None) == elimination._one_elimination(start, None)
        expected_path, expected_cost = reference_elimination(inputs, output, sizes, replay)
        assert path == expected_path and cost == pytest.approx(expected_cost, rel=1e-12)


def ladder_network(n: int, layers: int):
    """A CNOT-ladder circuit's state network: one-qubit tensors and CNOTs as COPY/XOR pairs."""
    inputs, fresh = [], {q: f"q{q}_0" for q in range(n)}
    counter = 0
    for _ in range(layers):
        for q in range(n):
            counter += 1
            new = f"q{q}_{counter}"
            inputs.append({fresh[q], new})
            fresh[q] = new
        for q in range(n - 1):
            counter += 1
            control, target = f"q{q}_{counter}", f"q{q + 1}_{counter}"
            inputs.append({fresh[q], fresh[q + 1], control, target})
            fresh[q], fresh[q + 1] = control, target
    inputs += [{f"q{q}_0"} for q in range(n)]
    output = set(fresh.values())
    return inputs, output, {leg: 2 for term in inputs for leg in term}


def test_the_greedy_search_is_seeded_and_continues_where_it_stopped():
    inputs, output, sizes = ladder_network(8, 4)
    whole = GreedySearch(inputs, output, sizes)
    whole.run(12)
    chunked = GreedySearch(inputs, output, sizes)
    for _ in range(3):
        chunked.run(4)
    assert whole.best_path == chunked.best_path and whole.best_cost == chunked.best_cost
    assert whole.best_cost == paths.path_cost(inputs, output, sizes, whole.best_path)
    other = GreedySearch(inputs, output, sizes, seed=1)
    other.run(12)
    assert other.best_cost == paths.path_cost(inputs, output, sizes, other.best_path)
    greedy = paths.path_cost(inputs, output, sizes, paths.growing_path(inputs, output, sizes))
    assert whole.best_cost < greedy  # the search beats growing the state gate by gate


def test_the_greedy_search_runs_on_cotengras_greedy_without_cotengrust(monkeypatch):
    pytest.importorskip("cotengra")
    monkeypatch.setitem(sys.modules, "cotengrust", None)
    inputs, output, sizes = ladder_network(6, 3)
    search = GreedySearch(inputs, output, sizes)
    search.run(6)
    assert len(search.best_path) == len(inputs) - 1
    assert search.best_cost == paths.path_cost(inputs, output, sizes, search.best_path)


def test_a_search_without_cotengra_keeps_its_greedy_trials(monkeypatch):
    """With cotengrust but no cotengra, a search that would add kahypar partitions goes on with
    greedy trials (no ImportError loses the trials made)."""
    pytest.importorskip("cotengrust")
    for name in ["cotengra"] + [name for name in sys.modules if name.startswith("cotengra.")]:
        monkeypatch.setitem(sys.modules, name, None)
    inputs, output, sizes = ladder_network(8, 4)
    path = paths.cotengra_path(inputs, output, sizes, repeats=8)  # rate None: partitions wanted
    assert paths.path_cost(inputs, output, sizes, path) < math.inf and len(path) == len(inputs) - 1


def _searched_seconds(monkeypatch, known_cost):
    """The trial time a rate-stopped search of a 16-qubit ladder state spends, given the cost of
    the path in hand (counted as the search counts it)."""
    inputs, output, sizes = ladder_network(16, 4)
    chunks = []
    run = GreedySearch.run
    monkeypatch.setattr(GreedySearch, "run", lambda self, chunk: chunks.append(chunk) or run(self, chunk))
    rate = paths.CONTRACTION_RATE / paths.EAGER_SEARCH_FRACTION
    path = paths.cotengra_path(inputs, output, sizes, rate=rate, known_cost=known_cost)
    assert len(path) == len(inputs) - 1
    return sum(chunks) * paths.trial_seconds(len(inputs), partition=False)


def test_a_search_that_cannot_beat_the_path_in_hand_stops_after_its_probation(monkeypatch):
    """Behind the cheap paths' cost (here: 1, unbeatable) a search stops once it has searched
    PROBATION_SECONDS; one that beats the path in hand (growing the state gate by gate) runs its
    whole floor."""
    inputs, output, sizes = ladder_network(16, 4)
    growing = paths.path_cost(inputs, output, sizes, paths.growing_path(inputs, output, sizes))
    behind = _searched_seconds(monkeypatch, known_cost=1.0)
    ahead = _searched_seconds(monkeypatch, known_cost=growing)
    chunk = 4 * paths.trial_seconds(len(ladder_network(16, 4)[0]), partition=False)
    assert paths.PROBATION_SECONDS < behind <= paths.PROBATION_SECONDS + chunk
    assert paths.MIN_SEARCH_SECONDS < ahead <= paths.MIN_SEARCH_SECONDS + chunk


@st.composite
def small_networks(draw):
    """Up to 12 tensors on up to 14 legs of sizes 2 or 4 (each leg on 1-3 tensors), some open."""
    tensors = [set() for _ in range(draw(st.integers(1, 12)))]
    sizes = {}
    for leg in range(draw(st.integers(1, 14))):
        holders = draw(st.lists(st.integers(0, len(tensors) - 1), min_size=1, max_size=3, unique=True))
        for t in holders:
            tensors[t].add(f"l{leg}")
        sizes[f"l{leg}"] = draw(st.sampled_from([2, 2, 4]))
    held = sorted(set().union(*tensors))
    output = set(draw(st.lists(st.sampled_from(held), unique=True, max_size=3))) if held else set()
    return tensors, output, sizes


@settings(max_examples=300, deadline=None)
@given(network=small_networks())
def test_rank_simplification_never_grows_and_leaves_no_pair_to_merge(network):
    """Each step's result is no larger than its larger input; the inputs left are what replaying
    the steps gives; no two tensors sharing a leg are left whose merge would not grow."""
    from tyxonq.circuit.contraction.simplify import rank_simplify

    tensors, output, sizes = network
    inputs = [set(t) for t in tensors]
    steps = rank_simplify(inputs, output, sizes)
    size = lambda legs: math.prod(sizes[leg] for leg in legs)  # noqa: E731
    replay = [set(t) for t in tensors]
    for step in steps:
        terms = [replay[i] for i in step]
        for i in sorted(step, reverse=True):
            replay.pop(i)
        union = set().union(*terms)
        merged = {leg for leg in union if leg in output or any(leg in other for other in replay)}
        if all(terms):  # a scalar joins its smallest neighbour: that never grows either
            assert size(merged) <= max(size(term) for term in terms)
        replay.append(merged)
    assert replay == inputs
    for a, b in itertools.combinations(range(len(inputs)), 2):
        if inputs[a] & inputs[b]:
            rest = [t for k, t in enumerate(inputs) if k not in (a, b)]
            merged = {leg for leg in inputs[a] | inputs[b] if leg in output or any(leg in t for t in rest)}
            assert size(merged) > max(size(inputs[a]), size(inputs[b]))
