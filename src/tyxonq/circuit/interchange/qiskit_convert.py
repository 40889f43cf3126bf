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
phases included), recursively.

**Dynamic circuits.** Classical bits keep Qiskit's numbering: clbit ``j`` of ``qc`` (numbered
across registers in declaration order, as qubits are) is bit ``j`` here, and ``to_qiskit``
declares its registers in bit order, so ``sample(final=False)`` reports what Qiskit's counts do,
bit 0 first (Qiskit writes bit 0 last, registers separated by spaces, the last declared first).

* ``measure`` becomes ``c.measure(q, into=j)``; ``reset`` becomes ``c.reset(q)``.
* An ``if_test`` (``IfElseOp``) or an old ``c_if`` conditions the gates of its body
  (:meth:`~tyxonq.circuit.operations.dynamic_methods.DynamicMethods.cond`), and its ``else`` body
  on the negated condition (``negate=True`` for a register equality, the other value for one
  bit). Conditions are ``(Clbit, value)``, ``(ClassicalRegister, value)`` or the expressions
  :mod:`.qiskit_conditions` reads (``==``, ``!=``, ``!``, ``^`` parity, ``&&`` of bit tests);
  others raise a ``ValueError`` naming the operator.
* Refused, with a ``ValueError`` naming the instruction and its index in ``qc.data``: ``while``,
  ``for`` and ``switch``; a measurement, reset or nested ``if`` inside an ``if`` body (tyxonq
  conditions gates only); classical variables.
* **Final measurements.** A circuit that is not dynamic (no reset, no condition, no qubit used
  after it is measured) reads as before: its measurements stand for sampling and are dropped, so
  ``state()`` and the other exact results are those of the unitary part. A dynamic circuit keeps
  every measurement, final ones included, and declares all of ``qc``'s bits, so its classical
  register is Qiskit's (a final measurement leaves probabilities and ``Z`` expectations as they
  were, but the state is then mixed: ``state()`` refuses). ``measurements="keep"`` keeps every
  measurement of any circuit (a circuit whose only dynamic operations are final measurements
  then reads back as it was written).

