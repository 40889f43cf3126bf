"""Operators on qubits, as data: Pauli sums and standard Hamiltonians, quantum channels (Kraus
operators) and readout confusion matrices. Nothing here simulates a circuit."""

from __future__ import annotations

from . import channels, hamiltonians, readout
from .pauli import PauliSum
from .state_expectation import apply_pauli_string, pauli_sum_expectation

__all__ = ["PauliSum", "hamiltonians", "channels", "readout", "apply_pauli_string", "pauli_sum_expectation"]
