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
import weakref
from typing import Any, Sequence

import numpy as np

from ..numerics.host import host_values
from ..numerics.protocol import ArrayBackend
from .pauli import PauliSum, checked_pauli_string, pauli_matrix
from .state_expectation import _diagonal, _flip

__all__ = ["PauliStructure", "BoundPauliSum"]


#: the widest window of neighbouring qubits whose terms act as one dense block (``2^w x 2^w``)
BLOCK_QUBITS = 5


class PauliStructure:
    """The terms of a Pauli sum without coefficients, arranged for fast products with states.

    Terms whose qubits lie within :data:`BLOCK_QUBITS` neighbouring qubits are gathered into
    windows, each a dense ``2^w x 2^w`` matrix applied by one batched matrix product over a
    reshaped state (a nearest-neighbour chain of 20 qubits: five products). The other terms
    are grouped by the qubits they flip (X/Y positions); a group acts as ``flip(D * psi)``
    with its summed diagonal ``D`` (all diagonal terms: one multiplication).

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
    >>> bool(np.allclose(bound.apply(psi), [1.5, 0, 0, 2]))  # (ZI + IZ/2)|00>, 2 XX|00> = 2|11>
    True
    """

    def __init__(self, strings: Sequence[str]) -> None:
        strings = [checked_pauli_string(s) for s in strings]
        if not strings:
            raise ValueError("strings must name at least one Pauli string")
        n = len(strings[0])
        if any(len(s) != n for s in strings):
            raise ValueError(f"every Pauli string needs {n} letters; got {sorted({len(s) for s in strings})}")
        self.strings = tuple(strings)
        self.n_qubits = n
        width = min(BLOCK_QUBITS, n)
        windows: dict[int, list[int]] = {}
        groups: dict[tuple[int, ...], list[int]] = {}
        for index, string in enumerate(strings):
            acted = [q for q, c in enumerate(string) if c != "I"] or [0]
            low, high = acted[0], acted[-1]
            if high - low < width:
                start = _window(low, high, width, n, windows)
                windows.setdefault(start, []).append(index)
            else:
                groups.setdefault(tuple(q for q in acted if string[q] in "XY"), []).append(index)
        self.windows = tuple((start, width, tuple(terms)) for start, terms in sorted(windows.items()))
        self.groups = tuple((mask, tuple(indices)) for mask, indices in groups.items())
        self._units: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # K -> dtype -> unit terms

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

    def one_norm(self, K: ArrayBackend, coefficients: Any) -> float:
        """A bound on ``||H||_1`` (hence on the spectral norm): each window's matrix 1-norm plus
        ``|c_t|`` of every other term (read on the host)."""
        values = _host_values(K, coefficients)
        total = sum(float(np.abs(self._window_matrix(start, width, terms, values)).sum(axis=0).max())
                    for start, width, terms in self.windows)
        return total + float(sum(abs(values[t]) for _, terms in self.groups for t in terms))

    def bind(self, K: ArrayBackend, coefficients: Any, dtype: str | None = None) -> BoundPauliSum:
        """The sum with ``coefficients`` (one per string: numbers, or a backend array, whose
        gradients then flow through every product), in ``dtype`` (the backend's by default)."""
        dtype = dtype or K.precision
        if _is_host(coefficients):
            values = _host_values(K, coefficients)
            if values.shape != (len(self),):
                raise ValueError(f"coefficients has shape {values.shape}; expected ({len(self)},)")
            blocks = [(start, width, K.constant(self._window_matrix(start, width, terms, values), dtype))
                      for start, width, terms in self.windows]
            diagonals = [(mask, K.constant(sum(values[t] * _diagonal(self.strings[t]) for t in terms), dtype))
                         for mask, terms in self.groups]
        else:
            if tuple(K.shape(coefficients)) != (len(self),):
                raise ValueError(f"coefficients has shape {tuple(K.shape(coefficients))}; "
                                 f"expected ({len(self)},)")
            coefficients = K.cast(coefficients, dtype)
            window_units, group_units = self._unit_terms(K, dtype)
            blocks = [(start, width, K.reshape(K.matmul(K.take(coefficients, list(terms)), units),
                                               (2 ** width, 2 ** width)))
                      for (start, width, terms), units in zip(self.windows, window_units)]
            diagonals = [(mask, K.matmul(K.take(coefficients, list(terms)), units))
                         for (mask, terms), units in zip(self.groups, group_units)]
        return BoundPauliSum(K, self.n_qubits, blocks, diagonals)

    def _window_matrix(self, start: int, width: int, terms: tuple[int, ...],
                       values: np.ndarray) -> np.ndarray:
        return sum(values[t] * pauli_matrix(self.strings[t][start:start + width]) for t in terms)

    def _unit_terms(self, K: ArrayBackend, dtype: str) -> tuple[list[Any], list[Any]]:
        """Per window its terms' matrices, ``(terms, 4^w)``; per group its terms' diagonals,
        ``(terms, 2^n)``: constants on ``K`` (kept)."""
        per_dtype = self._units.setdefault(K, {})
        if dtype not in per_dtype:
            windows = [K.constant(np.stack([pauli_matrix(self.strings[t][start:start + width]).reshape(-1)
                                            for t in terms]), dtype) for start, width, terms in self.windows]
            groups = [K.constant(np.stack([_diagonal(self.strings[t]) for t in terms]), dtype)
                      for _, terms in self.groups]
            per_dtype[dtype] = (windows, groups)
        return per_dtype[dtype]


