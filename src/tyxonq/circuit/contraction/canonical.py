"""Canonical structural keys: networks that are equal up to relabelling share one plan.

Most terms of a Hamiltonian on a regular lattice or graph have light cones of the same shape (every
bulk term of a translation-invariant chain, most edges of a random regular graph), but their
networks come out with different leg labels, tensor orders and leg orders (``RZZ(a, c)`` or
``RZZ(c, a)``). :func:`canonical_form` orders a network's tensors, orders each tensor's legs and
renames the legs by colour refinement (Weisfeiler-Lehman on the tensor-leg incidence, vectorised:
a colour is a 64-bit hash, a multiset of colours their wrapped sum; output legs are told apart by
position; a tensor may start from a colour of its own, such as the bra side of an expectation
apart from its ket, which its mirror image could otherwise only be told from by a tie-break),
breaking remaining ties by individualising one member of the first tied class and refining again.
The key is the whole relabelled structure, so equal keys mean identical networks and a shared
plan is always exact; a tie broken differently in two isomorphic networks (or a hash collision)
only costs a second plan. Binding transposes the tensors whose legs were reordered.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics.cache_registry import register_cache

__all__ = ["canonical_form", "network_form", "relabelled_structure", "CanonicalForm", "CANONICAL_MAX_TENSORS"]

Legs = tuple[int, ...]
#: Larger networks keep their own order (canonicalising costs more than it can save there: such
#: networks are whole states or wide amplitudes, one per circuit).
CANONICAL_MAX_TENSORS = 1500

#: Ties broken one at a time (each followed by a refinement) before the rest are all broken at once
#: (every tied member a colour of its own, in index order): a light cone of a lattice or graph has
#: a few (the QAOA rows: at most 11, their 150 cones sharing 6 / 42 forms), a noisy density-matrix
#: network a hundred or more, which one at a time cost more than its plan (the 10-qubit noisy
#: energy's 22 cones: 0.33 s -> 0.09 s, none of them shared either way). A tie broken differently
#: in two isomorphic networks only costs a second plan.
TIES_ONE_BY_ONE = 16

_MULTIPLIERS = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
#: canonical forms kept (networks, keyed by their legs)
_FORMS_LIMIT = 1024
_FORMS: dict[tuple, CanonicalForm] = {}
register_cache("canonical forms", lambda: len(_FORMS), _FORMS.clear)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise (wrapping uint64 arithmetic), in place: ``x`` is a
    temporary of the caller's, consumed."""
    x ^= x >> _SHIFTS[0]
    x *= _MULTIPLIERS[0]
    x ^= x >> _SHIFTS[1]
    x *= _MULTIPLIERS[1]
    x ^= x >> _SHIFTS[2]
    return x


def _distinct(values: np.ndarray) -> int:
    """How many distinct values (a sort and a comparison: np.unique costs twice that)."""
    if values.size < 2:
        return int(values.size)
    ordered = np.sort(values)
    return 1 + int(np.count_nonzero(ordered[1:] != ordered[:-1]))


class CanonicalForm(tuple):
    """``(key, order, permutations)``: the relabelled structure ``(tensor legs, output legs)``;
    ``order[j]``, the tensor at canonical position ``j``; ``permutations[j]``, the transpose
    taking that tensor's legs to their canonical order (``None``: already in order)."""

    @property
    def key(self) -> tuple:
        return self[0]

    @property
    def order(self) -> tuple[int, ...]:
        return self[1]

    @property
    def permutations(self) -> tuple[tuple[int, ...] | None, ...]:
        return self[2]


