"""Operators on qubits, as data: Pauli sums and standard Hamiltonians, quantum channels (Kraus
operators) and readout confusion matrices. Nothing here simulates a circuit."""

from __future__ import annotations

from . import channels, hamiltonians, readout
from .pauli import PauliSum
from .pauli_action import apply_pauli_sum, pauli_sum_expectation
from .state_expectation import apply_pauli_string

__all__ = ["PauliSum", "hamiltonians", "channels", "readout", "apply_pauli_string", "apply_pauli_sum",
           "pauli_sum_expectation"]
