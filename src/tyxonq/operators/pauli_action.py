"""The one Pauli-sum engine: ``H|psi>`` and ``<psi|H|psi>`` for ``H = sum_t c_t P_t`` with the
Pauli structure fixed and the coefficients bound later (numbers, or backend arrays that carry
gradients), never a ``2^n x 2^n`` matrix. Circuits (a Pauli sum read from the state), noisy
trajectories and time evolution (the Hamiltonian and the observables) all use it.

Terms flipping the same qubits (their X/Y positions) form a group ``m``; each term acts as
``P_t|x> = d_t(x) |x xor mask_m>``, so the group acts as ``flip_m(D_m * psi)`` with the summed
diagonal ``D_m = sum_t c_t d_t`` (``2^n`` entries). Binding coefficients builds the ``D_m`` once
(on the host for numbers; by one product with the terms' unit diagonals on the backend for arrays,
so gradients reach the coefficients); each product with ``H`` then costs one multiplication and
one flip per group; on a backend with compiled sparse products (``sparse_products``: NumPy with
SciPy) the groups act as one fixed-width sparse matrix instead, ``H[x, x xor mask_m] = D_m(x xor
mask_m)`` (:meth:`~tyxonq.numerics.ArrayBackend.row_sparse`): one pass over its entries.
Beyond :data:`GROUPED_QUBITS` qubits no
``2^n`` diagonal is kept: a group's terms are applied one by one. A structure may also gather the
terms within a few neighbouring qubits into dense windows (``block_qubits``, what time evolution
uses); expectations of a sum without windows never form ``H|psi>`` (:meth:`BoundPauliSum.expectation`).
:func:`apply_pauli_sum` and :func:`pauli_sum_expectation` are the doors for a :class:`PauliSum`.
"""

from __future__ import annotations

import numbers
import weakref
from typing import Any, Sequence

import numpy as np

from ..numerics.chunks import chunk_amplitudes
from ..numerics.host import host_values
from ..numerics.memory import fits_in_memory
from ..numerics.protocol import ArrayBackend
from .pauli import PauliSum, checked_pauli_string, pauli_matrix
from .state_expectation import apply_pauli_string, flip_qubits, pauli_diagonal
from .streamed_strings import streamed_pauli_values

__all__ = ["PauliStructure", "BoundPauliSum", "apply_pauli_sum", "pauli_sum_expectation", "BLOCK_QUBITS",
           "GROUPED_QUBITS"]


