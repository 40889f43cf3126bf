"""A matrix-product state in mixed-canonical form, and gates applied to it.

Site ``i`` holds a tensor of shape ``(D_i, 2, D_{i+1})`` (``D_0 = D_n = 1``). Sites left of the
orthogonality centre are left-isometric, sites right of it right-isometric, so the state's norm
and every truncation live in the centre: cutting the smallest singular values of a block that
holds the centre is the best approximation of the whole state in the 2-norm.

Gates on ``k`` neighbouring sites contract the block, apply the ``2^k x 2^k`` matrix and split
it again by SVDs (:meth:`~tyxonq.numerics.ArrayBackend.svd_split`), truncating each bond to
``max_bond`` singular values and dropping the smallest whose relative weight (sum of squares)
stays within ``cutoff``; gates on distant qubits first bring them together by swaps, and take
them back afterwards. Every array operation goes through the backend protocol, with at most 4
dimensions (cuPyNumeric's limit is 6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...numerics.protocol import ArrayBackend

__all__ = ["MPSState", "Truncation"]

_SWAP = np.eye(4)[[0, 2, 1, 3]]


@dataclass
class Truncation:
    """How bonds are cut, and what was cut so far.

    ``discarded`` holds each truncation's relative discarded weight: a float, or a backend
    scalar where the values could not be read (inside ``jit``).
    """

    max_bond: int | None
    cutoff: float
    rounding: float  # singular values below rounding * s_max * size are noise: always dropped
    discarded: list = field(default_factory=list)
    blind: bool = False  # the last rank was chosen without reading the values (inside jit)
    kept: float = 0.0  # the last truncation's kept weight (sum of kept squared values)

    def rank(self, values: np.ndarray | None, k: int) -> int:
        """How many of the ``k`` singular values (host, descending; ``None`` under ``jit``) to
        keep; records the discarded weight when it is known."""
        cap = k if self.max_bond is None else min(k, self.max_bond)
        self.blind = values is None
        if values is None:  # shapes only: the bond keeps what max_bond allows
            return cap
        values = np.asarray(values, dtype=float).tolist()  # a bond's few values: Python is cheaper
        noise = values[0] * self.rounding * k
        signal = k  # the values above rounding noise (they descend)
        while signal > 1 and values[signal - 1] <= noise:
            signal -= 1
        keep = min(signal, cap)
        if self.cutoff > 0 or keep < k:
            squares = [value * value for value in values]
            total = sum(squares)
            if total == 0.0:
                return 1
            limit, tail, smallest = self.cutoff * total, 0.0, k
            while smallest > 1 and tail + squares[smallest - 1] <= limit:
                smallest -= 1  # values smallest.. weigh at most cutoff (relative)
                tail += squares[smallest]
            keep = min(keep, smallest)
            if keep < signal:  # a truncation (dropping noise is not one)
                self.discarded.append(sum(squares[keep:]) / total)
                self.kept = sum(squares[:keep])
        return keep


class MPSState:
    """Site tensors, the orthogonality centre and the truncation settings of one state.

    Arrays are never modified in place: :meth:`copy` is a cheap snapshot.
    """

    def __init__(self, K: ArrayBackend, sites: list, centre: int, truncation: Truncation) -> None:
        self.K = K
        self.sites = list(sites)
        self.centre = centre
        self.truncation = truncation
        self.environments: dict = {}

    @classmethod
    def zeros(cls, K: ArrayBackend, n: int, truncation: Truncation) -> MPSState:
        zero = K.reshape(K.asarray(np.array([1.0, 0.0]), K.dtype), (1, 2, 1))
        return cls(K, [zero] * n, 0, truncation)

    @property
    def num_sites(self) -> int:
        return len(self.sites)

    def copy(self) -> MPSState:
        truncation = Truncation(self.truncation.max_bond, self.truncation.cutoff,
                                self.truncation.rounding, list(self.truncation.discarded))
        duplicate = MPSState(self.K, self.sites, self.centre, truncation)
        duplicate.environments = dict(self.environments)
        return duplicate

    def on(self, K: ArrayBackend) -> MPSState:
        """This state with its sites on ``K`` (a copy; ``self`` when ``K`` holds it already), read
        through the host: a state simulated on a backend's host twin, or handed to it."""
        if K is self.K:
            return self
        moved = MPSState(K, [K.asarray(self.K.to_numpy(site)) for site in self.sites], self.centre,
                         self.copy().truncation)
        return moved

    def bond_dimensions(self) -> list[int]:
        return [int(self.K.shape(site)[2]) for site in self.sites[:-1]]

    def _changed(self) -> None:
        self.environments = {}

    def normalise(self) -> Any:
        """Divide the centre site by the state's norm (after non-unitary gates); returns the
        norm it had."""
        K = self.K
        norm = K.sqrt(K.sum(K.abs(self.sites[self.centre]) ** 2))
        self.sites[self.centre] = self.sites[self.centre] / norm
        self._changed()
        return norm

    # -- the orthogonality centre ------------------------------------------------------------
    def move_centre(self, target: int) -> None:
        """Move the centre to site ``target`` by QR decompositions (exact)."""
        K = self.K
        while self.centre < target:
            c = self.centre
            left, _, right = K.shape(self.sites[c])
            q, r = K.qr(K.reshape(self.sites[c], (left * 2, right)))
            self.sites[c] = K.reshape(q, (left, 2, K.shape(q)[1]))
            self.sites[c + 1] = _times_site(K, r, self.sites[c + 1])
            self.centre += 1
        while self.centre > target:
            c = self.centre
            left, _, right = K.shape(self.sites[c])
            q, r = K.qr(K.transpose(K.reshape(self.sites[c], (left, 2 * right))))
            self.sites[c] = K.reshape(K.transpose(q), (K.shape(q)[1], 2, right))
            self.sites[c - 1] = _site_times(K, self.sites[c - 1], K.transpose(r))
            self.centre -= 1
        self._changed()

    # -- gates ---------------------------------------------------------------------------------
    def apply(self, matrix: Any, qubits: Sequence[int], centre_left: bool = False) -> None:
        """Apply a ``2^k x 2^k`` unitary on ``qubits`` (its first qubit most significant).

        ``centre_left``: leave the centre on the block's first site rather than its last (where
        the next gate is, to save moves).
        """
        K = self.K
        qubits = tuple(int(q) for q in qubits)
        order = sorted(range(len(qubits)), key=lambda j: qubits[j])
        if order != list(range(len(qubits))):  # the matrix in ascending qubit order
            matrix = _permuted(K, matrix, order)
        positions = sorted(qubits)
        first = positions[0]
        moves = []  # adjacent swaps bringing the qubits together, undone afterwards
        for j, position in enumerate(positions[1:], start=1):
            for site in range(position - 1, first + j - 1, -1):
                moves.append(site)
        for site in moves:
            self._apply_block(K.asarray(_SWAP, K.dtype), site, 2, centre_left=True)
        self._apply_block(matrix, first, len(qubits), centre_left and not moves)
        for site in reversed(moves):
            self._apply_block(K.asarray(_SWAP, K.dtype), site, 2, centre_left=False)
        self._changed()

    def _apply_block(self, matrix: Any, first: int, k: int, centre_left: bool) -> None:
        """A ``k``-site gate on sites ``first .. first + k - 1`` (ascending order)."""
        K = self.K
        if k == 1:  # a unitary on one site keeps every isometry: no split, no move
            self.sites[first] = K.matmul(matrix, self.sites[first])  # (t, s) x (a, s, b) -> (a, t, b)
            return
        last = first + k - 1
        self.move_centre(min(max(self.centre, first), last))
        block = self.sites[first]
        for site in range(first + 1, last + 1):  # (D, 2^j, D') x (D', 2, D'') by one matmul
            left, size, _ = K.shape(block)
            block = K.reshape(_site_times(K, block, self.sites[site]), (left, size * 2, -1))
        block = K.matmul(matrix, block)
        if centre_left:
            self._split_from_right(block, first, k)
        else:
            self._split_from_left(block, first, k)

    def _split(self, matrix: Any) -> tuple[Any, Any]:
        """``matrix ~ U W`` (``U`` isometric), truncated; renormalised when something was cut."""
        K = self.K
        before = len(self.truncation.discarded)
        u, w, values = K.svd_split(matrix, self.truncation.rank)
        cut = len(self.truncation.discarded) > before
        blind_cut = self.truncation.blind and K.shape(u)[1] < K.shape(values)[0]
        if cut and not K.needs_gradient(w):  # the state keeps norm 1: |W_r|^2 is the kept weight
            w = w * (1.0 / math.sqrt(self.truncation.kept))
        elif cut or blind_cut:  # differentiated (or inside jit): the norm of the array itself
            w = w / K.sqrt(K.sum(K.abs(w) ** 2))
            if blind_cut:  # inside jit: the weight cut, as a backend scalar
                squares = K.abs(values) ** 2
                self.truncation.discarded.append(
                    1 - K.sum(squares[: K.shape(u)[1]]) / K.sum(squares))
        return u, w

    def _split_from_left(self, block: Any, first: int, k: int) -> None:
        K = self.K
        for site in range(first, first + k - 1):
            left, size, right = K.shape(block)
            u, w = self._split(K.reshape(block, (left * 2, (size // 2) * right)))
            rank = K.shape(u)[1]
            self.sites[site] = K.reshape(u, (left, 2, rank))
            block = K.reshape(w, (rank, size // 2, right))
        self.sites[first + k - 1] = block
        self.centre = first + k - 1

    def _split_from_right(self, block: Any, first: int, k: int) -> None:
        K = self.K
        for site in range(first + k - 1, first, -1):
            left, size, right = K.shape(block)
            u, w = self._split(K.transpose(K.reshape(block, (left * (size // 2), 2 * right))))
            rank = K.shape(u)[1]
            self.sites[site] = K.reshape(K.transpose(u), (rank, 2, right))
            block = K.reshape(K.transpose(w), (left, size // 2, rank))
        self.sites[first] = block
        self.centre = first


def _times_site(K: ArrayBackend, matrix: Any, site: Any) -> Any:
    """``matrix @ site`` on the site's left bond: ``(a, b) x (b, s, c) -> (a, s, c)``."""
    left, size, right = K.shape(site)
    return K.reshape(K.matmul(matrix, K.reshape(site, (left, size * right))), (-1, size, right))


def _site_times(K: ArrayBackend, site: Any, other: Any) -> Any:
    """``site`` contracted on its right bond with ``other``'s first axis (a matrix or a site):
    ``(a, s, b) x (b, c) -> (a, s, c)``, ``(a, s, b) x (b, t, c) -> (a, s t, c)``, one matmul."""
    left, size, bond = K.shape(site)
    right = K.shape(other)[-1]
    product = K.matmul(K.reshape(site, (left * size, bond)), K.reshape(other, (bond, -1)))
    return K.reshape(product, (left, -1, right))


def _permuted(K: ArrayBackend, matrix: Any, order: list[int]) -> Any:
    """``matrix`` on qubits reordered: new qubit ``j`` is old qubit ``order[j]`` (by index
    gathers: no ``2k``-dimensional tensors)."""
    k = len(order)
    index = np.arange(2 ** k)
    bits = (index[:, None] >> np.arange(k - 1, -1, -1)[None, :]) & 1  # new-order bits
    old = np.zeros(2 ** k, dtype=np.int64)
    for j, source in enumerate(order):
        old += bits[:, j] << (k - 1 - source)
    return K.take(K.take(matrix, old.tolist(), axis=0), old.tolist(), axis=1)


def rounding_level(K: ArrayBackend) -> float:
    """Relative size below which singular values are rounding noise in the working dtype."""
    return float(np.finfo(K.real_dtype_name).eps) if hasattr(K, "real_dtype_name") else 1e-16


def truncation_of(K: ArrayBackend, max_bond: int | None, cutoff: float) -> Truncation:
    return Truncation(max_bond, cutoff, rounding_level(K))
