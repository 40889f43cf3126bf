"""Evaluating networks, several at once, and reverse mode through their plans: the orchestrator of
the contraction pipeline, requests -> plans (:mod:`~tyxonq.circuit.contraction.plan`) -> bound
leaves (:mod:`~tyxonq.circuit.contraction.binding`, :mod:`~tyxonq.circuit.contraction.batching`)
-> execution (:mod:`~tyxonq.circuit.contraction.execution`) -> results.

A :class:`Request` is one network to contract (its plan and what binds it: observables, bits).
:func:`evaluate_requests` binds the leaves of many requests through one
:class:`~tyxonq.circuit.contraction.binding.Binder` (gate matrices built once) and contracts the
requests that share a plan as one batched contraction
(:mod:`~tyxonq.circuit.contraction.batching`).

:func:`value_and_angle_gradients` is reverse mode without autograd, for any width: the batched
contraction runs with its vector-Jacobian product
(:meth:`~tyxonq.circuit.contraction.executor.CompiledContraction.run_with_vjp`), which gives every
leaf its environment ``dE/dleaf``; a leaf is a fixed linear function of a gate's matrix
(``leaf = matrix @ extraction``, conjugated on the bra side), so
``dE/dθ = sum(env_ket ⊙ dU/dθ) + sum(env_bra ⊙ conj(dU/dθ))`` over the gate's leaves, assembled
per gate kind on the host from the (small) leaf environments.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.memory import fits_in_memory, memory_budget
from ...numerics.moves import Move, permute
from ...numerics.progress import progress
from ...numerics.protocol import ArrayBackend
from ..operations.gates import gate_derivatives
from ..operations.operation import Operation
from .batching import Gathered, bind_group, group_program
from .binding import Binder, piece_extraction, resolved
from .distribution import shared_total
from .execution import run_contraction, run_plan
from .executor import CompiledContraction
from .host_route import host_program_results, host_twin_for
from .network import operation_form
from .plan import NetworkPlan, Plan
from .rehearsal import placeholder, record, rehearsing

__all__ = ["Request", "evaluate_requests", "evaluate_scalars", "value_and_angle_gradients",
           "contraction_cost", "retained_size", "capturing_requests", "CapturedEvaluation"]


@dataclass(frozen=True)
class Request:
    """One network to contract, and what binds it besides the circuit's angles."""

    network_plan: NetworkPlan
    operators: Sequence[Any] = ()
    operator_sizes: Sequence[int] = ()
    bits: Sequence[int] = ()

    @property
    def binding(self) -> dict:
        return {"operators": self.operators, "operator_sizes": self.operator_sizes, "bits": self.bits}


def _groups(requests: Sequence[Request]) -> dict[Plan, list[int]]:
    groups: dict[Plan, list[int]] = defaultdict(list)
    for index, request in enumerate(requests):
        groups[request.network_plan.plan].append(index)
    return groups


