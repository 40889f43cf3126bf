"""Unitary coupled-cluster ansätze: UCCSD, k-UpCCGSD and pUCCD as products of fermionic
excitations ``exp(θ (T - T^†))`` on the Hartree-Fock reference.

An excitation ``T = a^†_a a^†_b a_j a_i`` (particles ``(a, b)``, holes ``(i, j)``; a single
``a^†_a a_i``) maps to ``T - T^† = i sum_k c_k P_k`` with mutually commuting Pauli strings, so
``exp(θ (T - T^†)) = prod_k exp(-i (-2 c_k θ) P_k / 2)``: one Pauli rotation per string
(``Circuit.exp_pauli``). The product applies the doubles first, then the singles (TenCirChem's and
PennyLane's order); amplitudes start from MP2 or CCSD (PySCF) or zeros.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ..circuit import Circuit
from ..circuit.operations.fusion import MAX_BLOCK_QUBITS
from .ansatz import MolecularAnsatz
from .civector import CIEngine, sector_dimension
from .encodings import map_to_masks, reduce_parity_qubits, to_pauli_letters
from .fermion import FermionOperator, spin_orbital
from .molecule import ActiveSpace, Molecule

__all__ = ["Excitation", "UCC", "UCCSD", "KUpCCGSD", "PUCCD", "kUpCCGSD", "pUCCD", "uccsd_excitations",
           "paired_doubles"]

INITS = ("mp2", "ccsd", "zeros")
ENGINES = ("auto", "civector", "statevector")

#: Pauli rotations on more qubits than a fused block holds are appended decomposed (a basis
#: change, a CNOT ladder and one ``rz``), which fuse into blocks: as one gate each would be a
#: dense ``2^k x 2^k`` matrix (measured, LiH UCCSD on 12 qubits, the state: 10 s whole, ...)
DIRECT_ROTATION_QUBITS = MAX_BLOCK_QUBITS


@dataclass(frozen=True)
class Excitation:
    """``T = a^†_{particles[0]} a^†_{particles[1]} ... a_{holes[1]} a_{holes[0]}`` (modes)."""

    particles: tuple[int, ...]
    holes: tuple[int, ...]

    def operator(self) -> FermionOperator:
        """The anti-Hermitian generator ``T - T^†``.

        Examples
        --------
        >>> Excitation((2,), (0,)).operator()
        FermionOperator({((2, 1), (0, 0)): 1.0, ((0, 1), (2, 0)): -1.0})
        """
        term = tuple((p, 1) for p in self.particles) + tuple((h, 0) for h in reversed(self.holes))
        excitation = FermionOperator(term)
        return excitation - excitation.dagger()


class UCC(MolecularAnsatz):
    """A unitary coupled-cluster ansatz with a given excitation list (see the module docstring).

    Parameters
    ----------
    molecule : Molecule or ActiveSpace
    excitations : list of Excitation
        In the order they apply (first applied first).
    active_space, mapping, order, two_qubit_reduction
        As for :meth:`Molecule.hamiltonian`.
    init : {"mp2", "ccsd", "zeros"} or array
        Starting amplitudes: PySCF's MP2 or CCSD amplitudes of the excitations (closed shells;
        the singles from CCSD's ``t1``, zero for MP2), zeros, or given values.
    engine : {"auto", "civector", "statevector"}
        Where energies and gradients are computed: on CI vectors of the fixed-electron-number
        sector (:mod:`~tyxonq.chem.civector`; blocked order), or on the circuit's state vector.
        ``"auto"`` takes the CI vector wherever its dense sector Hamiltonian fits in memory (it
        is never larger than the state vector); :meth:`report` says which was taken.
    """

    def __init__(self, molecule: Molecule | ActiveSpace, excitations: list[Excitation],
                 active_space: tuple[int, int] | None = None, mapping: str = "jordan_wigner",
                 order: str = "blocked", two_qubit_reduction: bool = False, init: Any = "mp2",
                 engine: str = "auto") -> None:
        if isinstance(init, str) and init not in INITS:
            raise ValueError(f"init={init!r}; expected one of {INITS} or one amplitude per excitation")
        if engine not in ENGINES:
            raise ValueError(f"engine={engine!r}; expected one of {ENGINES}")
        super().__init__(molecule, active_space, mapping, order, two_qubit_reduction)
        self.excitations = self._allowed(list(excitations))
        self.init = init
        self._initial: np.ndarray | None = None
        if engine == "civector" and order != "blocked":
            raise ValueError("engine='civector' works in the blocked order; use order='blocked'")
        use_ci = engine == "civector" or (engine == "auto" and order == "blocked"
                                          and CIEngine.fits(self.space))
        self.ci: CIEngine | None = CIEngine(self.space, self.excitations) if use_ci else None
        self.engine = "civector" if use_ci else "statevector"

    def energy(self, params: Any = None) -> Any:
        """The energy on the active backend (see ``engine``), differentiable."""
        if self.ci is None:
            return super().energy(params)
        return self.ci.energy(self._checked_params(params))

    def energy_and_grad(self, params: Any = None) -> tuple[float, np.ndarray]:
        """The energy and its exact gradient (the CI vector's adjoint sweep, or NumPy's on the
        state vector)."""
        if self.ci is None:
            return super().energy_and_grad(params)
        return self.ci.energy_and_grad(np.asarray(self._checked_params(params), dtype=float))

    def amplitudes(self, params: Any = None) -> list[dict]:
        """Each excitation with its orbitals and amplitude (``params``: the optimised ones after
        :meth:`kernel`, else the initial ones): ``{"excitation", "orbitals", "amplitude"}``, the
        orbitals as ``(active orbital, "alpha" | "beta")``, particles first, then holes.

        Examples
        --------
        >>> from tyxonq.chem import Molecule
        >>> UCCSD(Molecule("H 0 0 0; H 0 0 0.74"), init="zeros").amplitudes()[0]["orbitals"]
        ((1, 'alpha'), (1, 'beta'), (0, 'alpha'), (0, 'beta'))
        """
        values = np.asarray(self._checked_params(params), dtype=float)
        n = self.space.n_orbitals

        def orbital(mode: int) -> tuple[int, str]:
            orbital, spin = (mode % n, mode // n) if self.order == "blocked" else (mode // 2, mode % 2)
            return orbital, ("alpha", "beta")[spin]

        return [{"excitation": e, "orbitals": tuple(orbital(m) for m in e.particles + e.holes),
                 "amplitude": float(v)} for e, v in zip(self.excitations, values)]

    def report(self) -> dict:
        """Which engine computes the energy and the sizes it chose between.

        Examples
        --------
        >>> from tyxonq.chem import Molecule
        >>> UCCSD(Molecule("H 0 0 0; H 0 0 0.74")).report()
        {'engine': 'civector', 'ci_dimension': 4, 'state_dimension': 16, 'n_params': 3}
        """
        space = self.space
        return {"engine": self.engine,
                "ci_dimension": sector_dimension(space.n_orbitals, space.n_alpha, space.n_beta),
                "state_dimension": 2 ** self.n_qubits, "n_params": self.n_params}

    @property
    def n_params(self) -> int:
        return len(self.excitations)

    def _allowed(self, excitations: list[Excitation]) -> list[Excitation]:
        """The excitations the molecule's point group allows (all of them without ``symmetry``):
        those whose orbitals' irreps multiply to the totally symmetric one. A forbidden one has a
        zero gradient wherever the allowed ones lead, so dropping it changes no energy."""
        irreps = None if self.molecule is None else self.molecule.orbital_irreps
        if irreps is None:
            return excitations
        n = self.space.n_orbitals
        core = (self.molecule.n_electrons - self.space.n_electrons) // 2
        active = irreps[core:core + n]

        def product(excitation: Excitation) -> int:
            value = 0
            for mode in excitation.particles + excitation.holes:
                value ^= int(active[mode % n if self.order == "blocked" else mode // 2])
            return value

        return [e for e in excitations if product(e) == 0]

    @functools.cached_property
    def rotations(self) -> list[list[tuple[str, tuple[int, ...], float]]]:
        """Each excitation's Pauli rotations ``(letters, qubits, -2 c_k)`` in this mapping (made
        on first use, by :meth:`circuit`)."""
        return [self._rotations_of(e) for e in self.excitations]

    def _rotations_of(self, excitation: Excitation) -> list[tuple[str, tuple[int, ...], float]]:
        """``(letters, qubits, -2 c_k)`` of each Pauli string of the excitation's generator."""
        n_modes = 2 * self.space.n_orbitals
        x, z, c = map_to_masks(excitation.operator(), self.mapping, n_modes)
        n_qubits = n_modes
        if self.two_qubit_reduction:
            x, z, c = reduce_parity_qubits(x, z, c, self.space.n_alpha, self.space.n_electrons, n_modes)
            n_qubits -= 2
        rotations = []
        for coefficient, string in to_pauli_letters(x, z, c, n_qubits):
            if abs(coefficient.real) > 1e-12:
                raise ValueError(f"{excitation} mapped to a non-anti-Hermitian generator")
            qubits = tuple(q for q, letter in enumerate(string) if letter != "I")
            rotations.append(("".join(string[q] for q in qubits), qubits, -2.0 * coefficient.imag))
        return rotations

    def append_layers(self, circuit: Circuit, params: Any) -> Circuit:
        for k, rotations in enumerate(self.rotations):
            for letters, qubits, factor in rotations:
                circuit.exp_pauli(letters, qubits, theta=factor * params[k],
                                  decompose=len(qubits) > DIRECT_ROTATION_QUBITS)
        return circuit

    def initial_params(self) -> np.ndarray:
        """The starting amplitudes (``init``), one per excitation."""
        if self._initial is None:
            self._initial = self._amplitudes(self.init)
        return self._initial.copy()

    def _amplitudes(self, init: Any) -> np.ndarray:
        if not isinstance(init, str):
            values = np.asarray(init, dtype=float)
            if values.shape != (self.n_params,):
                raise ValueError(f"init has shape {values.shape}; this ansatz takes ({self.n_params},)")
            return values
        if init not in INITS:
            raise ValueError(f"init={init!r}; expected one of {INITS} or {self.n_params} amplitudes")
        if init == "zeros" or self.n_params == 0:
            return np.zeros(self.n_params)
        if self.molecule is None or self.space.n_alpha != self.space.n_beta or self.order != "blocked":
            raise ValueError(f"init={init!r} takes PySCF's closed-shell amplitudes of a Molecule (blocked "
                             f"order); use init='zeros' here")
        t1, t2 = self._pyscf_amplitudes(init)
        return np.array([self._amplitude(e, t1, t2) for e in self.excitations])

    def _pyscf_amplitudes(self, init: str) -> tuple[np.ndarray, np.ndarray]:
        solver = self.molecule.ccsd_solver if init == "ccsd" else self.molecule.mp2_solver
        t2 = np.asarray(solver.t2)
        t1 = np.asarray(solver.t1) if init == "ccsd" else np.zeros(t2.shape[::2])
        return t1, t2

    def _amplitude(self, excitation: Excitation, t1: np.ndarray, t2: np.ndarray) -> float:
        """The PySCF amplitude of an excitation between active orbitals (0 where none)."""
        n = self.space.n_orbitals
        core = (self.molecule.n_electrons - self.space.n_electrons) // 2
        occupied = self.molecule.n_alpha

        def split(mode: int) -> tuple[int, int]:  # (orbital in the full space, spin)
            return core + mode % n, mode // n

        holes = [split(m) for m in excitation.holes]
        particles = [split(m) for m in excitation.particles]
        if any(p >= occupied for p, _ in holes) or any(p < occupied for p, _ in particles):
            return 0.0  # a generalised excitation: no coupled-cluster amplitude
        if len(holes) == 1:
            (i, si), (a, sa) = holes[0], particles[0]
            return float(t1[i, a - occupied]) if si == sa else 0.0
        (i, si), (j, sj) = holes
        (a, sa), (b, sb) = particles
        i, j, a, b = i, j, a - occupied, b - occupied
        if si == sj == sa == sb:
            return float(t2[i, j, a, b] - t2[i, j, b, a])
        if (si, sj) == (sa, sb):
            return float(t2[i, j, a, b]) if si == 0 else float(t2[j, i, b, a])
        return 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.n_params} excitations on {self.n_qubits} qubits)"