class BoundPauliSum:
    """A Pauli sum with bound coefficients: dense windows and ``(flipped qubits, diagonal)``
    groups on a backend."""

    def __init__(self, K: ArrayBackend, n_qubits: int, blocks: list[tuple[int, int, Any]],
                 diagonals: list[tuple[tuple[int, ...], Any]]) -> None:
        self.K = K
        self.n_qubits = n_qubits
        self.blocks = blocks
        self.diagonals = diagonals

    def apply(self, state: Any) -> Any:
        """``H|state>``; ``state`` of shape ``(2^n,)`` or a stack ``(batch, 2^n)``."""
        K, n = self.K, self.n_qubits
        shape = K.shape(state)
        total = None
        for start, width, matrix in self.blocks:
            after = n - start - width
            if after == 0:  # the window ends the register: one product on the right
                term = K.matmul(K.reshape(state, (-1, 2 ** width)), K.transpose(matrix))
            else:
                term = K.matmul(matrix, K.reshape(state, (-1, 2 ** width, 2 ** after)))
            term = K.reshape(term, shape)
            total = term if total is None else total + term
        for mask, diagonal in self.diagonals:
            term = _flip(K, diagonal * state, n, mask)
            total = term if total is None else total + term
        return total

    def expectation(self, state: Any) -> Any:
        """``<state|H|state>`` (complex; its real part for a Hermitian sum)."""
        return self.K.sum(self.K.conj(state) * self.apply(state), axis=-1)


def _window(low: int, high: int, width: int, n: int, windows: dict[int, list[int]]) -> int:
    """The start of the window for qubits ``low..high``: an existing one holding them, else
    the next of the fixed tiling (starts ``0, w-1, 2(w-1), ...``, overlapping by one qubit), else
    one starting at ``low``."""
    for start in windows:
        if start <= low and high < start + width:
            return start
    tiled = min((low // max(width - 1, 1)) * max(width - 1, 1), n - width)
    return tiled if tiled <= low and high < tiled + width else min(low, n - width)


class _HostKey:
    """The key under which a sum keeps host-side derived data in its backend cache."""


_HOST = _HostKey()


def _is_host(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return True
    return isinstance(values, (list, tuple)) and all(isinstance(v, numbers.Number) for v in values)


def _host_values(K: ArrayBackend, values: Any) -> np.ndarray:
    return np.asarray(values if _is_host(values) else host_values(K, values), dtype=complex)
