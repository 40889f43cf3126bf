"""Molecules from PySCF: mean-field orbitals, integrals in an active space, reference energies
and the qubit Hamiltonian.

Spin orbitals are ordered *blocked* by default: the ``n`` alpha orbitals are modes ``0 .. n-1``
and the beta orbitals modes ``n .. 2n-1`` (Qiskit Nature, ffsim and TenCirChem order them so);
``order="interleaved"`` alternates them (``2p`` alpha, ``2p + 1`` beta: OpenFermion and
PennyLane). Mode ``j`` is qubit ``j`` (the first letter of a Pauli string); an occupied mode is
``|1>``. A blocked fermionic operator becomes interleaved by renaming mode ``p + s n`` as
``2p + s`` (then map it again: Jordan-Wigner's Z chains follow the mode order).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..operators.pauli import PauliSum
from .encodings import (
    MAPPINGS,
    combine_terms,
    encoding,
    map_ladder_terms,
    reduce_parity_qubits,
    to_pauli_letters,
)
from .fermion import ORDERS, FermionOperator, spin_orbital

__all__ = ["Molecule", "ActiveSpace", "molecular_hamiltonian", "fermionic_hamiltonian"]

#: linear molecules' point groups and the Abelian subgroups whose irreps PySCF labels by ids that
#: multiply by XOR
LINEAR_SUBGROUPS = {"Dooh": "D2h", "Coov": "C2v"}


def _pyscf() -> Any:
    try:
        import pyscf  # noqa: F401
        from pyscf import ao2mo, cc, gto, mcscf, mp, scf
    except ImportError as error:  # pragma: no cover - the chem extra installs it
        raise ImportError("tq.chem.Molecule needs PySCF: pip install 'tyxonq[chem]'") from error
    return gto, scf, ao2mo, mcscf, cc, mp


@dataclass(frozen=True)
class ActiveSpace:
    """Integrals of an active space: ``constant`` (nuclear repulsion and frozen core),
    ``one_body[p, q]`` and ``two_body[p, q, r, s] = (pq|rs)`` (chemists' order) over its spatial
    orbitals, and its electrons."""

    constant: float
    one_body: np.ndarray
    two_body: np.ndarray
    n_alpha: int
    n_beta: int

    @property
    def n_orbitals(self) -> int:
        return len(self.one_body)

    @property
    def n_electrons(self) -> int:
        return self.n_alpha + self.n_beta


class Molecule:
    """A molecule's mean field (PySCF's RHF, or ROHF for ``spin > 0``) and what follows from it.

    Parameters
    ----------
    atom : str or list, optional
        PySCF's geometry (``"H 0 0 0; H 0 0 0.74"``); or give ``mole``.
    basis : str
        A basis set PySCF knows (``"sto-3g"``, ``"6-31g"``, ``"cc-pvdz"`` ...).
    charge, spin : int
        Net charge and ``2S`` (the number of unpaired electrons).
    unit : {"angstrom", "bohr"}
    mole : pyscf.gto.Mole, optional
        A built PySCF molecule instead of ``atom`` (its basis, charge and spin are used).
    symmetry : bool
        Use the point group (PySCF's, reduced to D2h or a subgroup of it for linear molecules):
        symmetry-adapted orbitals with irreps (:attr:`orbital_irreps`), so that ansätze drop the
        excitations the symmetry forbids. The geometry may be reoriented; energies are unchanged.

    Examples
    --------
    >>> h2 = Molecule("H 0 0 0; H 0 0 0.74")
    >>> h2.n_electrons, h2.n_orbitals, round(h2.hf_energy, 6)
    (2, 2, -1.116759)
    """

    def __init__(self, atom: Any = None, basis: str = "sto-3g", charge: int = 0, spin: int = 0,
                 unit: str = "angstrom", mole: Any = None, symmetry: bool = False) -> None:
        gto, scf, *_ = _pyscf()
        if mole is None:
            if atom is None:
                raise ValueError("Molecule needs atom= (a geometry) or mole= (a pyscf.gto.Mole)")
            for name, value in (("charge", charge), ("spin", spin)):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"{name}={value!r} must be an int")
            if spin < 0:
                raise ValueError(f"spin={spin} must be non-negative (2S, the unpaired electrons)")
            if str(unit).lower() not in ("angstrom", "bohr", "a", "b"):
                raise ValueError(f"unit={unit!r} must be 'angstrom' or 'bohr'")
            if not isinstance(symmetry, bool):
                raise TypeError(f"symmetry={symmetry!r} must be True or False")
            mole = gto.Mole(atom=atom, basis=basis, charge=charge, spin=spin, unit=unit, verbose=0,
                            symmetry=symmetry)
            electrons = _electron_count(mole)
            if (electrons - spin) % 2:
                raise ValueError(f"{electrons} electrons cannot have spin={spin} (2S): the number of "
                                 f"electrons minus 2S must be even; change charge= or spin=")
            try:
                mole.build()
            except (KeyError, RuntimeError, ValueError) as error:
                raise ValueError(f"PySCF could not build the molecule (basis={basis!r}, atom={atom!r}): "
                                 f"{error}") from error
            if symmetry and mole.groupname in LINEAR_SUBGROUPS:  # irreps that multiply by XOR
                mole.symmetry_subgroup = LINEAR_SUBGROUPS[mole.groupname]
                mole.build()
        self.mole = mole
        self._spaces: dict[tuple[int, int], ActiveSpace] = {}
        self.mean_field = (scf.RHF if mole.spin == 0 else scf.ROHF)(mole)
        self.mean_field.verbose = 0
        self.mean_field.kernel()
        if not self.mean_field.converged:
            raise RuntimeError("the mean-field calculation did not converge; check the geometry")

    @functools.cached_property
    def orbital_irreps(self) -> np.ndarray | None:
        """Each molecular orbital's irrep (PySCF's ids in D2h or a subgroup: the irrep of a
        product is the XOR of the ids), or ``None`` without ``symmetry``."""
        if not self.mole.symmetry:
            return None
        from pyscf.scf import hf_symm

        return np.asarray(hf_symm.get_orbsym(self.mole, self.mean_field.mo_coeff), dtype=np.int64)

    # -- sizes and reference energies -------------------------------------------------------
    @property
    def n_electrons(self) -> int:
        return int(self.mole.nelectron)

    @property
    def n_orbitals(self) -> int:
        """Spatial molecular orbitals."""
        return int(self.mean_field.mo_coeff.shape[1])

    @property
    def n_alpha(self) -> int:
        return int(self.mole.nelec[0])

    @property
    def n_beta(self) -> int:
        return int(self.mole.nelec[1])

    @property
    def nuclear_repulsion(self) -> float:
        return float(self.mole.energy_nuc())

    @property
    def hf_energy(self) -> float:
        return float(self.mean_field.e_tot)

    @functools.cached_property
    def fci_energy(self) -> float:
        """PySCF's full configuration interaction energy (computed on first use)."""
        return self.casci_energy()

    @functools.cached_property
    def ccsd_energy(self) -> float:
        """PySCF's CCSD energy (computed on first use)."""
        return float(self.ccsd_solver.e_tot)

    def casci_energy(self, active_space: tuple[int, int] | None = None) -> float:
        """PySCF's CASCI energy in ``active_space = (electrons, orbitals)`` (all: FCI)."""
        _, _, _, mcscf, _, _ = _pyscf()
        electrons, orbitals = self._checked_space(active_space)
        return float(_solved(mcscf.CASCI(self.mean_field, orbitals, self._active_electrons(electrons))).e_tot)

    @functools.cached_property
    def ccsd_solver(self) -> Any:
        """PySCF's converged CCSD solver (``.t1``, ``.t2``; computed on first use)."""
        *_, cc, _ = _pyscf()
        return _solved(cc.CCSD(self.mean_field))

    @functools.cached_property
    def mp2_solver(self) -> Any:
        """PySCF's MP2 solver (``.t2``; computed on first use)."""
        *_, mp = _pyscf()
        return _solved(mp.MP2(self.mean_field))

    # -- active spaces ---------------------------------------------------------------------
    def _checked_space(self, active_space: tuple[int, int] | None) -> tuple[int, int]:
        if active_space is None:
            return self.n_electrons, self.n_orbitals
        if not (isinstance(active_space, (tuple, list)) and len(active_space) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in active_space)):
            raise ValueError(f"active_space={active_space!r} must be (n_electrons, n_orbitals)")
        electrons, orbitals = active_space
        unpaired = self.n_alpha - self.n_beta
        core = self.n_electrons - electrons
        if not 0 < orbitals <= self.n_orbitals:
            raise ValueError(f"active_space={active_space!r}: {orbitals} orbitals; the molecule has "
                             f"{self.n_orbitals} (between 1 and {self.n_orbitals})")
        if electrons < unpaired or electrons > self.n_electrons or core % 2:
            raise ValueError(f"active_space={active_space!r}: {electrons} active electrons; give "
                             f"{self.n_electrons} or fewer, at least the {unpaired} unpaired ones, "
                             f"and an even number of frozen core electrons")
        if core // 2 + orbitals > self.n_orbitals or electrons > 2 * orbitals:
            raise ValueError(f"active_space={active_space!r} does not fit: {core // 2} core orbitals and "
                             f"{orbitals} active ones out of {self.n_orbitals}, at most 2 electrons each")
        return electrons, orbitals

    def _active_electrons(self, electrons: int) -> tuple[int, int]:
        unpaired = self.n_alpha - self.n_beta
        return (electrons + unpaired) // 2, (electrons - unpaired) // 2

    def active_space(self, active_space: tuple[int, int] | None = None) -> ActiveSpace:
        """The integrals of ``active_space = (electrons, orbitals)`` (default: every orbital and
        electron), the lowest orbitals frozen doubly occupied (PySCF's CASCI effective integrals).

        Examples
        --------
        >>> space = Molecule("H 0 0 0; H 0 0 0.74").active_space()
        >>> space.n_orbitals, space.two_body.shape
        (2, (2, 2, 2, 2))
        """
        electrons, orbitals = self._checked_space(active_space)
        if (electrons, orbitals) not in self._spaces:  # kept: every ansatz of the space reads it
            _, _, ao2mo, mcscf, *_ = _pyscf()
            n_alpha, n_beta = self._active_electrons(electrons)
            solver = mcscf.CASCI(self.mean_field, orbitals, (n_alpha, n_beta))
            one_body, constant = solver.get_h1eff()
            one_body, two_body = np.array(one_body), np.array(ao2mo.restore(1, solver.get_h2eff(), orbitals))
            one_body.flags.writeable = two_body.flags.writeable = False  # shared: nobody may change it
            self._spaces[electrons, orbitals] = ActiveSpace(float(constant), one_body, two_body,
                                                            n_alpha, n_beta)
        return self._spaces[electrons, orbitals]

    def hamiltonian(self, active_space: tuple[int, int] | None = None, mapping: str = "jordan_wigner",
                    order: str = "blocked", two_qubit_reduction: bool = False,
                    tolerance: float = 1e-12) -> PauliSum:
        """The qubit Hamiltonian of ``active_space`` (its identity term holds the nuclear
        repulsion and the frozen core's energy), on ``2 * orbitals`` qubits (two fewer for the
        parity mapping with ``two_qubit_reduction``, blocked order only).

        Examples
        --------
        >>> h = Molecule("H 0 0 0; H 0 0 0.74").hamiltonian()
        >>> h.n_qubits, len(h.terms)
        (4, 15)
        """
        return molecular_hamiltonian(self.active_space(active_space), mapping, order,
                                     two_qubit_reduction, tolerance)

    def __repr__(self) -> str:
        return (f"Molecule({self.mole.atom!r}, basis={self.mole.basis!r}, charge={self.mole.charge}, "
                f"spin={self.mole.spin})")