#: the widest window of neighbouring qubits whose terms act as one dense block (``2^w x 2^w``)
BLOCK_QUBITS = 5
#: Terms of a Pauli sum sharing their X/Y positions are applied together through one diagonal of
#: ``2^n`` entries (:mod:`~tyxonq.operators.pauli_action`) up to this many qubits; beyond, term by
#: term (no ``2^n`` diagonal is kept per group).
GROUPED_QUBITS = 18


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
    block_qubits : int
        The widest window of neighbouring qubits whose terms act as one dense block (0: none,
        every term in its group).

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

    def __init__(self, strings: Sequence[str], block_qubits: int = BLOCK_QUBITS) -> None:
        strings = [checked_pauli_string(s) for s in strings]
        if not strings:
            raise ValueError("strings must name at least one Pauli string")
        n = len(strings[0])
        if any(len(s) != n for s in strings):
            raise ValueError(f"every Pauli string needs {n} letters; got {sorted({len(s) for s in strings})}")
        self.strings = tuple(strings)
        self.n_qubits = n
        width = min(block_qubits, n)
        windows: dict[int, list[int]] = {}
        groups: dict[tuple[int, ...], list[int]] = {}
        for index, string in enumerate(strings):
            acted = [q for q, c in enumerate(string) if c != "I"] or [0]
            low, high = acted[0], acted[-1]
            if width and high - low < width:
                start = _window(low, high, width, n, windows)
                windows.setdefault(start, []).append(index)
            else:
                groups.setdefault(tuple(q for q in acted if string[q] in "XY"), []).append(index)
        self.windows = tuple((start, width, tuple(terms)) for start, terms in sorted(windows.items()))
        self.groups = tuple((mask, tuple(indices)) for mask, indices in groups.items())
        self._units: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # K -> dtype -> unit terms

    @classmethod
    def of(cls, hamiltonian: PauliSum, block_qubits: int = BLOCK_QUBITS) -> tuple[PauliStructure, list[Any]]:
        """The structure of a :class:`PauliSum` and its coefficients (cached on the sum)."""
        if not isinstance(hamiltonian, PauliSum):
            raise TypeError(f"expected a tq.PauliSum; got {type(hamiltonian).__name__}")
        cache = hamiltonian.backend_cache(_HOST)
        key = ("structure", block_qubits)
        if key not in cache:
            cache[key] = cls([s for _, s in hamiltonian], block_qubits)
        return cache[key], [c for c, _ in hamiltonian]

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
            if self.n_qubits > GROUPED_QUBITS:  # no 2^n diagonal per group: string by string
                return BoundPauliSum(K, self.n_qubits, blocks, [], self._strings_of(values))
            diagonals = [(mask, K.constant(sum(values[t] * pauli_diagonal(self.strings[t]) for t in terms),
                                           dtype)) for mask, terms in self.groups]
        else:
            if tuple(K.shape(coefficients)) != (len(self),):
                raise ValueError(f"coefficients has shape {tuple(K.shape(coefficients))}; "
                                 f"expected ({len(self)},)")
            coefficients = K.cast(coefficients, dtype)
            if self.n_qubits > GROUPED_QUBITS:
                window_units, _ = self._unit_terms(K, dtype, groups=False)
                blocks = [(start, width, K.reshape(K.matmul(K.take(coefficients, list(terms)), units),
                                                   (2 ** width, 2 ** width)))
                          for (start, width, terms), units in zip(self.windows, window_units)]
                return BoundPauliSum(K, self.n_qubits, blocks, [], self._strings_of(coefficients))
            window_units, group_units = self._unit_terms(K, dtype)
            blocks = [(start, width, K.reshape(K.matmul(K.take(coefficients, list(terms)), units),
                                               (2 ** width, 2 ** width)))
                      for (start, width, terms), units in zip(self.windows, window_units)]
            diagonals = [(mask, K.matmul(K.take(coefficients, list(terms)), units))
                         for (mask, terms), units in zip(self.groups, group_units)]
        return BoundPauliSum(K, self.n_qubits, blocks, diagonals)

    def _strings_of(self, coefficients: Any) -> list[tuple[Any, str]]:
        """``(coefficient, string)`` of every term in a group (applied one by one)."""
        return [(coefficients[t], self.strings[t]) for _, terms in self.groups for t in terms]

    def _window_matrix(self, start: int, width: int, terms: tuple[int, ...],
                       values: np.ndarray) -> np.ndarray:
        return sum(values[t] * pauli_matrix(self.strings[t][start:start + width]) for t in terms)

    def _unit_terms(self, K: ArrayBackend, dtype: str, groups: bool = True) -> tuple[list[Any], list[Any]]:
        """Per window its terms' matrices, ``(terms, 4^w)``; per group (``groups``) its terms'
        diagonals, ``(terms, 2^n)``: constants on ``K`` (kept)."""
        per_dtype = self._units.setdefault(K, {})
        key = (dtype, groups)
        if key not in per_dtype:
            windows = [K.constant(np.stack([pauli_matrix(self.strings[t][start:start + width]).reshape(-1)
                                            for t in terms]), dtype) for start, width, terms in self.windows]
            diagonals = [K.constant(np.stack([pauli_diagonal(self.strings[t]) for t in terms]), dtype)
                         for _, terms in self.groups] if groups else []
            per_dtype[key] = (windows, diagonals)
        return per_dtype[key]