def _modes(n: int, order: str) -> Any:
    return lambda p, s: spin_orbital(p, s, n, order)


def uccsd_excitations(n_orbitals: int, n_alpha: int, n_beta: int, order: str = "blocked") -> list[Excitation]:
    """Spin-conserving doubles, then singles, from occupied to virtual orbitals.

    Examples
    --------
    >>> len(uccsd_excitations(2, 1, 1))  # one alpha-beta double, two singles
    3
    """
    mode = _modes(n_orbitals, order)
    occupied = {0: range(n_alpha), 1: range(n_beta)}
    virtual = {0: range(n_alpha, n_orbitals), 1: range(n_beta, n_orbitals)}
    doubles = []
    for spin in (0, 1):
        for i, j in combinations(occupied[spin], 2):
            for a, b in combinations(virtual[spin], 2):
                doubles.append(Excitation((mode(a, spin), mode(b, spin)), (mode(i, spin), mode(j, spin))))
    for i in occupied[0]:
        for j in occupied[1]:
            for a in virtual[0]:
                for b in virtual[1]:
                    doubles.append(Excitation((mode(a, 0), mode(b, 1)), (mode(i, 0), mode(j, 1))))
    singles = [Excitation((mode(a, spin),), (mode(i, spin),))
               for spin in (0, 1) for i in occupied[spin] for a in virtual[spin]]
    return doubles + singles


