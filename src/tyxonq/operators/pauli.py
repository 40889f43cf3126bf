"""Pauli-sum operators: ``H = sum_k c_k P_k`` with ``P_k`` a tensor product of I, X, Y, Z.

A term is a string such as ``"XZIY"`` whose character ``q`` acts on qubit ``q`` (qubit 0 is the
most significant bit of a basis index, as everywhere in tyxonq).
"""

from __future__ import annotations

import numbers
import re
import weakref
from typing import Any, Iterable, Mapping

import numpy as np

from ..numerics.arguments import checked_sequence
from ..numerics.protocol import ArrayBackend

__all__ = ["PauliSum", "checked_pauli_string", "pauli_matrix", "pauli_coefficients", "PAULI_MATRICES"]


PAULI_LETTERS = "IXYZ"
# single-qubit products: (a, b) -> (phase, a·b)
_PRODUCT = {
    ("I", "I"): (1, "I"), ("I", "X"): (1, "X"), ("I", "Y"): (1, "Y"), ("I", "Z"): (1, "Z"),
    ("X", "I"): (1, "X"), ("X", "X"): (1, "I"), ("X", "Y"): (1j, "Z"), ("X", "Z"): (-1j, "Y"),
    ("Y", "I"): (1, "Y"), ("Y", "X"): (-1j, "Z"), ("Y", "Y"): (1, "I"), ("Y", "Z"): (1j, "X"),
    ("Z", "I"): (1, "Z"), ("Z", "X"): (1j, "Y"), ("Z", "Y"): (-1j, "X"), ("Z", "Z"): (1, "I"),
}
_TERM = re.compile(r"^([XYZI])(\d+)$")

#: the one-qubit Pauli matrices by letter
PAULI_MATRICES = {
    "I": np.eye(2, dtype=complex),
    "X": np.array([[0, 1], [1, 0]], dtype=complex),
    "Y": np.array([[0, -1j], [1j, 0]], dtype=complex),
    "Z": np.diag([1.0, -1.0]).astype(complex),
}


def pauli_matrix(letters: str) -> np.ndarray:
    """The ``2^k x 2^k`` matrix of a Pauli string (its first letter the most significant qubit).

    Examples
    --------
    >>> pauli_matrix("XZ").real.astype(int).tolist()
    [[0, 0, 1, 0], [0, 0, 0, -1], [1, 0, 0, 0], [0, -1, 0, 0]]
    """
    matrix = np.ones((1, 1), dtype=complex)
    for letter in letters.upper():
        matrix = np.kron(matrix, PAULI_MATRICES[letter])
    return matrix



def pauli_coefficients(matrix: np.ndarray) -> np.ndarray:
    """The coefficients ``c_P = Tr(P M) / 2^k`` of a ``2^k x 2^k`` matrix in the Pauli basis, so
    that ``M = sum_P c_P P``; index ``P`` runs over the strings of ``"IXYZ"`` in order, the first
    letter (most significant qubit) slowest.

    Examples
    --------
    >>> c = pauli_coefficients(pauli_matrix("XZ") + 0.5 * pauli_matrix("IY"))
    >>> [(int(i), float(c[i].real)) for i in np.flatnonzero(np.abs(c) > 1e-12)]  # IY, XZ
    [(2, 0.5), (7, 1.0)]
  """
    matrix = np.asarray(matrix, dtype=complex)
    k = matrix.shape[0].bit_length() - 1
    # Tr(P M) = sum_{r,c} prod_j P_j[r_j, c_j] M[c, r]: pair column j of P with row j of M
    basis = np.stack([PAULI_MATRICES[letter] for letter in PAULI_LETTERS])  # (4, r, c)
    pairs = basis.transpose(0, 2, 1).reshape(4, 4)  # [a, c * 2 + r]
    tensor = matrix.reshape((2,) * (2 * k))
    tensor = tensor.transpose([axis for j in range(k) for axis in (j, k + j)]).reshape((4,) * k)
    for axis in range(k):
        tensor = np.moveaxis(np.tensordot(pairs, tensor, axes=([1], [axis])), 0, axis)
    return tensor.reshape(-1) / 2 ** k

