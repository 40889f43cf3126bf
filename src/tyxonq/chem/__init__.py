"""Molecules: fermionic operators, fermion-to-qubit mappings, molecular Hamiltonians from PySCF
and variational ansätze (UCCSD, k-UpCCGSD, pUCCD, a hardware-efficient one) with exact gradients
(``tq.chem``; PySCF from the ``chem`` extra, imported when a molecule is built)."""

from __future__ import annotations

from .ansatz import HEA, MolecularAnsatz, hartree_fock_bits, hartree_fock_circuit
from .encodings import MAPPINGS, map_fermion_operator, occupations_to_qubits
from .fermion import FermionOperator, number_operator, spin_orbital, spin_squared, spin_z
from .molecule import ActiveSpace, Molecule, fermionic_hamiltonian, molecular_hamiltonian
from .openfermion_io import from_openfermion, to_openfermion
from .ucc import PUCCD, UCC, UCCSD, Excitation, KUpCCGSD, kUpCCGSD, pUCCD, uccsd_excitations

__all__ = ["FermionOperator", "number_operator", "spin_z", "spin_squared", "spin_orbital", "MAPPINGS",
           "map_fermion_operator", "occupations_to_qubits", "Molecule", "ActiveSpace",
           "molecular_hamiltonian",
           "fermionic_hamiltonian", "hartree_fock_bits", "hartree_fock_circuit", "MolecularAnsatz", "HEA",
           "Excitation", "UCC", "UCCSD", "KUpCCGSD", "PUCCD", "kUpCCGSD", "pUCCD", "uccsd_excitations",
           "to_openfermion", "from_openfermion"]