class _Incidence:
    """Which legs each tensor holds, as flat arrays, and colour refinement over them."""

    def __init__(self, tensor_legs: Sequence[Legs], output: Legs, kinds: Sequence[int]) -> None:
        names = {leg: i for i, leg in enumerate(dict.fromkeys(leg for legs in tensor_legs for leg in legs))}
        self.leg_names = list(names)
        self.tensor_of = np.asarray([t for t, legs in enumerate(tensor_legs) for _ in legs], dtype=np.int64)
        self.leg_of = np.asarray([names[leg] for legs in tensor_legs for leg in legs], dtype=np.int64)
        self.tensors, self.legs = len(tensor_legs), len(names)
        # sums over each tensor's legs and each leg's tensors as reduceat over contiguous runs
        # (tensor_of is grouped already; leg_of is sorted once): np.add.at costs several times more
        self.tensor_starts = np.searchsorted(self.tensor_of, np.arange(self.tensors))
        self.leg_order = np.argsort(self.leg_of, kind="stable")
        self.leg_starts = np.searchsorted(self.leg_of[self.leg_order], np.arange(self.legs))
        self.every_tensor_holds_a_leg = all(tensor_legs)  # reduceat's runs are then all non-empty
        position = {leg: p for p, leg in enumerate(output)}
        with np.errstate(over="ignore"):
            self.leg_colour = _mix(np.asarray([position.get(leg, -1) + 2 for leg in names], dtype=np.uint64))
            self.tensor_colour = _mix(np.asarray([len(legs) + 1 for legs in tensor_legs], dtype=np.uint64)
                                      + np.asarray(kinds or 0, dtype=np.uint64) * np.uint64(1 << 20)
                                      + np.uint64(1 << 40))

    def classes(self) -> int:
        return _distinct(self.tensor_colour) + _distinct(self.leg_colour)

    def refine(self) -> None:
        """Refine until the number of colour classes stops growing."""
        classes = self.classes()
        with np.errstate(over="ignore"):
            while True:
                sums = self._tensor_sums(_mix(self.leg_colour[self.leg_of] + np.uint64(7)))
                self.tensor_colour = _mix(self.tensor_colour * np.uint64(3) + sums)
                held = _mix(self.tensor_colour[self.tensor_of] + np.uint64(11))
                sums = np.add.reduceat(held[self.leg_order], self.leg_starts)  # every leg is held
                self.leg_colour = _mix(self.leg_colour * np.uint64(5) + sums)
                refined = self.classes()
                if refined == classes:
                    return
                classes = refined

    def _tensor_sums(self, values: np.ndarray) -> np.ndarray:
        """Each tensor's sum of ``values`` (one per leg it holds; wrapping uint64)."""
        if self.every_tensor_holds_a_leg:
            return np.add.reduceat(values, self.tensor_starts)
        sums = np.zeros(self.tensors, dtype=np.uint64)
        np.add.at(sums, self.tensor_of, values)  # tensors without legs (scalars): rare
        return sums

    def break_tie(self, every_class: bool = False) -> bool:
        """Give one member of the first tied class (tensors, then legs) a colour of its own; with
        ``every_class``, every member of every tied class of that kind one (in index order)."""
        for colours in (self.tensor_colour, self.leg_colour):
            order = np.argsort(colours, kind="stable")  # equal colours: lowest index first
            ordered = colours[order]
            equal = ordered[1:] == ordered[:-1]  # position p tied with p + 1
            if not equal.any():
                continue
            if every_class:
                positions = np.arange(len(ordered))
                starts = np.maximum.accumulate(np.where(np.r_[True, ~equal], positions, 0))
                tied = np.flatnonzero(np.r_[equal, False] | np.r_[False, equal])
                offsets = (positions[tied] - starts[tied] + 1).astype(np.uint64)
            else:  # the smallest tied colour; its member of lowest index
                tied, offsets = np.flatnonzero(equal)[:1], np.ones(1, dtype=np.uint64)
            with np.errstate(over="ignore"):
                colours[order[tied]] = _mix(ordered[tied] + offsets * np.uint64(13))
            return True
        return False


