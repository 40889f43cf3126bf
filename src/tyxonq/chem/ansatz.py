"""Variational ansätze for molecules: the shared base (Hamiltonian, energy, exact gradients,
optimisation), the Hartree-Fock state and a hardware-efficient ansatz.

Every ansatz owns its qubit Hamiltonian and reference state; ``energy(params)`` runs on the
active backend, so ``tq.value_and_grad(ansatz.energy)`` gives exact gradients on NumPy (the
adjoint sweep), PyTorch and JAX; ``kernel()`` minimises with SciPy's L-BFGS-B from those
gradients (on NumPy).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from ..circuit import Circuit
from ..gradients import value_and_grad
from ..numerics import get_backend, use_backend
from ..operators.pauli import PauliSum
from .encodings import MAPPINGS, encoding
from .fermion import ORDERS, spin_orbital
from .molecule import ActiveSpace, Molecule, molecular_hamiltonian

__all__ = ["hartree_fock_bits", "hartree_fock_circuit", "MolecularAnsatz", "HEA"]


def hartree_fock_bits(n_orbitals: int, n_alpha: int, n_beta: int, mapping: str = "jordan_wigner",
                      order: str = "blocked", two_qubit_reduction: bool = False) -> list[int]:
    """The qubit values of the Hartree-Fock determinant (the lowest ``n_alpha`` and ``n_beta``
    orbitals occupied) in ``mapping``.

    Examples
    --------
    >>> hartree_fock_bits(2, 1, 1)
    [1, 0, 1, 0]
    >>> hartree_fock_bits(2, 1, 1, "parity", two_qubit_reduction=True)
    [1, 0]
    """
    if mapping not in MAPPINGS:
        raise ValueError(f"mapping={mapping!r} is not a fermion-to-qubit mapping; expected one of {MAPPINGS}")
    if not (0 <= n_alpha <= n_orbitals and 0 <= n_beta <= n_orbitals):
        raise ValueError(f"{n_alpha} alpha and {n_beta} beta electrons do not fit in {n_orbitals} orbitals")
    n_modes = 2 * n_orbitals
    occupations = np.zeros(n_modes, dtype=np.int64)
    for spin, count in ((0, n_alpha), (1, n_beta)):
        for p in range(count):
            occupations[spin_orbital(p, spin, n_orbitals, order)] = 1
    bits = [int(v) for v in (encoding(mapping, n_modes).matrix @ occupations) % 2]
    if two_qubit_reduction:
        if mapping != "parity" or order != "blocked":
            raise ValueError("two_qubit_reduction needs mapping='parity' and order='blocked'")
        del bits[n_modes - 1], bits[n_orbitals - 1]
    return bits


def hartree_fock_circuit(n_orbitals: int, n_alpha: int, n_beta: int, mapping: str = "jordan_wigner",
                         order: str = "blocked", two_qubit_reduction: bool = False) -> Circuit:
    """A circuit preparing the Hartree-Fock determinant: ``X`` on every qubit that holds a 1.

    Examples
    --------
    >>> c = hartree_fock_circuit(2, 1, 1)
    >>> [op.qubits for op in c.operations]
    [(0,), (2,)]
    """
    bits = hartree_fock_bits(n_orbitals, n_alpha, n_beta, mapping, order, two_qubit_reduction)
    circuit = Circuit(len(bits))
    for qubit, bit in enumerate(bits):
        if bit:
            circuit.x(qubit)
    return circuit


class MolecularAnsatz:
    """What every molecular ansatz shares: the active space's qubit Hamiltonian, the
    Hartree-Fock reference, ``energy``, ``energy_and_grad`` and ``kernel``. Subclasses give
    :attr:`n_params`, :meth:`initial_params` and :meth:`append_layers`."""

    def __init__(self, molecule: Molecule | ActiveSpace, active_space: tuple[int, int] | None = None,
                 mapping: str = "jordan_wigner", order: str = "blocked",
                 two_qubit_reduction: bool = False) -> None:
        if isinstance(molecule, Molecule):
            self.molecule: Molecule | None = molecule
            self.space = molecule.active_space(active_space)
        elif isinstance(molecule, ActiveSpace):
            if active_space is not None:
                raise ValueError("active_space= applies to a Molecule; an ActiveSpace is one already")
            self.molecule, self.space = None, molecule
        else:
            raise TypeError(f"molecule must be a tq.chem.Molecule or ActiveSpace; "
                            f"got {type(molecule).__name__}")
        if order not in ORDERS:
            raise ValueError(f"order={order!r} is not a spin-orbital order; expected one of {ORDERS}")
        self.mapping, self.order, self.two_qubit_reduction = mapping, order, two_qubit_reduction
        self.reference = hartree_fock_bits(self.space.n_orbitals, self.space.n_alpha, self.space.n_beta,
                                           mapping, order, two_qubit_reduction)
        self.params: np.ndarray | None = None
        self.optimization: Any = None

    # -- to be given by subclasses -----------------------------------------------------------
    @property
    def n_params(self) -> int:
        raise NotImplementedError

    def initial_params(self) -> np.ndarray:
        raise NotImplementedError

    def append_layers(self, circuit: Circuit, params: Any) -> Circuit:
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------
    @functools.cached_property
    def hamiltonian(self) -> PauliSum:
        """The active space's qubit Hamiltonian in this ansatz's mapping (made on first use: the
        CI-vector engine never needs it)."""
        return molecular_hamiltonian(self.space, self.mapping, self.order, self.two_qubit_reduction)

    @property
    def n_qubits(self) -> int:
        return len(self.reference)

    def _checked_params(self, params: Any) -> Any:
        K = get_backend()
        if params is None:
            params = self.params if self.params is not None else self.initial_params()
        shape = tuple(K.shape(params)) if K.is_array(params) else np.shape(params)
        if shape != (self.n_params,):
            raise ValueError(f"params has shape {shape}; this ansatz takes ({self.n_params},)")
        return params

    def circuit(self, params: Any = None) -> Circuit:
        """The ansatz circuit on the Hartree-Fock reference (``params``: the optimised ones, or
        the initial ones before :meth:`kernel`)."""
        params = self._checked_params(params)
        circuit = Circuit(self.n_qubits)
        for qubit, bit in enumerate(self.reference):
            if bit:
                circuit.x(qubit)
        return self.append_layers(circuit, params)

    def energy(self, params: Any = None) -> Any:
        """``<psi(params)|H|psi(params)>`` on the active backend (real, differentiable)."""
        K = get_backend()
        return K.real(self.circuit(params).expectation(self.hamiltonian))

    def energy_and_grad(self, params: Any = None) -> tuple[float, np.ndarray]:
        """The energy and its exact gradient (NumPy: one adjoint sweep)."""
        with use_backend("numpy"):
            start = np.asarray(self._checked_params(params), dtype=float)
            value, gradient = value_and_grad(self.energy)(start)
        return float(value), np.asarray(gradient, dtype=float)

    def kernel(self, params: Sequence[float] | None = None, tolerance: float = 1e-10,
               max_iterations: int = 1000) -> float:
        """Minimise the energy with L-BFGS-B from exact gradients, starting at ``params`` (the
        initial ones by default); sets :attr:`params` and :attr:`optimization` (SciPy's result)
        and returns the energy.

        Examples
        --------
        >>> from tyxonq.chem import Molecule, UCCSD
        >>> ucc = UCCSD(Molecule("H 0 0 0; H 0 0 0.74"))
        >>> round(ucc.kernel() - ucc.molecule.fci_energy, 8) + 0.0
        0.0
        """
        from scipy.optimize import minimize

        start = np.asarray(self.initial_params() if params is None else params, dtype=float)
        if self.n_params == 0:
            self.params = start
            return self.energy_and_grad(start)[0]
        result = minimize(self.energy_and_grad, start, jac=True, method="L-BFGS-B",
                          options={"ftol": tolerance, "gtol": tolerance * 10, "maxiter": max_iterations})
        self.params, self.optimization = np.asarray(result.x), result
        return float(result.fun)


class HEA(MolecularAnsatz):
    """A hardware-efficient ansatz on the Hartree-Fock reference: ``layers`` of ``RY`` on every
    qubit followed by a CNOT ladder, then a last ``RY`` layer (``(layers + 1) * n_qubits``
    angles; TenCirChem's ``HEA`` pairs it with the parity mapping and two-qubit reduction).

    Examples
    --------
    >>> from tyxonq.chem import Molecule
    >>> hea = HEA(Molecule("H 0 0 0; H 0 0 0.74"), layers=1, mapping="parity", two_qubit_reduction=True)
    >>> hea.n_qubits, hea.n_params
    (2, 4)
    """

    def __init__(self, molecule: Molecule | ActiveSpace, layers: int = 2,
                 active_space: tuple[int, int] | None = None, mapping: str = "parity",
                 order: str = "blocked", two_qubit_reduction: bool = True,
                 seed: int = 0) -> None:
        if isinstance(layers, bool) or not isinstance(layers, int) or layers < 0:
            raise ValueError(f"layers={layers!r} must be a non-negative int")
        super().__init__(molecule, active_space, mapping, order, two_qubit_reduction)
        self.layers, self.seed = layers, seed

    @property
    def n_params(self) -> int:
        return (self.layers + 1) * self.n_qubits

    def initial_params(self) -> np.ndarray:
        """Small seeded angles (zeros would sit on a stationary point of the reference)."""
        return np.random.default_rng(self.seed).normal(scale=0.1, size=self.n_params)

    def append_layers(self, circuit: Circuit, params: Any) -> Circuit:
        n = self.n_qubits
        for layer in range(self.layers + 1):
            for q in range(n):
                circuit.ry(q, theta=params[layer * n + q])
            if layer < self.layers:
                for q in range(n - 1):
                    circuit.cx(q, q + 1)
        return circuit
