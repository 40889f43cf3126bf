"""Circuits to and from Qiskit's ``QuantumCircuit``, gate by gate.

**Qubit order.** Qiskit's qubit ``i`` is tyxonq's qubit ``i`` (labels are kept: ``cx(0, 1)`` stays
``cx(0, 1)``). The two libraries number amplitudes differently: tyxonq's qubit 0 is the most
significant bit of an amplitude's index, Qiskit's qubit 0 the least (little-endian), so
``circuit.state()`` equals ``Statevector(qc).reverse_qargs().data``; probabilities, samples and
bitstrings follow the same rule (``format="bitstrings"`` lists qubit 0 first, Qiskit's counts
list it last).

**Parameters.** Unbound ``Parameter`` objects take their values from ``binding``: a mapping
(``Parameter`` or its name -> value) or a sequence in ``qc.parameters`` order (Qiskit sorts them
by name). Values may be backend arrays, so ``lambda theta: Circuit.from_qiskit(qc, theta)`` is
differentiable on every backend: gate angles that are affine in the parameters (``a * theta +
b``: what ansatz libraries build) are evaluated with backend arithmetic; other expressions need
numeric values.

**Global phase** is kept: a nonzero ``qc.global_phase`` becomes a ``gphase`` operation, and
``to_qiskit`` adds ``gphase`` angles to ``global_phase``, so states are equal, not only up to a
phase. Gates without a tyxonq counterpart are replaced by their Qiskit definitions (exactly,
phases included), recursively; final measurements are dropped (sampling stands for them), and
anything a state-vector simulator cannot represent (mid-circuit measurement, reset,
classically controlled operations) raises a ``ValueError`` naming the instruction.
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import numpy as np

from ...numerics import get_backend
from ...numerics.protocol import ArrayBackend

__all__ = ["from_qiskit", "to_qiskit", "require_qiskit", "barriers_by_position",
           "numeric_angle"]

#: tyxonq gate -> Qiskit standard-gate class name (the library's own classes, never a lookalike)
_TO_QISKIT = {
    "i": "IGate", "h": "HGate", "x": "XGate", "y": "YGate", "z": "ZGate", "s": "SGate",
    "sdg": "SdgGate", "t": "TGate", "tdg": "TdgGate", "sx": "SXGate", "sxdg": "SXdgGate",
    "rx": "RXGate", "ry": "RYGate", "rz": "RZGate", "phase": "PhaseGate", "u": "UGate",
    "cx": "CXGate", "cy": "CYGate", "cz": "CZGate", "swap": "SwapGate", "iswap": "iSwapGate",
    "rxx": "RXXGate", "ryy": "RYYGate", "rzz": "RZZGate", "crx": "CRXGate", "cry": "CRYGate",
    "crz": "CRZGate", "cphase": "CPhaseGate", "ccx": "CCXGate", "cswap": "CSwapGate",
}
_FROM_QISKIT = {qiskit_name: ours for ours, qiskit_name in _TO_QISKIT.items()}
_FROM_QISKIT.update({"U3Gate": "u", "U1Gate": "phase", "CU1Gate": "cphase"})
#: Qiskit instructions that do nothing to a state (a top-level barrier is kept as a marker)
_IGNORED = ("barrier", "delay")


def require_qiskit() -> Any:
    """The ``qiskit`` module, or an ``ImportError`` saying how to install it."""
    try:
        import qiskit
    except ImportError as error:  # pragma: no cover - the test extra installs it
        raise ImportError("Qiskit interchange needs qiskit: pip install 'tyxonq[qiskit]'") from error
    return qiskit


def _parameter_values(qc: Any, binding: Any) -> dict:
    """``{Parameter: value}`` for every free parameter of ``qc``."""
    parameters = list(qc.parameters)
    if not parameters:
        if binding is not None and len(binding) != 0:
            raise ValueError("binding was given but the circuit has no free parameters")
        return {}
    if binding is None:
        names = ", ".join(p.name for p in parameters)
        raise ValueError(f"the circuit has free parameters ({names}): give their values, "
                         "binding={name: value} or a sequence in qc.parameters order")
    if isinstance(binding, Mapping):
        by_name = {(key if isinstance(key, str) else key.name): value for key, value in binding.items()}
        missing = [p.name for p in parameters if p.name not in by_name]
        if missing:
            raise ValueError(f"binding has no value for parameter(s) {', '.join(missing)}")
        return {p: by_name[p.name] for p in parameters}
    K = get_backend()
    count = len(binding) if not K.is_array(binding) else int(K.shape(binding)[0])
    if count != len(parameters):
        raise ValueError(f"binding has {count} values for {len(parameters)} parameters "
                         f"({', '.join(p.name for p in parameters)}, in that order)")
    return {p: binding[i] for i, p in enumerate(parameters)}


def _angle(expression: Any, values: dict) -> Any:
    """A gate angle: a number, or a parameter expression evaluated at ``values`` (affine
    expressions with backend arithmetic, so gradients flow to the values)."""
    if isinstance(expression, numbers.Number) or isinstance(expression, np.number):
        return float(np.real(expression))
    free = list(expression.parameters)
    if not free:
        return float(np.real(complex(expression)))
    coefficients = [expression.gradient(p) for p in free]
    if all(isinstance(c, numbers.Number) for c in coefficients):  # affine: c . theta + constant
        constant = float(np.real(complex(expression.bind({p: 0.0 for p in free}))))
        total: Any = constant
        for p, coefficient in zip(free, coefficients):
            total = total + float(np.real(coefficient)) * values[p]
        return total
    try:
        numeric = {p: float(values[p]) for p in free}
    except TypeError as error:
        raise ValueError(f"the angle {expression} is not affine in its parameters: give numeric "
                         "values (its gradient is then not available)") from error
    return float(np.real(complex(expression.bind(numeric))))


def from_qiskit(cls: type, qc: Any, binding: Any = None, **options: Any) -> Any:
    """``cls(qc.num_qubits, **options)`` with ``qc``'s gates (see the module's conventions)."""
    require_qiskit()
    values = _parameter_values(qc, binding)
    circuit = cls(qc.num_qubits, **options)
    _append_circuit(circuit, qc, list(range(qc.num_qubits)), values, depth=0)
    return circuit


def _append_circuit(circuit: Any, qc: Any, qubit_map: list[int], values: dict, depth: int) -> None:
    if depth > 32:
        raise ValueError("gate definitions nest more than 32 levels deep")
    measured: set[int] = set()
    for position, instruction in enumerate(qc.data):
        operation = instruction.operation
        name = operation.name
        qubits = tuple(qubit_map[qc.find_bit(q).index] for q in instruction.qubits)
        if name in _IGNORED:
            if name == "barrier" and depth == 0 and qubits:
                circuit.barrier(*qubits)
            continue
        if name == "measure":
            measured.update(qubits)
            continue
        where = f"instruction {position} ({name} on qubits {list(qubits)})"
        if measured.intersection(qubits):
            raise ValueError(f"{where} acts after a measurement of its qubit: mid-circuit measurement "
                             "has no state-vector form (measure at the end, or use trajectories)")
        if name == "reset" or getattr(operation, "condition", None) is not None \
                or name in ("if_else", "while_loop", "for_loop", "switch_case"):
            raise ValueError(f"{where}: reset and classically controlled operations have no "
                             "state-vector form")
        _append_operation(circuit, operation, qubits, values, depth, where)
    if qc.global_phase != 0:
        circuit.gphase(0, _angle(qc.global_phase, values))


def _append_operation(circuit: Any, operation: Any, qubits: tuple, values: dict, depth: int,
                      where: str) -> None:
    kind = getattr(operation, "base_class", type(operation)).__name__  # singletons subclass theirs
    ours = _FROM_QISKIT.get(kind) if getattr(operation, "_standard_gate", None) else None
    if ours is not None:
        params = [_angle(p, values) for p in operation.params]
        getattr(circuit, ours)(*qubits, *params)
        return
    if kind == "GlobalPhaseGate":
        circuit.gphase(qubits[0] if qubits else 0, _angle(operation.params[0], values))
        return
    if kind == "UnitaryGate":  # little-endian over its qubits: reversed
        circuit.unitary(*reversed(qubits), matrix=np.asarray(operation.to_matrix()))
        return
    definition = getattr(operation, "definition", None)
    if definition is None:
        raise ValueError(f"{where}: tyxonq has no gate {operation.name!r} and Qiskit gives no "
                         "definition of it")
    _append_circuit(circuit, definition, list(qubits), values, depth + 1)


def to_qiskit(circuit: Any) -> Any:
    """A ``QuantumCircuit`` with ``circuit``'s gates (see the module's conventions)."""
    require_qiskit()
    from qiskit import QuantumCircuit
    from qiskit.circuit import library

    K = get_backend()
    qc = QuantumCircuit(circuit.num_qubits)
    barriers = barriers_by_position(circuit)
    for position, op in enumerate(list(circuit.operations) + [None]):
        for qubits in barriers.get(position, ()):
            qc.barrier(list(qubits))
        if op is None:
            break
        if op.channel is not None:
            raise ValueError(f"a {op.channel.name} channel has no Qiskit gate: to_qiskit converts "
                             "noiseless circuits")
        params = [numeric_angle(K, p, op.gate) for p in op.params] if op.gate != "unitary" else []
        if op.gate == "gphase":
            qc.global_phase += -params[0] if op.dagger else params[0]
            continue
        if op.gate == "unitary":
            gate = library.UnitaryGate(np.asarray(K.to_numpy(op.params[0])), check_input=False)
            qubits = list(reversed(op.qubits))
        else:
            gate = getattr(library, _TO_QISKIT[op.gate])(*params)
            qubits = list(op.qubits)
        qc.append(gate.inverse() if op.dagger else gate, qubits)
    return qc


def barriers_by_position(circuit: Any) -> dict[int, list[tuple[int, ...]]]:
    """A circuit's barrier markers by the number of operations before them."""
    found: dict[int, list[tuple[int, ...]]] = {}
    for position, qubits in circuit.barriers:
        found.setdefault(position, []).append(qubits)
    return found


def numeric_angle(K: ArrayBackend, value: Any, gate: str) -> float:
    """A gate angle as a float, or a ``ValueError`` for a traced one (exports need numbers)."""
    try:
        return float(np.real(K.to_numpy(value))) if not isinstance(value, numbers.Number) else float(value)
    except Exception as error:
        raise ValueError(f"a {gate} angle is traced (inside a gradient or jit): export circuits "
                         "with numeric angles") from error
