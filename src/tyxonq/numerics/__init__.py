"""tyxonq's numerics core: one :class:`ArrayBackend` protocol, four backends, and transforms.

This package knows nothing of circuits. The backends' array libraries are imported only when a
backend is constructed, so ``import tyxonq`` needs only NumPy and opt_einsum:
``tyxonq.numerics.PyTorchBackend``, ``tyxonq.numerics.CuPyNumericBackend`` and
``tyxonq.numerics.JaxBackend`` are resolved on first access (their modules are
``pytorch_backend``, ``cupynumeric_backend`` and ``jax_backend``).
"""

from __future__ import annotations

from .active import grad, value_and_grad, vmap
from .array_module import ArrayModuleBackend
from .capabilities import BackendCapabilities
from .errors import (
    BackendNotInstalledError,
    DeviceNotAvailableError,
    DimensionLimitError,
    VectorizationError,
)
from .memory import memory_limit, set_memory_limit, use_memory_limit
from .numpy_backend import NumpyBackend
from .persistent_cache import PersistentCacheWarning, persistent_cache_directory, set_persistent_cache
from .protocol import ArrayBackend
from .selection import (
    BACKEND_NAMES,
    backend_names,
    get_backend,
    make_backend,
    set_backend,
    use_backend,
)
from .vectorize import VectorizationFallbackWarning, vectorize_or_fallback

__all__ = [
    "ArrayBackend",
    "ArrayModuleBackend",
    "BackendCapabilities",
    "NumpyBackend",
    "BACKEND_NAMES",
    "backend_names",
    "make_backend",
    "set_backend",
    "get_backend",
    "use_backend",
    "set_persistent_cache",
    "persistent_cache_directory",
    "PersistentCacheWarning",
    "set_memory_limit",
    "use_memory_limit",
    "memory_limit",
    "value_and_grad",
    "grad",
    "vmap",
    "vectorize_or_fallback",
    "BackendNotInstalledError",
    "DeviceNotAvailableError",
    "DimensionLimitError",
    "VectorizationError",
    "VectorizationFallbackWarning",
]


def __getattr__(name: str):  # the optional backends' classes, imported on first use
    if name == "PyTorchBackend":
        from .pytorch_backend import PyTorchBackend

        return PyTorchBackend
    if name == "JaxBackend":
        from .jax_backend import JaxBackend

        return JaxBackend
    if name == "CuPyNumericBackend":
        from .cupynumeric_backend import CuPyNumericBackend

        return CuPyNumericBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
