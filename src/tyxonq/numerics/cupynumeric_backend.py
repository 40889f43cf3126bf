"""The cuPyNumeric backend: NumPy's API on Legate, from one CPU to many GPUs and nodes.

It is the NumPy implementation over the ``cupynumeric`` module, plus what cuPyNumeric lacks
(``kron``, ``Generator.choice``), rebuilt in :mod:`tyxonq.numerics.compositions` without ever
exceeding its limit of 6 array dimensions. Where the work runs (CPUs, GPUs, nodes) is decided by
the Legate launcher, e.g. ``legate --gpus 4 script.py``.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np

from .array_module import ArrayModuleBackend
from .capabilities import BackendCapabilities
from .compositions import choice_by_inverse_cdf
from .errors import BackendNotInstalledError
from .lanes import Lanes

__all__ = ["CuPyNumericBackend", "CUPYNUMERIC_MAX_NDIM", "reshape_copy_ndim"]

#: cuPyNumeric's wheels are built with LEGATE_MAX_DIM = 6.
CUPYNUMERIC_MAX_NDIM = 6

INSTALL_HINT = (
    "pip install 'tyxonq[cupynumeric]' (the nvidia-cupynumeric wheel, about 2.9 GB). It needs an "
    "NVIDIA driver at import time (libcuda.so.1); see docs-ng/backends.md for running it on a "
    "machine without one"
)


def reshape_copy_ndim(old_shape: tuple[int, ...], new_shape: tuple[int, ...]) -> int:
    """Dimensions of the copy cuPyNumeric makes to reshape ``old_shape`` into ``new_shape``.

    cuPyNumeric pairs the two shapes into the smallest groups of equal products (after dropping
    sizes of 1) and copies between the source and a temporary, each delinearised group by
    group: the copy has, per group, as many dimensions as the side with more than one extent (the
    target's when the source has one). It can exceed both shapes' lengths, and Legate aborts
    beyond its limit of 6 (``(16, 2, 2, 4) -> (2, 2, 2, 2, 8, 2)`` copies in 7).

    Examples
    --------
    >>> reshape_copy_ndim((16, 2, 2, 4), (2, 2, 2, 2, 8, 2))
    7
    >>> reshape_copy_ndim((16, 2, 2, 4), (256,)), reshape_copy_ndim((256,), (2, 2, 2, 2, 8, 2))
    (4, 6)
    """
    old = [size for size in old_shape if size != 1]
    new = [size for size in new_shape if size != 1]
    if not old or not new or 0 in old or 0 in new or min(new) < 0 \
            or int(np.prod(old)) != int(np.prod(new)):  # nothing to copy, or NumPy's error to raise
        return max(len(old), len(new))
    ndim, i, j = 0, 0, 0
    while i < len(old) and j < len(new):
        start_i, start_j, old_product, new_product = i, j, 1, 1
        while True:
            if old_product < new_product:
                old_product *= old[i]
                i += 1
            else:
                new_product *= new[j]
                j += 1
            if old_product == new_product:
                break
        ndim += (i - start_i) if i - start_i > 1 else (j - start_j)
    return ndim


def _inferred(shape: tuple[int, ...], size: int) -> tuple[int, ...]:
    """``shape`` with a ``-1`` replaced by the size it stands for (left as is if it cannot)."""
    if -1 not in shape:
        return shape
    known = int(np.prod([s for s in shape if s != -1]))
    return tuple(size // known if s == -1 and known else s for s in shape)


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
            autodiff="finite-difference", vmap="lanes", jit="none", devices=("legate",),
            device="legate", distributed=False, max_ndim=CUPYNUMERIC_MAX_NDIM,
        )
        super().__init__(xp, capabilities, dtype=dtype, seed=seed)

    def reshape(self, x: Any, shape: Any) -> Any:
        shape = self._shape_tuple(shape, "reshape")
        if isinstance(x, self.xp.ndarray) and x.ndim > 1 and len(shape) > 1 and \
                reshape_copy_ndim(x.shape, _inferred(shape, x.size)) > self.capabilities.max_ndim:
            # the one-step copy would exceed Legate's dimension limit: two steps, each within it
            return super().reshape(super().reshape(x, (x.size,)), shape)
        try:
            return super().reshape(x, shape)
        except ValueError:
            # Legate refuses a reshape that splits some dimensions while merging others across
            # their boundaries ("delinearize"); flattening first and then splitting the one
            # dimension is always possible: the same values in the same order
            if not isinstance(x, self.xp.ndarray):
                raise
            return super().reshape(super().reshape(x, (x.size,)), shape)

    def svd(self, a: Any, full_matrices: bool = False) -> tuple[Any, Any, Any]:
        """SVD; a wide matrix (cuPyNumeric's own needs rows >= columns) through its adjoint:
        ``A^H = V S U^H``."""
        a = self.asarray(a)
        if a.ndim == 2 and a.shape[0] < a.shape[1]:
            v, s, uh = super().svd(self.conj(self.transpose(a)), full_matrices)
            return self.conj(self.transpose(uh)), s, self.conj(self.transpose(v))
        return super().svd(a, full_matrices)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, *,
               rng: Any = None) -> Any:
        generator = rng if rng is not None else self._generator
        return choice_by_inverse_cdf(self.xp, generator, a, self._size(size), replace, p)


def _traced(x: Any) -> bool:
    """Whether ``x`` is a traced value (lanes, or an object array of lanes or dual numbers),
    which cuPyNumeric cannot hold."""
    return isinstance(x, Lanes) or (type(x) is np.ndarray and x.dtype == object)


def _host_for_traced(name: str) -> Any:
    """``CuPyNumericBackend.<name>`` that gives traced values to NumPy's function, which applies
    it through the values' own methods (``lanes.cos()``, ``lanes.sum(axis=...)``)."""
    own = getattr(CuPyNumericBackend, name)

    @functools.wraps(own)
    def method(self: CuPyNumericBackend, x: Any, *args: Any, **kwargs: Any) -> Any:
        if _traced(x):
            return getattr(np, name)(x, *args, **kwargs)
        return own(self, x, *args, **kwargs)

    return method


for _name in ("abs", "real", "imag", "conj", "square", "exp", "sin", "cos", "sqrt", "log", "sum", "mean",
              "reshape"):
    setattr(CuPyNumericBackend, _name, _host_for_traced(_name))
