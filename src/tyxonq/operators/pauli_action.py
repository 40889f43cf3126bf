"""``H|psi>`` for ``H = sum_t c_t P_t`` with the Pauli structure fixed and the coefficients bound
later (numbers, or backend arrays that carry gradients), never a ``2^n x 2^n`` matrix.

Terms flipping the same qubits (their X/Y positions) form a group ``m``; each term acts as
``P_t|x> = d_t(x) |x xor mask_m>``, so the group acts as ``flip_m(D_m * psi)`` with the summed
diagonal ``D_m = sum_t c_t d_t`` (``2^n`` entries). Binding coefficients builds the ``D_m`` once
(on the host for numbers; by one product with the terms' unit diagonals on the backend for arrays,
so gradients reach the coefficients); each product with ``H`` then costs one multiplication and
one flip per group.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..numerics.protocol import ArrayBackend
from .pauli import PauliSum
from .state_expectation import _diagonal, _flip

__all__ = ["PauliStructure", "BoundPauliSum"]


class PauliStructure:
    """The terms of a Pauli sum, grouped by the qubits they flip, without coefficients.

    Parameters
    ----------
    strings : sequence of str
        Pauli strings of one length ``n`` (letters I, X, Y, Z; qubit 0 first).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> structure = PauliStructure(["ZI", "IZ", "XX"])
    >>> bound = structure.bind(K, [1.0, 0.5, 2.0])
    >>> psi = np.array([1.0, 0, 0, 0], dtype=complex)
    >>> bound.apply(psi).real.tolist()  # (ZI + IZ/2)|00> = 1.5|00>, 2 XX|00> = 2|11>
    [1.5, 0.0, 0.0, 2.0]
    """

    def __init__(self, strings: Sequence[str]) -> None:
        strings = [PauliSum._validated_string(s, None) for s in strings]
        if not strings:
            raise ValueError("strings must name at least one Pauli string")
        n = len(strings[0])
        if any(len(s) != n for s in strings):
            raise ValueError(f"every Pauli string needs {n} letters; got {sorted({len(s) for s in strings})}")
        self.strings = tuple(strings)
        self.n_qubits = n
        groups: dict[tuple[int, ...], list[int]] = {}
        for index, string in enumerate(strings):
            groups.setdefault(tuple(q for q, c in enumerate(string) if c in "XY"), []).append(index)
        self.groups = tuple((mask, tuple(indices)) for mask, indices in groups.items())
        self._unit_diagonals: dict = {}  # (backend id, dtype) -> per group (terms, 2^n) constants

    @classmethod
    def of(cls, hamiltonian: PauliSum) -> tuple[PauliStructure, list[complex]]:
        """The structure of a :class:`PauliSum` and its coefficients (cached on the sum)."""
        if not isinstance(hamiltonian, PauliSum):
            raise TypeError(f"expected a tq.PauliSum; got {type(hamiltonian).__name__}")
        cache = hamiltonian.backend_cache(_HOST)
        if "structure" not in cache:
            cache["structure"] = cls([s for _, s in hamiltonian])
        return cache["structure"], [c for c, _ in hamiltonian]

    def __len__(self) -> int:
        return len(self.strings)

    def norm_bound(self, K: ArrayBackend, coefficients: Any) -> float:
        """``sum_t |c_t|`` (read on the host): a bound on the spectral norm of the sum."""
        return float(np.sum(np.abs(_host_values(K, coefficients))))

    def bind(self, K: ArrayBackend, coefficients: Any, dtype: str | None = None) -> BoundPauliSum:
        """The sum with ``coefficients`` (one per string: numbers, or a backend array, whose
        gradients then flow through every product), in ``dtype`` (the backend's by default)."""
        dtype = dtype or K.precision
        if _is_host(coefficients):
            values = _host_values(K, coefficients)
            if values.shape != (len(self),):
                raise ValueError(f"coefficients has shape {values.shape}; expected ({len(self)},)")
            diagonals = [(mask, K.constant(sum(values[t] * _diagonal(self.strings[t]) for t in terms), dtype))
                         for mask, terms in self.groups]
        else:
            if tuple(K.shape(coefficients)) != (len(self),):
                raise ValueError(f"coefficients has shape {tuple(K.shape(coefficients))}; expected ({len(self)},)")
            coefficients = K.cast(coefficients, dtype)
            diagonals = [(mask, K.matmul(K.take(coefficients, list(terms)), units))
                         for (mask, terms), units in zip(self.groups, self.unit_diagonals(K, dtype))]
        return BoundPauliSum(K, self.n_qubits, diagonals)

    def unit_diagonals(self, K: ArrayBackend, dtype: str) -> list[Any]:
        """Per group, its terms' diagonals ``d_t`` stacked, ``(terms, 2^n)``, on ``K`` (kept)."""
        key = (id(K), dtype)
        if key not in self._unit_diagonals:
            self._unit_diagonals[key] = [K.constant(np.stack([_diagonal(self.strings[t]) for t in terms]), dtype)
                                         for _, terms in self.groups]
        return self._unit_diagonals[key]


class BoundPauliSum:
    """A Pauli sum with bound coefficients, as ``(flipped qubits, diagonal)`` groups on a backend."""

    def __init__(self, K: ArrayBackend, n_qubits: int, diagonals: list[tuple[tuple[int, ...], Any]]) -> None:
        self.K = K
        self.n_qubits = n_qubits
        self.diagonals = diagonals

    def apply(self, state: Any) -> Any:
        """``H|state>``; ``state`` of shape ``(2^n,)`` or a stack ``(batch, 2^n)``."""
        total = None
        for mask, diagonal in self.diagonals:
            term = _flip(self.K, diagonal * state, self.n_qubits, mask)
            total = term if total is None else total + term
        return total

    def expectation(self, state: Any) -> Any:
        """``<state|H|state>`` (complex; its real part for a Hermitian sum)."""
        return self.K.sum(self.K.conj(state) * self.apply(state), axis=-1)


class _HostKey:
    """The key under which a sum keeps host-side derived data in its backend cache."""


_HOST = _HostKey()


def _is_host(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return True
    return isinstance(values, (list, tuple)) and all(isinstance(v, numbers.Number) for v in values)


def _host_values(K: ArrayBackend, values: Any) -> np.ndarray:
    return np.asarray(values if _is_host(values) else K.to_numpy(values), dtype=complex)
