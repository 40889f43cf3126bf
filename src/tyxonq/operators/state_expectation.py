"""Expectation values of Pauli sums from a state vector, by vectorised operations on the backend.

The state is computed once; each term is applied with one pass per non-identity qubit over a
``(2^q, 2, 2^(n-q-1))`` view of it (X: swap the halves, Z: sign the halves, Y: both) and
reduced with one sum. Diagonal (Z-only) terms act on the probabilities instead. No term
re-simulates the circuit; everything is a backend operation, so autograd and vmap flow through.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pauli_sum_expectation", "apply_pauli_string", "apply_pauli_sum"]


def _axis_view(K: Any, vector: Any, n: int, qubit: int) -> Any:
    return K.reshape(vector, (2 ** qubit, 2, 2 ** (n - qubit - 1)))


def _flipped(K: Any, vector: Any, n: int, qubit: int) -> Any:
    view = _axis_view(K, vector, n, qubit)
    return K.reshape(K.concatenate([view[:, 1:2, :], view[:, 0:1, :]], axis=1), (2 ** n,))


def _scaled(K: Any, vector: Any, n: int, qubit: int, factors: Any) -> Any:
    return K.reshape(_axis_view(K, vector, n, qubit) * factors, (2 ** n,))


def _factors(K: Any, values: list[complex], dtype: Any) -> Any:
    return K.reshape(K.constant(values, dtype), (1, 2, 1))


def apply_pauli_string(K: Any, state: Any, string: str) -> Any:
    """``P|state>`` for a Pauli string ``P`` (character q on qubit q, qubit 0 most significant)."""
    n = len(string)
    sign = _factors(K, [1, -1], K.dtype_of(state))
    y_phase = _factors(K, [-1j, 1j], K.dtype_of(state))
    for qubit, letter in enumerate(string):
        if letter in "XY":
            state = _flipped(K, state, n, qubit)
        if letter == "Z":
            state = _scaled(K, state, n, qubit, sign)
        elif letter == "Y":
            state = _scaled(K, state, n, qubit, y_phase)
    return state


def _diagonal_expectation(K: Any, probabilities: Any, string: str) -> Any:
    n = len(string)
    sign = _factors(K, [1, -1], K.dtype_of(probabilities))
    signed = probabilities
    for qubit, letter in enumerate(string):
        if letter == "Z":
            signed = _scaled(K, signed, n, qubit, sign)
    return K.sum(signed)


def pauli_sum_expectation(K: Any, state: Any, hamiltonian: Any) -> Any:
    """``<state|H|state>`` (complex) for a PauliSum ``H`` and a state vector of the backend."""
    probabilities = None
    total = None
    for coefficient, string in hamiltonian:
        if set(string) <= {"I", "Z"}:
            if probabilities is None:
                probabilities = K.real(K.conj(state) * state)
            value = _diagonal_expectation(K, probabilities, string)
        else:
            value = K.sum(K.conj(state) * apply_pauli_string(K, state, string))
        term = coefficient * value
        total = term if total is None else total + term
    return total


def apply_pauli_sum(K: Any, state: Any, hamiltonian: Any) -> Any:
    """``H|state>`` for a PauliSum ``H``."""
    total = None
    for coefficient, string in hamiltonian:
        term = coefficient * apply_pauli_string(K, state, string)
        total = term if total is None else total + term
    return total