def _batches(K: ArrayBackend, requests: Sequence[Request],
             entries_per_member: Any) -> list[tuple[Plan, list[int]]]:
    """The requests grouped by plan, each group in batches whose ``entries_per_member(plan)``
    times their size fits the memory budget (every group in one batch where it fits)."""
    batches = []
    for plan, members in _groups(requests).items():
        per_member = max(1, entries_per_member(plan))
        if fits_in_memory(K, len(members) * per_member):  # the common case: no device query
            batches.append((plan, members))
            continue
        size = max(1, int(memory_budget(K) / (16 if K.precision == "complex128" else 8) // per_member))
        batches += [(plan, members[start:start + size]) for start in range(0, len(members), size)]
    return batches


def _expanded(requests: Sequence[Request]) -> tuple[list[Request], list[int] | None]:
    """Each sliced request as its slices (the sliced network's plan, the slice values appended to
    its bits), and the request each came from (``None``: no request is sliced)."""
    if all(request.network_plan.slicing is None for request in requests):
        return list(requests), None
    expanded, owners = [], []
    for index, request in enumerate(requests):
        slicing = request.network_plan.slicing
        if slicing is None:
            expanded.append(request)
            owners.append(index)
            continue
        for bits in slicing.requests_bits(tuple(request.bits)):
            expanded.append(Request(slicing.network_plan, request.operators, request.operator_sizes, bits))
            owners.append(index)
    return expanded, owners


def _forward_entries(plan: Plan) -> int:
    """Entries a batch member holds at once in a forward contraction: its largest intermediate,
    and the operands it is made from."""
    return 3 * plan.largest_tensor_size


def _reverse_entries(plan: Plan) -> int:
    """Entries a batch member keeps for reverse mode (see :func:`retained_size`)."""
    return 2 * plan.contraction.writes + sum(2 ** len(legs) for legs in plan.legs)


def _batched(binder: Binder, plan: Plan, members: list[Request]) -> tuple[CompiledContraction, tuple, list]:
    """The batched contraction of a group, its output moves, and the group's stacked leaves."""
    contraction, moves = plan.batched(len(members))
    stacked = bind_group(binder, [r.network_plan for r in members], [r.binding for r in members])
    return contraction, moves, stacked


@dataclass(frozen=True)
class CapturedEvaluation:
    """One :func:`evaluate_requests` call seen by :func:`capturing_requests`."""

    operations: Sequence[Operation]
    inputs: Any
    requests: tuple[Request, ...]


_CAPTURED: ContextVar[list[CapturedEvaluation] | None] = ContextVar("tyxonq_captured_requests", default=None)


@contextlib.contextmanager
def capturing_requests() -> Iterator[list[CapturedEvaluation]]:
    """Within the block, every :func:`evaluate_requests` call is also recorded (its operations,
    inputs and requests) in the list yielded: what a compiled result replays."""
    captured: list[CapturedEvaluation] = []
    token = _CAPTURED.set(captured)
    try:
        yield captured
    finally:
        _CAPTURED.reset(token)


def evaluate_requests(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                      requests: Sequence[Request], columns: dict | None = None,
                      numbers_only: bool = False) -> list[Any]:
    """Every request's result (backend arrays, differentiable where the backend is); requests
    that share a plan are contracted together. In a rehearsal: zeros, and the plans recorded. In
    a distributed run the requests' slices are shared between the ranks
    (:mod:`~tyxonq.circuit.contraction.distribution`). ``columns``: every gate kind's angles in
    place of the operations' own (:class:`~tyxonq.circuit.contraction.binding.Binder`);
    ``numbers_only``: the operations hold plain host numbers only (:func:`host_twin_for`)."""
    if (captured := _CAPTURED.get()) is not None:
        captured.append(CapturedEvaluation(operations, inputs, tuple(requests)))
    outputs = requests
    requests, owners = _expanded(requests)
    if rehearsing():
        for members in _groups(requests).values():
            for index in members:
                record("contraction", network_plan=requests[index].network_plan, batch=len(members))
        for request in outputs:
            if request.network_plan.slicing is not None:
                record("slices", count=request.network_plan.slicing.count)
        return [placeholder(K, request.network_plan.output_shape) for request in outputs]
    sliced = owners is not None
    owners = list(range(len(requests))) if owners is None else owners
    shapes = [request.network_plan.output_shape for request in outputs]
    sizes = [int(np.prod(shape)) for shape in shapes]

    def share(mine: list[int]) -> np.ndarray:
        results = _contracted(K, operations, inputs, [requests[i] for i in mine], sliced, columns,
                              numbers_only=numbers_only)
        totals = _summed(K, results, [owners[i] for i in mine], len(outputs))
        return np.concatenate([np.zeros(size, dtype=complex) if total is None else
                               np.asarray(K.to_numpy(total), dtype=complex).reshape(-1)
                               for total, size in zip(totals, sizes)])

    total = shared_total(K, operations, inputs, requests, share, sum(sizes), "a contraction's share")
    if total is None:
        results = _contracted(K, operations, inputs, requests, sliced, columns, numbers_only=numbers_only)
        return _summed(K, results, owners, len(outputs))
    starts = np.cumsum([0] + sizes)
    return [K.asarray(total[start:start + size].reshape(shape), K.dtype)
            for start, size, shape in zip(starts, sizes, shapes)]


def _contracted(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                requests: Sequence[Request], sliced: bool = False, columns: dict | None = None,
                hosted: bool = True, numbers_only: bool = False) -> list[Any]:
    """Every (unsliced) request's result, requests that share a plan contracted together (on the
    host twin where that only changes the speed, eagerly or called back from a compiled program:
    :mod:`~tyxonq.circuit.contraction.host_route`); the slices of ``sliced`` requests counted on a
    progress bar."""
    if columns is None and hosted:
        def here(backend: ArrayBackend, ops: Sequence[Operation], given: Any,
                 members: Sequence[Request]) -> list:
            return _contracted(backend, ops, given, members, sliced, hosted=False)

        if (results := host_program_results(K, operations, inputs, requests, here)) is not None:
            return results
    if columns is None and (host := host_twin_for(K, operations, inputs, requests, numbers_only)) is not None:
        twin, host_operations, host_inputs, host_requests = host
        results = _contracted(twin, host_operations, host_inputs, host_requests, sliced,
                              numbers_only=numbers_only)
        return [K.asarray(result) for result in results]
    binder = Binder(K, operations, inputs, columns, numbers_only)
    results: list[Any] = [None] * len(requests)
    with progress(len(requests), "contracting slices", enabled=None if sliced else False,
                  unit="slice") as report:
        for plan, members in _batches(K, requests, _forward_entries):
            if len(members) == 1:
                request = requests[members[0]]
                results[members[0]] = run_plan(request.network_plan, K,
                                               binder.bind(request.network_plan.network, **request.binding))
                report.advance()
                continue
            contraction, moves, stacked = _batched(binder, plan, [requests[i] for i in members])
            shape = (len(members),) + requests[members[0]].network_plan.output_shape
            result = K.reshape(permute(K, run_contraction(contraction, K, stacked), moves), shape)
            for position, index in enumerate(members):
                results[index] = result[position]
            report.advance(len(members))
    return results


def _summed(K: ArrayBackend, results: list[Any], owners: list[int], count: int) -> list[Any]:
    """The results of the slices of each request, added up (in slice order); ``None`` for a
    request none of ``results`` belongs to."""
    if owners == list(range(count)):
        return results
    totals: list[Any] = [None] * count
    for result, owner in zip(results, owners):
        totals[owner] = result if totals[owner] is None else totals[owner] + result
    return totals


def evaluate_scalars(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                     requests: Sequence[Request], numbers_only: bool = False) -> Any:
    """The scalar results of requests (expectations, amplitudes) as one backend vector, in request
    order: each group's batched result is used as it comes, not split and stacked again. In a
    distributed run the requests are shared between the ranks. ``numbers_only``: as
    :func:`evaluate_requests`'."""
    if rehearsing():
        evaluate_requests(K, operations, inputs, requests)
        return K.zeros((len(requests),), K.dtype)
    if any(request.network_plan.slicing is not None for request in requests):
        return K.stack([K.reshape(value, ()) for value in evaluate_requests(K, operations, inputs, requests,
                                                                           numbers_only=numbers_only)])

    def share(mine: list[int]) -> np.ndarray:
        values = np.zeros(len(requests), dtype=complex)
        if mine:
            mine_only = [requests[i] for i in mine]
            values[mine] = np.asarray(K.to_numpy(_scalars(K, operations, inputs, mine_only, numbers_only)))
        return values

    total = shared_total(K, operations, inputs, requests, share, len(requests), "a Pauli sum's share")
    if total is None:
        return _scalars(K, operations, inputs, requests, numbers_only)
    return K.asarray(total, K.dtype)


def _scalars(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
             requests: Sequence[Request], numbers_only: bool = False) -> Any:
    if (host := host_twin_for(K, operations, inputs, requests, numbers_only)) is not None:
        twin, host_operations, host_inputs, host_requests = host
        return K.asarray(_scalars(twin, host_operations, host_inputs, host_requests, numbers_only))
    binder = Binder(K, operations, inputs, numbers_only=numbers_only)
    pieces, order = [], []
    for plan, members in _batches(K, requests, _forward_entries):
        if len(members) == 1:
            request = requests[members[0]]
            result = run_plan(request.network_plan, K, binder.bind(request.network_plan.network,
                                                                  **request.binding))
        else:
            contraction, _, stacked = _batched(binder, plan, [requests[i] for i in members])
            result = run_contraction(contraction, K, stacked)
        pieces.append(K.reshape(result, (len(members),)))
        order += members
    values = pieces[0] if len(pieces) == 1 else K.concatenate(pieces)
    return values if order == sorted(order) else K.take(values, np.argsort(order))


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


def value_and_angle_gradients(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                              requests: Sequence[Request],
                              wanted: dict[int, list[tuple[int, int]]],
                              slot_count: int,
                              weights: np.ndarray | None = None,
                              readouts: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every request's (complex) value, and its derivative with respect to every wanted angle.

    ``wanted`` maps an operation index to its ``(slot, parameter index)`` pairs. Returns the
    values, shape ``(len(requests),)``, and the gradients, shape ``(len(requests), slot_count)``
    (complex: take the real part of a real objective's); with ``weights`` (one per request), their
    weighted sums instead, shapes ``(1,)`` and ``(1, slot_count)``. ``readouts`` (one host array
    per request, of its output's shape): a request's value is ``sum(readout * result)`` instead
    of its (scalar) result, a linear reading of a larger result -- a Pauli sum read from a whole
    density matrix -- differentiated through the one contraction. In a distributed run the
    requests (and their slices) are shared between the ranks and the results summed over them
    (weighted first: one value and one gradient travel, whatever the number of terms).
    """
    count = len(requests)
    requests, owners = _expanded(requests)
    owners = list(range(len(requests))) if owners is None else owners
    if readouts is not None:  # each slice read as its request is
        readouts = [np.asarray(readouts[owner]) for owner in owners]

    def weighted(values: np.ndarray, gradients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if weights is None:
            return values, gradients
        return np.asarray([weights @ values]), (weights @ gradients)[None]

    size = count if weights is None else 1

    def share(mine: list[int]) -> np.ndarray:
        values, gradients = weighted(*_values_and_gradients(
            K, operations, inputs, [requests[i] for i in mine], [owners[i] for i in mine], count, wanted,
            slot_count, None if readouts is None else [readouts[i] for i in mine]))
        return np.concatenate([values, gradients.reshape(-1)])

    # what the ranks compare; one contraction is never shared (shared_work), so its readout, a whole
    # density matrix's worth of entries, is not copied for nothing
    agreed = weights if readouts is None or len(requests) < 2 else np.concatenate(
        [np.ravel(weights if weights is not None else [])] + [np.ravel(r) for r in readouts])
    total = shared_total(K, operations, inputs, requests, share, size * (1 + slot_count),
                         "a gradient's share", host_results=True, weights=agreed)
    if total is None:
        return weighted(*_values_and_gradients(K, operations, inputs, requests, owners, count, wanted,
                                               slot_count, readouts))
    return total[:size], total[size:].reshape(size, slot_count)


def _values_and_gradients(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                          requests: Sequence[Request], owners: list[int], count: int,
                          wanted: dict[int, list[tuple[int, int]]],
                          slot_count: int,
                          readouts: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reverse mode through (unsliced) requests, each added to its owner's value and gradient
    (``readouts``: see :func:`value_and_angle_gradients`)."""
    binder = Binder(K, operations, inputs)
    values = np.zeros(len(requests), dtype=complex)
    contributions: dict[tuple, list] = defaultdict(list)
    sliced = owners != list(range(count))
    with progress(len(requests), "gradient: slices", enabled=None if sliced else False,
                  unit="slice") as report:
        for plan, members in _batches(K, requests, _reverse_entries):
            group = [requests[i] for i in members]
            contraction, moves, stacked = _batched(binder, plan, group)
            program = group_program([r.network_plan for r in group], binder)
            rows = len(members)
            cotangent = K.ones((rows,), K.dtype) if readouts is None else _raw_layout(
                K, np.stack([readouts[i] for i in members]), moves)
            result, environments = contraction.run_with_vjp(K, stacked, cotangent,
                                                            _angle_positions(program, group, binder))
            if readouts is None:
                values[members] = np.asarray(K.to_numpy(result)).reshape(rows)
            else:  # the readings: sum(readout * result), member by member (in the raw layout)
                values[members] = np.asarray(K.to_numpy(K.sum(
                    K.reshape(cotangent, (rows, -1)) * K.reshape(result, (rows, -1)), axis=1)))
            host = [None if environment is None else np.asarray(K.to_numpy(environment)).reshape(rows, -1)
                    for environment in environments]
            _collect(program, group, members, host, binder, contributions)
            report.advance(len(members))
    gradients = np.zeros((len(requests), slot_count), dtype=complex)
    _assemble(operations, contributions, wanted, gradients)
    if owners == list(range(count)):
        return values, gradients
    total_values = np.zeros(count, dtype=complex)
    total_gradients = np.zeros((count, slot_count), dtype=complex)
    np.add.at(total_values, owners, values)
    np.add.at(total_gradients, owners, gradients)
    return total_values, total_gradients


def _raw_layout(K: ArrayBackend, outputs: np.ndarray, moves: Sequence[Move]) -> Any:
    """Host arrays in a batched contraction's output layout (``(members,) + output_shape``),
    laid out as its raw result, before the ``moves`` that shape it: a flat backend array."""
    host = get_backend("numpy")
    return K.asarray(np.ascontiguousarray(_inverse_permute(host, outputs, moves, (-1,))), K.dtype)


def _angle_positions(program: tuple, group: list[Request], binder: Binder) -> list[int]:
    """The canonical positions holding a parametrised gate's piece in some term."""
    def angled(j: int) -> bool:
        for request in group:
            leaf = request.network_plan.network.leaves[request.network_plan.order[j]]
            op = binder.operations[leaf.index] if leaf.source == "gate" else None
            if op is not None and op.params and op.gate != "unitary":
                return True
        return False

    return [j for j, entry in enumerate(program)
            if isinstance(entry, Gathered) or (entry is None and angled(j))]


def _collect(program: tuple, group: list[Request], members: list[int], environments: list[np.ndarray],
             binder: Binder, contributions: dict) -> None:
    """The gate leaves' environments in their own leg layouts, filed by piece form:
    ``(terms, operations, environments)`` chunks."""
    host = get_backend("numpy")
    terms = np.asarray(members)
    for j, entry in enumerate(program):
        environment = environments[j]
        if isinstance(entry, Gathered):  # back to each term's own layout: entry perm[t, e] <- e
            own = np.empty_like(environment)
            own[np.arange(len(members))[:, None], entry.permutations] = environment
            environment = own
            key = (entry.gate, entry.dagger, entry.piece_number, entry.fixed, entry.conj)
            contributions[key].append((terms, np.asarray(entry.operations), environment))
            continue
        if environment is None:
            continue  # a constant or an observable: nothing to differentiate
        for position, (term, request) in enumerate(zip(members, group)):
            network_plan = request.network_plan
            leaf = network_plan.network.leaves[network_plan.order[j]]
            op = binder.operations[leaf.index] if leaf.source == "gate" else None
            if op is None or not op.params or op.gate == "unitary":
                continue
            row = environment[position]
            if network_plan.leaf_moves[j]:
                row = _inverse_permute(host, row, network_plan.leaf_moves[j], (-1,))
            fixed = resolved(leaf.fixed, request.bits) if leaf.fixed else ()
            key = (op.gate, op.dagger, leaf.piece, fixed, leaf.conj)
            contributions[key].append((np.asarray([term]), np.asarray([leaf.index]), row[None]))


def _inverse_permute(K: ArrayBackend, array: Any, moves: Sequence[Move], shape: tuple[int, ...]) -> Any:
    for reshape, axes in reversed(moves):
        moved = tuple(reshape[a] for a in axes)
        inverse = tuple(sorted(range(len(axes)), key=lambda a: axes[a]))
        array = K.transpose(K.reshape(array, moved), inverse)
    return K.reshape(array, shape)


def _assemble(operations: Sequence[Operation], contributions: dict,
              wanted: dict[int, list[tuple[int, int]]], gradients: np.ndarray) -> None:
    """``dE/dθ`` from the leaves' environments, one vectorised product per gate kind and form."""
    host = get_backend("numpy")
    width = 1 + max((parameter for pairs in wanted.values() for _, parameter in pairs), default=0)
    slot_table = np.full((len(operations), width), -1)  # [operation, parameter] -> slot, or -1
    for index, pairs in wanted.items():
        for slot, parameter in pairs:
            slot_table[index, parameter] = slot
    for (gate, dagger, piece_number, fixed, conj), chunks in contributions.items():
        terms = np.concatenate([chunk[0] for chunk in chunks])
        ops = np.concatenate([chunk[1] for chunk in chunks])
        environments = np.concatenate([chunk[2] for chunk in chunks])
        indices, rows = np.unique(ops, return_inverse=True)
        k = len(operations[indices[0]].qubits)
        extraction = piece_extraction(operation_form(operations[indices[0]]).pieces[piece_number], k, fixed)
        if extraction is not None:  # a bra leaf is conj(matrix @ L) = conj(matrix) @ conj(L)
            environments = environments @ (extraction.conj() if conj else extraction).T
        columns = np.asarray([[float(p) for p in operations[i].params] for i in indices])
        for j in range(min(columns.shape[1], width)):
            slots = slot_table[ops, j]
            if not np.any(slots >= 0):
                continue
            derivative = np.asarray(gate_derivatives(host, gate, columns, j, dagger))
            derivative = derivative.reshape(len(indices), -1)[rows]
            pieces = np.sum(environments * (derivative.conj() if conj else derivative), axis=1)
            mask = slots >= 0
            np.add.at(gradients, (terms[mask], slots[mask]), pieces[mask])
