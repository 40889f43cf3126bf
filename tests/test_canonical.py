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

        def break_tie(every_class):
            for colours in (tensor_colour, leg_colour):
                _, inverse, counts = np.unique(colours, return_inverse=True, return_counts=True)
                tied = np.flatnonzero(counts > 1)
                if tied.size:
                    for cls in tied if every_class else tied[:1]:
                        members = np.flatnonzero(inverse == cls)  # in index order
                        for rank, chosen in enumerate(members if every_class else members[:1]):
                            colours[chosen] = _mix(colours[chosen:chosen + 1] + np.uint64(13 * (rank + 1)))[0]
                    return True
            return False

        refine()
        breaks = 0
        while break_tie(breaks >= canonical.TIES_ONE_BY_ONE):
            breaks += 1
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


def test_many_ties_are_broken_at_once_and_the_form_still_matches():
    """Forty identical disconnected pairs and a chain (ties past TIES_ONE_BY_ONE): the rest are
    broken at once, in a round or two instead of one per tie; the form still
    describes the network and matches the reference, and a relabelled copy shares it."""
    pairs = [(2 * i, 2 * i + 1) for i in range(40)]
    tensor_legs = [legs for a, b in pairs for legs in ((a, b), (b,))] + [(100, 101), (101,)]
    output = (0,)
    assert _ties(tensor_legs, output, ()) <= canonical.TIES_ONE_BY_ONE + 2 < 39
    form = canonical_form(tensor_legs, output)
    assert tuple(form) == reference_form(tensor_legs, output)
    assert form.key == _relabelled(tensor_legs, output, form.order, form.permutations)
    renamed = [tuple(leg + 1000 for leg in legs) for legs in tensor_legs]
    assert canonical_form(renamed, (1000,)).key == form.key


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


@settings(max_examples=80, deadline=None)
@given(network=networks(), data=st.data())
def test_kinds_keep_tensors_of_a_kind_together_and_still_describe_the_network(network, data):
    tensor_legs, output = network
    count = len(tensor_legs)
    kinds = tuple(data.draw(st.lists(st.integers(0, 2), min_size=count, max_size=count)))
    form = canonical_form(tensor_legs, output, kinds)
    assert form.key == _relabelled(tensor_legs, output, form.order, form.permutations)
    assert canonical_form(tensor_legs, output, (0,) * len(tensor_legs)) == canonical_form(tensor_legs, output)
    # renamed legs and shuffled tensors, kinds carried along: the same key
    shuffle = data.draw(st.permutations(range(len(tensor_legs))))
    legs = sorted({leg for t in tensor_legs for leg in t})
    rename = dict(zip(legs, data.draw(st.permutations([100 + leg for leg in legs]))))
    moved = [tuple(rename[leg] for leg in tensor_legs[i]) for i in shuffle]
    twin = canonical_form(moved, tuple(rename[leg] for leg in output), tuple(kinds[i] for i in shuffle))
    if _ties(tensor_legs, output, kinds) == 0:  # no tie broken: the form is invariant
        assert twin.key == form.key


def _ties(tensor_legs, output, kinds):
    """How many ties the canonical form of the network broke."""
    broken = []
    original = canonical._Incidence.break_tie

    def counted(self, every_class=False):
        result = original(self, every_class)
        broken.append(result)
        return result

    canonical._FORMS.clear()
    canonical._Incidence.break_tie = counted
    try:
        canonical_form(tensor_legs, output, kinds)
    finally:
        canonical._Incidence.break_tie = original
    return sum(broken)


def test_the_bra_told_from_the_ket_spares_tie_breaks_and_keeps_isomorphic_cones_together():
    """A QAOA-like expectation: the bra mirrors the ket, so without kinds every mirror pair is tied
    until a tie-break; network_form colours the sides and needs fewer. Two edges' light cones of
    the same shape still share a form."""
    from tyxonq.circuit.contraction.canonical import network_form
    from tyxonq.circuit.contraction.network import expectation_network
    from tyxonq.circuit.operations.operation import Operation

    ring = [(q, (q + 1) % 8) for q in range(8)]
    ops = [Operation("h", (q,)) for q in range(8)]
    for _ in range(2):
        ops += [Operation("rzz", edge, (0.3,)) for edge in ring]
        ops += [Operation("rx", (q,), (0.2,)) for q in range(8)]
    cones = [expectation_network(8, ops, False, [edge], [True]) for edge in ring[:4]]
    plain = [_ties([leaf.legs for leaf in c.leaves], c.output, ()) for c in cones]
    coloured = [_ties([leaf.legs for leaf in c.leaves], c.output, [int(leaf.conj) for leaf in c.leaves])
                for c in cones]
    assert sum(coloured) < sum(plain)
    assert len({network_form(c).key for c in cones}) == 1
