"""Density-matrix simulation: :class:`DMCircuit`, a sibling of the pure-state circuit."""

from __future__ import annotations

from .dm_circuit import DensityMatrixCircuit, DMCircuit

__all__ = ["DMCircuit", "DensityMatrixCircuit"]
