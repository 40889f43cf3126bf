"""Expectation values from finite shots: Pauli terms grouped into qubit-wise commuting sets, each
set measured once in its rotated basis (only the measured qubits' light cone is contracted), with
optional readout error on the sampled bits."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..operators.readout import apply_readout_error, confusion_matrices
from .operations.operation import Operation

__all__ = ["commuting_groups", "shot_expectation"]

#: Basis changes before a Z measurement: X -> H, Y -> S^dagger then H.
_ROTATIONS = {"X": ("h",), "Y": ("sdg", "h"), "Z": ()}


def commuting_groups(strings: Sequence[str]) -> list[list[int]]:
    """Indices of the strings, grouped greedily into qubit-wise commuting sets (on every qubit the
    members' letters are ``I`` or one common letter).

    Examples
    --------
    >>> commuting_groups(["ZZI", "IZZ", "XII", "XIX", "ZIZ"])
    [[0, 1, 4], [2, 3]]
    """
    groups: list[tuple[list[int], dict[int, str]]] = []
    for index, string in enumerate(strings):
        letters = {q: letter for q, letter in enumerate(string) if letter != "I"}
        for members, basis in groups:
            if all(basis.get(q, letter) == letter for q, letter in letters.items()):
                members.append(index)
                basis.update(letters)
                break
        else:
            groups.append(([index], dict(letters)))
    return [members for members, _ in groups]


def shot_expectation(circuit: Any, strings: Sequence[str], coefficients: Sequence[complex], shots: int,
                     rng: np.random.Generator, readout_error: Any = None) -> tuple[float, float]:
    """``sum_t c_t <P_t>`` from ``shots`` shots per commuting group, and its standard error."""
    n = circuit.num_qubits
    K = get_backend()
    confusions = _confusions(circuit, readout_error, n)
    total, variance = 0.0, 0.0
    for members in commuting_groups(strings):
        basis: dict[int, str] = {}
        for index in members:
            basis.update({q: letter for q, letter in enumerate(strings[index]) if letter != "I"})
        if not basis:  # identity terms: exact
            total += sum(float(np.real(coefficients[i])) for i in members)
            continue
        qubits = sorted(basis)
        rotations = [Operation(gate, (q,)) for q in qubits for gate in _ROTATIONS[basis[q]]]
        rotated = circuit.with_operations(list(circuit.operations) + rotations)
        probabilities = np.clip(np.asarray(K.to_numpy(K.detach(rotated.marginal_probability(qubits))),
                                           dtype=float), 0.0, None)
        outcomes = rng.choice(2 ** len(qubits), size=shots, p=probabilities / probabilities.sum())
        bits = (outcomes[:, None] >> np.arange(len(qubits) - 1, -1, -1)[None, :]) & 1
        if confusions is not None:
            bits = apply_readout_error(bits, [confusions[q] for q in qubits], rng)
        values = np.zeros(shots)
        for index in members:
            columns = [qubits.index(q) for q, letter in enumerate(strings[index]) if letter != "I"]
            parity = bits[:, columns].sum(axis=1) % 2 if columns else np.zeros(shots, dtype=int)
            values += float(np.real(coefficients[index])) * (1 - 2 * parity)
        total += float(values.mean())
        variance += float(values.var(ddof=1)) / shots if shots > 1 else 0.0
    return total, float(np.sqrt(variance))


def _confusions(circuit: Any, readout_error: Any, n: int) -> list | None:
    if readout_error is not None:
        return confusion_matrices(readout_error, n)
    return getattr(circuit, "_readout", None)
