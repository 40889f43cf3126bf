"""Sliced contractions: a network whose largest intermediate exceeds the memory budget,
contracted one slice at a time.

Fixing a set of inner legs to every combination of their values splits a contraction into
``2^s`` smaller ones whose sum is the result; each needs only the memory of its own largest
intermediate. The legs come from cotengra's slice finder on the plan's own path
(``ContractionTree.slice``, seeded: the same network slices alike in every process), output legs
never among them. The sliced network is the original with those legs fixed, as column reduction
fixes a requested bit: each leaf that carries a sliced leg takes it as a fixed leg whose value is
one more entry of the request's bits, so one plan serves every slice and the slices of a request
are contracted as a batch (in chunks that fit the budget) by
:mod:`~tyxonq.circuit.contraction.evaluation`, values and reverse-mode gradients alike.

A slicing is used only when all its slices together cost at most :data:`SLICED_COST_FACTOR`
times the unsliced plan (flops + 64 x writes); otherwise the refusal says what slicing would cost.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from ...numerics.moves import permutation_moves
from .canonical import network_form
from .executor import compile_path
from .network import Network
from .plan import NetworkPlan, Plan

__all__ = ["Slicing", "SLICED_COST_FACTOR", "slice_network", "find_slicing", "plan_cost"]

#: the most a sliced contraction may cost, as a multiple of the unsliced one
SLICED_COST_FACTOR = 4.0


@dataclass(frozen=True)
class Slicing:
    """The legs of a network that are sliced, the index of the request bits where their values
    go (``offset``), and the plan of the network with them fixed."""

    legs: tuple[int, ...]
    offset: int
    network_plan: NetworkPlan

    @property
    def count(self) -> int:
        return 2 ** len(self.legs)

    def requests_bits(self, bits: tuple) -> list[tuple[int, ...]]:
        """The bits of every slice of a request with ``bits``."""
        base = tuple(bits[:self.offset]) + (0,) * max(0, self.offset - len(bits))
        return [base + values for values in itertools.product((0, 1), repeat=len(self.legs))]


def plan_cost(network_plan: NetworkPlan) -> float:
    """flops + 64 x writes of one contraction along ``network_plan``."""
    contraction = network_plan.plan.contraction
    return float(contraction.flops + 64 * contraction.writes)


def bit_offset(network: Network) -> int:
    """The first request-bits index no leaf of ``network`` reads (``("bit", q)`` fixed values)."""
    used = [value[1] for leaf in network.leaves for _, value in leaf.fixed if isinstance(value, tuple)]
    return 1 + max(used, default=-1)


def slice_network(network: Network, legs: tuple[int, ...], offset: int) -> Network:
    """``network`` with ``legs`` fixed: leg ``legs[j]`` takes request bit ``offset + j`` on every
    leaf that carries it.

    Examples
    --------
    >>> from tyxonq.circuit.contraction.network import Leaf
    >>> network = Network([Leaf("basis", 0, (0, 1)), Leaf("basis", 1, (1,))], ())
    >>> [leaf.legs for leaf in slice_network(network, (1,), 0).leaves]
    [(0,), ()]
    >>> slice_network(network, (1,), 0).leaves[0].fixed
    ((1, ('bit', 0)),)
    """
    value_of = {leg: ("bit", offset + j) for j, leg in enumerate(legs)}
    leaves = []
    for leaf in network.leaves:
        if not value_of.keys() & set(leaf.legs):
            leaves.append(leaf)
            continue
        fixed_positions = {position for position, _ in leaf.fixed}
        positions = [p for p in range(len(leaf.legs) + len(leaf.fixed)) if p not in fixed_positions]
        added = tuple((positions[i], value_of[leg]) for i, leg in enumerate(leaf.legs) if leg in value_of)
        kept = tuple(leg for leg in leaf.legs if leg not in value_of)
        leaves.append(replace(leaf, legs=kept, fixed=tuple(sorted(leaf.fixed + added))))
    return Network(leaves, network.output)


def find_slicing(network_plan: NetworkPlan, target_size: int) -> Slicing | None:
    """The slicing of ``network_plan`` whose slices' largest intermediate is at most
    ``target_size`` entries, or ``None`` when there is none (cotengra missing, or the output alone
    larger than the target). The slices keep the plan's own path and tensor order, only the
    sliced legs gone, so each is as narrow as cotengra's sliced tree."""
    try:
        from cotengra import ContractionTree
    except ImportError:
        return None
    network, plan = network_plan.network, network_plan.plan
    if 2 ** len(plan.output) > target_size:
        return None
    sizes = {leg: 2 for legs in plan.legs for leg in legs} | {leg: 2 for leg in plan.output}
    tree = ContractionTree.from_path([tuple(legs) for legs in plan.legs], tuple(plan.output), sizes,
                                     path=[tuple(step) for step in plan.path])
    sliced = tree.slice(target_size=target_size, allow_outer=False, seed=0)
    if not sliced.sliced_inds or sliced.max_size() > target_size:
        return None
    cut = frozenset(sliced.sliced_inds)
    names = _leg_names(network, plan)
    legs = tuple(sorted(names[leg] for leg in cut))
    offset = bit_offset(network)
    sliced_network = slice_network(network, legs, offset)
    return Slicing(legs, offset, _plan_without(network_plan, sliced_network, cut, names))


def _plan_without(network_plan: NetworkPlan, sliced_network: Network, cut: frozenset,
                  names: dict) -> NetworkPlan:
    """The plan of ``sliced_network``: the unsliced plan's tensors, order and path, the ``cut``
    (canonical) legs gone."""
    plan = network_plan.plan
    legs = tuple(tuple(leg for leg in tensor if leg not in cut) for tensor in plan.legs)
    sizes = {leg: 2 for tensor in legs for leg in tensor} | {leg: 2 for leg in plan.output}
    contraction = compile_path(legs, plan.path, sizes, plan.max_ndim, plan.output)
    moves = permutation_moves(contraction.result_legs, plan.output, sizes, plan.max_ndim)
    sliced_plan = Plan(legs, plan.output, plan.path, contraction, tuple(moves), plan.max_ndim,
                       plan.simplification_steps, 0.0, f"{plan.finder}, sliced")
    leaf_moves = []
    for j, leaf_index in enumerate(network_plan.order):
        current = sliced_network.leaves[leaf_index].legs
        target = tuple(names[leg] for leg in legs[j])
        sizes_of_leaf = {leg: 2 for leg in current}
        leaf_moves.append(tuple(permutation_moves(current, target, sizes_of_leaf, plan.max_ndim)))
    return NetworkPlan(sliced_network, sliced_plan, network_plan.order, tuple(leaf_moves),
                       network_plan.output_shape, network_plan.key + ("sliced", tuple(sorted(cut))))


def _leg_names(network: Network, plan: Any) -> dict[int, int]:
    """Canonical leg label -> the network's own label."""
    leaf_legs = [leaf.legs for leaf in network.leaves]
    form = network_form(network)
    names = dict(zip(plan.output, network.output))
    for canonical_legs, leaf, permutation in zip(plan.legs, form.order, form.permutations):
        current = leaf_legs[leaf]
        own = current if permutation is None else tuple(current[p] for p in permutation)
        names.update(zip(canonical_legs, own))
    return names
