"""The particle-conserving engine: a UCC state as a CI vector of the determinants with fixed
alpha and beta electron numbers (``C(n, N_alpha) x C(n, N_beta)`` amplitudes instead of
``2^(2n)``), as TenCirChem's CI-vector engine and ffsim do.

The determinants are the Jordan-Wigner basis states of the sector, in ascending state-vector
index (blocked modes, mode 0 the most significant bit), so a CI vector is exactly the sector's
part of the state vector. An excitation ``T`` (``T^2 = 0``) maps each determinant it applies to,
``src``, to one other, ``dst``, with a sign; ``G = T - T^†`` squares to minus the projector on
those pairs, so ``exp(θ G)`` is a rotation of every pair:

    v'[src] = cos θ v[src] - sin θ s v[dst],    v'[dst] = cos θ v[dst] + sin θ s v[src],

written for every backend as ``v + (cos θ - 1) m v + sin θ (s_full * v[partner])`` (gathers and
products: differentiable by PyTorch's and JAX's autograd). The Hamiltonian is the sector's dense
matrix (PySCF's ``pspace`` on the determinants, converted to this order), built once. On NumPy the
gradient is exact by an adjoint sweep over each excitation's pairs (:mod:`~tyxonq.chem.pair_sweep`):
``dE/dθ_k = 2 <λ_k| G_k |v_k>`` with ``λ = H v`` carried backwards, all real.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from math import comb
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.dual import Dual, is_traced
from ..numerics.memory import fits_in_memory
from .molecule import ActiveSpace
from .pair_sweep import pair_rotations, pair_sweep_energy_and_grad

__all__ = ["SectorBasis", "ExcitationAction", "CIEngine", "sector_dimension"]


def sector_dimension(n_orbitals: int, n_alpha: int, n_beta: int) -> int:
    """``C(n, N_alpha) * C(n, N_beta)``.

    Examples
    --------
    >>> sector_dimension(7, 5, 5)
    441
    """
    return comb(n_orbitals, n_alpha) * comb(n_orbitals, n_beta)


@dataclass(frozen=True)
class SectorBasis:
    """The determinants of ``n_alpha`` and ``n_beta`` electrons in ``n_orbitals`` orbitals as
    Jordan-Wigner state indices (ascending; blocked modes)."""

    n_orbitals: int
    n_alpha: int
    n_beta: int
    indices: np.ndarray

    @classmethod
    def of(cls, n_orbitals: int, n_alpha: int, n_beta: int) -> SectorBasis:
        alpha = _strings(n_orbitals, n_alpha)
        beta = _strings(n_orbitals, n_beta)
        indices = np.sort((alpha[:, None] << np.int64(n_orbitals)) | beta[None, :], axis=None)
        return cls(n_orbitals, n_alpha, n_beta, indices.reshape(-1))

    @property
    def n_modes(self) -> int:
        return 2 * self.n_orbitals

    def __len__(self) -> int:
        return len(self.indices)

    def mode_bit(self, mode: int) -> np.int64:
        return np.int64(1) << np.int64(self.n_modes - 1 - mode)

    def positions(self, indices: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.indices, indices)

    def hartree_fock(self) -> int:
        """The position of the determinant with the lowest orbitals occupied."""
        occupied = 0
        for spin, count in ((0, self.n_alpha), (1, self.n_beta)):
            for p in range(count):
                occupied |= int(self.mode_bit(p + spin * self.n_orbitals))
        return int(self.positions(np.array([occupied]))[0])


def _strings(n: int, electrons: int) -> np.ndarray:
    """Bit strings of ``n`` orbitals with ``electrons`` set (orbital 0 the most significant)."""
    values = np.arange(2 ** n, dtype=np.int64)
    counts = np.array([bin(v).count("1") for v in range(2 ** n)])
    return values[counts == electrons]


def _parity_below(indices: np.ndarray, mode: int, n_modes: int) -> np.ndarray:
    """``(-1)^(occupations of the modes before mode)``: the Jordan-Wigner sign of a ladder op."""
    before = indices >> np.int64(n_modes - mode)  # the bits of modes 0 .. mode-1
    counts = np.zeros(len(indices), dtype=np.int64)
    while np.any(before):
        counts += before & 1
        before = before >> 1
    return 1 - 2 * (counts % 2)


@dataclass(frozen=True)
class ExcitationAction:
    """Where an excitation ``T`` acts in a :class:`SectorBasis`: ``T|src> = sign |dst>``."""

    src: np.ndarray
    dst: np.ndarray
    sign: np.ndarray

    @classmethod
    def of(cls, basis: SectorBasis, particles: Sequence[int], holes: Sequence[int]) -> ExcitationAction:
        """``T = a^†_{p_1} ... a^†_{p_k} a_{h_k} ... a_{h_1}`` (holes annihilated first-to-last
        from the right)."""
        n = basis.n_modes
        state = basis.indices.copy()
        sign = np.ones(len(state), dtype=np.int64)
        alive = np.ones(len(state), dtype=bool)
        for hole in holes:  # a_{h_1} acts first
            bit = basis.mode_bit(hole)
            alive &= (state & bit) != 0
            sign *= _parity_below(state, hole, n)
            state = state & ~bit
        for particle in reversed(particles):  # then a^†_{p_k} ... a^†_{p_1}
            bit = basis.mode_bit(particle)
            alive &= (state & bit) == 0
            sign *= _parity_below(state, particle, n)
            state = state | bit
        src = np.nonzero(alive)[0]
        return cls(src, basis.positions(state[alive]), sign[alive])

    def rotation_vectors(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(partner, mask, s)`` with ``exp(θ G) v = v + (cos θ - 1) mask v + sin θ s v[partner]``."""
        partner = np.arange(size)
        partner[self.src], partner[self.dst] = self.dst, self.src
        mask = np.zeros(size)
        mask[self.src] = mask[self.dst] = 1.0
        s = np.zeros(size)
        s[self.src], s[self.dst] = -self.sign, self.sign
        return partner, mask, s


