"""A PennyLane tape as a tyxonq circuit.

The tape has standard wires (``tape.map_to_standard_wires()``): wire ``k`` is qubit ``k``. Its
operations have been decomposed by the device's preprocessing into :mod:`.gates` entries, a
leading state preparation, and the ``Projector`` operations that ``qml.defer_measurements``
writes for post-selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pennylane.operation import StatePrepBase

from ..circuit import Circuit, DMCircuit
from .gates import append_operation

__all__ = ["operation_parameters", "build_circuit", "STATE_PREPARATIONS", "is_state_preparation"]

STATE_PREPARATIONS = frozenset({"StatePrep", "BasisState", "QubitDensityMatrix"})
"""Named state preparations; with every ``StatePrepBase`` (embeddings) see :func:`is_state_preparation`."""


def is_state_preparation(op: Any) -> bool:
    """Whether ``op`` prepares a state (taken as the circuit's input when it comes first).

    Examples
    --------
    >>> import pennylane as qml
    >>> is_state_preparation(qml.AmplitudeEmbedding([0.6, 0.8], wires=0))
    True
    """
    return op.name in STATE_PREPARATIONS or isinstance(op, StatePrepBase)


def operation_parameters(tape: Any) -> list[Any]:
    """The parameters of the tape's operations, in tape order (observables' data excluded).

    Examples
    --------
    >>> import pennylane as qml
    >>> tape = qml.tape.QuantumScript([qml.RX(0.1, 0), qml.CNOT([0, 1])], [qml.expval(qml.Z(1))])
    >>> operation_parameters(tape)
    [0.1]
    """
    return [x for op in tape.operations for x in op.data]


def _input_state(op: Any, num_qubits: int) -> Any:
    if op.name == "QubitDensityMatrix":
        rho = np.asarray(op.data[0], dtype=complex)
        if len(op.wires) != num_qubits or list(op.wires) != list(range(num_qubits)):
            raise ValueError("QubitDensityMatrix must prepare every wire of the circuit, in order; "
                             "prepare the others with a StatePrep or gates")
        return rho
    return np.asarray(op.state_vector(wire_order=range(num_qubits)), dtype=complex).reshape(-1)


def _post_select(circuit: Any, op: Any) -> None:
    basis = np.asarray(op.data[0]).reshape(-1)
    if basis.size != len(op.wires) or not np.isin(basis, (0, 1)).all():
        raise ValueError(f"{op} projects onto a state, not a basis state: tyxonq post-selects "
                         "on measurement outcomes only")
    for wire, outcome in zip(op.wires, basis):
        circuit.post_select(int(wire), int(outcome))


def build_circuit(tape: Any, mixed: bool, params: Sequence[Any] | None = None) -> Any:
    """The tyxonq circuit of a standard-wired tape's operations.

    Parameters
    ----------
    tape : pennylane.tape.QuantumScript
        Wires ``0 .. n-1`` (``map_to_standard_wires``), operations already decomposed.
    mixed : bool
        A ``DMCircuit`` (channels allowed) instead of a ``Circuit``.
    params : sequence, optional
        The operations' parameters in tape order (:func:`operation_parameters`), possibly traced
        by tyxonq's gradients; the tape's own by default.

    Examples
    --------
    >>> import pennylane as qml
    >>> tape = qml.tape.QuantumScript([qml.Hadamard(0), qml.CNOT([0, 1])], [qml.state()])
    >>> build_circuit(tape, mixed=False).probability().round(3).tolist()
    [0.5, 0.0, 0.0, 0.5]
    """
    num_qubits = max(len(tape.wires), 1)
    params = operation_parameters(tape) if params is None else list(params)
    operations = list(tape.operations)
    inputs = None
    if operations and is_state_preparation(operations[0]):
        inputs = _input_state(operations[0], num_qubits)
    circuit = (DMCircuit if mixed else Circuit)(num_qubits, inputs=inputs)
    position = operations[0].num_params if inputs is not None else 0
    for op in operations[1 if inputs is not None else 0:]:
        qubits = [int(w) for w in op.wires]
        if op.name == "Projector":
            _post_select(circuit, op)
        elif is_state_preparation(op):
            raise ValueError(f"{op.name} prepares the whole register: it can only come first")
        else:
            append_operation(circuit, op, qubits, params[position:position + op.num_params])
        position += op.num_params
    return circuit
