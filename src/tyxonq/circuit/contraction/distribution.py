"""Contractions shared between the ranks of a distributed run (:mod:`tyxonq.numerics.distributed`).

A result made of several contractions -- a Pauli sum's terms (each its light cone), the slices of a
sliced contraction, both at once -- is split between the ranks by cost
(:func:`~tyxonq.numerics.sharing.balanced_shares`): each rank contracts its share, values and
exact gradients alike, and one all-reduce gives every rank the whole result
(:mod:`tyxonq.circuit.contraction.evaluation` calls this module). Before it, the ranks compare a
digest of what they compute (:func:`structure`): a circuit or observable that differs between
ranks raises :class:`~tyxonq.numerics.distributed.DistributedMismatchError` on every rank.

Values that autograd records or JAX traces cannot leave the library's arrays for the all-reduce;
they are computed whole on every rank (the same result, no speedup; warned once). Exact gradients
(``tq.value_and_grad`` on NumPy, PyTorch's gradient nodes) are host numbers and always shared.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ...numerics.arguments import readable_scalar
from ...numerics.distributed import Communicator
from ...numerics.dual import Dual
from ...numerics.protocol import ArrayBackend
from ...numerics.sharing import balanced_shares, sharing, summed_over_ranks

__all__ = ["shared_work", "shared_total", "structure"]

#: the fixed cost of one step of a batched contraction (Python and kernel calls, ~20 µs), in flops
STEP_COST = 2e5
_warned_recorded = [False]


def shared_work(K: ArrayBackend, operations: Sequence[Any], inputs: Any, requests: Sequence[Any],
                host_results: bool, weights: Any = None) -> tuple[Communicator, list[int]] | None:
    """The communicator and this rank's share of ``requests`` (indices), after the ranks agreed on
    what they compute (``weights``: the terms' coefficients, where they are applied before the
    sum); ``None`` where nothing is shared: one process, one contraction, or results that must
    stay differentiable backend arrays (``host_results`` false and something recorded or
    traced)."""
    comm = sharing()
    if comm is None or len(requests) < 2:
        return None
    if not host_results and _recorded(K, operations, inputs, requests):
        if not _warned_recorded[0]:
            _warned_recorded[0] = True
            warnings.warn(
                f"distributed run: results that autograd records or JAX traces are computed whole on "
                f"every rank of {comm.size} (same values, no speedup); exact gradients are shared -- "
                "tq.value_and_grad on NumPy, or PyTorch tensors with requires_grad on the gate angles",
                stacklevel=4)
        return None
    comm.agree(structure(K, operations, requests, weights), "the circuit and observable")
    pieces = _pieces(requests, comm.size)
    return comm, sorted(i for piece in balanced_shares([cost for cost, _ in pieces], comm.size)[comm.rank]
                        for i in pieces[piece][1])


def shared_total(K: ArrayBackend, operations: Sequence[Any], inputs: Any, requests: Sequence[Any],
                 share: Callable[[list[int]], np.ndarray], length: int, what: str,
                 host_results: bool = False, weights: Any = None) -> np.ndarray | None:
    """``share(mine)`` -- a host vector of ``length`` entries computed from this rank's share of
    ``requests`` (:func:`shared_work`) -- summed over the ranks, every rank getting the total;
    ``None`` where nothing is shared (the caller computes the whole result itself). The one way
    the evaluation entry points share their work."""
    shared = shared_work(K, operations, inputs, requests, host_results=host_results, weights=weights)
    if shared is None:
        return None
    comm, mine = shared
    return summed_over_ranks(comm, lambda: share(mine), (length,), what)


def _pieces(requests: Sequence[Any], size: int) -> list[tuple[float, list[int]]]:
    """The requests as pieces to share: those with one plan (contracted as one batch) stay
    together unless their cost exceeds a rank's fair share, which splits them into the fewest
    even chunks; each piece's cost is its members' flops + 64 x writes and its steps' fixed
    cost (:data:`STEP_COST` each)."""
    groups: dict[Any, list[int]] = {}
    for index, request in enumerate(requests):
        groups.setdefault(request.network_plan.plan, []).append(index)
    costed = []
    for plan, members in groups.items():
        member = plan.contraction.flops + 64 * plan.contraction.writes
        costed.append((plan, members, member, STEP_COST * len(plan.contraction.steps)))
    fair = sum(len(members) * member + fixed for _, members, member, fixed in costed) / size
    pieces = []
    for _, members, member, fixed in costed:
        chunks = min(len(members), max(1, math.ceil((len(members) * member + fixed) / fair)))
        for chunk in np.array_split(np.asarray(members), chunks):
            pieces.append((fixed + len(chunk) * member, chunk.tolist()))
    return pieces


def structure(K: ArrayBackend, operations: Sequence[Any], requests: Sequence[Any],
              weights: Any = None) -> tuple:
    """What a set of contractions computes, for the ranks to compare (as a digest): every
    operation (gate, qubits, angles where they can be read, channel), every contraction's output
    shape, cost, fixed bits and observable sizes, and the terms' ``weights``."""
    gates = [(op.gate, op.qubits, op.dagger, None if op.channel is None else len(op.channel.operators))
             for op in operations]
    angles = [p.value if isinstance(p, Dual) else p for op in operations for p in op.params]
    try:  # host numbers (the common case): their bytes
        readable: Any = np.asarray(angles, dtype=complex).tobytes()
    except Exception:  # noqa: BLE001 - tensors autograd records, traced values: one by one
        readable = [_readable(K, angle) for angle in angles]
    contractions = [(r.network_plan.output_shape, r.network_plan.plan.contraction.flops, tuple(r.bits),
                     tuple(r.operator_sizes)) for r in requests]
    weighting = None if weights is None else np.asarray(weights, dtype=complex).tobytes()
    return gates, readable, contractions, weighting


def _readable(K: ArrayBackend, value: Any) -> Any:
    if K.is_array(value) and K.shape(value) not in ((), (1,)):
        return K.shape(value)
    try:
        number = readable_scalar(K, value)
    except (TypeError, ValueError):
        return type(value).__name__
    return "traced" if number is None else repr(complex(number))


def _recorded(K: ArrayBackend, operations: Sequence[Any], inputs: Any, requests: Sequence[Any]) -> bool:
    """Whether a result would be differentiated through the backend's arrays: autograd records or
    JAX traces an angle, the input state or an observable."""
    if K.compiling():
        return True
    items = [p for op in operations for p in op.params if K.is_array(p)]
    items += [inputs] if K.is_array(inputs) else []
    items += [o for r in requests for o in r.operators if K.is_array(o)]
    return any(K.needs_gradient(x) for x in items)
