"""Choosing the active backend: ``set_backend``, ``get_backend``, ``use_backend``.

The active backend lives in a :class:`contextvars.ContextVar`, so a ``use_backend`` block in one
thread or asyncio task is invisible to the others. ``set_backend`` also records a process-wide
default, which is what a thread or task that never chose a backend sees. Before anything is set,
the default is the ``TYXONQ_BACKEND`` environment variable, or ``numpy``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from typing import Any, Iterator

from .._context import ContextualSetting
from .base import BackendBase
from .protocol import ArrayBackend

__all__ = [
    "BACKEND_NAMES",
    "ENVIRONMENT_VARIABLE",
    "backend_names",
    "make_backend",
    "set_backend",
    "get_backend",
    "use_backend",
]

ENVIRONMENT_VARIABLE = "TYXONQ_BACKEND"

#: name -> (module, class)
_BACKEND_CLASSES = {
    "numpy": ("tyxonq.numerics.numpy_backend", "NumpyBackend"),
    "pytorch": ("tyxonq.numerics.pytorch_backend", "PyTorchBackend"),
    "cupynumeric": ("tyxonq.numerics.cupynumeric_backend", "CuPyNumericBackend"),
    "jax": ("tyxonq.numerics.jax_backend", "JaxBackend"),
}
_ALIASES = {"torch": "pytorch"}
BACKEND_NAMES = tuple(_BACKEND_CLASSES)

_shared_instances: dict[str, ArrayBackend] = {}  # one default-configured instance per name
_instances_lock = threading.Lock()


def backend_names() -> tuple[str, ...]:
    """Names accepted by :func:`set_backend` (aliases excluded).

    Examples
    --------
    >>> backend_names()
    ('numpy', 'pytorch', 'cupynumeric', 'jax')
    """
    return BACKEND_NAMES


def _canonical_name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"backend must be a name or an ArrayBackend instance; got {type(name).__name__}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _BACKEND_CLASSES:
        valid = ", ".join(repr(n) for n in (*BACKEND_NAMES, *_ALIASES))
        raise ValueError(f"unknown backend {name!r}; valid names are {valid}")
    return key


def make_backend(name: str, **options: Any) -> ArrayBackend:
    """A new backend instance of the named kind, configured by ``options``.

    Examples
    --------
    >>> make_backend("numpy", dtype="complex64").precision
    'complex64'
    """
    module_name, class_name = _BACKEND_CLASSES[_canonical_name(name)]
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(**options)


def _shared_instance(name: str) -> ArrayBackend:
    key = _canonical_name(name)
    with _instances_lock:
        if key not in _shared_instances:
            _shared_instances[key] = make_backend(key)
        return _shared_instances[key]


def _resolve(backend: Any, options: dict[str, Any]) -> ArrayBackend:
    # tyxonq's own backends first: a runtime Protocol check costs ~50 us (every member looked up)
    if isinstance(backend, BackendBase) or isinstance(backend, ArrayBackend):
        if options:
            raise TypeError(
                f"options {sorted(options)} only apply when a backend is given by name; "
                "configure the instance when you construct it"
            )
        return backend
    if options:
        return make_backend(backend, **options)
    return _shared_instance(backend)


def _environment_default() -> ArrayBackend:
    name = os.environ.get(ENVIRONMENT_VARIABLE, "").strip() or "numpy"
    try:
        return _shared_instance(name)
    except ValueError as error:
        raise ValueError(f"environment variable {ENVIRONMENT_VARIABLE}={name!r}: {error}") from None


ACTIVE_BACKEND: ContextualSetting[ArrayBackend] = ContextualSetting(
    "tyxonq_active_backend", fallback=_environment_default
)


def set_backend(backend: Any, **options: Any) -> ArrayBackend:
    """Make ``backend`` the active backend and the default of new threads; return it.

    Inside a :func:`use_backend` block it is active until the block ends; leaving the block
    restores the backend the thread had on entering it, while the process default (what new
    threads see) stays ``backend``.

    Parameters
    ----------
    backend : str or ArrayBackend
        ``"numpy"``, ``"pytorch"`` (alias ``"torch"``), ``"cupynumeric"``, ``"jax"``, or an
        instance.
    **options
        Construction options (``dtype``, ``device``, ``seed``): a new instance is made. Without
        options the shared instance of that name is used, so repeated calls give the same object.

    Examples
    --------
    >>> K = set_backend("numpy")
    >>> get_backend() is K
    True
    """
    return ACTIVE_BACKEND.set(_resolve(backend, options))


def get_backend(name: str | None = None) -> ArrayBackend:
    """The active backend, or the shared instance of the named one.

    Examples
    --------
    >>> get_backend("numpy") is get_backend("numpy")
    True
    """
    if name is not None:
        return _shared_instance(name)
    return ACTIVE_BACKEND.get()


@contextlib.contextmanager
def use_backend(backend: Any, **options: Any) -> Iterator[ArrayBackend]:
    """Context manager: ``backend`` is active inside the block, the previous one after it.

    The backend the thread had on entering the block comes back when it ends, even if it raises
    and even if :func:`set_backend` was called inside it (that call still sets the process
    default that new threads see); other threads and asyncio tasks never see the change.

    Examples
    --------
    >>> with use_backend("numpy", dtype="complex64") as K:
    ...     K.zeros(1).dtype
    dtype('complex64')
    """
    with ACTIVE_BACKEND.override(_resolve(backend, options)) as instance:
        yield instance