class PauliSum:
    """A linear combination of Pauli strings on ``n_qubits`` qubits.

    Parameters
    ----------
    terms : iterable of (coefficient, pauli string)
        e.g. ``[(1.0, "ZZI"), (0.5, "XII")]``; repeated strings are added up.
    n_qubits : int, optional
        Defaults to the strings' length; all strings must have it.

    Examples
    --------
    >>> h = PauliSum([(1.0, "ZZ"), (0.5, "XI")])
    >>> h.n_qubits, len(h)
    (2, 2)
    >>> float(h.ground_energy()) < -1.0
    True
    """

    def __init__(self, terms: Iterable[tuple[Any, str]] = (), n_qubits: int | None = None) -> None:
        collected: dict[str, complex] = {}
        for term in checked_sequence(terms, "terms", "(coefficient, pauli string) pairs"):
            if not (isinstance(term, (tuple, list)) and len(term) == 2):
                raise TypeError(f"each term must be a (coefficient, pauli string) pair; got {term!r}")
            coefficient, string = term
            string = checked_pauli_string(string, n_qubits)
            n_qubits = len(string) if n_qubits is None else n_qubits
            collected[string] = collected.get(string, 0) + self._validated_coefficient(coefficient)
        if n_qubits is None:
            raise ValueError("an empty PauliSum needs n_qubits")
        if isinstance(n_qubits, bool) or not isinstance(n_qubits, numbers.Integral) or n_qubits < 1:
            raise ValueError(f"n_qubits={n_qubits!r} must be a positive int")
        self._n_qubits = int(n_qubits)
        self._terms = collected
        self._backend_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # grouped diagonals

    @staticmethod
    def _validated_coefficient(coefficient: Any) -> complex:
        if isinstance(coefficient, bool) or not isinstance(coefficient, numbers.Number):
            raise TypeError(f"coefficient {coefficient!r} must be a number")
        value = complex(coefficient)
        if not (np.isfinite(value.real) and np.isfinite(value.imag)):
            raise ValueError(f"coefficient {coefficient!r} is not finite")
        return value

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, terms: Mapping[str, Any], n_qubits: int | None = None) -> PauliSum:
        """From ``{"XZ": 0.5, "ZZ": 1.0}``.

        Examples
        --------
        >>> PauliSum.from_dict({"XZ": 0.5}).terms
        {'XZ': 0.5}
        """
        return cls([(c, s) for s, c in terms.items()], n_qubits)

    @classmethod
    def from_string(cls, text: str, n_qubits: int) -> PauliSum:
        """From ``"1.0*Z0 Z1 + 0.5*X0 - Y2"``: ``coefficient*`` then letters with qubit indices.

        Examples
        --------
        >>> PauliSum.from_string("1.0*Z0 Z1 - 0.5*X2", n_qubits=3).terms
        {'ZZI': 1.0, 'IIX': -0.5}
        """
        terms = []
        for chunk in re.split(r"(?<![eE*])(?=[+-])", text):
            chunk = chunk.strip()
            if not chunk:
                continue
            sign = -1 if chunk.startswith("-") else 1
            chunk = chunk.lstrip("+-").strip()
            coefficient, product = chunk.split("*", 1) if "*" in chunk else ("1", chunk)
            try:
                value = sign * complex(coefficient.strip().replace("i", "j"))
            except ValueError:
                raise ValueError(f"cannot read the coefficient {coefficient!r} in {chunk!r}") from None
            letters = ["I"] * n_qubits
            for factor in product.split():
                match = _TERM.match(factor.strip().upper())
                if match is None:
                    raise ValueError(f"cannot read {factor!r} in {chunk!r}; write e.g. Z0 X3")
                qubit = int(match.group(2))
                if qubit >= n_qubits:
                    raise ValueError(f"{factor!r} names qubit {qubit}; n_qubits is {n_qubits}")
                if letters[qubit] != "I":
                    raise ValueError(f"qubit {qubit} appears twice in {chunk!r}")
                letters[qubit] = match.group(1)
            terms.append((value.real if value.imag == 0 else value, "".join(letters)))
        if not terms:
            raise ValueError(f"no terms in {text!r}")
        return cls(terms, n_qubits)

    # -- properties ------------------------------------------------------------------------
    @property
    def n_qubits(self) -> int:
        return self._n_qubits

    def backend_cache(self, K: ArrayBackend) -> dict:
        """A dictionary kept for this sum and backend ``K`` while both live: what evaluations
        derive from the terms once (grouped diagonals per dtype) and reuse."""
        return self._backend_cache.setdefault(K, {})

    @property
    def terms(self) -> dict[str, Any]:
        """``{pauli string: coefficient}``; real coefficients are given as floats."""
        return {s: (c.real if c.imag == 0 else c) for s, c in self._terms.items()}

    def is_hermitian(self, tolerance: float = 1e-12) -> bool:
        """Whether every coefficient is real (Pauli strings are Hermitian)."""
        return all(abs(c.imag) <= tolerance for c in self._terms.values())

    def __len__(self) -> int:
        return len(self._terms)

    def __iter__(self):
        return iter((c.real if c.imag == 0 else c, s) for s, c in self._terms.items())

    # -- algebra ---------------------------------------------------------------------------
    def _check_compatible(self, other: PauliSum) -> None:
        if not isinstance(other, PauliSum):
            raise TypeError(f"cannot combine a PauliSum with {type(other).__name__}")
        if other.n_qubits != self.n_qubits:
            raise ValueError(f"PauliSums on {self.n_qubits} and {other.n_qubits} qubits do not combine")

    def __add__(self, other: PauliSum) -> PauliSum:
        self._check_compatible(other)
        return PauliSum([(c, s) for s, c in self._terms.items()]
                        + [(c, s) for s, c in other._terms.items()], self.n_qubits)

    def __sub__(self, other: PauliSum) -> PauliSum:
        return self + (-1) * other

    def __neg__(self) -> PauliSum:
        return (-1) * self

    def __mul__(self, scalar: Any) -> PauliSum:
        if isinstance(scalar, PauliSum):
            raise TypeError("use @ for the operator product of two PauliSums")
        scalar = self._validated_coefficient(scalar)
        return PauliSum([(scalar * c, s) for s, c in self._terms.items()], self.n_qubits)

    __rmul__ = __mul__

    def __matmul__(self, other: PauliSum) -> PauliSum:
        """Operator product, with the phases of the single-qubit products."""
        self._check_compatible(other)
        terms = []
        for s1, c1 in self._terms.items():
            for s2, c2 in other._terms.items():
                phase, letters = 1 + 0j, []
                for a, b in zip(s1, s2):
                    factor, letter = _PRODUCT[(a, b)]
                    phase *= factor
                    letters.append(letter)
                terms.append((c1 * c2 * phase, "".join(letters)))
        return PauliSum(terms, self.n_qubits)

    def simplify(self, tolerance: float = 1e-12) -> PauliSum:
        """Terms merged (they already are) and those with ``|coefficient| <= tolerance`` dropped."""
        return PauliSum([(c, s) for s, c in self._terms.items() if abs(c) > tolerance], self.n_qubits)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PauliSum):
            return NotImplemented
        a, b = self.simplify().terms, other.simplify().terms
        return self.n_qubits == other.n_qubits and a.keys() == b.keys() and all(
            abs(a[s] - b[s]) <= 1e-12 for s in a)

    def __repr__(self) -> str:
        body = " + ".join(f"{c:g}*{s}" for c, s in self) or "0"
        return f"PauliSum({body}, n_qubits={self.n_qubits})"

    # -- expectation values ----------------------------------------------------------------
    def expectation(self, circuit: Any, method: str = "auto", hermitian: bool = True,
                    shots: int | None = None, seed: int | None = None, readout_error: Any = None,
                    return_std: bool = False) -> Any:
        """``<psi|H|psi>`` for the state a circuit prepares, on the active backend.

        Parameters
        ----------
        circuit : Circuit
            Same number of qubits as this operator.
        method : {"auto", "state", "lightcone"}
            ``"state"`` computes the state once and applies every term to it with vectorised
            backend operations; ``"lightcone"`` contracts each term's light cone (no dense state,
            for large circuits with local terms). ``"auto"``: the one estimated faster on this
            machine (:mod:`tyxonq.circuit.calibration`), the state only where it fits in memory;
            on a :class:`~tyxonq.DMCircuit` the state is the density matrix. Evaluated by the
            circuit (``circuit.expectation(self, ...)``): each simulator implements it.
        hermitian : bool
            Return the real part (complex coefficients raise); ``False`` returns the complex value.
        shots : int, optional
            Estimate from this many measurements per group of qubit-wise commuting terms (each
            group measured once in its rotated basis) instead of exactly; ``seed`` seeds them,
            ``readout_error`` (a confusion matrix ``[read, true]``, or one per qubit) misreads
            the sampled bits (by default the circuit's noise model's), ``return_std`` also
            returns the standard error.

        Examples
        --------
        >>> import tyxonq as tq
        >>> h = tq.hamiltonians.tfim(3)
        >>> c = tq.Circuit(3).h(0).h(1).h(2)
        >>> round(float(h.expectation(c)), 12), round(float(c.expectation(h, method="lightcone")), 12)
        (-3.0, -3.0)
        """
        return circuit.expectation(self, method=method, hermitian=hermitian, shots=shots, seed=seed,
                                   readout_error=readout_error, return_std=return_std)

    # -- checking --------------------------------------------------------------------------
    def to_sparse(self) -> Any:
        """The operator as a ``scipy.sparse.csr_matrix`` of size ``2**n`` (needs scipy).

        Examples
        --------
        >>> PauliSum([(1.0, "X")]).to_sparse().toarray().real.tolist()
        [[0.0, 1.0], [1.0, 0.0]]
        """
        from scipy import sparse

        n = self.n_qubits
        index = np.arange(2 ** n)
        total = sparse.csr_matrix((2 ** n, 2 ** n), dtype=complex)
        for string, coefficient in self._terms.items():
            flip, phase_mask, n_y = _masks(string)
            signs = (-1.0) ** _popcount(index & phase_mask)
            values = coefficient * (1j ** n_y) * signs
            total = total + sparse.csr_matrix((values, (index ^ flip, index)), shape=(2 ** n, 2 ** n))
        return total

    def ground_energy(self) -> float:
        """The lowest eigenvalue (``scipy.sparse.linalg.eigsh``; dense for tiny operators).

        Examples
        --------
        >>> round(PauliSum([(1.0, "Z")]).ground_energy(), 12)
        -1.0
        """
        if not self.is_hermitian():
            raise ValueError("ground_energy needs a Hermitian PauliSum (real coefficients)")
        matrix = self.to_sparse()
        if matrix.shape[0] <= 64:
            return float(np.linalg.eigvalsh(matrix.toarray())[0])
        from scipy.sparse.linalg import eigsh

        return float(eigsh(matrix, k=1, which="SA", return_eigenvectors=False)[0])


