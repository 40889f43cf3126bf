"""Evaluating networks, several at once, and reverse mode through their plans.

A :class:`Request` is one network to contract (its plan and what binds it: observables, bits).
:func:`evaluate_requests` binds the leaves of many requests through one
:class:`~tyxonq.circuit.contraction.binding.Binder` (gate matrices built once) and contracts the
requests that share a plan as one batched contraction.

:func:`value_and_angle_gradients` is reverse mode without autograd, for any width: the batched
contraction runs with its vector-Jacobian product
(:meth:`~tyxonq.circuit.contraction.executor.CompiledContraction.run_with_vjp`), which gives every
leaf its environment ``dE/dleaf``; a leaf is a fixed linear function of a gate's matrix
(``leaf = matrix @ extraction``, conjugated on the bra side), so
``dE/dθ = sum(env_ket ⊙ dU/dθ) + sum(env_bra ⊙ conj(dU/dθ))`` over the gate's leaves, assembled
per gate kind on the host from the (small) leaf environments.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ..operations.gates import gate_derivatives
from ..operations.operation import Operation
from .binding import Binder, gate_leaves, piece_extraction, resolved
from .network import operation_form
from .plan import NetworkPlan, Plan, run_batched, run_plan
from .rehearsal import placeholder, record, rehearsing

__all__ = ["Request", "evaluate_requests", "value_and_angle_gradients", "contraction_cost",
           "retained_size"]


@dataclass(frozen=True)
class Request:
    """One network to contract, and what binds it besides the circuit's angles."""

    network_plan: NetworkPlan
    operators: Sequence[Any] = ()
    operator_sizes: Sequence[int] = ()
    bits: Sequence[int] = ()
    extra: dict = field(default_factory=dict, repr=False)


def _groups(requests: Sequence[Request]) -> dict[Plan, list[int]]:
    groups: dict[Plan, list[int]] = defaultdict(list)
    for index, request in enumerate(requests):
        groups[request.network_plan.plan].append(index)
    return groups


def _binder(K: Any, operations: Sequence[Operation], inputs: Any, requests: Sequence[Request]) -> Binder:
    wanted = sorted({i for request in requests for i in gate_leaves(request.network_plan.network)})
    return Binder(K, operations, wanted, inputs)


def _bound(binder: Binder, request: Request) -> list[Any]:
    return binder.bind(request.network_plan.network, request.operators, request.operator_sizes,
                       request.bits)


def evaluate_requests(K: Any, operations: Sequence[Operation], inputs: Any,
                      requests: Sequence[Request]) -> list[Any]:
    """Every request's result (backend arrays, differentiable where the backend is); requests
    that share a plan are contracted together. In a rehearsal: zeros, and the plans recorded."""
    if rehearsing():
        groups = _groups(requests)
        for members in groups.values():
            for index in members:
                record("contraction", network_plan=requests[index].network_plan, batch=len(members))
        return [placeholder(K, request.network_plan.output_shape) for request in requests]
    binder = _binder(K, operations, inputs, requests)
    results: list[Any] = [None] * len(requests)
    for members in _groups(requests).values():
        if len(members) == 1:
            request = requests[members[0]]
            results[members[0]] = run_plan(request.network_plan, K, _bound(binder, request))
            continue
        stacked = run_batched([requests[i].network_plan for i in members], K,
                              [_bound(binder, requests[i]) for i in members])
        for position, index in enumerate(members):
            results[index] = stacked[position]
    return results


def contraction_cost(requests: Sequence[Request]) -> float:
    """flops + 64 x writes of contracting every request once."""
    return float(sum(r.network_plan.plan.contraction.flops + 64 * r.network_plan.plan.contraction.writes
                     for r in requests))


def retained_size(requests: Sequence[Request]) -> int:
    """Entries kept for reverse mode: every step's operands, for the largest batch of requests
    sharing a plan."""
    largest = 0
    for plan, members in _groups(requests).items():
        leaves = sum(2 ** len(legs) for legs in plan.legs)
        largest = max(largest, len(members) * (2 * plan.contraction.writes + leaves))
    return largest


