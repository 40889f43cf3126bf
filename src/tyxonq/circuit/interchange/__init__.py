"""Circuits in and out: Qiskit ``QuantumCircuit`` and OpenQASM 2/3 (see each module for the
conventions: qubit order, parameters, global phase)."""

from .openqasm import from_openqasm, openqasm_version, to_openqasm
from .qiskit_convert import from_qiskit, to_qiskit

__all__ = ["from_openqasm", "to_openqasm", "openqasm_version", "from_qiskit", "to_qiskit"]
