"""Readout-error mitigation: estimate the ideal outcome distribution from noisy counts."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .numerics.arguments import checked_choice
from .operators.readout import confusion_matrices

__all__ = ["readout"]

METHODS = ("inverse", "least_squares")


def readout(counts: Mapping[str, int], confusion: Any, method: str = "inverse",
            iterations: int = 2000) -> dict[str, float]:
    """Mitigated probabilities of measured bitstrings under per-qubit readout error.

    The measured distribution is ``q = (C_0 ⊗ ... ⊗ C_{n-1}) p`` with ``C_q[read, true]``.
    ``"inverse"`` applies each ``C_q^{-1}`` to the empirical ``q`` and returns the nearest
    probability vector (Euclidean projection onto the simplex); ``"least_squares"`` minimises
    ``||C p - q||`` over probability vectors (projected gradient descent).

    Parameters
    ----------
    counts : dict
        Bitstring (qubit 0 leftmost) -> count, e.g. from ``circuit.sample(...)``.
    confusion : array or list of arrays
        One ``2 x 2`` column-stochastic matrix for every qubit, or one per qubit.
    method : {"inverse", "least_squares"}

    Returns
    -------
    dict
        Bitstring -> mitigated probability (entries above 1e-12), summing to 1.

    Examples
    --------
    >>> import tyxonq as tq
    >>> confusion = [[0.9, 0.2], [0.1, 0.8]]
    >>> counts = tq.Circuit(1).sample(20000, seed=2, readout_error=confusion)
    >>> round(tq.mitigation.readout(counts, confusion)["0"], 2)
    1.0
    """
    checked_choice(method, METHODS, "method")
    if not counts:
        raise ValueError("counts is empty")
    widths = {len(bitstring) for bitstring in counts}
    if len(widths) != 1 or any(set(b) - {"0", "1"} for b in counts):
        raise ValueError("counts keys must be bitstrings of 0/1, all of one length")
    n = widths.pop()
    matrices = confusion_matrices(confusion, n, "confusion")
    for q, matrix in enumerate(matrices):
        if abs(np.linalg.det(matrix)) < 1e-12:
            raise ValueError(f"confusion for qubit {q} is singular: readout cannot be inverted")
    total = sum(counts.values())
    measured = np.zeros(2 ** n)
    for bitstring, count in counts.items():
        measured[int(bitstring, 2)] += count / total
    if method == "inverse":
        estimate = _project_to_simplex(_tensor_apply([np.linalg.inv(m) for m in matrices], measured, n))
    else:
        estimate = _least_squares(matrices, measured, n, iterations)
    return {format(i, f"0{n}b"): float(p) for i, p in enumerate(estimate) if p > 1e-12}


def _tensor_apply(matrices: list[np.ndarray], vector: np.ndarray, n: int) -> np.ndarray:
    """``(M_0 ⊗ ... ⊗ M_{n-1}) vector``, one qubit axis at a time."""
    tensor = vector.reshape((2,) * n)
    for q, matrix in enumerate(matrices):
        tensor = np.moveaxis(np.tensordot(matrix, tensor, axes=([1], [q])), 0, q)
    return tensor.reshape(-1)


def _project_to_simplex(vector: np.ndarray) -> np.ndarray:
    """The probability vector nearest ``vector`` in Euclidean distance (sort-based projection)."""
    ordered = np.sort(vector)[::-1]
    cumulative = np.cumsum(ordered) - 1.0
    index = np.arange(1, len(vector) + 1)
    rho = index[ordered - cumulative / index > 0][-1]
    return np.maximum(vector - cumulative[rho - 1] / rho, 0.0)


def _least_squares(matrices: list[np.ndarray], measured: np.ndarray, n: int, iterations: int) -> np.ndarray:
    transposed = [m.T for m in matrices]
    step = 1.0 / np.prod([np.linalg.norm(m, 2) ** 2 for m in matrices])
    estimate = _project_to_simplex(_tensor_apply([np.linalg.inv(m) for m in matrices], measured, n))
    for _ in range(iterations):
        residual = _tensor_apply(matrices, estimate, n) - measured
        updated = _project_to_simplex(estimate - step * _tensor_apply(transposed, residual, n))
        if np.max(np.abs(updated - estimate)) < 1e-13:
            return updated
        estimate = updated
    return estimate
