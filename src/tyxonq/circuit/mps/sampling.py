"""Exact (perfect) sampling from a matrix-product state, all shots at once.

With the orthogonality centre on site 0 every later site is right-isometric, so the probability
of the next bit given the bits drawn so far is the squared norm of one vector-tensor product:
``p(s | previous) = ||L A_i[:, s, :]||^2`` with ``L`` the normalised row left by the previous
draws. Each site costs one ``(shots, D) x (D, 2 D')`` product; nothing of size ``2^n`` is built,
and the draws are exact (no Markov chain, no truncation beyond the state's own).
"""

from __future__ import annotations

import numpy as np

from .state import MPSState

__all__ = ["perfect_samples"]


def perfect_samples(state: MPSState, shots: int, rng: np.random.Generator) -> np.ndarray:
    """``(shots, n)`` bits (qubit 0 first) drawn from ``|<bits|psi>|^2``."""
    K = state.K
    state.move_centre(0)
    n = state.num_sites
    bits = np.zeros((shots, n), dtype=np.int8)
    uniforms = rng.random((shots, n))
    rows = K.ones((shots, 1), K.dtype)
    for site in range(n):
        A = K.detach(state.sites[site])
        left, _, right = K.shape(A)
        products = K.reshape(K.matmul(rows, K.reshape(A, (left, 2 * right))), (shots, 2, right))
        weights = K.sum(K.real(K.conj(products) * products), axis=2)  # (shots, 2)
        host = np.clip(K.to_numpy(weights).astype(float), 0.0, None)
        p_one = host[:, 1] / np.maximum(host.sum(axis=1), 1e-300)
        drawn = uniforms[:, site] < p_one
        bits[:, site] = drawn
        chosen = K.where(K.asarray(drawn[:, None]), products[:, 1, :], products[:, 0, :])
        norms = np.sqrt(np.where(drawn, host[:, 1], host[:, 0]))
        rows = chosen / K.asarray(np.maximum(norms, 1e-300)[:, None], K.real_dtype)
    return bits

