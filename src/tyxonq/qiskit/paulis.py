"""Many Pauli strings read from a batch of state vectors at once (the estimator's state route).

For a Pauli string ``P = i^{n_Y} X^x Z^z`` (``x``, ``z``: bit masks of an amplitude index),
``<psi|P|psi> = i^{n_Y} sum_k conj(psi[k ^ x]) (-1)^{|k & z|} psi[k]``, a real number: the real
part of ``conj(psi[k ^ x]) psi[k]`` counts when ``n_Y`` is even, the imaginary part when it is odd.

The strings are planned once (:class:`PauliTable`) and grouped by their ``x`` mask and the parity
of ``n_Y``. The terms of ``k`` and ``k ^ x`` are complex conjugates (up to the sign
``(-1)^{n_Y}``), so only the half of the indices whose bit ``h`` (``x``'s highest) is 0 is read:
for each state and group, one gather of ``psi[k ^ x]`` over that half (an index array kept per
mask), one product with ``conj(psi[k])`` (a strided view), and the signs ``(-1)^{|k & z|}``,
which factor into high and low index bits, applied as one small matrix product each: a state of
``2^n`` amplitudes and ``m`` strings costs about ``m 2^(n-1)`` gathers and products, and
``O(m 2^{n/2})`` memory for the signs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["PauliTable"]

#: the most partner indices kept (int64 entries, 128 MiB); past it they are made per state
_PARTNER_ENTRIES = 2**24


@dataclass(frozen=True)
class _Group:
    """Strings with one ``x`` mask and one parity of ``n_Y``: their output columns, the partner
    ``k ^ x`` of every index ``k`` whose bit ``h`` (``x``'s highest) is 0, and the sign factors of
    the high (``(R, k)``, the phase and the pair's factor 2 folded in) and low (``(2 Lc, k)``,
    interleaved real/imaginary) index bits of those ``k``."""

    x: int
    odd: bool
    columns: np.ndarray
    partner: np.ndarray | None
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
        keep = len(members) << max(self.num_qubits - 1, 0) <= _PARTNER_ENTRIES  # else made per state
        self._groups = [self._group(x, odd, chunk, keep) for (x, odd), chunk in sorted(members.items())]

    def _group(self, x: int, odd: bool, chunk: list[tuple[int, int, int]], keep: bool) -> _Group:
        n = self.num_qubits
        dimension = 1 << n
        if x == 0:  # diagonal strings: sum_k (-1)^{|k & z|} |psi_k|^2 over every k
            block, rows, partner, factor = 1 << (n // 2), dimension >> (n // 2), None, 1.0
            bases = np.arange(rows) * block
        else:
            width = 1 << (x.bit_length() - 1)  # 2^h: indices below bit h run contiguously
            partner = _partners(x, n) if keep else None
            block = min(width, 1 << (n // 2))
            rows, per = dimension // 2 // block, width // block
            bases = (np.arange(rows) // per) * 2 * width + (np.arange(rows) % per) * block
            factor = 2.0  # k and k ^ x together
        high = np.empty((rows, len(chunk)))
        low = np.zeros((block if x == 0 else 2 * block, len(chunk)))
        for j, (_, z, power) in enumerate(chunk):
            # i^power times (Re w, or i Im w for odd power; the product read is conj(w)) as one factor
            phase = {0: 1.0, 1: -1.0, 2: -1.0, 3: 1.0}[power]
            high[:, j] = factor * phase * _signs(bases, z)
            low_signs = _signs(np.arange(block), z)
            if x == 0:
                low[:, j] = low_signs
            elif odd:
                low[1::2, j] = -low_signs
            else:
                low[0::2, j] = low_signs
        columns = np.array([column for column, _, _ in chunk], dtype=np.int64)
        return _Group(x, odd, columns, partner, high, low)

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
        conjugate = np.conj(psi)
        for group in self._groups:
            if group.x == 0:
                product = psi.real**2 + psi.imag**2
            else:
                width = 1 << (group.x.bit_length() - 1)
                partner = group.partner if group.partner is not None else _partners(group.x, self.num_qubits)
                product = np.take(psi, partner).reshape(-1, width)
                np.multiply(product, conjugate.reshape(-1, 2, width)[:, 0, :], out=product)
                product = product.view(np.float64)
            partial = product.reshape(group.high.shape[0], -1) @ group.low
            out[group.columns] = np.einsum("hk,hk->k", partial, group.high)


def _partners(x: int, num_qubits: int) -> np.ndarray:
    """``k ^ x`` for every index ``k`` whose bit ``h`` (``x``'s highest) is 0, in increasing ``k``."""
    width = 1 << (x.bit_length() - 1)
    outer = (1 << num_qubits) // (2 * width)
    return (np.arange(outer)[:, None] * 2 * width + np.arange(width)[None, :]).ravel() ^ x


def _signs(values: np.ndarray, z: int) -> np.ndarray:
    """``(-1)^{|k & z|}`` for every ``k`` of ``values``."""
    parity = np.zeros(values.shape, dtype=np.int64)
    rest = values & z
    while z:
        parity ^= rest & 1
        rest >>= 1
        z >>= 1
    return 1.0 - 2.0 * parity