class BoundPauliSum:
    """A Pauli sum with bound coefficients on a backend: dense windows, ``(flipped qubits,
    diagonal)`` groups, and (past :data:`GROUPED_QUBITS`
    qubits) ``(coefficient, string)`` terms applied one by one."""

    def __init__(self, K: ArrayBackend, n_qubits: int, blocks: list[tuple[int, int, Any]],
                 diagonals: list[tuple[tuple[int, ...], Any]],
                 strings: list[tuple[Any, str]] | None = None) -> None:
        self.K = K
        self.n_qubits = n_qubits
        self.blocks = blocks
        self.diagonals = diagonals
        self.strings = strings or []
        self._expectation_groups: list | None = None
        self._sparse: Any = None  # the groups as one sparse product; False: they are flipped

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
        sparse = self._sparse_groups() if K.host_readable(state) else None
        if sparse is not None:
            total = sparse(state) if total is None else total + sparse(state)
        else:
            for mask, diagonal in self.diagonals:
                term = flip_qubits(K, diagonal * state, n, mask)
                total = term if total is None else total + term
        for coefficient, string in self.strings:
            term = coefficient * apply_pauli_string(K, state, string)
            total = term if total is None else total + term
        return total

    def _sparse_groups(self) -> Any:
        """The groups as one sparse product (kept), or ``None`` where they are flipped one by one:
        a backend without compiled sparse products, fewer than two groups that flip qubits (one
        multiplication and one flip beat a pass over a sparse matrix), diagonals that carry
        gradients, or a matrix (an index and an entry per group and amplitude) that does not
        fit in memory."""
        if self._sparse is None:
            K, n = self.K, self.n_qubits
            self._sparse = False
            if (K.capabilities.sparse_products and sum(1 for mask, _ in self.diagonals if mask) >= 2
                    and all(K.host_readable(diagonal) for _, diagonal in self.diagonals)
                    and fits_in_memory(K, len(self.diagonals) * 2 ** n * 3 // 2)):
                diagonals = [(mask, _readable(K, diagonal)) for mask, diagonal in self.diagonals]
                rows = np.arange(2 ** n)
                flips = [sum(1 << (n - 1 - q) for q in mask) for mask, _ in diagonals]
                columns = np.stack([rows ^ flip for flip in flips], axis=1)
                values = np.stack([host[rows ^ flip] for flip, (_, host) in zip(flips, diagonals)], axis=1)
                self._sparse = K.row_sparse(columns, values)
        return self._sparse or None

    def expectation(self, state: Any) -> Any:
        """``<psi|H|psi>`` (complex; its real part for a Hermitian sum) of a state, or of every
        row of a ``(batch, 2^n)`` stack. A sum of groups only never forms ``H|psi>``: the group
        flipping nothing through the probabilities (one product with its real diagonal), a group
        flipping one qubit ``q`` with a constant diagonal ``c`` (such as ``c X_q``) as
        ``2c Re sum conj(a_0) a_1`` over the state's halves at ``q``, any other as
        ``sum conj(flip(psi)) D psi``. A sum bound string by string (past :data:`GROUPED_QUBITS`)
        on a state of more than one chunk (:func:`~tyxonq.numerics.chunks.chunk_amplitudes`) that
        nothing tracks is read string by string, chunk by chunk
        (:func:`~tyxonq.operators.streamed_strings.streamed_pauli_values`)."""
        K, n = self.K, self.n_qubits
        if self.strings and not self.blocks and not self.diagonals and len(K.shape(state)) == 1 \
                and K.shape(state)[0] > chunk_amplitudes() and K.writes_in_place(state):
            # a large plain state: string by string, chunk by chunk (each within the cache)
            values = streamed_pauli_values(K, state, [string for _, string in self.strings])
            return sum(coefficient * value for (coefficient, _), value in zip(self.strings, values))
        if self.blocks or self.strings:
            return K.sum(K.conj(state) * self.apply(state), axis=-1)
        total = None
        probabilities = None
        for mask, kind, data in self._grouped():
            if kind == "diagonal":
                if probabilities is None:
                    probabilities = K.real(K.conj(state) * state)
                stacked = len(K.shape(state)) > 1
                value = K.matmul(probabilities, data) if stacked else K.sum(probabilities * data)
            elif kind == "pair":
                halves = K.reshape(state, (-1, 2 ** mask[0], 2, 2 ** (n - mask[0] - 1)))
                overlap = K.einsum("bij,bij->b", K.conj(halves[:, :, 0, :]), halves[:, :, 1, :])
                value = (2 * data) * K.real(overlap)
                value = value if len(K.shape(state)) > 1 else K.reshape(value, ())
            else:
                value = K.sum(K.conj(flip_qubits(K, state, n, mask)) * (data * state), axis=-1)
            total = value if total is None else total + value
        return total

    def _grouped(self) -> list[tuple[tuple[int, ...], str, Any]]:
        """The groups classified for :meth:`expectation` (kept): ``"diagonal"`` (nothing flipped,
        a real diagonal), ``"pair"`` (one qubit flipped, a constant host diagonal), ``"general"``."""
        if self._expectation_groups is None:
            K = self.K
            groups = []
            for mask, diagonal in self.diagonals:
                host = _readable(K, diagonal)
                if host is not None and not mask and not host.imag.any():
                    groups.append((mask, "diagonal", K.real(diagonal)))
                elif host is not None and len(mask) == 1 and np.all(host == host[0]):
                    groups.append((mask, "pair", complex(host[0])))
                else:
                    groups.append((mask, "general", diagonal))
            self._expectation_groups = groups
        return self._expectation_groups


def _bound(K: ArrayBackend, hamiltonian: PauliSum, dtype: str) -> BoundPauliSum:
    """The sum's structure without windows, bound to its coefficients on ``K`` in ``dtype``: kept
    on the sum when the coefficients are numbers; bound anew (the gradient reaching them) when
    they are backend arrays."""
    cache = hamiltonian.backend_cache(K)
    key = ("bound", dtype)
    bound = cache.get(key)  # kept only for numbers: a sum's coefficients never change
    if bound is not None:
        return bound
    structure, coefficients = PauliStructure.of(hamiltonian, block_qubits=0)
    if not _is_host(coefficients):
        return structure.bind(K, K.stack([K.cast(K.asarray(c), dtype) for c in coefficients]), dtype)
    bound = cache[key] = structure.bind(K, coefficients, dtype)
    return bound


def apply_pauli_sum(K: ArrayBackend, state: Any, hamiltonian: PauliSum) -> Any:
    """``H|state>`` for a :class:`PauliSum` ``H`` (a state ``(2^n,)`` or a stack ``(batch, 2^n)``):
    one product with a kept diagonal and one flip per group of terms with the same X/Y positions
    (up to :data:`GROUPED_QUBITS` qubits), else term by term.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> zero = np.array([1.0, 0, 0, 0], dtype=complex)
    >>> apply_pauli_sum(K, zero, tq.PauliSum([(0.5, "ZZ"), (2.0, "XI")])).real.tolist()
    [0.5, 0.0, 2.0, 0.0]
    """
    return _bound(K, hamiltonian, K.dtype_name_of(state)).apply(state)


def pauli_sum_expectation(K: ArrayBackend, state: Any, hamiltonian: PauliSum) -> Any:
    """``<state|H|state>`` (complex) for a :class:`PauliSum` ``H``: of a state vector, or of every
    row of a ``(batch, 2^n)`` stack (:meth:`BoundPauliSum.expectation`).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> plus = np.full((1, 4), 0.5, dtype=complex)  # |++>
    >>> np.round(pauli_sum_expectation(K, plus, tq.hamiltonians.tfim(2)).real, 12).tolist()
    [-2.0]
    """
    return _bound(K, hamiltonian, K.dtype_name_of(state)).expectation(state)


def _readable(K: ArrayBackend, values: Any) -> np.ndarray | None:
    """A backend array's values on the host, or ``None`` where they cannot be read (traced)."""
    try:
        return np.asarray(K.to_numpy(K.detach(values)))
    except Exception:  # a traced value: classified as general
        return None


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