def canonical_form(tensor_legs: Sequence[Legs], output: Legs, kinds: Sequence[int] = ()) -> CanonicalForm:
    """The :class:`CanonicalForm` of a network given by its tensors' legs and its output legs
    (kept for the last :data:`_FORMS_LIMIT` networks: a route choice costs the networks that
    planning then looks up). ``kinds`` (small non-negative integers, one per tensor, or empty)
    tell tensors apart from the start: the relabelling maps a tensor only to one of its kind, so
    isomorphic networks still share a form when their kinds correspond, and it takes fewer
    tie-breaks (each one a refinement) to find it.

    Examples
    --------
    >>> a = canonical_form([(7, 8), (8,), (7,)], ())
    >>> b = canonical_form([(1,), (1, 2), (2,)], ())
    >>> a.key == b.key, b.permutations[0] in (None, (1, 0))
    (True, True)
    """
    key = (tuple(map(tuple, tensor_legs)), tuple(output), tuple(kinds))
    form = _FORMS.get(key)
    if form is None:
        form = _canonical_form(*key)
        if len(_FORMS) >= _FORMS_LIMIT:
            _FORMS.clear()
        _FORMS[key] = form
    return form


def network_form(network: Any) -> CanonicalForm:
    """The :class:`CanonicalForm` of a contraction network (its leaves' legs and its output
    legs), the bra side of an expectation told from its ket: the form every plan of a network is
    found and bound by.

    Examples
    --------
    >>> from tyxonq.circuit.contraction.network import expectation_network
    >>> from tyxonq.circuit.operations.operation import Operation
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1))]
    >>> form = network_form(expectation_network(2, ops, False, [(1,)], [True]))
    >>> sorted(form.order) == list(range(len(form.order)))
    True
    """
    return canonical_form([leaf.legs for leaf in network.leaves], network.output,
                          [int(leaf.conj) for leaf in network.leaves])


def relabelled_structure(tensor_legs: Sequence[Legs], output: Legs) -> tuple:
    """The network's legs renamed in order of first appearance, tensors and legs kept in their
    order: equal for networks built alike (one builder, the same operations on other qubits), at
    the cost of one pass over the legs; isomorphic networks built in another order need
    :func:`canonical_form`.

    Examples
    --------
    >>> relabelled_structure([(7, 8), (8,)], (7,)) == relabelled_structure([(2, 5), (5,)], (2,))
    True
    >>> relabelled_structure([(7, 8), (8,)], ()) == relabelled_structure([(8,), (7, 8)], ())
    False
    """
    count = len(tensor_legs)
    return _relabelled(tensor_legs, output, range(count), (None,) * count)


def _canonical_form(tensor_legs: tuple[Legs, ...], output: Legs, kinds: tuple[int, ...]) -> CanonicalForm:
    count = len(tensor_legs)
    if count > CANONICAL_MAX_TENSORS or count == 0:
        order = tuple(range(count))
        return CanonicalForm((_relabelled(tensor_legs, output, order, [None] * count), order,
                              (None,) * count))
    incidence = _Incidence(tensor_legs, output, kinds)
    incidence.refine()
    breaks = 0
    while incidence.break_tie(every_class=breaks >= TIES_ONE_BY_ONE):
        breaks += 1
        incidence.refine()
    order = tuple(int(i) for i in np.argsort(incidence.tensor_colour, kind="stable"))
    leg_colour = dict(zip(incidence.leg_names, incidence.leg_colour.tolist()))
    permutations = []
    for i in order:
        legs = tensor_legs[i]
        permutation = tuple(sorted(range(len(legs)), key=lambda p: leg_colour[legs[p]]))
        permutations.append(None if permutation == tuple(range(len(legs))) else permutation)
    return CanonicalForm((_relabelled(tensor_legs, output, order, permutations), order,
                          tuple(permutations)))


def _relabelled(tensor_legs: Sequence[Legs], output: Legs, order: Sequence[int],
                permutations: Sequence[tuple[int, ...] | None]) -> tuple:
    names: dict[int, int] = {}
    legs = []
    for i, permutation in zip(order, permutations):
        ordered = tensor_legs[i] if permutation is None else tuple(tensor_legs[i][p] for p in permutation)
        legs.append(tuple(names.setdefault(leg, len(names)) for leg in ordered))
    return tuple(legs), tuple(names.setdefault(leg, len(names)) for leg in output)
