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

A non-Clifford rotation ``exp(-i phi P / 2)`` (a circuit with a few T gates or arbitrary angles)
leaves a string that commutes with ``P`` alone and splits one that anticommutes into
``cos(phi) O + sin(phi) (i P O)``: a string becomes at most ``2^k`` strings through ``k`` rotations
(equal ones merge), still exact; the count is what a rehearsal reports
(:func:`propagation_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..operations.clifford import (
    clifford_reason,
    feedback_of,
    is_quarter_turn,
    pauli_of_gate,
    pauli_rotations,
)
from ..operations.operation import Operation
from .program import gate_instructions, require_stim, step_text

__all__ = ["BackwardProgram", "backward_program", "propagated_expectations", "propagation_counts",
           "PropagationReport", "PropagationTooLarge", "MAX_PROPAGATION_TERMS"]

#: most Pauli strings one observable may become through non-Clifford rotations (each rotation
#: that anticommutes with a string doubles it; equal strings merge)
MAX_PROPAGATION_TERMS = 2 ** 16


class PropagationTooLarge(ValueError):
    """An observable would become more Pauli strings than the limit."""

# stim's Pauli codes: 0 I, 1 X, 2 Y, 3 Z; two Paulis anticommute when both are not I and differ
_ANTICOMMUTE = np.array([[(a and b and a != b) for b in range(4)] for a in range(4)], dtype=int)


@dataclass
class BackwardProgram:
    """The circuit as steps for backward propagation: ``("unitary", stim.Circuit)``,
    ``("channel", qubits, sign_table)``, ``("measure", qubit, bit)``, ``("reset", qubit)`` and
    ``("feedback", {qubit: code}, bits, flip)`` and ``("rotation", {qubit: code}, phi)`` (a
    non-Clifford ``exp(-i phi P / 2)``), in circuit order."""

    steps: list = field(default_factory=list)
    rotations: int = 0


def _channel_signs(probabilities: np.ndarray, k: int) -> np.ndarray:
    """Per Pauli string ``O`` on the channel's qubits (codes in base 4), the factor
    ``sum_E p_E (-1)^[E anticommutes with O]``."""
    codes = np.array(np.unravel_index(np.arange(4 ** k), (4,) * k)).T  # (4^k, k)
    parity = np.zeros((4 ** k, 4 ** k), dtype=int)
    for j in range(k):
        parity += _ANTICOMMUTE[codes[:, j][:, None], codes[:, j][None, :]]
    return ((1 - 2 * (parity % 2)) @ probabilities).astype(float)


def backward_program(operations: Sequence[Operation], num_qubits: int) -> BackwardProgram:
    """The steps of ``operations`` (each already checked to be runnable: Clifford, or a product of
    Pauli rotations whose non-Clifford factors become ``("rotation", {qubit: code}, phi)`` steps)."""
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
            if clifford_reason(op) is None:
                lines += [step_text(step, op.qubits) for step in gate_instructions(op)]
                continue
            for letters, phi in pauli_rotations(op):
                acting = [(q, letter) for q, letter in zip(op.qubits, letters) if letter != "I"]
                if not acting:
                    continue
                if is_quarter_turn(phi):
                    name = "exp:" + "".join(letter for _, letter in acting)
                    rotation = Operation(name, tuple(q for q, _ in acting), (phi,))
                    lines += [step_text(step, rotation.qubits) for step in gate_instructions(rotation)]
                else:
                    flush()
                    program.steps.append(("rotation", {q: "IXYZ".index(letter) for q, letter in acting}, phi))
                    program.rotations += 1
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


def _step(step: tuple, pauli: Any, bits: frozenset, weight: float, stim: Any) -> list:
    """The terms ``(pauli, bits, weight)`` one term becomes, carried back through ``step``."""
    kind = step[0]
    if kind == "unitary":
        pauli = pauli.before(step[1])
        if pauli.sign != 1:
            weight, pauli.sign = -weight, 1
        return [(pauli, bits, weight)]
    if kind == "channel":
        index = 0
        for qubit in step[1]:
            index = 4 * index + pauli[qubit]
        weight *= step[2][index]
        return [(pauli, bits, weight)] if weight != 0.0 else []
    if kind == "measure":
        qubit, bit = step[1], step[2]
        code = pauli[qubit]
        if code in (1, 2):
            return []
        if bit in bits:
            pauli = pauli.copy()
            pauli[qubit] = 3 - code  # O (-1)^b -> O Z: I <-> Z
            bits = bits - {bit}
        return [(pauli, bits, weight)]
    if kind == "reset":
        code = pauli[step[1]]
        if code in (1, 2):
            return []
        if code:
            pauli = pauli.copy()
            pauli[step[1]] = 0
        return [(pauli, bits, weight)]
    anticommuting = sum(_ANTICOMMUTE[pauli[q], code] for q, code in step[1].items()) % 2
    if not anticommuting:
        return [(pauli, bits, weight)]
    if kind == "feedback":
        return [(pauli, bits ^ step[2], -weight if step[3] else weight)]
    # a rotation exp(-i phi P / 2): O -> cos(phi) O + sin(phi) (i P O) when P anticommutes with O
    generator = stim.PauliString(len(pauli))
    for qubit, code in step[1].items():
        generator[qubit] = code
    product = 1j * (generator * pauli)
    sign = float(np.real(product.sign))
    product.sign = 1
    return [(pauli, bits, weight * np.cos(step[2])), (product, bits, weight * sign * np.sin(step[2]))]


def _terms(program: BackwardProgram, pauli: Any, limit: int, stim: Any) -> tuple[list, int, int]:
    """The terms a string becomes at the start of the circuit, the most alive at once, and the term
    steps through Clifford runs (the cost); :class:`PropagationTooLarge` past ``limit`` terms."""
    if pauli.sign != 1:
        raise ValueError("Pauli strings for expectations carry no sign")
    terms = [(pauli, frozenset(), 1.0)]
    widest, passes = 1, 0
    for step in reversed(program.steps):
        passes += len(terms) if step[0] == "unitary" else 0
        terms = [new for term in terms for new in _step(step, *term, stim)]
        if step[0] == "rotation":  # equal strings with equal bits merge
            merged: dict[tuple, list] = {}
            for term_pauli, term_bits, weight in terms:
                key = (str(term_pauli), term_bits)
                if key in merged:
                    merged[key][2] += weight
                else:
                    merged[key] = [term_pauli, term_bits, weight]
            terms = [tuple(term) for term in merged.values() if term[2] != 0.0]
            widest = max(widest, len(terms))
            if len(terms) > limit:
                raise PropagationTooLarge(f"a Pauli string became more than {limit} strings through the "
                                          f"circuit's {program.rotations} non-Clifford rotations; "
                                          "c.rehearse('pauli_expectations', strings) counts them first. Use "
                                          "tq.Circuit (any gate) or fewer rotations")
        if not terms:
            break
    return terms, widest, passes


def _value(terms: list) -> float:
    total = 0.0
    for pauli, _, weight in terms:
        xs, _ = pauli.to_numpy()
        if not xs.any():
            total += weight * float(np.real(pauli.sign))
    return total


def propagated_expectations(program: BackwardProgram, strings: Sequence[str],
                            limit: int = MAX_PROPAGATION_TERMS) -> np.ndarray:
    """``<O>`` of each Pauli string (one letter per qubit) on the circuit's final state."""
    stim = require_stim()
    return np.array([_value(_terms(program, stim.PauliString(string), limit, stim)[0]) for string in strings])


@dataclass(frozen=True)
class PropagationReport:
    """What exact expectations by Pauli propagation cost: ``strings`` observables through a circuit
    with ``rotations`` non-Clifford rotations, each becoming at most ``bound = 2^rotations`` Pauli
    strings; ``widest`` the most any became at once (``None``: past the limit, which the
    computation refuses), ``passes`` the strings carried through runs of Clifford gates in all
    (the work: each is one stim ``PauliString.before`` of the run)."""

    strings: int
    rotations: int
    bound: int
    widest: int | None
    passes: int

    def __str__(self) -> str:
        widest = (f"{self.widest}" if self.widest is not None
                  else f"more than {MAX_PROPAGATION_TERMS} (refused)")
        return (f"{self.strings} Pauli string(s) through {self.rotations} non-Clifford rotation(s): at most "
                f"{self.bound} strings each a priori, {widest} at once, {self.passes} passes through "
                "Clifford runs")


def propagation_counts(program: BackwardProgram, strings: Sequence[str],
                       limit: int = MAX_PROPAGATION_TERMS) -> PropagationReport:
    """What :func:`propagated_expectations` of ``strings`` would do, counted."""
    stim = require_stim()
    widest, passes = 0, 0
    for string in strings:
        try:
            _, most, steps = _terms(program, stim.PauliString(string), limit, stim)
        except PropagationTooLarge:
            return PropagationReport(len(strings), program.rotations, 2 ** program.rotations, None, passes)
        widest, passes = max(widest, most), passes + steps
    return PropagationReport(len(strings), program.rotations, 2 ** program.rotations, widest, passes)
