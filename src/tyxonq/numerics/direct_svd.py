"""The reduced SVD of a matrix without ``numpy.linalg.svd``'s wrapper.

``numpy.linalg.svd`` checks and casts its argument, enters an error state and casts the factors
back: 8-13 microseconds a call, as much as the decomposition itself of the small matrices a
matrix-product state splits (8 x 16 complex), of which a 100-qubit quench splits about two
thousand a call. :func:`reduced_svd` calls the same generalised ufunc NumPy's function calls
(LAPACK's ``gesdd``; ``numpy.linalg._umath_linalg``: ``svd_s`` from NumPy 2, ``svd_m_s`` and
``svd_n_s`` before) as it calls it (single precision computed in double and cast back), so the
factors are NumPy's to the bit. Stacked, empty and non-float arrays, and a decomposition that did
not converge (NaN factors: NumPy then raises its ``LinAlgError``), go through
``numpy.linalg.svd``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

__all__ = ["reduced_svd", "SlowSVDWarning"]

#: each dtype's ufunc signature: NumPy computes single precision in double and casts back
_SIGNATURES = {np.dtype(np.float32): "d->ddd", np.dtype(np.float64): "d->ddd",
               np.dtype(np.complex64): "D->DdD", np.dtype(np.complex128): "D->DdD"}
_SINGLE = {np.dtype(np.float32): (np.float32, np.float32), np.dtype(np.complex64): (np.complex64, np.float32)}


class SlowSVDWarning(RuntimeWarning):
    """This NumPy has none of the SVD ufuncs :func:`reduced_svd` knows: SVDs go through
    ``numpy.linalg.svd`` (the same factors, 8-13 microseconds more a call)."""


def _ufunc_for() -> Callable[[int, int], Any] | None:
    """``(rows, columns) -> NumPy's reduced-SVD ufunc for that shape``, or ``None``."""
    module = getattr(np.linalg, "_umath_linalg", None)
    reduced = getattr(module, "svd_s", None)
    if reduced is not None:  # NumPy 2
        return lambda rows, columns: reduced
    wide, tall = getattr(module, "svd_m_s", None), getattr(module, "svd_n_s", None)
    if wide is not None and tall is not None:  # NumPy 1: one ufunc for m < n, one for m >= n
        return lambda rows, columns: wide if rows < columns else tall
    return None


_UFUNC = _ufunc_for()
_warned: list[bool] = []


def reduced_svd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``numpy.linalg.svd(a, full_matrices=False)``: ``(u, s, vh)``, by NumPy's own ufunc
    directly for a non-empty 2-d float or complex array.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[3.0, 0.0], [0.0, -2.0], [0.0, 0.0]])
    >>> u, s, vh = reduced_svd(a)
    >>> np.round(s, 12).tolist(), u.shape, vh.shape, bool(np.allclose(u * s @ vh, a))
    ([3.0, 2.0], (3, 2), (2, 2), True)
    """
    if _UFUNC is None:
        if not _warned:
            _warned.append(True)
            warnings.warn(f"NumPy {np.__version__} has no SVD ufunc tyxonq knows, so SVDs go through "
                          "numpy.linalg.svd: the same results, 8-13 microseconds slower a call",
                          SlowSVDWarning, stacklevel=3)
    elif isinstance(a, np.ndarray) and a.ndim == 2 and a.size and a.dtype in _SIGNATURES:
        with np.errstate(invalid="ignore"):  # a failure fills NaN: numpy.linalg.svd raises below
            u, s, vh = _UFUNC(*a.shape)(a, signature=_SIGNATURES[a.dtype])
        if s[0] == s[0]:
            single = _SINGLE.get(a.dtype)
            if single is None:
                return u, s, vh
            return u.astype(single[0]), s.astype(single[1]), vh.astype(single[0])
    return tuple(np.linalg.svd(a, full_matrices=False))
