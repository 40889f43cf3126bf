"""Readout error: per-qubit confusion matrices ``confusion[read, true]`` applied to sampled bits."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["confusion_matrices", "apply_readout_error"]


def _checked(matrix: Any, name: str) -> np.ndarray:
    array = np.asarray(matrix, dtype=float)
    if array.shape != (2, 2):
        raise ValueError(f"{name} has shape {array.shape}; a qubit's confusion matrix is 2 x 2, "
                         "confusion[read, true]")
    if np.any(array < -1e-12) or np.any(array > 1 + 1e-12):
        raise ValueError(f"{name} has entries outside [0, 1]: {array.tolist()}")
    sums = array.sum(axis=0)
    if not np.allclose(sums, 1.0, atol=1e-8):
        raise ValueError(f"{name} columns sum to {sums.tolist()}; each column (a true value) must "
                         "sum to 1: confusion[read, true] = P(read | true)")
    return array


def confusion_matrices(confusion: Any, num_qubits: int, name: str = "readout_error") -> list[np.ndarray]:
    """One checked ``2 x 2`` column-stochastic matrix per qubit, from one matrix (every qubit) or
    a list of ``num_qubits``.

    Examples
    --------
    >>> [m.tolist() for m in confusion_matrices([[0.9, 0.2], [0.1, 0.8]], 2)][1]
    [[0.9, 0.2], [0.1, 0.8]]
    """
    if isinstance(confusion, (list, tuple)) and confusion and np.ndim(confusion[0]) == 2:
        if len(confusion) != num_qubits:
            raise ValueError(f"{name} lists {len(confusion)} matrices for {num_qubits} qubit(s); "
                             "give one per qubit, or one for all")
        return [_checked(m, f"{name}[{q}]") for q, m in enumerate(confusion)]
    single = _checked(confusion, name)
    return [single] * num_qubits


def apply_readout_error(bits: np.ndarray, confusions: Sequence[np.ndarray | None],
                        rng: np.random.Generator) -> np.ndarray:
    """Sampled outcomes ``bits`` (``shots x k``, 0/1) read through each column's confusion matrix:
    a true ``b`` reads ``1 - b`` with probability ``confusion[1 - b, b]`` (``None``: exact)."""
    read = bits.copy()
    for column, confusion in enumerate(confusions):
        if confusion is None:
            continue
        true = bits[:, column]
        flip = rng.random(len(true)) < confusion[1 - true, true]
        read[:, column] = np.where(flip, 1 - true, true)
    return read
