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
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..numerics.cache_registry import register_function_cache
from ..numerics.protocol import ArrayBackend

__all__ = ["apply_pauli_string", "pauli_diagonal", "flip_qubits", "state_pauli_values",
           "density_pauli_values", "density_pauli_readout", "flipped_qubits"]


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
    of them, shape ``(batch, 2^n)``: values ``(batch, strings)``), each pair of amplitudes read
    once.

    A string is ``P = i^{n_Y} X^x Z^z`` (``x``, ``z``: bit masks of an amplitude's index), so
    ``<P> = i^{n_Y} sum_k s(k) w(k)`` with ``w(k) = conj(psi[k ^ x]) psi[k]`` and
    ``s(k) = (-1)^{|k & z|}``. The terms of ``k`` and ``k ^ x`` are conjugate up to ``(-1)^{n_Y}``,
    so the sum runs over the ``k`` whose bit ``h`` (``x``'s highest) is clear, each counting
    ``2 Re(i^{n_Y} s(k) w(k))``. The strings are grouped by ``x``: a group costs one gather of
    ``conj(psi[k ^ x])`` (an index kept per mask; none where ``x`` is one bit), one product with a
    strided view of ``psi`` and one matrix product: ``s`` factors over the high and low bits of
    ``k``, so all of the group's values are ``Re colsum((W S_low) * S_high)`` for the
    ``(2^a, 2^b)`` view ``W`` of ``w`` and host sign tables of ``2^(n/2)`` rows (the phases and
    the factor 2 in ``S_high``; :func:`_pauli_plan`, cached per strings). An eager backend reads a
    stack of states a few at a time (:data:`CHUNK_AMPLITUDES`).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> bell = np.array([1, 0, 0, 1], dtype=complex) / np.sqrt(2)
    >>> (np.round(K.to_numpy(state_pauli_values(K, bell, ["XX", "YY", "ZZ", "ZI", "II"])), 12) + 0.0).tolist()
    [1.0, -1.0, 1.0, 0.0, 1.0]
    """
    n = len(strings[0])
    plan = _pauli_plan(n, tuple(strings))
    state = _complex(K, state)
    dtype = K.dtype_name_of(state)
    tables = [(K.constant(group.high, dtype), K.constant(group.low, dtype)) for group in plan.groups]
    lead = tuple(K.shape(state)[:-1])
    rows = max(1, CHUNK_AMPLITUDES >> n)
    if len(lead) == 1 and lead[0] > rows and not K.capabilities.compiles_whole_functions:
        chunks = [_pauli_values(K, state[start:start + rows], n, plan, tables)
                  for start in range(0, lead[0], rows)]
        values = K.concatenate(chunks, axis=0)
    else:
        values = _pauli_values(K, state, n, plan, tables)
    return values if plan.order is None else K.take(values, plan.order, axis=-1)


#: An eager backend reads a stack of states this many amplitudes at a time (one 16-qubit state,
#: 1 MiB, stays in cache across its groups: 64 16-qubit states, 32 strings, read together took
#: 0.98 s on NumPy, one at a time about half).
CHUNK_AMPLITUDES = 2 ** 16


def _pauli_values(K: ArrayBackend, state: Any, n: int, plan: _PauliPlan, tables: list) -> Any:
    """:func:`state_pauli_values` of one state or a stack, in the plan's order of columns."""
    lead = tuple(K.shape(state)[:-1])
    conjugate = K.conj(state)
    pieces = []
    for group, (high, low) in zip(plan.groups, tables):
        if group.x == 0:
            overlap = conjugate * state
        else:
            lower = K.reshape(state, lead + (-1, 2, group.width))[..., 0, :]
            overlap = _partners(K, conjugate, n, group) * lower
        view = K.reshape(overlap, lead + (K.shape(high)[0], K.shape(low)[0]))
        pieces.append(K.real(K.sum(K.matmul(view, low) * high, axis=-2)))
    return pieces[0] if len(pieces) == 1 else K.concatenate(pieces, axis=-1)


_COMPLEX_DTYPES = ("complex128", "complex64")


def _complex(K: ArrayBackend, state: Any) -> Any:
    """``state`` in a complex dtype of its precision (a real state is cast)."""
    name = K.dtype_name_of(state)
    if name in _COMPLEX_DTYPES:
        return state
    return K.cast(state, "complex64" if name == "float32" else "complex128")


def _partners(K: ArrayBackend, conjugate: Any, n: int, group: _FlipGroup) -> Any:
    """``conj(psi[k ^ x])`` for every ``k`` whose bit ``h`` is clear, ``(..., 2^(n-h-1), 2^h)``:
    the upper half of a view where ``x`` is that one bit, else a gather by a cached index on an
    eager backend, else (under compilation) the lower half of the flipped vector."""
    lead = tuple(K.shape(conjugate)[:-1])
    if group.x == group.width:
        return K.reshape(conjugate, lead + (-1, 2, group.width))[..., 1, :]
    if not K.capabilities.compiles_whole_functions:  # shaped (NumPy multiplies the result in place)
        return K.take(conjugate, _partner_index(n, group.x), axis=-1)
    flipped = flip_qubits(K, conjugate, n, group.qubits)
    return K.reshape(flipped, lead + (-1, 2, group.width))[..., 0, :]


def _partner_index(n: int, x: int) -> np.ndarray:
    """``k ^ x`` for every ``k`` whose bit ``h`` (``x``'s highest) is clear, ``(2^(n-h-1), 2^h)``;
    kept up to :data:`GATHERED_FLIP_QUBITS` qubits (``2^(n-1)`` entries a mask)."""
    return _kept_partner_index(n, x) if n <= GATHERED_FLIP_QUBITS else _lower_half(n, x) ^ x


@register_function_cache
@functools.lru_cache(maxsize=64)
def _kept_partner_index(n: int, x: int) -> np.ndarray:
    return _lower_half(n, x) ^ x


def _lower_half(n: int, x: int) -> np.ndarray:
    """The indices whose bit ``h`` (``x``'s highest) is clear, ``(2^(n-h-1), 2^h)``."""
    width = 1 << (x.bit_length() - 1)
    return np.arange(2 ** n // (2 * width))[:, None] * 2 * width + np.arange(width)[None, :]


@dataclass(frozen=True)
class _FlipGroup:
    """The strings flipping the bits ``x`` (qubits ``qubits``; ``width = 2^h``, ``h`` the highest
    bit) and their sign tables over the high (``high``, ``(2^a, m)``, with the phase ``i^{n_Y}``
    and the pair's factor 2) and low (``low``, ``(2^b, m)``) bits of the read indices."""

    x: int
    width: int
    qubits: tuple[int, ...]
    high: np.ndarray
    low: np.ndarray


@dataclass(frozen=True)
class _PauliPlan:
    """The groups in output order of their columns, and the permutation back to the strings'
    order (``None``: already in order)."""

    groups: tuple[_FlipGroup, ...]
    order: np.ndarray | None


#: ``i^{n_Y}``: a pair's terms sum to ``2 Re(i^{n_Y} s(k) w(k))`` (``+-2 Re w`` or ``+-2 Im w``)
_PHASES = {0: 1.0, 1: 1j, 2: -1.0, 3: -1j}


@register_function_cache
@functools.lru_cache(maxsize=32)
def _pauli_plan(n: int, strings: tuple[str, ...]) -> _PauliPlan:
    """Host tables of :func:`state_pauli_values` for ``n``-qubit ``strings`` (results never change,
    so clearing the cache only costs their rebuilding)."""
    members: dict[int, list[int]] = {}
    for index, string in enumerate(strings):
        members.setdefault(_flip_mask(string), []).append(index)
    groups, order = [], []
    for x, indices in members.items():
        width = 1 << max(x.bit_length() - 1, 0)
        high, low = _sign_tables(n, x, [strings[i] for i in indices])
        groups.append(_FlipGroup(x, width, flipped_qubits(strings[indices[0]]), high, low))
        order += indices
    in_order = order == sorted(order)
    return _PauliPlan(tuple(groups), None if in_order else np.argsort(order))


def _sign_tables(n: int, x: int, strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``Re(high[r, j] * low[c, j] * w(k))`` is string ``j``'s term (with its partner's, where
    ``x`` is nonzero) for the read index ``k`` at row ``r``, column ``c`` of the ``(2^a, 2^b)``
    view: every ``k`` (``x = 0``) or those with bit ``h`` clear, that bit dropped from ``z``."""
    h = x.bit_length() - 1
    bits = n if x == 0 else n - 1
    low_bits = bits // 2
    high = np.empty((2 ** (bits - low_bits), len(strings)), dtype=complex)
    low = np.empty((2 ** low_bits, len(strings)))
    for j, string in enumerate(strings):
        z = int("".join("1" if letter in "YZ" else "0" for letter in string) or "0", 2)
        if x:
            z = (z & ((1 << h) - 1)) | ((z >> (h + 1)) << h)
        factor = (2.0 if x else 1.0) * _PHASES[sum(letter == "Y" for letter in string) % 4]
        high[:, j] = factor * _signs(np.arange(high.shape[0]), z >> low_bits)
        low[:, j] = _signs(np.arange(low.shape[0]), z & ((1 << low_bits) - 1))
    return high, low


def _signs(values: np.ndarray, z: int) -> np.ndarray:
    """``(-1)^{|k & z|}`` for every ``k`` of ``values``."""
    parity, rest = np.zeros(values.shape, dtype=np.int64), values & z
    while z:
        parity ^= rest & 1
        rest >>= 1
        z >>= 1
    return 1.0 - 2.0 * parity


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


def density_pauli_readout(strings: Sequence[str], weights: Sequence[complex]) -> np.ndarray:
    """The host matrix ``R`` with ``sum(R * rho) = sum_k w_k Tr(P_k rho)`` for every density
    matrix ``rho``: ``R = (sum_k w_k P_k)^T``, the weighted sum's derivative with respect to
    ``rho`` (what reverse mode through the contraction of ``rho`` starts from). Entry
    ``[k, k xor m]`` of each string gets ``w d(k)``, the entries :func:`density_pauli_values` reads.

    Examples
    --------
    >>> import numpy as np
    >>> readout = density_pauli_readout(["X", "Z"], [0.5, 2.0])
    >>> (readout.real + 0.0).tolist()
    [[2.0, 0.5], [0.5, -2.0]]
    >>> plus = np.full((2, 2), 0.5)  # |+><+|: <X> = 1, <Z> = 0
    >>> float(np.sum(readout * plus).real)
    0.5
    """
    dimension = 2 ** len(strings[0])
    index = np.arange(dimension)
    readout = np.zeros(dimension * dimension, dtype=complex)
    for string, weight in zip(strings, weights):  # a string's entries are distinct
        readout[index * dimension + (index ^ _flip_mask(string))] += weight * pauli_diagonal(string)
    return readout.reshape(dimension, dimension)


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
