"""Canonical structural keys: networks that are equal up to relabelling share one plan.

Most terms of a Hamiltonian on a regular lattice or graph have light cones of the same shape (every
bulk term of a translation-invariant chain, most edges of a random regular graph), but their
networks come out with different leg labels, tensor orders and leg orders (``RZZ(a, c)`` or
``RZZ(c, a)``). :func:`canonical_form` orders a network's tensors, orders each tensor's legs and
renames the legs by colour refinement (Weisfeiler-Lehman on the tensor-leg incidence; output legs
are told apart by position), breaking remaining ties by individualising one member of the first
tied class and refining again. The key is the whole relabelled structure, so equal keys mean
identical networks and a shared plan is always exact; a tie broken differently in two isomorphic
networks only costs a second plan. Binding transposes the tensors whose legs were reordered.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

__all__ = ["canonical_form", "CanonicalForm", "CANONICAL_MAX_TENSORS"]

Legs = tuple[int, ...]
#: Larger networks keep their own order (canonicalising costs more than it can save there: such
#: networks are whole states or wide amplitudes, one per circuit).
CANONICAL_MAX_TENSORS = 1500

_OUTPUT, _TENSOR, _TENSOR_CHOSEN, _LEG_CHOSEN = 1, 2, 3, 4


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


def _refine(tensor_legs: Sequence[Legs], tensor_colour: list[int], leg_colour: dict[int, int],
            holders: dict[int, list[int]]) -> tuple[list[int], dict[int, int]]:
    """Refine colours until the number of classes stops growing."""
    classes = len(set(tensor_colour)) + len(set(leg_colour.values()))
    while True:
        tensor_colour = [hash((tensor_colour[i], tuple(sorted(leg_colour[leg] for leg in legs))))
                         for i, legs in enumerate(tensor_legs)]
        leg_colour = {leg: hash((colour, tuple(sorted(tensor_colour[i] for i in holders[leg]))))
                      for leg, colour in leg_colour.items()}
        refined = len(set(tensor_colour)) + len(set(leg_colour.values()))
        if refined == classes:
            return tensor_colour, leg_colour
        classes = refined


def _first_tie(colours: dict) -> tuple | None:
    """The member of the tied class with the smallest colour that comes first, or ``None``."""
    members: dict[int, list] = defaultdict(list)
    for item, colour in colours.items():
        members[colour].append(item)
    tied = [colour for colour, group in members.items() if len(group) > 1]
    if not tied:
        return None
    colour = min(tied)
    return members[colour][0], colour


def canonical_form(tensor_legs: Sequence[Legs], output: Legs) -> CanonicalForm:
    """The :class:`CanonicalForm` of a network given by its tensors' legs and its output legs.

    Examples
    --------
    >>> a = canonical_form([(7, 8), (8,), (7,)], ())
    >>> b = canonical_form([(1,), (1, 2), (2,)], ())
    >>> a.key == b.key, b.permutations[0] in (None, (1, 0))
    (True, True)
    """
    count = len(tensor_legs)
    if count > CANONICAL_MAX_TENSORS:
        order = tuple(range(count))
        return CanonicalForm((_relabelled(tensor_legs, output, order, [None] * count), order,
                              (None,) * count))
    holders: dict[int, list[int]] = defaultdict(list)
    for i, legs in enumerate(tensor_legs):
        for leg in legs:
            holders[leg].append(i)
    position_in_output = {leg: p for p, leg in enumerate(output)}
    leg_colour = {leg: hash((_OUTPUT, position_in_output.get(leg, -1))) for leg in holders}
    tensor_colour = [hash((_TENSOR, len(legs))) for legs in tensor_legs]
    tensor_colour, leg_colour = _refine(tensor_legs, tensor_colour, leg_colour, holders)
    while True:
        tie = _first_tie(dict(enumerate(tensor_colour)))
        if tie is not None:
            tensor_colour = list(tensor_colour)
            tensor_colour[tie[0]] = hash((_TENSOR_CHOSEN, tie[1]))
        else:
            tie = _first_tie(leg_colour)
            if tie is None:
                break
            leg_colour = dict(leg_colour)
            leg_colour[tie[0]] = hash((_LEG_CHOSEN, tie[1]))
        tensor_colour, leg_colour = _refine(tensor_legs, tensor_colour, leg_colour, holders)
    order = tuple(sorted(range(count), key=lambda i: tensor_colour[i]))
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
