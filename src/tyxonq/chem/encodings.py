"""Fermion-to-qubit mappings as linear binary encodings, applied to many terms at once.

A linear encoding stores ``b = beta f (mod 2)`` on the qubits for the occupations ``f`` of the
modes: Jordan-Wigner (``beta = 1``), parity (``b_j = f_0 + ... + f_j``) and Bravyi-Kitaev (the
Fenwick tree: ``b_j = f_k + ... + f_j`` with ``k = j & (j + 1)``). One rule maps a ladder
operator in every such encoding (Seeley, Richard and Love, J. Chem. Phys. 137, 224109 (2012)):

    a^†_j = X^{U_j} Z^{P_j} (1 + Z^{O_j}) / 2,

with ``U_j`` the qubits that store ``f_j`` (column ``j`` of ``beta``), ``P_j`` the qubits whose
sum is the parity of the modes before ``j`` and ``O_j`` those whose sum is ``f_j`` (rows of
``beta^{-1}``). Terms are kept as bit masks ``c X^x Z^z`` (bit ``q`` for qubit ``q``), products
as ``X^a Z^b X^c Z^d = (-1)^{|b & c|} X^{a^c} Z^{b^d}``, and every term of one length is mapped
by array operations: a molecule's 10^5 fermionic terms take well under a second.

The parity mapping with ``two_qubit_reduction`` (modes in the blocked order, alpha first) drops
the qubits that hold the parities of the alpha and of all electrons, replacing their ``Z`` by
the eigenvalues that the electron numbers fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..operators.pauli import PauliSum
from .fermion import FermionOperator

__all__ = ["MAPPINGS", "BinaryEncoding", "encoding", "map_fermion_operator", "map_ladder_terms",
           "combine_terms", "to_pauli_letters", "occupations_to_qubits", "reduce_parity_qubits",
           "map_to_masks"]

MAPPINGS = ("jordan_wigner", "parity", "bravyi_kitaev")

#: modes a mapping handles (terms are 64-bit masks)
MAX_MODES = 64


@dataclass(frozen=True)
class BinaryEncoding:
    """A linear encoding of ``n_modes`` modes: ``matrix`` (``beta``) and its inverse over GF(2)."""

    name: str
    matrix: np.ndarray
    inverse: np.ndarray

    @property
    def n_modes(self) -> int:
        return len(self.matrix)

    def ladder_masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U, P, O)`` per mode as 64-bit masks (see the module docstring)."""
        weights = np.uint64(1) << np.arange(self.n_modes, dtype=np.uint64)
        update = (self.matrix.T.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        before = np.tril(np.ones((self.n_modes, self.n_modes), dtype=np.int64), -1)  # row j: modes < j
        parity_rows = (before @ self.inverse) % 2
        parity = (parity_rows.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        occupation = (self.inverse.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        return update, parity, occupation


def _fenwick(n: int) -> np.ndarray:
    matrix = np.zeros((n, n), dtype=np.int64)
    for j in range(n):
        matrix[j, j & (j + 1):j + 1] = 1
    return matrix


@lru_cache(maxsize=64)
def encoding(mapping: str, n_modes: int) -> BinaryEncoding:
    """The :class:`BinaryEncoding` of ``mapping`` on ``n_modes`` modes.

    Examples
    --------
    >>> encoding("bravyi_kitaev", 4).matrix.tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 1, 1, 1]]
    """
    if mapping not in MAPPINGS:
        raise ValueError(f"mapping={mapping!r} is not a fermion-to-qubit mapping; expected one of {MAPPINGS}")
    if not 1 <= n_modes <= MAX_MODES:
        raise ValueError(f"{n_modes} modes: a mapping handles 1 to {MAX_MODES} modes")
    if mapping == "jordan_wigner":
        matrix = np.eye(n_modes, dtype=np.int64)
    elif mapping == "parity":
        matrix = np.tril(np.ones((n_modes, n_modes), dtype=np.int64))
    else:
        matrix = _fenwick(n_modes)
    return BinaryEncoding(mapping, matrix, _gf2_inverse(matrix))


def _gf2_inverse(matrix: np.ndarray) -> np.ndarray:
    n = len(matrix)
    work = np.concatenate([matrix % 2, np.eye(n, dtype=np.int64)], axis=1)
    for column in range(n):
        pivot = column + int(np.argmax(work[column:, column]))
        if not work[pivot, column]:
            raise ValueError("the encoding matrix is singular over GF(2)")
        work[[column, pivot]] = work[[pivot, column]]
        rows = np.nonzero(work[:, column])[0]
        rows = rows[rows != column]
        work[rows] ^= work[column]
    return work[:, n:]


def occupations_to_qubits(occupations: Sequence[int], mapping: str) -> list[int]:
    """The qubit values storing mode occupations ``f`` (``b = beta f mod 2``).

    Examples
    --------
    >>> occupations_to_qubits([1, 1, 0, 0], "parity")
    [1, 0, 0, 0]
    """
    f = np.asarray(occupations, dtype=np.int64)
    return [int(v) for v in (encoding(mapping, len(f)).matrix @ f) % 2]


def _parity64(values: np.ndarray) -> np.ndarray:
    """The parity of the set bits of every 64-bit value."""
    v = values.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        v ^= v >> np.uint64(shift)
    return (v & np.uint64(1)).astype(np.int64)


def _popcount64(values: np.ndarray) -> np.ndarray:
    as_bytes = values.astype(np.uint64).view(np.uint8).reshape(values.shape + (8,))
    return _BYTE_COUNTS[as_bytes].sum(axis=-1)


_BYTE_COUNTS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def map_ladder_terms(modes: np.ndarray, actions: np.ndarray, coefficients: np.ndarray,
                     code: BinaryEncoding) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Terms ``c * o_1 ... o_L`` of one length ``L`` (``modes``, ``actions`` of shape ``(T, L)``,
    ``coefficients`` ``(T,)``) as Pauli terms ``(x, z, c)`` meaning ``c X^x Z^z``, duplicates
    added up (not yet in Pauli letters: see :func:`to_pauli_letters`)."""
    update, parity, occupation = code.ladder_masks()
    origin = np.arange(len(coefficients))  # the term each row expands
    x = np.zeros(len(coefficients), dtype=np.uint64)
    z = np.zeros(len(coefficients), dtype=np.uint64)
    c = np.asarray(coefficients, dtype=complex)
    for position in range(modes.shape[1]):
        mode, creation = modes[origin, position], actions[origin, position].astype(bool)
        u, p, o = update[mode], parity[mode], occupation[mode]
        # the factor's two terms X^u Z^(p ^ s o) / 2 (an annihilation's with (-1)^|u & z'|, from
        # Z X = -X Z); multiplied from the right: (X^x Z^z)(X^u Z^z') = (-1)^|z & u| X^(x^u) Z^(z^z')
        moved = 1.0 - 2.0 * _parity64(z & u)
        pieces = []
        for s in (np.uint64(0), np.uint64(1)):
            zf = p ^ (o * s)
            own = np.where(creation, 1.0, 1.0 - 2.0 * _parity64(u & zf))
            pieces.append((x ^ u, z ^ zf, c * own * moved / 2, origin))
        x, z, c, origin = (np.concatenate(parts) for parts in zip(*pieces))
    return combine_terms(x, z, c)


def combine_terms(x: np.ndarray, z: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal ``(x, z)`` terms added up (sorted by ``(x, z)``); exact zeros dropped. One sort of
    a single 64-bit key where both masks fit in 32 bits, else of the two keys (a lexsort)."""
    if len(c) == 0:
        return x, z, c
    if int(np.max(x | z)) < 2 ** 32:
        order = np.argsort((x << np.uint64(32)) | z, kind="stable")
    else:
        order = np.lexsort((z, x))
    x, z, c = x[order], z[order], c[order]
    starts = np.concatenate([[True], (x[1:] != x[:-1]) | (z[1:] != z[:-1])])
    groups = np.cumsum(starts) - 1
    total = (np.bincount(groups, weights=c.real) + 1j * np.bincount(groups, weights=c.imag))
    keep = total != 0
    return x[starts][keep], z[starts][keep], total[keep]


def to_pauli_letters(x: np.ndarray, z: np.ndarray, c: np.ndarray, n_qubits: int,
                     tolerance: float = 1e-12) -> list[tuple[complex, str]]:
    """``c X^x Z^z`` as ``(coefficient, letters)`` with ``XZ = -iY`` on every qubit in both masks."""
    c = c * (-1j) ** (_popcount64(x & z) % 4)
    letters = np.array(["I", "X", "Z", "Y"])
    bits = np.arange(n_qubits, dtype=np.uint64)
    one = np.uint64(1)
    codes = (((x[:, None] >> bits) & one) + 2 * ((z[:, None] >> bits) & one)).astype(np.int64)
    strings = ["".join(row) for row in letters[codes]] if len(c) else []
    return [(complex(v), s) for v, s in zip(c, strings) if abs(v) > tolerance]


def map_fermion_operator(operator: FermionOperator, mapping: str = "jordan_wigner",
                         n_modes: int | None = None, tolerance: float = 1e-12,
                         real: bool | None = None) -> PauliSum:
    """``operator`` as a :class:`~tyxonq.PauliSum` on ``n_modes`` qubits (mode ``j`` on qubit
    ``j``), terms of magnitude at most ``tolerance`` dropped. ``real`` (default: whether the
    operator is Hermitian) keeps the coefficients' real parts after checking the imaginary
    parts are rounding.

    Examples
    --------
    >>> map_fermion_operator(FermionOperator("0^ 0"), n_modes=2).terms
    {'II': 0.5, 'ZI': -0.5}
    """
    n_modes = operator.n_modes if n_modes is None else n_modes
    x, z, c = map_to_masks(operator, mapping, n_modes)
    terms = to_pauli_letters(x, z, c, n_modes, tolerance)
    if real is None:
        real = operator.is_hermitian()
    if real:
        worst = max((abs(v.imag) for v, _ in terms), default=0.0)
        if worst > 1e-8:
            raise ValueError(f"a Hermitian operator mapped to an imaginary coefficient ({worst:.2e})")
        terms = [(v.real, s) for v, s in terms]
    return PauliSum(terms or [(0.0, "I" * n_modes)], n_modes)


def map_to_masks(operator: FermionOperator, mapping: str, n_modes: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``operator`` mapped on ``n_modes`` qubits as terms ``c X^x Z^z`` (bit masks)."""
    if operator.n_modes > n_modes:
        raise ValueError(f"the operator acts on mode {operator.n_modes - 1}; n_modes={n_modes} is too few")
    code = encoding(mapping, max(n_modes, 1))
    by_length: dict[int, list[tuple[tuple, complex]]] = {}
    for term, coefficient in operator.terms.items():
        by_length.setdefault(len(term), []).append((term, coefficient))
    pieces = []
    for length, items in by_length.items():
        coefficients = np.array([c for _, c in items], dtype=complex)
        if length == 0:
            pieces.append((np.zeros(1, np.uint64), np.zeros(1, np.uint64), np.array([coefficients.sum()])))
            continue
        modes = np.array([[m for m, _ in t] for t, _ in items], dtype=np.int64)
        actions = np.array([[a for _, a in t] for t, _ in items], dtype=np.int64)
        pieces.append(map_ladder_terms(modes, actions, coefficients, code))
    if not pieces:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, complex)
    return combine_terms(*(np.concatenate(parts) for parts in zip(*pieces)))


def reduce_parity_qubits(x: np.ndarray, z: np.ndarray, c: np.ndarray, n_alpha: int, n_electrons: int,
                         n_modes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parity-mapped terms (blocked order) without the two symmetry qubits (``n/2 - 1``: the alpha
    parity, ``n - 1``: the total parity), their ``Z`` replaced by the eigenvalues that
    ``n_alpha`` and ``n_electrons`` fix."""
    middle, last = np.uint64(n_modes // 2 - 1), np.uint64(n_modes - 1)
    one = np.uint64(1)
    if np.any((x >> middle) & one) or np.any((x >> last) & one):
        raise ValueError("the operator changes the electron numbers' parities: no two-qubit reduction")
    alpha_sign = -1.0 if n_alpha % 2 else 1.0
    total_sign = -1.0 if n_electrons % 2 else 1.0
    c = c * np.where((z >> middle) & one, alpha_sign, 1.0) * np.where((z >> last) & one, total_sign, 1.0)

    def drop(mask: np.ndarray) -> np.ndarray:
        low = mask & ((one << middle) - one)
        high = (mask >> (middle + one)) & ((one << (last - middle - one)) - one)
        return low | (high << middle)

    return combine_terms(drop(x), drop(z), c)