def checked_pauli_string(string: Any, n_qubits: int | None = None) -> str:
    """``string`` upper-cased, or a ``ValueError``: a non-empty str of I, X, Y, Z (of
    ``n_qubits`` letters when given).

    Examples
    --------
    >>> checked_pauli_string("xzi")
    'XZI'
    """
    if not isinstance(string, str) or not string or set(string.upper()) - set(PAULI_LETTERS):
        raise ValueError(f"Pauli string {string!r} must be a non-empty str of I, X, Y, Z")
    if n_qubits is not None and len(string) != n_qubits:
        raise ValueError(f"Pauli string {string!r} has {len(string)} letters; expected {n_qubits}")
    return string.upper()


def _masks(string: str) -> tuple[int, int, int]:
    """(bits flipped by X/Y, bits whose value signs the amplitude (Y/Z), number of Y)."""
    n = len(string)
    flip = phase = 0
    for q, letter in enumerate(string):
        bit = 1 << (n - 1 - q)
        if letter in "XY":
            flip |= bit
        if letter in "YZ":
            phase |= bit
    return flip, phase, string.count("Y")


def _popcount(values: np.ndarray) -> np.ndarray:
    count = np.zeros_like(values)
    while np.any(values):
        count += values & 1
        values = values >> 1
    return count
