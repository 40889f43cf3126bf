"""A registry of the in-process caches, so that one call can report or empty all of them.

Each module that keeps work between calls registers its cache here once, at import, by name,
with a function giving its size and one emptying it (:func:`register_cache`); a ``functools``
cache registers itself by :func:`register_function_cache`. :func:`tyxonq.cache_info` and
:func:`tyxonq.clear_caches` read the registry, so a new cache needs no change there.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["register_cache", "register_function_cache", "cache_sizes", "clear_registered_caches"]

_REGISTRY: dict[str, tuple[Callable[[], int], Callable[[], None]]] = {}


def register_cache(name: str, size: Callable[[], int], clear: Callable[[], None]) -> None:
    """Add (or replace) the cache ``name``: ``size()`` counts its entries, ``clear()`` empties it."""
    _REGISTRY[name] = (size, clear)


def register_function_cache(function: Any) -> Any:
    """Register a ``functools.lru_cache`` function under its qualified name; returns it (usable
    as a decorator above ``@functools.lru_cache``)."""
    register_cache(f"{function.__module__}.{function.__qualname__}", lambda: function.cache_info().currsize,
                   function.cache_clear)
    return function


def cache_sizes() -> dict[str, int]:
    """Every registered cache's entry count, by name (sorted).

    Examples
    --------
    >>> import tyxonq  # every module registers its caches at import
    >>> "plans" in cache_sizes()
    True
    """
    return {name: size() for name, (size, _) in sorted(_REGISTRY.items())}


def clear_registered_caches() -> None:
    """Empty every registered cache."""
    for _, clear in _REGISTRY.values():
        clear()
