"""Many Pauli strings read from a batch of state vectors at once (the estimator's state route).

For a Pauli string ``P = i^{n_Y} X^x Z^z`` (``x``, ``z``: bit masks of an amplitude index),
``<psi|P|psi> = i^{n_Y} sum_k conj(psi[k ^ x]) (-1)^{|k & z|} psi[k]``, a real number: the real
part of ``conj(psi[k ^ x]) psi[k]`` counts when ``n_Y`` is even, the imaginary part when it is odd.

The strings are planned once (:class:`PauliTable`) and grouped by their ``x`` mask. For each state
and group: one gather ``psi[k ^ x]`` (an index array kept per mask), one product with ``psi`` (or
with ``psi``'s real and imaginary parts swapped, for the odd strings), and the signs
``(-1)^{|k & z|}``, which factor into a high and a low half of the index bits, applied as one small
matrix product per half: a state of ``2^n`` amplitudes and ``m`` strings costs ``O(m 2^n)``
arithmetic and ``O(m 2^{n/2})`` memory for the signs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["PauliTable"]

#: the most gather indices kept (int64 entries, 128 MiB); masks past it are recomputed per call
_INDEX_ENTRIES = 2**24


@dataclass(frozen=True)
class _Group:
    """Strings with one ``x`` mask and one parity of ``n_Y``: their output columns and the high
    (``(H, k)``) and low (``(2L, k)``, interleaved real/imaginary) sign factors, the phase
    ``i^{n_Y}`` folded into the high factor."""

    x: int
    odd: bool
    columns: np.ndarray
    high: np.ndarray
    low: np.ndarray


@dataclass
class PauliTable:
    """Pauli strings of one width, planned once and read from many state vectors.

    Parameters
    ----------
    strings : sequence of str
        tyxonq Pauli strings (character ``q`` acts on qubit ``q``; qubit 0 is the most significant
        bit of an amplitude's index).

    Examples
    --------
    >>> import numpy as np
    >>> table = PauliTable(["ZI", "XX", "YY", "II"])
    >>> bell = np.array([[1, 0, 0, 1]]) / np.sqrt(2)
    >>> table.values(bell).round(12).tolist()
    [[0.0, 1.0, -1.0, 1.0]]
    """

    strings: Sequence[str]
    num_qubits: int = field(init=False)
    _groups: list = field(init=False, repr=False)
    _indices: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        strings = [string.upper() for string in self.strings]
        widths = {len(s) for s in strings}
        if len(widths) > 1:
            raise ValueError(f"Pauli strings of several widths {sorted(widths)}: give strings of one width")
        for string in strings:
            if set(string) - set("IXYZ"):
                raise ValueError(f"Pauli string {string!r} has {sorted(set(string) - set('IXYZ'))}: "
                                 "use I, X, Y and Z")
        self.num_qubits = widths.pop() if widths else 0
        members: dict[tuple[int, bool], list[tuple[int, int, int]]] = {}
        for column, string in enumerate(strings):
            x = int("".join("1" if c in "XY" else "0" for c in string) or "0", 2)
            z = int("".join("1" if c in "YZ" else "0" for c in string) or "0", 2)
            power = string.count("Y") % 4
            members.setdefault((x, power % 2 == 1), []).append((column, z, power))
        self._groups = [self._group(x, odd, chunk) for (x, odd), chunk in sorted(members.items())]

    def _group(self, x: int, odd: bool, chunk: list[tuple[int, int, int]]) -> _Group:
        low_bits = self.num_qubits // 2
        low_size, high_size = 1 << low_bits, 1 << (self.num_qubits - low_bits)
        high = np.empty((high_size, len(chunk)))
        low = np.empty((2 * low_size, len(chunk)))
        for k, (_, z, power) in enumerate(chunk):
            # i^power times (real part, or imaginary part with the swap's sign) as one real factor
            phase = {0: 1.0, 1: -1.0, 2: -1.0, 3: 1.0}[power]
            high[:, k] = phase * _signs(high_size, z >> low_bits)
            low_signs = _signs(low_size, z & (low_size - 1))
            low[0::2, k] = low_signs
            low[1::2, k] = -low_signs if odd else low_signs
        columns = np.array([column for column, _, _ in chunk], dtype=np.int64)
        return _Group(x, odd, columns, high, low)

    def values(self, states: np.ndarray) -> np.ndarray:
        """``<psi_b|P_j|psi_b>`` for every state ``b`` (rows of ``states``) and string ``j``.

        Examples
        --------
        >>> import numpy as np
        >>> PauliTable(["Z", "X"]).values(np.array([[1, 0], [1, 1]]) / [[1], [np.sqrt(2)]]).round(12).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        dimension = 1 << self.num_qubits
        states = np.ascontiguousarray(states, dtype=np.complex128)
        if states.ndim != 2 or states.shape[1] != dimension:
            raise ValueError(f"states of shape {states.shape}: expected (batch, {dimension})")
        out = np.empty((states.shape[0], len(self.strings)))
        for b, psi in enumerate(states):
            self._read(psi, out[b])
        return out

    def _read(self, psi: np.ndarray, out: np.ndarray) -> None:
        """Every string of one state into ``out``."""
        high_size = 1 << (self.num_qubits - self.num_qubits // 2)
        plain = psi.view(np.float64)
        swapped = plain.reshape(-1, 2)[:, ::-1].ravel()
        for group in self._groups:
            if group.x == 0:
                gathered = plain
            else:
                gathered = np.take(psi, self._index(group.x)).view(np.float64)
            product = gathered * (swapped if group.odd else plain)
            partial = product.reshape(high_size, -1) @ group.low
            out[group.columns] = np.einsum("hk,hk->k", partial, group.high)

    def _index(self, x: int) -> np.ndarray:
        """``k ^ x`` for every amplitude index ``k`` (kept while the budget allows)."""
        index = self._indices.get(x)
        if index is None:
            index = np.arange(1 << self.num_qubits) ^ x
            if (len(self._indices) + 1) << self.num_qubits <= _INDEX_ENTRIES:
                self._indices[x] = index
        return index


def _signs(size: int, z: int) -> np.ndarray:
    """``(-1)^{|k & z|}`` for ``k`` in ``range(size)``."""
    parity = np.zeros(size, dtype=np.int64)
    rest = np.arange(size) & z
    while z:
        parity ^= rest & 1
        rest >>= 1
        z >>= 1
    return 1.0 - 2.0 * parity
