"""Applying a matrix to some qubits of a state vector, within the backend's dimension limit."""

from __future__ import annotations

from typing import Any, Sequence

from .executor import permutation_moves, permute

__all__ = ["apply_matrix"]


def apply_matrix(K: Any, state: Any, matrix: Any, qubits: Sequence[int], num_qubits: int) -> Any:
    """``matrix`` (``2^k x 2^k``, any matrix) applied to ``qubits`` of a ``2^n`` state vector.

    The qubits' legs are moved to the front (grouped moves within ``max_ndim``), the state is
    viewed as a ``2^k x 2^(n-k)`` matrix, multiplied, and the legs are moved back.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> x = np.array([[0, 1], [1, 0]], dtype=complex)
    >>> apply_matrix(K, np.eye(4, dtype=complex)[0], x, [1], 2).real.tolist()  # |00> -> |01>
    [0.0, 1.0, 0.0, 0.0]
    """
    legs = tuple(range(num_qubits))
    front = tuple(qubits) + tuple(q for q in legs if q not in qubits)
    sizes = {q: 2 for q in legs}
    max_ndim = K.capabilities.max_ndim
    k = len(qubits)
    moved = K.reshape(permute(K, state, permutation_moves(legs, front, sizes, max_ndim)),
                      (2 ** k, 2 ** (num_qubits - k)))
    applied = K.matmul(matrix, moved)
    back = permutation_moves(front, legs, sizes, max_ndim)
    return K.reshape(permute(K, applied, back), (2 ** num_qubits,))
