"""Operators on qubits: Pauli sums and standard Hamiltonians (built on the public API only)."""

from __future__ import annotations

from . import hamiltonians
from .pauli import PauliSum
from .state_expectation import apply_pauli_string, pauli_sum_expectation

__all__ = ["PauliSum", "hamiltonians", "apply_pauli_string", "pauli_sum_expectation"]