class CIEngine:
    """A UCC energy on CI vectors: the sector basis, each excitation's rotation vectors and the
    sector Hamiltonian, made once.

    Examples
    --------
    >>> from tyxonq.chem import Molecule, UCCSD
    >>> ucc = UCCSD(Molecule("H 0 0 0; H 0 0 0.74"), engine="civector")
    >>> ucc.ci.dimension, round(ucc.kernel() - ucc.molecule.fci_energy, 8) + 0.0
    (4, 0.0)
    """

    def __init__(self, space: ActiveSpace, excitations: Sequence[Any]) -> None:
        self.basis = SectorBasis.of(space.n_orbitals, space.n_alpha, space.n_beta)
        size = len(self.basis)
        self.actions = [ExcitationAction.of(self.basis, e.particles, e.holes) for e in excitations]
        self.rotations = pair_rotations(self.actions)
        self.hamiltonian = sector_hamiltonian(space, self.basis)
        self.host_hamiltonian = _host_product(self.hamiltonian)
        self.reference = np.zeros(size)
        self.reference[self.basis.hartree_fock()] = 1.0

    @property
    def dimension(self) -> int:
        return len(self.basis)

    @functools.cached_property
    def full_vectors(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each excitation's ``(partner, mask, s)`` over the whole CI vector, for the backends'
        differentiable sweep (made on first use)."""
        return [a.rotation_vectors(self.dimension) for a in self.actions]

    @staticmethod
    def fits(space: ActiveSpace) -> bool:
        """Whether the sector's dense Hamiltonian fits in memory."""
        dimension = sector_dimension(space.n_orbitals, space.n_alpha, space.n_beta)
        return fits_in_memory(get_backend(), dimension * dimension)

    # -- evaluation ------------------------------------------------------------------------
    def state(self, params: Any) -> Any:
        """The CI vector ``prod_k exp(θ_k G_k) |HF>`` on the active backend (real)."""
        K = get_backend()
        vector = K.asarray(self.reference, K.real_dtype)
        for k, (partners, mask, signs) in enumerate(self.full_vectors):
            theta = params[k]
            partner = K.take(vector, partners)
            vector = vector + (K.cos(theta) - 1) * (K.asarray(mask, K.real_dtype) * vector) \
                + K.sin(theta) * (K.asarray(signs, K.real_dtype) * partner)
        return vector

    def energy(self, params: Any) -> Any:
        """``<v|H|v>``: traced numbers (``tq.value_and_grad`` on NumPy) and backends without
        autodiff get the adjoint sweep on the host; PyTorch and JAX their own autodiff."""
        K = get_backend()
        if isinstance(params, np.ndarray) and params.dtype == object:
            traced = list(params.reshape(-1))
            values = np.array([p.value if is_traced(p) else float(p) for p in traced])
            energy, gradient = self.energy_and_grad(values)
            duals = [(g, p) for g, p in zip(gradient, traced) if is_traced(p)]
            total = sum((g * p.gradient for g, p in duals[1:]), duals[0][0] * duals[0][1].gradient) \
                if duals else None
            return Dual(energy, total) if duals else K.asarray(energy, K.real_dtype)
        if K.capabilities.autodiff != "autograd":
            values = np.asarray(K.to_numpy(K.asarray(params, K.real_dtype)), dtype=float)
            return K.asarray(self.energy_and_grad(values, gradient=False)[0], K.real_dtype)
        vector = self.state(params)
        return K.sum(vector * K.matmul(K.asarray(self.hamiltonian, K.real_dtype), vector))

    def energy_and_grad(self, params: np.ndarray, gradient: bool = True) -> tuple[float, np.ndarray]:
        """The energy and its exact gradient on the host (NumPy, float64): one sweep over each
        excitation's pairs (:mod:`~tyxonq.chem.pair_sweep`), one product with ``H``, one sweep back."""
        return pair_sweep_energy_and_grad(self.rotations, self.host_hamiltonian, self.reference,
                                          np.asarray(params, dtype=float), gradient)


#: The host sweep multiplies by a SciPy CSR copy of the sector Hamiltonian when at most this share
#: of its entries is nonzero (only determinants differing in two orbitals or fewer couple; N2 in a
#: (10, 8) space: 10% nonzero, 1.9 against 4.1 ms a product; water: 32%, dense as fast).
SPARSE_SHARE = 0.2


def _host_product(hamiltonian: np.ndarray) -> Any:
    """The sector Hamiltonian for host products: CSR when sparse enough (SciPy), else itself."""
    if np.count_nonzero(hamiltonian) > SPARSE_SHARE * hamiltonian.size:
        return hamiltonian
    from scipy.sparse import csr_matrix

    return csr_matrix(hamiltonian)


def sector_hamiltonian(space: ActiveSpace, basis: SectorBasis) -> np.ndarray:
    """The active space's Hamiltonian on the sector's determinants (dense, real symmetric), from
    PySCF's ``pspace``, its determinants put in :class:`SectorBasis` order and sign."""
    from pyscf import ao2mo
    from pyscf.fci import cistring, direct_spin1

    n = space.n_orbitals
    nelec = (space.n_alpha, space.n_beta)
    size = len(basis)
    eri = ao2mo.restore(1, space.two_body, n)
    addresses, matrix = direct_spin1.pspace(space.one_body, eri, n, nelec, np=size)
    n_beta_strings = comb(n, space.n_beta)
    alpha = cistring.addrs2str(n, space.n_alpha, np.asarray(addresses) // n_beta_strings)
    beta = cistring.addrs2str(n, space.n_beta, np.asarray(addresses) % n_beta_strings)
    # PySCF's strings: bit p for orbital p; here orbital p of spin s is mode p + s n, bit 2n-1-mode
    reverse = np.array([sum(1 << (n - 1 - p) for p in range(n) if (v >> p) & 1) for v in range(2 ** n)])
    indices = (reverse[alpha] << n) | reverse[beta]
    positions = basis.positions(indices)
    # a determinant's sign: PySCF orders creations alpha then beta, each by ascending orbital,
    # which is ascending mode order, the Jordan-Wigner basis state's: no sign to fix
    hamiltonian = np.zeros((size, size))
    hamiltonian[np.ix_(positions, positions)] = matrix
    return hamiltonian + space.constant * np.eye(size)
