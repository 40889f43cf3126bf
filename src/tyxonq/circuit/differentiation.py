"""Exact gradients of expectation values with respect to gate angles: adjoint and parameter shift.

Both work on any backend through the protocol. They are reached through traced parameters
(:mod:`tyxonq.circuit.tracing`): an expectation of a circuit whose angles are :class:`Dual`
numbers returns a Dual whose gradient is ``sum_k dE/dθ_k · dθ_k/dparams``.

* **adjoint**: one backward sweep over the state vector, ``O(gates)`` gate applications and
  three vectors in memory (``dE/dθ_k = 2 Re <λ_k| dU_k |ψ_{k-1}>``).
* **parameter-shift**: two (four for controlled rotations) shifted evaluations per angle, each
  through the cached contraction plan (so the light cone still applies).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..numerics import get_backend
from .gates import FOUR_TERM_SHIFT, TWO_TERM_SHIFT, gate_derivative, gate_matrix
from .operations import Operation
from .statevector import apply_matrix
from .tracing import Dual, TracingError, active_gradient_method

__all__ = ["traced_expectation", "plain_operations"]

_FOUR_TERM = ((math.sqrt(2) + 1) / (4 * math.sqrt(2)), (math.sqrt(2) - 1) / (4 * math.sqrt(2)))


def plain_operations(operations: list[Operation]) -> list[Operation]:
    """The operations with every traced angle replaced by its value."""
    return [Operation(op.gate, op.qubits,
                      tuple(p.value if isinstance(p, Dual) else p for p in op.params), op.dagger)
            for op in operations]


def traced_expectation(circuit: Any, evaluate: Callable[[Any], Any],
                       apply_observable: Callable[[Any, Any], Any]) -> Dual:
    """A real expectation of a circuit with traced angles, as a Dual.

    ``evaluate(plain_circuit)`` computes the value of a circuit without traced angles;
    ``apply_observable(K, state)`` applies the (Hermitian) observable to a state vector.
    """
    plain = circuit._with_operations(plain_operations(circuit._operations))
    K = get_backend()
    value = float(K.to_numpy(evaluate(plain)))
    slots = [(k, j, p) for k, op in enumerate(circuit._operations)
             for j, p in enumerate(op.params) if isinstance(p, Dual)]
    if active_gradient_method() == "adjoint":
        angle_gradients = _adjoint(K, plain, slots, apply_observable)
    else:
        angle_gradients = _parameter_shift(K, plain, slots, evaluate)
    gradient = np.zeros_like(slots[0][2].gradient, dtype=float)
    for (_, _, angle), derivative in zip(slots, angle_gradients):
        if np.iscomplexobj(angle.gradient) or np.iscomplexobj(angle.value):
            raise TracingError("gate angles must be real functions of the parameters")
        gradient = gradient + derivative * angle.gradient
    return Dual(value, gradient)


def _adjoint(K: Any, plain: Any, slots: list, apply_observable: Callable) -> list[float]:
    n, operations = plain.num_qubits, plain._operations
    wanted: dict[int, list[int]] = {}
    for position, (k, _, _) in enumerate(slots):
        wanted.setdefault(k, []).append(position)
    overlaps: list[Any] = [None] * len(slots)  # backend scalars: one host transfer at the end
    state = plain.state()
    costate = apply_observable(K, state)
    for k in range(len(operations) - 1, -1, -1):
        op = operations[k]
        matrix = gate_matrix(K, op.gate, op.params, op.dagger)
        inverse = K.conj(K.transpose(matrix))
        state = apply_matrix(K, state, inverse, op.qubits, n)
        for position in wanted.get(k, ()):
            derivative = gate_derivative(K, op.gate, op.params, slots[position][1], op.dagger)
            moved = apply_matrix(K, state, derivative, op.qubits, n)
            overlaps[position] = K.real(K.sum(K.conj(costate) * moved))
        costate = apply_matrix(K, costate, inverse, op.qubits, n)
    return (2.0 * K.to_numpy(K.stack(overlaps))).tolist() if overlaps else []


def _parameter_shift(K: Any, plain: Any, slots: list, evaluate: Callable) -> list[float]:
    operations = plain._operations
    results = []
    for k, j, _ in slots:
        op = operations[k]

        def shifted(delta: float, op: Operation = op, k: int = k, j: int = j) -> float:
            params = list(op.params)
            params[j] = params[j] + delta
            changed = list(operations)
            changed[k] = Operation(op.gate, op.qubits, tuple(params), op.dagger)
            return float(K.to_numpy(evaluate(plain._with_operations(changed))))

        half = math.pi / 2
        if op.gate in TWO_TERM_SHIFT:
            results.append((shifted(half) - shifted(-half)) / 2)
        elif op.gate in FOUR_TERM_SHIFT:
            near, far = _FOUR_TERM
            results.append(near * (shifted(half) - shifted(-half))
                           - far * (shifted(3 * half) - shifted(-3 * half)))
        else:  # pragma: no cover - every parametrised gate is in one of the two sets
            raise TracingError(f"no shift rule for gate {op.gate!r}; use method='adjoint'")
    return results
