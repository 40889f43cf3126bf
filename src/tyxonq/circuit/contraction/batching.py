"""Binding a group of networks that share a plan: one stacked array per canonical tensor.

Terms of one shape hold, at each canonical position, the same piece of gates of the same kind (the
RZZ of different edges, the RX of different qubits). Such a position is one gather (``K.take``)
from that kind's batch of pieces: each term's entries at its gate's row, in the order its
canonical leg layout wants, so one backend call replaces one per term and the transposes too. A
position holding constants in every term (pieces of constant gates, basis vectors, identities, in
whatever leg order each term wants them) is stacked once per backend and kept. An observable's
position whose terms all hold the same operator is bound once and repeated; any other position is
bound term by term and stacked. The decisions depend only on the networks' structure, so they are
made once per group and kept.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.cache_registry import register_function_cache
from ...numerics.collector import collector_paused
from ...numerics.moves import permute
from ...numerics.protocol import ArrayBackend
from ..operations.operation import Operation
from .binding import Binder
from .network import Leaf, operation_form
from .plan import NetworkPlan

__all__ = ["Gathered", "Constant", "group_program", "bind_group"]


@dataclass(frozen=True, eq=False)
class Gathered:
    """A canonical position holding piece ``piece_number`` of gates of one kind in every term.

    ``indices[t, e]`` is the flat index, in the kind's ``(G, entries)`` batch of pieces, of term
    ``t``'s canonical entry ``e``; ``permutations[t, e]`` the entry of term ``t``'s own piece that
    becomes its canonical entry ``e``.
    """

    gate: str
    dagger: bool
    piece_number: int
    fixed: tuple[tuple[int, int], ...]
    conj: bool
    indices: np.ndarray
    permutations: np.ndarray
    operations: tuple[int, ...]  # each term's gate


@dataclass(frozen=True, eq=False)
class Constant:
    """A canonical position holding a constant in every term; its ``(terms, entries)`` stack,
    which depends only on the structure, is built once per backend (from host constants)."""

    stacked: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)


def _constant_key(leaf: Leaf, operations: Sequence[Operation]) -> tuple | None:
    """What determines a constant leaf's values, or ``None`` for a leaf that varies."""
    if any(isinstance(value, tuple) for _, value in leaf.fixed):
        return None  # sliced at a requested bit: depends on the request
    if leaf.source in ("gate", "factor"):
        op = operations[leaf.index]
        if leaf.source == "gate" and op.params:
            return None
        return (leaf.source, op.gate, op.dagger, len(op.qubits), leaf.piece, leaf.fixed, leaf.conj)
    if leaf.source in ("basis", "identity"):
        return (leaf.source, leaf.value, leaf.fixed, leaf.conj)
    return None


@register_function_cache
@functools.lru_cache(maxsize=4096)
def _entry_order(entries: int, moves: tuple) -> np.ndarray:
    """The entries of a flattened piece in the order ``moves`` lay them out (read-only; the
    terms of a group share a few orders)."""
    order = np.arange(entries)
    if moves:
        order = np.asarray(permute(get_backend("numpy"), order, moves)).reshape(-1)
    order.setflags(write=False)
    return order


def _gathered(leaves: list[Leaf], moves: list[tuple], binder: Binder) -> Gathered | None:
    operations = binder.operations
    first = leaves[0]
    if first.source != "gate" or any(isinstance(value, tuple) for _, value in first.fixed):
        return None
    op = operations[first.index]
    if not op.params or op.gate == "unitary":
        return None
    for leaf in leaves[1:]:
        other = operations[leaf.index]
        if (leaf.source != "gate" or other.gate != op.gate or other.dagger != op.dagger
                or leaf.piece != first.piece or leaf.fixed != first.fixed or leaf.conj != first.conj):
            return None
    entries = 2 ** len(first.legs)
    permutations = np.stack([_entry_order(entries, term_moves) for term_moves in moves])
    rows = np.asarray([binder.row(leaf.index) for leaf in leaves])
    return Gathered(op.gate, op.dagger, first.piece, first.fixed, first.conj,
                    rows[:, None] * entries + permutations, permutations,
                    tuple(leaf.index for leaf in leaves))


def group_program(network_plans: Sequence[NetworkPlan], binder: Binder) -> tuple:
    """Per canonical position: :class:`Gathered`, :class:`Repeated` or ``None`` (term by term);
    kept on the shared plan, per group."""
    plan = network_plans[0].plan
    key = tuple(network_plans)
    program = plan.groups.get(key)
    if program is None:
        with collector_paused():
            program = tuple(_position_program(network_plans, binder, j) for j in range(len(plan.legs)))
        plan.groups[key] = program
    return program


