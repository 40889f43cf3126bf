"""Exact gradients of expectation values with respect to gate angles: adjoint and parameter shift.

Both work on any backend through the protocol. They are reached through traced parameters
(:mod:`tyxonq.circuit.differentiation.tracing`): an expectation of a circuit whose angles are :class:`Dual`
numbers returns a Dual whose gradient is ``sum_k dE/dθ_k · dθ_k/dparams``.

* **adjoint**: one forward and one backward sweep over the state vector in fused blocks
  (:mod:`tyxonq.circuit.statevector.sweep`), three vectors in memory
  (``dE/dθ_k = 2 Re <λ_k| dU_k |ψ_{k-1}>``).
* **parameter-shift**: two (four for controlled rotations) shifted evaluations per angle, each
  through the cached contraction plan (so the light cone still applies).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...numerics import get_backend
from ..operations.gates import FOUR_TERM_SHIFT, TWO_TERM_SHIFT
from ..operations.operation import Operation
from ..statevector.adjoint import adjoint_sweep
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
    slots = [(k, j, p) for k, op in enumerate(circuit._operations)
             for j, p in enumerate(op.params) if isinstance(p, Dual)]
    if active_gradient_method() == "adjoint":
        wanted: dict[int, list[tuple[int, int]]] = {}
        for position, (k, j, _) in enumerate(slots):
            wanted.setdefault(k, []).append((position, j))
        value, angle_gradients = adjoint_sweep(K, plain._operations, plain.num_qubits,
                                               plain._input_array(K), apply_observable, wanted,
                                               len(slots))
    else:
        value = float(K.to_numpy(evaluate(plain)))
        angle_gradients = _parameter_shift(K, plain, slots, evaluate)
    chain = np.stack([angle.gradient for _, _, angle in slots])  # d angle / d parameters
    if np.iscomplexobj(chain) or any(np.iscomplexobj(angle.value) for _, _, angle in slots):
        raise TracingError("gate angles must be real functions of the parameters")
    return Dual(value, np.asarray(angle_gradients, dtype=float) @ chain)


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
