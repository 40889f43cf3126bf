"""Pauli strings on large state vectors, chunk by chunk: ``P|psi>`` and ``<psi|P|psi>`` without an
array as large as the state, each chunk within a core's cache.

A state of ``2^n`` amplitudes is read in ``2^h`` consecutive chunks (:func:`~tyxonq.numerics.chunks.
contiguous_chunks`): chunk ``j`` holds the amplitudes whose ``h`` leading qubits spell ``j``. A string's
letters on those qubits send chunk ``j`` to chunk ``j xor flips`` with one phase; its other letters
act within the chunk (:func:`~tyxonq.operators.state_expectation.apply_pauli_string`). A sharded state
feeds the chunks of another rank's shard the same way (its global letters add one more phase).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

from ..numerics.chunks import contiguous_chunks
from ..numerics.protocol import ArrayBackend
from .state_expectation import apply_pauli_string

__all__ = ["source_phase", "flip_bits", "applied_in_chunks", "streamed_pauli_values"]


def source_phase(letters: str, source: int) -> complex:
    """The phase Pauli ``letters`` give the amplitudes whose bits on their qubits are ``source``'s
    (``len(letters)`` bits, the first the most significant): ``Z``: ``(-1)^b``; ``Y``: ``i (-1)^b``.

    Examples
    --------
    >>> source_phase("ZY", 0b10) == -1j, source_phase("ZY", 0b11) == 1j, source_phase("", 0) == 1
    (True, True, True)
    """
    factor = 1.0 + 0j
    width = len(letters)
    for position, letter in enumerate(letters):
        bit = (source >> (width - 1 - position)) & 1
        if letter == "Z":
            factor *= -1 if bit else 1
        elif letter == "Y":
            factor *= -1j if bit else 1j
    return factor


def flip_bits(letters: str) -> int:
    """The bits Pauli ``letters`` flip, as a mask (the first letter the most significant bit).

    Examples
    --------
    >>> flip_bits("XZY"), flip_bits("")
    (5, 0)
    """
    return int("".join("1" if letter in "XY" else "0" for letter in letters) or "0", 2)


def applied_in_chunks(K: ArrayBackend, pieces: Iterable[Any], strings: Sequence[str],
                      chunk_count: int) -> Iterator[tuple[int, int, complex, Any]]:
    """Every string applied to a state given as its ``chunk_count`` (a power of two) chunks, in
    order: ``(index, target, factor, applied)``, where ``factor * applied`` is the part of
    ``P_index|psi>`` in chunk ``target`` that comes from the current chunk.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> chunks = [np.array([1, 2], dtype=complex), np.array([3, 4], dtype=complex)]
    >>> found = applied_in_chunks(K, chunks, ["XX"], 2)
    >>> [(target, factor == 1, applied.real.tolist()) for _, target, factor, applied in found]
    [(1, True, [2.0, 1.0]), (0, True, [4.0, 3.0])]
    """
    high = (chunk_count - 1).bit_length()
    for chunk, piece in enumerate(pieces):
        for index, string in enumerate(strings):
            letters = string[:high]
            yield index, chunk ^ flip_bits(letters), source_phase(letters, chunk), \
                apply_pauli_string(K, piece, string[high:])


def streamed_pauli_values(K: ArrayBackend, state: Any, strings: Sequence[str]) -> list[Any]:
    """``<psi|P|psi>`` (complex, backend scalars) of every string, chunk by chunk.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> bell = np.array([1, 0, 0, 1], dtype=complex) / np.sqrt(2)
    >>> [round(complex(v).real, 12) + 0.0 for v in streamed_pauli_values(K, bell, ["XX", "ZI", "YY"])]
    [1.0, 0.0, -1.0]
    """
    parts = contiguous_chunks(K.shape(state)[0])
    values: list[Any] = [0.0] * len(strings)
    pieces = (state[part] for part in parts)
    for index, target, factor, applied in applied_in_chunks(K, pieces, strings, len(parts)):
        values[index] = values[index] + factor * K.sum(K.conj(state[parts[target]]) * applied)
    return values