def value_and_angle_gradients(K: Any, operations: Sequence[Operation], inputs: Any,
                              requests: Sequence[Request],
                              wanted: dict[int, list[tuple[int, int]]],
                              slot_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every request's (complex) value, and its derivative with respect to every wanted angle.

    ``wanted`` maps an operation index to its ``(slot, parameter index)`` pairs. Returns the
    values, shape ``(len(requests),)``, and the gradients, shape ``(len(requests), slot_count)``
    (complex: take the real part of a real objective's).
    """
    binder = _binder(K, operations, inputs, requests)
    values = np.zeros(len(requests), dtype=complex)
    contributions: dict[tuple, list[tuple[int, int, np.ndarray]]] = defaultdict(list)
    for plan, members in _groups(requests).items():
        network_plans = [requests[i].network_plan for i in members]
        arranged = [network_plan.arrange(K, _bound(binder, requests[i]))
                    for i, network_plan in zip(members, network_plans)]
        stacked = [K.stack([K.reshape(term[j], (-1,)) for term in arranged]) for j in range(len(plan.legs))]
        contraction, _ = plan.batched(len(members))
        result, environments = contraction.run_with_vjp(K, stacked, K.ones((len(members),), K.dtype))
        values[members] = np.asarray(K.to_numpy(result)).reshape(len(members))
        host = [np.asarray(K.to_numpy(environment)).reshape(len(members), -1) for environment in environments]
        for position, (index, network_plan) in enumerate(zip(members, network_plans)):
            _collect(requests[index], network_plan, [rows[position] for rows in host], index,
                     contributions)
    gradients = np.zeros((len(requests), slot_count), dtype=complex)
    _assemble(operations, contributions, wanted, gradients)
    return values, gradients


def _collect(request: Request, network_plan: NetworkPlan, environments: list[np.ndarray], term: int,
             contributions: dict) -> None:
    """Each gate leaf's environment in its own leg layout, filed under its piece's form."""
    host = get_backend("numpy")
    network = network_plan.network
    for j, leaf_index in enumerate(network_plan.order):
        leaf = network.leaves[leaf_index]
        if leaf.source != "gate":
            continue
        environment = environments[j]
        moves = network_plan.leaf_moves[j]
        if moves:
            environment = _inverse_permute(host, environment, moves)
        op_fixed = resolved(leaf.fixed, request.bits) if leaf.fixed else ()
        contributions[(leaf.index, leaf.piece, op_fixed, leaf.conj)].append((term, leaf.index, environment))


def _inverse_permute(K: Any, array: Any, moves: Sequence) -> Any:
    for reshape, axes in reversed(moves):
        moved = tuple(reshape[a] for a in axes)
        inverse = tuple(sorted(range(len(axes)), key=lambda a: axes[a]))
        array = K.transpose(K.reshape(array, moved), inverse)
    return K.reshape(array, (-1,))


def _assemble(operations: Sequence[Operation], contributions: dict,
              wanted: dict[int, list[tuple[int, int]]], gradients: np.ndarray) -> None:
    """``dE/dθ`` from the leaves' environments, one vectorised product per gate kind."""
    host = get_backend("numpy")
    by_kind: dict[tuple, list] = defaultdict(list)
    for (index, piece_number, fixed, conj), entries in contributions.items():
        op = operations[index]
        if index not in wanted or not op.params or op.gate == "unitary":
            continue
        by_kind[(op.gate, op.dagger, piece_number, fixed, conj)].extend(entries)
    for (gate, dagger, piece_number, fixed, conj), entries in by_kind.items():
        indices = sorted({index for _, index, _ in entries})
        row = {index: r for r, index in enumerate(indices)}
        k = len(operations[indices[0]].qubits)
        piece = operation_form(operations[indices[0]]).pieces[piece_number]
        extraction = piece_extraction(piece, k, fixed)
        environments = np.stack([environment for _, _, environment in entries])
        if extraction is not None:  # a bra leaf is conj(matrix @ L) = conj(matrix) @ conj(L)
            extraction = extraction.conj() if conj else extraction
        matrix_environments = environments if extraction is None else environments @ extraction.T
        columns = np.asarray([[float(p) for p in operations[i].params] for i in indices])
        rows = np.asarray([row[index] for _, index, _ in entries])
        for j in range(columns.shape[1]):
            derivative = np.asarray(gate_derivatives(host, gate, columns, j, dagger))
            derivative = derivative.reshape(len(indices), -1)[rows]
            if conj:
                derivative = derivative.conj()
            pieces = np.sum(matrix_environments * derivative, axis=1)
            for position, (term, index, _) in enumerate(entries):
                for slot, parameter in wanted[index]:
                    if parameter == j:
                        gradients[term, slot] += pieces[position]
