"""Matrix-product-state simulation: :class:`MPSCircuit`, a sibling of the pure-state circuit for
long chains and deep circuits with bounded entanglement."""

from __future__ import annotations

from .mps_circuit import MPSCircuit

__all__ = ["MPSCircuit"]
