"""PennyLane operations as tyxonq circuit operations: the table the devices execute from.

Each entry of :data:`NATIVE_GATES` appends one PennyLane operation to a tyxonq circuit with the
same matrix (checked gate by gate in ``tests/test_pennylane_device.py``); its angles go through
unchanged, so they may be traced numbers and tyxonq's exact gradients see them. Every other
operation with a matrix is appended as ``circuit.unitary`` (its angles then are numbers only), and
PennyLane's noise channels (:data:`CHANNELS`) become tyxonq channels on a ``DMCircuit``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pennylane.operation import Channel

from ..operators import channels as tq_channels

__all__ = [
    "NATIVE_GATES",
    "ANGLE_GATES",
    "CHANNELS",
    "SKIPPED",
    "append_operation",
    "channel_of",
]

Append = Callable[[Any, Sequence[int], Sequence[Any]], Any]

NATIVE_GATES: dict[str, Append] = {
    "Hadamard": lambda c, q, p: c.h(q[0]),
    "PauliX": lambda c, q, p: c.x(q[0]),
    "PauliY": lambda c, q, p: c.y(q[0]),
    "PauliZ": lambda c, q, p: c.z(q[0]),
    "S": lambda c, q, p: c.s(q[0]),
    "T": lambda c, q, p: c.t(q[0]),
    "SX": lambda c, q, p: c.sx(q[0]),
    "CNOT": lambda c, q, p: c.cx(q[0], q[1]),
    "CY": lambda c, q, p: c.cy(q[0], q[1]),
    "CZ": lambda c, q, p: c.cz(q[0], q[1]),
    "SWAP": lambda c, q, p: c.swap(q[0], q[1]),
    "ISWAP": lambda c, q, p: c.iswap(q[0], q[1]),
    "Toffoli": lambda c, q, p: c.ccx(q[0], q[1], q[2]),
    "CSWAP": lambda c, q, p: c.cswap(q[0], q[1], q[2]),
    "RX": lambda c, q, p: c.rx(q[0], theta=p[0]),
    "RY": lambda c, q, p: c.ry(q[0], theta=p[0]),
    "RZ": lambda c, q, p: c.rz(q[0], theta=p[0]),
    "PhaseShift": lambda c, q, p: c.phase(q[0], theta=p[0]),
    "U3": lambda c, q, p: c.u(q[0], p[0], p[1], p[2]),
    "IsingXX": lambda c, q, p: c.rxx(q[0], q[1], theta=p[0]),
    "IsingYY": lambda c, q, p: c.ryy(q[0], q[1], theta=p[0]),
    "IsingZZ": lambda c, q, p: c.rzz(q[0], q[1], theta=p[0]),
    "CRX": lambda c, q, p: c.crx(q[0], q[1], theta=p[0]),
    "CRY": lambda c, q, p: c.cry(q[0], q[1], theta=p[0]),
    "CRZ": lambda c, q, p: c.crz(q[0], q[1], theta=p[0]),
    "ControlledPhaseShift": lambda c, q, p: c.cphase(q[0], q[1], theta=p[0]),
    # PennyLane's GlobalPhase(phi) is exp(-i phi); tyxonq's gphase(theta) is exp(+i theta)
    "GlobalPhase": lambda c, q, p: c.gphase(0, -p[0]),
}
"""Operations with a tyxonq gate of the same matrix, by PennyLane name."""

ANGLE_GATES = frozenset(
    name for name in NATIVE_GATES
    if name in {"RX", "RY", "RZ", "PhaseShift", "U3", "IsingXX", "IsingYY", "IsingZZ",
                "CRX", "CRY", "CRZ", "ControlledPhaseShift", "GlobalPhase"}
)
"""Native operations whose angles tyxonq's exact gradients differentiate."""

SKIPPED = frozenset({"Identity", "Barrier", "Snapshot"})
"""Operations that change nothing in a simulation (a ``Snapshot`` records nothing here)."""


def _generalized_amplitude_damping(gamma: Any, p: Any) -> tq_channels.Channel:
    # PennyLane's Kraus operators with p are tyxonq's with excited_population=p (checked on the
    # superoperators in the tests)
    return tq_channels.amplitude_damping(gamma, excited_population=p)


CHANNELS: dict[str, Callable[..., tq_channels.Channel]] = {
    "AmplitudeDamping": lambda gamma: tq_channels.amplitude_damping(gamma),
    "GeneralizedAmplitudeDamping": _generalized_amplitude_damping,
    "PhaseDamping": lambda gamma: tq_channels.phase_damping(gamma),
    "DepolarizingChannel": lambda p: tq_channels.depolarizing(p),
    "BitFlip": lambda p: tq_channels.bit_flip(p),
    "PhaseFlip": lambda p: tq_channels.phase_flip(p),
}
"""PennyLane channels with a named tyxonq constructor of the same Kraus map. The other channels
(``ResetError``, ``PauliError``, ``ThermalRelaxationError``, ``QubitChannel``) are passed as
their Kraus operators (``tq.channels.kraus``)."""


def channel_of(op: Any) -> tq_channels.Channel:
    """The tyxonq channel of a PennyLane channel operation.

    Parameters
    ----------
    op : pennylane.operation.Channel
        A channel with numeric parameters.

    Returns
    -------
    tyxonq.channels.Channel

    Examples
    --------
    >>> import pennylane as qml
    >>> channel_of(qml.BitFlip(0.1, wires=0)).name
    'bit_flip'
    """
    build = CHANNELS.get(op.name)
    if build is not None:
        return build(*(float(np.real(x)) for x in op.data))
    return tq_channels.kraus([np.asarray(k, dtype=complex) for k in op.kraus_matrices()])


def append_operation(circuit: Any, op: Any, qubits: Sequence[int], params: Sequence[Any]) -> None:
    """Append one PennyLane operation to a tyxonq circuit, on ``qubits``, with angles ``params``.

    Parameters
    ----------
    circuit : tyxonq.Circuit or tyxonq.DMCircuit
    op : pennylane.operation.Operator
        Native (:data:`NATIVE_GATES`), a channel (on a ``DMCircuit``), or any operation with a
        matrix (then its own numeric data are used and ``params`` is ignored).
    qubits : sequence of int
        The circuit qubits of ``op.wires``.
    params : sequence
        Angles for a native gate: numbers or traced values of tyxonq's gradients.

    Examples
    --------
    >>> import pennylane as qml, tyxonq as tq
    >>> c = tq.Circuit(1)
    >>> append_operation(c, qml.RX(0.5, wires=0), [0], [0.5])
    >>> round(float(c.expectation_ps(z=[0])), 6)
    0.877583
    """
    name = op.name
    if name in SKIPPED:
        return
    native = NATIVE_GATES.get(name)
    if native is not None:
        native(circuit, qubits, params)
        return
    if isinstance(op, Channel):
        circuit.channel(channel_of(op), *qubits)
        return
    circuit.unitary(*qubits, matrix=np.asarray(op.matrix(), dtype=complex))