class UCCSD(UCC):
    """Unitary coupled cluster with singles and doubles (spin-orbital excitations from the
    occupied to the virtual orbitals of the active space).

    Examples
    --------
    >>> from tyxonq.chem import Molecule
    >>> ucc = UCCSD(Molecule("H 0 0 0; H 0 0 0.74"))
    >>> ucc.n_qubits, ucc.n_params
    (4, 3)
    """

    def __init__(self, molecule: Molecule | ActiveSpace, active_space: tuple[int, int] | None = None,
                 mapping: str = "jordan_wigner", order: str = "blocked", two_qubit_reduction: bool = False,
                 init: Any = "mp2", engine: str = "auto") -> None:
        space = molecule.active_space(active_space) if isinstance(molecule, Molecule) else molecule
        excitations = uccsd_excitations(space.n_orbitals, space.n_alpha, space.n_beta, order)
        super().__init__(molecule, excitations, active_space, mapping, order, two_qubit_reduction, init,
                         engine)


def paired_doubles(n_orbitals: int, holes: Any, particles: Any, order: str) -> list[Excitation]:
    """``p_alpha p_beta -> q_alpha q_beta`` for every hole orbital ``p`` and particle orbital ``q``."""
    mode = _modes(n_orbitals, order)
    return [Excitation((mode(q, 0), mode(q, 1)), (mode(p, 0), mode(p, 1)))
            for p in holes for q in particles if p != q]


