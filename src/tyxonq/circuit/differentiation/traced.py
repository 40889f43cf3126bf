"""Exact gradients of expectation values with respect to gate angles: adjoint and parameter shift.

Both work on any backend through the protocol. They are reached through traced parameters
(:mod:`tyxonq.numerics.dual`): an expectation of a circuit whose angles are :class:`Dual`
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
from ...numerics.dual import Dual, TracingError
from ...numerics.memory import memory_budget, require_memory
from ...numerics.protocol import ArrayBackend
from ..contraction.evaluation import contraction_cost, value_and_angle_gradients
from ..operations.gates import FOUR_TERM_SHIFT, TWO_TERM_SHIFT
from ..operations.operation import Operation, with_angles_at
from ..statevector.adjoint import adjoint_sweep
from ..statevector.sweep import sweep_program
from .tracing import active_gradient_method

__all__ = ["traced_expectation", "traced_terms", "parameter_shift_dual", "uses_contraction",
           "plain_operations"]

_FOUR_TERM = ((math.sqrt(2) + 1) / (4 * math.sqrt(2)), (math.sqrt(2) - 1) / (4 * math.sqrt(2)))


def plain_operations(operations: list[Operation]) -> list[Operation]:
    """The operations with every traced angle replaced by its value."""
    return [op.with_params(tuple(p.value if isinstance(p, Dual) else p for p in op.params))
            if op.params else op for op in operations]


def traced_expectation(circuit: Any, evaluate: Callable[[Any], Any],
                       apply_observable: Callable[[Any, Any], Any],
                       requests: Callable[[Any], list] | None = None,
                       sweep: Callable[..., tuple[float, np.ndarray]] | None = None) -> Dual:
    """A real expectation of a circuit with traced angles, as a Dual (with its Hessian when the
    angles carry one: the shift rule applied to the exact angle gradient, :func:`_angle_hessian`).

    ``evaluate(plain_circuit)`` computes the value of a circuit without traced angles;
    ``apply_observable(K, state)`` applies the (Hermitian) observable to a state vector;
    ``requests(plain_circuit)``, when given, are the expectation's contractions: the adjoint
    method then runs reverse mode through them instead of sweeping the state vector when that is
    cheaper or the state does not fit (:func:`uses_contraction`). ``sweep(K, plain_circuit,
    wanted, slot_count)``, when given, replaces the adjoint sweep (a sharded state's).
    """
    if active_gradient_method() != "adjoint":
        return parameter_shift_dual(circuit, evaluate)
    plain = circuit.with_operations(plain_operations(circuit.operations))
    K = get_backend()
    slots = _slots(circuit)
    wanted = _wanted(slots)
    contractions = requests(plain) if requests is not None else None
    if sweep is not None:
        def value_and_gradient(c: Any) -> tuple[float, np.ndarray]:
            return sweep(K, c, wanted, len(slots))
    elif contractions is not None and uses_contraction(K, plain, contractions):
        def value_and_gradient(c: Any) -> tuple[float, np.ndarray]:
            values, gradients = value_and_angle_gradients(K, c.operations, c.input_state(K),
                                                          contractions, wanted, len(slots))
            return float(np.real(values.sum())), np.real(gradients.sum(axis=0))
    else:
        n = plain.num_qubits
        require_memory(K, 3 * 2 ** n, f"the adjoint sweep over {n} qubits (three state vectors)",
                       _SWEEP_HINT)

        def value_and_gradient(c: Any) -> tuple[float, np.ndarray]:
            value, gradient = adjoint_sweep(K, c.operations, n, c.input_state(K), apply_observable,
                                            wanted, len(slots))
            return value, np.asarray(gradient, dtype=float)
    value, angle_gradients = value_and_gradient(plain)
    hessian = None
    if _second_order(slots):
        hessian = _angle_hessian(plain, slots, lambda c: value_and_gradient(c)[1])
    return _chained(value, angle_gradients, hessian, slots)


def parameter_shift_dual(circuit: Any, evaluate: Callable[[Any], Any]) -> Dual:
    """A real result of a circuit with traced angles, as a Dual whose gradient (and Hessian, by
    the shift rule applied twice) comes from shifted evaluations: ``evaluate(plain_circuit)``
    computes the result of a circuit without traced angles (any simulator)."""
    plain = circuit.with_operations(plain_operations(circuit.operations))
    K = get_backend()
    slots = _slots(circuit)
    scalar = lambda c: float(K.to_numpy(evaluate(c)))  # noqa: E731
    gradient_of = lambda c: np.asarray(_shift_rule(c, slots, scalar), dtype=float)  # noqa: E731
    hessian = _angle_hessian(plain, slots, gradient_of) if _second_order(slots) else None
    return _chained(scalar(plain), gradient_of(plain), hessian, slots)


def traced_terms(circuit: Any, requests: Callable[[Any], list], evaluate: Callable[[Any], Any],
                 weights: np.ndarray | None, readouts: list[np.ndarray] | None = None) -> Any:
    """Expectations of several terms of a circuit with traced angles, from their contractions:
    the weighted sum as one Dual (``weights`` given), else one Dual per term. ``readouts`` (one
    host array per contraction): each term is its contraction's result read against it,
    ``sum(readout * result)`` (:func:`~tyxonq.circuit.contraction.evaluation.value_and_angle_gradients`),
    rather than a scalar result.

    ``evaluate(plain_circuit)`` returns the same (the weighted sum, or the values), for
    parameter shift.
    """
    plain = circuit.with_operations(plain_operations(circuit.operations))
    K = get_backend()
    slots = _slots(circuit)
    if active_gradient_method() == "adjoint":
        contractions = requests(plain)

        def values_and_gradients(c: Any) -> tuple[np.ndarray, np.ndarray]:  # weighted: one sum
            values, gradients = value_and_angle_gradients(K, c.operations, c.input_state(K),
                                                          contractions, _wanted(slots), len(slots), weights,
                                                          readouts=readouts)
            return np.real(values), np.real(gradients)
        values, gradients = values_and_gradients(plain)
        hessians = (_angle_hessian(plain, slots, lambda c: values_and_gradients(c)[1])
                    if _second_order(slots) else None)
        if weights is not None:
            return _chained(float(values[0]), gradients[0], None if hessians is None else hessians[0], slots)
        return [_chained(float(value), gradient, None if hessians is None else hessians[t], slots)
                for t, (value, gradient) in enumerate(zip(values, gradients))]
    if weights is None:
        raise TracingError("parameter-shift gradients of several terms need their weights "
                           "(coefficients=...); or use method='adjoint'")
    return parameter_shift_dual(circuit, evaluate)


_SWEEP_HINT = ("Gradients of local expectations (expectation, expectation_ps, a PauliSum) run "
               "reverse mode through their light-cone contractions instead; use those, or fewer qubits")


def uses_contraction(K: ArrayBackend, plain: Any, requests: list) -> bool:
    """Whether reverse mode through the contractions is chosen over the adjoint sweep: it is
    cheaper by the cost model (flops + 64 x writes: three contractions' worth against three
    passes over the state per fused block), the sweep's three state vectors do not fit, or there
    is no state vector to sweep (a density matrix)."""
    n = plain.num_qubits
    if not plain.has_state_vector() or 3 * 2 ** n * 16 > memory_budget(K):
        return True
    blocks = len(sweep_program(n, plain.operations, K.capabilities.max_ndim).blocks) if n <= 24 \
        else len(plain.operations)
    return 3 * contraction_cost(requests) < 3 * blocks * 2 ** n * 72


def _slots(circuit: Any) -> list[tuple[int, int, Dual]]:
    return [(k, j, p) for k, op in enumerate(circuit.operations)
            for j, p in enumerate(op.params) if isinstance(p, Dual)]


def _wanted(slots: list) -> dict[int, list[tuple[int, int]]]:
    wanted: dict[int, list[tuple[int, int]]] = {}
    for position, (k, j, _) in enumerate(slots):
        wanted.setdefault(k, []).append((position, j))
    return wanted


def _chain(slots: list) -> np.ndarray:
    """``d angle / d parameters``, one row per traced angle."""
    chain = np.stack([angle.gradient for _, _, angle in slots])
    if np.iscomplexobj(chain) or any(np.iscomplexobj(angle.value) for _, _, angle in slots):
        raise TracingError("gate angles must be real functions of the parameters")
    return chain


def _second_order(slots: list) -> bool:
    return any(angle.hessian is not None for _, _, angle in slots)


def _chained(value: float, angle_gradient: np.ndarray, angle_hessian: np.ndarray | None,
             slots: list) -> Dual:
    """The Dual of a result from its derivatives with respect to the traced angles: the chain
    rule into the parameters (``H = J^T H_angles J + sum_k g_k H_k`` for second order)."""
    chain = _chain(slots)
    gradient = np.asarray(angle_gradient, dtype=float) @ chain
    if angle_hessian is None:
        return Dual(value, gradient)
    size = chain.shape[1]
    hessian = chain.T @ angle_hessian @ chain
    for g, (_, _, angle) in zip(angle_gradient, slots):
        if angle.hessian is not None:
            hessian = hessian + g * np.real(angle.hessian)
    return Dual(value, gradient, hessian.reshape(size, size))


def _angle_hessian(plain: Any, slots: list, gradient_of: Callable[[Any], np.ndarray]) -> np.ndarray:
    """Second derivatives with respect to the traced angles, ``(..., slots, slots)``: the shift
    rule applied to the exact angle gradient ``gradient_of(plain_circuit)`` (exact: a result is
    a trigonometric polynomial of degree one in each shift-rule angle, and so are its
    derivatives), symmetrised."""
    columns = np.stack(_shift_rule(plain, slots, gradient_of), axis=-1)
    return (columns + np.swapaxes(columns, -1, -2)) / 2


def _shift_rule(plain: Any, slots: list, evaluate: Callable[[Any], Any]) -> list[Any]:
    """Per traced angle, its derivative of ``evaluate(circuit)`` (a number or an array) by the
    two- or four-term shift rule."""
    operations = plain.operations
    results = []
    for k, j, _ in slots:
        op = operations[k]

        def shifted(delta: float, op: Operation = op, k: int = k, j: int = j) -> Any:
            changed = with_angles_at(operations, [(k, j)], [op.params[j] + delta])
            return evaluate(plain.with_operations(changed))

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