``to_qiskit`` writes ``measure`` and ``reset``, and consecutive gates under one condition as one
``if_test`` block: one bit as ``(clbit, value)``, an equality on the bits of one register as
``(register, value)`` (a register is declared for each such condition where one can be), any
other as an expression. ``post_select`` and channels have no Qiskit form (``ValueError``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.protocol import ArrayBackend
from ..operations.gates import MAX_PAULI_ROTATION_QUBITS, PAULI_ROTATION_PREFIX
from ..operations.operation import Condition
from .classical import Block, canonical, negated, register_layout, runs
from .qiskit_conditions import qiskit_condition, read_condition, registers_by_bits

__all__ = ["from_qiskit", "to_qiskit", "require_qiskit", "barriers_by_position",
           "numeric_angle", "is_dynamic", "ConversionError"]

#: tyxonq gate -> Qiskit standard-gate class name (the library's own classes, never a lookalike)
_TO_QISKIT = {
    "i": "IGate", "h": "HGate", "x": "XGate", "y": "YGate", "z": "ZGate", "s": "SGate",
    "sdg": "SdgGate", "t": "TGate", "tdg": "TdgGate", "sx": "SXGate", "sxdg": "SXdgGate",
    "rx": "RXGate", "ry": "RYGate", "rz": "RZGate", "phase": "PhaseGate", "u": "UGate",
    "cx": "CXGate", "cy": "CYGate", "cz": "CZGate", "swap": "SwapGate", "iswap": "iSwapGate",
    "ecr": "ECRGate",
    "rxx": "RXXGate", "ryy": "RYYGate", "rzz": "RZZGate", "crx": "CRXGate", "cry": "CRYGate",
    "crz": "CRZGate", "cphase": "CPhaseGate", "ccx": "CCXGate", "cswap": "CSwapGate",
}
_FROM_QISKIT = {qiskit_name: ours for ours, qiskit_name in _TO_QISKIT.items()}
_FROM_QISKIT.update({"U3Gate": "u", "U1Gate": "phase", "CU1Gate": "cphase"})
#: Qiskit instructions that do nothing to a state (a top-level barrier is kept as a marker)
_IGNORED = ("barrier", "delay")
#: Qiskit's control-flow instructions, in words
_CONTROL_FLOW = {"if_else": "an if statement", "while_loop": "a while loop", "for_loop": "a for loop",
                 "switch_case": "a switch statement"}
#: Qiskit's non-unitary instructions, in words
_DYNAMIC = {"measure": "measurement", "reset": "reset"}


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


def from_qiskit(cls: type, qc: Any, binding: Any = None, measurements: str = "auto", **options: Any) -> Any:
    """``cls(qc.num_qubits, **options)`` with ``qc``'s instructions (see the module's conventions).

    Examples
    --------
    >>> import tyxonq as tq
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(2, 1); _ = qc.h(0); _ = qc.measure(0, 0)
    >>> with qc.if_test((qc.clbits[0], 1)):
    ...     _ = qc.x(1)
    >>> c = from_qiskit(tq.Circuit, qc)
    >>> [(op.gate, op.condition is not None) for op in c.operations]
    [('h', False), ('measure', False), ('x', True)]
    """
    require_qiskit()
    if measurements not in ("auto", "keep"):
        raise ValueError(f"measurements={measurements!r}: 'auto' (final measurements of a circuit that "
                         "is not dynamic stand for sampling) or 'keep' (every measurement is kept)")
    values = _parameter_values(qc, binding)
    circuit = cls(qc.num_qubits, **options)
    keep = measurements == "keep" or is_dynamic(qc)
    if keep:
        # Qiskit's register bits (read as 0 until written): bit j there is bit j here
        circuit.add_clbits(qc.num_clbits)
    scope = _Scope(qc, list(range(qc.num_qubits)), list(range(qc.num_clbits)), keep)
    for position, instruction in enumerate(qc.data):
        try:
            _append_instruction(circuit, scope, instruction, values, depth=0)
        except ValueError as error:
            qubits = [qc.find_bit(q).index for q in instruction.qubits]
            where = f"instruction {position} ({instruction.operation.name} on qubits {qubits})"
            raise ConversionError(f"{where}: {error}", position) from error
    if qc.global_phase != 0:
        circuit.gphase(0, _angle(qc.global_phase, values))
    return circuit


class ConversionError(ValueError):
    """A Qiskit instruction that cannot be converted; ``position`` is its index in ``qc.data``."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


@dataclass(frozen=True)
class _Scope:
    """A circuit being read (``qc``: the whole circuit, an ``if`` body or a gate definition), the
    tyxonq qubit and bit of each of its qubits and bits, whether measurements are kept, and
    whether it is an ``if`` body."""

    qc: Any
    qubits: list[int]
    clbits: list[int]
    keep: bool
    body: bool = False

    def inner(self, qc: Any, qubits: Sequence[int], clbits: Sequence[int], body: bool) -> _Scope:
        return _Scope(qc, list(qubits), list(clbits), self.keep, self.body or body)

    def bit(self, clbit: Any) -> int:
        return self.clbits[self.qc.find_bit(clbit).index]


def is_dynamic(qc: Any) -> bool:
    """Whether Qiskit's ``qc`` measures a qubit that is used again, resets a qubit or has
    classically controlled instructions (its measurements are then all kept).

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(2, 2); _ = qc.h(0); _ = qc.measure([0, 1], [0, 1])
    >>> is_dynamic(qc)
    False
    >>> _ = qc.x(0)  # a gate after a measurement
    >>> is_dynamic(qc)
    True
    """
    measured: set[int] = set()
    for instruction in qc.data:
        operation, name = instruction.operation, instruction.operation.name
        if name in _IGNORED:
            continue
        qubits = {qc.find_bit(q).index for q in instruction.qubits}
        if name == "reset" or name in _CONTROL_FLOW or _old_condition(operation) is not None \
                or measured & qubits:
            return True
        if name == "measure":
            measured |= qubits
    return False


def _old_condition(operation: Any) -> Any:
    """The ``c_if`` condition of a non-control-flow instruction (Qiskit < 2), or ``None``."""
    if operation.name in _CONTROL_FLOW:
        return None
    return getattr(operation, "condition", None)


def _append_circuit(circuit: Any, scope: _Scope, values: dict, depth: int) -> None:
    if depth > 32:
        raise ValueError("gate definitions nest more than 32 levels deep")
    for instruction in scope.qc.data:
        _append_instruction(circuit, scope, instruction, values, depth)
    if scope.qc.global_phase != 0:
        circuit.gphase(scope.qubits[0] if scope.qubits else 0, _angle(scope.qc.global_phase, values))


def _append_instruction(circuit: Any, scope: _Scope, instruction: Any, values: dict, depth: int) -> None:
    """One instruction of ``scope``'s circuit (``ValueError`` for what cannot be converted)."""
    operation, name = instruction.operation, instruction.operation.name
    qubits = tuple(scope.qubits[scope.qc.find_bit(q).index] for q in instruction.qubits)
    clbits = tuple(scope.bit(b) for b in instruction.clbits)
    if name in _IGNORED:
        if name == "barrier" and depth == 0 and qubits:
            circuit.barrier(*qubits)
        return
    condition = _old_condition(operation)
    if scope.body and (name in _DYNAMIC or name in _CONTROL_FLOW or condition is not None):
        raise ValueError(f"{_construct(operation)} inside an if body is not supported: tyxonq conditions "
                         "gates only (move it out of the if, or combine nested conditions into one)")
    if condition is not None and name in _DYNAMIC:
        raise ValueError(f"a conditioned {_DYNAMIC[name]} (c_if) is not supported: tyxonq conditions "
                         "gates only")
    if name == "measure":  # one inside a definition is never a final readout
        if scope.keep or depth > 0:
            circuit.measure(qubits[0], into=clbits[0])
        return
    if name == "reset":
        circuit.reset(qubits[0])
        return
    if name == "if_else":
        _append_if(circuit, scope, instruction, qubits, clbits, values, depth)
        return
    if name == "box":  # a scope run once: its instructions
        inner = scope.inner(operation.blocks[0], qubits, clbits, body=False)
        _append_circuit(circuit, inner, values, depth + 1)
        return
    if name in _CONTROL_FLOW:
        raise ValueError(f"{_construct(operation)} is not supported: tyxonq circuits run each operation "
                         "once (unroll the loop, or write the cases as if statements)")
    if condition is not None:
        with _conditioned(circuit, read_condition(condition, scope.bit)):
            _append_operation(circuit, operation, qubits, clbits, scope, values, depth)
        return
    _append_operation(circuit, operation, qubits, clbits, scope, values, depth)


def _construct(operation: Any) -> str:
    """What an instruction is, in words."""
    name = operation.name
    if name in _CONTROL_FLOW:
        return f"{_CONTROL_FLOW[name]} ({name})"
    if name in _DYNAMIC:
        return f"a {_DYNAMIC[name]} ({name})"
    return f"a classically conditioned {name} (c_if)"


def _append_if(circuit: Any, scope: _Scope, instruction: Any, qubits: tuple, clbits: tuple,
               values: dict, depth: int) -> None:
    """An ``if_test`` (``IfElseOp``): its bodies' gates under its condition and its negation."""
    operation = instruction.operation
    condition = read_condition(operation.condition, scope.bit)
    true_body, false_body = operation.blocks[0], (operation.blocks[1] if len(operation.blocks) > 1 else None)
    for body, holds in ((true_body, condition), (false_body, negated(condition))):
        if body is None:
            continue
        inner = scope.inner(body, qubits, clbits, body=True)
        with _conditioned(circuit, holds):
            _append_circuit(circuit, inner, values, depth + 1)


def _conditioned(circuit: Any, condition: Condition) -> Any:
    """``with`` block: gates added in it apply under ``condition``."""
    return circuit.cond(condition.bits, condition.value, parity=condition.kind == "parity",
                        negate=condition.kind == "differs")


def _append_operation(circuit: Any, operation: Any, qubits: tuple, clbits: tuple, scope: _Scope,
                      values: dict, depth: int) -> None:
    kind = getattr(operation, "base_class", type(operation)).__name__  # singletons subclass theirs
    ours = _FROM_QISKIT.get(kind) if getattr(operation, "_standard_gate", None) else None
    if ours is not None:
        params = [_angle(p, values) for p in operation.params]
        getattr(circuit, ours)(*qubits, *params)
        return
    if kind == "GlobalPhaseGate":
        circuit.gphase(qubits[0] if qubits else (scope.qubits[0] if scope.qubits else 0),
                       _angle(operation.params[0], values))
        return
    if kind == "PauliEvolutionGate":
        _append_pauli_evolution(circuit, operation, qubits, values)
        return
    if kind == "PauliGate":  # the Pauli string itself, a letter per qubit (little-endian label)
        for qubit, letter in zip(qubits, reversed(operation.params[0])):
            if letter != "I":
                getattr(circuit, letter.lower())(qubit)
        return
    if kind == "UnitaryGate":  # little-endian over its qubits: reversed
        circuit.unitary(*reversed(qubits), matrix=np.asarray(operation.to_matrix()))
        return
    definition = getattr(operation, "definition", None)
    if definition is None:
        raise ValueError(f"tyxonq has no gate {operation.name!r} and Qiskit gives no definition of it")
    _append_circuit(circuit, scope.inner(definition, qubits, clbits, body=False), values, depth + 1)


def _append_pauli_evolution(circuit: Any, operation: Any, qubits: tuple, values: dict) -> None:
    """Qiskit's ``PauliEvolutionGate`` is exactly ``exp(-i t H)`` (its ``Operator``; the product
    formula is only how it is synthesised): with mutually commuting terms, a product of
    ``exp_pauli`` gates (differentiable in ``t``); otherwise the exact unitary of its
    ``Operator``, on at most ``MAX_PAULI_ROTATION_QUBITS`` qubits."""
    from qiskit.quantum_info import Operator, Pauli

    operators = operation.operator if isinstance(operation.operator, list) else [operation.operator]
    terms = [(label, coefficient) for op in operators for label, coefficient in op.to_list()]
    paulis = [Pauli(label) for label, _ in terms]
    real = all(abs(np.imag(c)) <= 1e-12 for _, c in terms)
    if real and all(a.commutes(b) for i, a in enumerate(paulis) for b in paulis[i + 1:]):
        time = _angle(operation.params[0], values)
        for label, coefficient in terms:  # little-endian labels: the last letter on qubits[0]
            circuit.exp_pauli(label[::-1], qubits, 2 * float(np.real(coefficient)) * time)
        return
    if len(qubits) > MAX_PAULI_ROTATION_QUBITS:
        raise ValueError(
            f"a PauliEvolutionGate of non-commuting terms on {len(qubits)} qubits: its exact unitary "
            f"is too large (at most {MAX_PAULI_ROTATION_QUBITS} qubits); synthesise it first (e.g. "
            "qiskit.transpile) to read its product formula, or build one with tq.evolution.trotter")
    try:
        time = numeric_angle(get_backend(), _angle(operation.params[0], values), "PauliEvolutionGate")
    except ValueError as error:
        raise ValueError("a PauliEvolutionGate of non-commuting terms becomes its exact unitary, "
                         "which needs a numeric time (not a traced one)") from error
    exact = operation.__class__(operation.operator, time=time)
    circuit.unitary(*reversed(qubits), matrix=np.asarray(Operator(exact).data))


def to_qiskit(circuit: Any) -> Any:
    """A ``QuantumCircuit`` with ``circuit``'s operations (see the module's conventions).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> _ = c.cond(c.measure(0)).x(1)
    >>> qc = to_qiskit(c)
    >>> [i.operation.name for i in qc.data], [r.name for r in qc.cregs]
    (['h', 'measure', 'if_else'], ['c'])
    """
    require_qiskit()
    from qiskit import ClassicalRegister, QuantumCircuit

    K = get_backend()
    layout = _layout(circuit)
    cregs = [ClassicalRegister(register.size, register.name) for register in layout]
    qc = QuantumCircuit(circuit.num_qubits)
    if cregs:
        qc.add_register(*cregs)
    registers = registers_by_bits(layout, cregs)
    for item in runs(circuit):
        if item[0] == "barrier":
            qc.barrier(list(item[1]))
        elif item[0] == "op":
            _write_operation(K, qc, item[1], item[2])
        else:
            _write_block(K, qc, item[1], registers)
    return qc


def _write_block(K: ArrayBackend, qc: Any, block: Block, registers: dict) -> None:
    """One ``if_test`` (with its ``else``) of a block of conditioned gates."""
    with qc.if_test(qiskit_condition(block.condition, qc.clbits, registers)) as otherwise:
        for offset, op in enumerate(block.operations):
            _write_operation(K, qc, block.position + offset, op)
    if block.else_operations:
        with otherwise:
            for offset, op in enumerate(block.else_operations):
                _write_operation(K, qc, block.else_position + offset, op)


def _layout(circuit: Any) -> list:
    """The classical registers ``to_qiskit`` declares: one per condition on several bits where
    they can (its condition is then ``(register, value)``), the other bits in between."""
    if circuit.num_clbits == 0:
        return []
    wanted = [canonical(op.condition).bits for op in circuit.operations
              if op.condition is not None and op.condition.kind != "parity" and len(op.condition.bits) > 1]
    return register_layout(circuit.num_clbits, wanted)[0]


def _write_operation(K: ArrayBackend, qc: Any, position: int, op: Any) -> None:
    """Append ``op`` (the ``position``-th operation) to ``qc``, or a ``ValueError``."""
    from qiskit.circuit import library

    if op.channel is not None:
        raise ValueError(f"a {op.channel.name} channel has no Qiskit gate: to_qiskit converts "
                         "noiseless circuits")
    if op.gate == "post_select":
        raise ValueError(f"operation {position} (post_select on qubit {op.qubits[0]}): Qiskit has no "
                         "post-selection; measure the qubit instead and keep the shots whose bit is "
                         f"{int(op.params[0])}")
    if op.gate == "measure":
        qc.measure(op.qubits[0], qc.clbits[op.clbits[0]])
        return
    if op.gate == "reset":
        qc.reset(op.qubits[0])
        return
    params = [numeric_angle(K, p, op.gate) for p in op.params] if op.gate != "unitary" else []
    if op.gate == "gphase":  # inside an if_test block: that block's phase
        qc.global_phase += -params[0] if op.dagger else params[0]
        return
    if op.gate == "unitary":
        gate = library.UnitaryGate(np.asarray(K.to_numpy(op.params[0])), check_input=False)
        qubits = list(reversed(op.qubits))
    elif op.gate.startswith(PAULI_ROTATION_PREFIX):  # exp(-i θ P / 2) = exp(-i t P) at t = θ / 2
        from qiskit.quantum_info import SparsePauliOp

        label = op.gate[len(PAULI_ROTATION_PREFIX):][::-1]
        gate = library.PauliEvolutionGate(SparsePauliOp(label), time=params[0] / 2)
        qubits = list(op.qubits)
    else:
        gate = getattr(library, _TO_QISKIT[op.gate])(*params)
        qubits = list(op.qubits)
    qc.append(gate.inverse() if op.dagger else gate, qubits)


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