class PUCCD(UCC):
    """Paired UCCD: each occupied orbital's pair of electrons moved to a virtual orbital
    (seniority zero; ``n_occupied * n_virtual`` amplitudes). Closed shells only.

    Examples
    --------
    >>> from tyxonq.chem import Molecule
    >>> PUCCD(Molecule("H 0 0 0; H 0 0 0.74")).n_params
    1
    """

    def __init__(self, molecule: Molecule | ActiveSpace, active_space: tuple[int, int] | None = None,
                 mapping: str = "jordan_wigner", order: str = "blocked", two_qubit_reduction: bool = False,
                 init: Any = "mp2", engine: str = "auto") -> None:
        space = molecule.active_space(active_space) if isinstance(molecule, Molecule) else molecule
        if space.n_alpha != space.n_beta:
            raise ValueError("PUCCD moves electron pairs: it needs a closed shell (spin=0)")
        n = space.n_orbitals
        excitations = paired_doubles(n, range(space.n_alpha), range(space.n_alpha, n), order)
        super().__init__(molecule, excitations, active_space, mapping, order, two_qubit_reduction, init,
                         engine)


class KUpCCGSD(UCC):
    """k-UpCCGSD (Lee et al., JCTC 15, 311 (2019)): ``k`` layers of generalised paired doubles
    (a pair moved from orbital ``p`` to ``q``, every ``p < q``: the reverse is the same generator
    negated) and generalised singles (``p < q``, each spin). Its amplitudes start small and seeded
    (``seed``), as TenCirChem's do: at zero, the excitations among occupied (or among virtual)
    orbitals have no gradient.

    Examples
    --------
    >>> from tyxonq.chem import Molecule
    >>> KUpCCGSD(Molecule("H 0 0 0; H 0 0 0.74"), k=2).n_params
    6
    """

    def __init__(self, molecule: Molecule | ActiveSpace, k: int = 1,
                 active_space: tuple[int, int] | None = None, mapping: str = "jordan_wigner",
                 order: str = "blocked", two_qubit_reduction: bool = False,
                 seed: int = 0, engine: str = "auto") -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k={k!r} must be a positive int (the number of layers)")
        space = molecule.active_space(active_space) if isinstance(molecule, Molecule) else molecule
        n = space.n_orbitals
        mode = _modes(n, order)
        layer = [Excitation((mode(q, 0), mode(q, 1)), (mode(p, 0), mode(p, 1)))
                 for p, q in combinations(range(n), 2)]
        layer += [Excitation((mode(q, s),), (mode(p, s),))
                  for s in (0, 1) for p, q in combinations(range(n), 2)]
        self.k, self.seed = k, seed
        super().__init__(molecule, layer * k, active_space, mapping, order, two_qubit_reduction, "zeros",
                         engine)

    def initial_params(self) -> np.ndarray:
        return np.random.default_rng(self.seed).normal(scale=0.05, size=self.n_params)


#: the names TyxonQ and TenCirChem users know
kUpCCGSD = KUpCCGSD
pUCCD = PUCCD
