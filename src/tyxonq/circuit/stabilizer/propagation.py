"""Exact expectation values of Pauli strings on noisy, dynamic Clifford circuits, by carrying each
string backwards through the circuit (the Heisenberg picture).

A Pauli string ``O`` stays one Pauli string times a weight: a run of Clifford gates ``U`` turns it
into ``U^dagger O U`` (stim's ``PauliString.before``); a Pauli channel multiplies the weight by
``sum_E p_E (-1)^[E anticommutes with O]``; a Pauli ``F`` applied when a parity of classical bits
is odd multiplies ``O`` by ``(-1)`` to that parity when ``F`` anticommutes with it (the bits join
the string's sign); the measurement that wrote such a bit turns ``(-1)^b`` into ``Z`` on its
qubit, and any measurement zeroes a string that anticommutes with its ``Z``; a reset zeroes an
``X`` or ``Y`` on its qubit and drops a ``Z``. At the start, ``<0...0|O|0...0>`` is the sign of
an ``I``/``Z`` string and 0 otherwise; bits never written read 0. Every step is exact, and a string
costs one pass over the circuit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..operations.clifford import feedback_of, pauli_of_gate
from ..operations.operation import Operation
from .program import gate_instructions, require_stim, step_text

__all__ = ["BackwardProgram", "backward_program", "propagated_expectations"]

# stim's Pauli codes: 0 I, 1 X, 2 Y, 3 Z; two Paulis anticommute when both are not I and differ
_ANTICOMMUTE = np.array([[(a and b and a != b) for b in range(4)] for a in range(4)], dtype=int)


@dataclass
class BackwardProgram:
    """The circuit as steps for backward propagation: ``("unitary", stim.Circuit)``,
    ``("channel", qubits, sign_table)``, ``("measure", qubit, bit)``, ``("reset", qubit)`` and
    ``("feedback", {qubit: code}, bits, flip)``, in circuit order."""

    steps: list = field(default_factory=list)


def _channel_signs(probabilities: np.ndarray, k: int) -> np.ndarray:
    """Per Pauli string ``O`` on the channel's qubits (codes in base 4), the factor
    ``sum_E p_E (-1)^[E anticommutes with O]``."""
    codes = np.array(np.unravel_index(np.arange(4 ** k), (4,) * k)).T  # (4^k, k)
    parity = np.zeros((4 ** k, 4 ** k), dtype=int)
    for j in range(k):
        parity += _ANTICOMMUTE[codes[:, j][:, None], codes[:, j][None, :]]
    return ((1 - 2 * (parity % 2)) @ probabilities).astype(float)


def backward_program(operations: Sequence[Operation], num_qubits: int) -> BackwardProgram:
    """The steps of ``operations`` (each already checked to be runnable)."""
    stim = require_stim()
    program = BackwardProgram()
    lines: list[str] = []

    def flush() -> None:
        if lines:
            program.steps.append(("unitary", stim.Circuit("\n".join(lines))))
            lines.clear()

    for op in operations:
        if op.channel is None and op.condition is None and op.gate not in (
                "measure", "reset", "detector", "observable"):
            lines += [step_text(step, op.qubits) for step in gate_instructions(op)]
            continue
        flush()
        if op.channel is not None:
            k = len(op.qubits)
            program.steps.append(("channel", op.qubits, _channel_signs(op.channel.pauli_probabilities(), k)))
        elif op.gate == "measure":
            program.steps.append(("measure", op.qubits[0], op.clbits[0]))
        elif op.gate == "reset":
            program.steps.append(("reset", op.qubits[0]))
        elif op.condition is not None:
            letters = pauli_of_gate(op)
            if letters:
                bits, flip = feedback_of(op.condition)
                pauli = {q: "IXYZ".index(letter) for q, letter in zip(op.qubits, letters) if letter != "I"}
                program.steps.append(("feedback", pauli, frozenset(bits), flip))
    flush()
    return program


def _expectation(program: BackwardProgram, pauli: Any) -> float:
    weight = 1.0
    bits: set[int] = set()
    for step in reversed(program.steps):
        kind = step[0]
        if kind == "unitary":
            pauli = pauli.before(step[1])
        elif kind == "channel":
            index = 0
            for qubit in step[1]:
                index = 4 * index + pauli[qubit]
            weight *= step[2][index]
            if weight == 0.0:
                return 0.0
        elif kind == "measure":
            qubit, bit = step[1], step[2]
            code = pauli[qubit]
            if code in (1, 2):
                return 0.0
            if bit in bits:
                bits.discard(bit)
                pauli[qubit] = 3 - code  # O (-1)^b -> O Z: I <-> Z
        elif kind == "reset":
            code = pauli[step[1]]
            if code in (1, 2):
                return 0.0
            pauli[step[1]] = 0
        else:  # feedback
            anticommuting = sum(_ANTICOMMUTE[pauli[q], code] for q, code in step[1].items()) % 2
            if anticommuting:
                bits ^= step[2]
                if step[3]:
                    weight = -weight
    xs, zs = pauli.to_numpy()
    if xs.any():
        return 0.0
    return weight * float(np.real(pauli.sign))


def propagated_expectations(program: BackwardProgram, strings: Sequence[str]) -> np.ndarray:
    """``<O>`` of each Pauli string (one letter per qubit) on the circuit's final state."""
    stim = require_stim()
    return np.array([_expectation(program, stim.PauliString(string)) for string in strings])