def _position_program(network_plans: Sequence[NetworkPlan], binder: Binder,
                      j: int) -> Gathered | Constant | None:
    """Canonical position ``j``'s entry of :func:`group_program`."""
    leaves = [member.network.leaves[member.order[j]] for member in network_plans]
    gathered = _gathered(leaves, [member.leaf_moves[j] for member in network_plans], binder)
    if gathered is not None:
        return gathered
    constant = all(_constant_key(leaf, binder.operations) is not None for leaf in leaves)
    return Constant() if constant else None


def _canonical(K: ArrayBackend, tensor: Any, moves: Any) -> Any:
    """A bound leaf in its canonical leg layout, flattened."""
    return K.reshape(permute(K, tensor, moves) if moves else tensor, (-1,))


def _stacked_terms(binder: Binder, network_plans: Sequence[NetworkPlan], bindings: Sequence[dict],
                   j: int) -> Any:
    """Canonical position ``j`` bound term by term, in each term's canonical layout, stacked;
    observables' positions whose terms all hold one operator are bound once."""
    K, size = binder.K, len(network_plans)
    leaves = [member.network.leaves[member.order[j]] for member in network_plans]
    if (all(leaf.source == "operator" for leaf in leaves)
            and len({(leaf.value, leaf.fixed, leaf.conj, moves) for leaf, moves in
                     zip(leaves, (member.leaf_moves[j] for member in network_plans))}) == 1
            and len({(id(binding["operators"][leaf.index]), binding["operator_sizes"][leaf.index])
                     for leaf, binding in zip(leaves, bindings)}) == 1):
        network_plans, bindings = network_plans[:1], bindings[:1]
    terms = []
    for member, binding in zip(network_plans, bindings):
        tensor = binder.leaf(member.network.leaves[member.order[j]], **binding)
        moves = member.leaf_moves[j]
        terms.append(_canonical(K, tensor, moves))
    return K.stack(terms if len(terms) == size else terms * size)


def _bind_one_network(binder: Binder, member: NetworkPlan, bindings: Sequence[dict]) -> list[Any]:
    """:func:`bind_group` for terms of one network that differ only in their bindings (the
    prefixes of sequential sampling, many amplitudes): a leaf sliced at requested bits is bound
    once per combination of its bits and gathered per term; observables as in any group; every
    other leaf is bound once and gathered ``terms`` times (one backend call either way)."""
    K, size = binder.K, len(bindings)
    first = bindings[0]
    requested_bits = np.asarray([binding["bits"] for binding in bindings], dtype=np.int64).reshape(size, -1)
    everyone = np.zeros(size, dtype=np.int64)
    stacked = []
    for j in range(len(member.plan.legs)):
        leaf = member.network.leaves[member.order[j]]
        moves = member.leaf_moves[j]
        if leaf.source == "operator":
            stacked.append(_stacked_terms(binder, [member] * size, bindings, j))
            continue
        requested = sorted({value[1] for _, value in leaf.fixed if isinstance(value, tuple)})
        tables = []
        for combination in itertools.product((0, 1), repeat=len(requested)):
            bits = list(first["bits"])
            for position, bit in zip(requested, combination):
                bits[position] = bit
            tensor = binder.leaf(leaf, first["operators"], first["operator_sizes"], bits)
            tables.append(_canonical(K, tensor, moves))
        rows = everyone if not requested else \
            requested_bits[:, requested] @ (1 << np.arange(len(requested) - 1, -1, -1))
        stacked.append(K.take(K.stack(tables), rows, axis=0))
    return stacked


def bind_group(binder: Binder, network_plans: Sequence[NetworkPlan], bindings: Sequence[dict]) -> list[Any]:
    """One stacked array per canonical position, shape ``(terms, entries)``; ``bindings[t]`` is
    term ``t``'s ``operators``, ``operator_sizes`` and ``bits``."""
    K = binder.K
    size = len(network_plans)
    if all(member is network_plans[0] for member in network_plans):
        return _bind_one_network(binder, network_plans[0], bindings)
    program = group_program(network_plans, binder)
    stacked = []
    for j, entry in enumerate(program):
        if isinstance(entry, Gathered):
            op = binder.operations[entry.operations[0]]
            piece = operation_form(op).pieces[entry.piece_number]
            values = binder.piece_values(entry.gate, entry.dagger, len(op.qubits), piece,
                                         entry.piece_number, entry.fixed)
            values = K.take(K.reshape(values, (-1,)), entry.indices.reshape(-1))
            array = K.conj(values) if entry.conj else values
        elif isinstance(entry, Constant):
            array = entry.stacked.get(K)
            if array is None:  # built on the host: a cached array must hold no tracer
                host = Binder(get_backend("numpy"), binder.operations)
                array = entry.stacked[K] = K.constant(_stacked_terms(host, network_plans, bindings, j),
                                                      K.precision)
        else:
            array = _stacked_terms(binder, network_plans, bindings, j)
        stacked.append(K.reshape(array, (size, -1)))
    return stacked
