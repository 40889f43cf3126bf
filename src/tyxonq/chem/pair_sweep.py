"""The CI-vector engine's host sweeps: each excitation's rotation on its determinant pairs only.

An excitation rotates the pairs ``(src, dst)`` it connects and leaves every other amplitude
alone, so a sweep gathers, combines and scatters just those entries: per entry the determinant
written (``index``), the one read besides (``partner``) and the sign of ``G`` there (``sign``:
``G v = sign * v[partner]`` on the entries). (Grouping excitations with disjoint pairs into one
call was tried and dropped: water's UCCSD, pUCCD and 2-UpCCGSD excitations (140, 10 and 126) fell
into as many groups, since every excitation out of the reference touches its determinant.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["PairRotation", "pair_rotations", "pair_sweep_energy_and_grad"]


@dataclass(frozen=True)
class PairRotation:
    """One excitation's entries (see the module docstring)."""

    index: np.ndarray
    partner: np.ndarray
    sign: np.ndarray


def pair_rotations(actions: Sequence) -> list[PairRotation]:
    """The entries of each excitation (``actions``: ``src``, ``dst``, ``sign`` each).

    Examples
    --------
    >>> from types import SimpleNamespace as Action
    >>> rotation, = pair_rotations([Action(src=np.array([0]), dst=np.array([3]), sign=np.array([-1]))])
    >>> rotation.index.tolist(), rotation.partner.tolist(), rotation.sign.tolist()
    ([0, 3], [3, 0], [1.0, -1.0])
    """
    return [PairRotation(np.concatenate([a.src, a.dst]), np.concatenate([a.dst, a.src]),
                         np.concatenate([-a.sign, a.sign]).astype(float)) for a in actions]


def pair_sweep_energy_and_grad(rotations: Sequence[PairRotation], hamiltonian: np.ndarray,
                               reference: np.ndarray, params: np.ndarray,
                               gradient: bool = True) -> tuple[float, np.ndarray]:
    """``<v|H|v>`` for ``v = prod_k exp(θ_k G_k) reference`` (the first applied first) and its
    gradient: ``λ = H v`` carried back, ``dE/dθ_k = 2 <λ_k, G_k v_k>``, each rotation undone on
    ``v`` and ``λ`` (``exp(-θ G)``: ``G`` is real antisymmetric)."""
    cosines, sines = np.cos(params), np.sin(params)
    vector = reference.copy()
    for rotation, c, s in zip(rotations, cosines, sines):
        vector[rotation.index] = c * vector[rotation.index] + s * rotation.sign * vector[rotation.partner]
    lam = hamiltonian @ vector
    energy = float(vector @ lam)
    if not gradient:
        return energy, np.zeros(0)
    result = np.zeros(len(params))
    for k in range(len(rotations) - 1, -1, -1):
        rotation, c, s = rotations[k], cosines[k], sines[k]
        moved = rotation.sign * vector[rotation.partner]  # (G_k v) on the entries
        result[k] = 2.0 * float(lam[rotation.index] @ moved)
        vector[rotation.index] = c * vector[rotation.index] - s * moved
        lam[rotation.index] = c * lam[rotation.index] - s * rotation.sign * lam[rotation.partner]
    return energy, result
