"""Every cache tyxonq keeps in a process, in one place: what it holds and how to empty it.

Work that depends only on a circuit's structure is done once and kept: contraction plans (with the
compiled programs JAX runs them as), the sweep programs of state vectors, the small numbers that
stand for structures in cache keys, constants converted for each backend, the compiled functions
of objectives :func:`tyxonq.optimize.minimize` has run, and the structural helpers behind them
(gate tensor forms, placements, parsed Pauli strings). Each module registers its cache in
:mod:`tyxonq.numerics.cache_registry`. None of it can change a result: everything is rebuilt on
demand after :func:`clear_caches`. The persistent cache on disk
(:func:`tyxonq.set_persistent_cache`) is separate and untouched here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .circuit.contraction.plan import PlanCacheInfo, plan_cache_info
from .numerics.cache_registry import cache_sizes, clear_registered_caches

__all__ = ["CacheInfo", "cache_info", "clear_caches"]


@dataclass(frozen=True)
class CacheInfo:
    """``plans``: the plan cache's statistics (hits, misses, searches, loads); ``sizes``: the
    entries of every registered cache, by name (``"plans"``, ``"sweep programs"``,
    ``"structure tokens"``, ``"backend constants"``, ``"compiled objectives"``, and each
    structural helper by its qualified name)."""

    plans: PlanCacheInfo
    sizes: dict

    @property
    def total(self) -> int:
        """Entries over every cache."""
        return sum(self.sizes.values())


def cache_info() -> CacheInfo:
    """What every in-process cache holds.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.clear_caches()
    >>> _ = tq.Circuit(3).h(0).cx(0, 1).state(method="contraction")
    >>> info = tq.cache_info()
    >>> info.sizes["plans"], info.sizes["structure tokens"], info.sizes["backend constants"] > 0
    (1, 1, True)
    """
    return CacheInfo(plan_cache_info(), cache_sizes())


def clear_caches() -> None:
    """Empty every in-process cache (plans and their statistics, sweep programs, structure tokens,
    backend constants, compiled objectives, structural helpers). Results are unchanged; the next
    calls rebuild what they need. The persistent cache on disk is left as it is.

    Examples
    --------
    >>> import tyxonq as tq
    >>> _ = tq.Circuit(2).h(0).state(method="sweep")
    >>> tq.clear_caches()
    >>> tq.cache_info().total
    0
    """
    clear_registered_caches()
