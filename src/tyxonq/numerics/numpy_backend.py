"""The NumPy backend: CPU arrays, finite-difference gradients, loop vmap."""

from __future__ import annotations

from typing import Any

import numpy as np

from .allocator import prime_allocator
from .array_module import NUMPY_MAX_NDIM, ArrayModuleBackend
from .capabilities import BackendCapabilities

__all__ = ["NumpyBackend"]


class NumpyBackend(ArrayModuleBackend):
    """:class:`~tyxonq.numerics.ArrayBackend` over NumPy.

    Parameters
    ----------
    dtype : {"complex128", "complex64"}
        Working complex dtype; the real dtype follows (``float64``/``float32``).
    seed : int, optional
        Seed of the backend's default random generator.

    Examples
    --------
    >>> K = NumpyBackend(dtype="complex64", seed=7)
    >>> K.zeros(2).dtype, K.real_dtype
    (dtype('complex64'), <class 'numpy.float32'>)
    """

    name = "numpy"

    def __init__(self, dtype: Any = "complex128", seed: int | None = None) -> None:
        capabilities = BackendCapabilities(
            autodiff="finite-difference", vmap="lanes", jit="none", devices=("cpu",),
            device="cpu", distributed=True, max_ndim=NUMPY_MAX_NDIM,
        )
        super().__init__(np, capabilities, dtype=dtype, seed=seed)
        prime_allocator()  # megabyte temporaries from glibc's heap, not fresh pages each time


def numpy_twin(K: Any) -> NumpyBackend:
    """The NumPy backend of ``K``'s precision, made once and kept on ``K`` (the host twin of the
    PyTorch and JAX backends)."""
    if getattr(K, "_twin", None) is None:
        K._twin = NumpyBackend(dtype=K.precision)  # noqa: SLF001 - a cache on the backend itself
    return K._twin  # noqa: SLF001
