"""The cuPyNumeric backend: NumPy's API on Legate, from one CPU to many GPUs and nodes.

It is the NumPy implementation over the ``cupynumeric`` module, plus what cuPyNumeric lacks
(``kron``, ``Generator.choice``), rebuilt in :mod:`tyxonq.numerics.compositions` without ever
exceeding its limit of 6 array dimensions. Where the work runs (CPUs, GPUs, nodes) is decided by
the Legate launcher, e.g. ``legate --gpus 4 script.py``.
"""

from __future__ import annotations

import importlib
from typing import Any

from .array_module import ArrayModuleBackend
from .capabilities import BackendCapabilities
from .compositions import choice_by_inverse_cdf, kron_by_broadcasting
from .errors import BackendNotInstalledError

__all__ = ["CuPyNumericBackend", "CUPYNUMERIC_MAX_NDIM"]

#: cuPyNumeric's wheels are built with LEGATE_MAX_DIM = 6.
CUPYNUMERIC_MAX_NDIM = 6

INSTALL_HINT = (
    "pip install 'tyxonq[cupynumeric]' (the nvidia-cupynumeric wheel, about 2.9 GB). It needs an "
    "NVIDIA driver at import time (libcuda.so.1); see docs-ng/backends.md for running it on a "
    "machine without one"
)


def import_cupynumeric() -> Any:
    """Import ``cupynumeric`` or raise :class:`BackendNotInstalledError` with the install command."""
    try:
        return importlib.import_module("cupynumeric")
    except ImportError as error:
        raise BackendNotInstalledError(
            f"the cupynumeric backend needs the cupynumeric package, whose import failed "
            f"({type(error).__name__}: {error}). Install it with: {INSTALL_HINT}"
        ) from error


class CuPyNumericBackend(ArrayModuleBackend):
    """:class:`~tyxonq.numerics.ArrayBackend` over cuPyNumeric.

    Parameters
    ----------
    dtype : {"complex128", "complex64"}
        Working complex dtype.
    seed : int, optional
        Seed of the backend's default random generator.
    module : module, optional
        The NumPy-compatible module to run on; ``cupynumeric`` by default. Tests pass ``numpy`` to
        check this class's own logic (its compositions and dimension limit) where cuPyNumeric
        cannot be imported.

    Examples
    --------
    >>> import numpy
    >>> K = CuPyNumericBackend(module=numpy)
    >>> K.capabilities.max_ndim, K.kron(K.eye(2), K.ones((1, 2))).shape
    (6, (2, 4))
    """

    name = "cupynumeric"

    def __init__(self, dtype: Any = "complex128", seed: int | None = None, *,
                 module: Any = None) -> None:
        xp = module if module is not None else import_cupynumeric()
        capabilities = BackendCapabilities(
            autodiff="finite-difference", vmap="loop", jit="none", devices=("legate",),
            device="legate", distributed=True, max_ndim=CUPYNUMERIC_MAX_NDIM,
        )
        super().__init__(xp, capabilities, dtype=dtype, seed=seed)

    def kron(self, a: Any, b: Any) -> Any:
        return kron_by_broadcasting(self.xp, a, b, self.capabilities.max_ndim)

    def reshape(self, x: Any, shape: Any) -> Any:
        try:
            return super().reshape(x, shape)
        except ValueError:
            # Legate refuses a reshape that splits some dimensions while merging others across
            # their boundaries ("delinearize"); flattening first and then splitting the one
            # dimension is always possible: the same values in the same order
            if not isinstance(x, self.xp.ndarray):
                raise
            return super().reshape(super().reshape(x, (x.size,)), shape)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, *,
               rng: Any = None) -> Any:
        generator = rng if rng is not None else self._generator
        return choice_by_inverse_cdf(self.xp, generator, a, self._size(size), replace, p)
