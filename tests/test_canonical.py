"""Canonical forms of networks (tyxonq.circuit.contraction.canonical): the relabelled structure
is the network's own, isomorphic networks without ties share a key, forms are kept per network,
and the sorted/reduceat refinement gives the keys the plain np.unique/np.add.at one gave (plans
stored under those keys stay valid)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tyxonq.circuit.contraction import canonical
from tyxonq.circuit.contraction.canonical import _mix, _relabelled, canonical_form


@st.composite
def networks(draw):
    """Tensors holding 0-3 of up to 12 legs (each leg on one or two tensors: bonds and open legs),
    and some open legs as the output."""
    legs = draw(st.integers(1, 12))
    tensors = [[] for _ in range(draw(st.integers(1, 10)))]
    for leg in range(legs):
        holders = draw(st.lists(st.integers(0, len(tensors) - 1), min_size=1, max_size=2, unique=True))
        for t in holders:
            if len(tensors[t]) < 3:
                tensors[t].append(leg)
    tensor_legs = [tuple(draw(st.permutations(t))) for t in tensors]
    held = sorted({leg for t in tensor_legs for leg in t})
    output = tuple(draw(st.lists(st.sampled_from(held), unique=True, max_size=3))) if held else ()
    return tensor_legs, output


def reference_form(tensor_legs, output):
    """The same refinement with np.unique and np.add.at (the implementation before the sorted
    and reduceat one)."""
    names = {leg: i for i, leg in enumerate(dict.fromkeys(leg for legs in tensor_legs for leg in legs))}
    tensor_of = np.asarray([t for t, legs in enumerate(tensor_legs) for _ in legs], dtype=np.int64)
    leg_of = np.asarray([names[leg] for legs in tensor_legs for leg in legs], dtype=np.int64)
    position = {leg: p for p, leg in enumerate(output)}
    with np.errstate(over="ignore"):
        leg_colour = _mix(np.asarray([position.get(leg, -1) + 2 for leg in names], dtype=np.uint64))
        tensor_colour = _mix(np.asarray([len(legs) + 1 for legs in tensor_legs], dtype=np.uint64)
                             + np.uint64(1 << 40))

        def classes():
            return len(np.unique(tensor_colour)) + len(np.unique(leg_colour))

        def refine():
            nonlocal tensor_colour, leg_colour
            count = classes()
            while True:
                sums = np.zeros(len(tensor_legs), dtype=np.uint64)
                np.add.at(sums, tensor_of, _mix(leg_colour[leg_of] + np.uint64(7)))
                tensor_colour = _mix(tensor_colour * np.uint64(3) + sums)
                sums = np.zeros(len(names), dtype=np.uint64)
                np.add.at(sums, leg_of, _mix(tensor_colour[tensor_of] + np.uint64(11)))
                leg_colour = _mix(leg_colour * np.uint64(5) + sums)
                if classes() == count:
                    return
                count = classes()

        def break_tie():
            for colours in (tensor_colour, leg_colour):
                _, inverse, counts = np.unique(colours, return_inverse=True, return_counts=True)
                tied = np.flatnonzero(counts > 1)
                if tied.size:
                    chosen = int(np.flatnonzero(inverse == tied[0])[0])
                    colours[chosen] = _mix(colours[chosen:chosen + 1] + np.uint64(13))[0]
                    return True
            return False

        refine()
        while break_tie():
            refine()
    order = tuple(int(i) for i in np.argsort(tensor_colour, kind="stable"))
    colour = dict(zip(names, leg_colour.tolist()))
    permutations = []
    for i in order:
        permutation = tuple(sorted(range(len(tensor_legs[i])), key=lambda p: colour[tensor_legs[i][p]]))
        permutations.append(None if permutation == tuple(range(len(tensor_legs[i]))) else permutation)
    return _relabelled(tensor_legs, output, order, permutations), order, tuple(permutations)


@settings(max_examples=150, deadline=None)
@given(network=networks())
def test_forms_match_the_reference_and_describe_the_network(network):
    tensor_legs, output = network
    form = canonical_form(tensor_legs, output)
    assert tuple(form) == reference_form(tensor_legs, output)
    assert sorted(form.order) == list(range(len(tensor_legs)))
    assert form.key == _relabelled(tensor_legs, output, form.order, form.permutations)


def test_relabelled_and_reordered_networks_share_the_key():
    """A chain with distinct ends (no ties): any leg names, tensor order and leg order."""
    chain = [(0, 1), (1, 2, 9), (2, 3), (3,), (9,)]
    name = {0: 41, 1: 30, 2: 22, 3: 40, 9: 11}
    renamed = [tuple(name[leg] for leg in reversed(chain[i])) for i in (3, 2, 1, 4, 0)]
    assert canonical_form(chain, (0,)).key == canonical_form(renamed, (41,)).key
    assert canonical_form(chain, (0,)).key != canonical_form(chain, (3,)).key


def test_forms_are_kept_per_network_and_rebuilt_equal_after_clearing():
    legs, output = [(5, 6), (6, 7), (7, 5, 8)], (8,)
    first = canonical_form(legs, output)
    assert canonical_form([list(t) for t in legs], list(output)) is first
    canonical._FORMS.clear()
    assert canonical_form(legs, output) == first
