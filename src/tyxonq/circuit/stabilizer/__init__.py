"""The stabilizer simulator: Clifford circuits with Pauli noise and mid-circuit measurement, on stim."""

from __future__ import annotations

from .stabilizer_circuit import StabilizerCircuit

__all__ = ["StabilizerCircuit"]
