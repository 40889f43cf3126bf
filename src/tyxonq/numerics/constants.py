"""Constants built on the host and converted once per backend instance.

Identities, Pauli and projector matrices, gathering matrices: small arrays that every evaluation
needs on the backend in its working dtype. Each is made by ``build()`` the first time a backend
asks for its key and kept while the backend lives (a ``WeakKeyDictionary``: a backend that is
gone takes its constants with it). ``K.constant`` makes them safe to reuse across calls and
transforms.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from .cache_registry import register_cache
from .protocol import ArrayBackend

__all__ = ["backend_constant"]

_CONSTANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _nothing() -> None:
    return None


#: the backend asked last (weakly) and its constants
_RECENT: tuple[Callable[[], Any], dict] = (_nothing, {})


def backend_constant(K: ArrayBackend, key: tuple, build: Callable[[], np.ndarray]) -> Any:
    """The host array ``build()`` as a constant of backend ``K`` (converted once per key).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> first = backend_constant(K, ("example identity", 2), lambda: np.eye(2))
    >>> backend_constant(K, ("example identity", 2), lambda: np.zeros(2)) is first
    True
    """
    global _RECENT
    held, per_backend = _RECENT
    if held() is not K:  # the backend asked before (~95 constants a light cone): no hashing of K
        per_backend = _CONSTANTS.setdefault(K, {})
        _RECENT = (weakref.ref(K), per_backend)
    value = per_backend.get(key)
    if value is None:
        value = per_backend[key] = K.constant(build(), K.precision)
    return value


def _clear() -> None:
    global _RECENT
    _RECENT = (_nothing, {})
    _CONSTANTS.clear()


register_cache("backend constants", lambda: sum(len(per_backend) for per_backend in _CONSTANTS.values()),
               _clear)