def _solved(solver: Any) -> Any:
    """A PySCF solver, quiet, after its ``kernel()``."""
    solver.verbose = 0
    solver.kernel()
    return solver


def _electron_count(mole: Any) -> int:
    """Electrons of an unbuilt molecule: nuclear charges minus the charge."""
    from pyscf.data.elements import charge as nuclear_charge

    atoms = mole.format_atom(mole.atom, unit=mole.unit)
    return sum(nuclear_charge(symbol) for symbol, _ in atoms) - mole.charge


def _ladder_arrays(space: ActiveSpace, order: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The Hamiltonian's one- and two-body terms as ladder arrays ``(modes, actions, c)``:
    ``h_pq a^†_ps a_qs`` and ``1/2 (pq|rs) a^†_ps a^†_rt a_st a_qs`` (vanishing products left out)."""
    n = space.n_orbitals
    mode = np.array([[spin_orbital(p, s, n, order) for p in range(n)] for s in (0, 1)])  # [spin, orbital]
    p, q, s = np.meshgrid(np.arange(n), np.arange(n), np.arange(2), indexing="ij")
    one = space.one_body[p, q].reshape(-1)
    keep = one != 0
    one_modes = np.stack([mode[s, p].reshape(-1), mode[s, q].reshape(-1)], axis=1)[keep]
    one_terms = (one_modes, np.tile([1, 0], (len(one_modes), 1)), one[keep])
    p, q, r, t, s, u = np.meshgrid(*(np.arange(n),) * 4, np.arange(2), np.arange(2), indexing="ij")
    two = 0.5 * space.two_body[p, q, r, t].reshape(-1)
    modes = np.stack([mode[s, p], mode[u, r], mode[u, t], mode[s, q]], axis=-1).reshape(-1, 4)
    keep = (two != 0) & (modes[:, 0] != modes[:, 1]) & (modes[:, 2] != modes[:, 3])
    two_terms = (modes[keep], np.tile([1, 1, 0, 0], (int(keep.sum()), 1)), two[keep])
    return [one_terms, two_terms]


def fermionic_hamiltonian(space: ActiveSpace, order: str = "blocked") -> FermionOperator:
    """The active space's Hamiltonian as a :class:`FermionOperator` (with its constant).

    Examples
    --------
    >>> space = Molecule("H 0 0 0; H 0 0 0.74").active_space()
    >>> len(fermionic_hamiltonian(space).terms) > 10
    True
    """
    if order not in ORDERS:
        raise ValueError(f"order={order!r} is not a spin-orbital order; expected one of {ORDERS}")
    terms: dict = {(): space.constant}
    for modes, actions, coefficients in _ladder_arrays(space, order):
        for row, action, c in zip(modes.tolist(), actions.tolist(), coefficients.tolist()):
            key = tuple(zip(row, action))
            terms[key] = terms.get(key, 0.0) + c
    return FermionOperator.from_terms(terms)


def molecular_hamiltonian(space: ActiveSpace, mapping: str = "jordan_wigner", order: str = "blocked",
                          two_qubit_reduction: bool = False, tolerance: float = 1e-12) -> PauliSum:
    """The qubit Hamiltonian of an :class:`ActiveSpace` (see :meth:`Molecule.hamiltonian`).

    Examples
    --------
    >>> space = Molecule("H 0 0 0; H 0 0 0.74").active_space()
    >>> molecular_hamiltonian(space, "parity", two_qubit_reduction=True).n_qubits
    2
    """
    if order not in ORDERS:
        raise ValueError(f"order={order!r} is not a spin-orbital order; expected one of {ORDERS}")
    if mapping not in MAPPINGS:
        raise ValueError(f"mapping={mapping!r} is not a fermion-to-qubit mapping; expected one of {MAPPINGS}")
    if two_qubit_reduction and (mapping != "parity" or order != "blocked"):
        raise ValueError("two_qubit_reduction needs mapping='parity' and order='blocked' (the alpha "
                         "parity on the middle qubit, the total parity on the last)")
    n_modes = 2 * space.n_orbitals
    code = encoding(mapping, n_modes)
    pieces = [map_ladder_terms(modes, actions, c, code) for modes, actions, c in _ladder_arrays(space, order)
              if len(c)]
    pieces.append((np.zeros(1, np.uint64), np.zeros(1, np.uint64), np.array([space.constant], complex)))
    x, z, c = combine_terms(*(np.concatenate(parts) for parts in zip(*pieces)))
    n_qubits = n_modes
    if two_qubit_reduction:
        x, z, c = reduce_parity_qubits(x, z, c, space.n_alpha, space.n_electrons, n_modes)
        n_qubits = n_modes - 2
    terms = to_pauli_letters(x, z, c, n_qubits, tolerance)
    worst = max((abs(v.imag) for v, _ in terms), default=0.0)
    if worst > 1e-8:
        raise ValueError(f"the Hamiltonian mapped to an imaginary coefficient ({worst:.2e}): "
                         f"the integrals are not those of a Hermitian operator")
    return PauliSum([(v.real, s) for v, s in terms] or [(0.0, "I" * n_qubits)], n_qubits)
