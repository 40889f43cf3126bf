"""Many Pauli strings read from a batch of state vectors at once (the estimator's state route).

For a Pauli string ``P = i^{n_Y} X^x Z^z`` (``x``, ``z``: bit masks of an amplitude index),
``<psi|P|psi> = i^{n_Y} sum_k conj(psi[k ^ x]) (-1)^{|k & z|} psi[k]``. The strings are grouped by
their ``x`` mask: each group costs one gathered product ``conj(psi[k ^ x]) psi[k]`` over the batch,
then one real matrix product with the group's sign columns gives every string of the group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["PauliTable"]

#: the most sign-column entries held at once (float64): 2^23 entries, 64 MiB
_SIGN_ENTRIES = 2**23


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
    _signs: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        strings = list(self.strings)
        widths = {len(s) for s in strings}
        if len(widths) > 1:
            raise ValueError(f"Pauli strings of several widths {sorted(widths)}: give strings of one width")
        self.num_qubits = widths.pop() if widths else 0
        n = self.num_qubits
        groups: dict[int, list[tuple[int, int, int]]] = {}
        for column, string in enumerate(strings):
            x = z = 0
            for q, char in enumerate(string.upper()):
                bit = 1 << (n - 1 - q)
                if char not in "IXYZ":
                    raise ValueError(f"Pauli string {string!r} has {char!r}: use I, X, Y and Z")
                x |= bit if char in "XY" else 0
                z |= bit if char in "YZ" else 0
            groups.setdefault(x, []).append((column, z, string.upper().count("Y") % 4))
        self._groups = sorted(groups.items())

    def values(self, states: np.ndarray) -> np.ndarray:
        """``<psi_b|P_j|psi_b>`` for every state ``b`` (rows of ``states``) and string ``j``.

        Examples
        --------
        >>> import numpy as np
        >>> PauliTable(["Z", "X"]).values(np.array([[1, 0], [1, 1]]) / [[1], [np.sqrt(2)]]).round(12).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        states = np.ascontiguousarray(states, dtype=np.complex128)
        dimension = 1 << self.num_qubits
        if states.ndim != 2 or states.shape[1] != dimension:
            raise ValueError(f"states of shape {states.shape}: expected (batch, {dimension})")
        out = np.empty((states.shape[0], len(self.strings)))
        index = np.arange(dimension)
        for x, members in self._groups:
            if x == 0:
                product = states.real**2 + states.imag**2
            else:
                product = np.take(states, index ^ x, axis=1)
                np.conjugate(product, out=product)
                product *= states
            step = max(1, _SIGN_ENTRIES // dimension)
            for start in range(0, len(members), step):
                chunk = members[start:start + step]
                signs = self._sign_columns(x, start, index, [z for _, z, _ in chunk])
                real = (product.real if x != 0 else product) @ signs
                imag = product.imag @ signs if x != 0 else np.zeros_like(real)
                for k, (column, _, power) in enumerate(chunk):
                    out[:, column] = (real[:, k], -imag[:, k], -real[:, k], imag[:, k])[power]
        return out


    def _sign_columns(self, x: int, start: int, index: np.ndarray, masks: list[int]) -> np.ndarray:
        """A group's sign columns, kept while every string's column fits the budget."""
        if (x, start) in self._signs:
            return self._signs[x, start]
        signs = _signs(index, masks)
        if index.size * len(self.strings) <= _SIGN_ENTRIES:
            self._signs[x, start] = signs
        return signs


def _signs(index: np.ndarray, masks: list[int]) -> np.ndarray:
    """``(-1)^{|k & z|}`` for every index ``k`` (rows) and mask ``z`` (columns)."""
    signs = np.empty((index.size, len(masks)))
    for column, z in enumerate(masks):
        parity = np.zeros(index.size, dtype=np.int64)
        rest = index & z
        while z:
            parity ^= rest & 1
            rest = rest >> 1
            z >>= 1
        signs[:, column] = 1.0 - 2.0 * parity
    return signs
