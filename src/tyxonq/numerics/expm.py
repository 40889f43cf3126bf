"""Matrix exponential for NumPy-like modules that lack one (NumPy itself, cuPyNumeric).

Scaling and squaring with the degree-13 Padé approximant (Higham 2005, the algorithm behind
``scipy.linalg.expm``), written only with ``matmul``, ``solve`` and element-wise operations so any
NumPy-compatible module can run it. Batches of matrices (``(..., n, n)``) are supported.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["expm_pade13"]

# Padé(13) coefficients b_0 .. b_13 (Higham 2005, Table 2.3)
_B = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)
_THETA_13 = 5.371920351148152  # largest 1-norm for which Padé(13) is accurate to double precision


def expm_pade13(xp: Any, a: Any, one_norm: float | None = None) -> Any:
    """``exp(a)`` for a square matrix (or a stack of them) using module ``xp``; ``one_norm`` (the
    largest 1-norm of the stack, read on the host) when ``a``'s values cannot be read here.

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.allclose(expm_pade13(np, np.array([[0.0, 1.0], [0.0, 0.0]])), [[1, 1], [0, 1]]))
    True
    """
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expm needs square matrices of shape (..., n, n); got shape {a.shape}")
    if a.dtype.kind not in "fc":
        a = a.astype(xp.float64)
    n = a.shape[-1]
    if one_norm is None:
        one_norm = float(xp.max(xp.sum(xp.abs(a), axis=-2))) if a.size else 0.0
    squarings = max(0, math.ceil(math.log2(one_norm / _THETA_13))) if one_norm > _THETA_13 else 0
    a = a / (2.0 ** squarings)
    identity = xp.eye(n, dtype=a.dtype)
    a2 = xp.matmul(a, a)
    a4 = xp.matmul(a2, a2)
    a6 = xp.matmul(a4, a2)
    b = _B
    u_inner = b[13] * a6 + b[11] * a4 + b[9] * a2
    u = xp.matmul(a, xp.matmul(a6, u_inner) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
    v_inner = b[12] * a6 + b[10] * a4 + b[8] * a2
    v = xp.matmul(a6, v_inner) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    result = xp.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        result = xp.matmul(result, result)
    return result
