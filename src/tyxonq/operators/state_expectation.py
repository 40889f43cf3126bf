"""Pauli strings on a state vector, by vectorised operations on the backend: the primitives of the
one Pauli-sum engine (:mod:`~tyxonq.operators.pauli_action`) and the strings' values read from a
state or a density matrix.

A string acts as ``P|x> = d(x) |x xor m>``: its diagonal ``d`` (:func:`pauli_diagonal`, signs and
phases of its Z and Y letters) and the flip of its X/Y qubits ``m`` (:func:`flip_qubits`, one
reversal of a view of the state). No string re-simulates the circuit; everything is a backend
operation, so autograd and vmap flow through.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from ..numerics.cache_registry import register_function_cache
from ..numerics.protocol import ArrayBackend

__all__ = ["apply_pauli_string", "pauli_diagonal", "flip_qubits", "state_pauli_values",
           "density_pauli_values", "flipped_qubits"]


def _axis_view(K: ArrayBackend, vector: Any, n: int, qubit: int) -> Any:
    """``(rows, 2, 2^(n-qubit-1))``: any leading batch of states folds into the rows."""
    return K.reshape(vector, (-1, 2, 2 ** (n - qubit - 1)))


#: A flip of one of the last two qubits (halves of one or two amplitudes) on an eager backend is a
#: gather by a cached index of ``2^n`` entries, up to this many qubits: swapping such short halves
#: copies 16-32 bytes at a time (measured, 16 qubits: 165-184 us against 41 us on NumPy, 56-76
#: against 56 us on PyTorch); elsewhere, and under compilation, the halves are swapped.
GATHERED_FLIP_QUBITS = 20


def _flipped(K: ArrayBackend, vector: Any, n: int, qubit: int) -> Any:
    if _gathered(K, vector, n, qubit):
        return K.take(vector, _flip_index(n, qubit), axis=-1)
    view = _axis_view(K, vector, n, qubit)
    return K.reshape(K.concatenate([view[:, 1:2, :], view[:, 0:1, :]], axis=1), K.shape(vector))


def _gathered(K: ArrayBackend, vector: Any, n: int, qubit: int) -> bool:
    return n - qubit <= 2 and n <= GATHERED_FLIP_QUBITS and not K.capabilities.compiles_whole_functions \
        and K.shape(vector)[-1] == 2 ** n


@register_function_cache
@functools.lru_cache(maxsize=8)
def _flip_index(n: int, qubit: int) -> np.ndarray:
    """``index[x] = x xor 2^(n - 1 - qubit)``, for ``K.take`` only (left writable: PyTorch warns
    on wrapping a read-only array, and ``take`` never writes to it)."""
    return np.arange(2 ** n, dtype=np.int64) ^ (1 << (n - 1 - qubit))


def _scaled(K: ArrayBackend, vector: Any, n: int, qubit: int, factors: Any) -> Any:
    return K.reshape(_axis_view(K, vector, n, qubit) * factors, K.shape(vector))


def _factors(K: ArrayBackend, values: list[complex], dtype: Any) -> Any:
    return K.reshape(K.constant(values, dtype), (1, 2, 1))


def apply_pauli_string(K: ArrayBackend, state: Any, string: str) -> Any:
    """``P|state>`` for a Pauli string ``P`` (character q on qubit q, qubit 0 most significant):
    ``P|x> = d(x) |x xor m>``, the signs and phases of ``d`` applied qubit by qubit, then one flip
    of the X/Y qubits ``m``."""
    n = len(string)
    sign = _factors(K, [1, -1], K.dtype_of(state))
    y_phase = _factors(K, [1j, -1j], K.dtype_of(state))
    for qubit, letter in enumerate(string):
        if letter == "Z":
            state = _scaled(K, state, n, qubit, sign)
        elif letter == "Y":
            state = _scaled(K, state, n, qubit, y_phase)
    return flip_qubits(K, state, n, flipped_qubits(string))


_BIT_FACTORS = {letter: np.asarray(factors, dtype=complex)
                for letter, factors in {"I": (1, 1), "X": (1, 1), "Z": (1, -1), "Y": (1j, -1j)}.items()}


def pauli_diagonal(string: str) -> np.ndarray:
    """``d`` with ``P|x> = d(x) |x xor mask>`` for a Pauli string ``P``, on the host.

    Examples
    --------
    >>> (pauli_diagonal("ZY").imag + 0.0).tolist()
    [1.0, -1.0, -1.0, 1.0]
    """
    diagonal = np.ones(1, dtype=complex)
    for letter in string:
        diagonal = np.multiply.outer(diagonal, _BIT_FACTORS[letter]).reshape(-1)
    return diagonal


def flip_qubits(K: ArrayBackend, vector: Any, n: int, qubits: tuple[int, ...]) -> Any:
    """``vector`` (or a stack of them) with the bits of ``qubits`` flipped: one reversal of a view
    whose axes of size two are those qubits; qubit by qubit where that view would need more than
    the backend's ``max_ndim`` axes.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> flip_qubits(K, np.arange(4.0), 2, (0,)).tolist()
    [2.0, 3.0, 0.0, 1.0]
    """
    if not qubits:
        return vector
    if len(qubits) == 1 and _gathered(K, vector, n, qubits[0]):
        return _flipped(K, vector, n, qubits[0])
    lead = tuple(K.shape(vector)[:-1])
    view, axes, previous = list(lead), [], -1
    for qubit in sorted(qubits):
        view += [2 ** (qubit - previous - 1), 2]
        axes.append(len(view) - 1)
        previous = qubit
    view.append(2 ** (n - previous - 1))
    if len(view) > K.capabilities.max_ndim:
        for qubit in qubits:
            vector = _flipped(K, vector, n, qubit)
        return vector
    return K.reshape(K.flip(K.reshape(vector, tuple(view)), axes), K.shape(vector))


def state_pauli_values(K: ArrayBackend, state: Any, strings: Sequence[str]) -> Any:
    """``<state|P|state>`` (real) for every Pauli string, from a ``2^n`` state vector (or a stack
    of them, shape ``(batch, 2^n)``: values ``(batch, strings)``), the strings
    grouped by the qubits they flip: with ``P|y> = d(y) |y xor m>``, ``<P> = sum_y d(y) v(y)`` for
    ``v = conj(flip_m(psi)) psi``, so a group costs one flip and one product. A string's ``d`` is a
    product over qubits, ``d = d_high (x) d_low`` over the two halves of the qubits, so all of a
    group's values are ``rowsum((D_high V) * D_low)`` with ``V`` the ``(2^h, 2^l)`` view of ``v``:
    one matrix product (host diagonals of ``2^(n/2)`` entries, nothing of ``2^n`` built per string).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> bell = np.array([1, 0, 0, 1], dtype=complex) / np.sqrt(2)
    >>> (np.round(K.to_numpy(state_pauli_values(K, bell, ["XX", "YY", "ZZ", "ZI", "II"])), 12) + 0.0).tolist()
    [1.0, -1.0, 1.0, 0.0, 1.0]
    """
    n = len(strings[0])
    high = n // 2
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, string in enumerate(strings):
        groups.setdefault(flipped_qubits(string), []).append(index)
    dtype = K.dtype_name_of(state)
    pieces, order = [], []
    for mask, members in groups.items():
        overlap = K.conj(flip_qubits(K, state, n, mask)) * state if mask else K.conj(state) * state
        overlap = K.reshape(overlap, tuple(K.shape(state)[:-1]) + (2 ** high, 2 ** (n - high)))
        d_high = K.constant(np.stack([pauli_diagonal(strings[i][:high]) for i in members]), dtype)
        d_low = K.constant(np.stack([pauli_diagonal(strings[i][high:]) for i in members]), dtype)
        pieces.append(K.sum(K.matmul(d_high, overlap) * d_low, axis=-1))
        order += members
    values = K.real(pieces[0] if len(pieces) == 1 else K.concatenate(pieces, axis=-1))
    if order == sorted(order):
        return values
    return K.take(values, np.argsort(order), axis=-1)


def density_pauli_values(K: ArrayBackend, rho: Any, strings: Sequence[str]) -> Any:
    """``Tr(P rho)`` for every Pauli string, from a ``2^n x 2^n`` density matrix: with
    ``P|k> = d(k) |k xor m>``, ``Tr(P rho) = sum_k d(k) rho[k, k xor m]``, so each string reads
    ``2^n`` entries (one gather for all strings) rather than multiplying the matrix.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> plus = np.full((2, 2), 0.5, dtype=complex)  # |+><+|
    >>> (np.round(K.to_numpy(density_pauli_values(K, plus, ["X", "Z", "Y"])), 12) + 0.0).tolist()
    [1.0, 0.0, 0.0]
    """
    dimension = 2 ** len(strings[0])
    index = np.arange(dimension)
    positions = np.concatenate([index * dimension + (index ^ _flip_mask(string)) for string in strings])
    factors = K.constant(np.stack([pauli_diagonal(string) for string in strings]), K.dtype_name_of(rho))
    entries = K.reshape(K.take(K.reshape(rho, (-1,)), positions), (len(strings), dimension))
    return K.real(K.sum(entries * factors, axis=1))


def flipped_qubits(string: str) -> tuple[int, ...]:
    """The qubits a Pauli string flips (its X and Y positions), ascending.

    Examples
    --------
    >>> flipped_qubits("XZIY")
    (0, 3)
    """
    return tuple(q for q, letter in enumerate(string) if letter in "XY")


def _flip_mask(string: str) -> int:
    """The basis-state bits a Pauli string flips (qubit 0 the most significant)."""
    return int("".join("1" if letter in "XY" else "0" for letter in string), 2)
