"""Contraction plans, made once per circuit structure and cached.

A :class:`Plan` is a network (which tensors, which legs), a compiled contraction path and the
final reshape. It depends on the circuit's structure (gate kinds and qubits), on what is computed,
on the contractor and on the backend's dimension limit -- never on parameter values -- so
re-evaluating a circuit with new angles performs no path search.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import opt_einsum

from .contractor import get_contractor
from .executor import CompiledContraction, Move, compile_path, permutation_moves, permute
from .network import Network
from .simplify import rank_simplify

__all__ = ["Plan", "get_plan", "run_plan", "plan_cache_info", "clear_plan_cache",
           "set_plan_cache", "PlanCacheInfo"]


@dataclass(frozen=True)
class Plan:
    network: Network
    contraction: CompiledContraction
    output_moves: tuple[Move, ...]
    output_shape: tuple[int, ...]

    @property
    def largest_tensor_size(self) -> int:
        return self.contraction.largest_size


@dataclass(frozen=True)
class PlanCacheInfo:
    """Statistics of the plan cache (``path_searches`` counts calls of the path finder)."""

    hits: int
    misses: int
    path_searches: int
    size: int
    maxsize: int
    enabled: bool


class _PlanCache:
    def __init__(self, maxsize: int = 256) -> None:
        self._plans: OrderedDict[tuple, Plan] = OrderedDict()
        self._lock = threading.Lock()
        self.maxsize = maxsize
        self.enabled = True
        self.hits = self.misses = self.path_searches = 0

    def get(self, key: tuple, build: Callable[[], Plan]) -> Plan:
        with self._lock:
            if self.enabled and key in self._plans:
                self.hits += 1
                self._plans.move_to_end(key)
                return self._plans[key]
            self.misses += 1
        plan = build()
        with self._lock:
            if self.enabled and self.maxsize > 0:
                self._plans[key] = plan
                while len(self._plans) > self.maxsize:
                    self._plans.popitem(last=False)
        return plan

    def info(self) -> PlanCacheInfo:
        return PlanCacheInfo(self.hits, self.misses, self.path_searches, len(self._plans),
                             self.maxsize, self.enabled)

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()
            self.hits = self.misses = self.path_searches = 0


_CACHE = _PlanCache()


def plan_cache_info() -> PlanCacheInfo:
    """Hits, misses, path searches and size of the plan cache.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.clear_plan_cache()
    >>> c = tq.Circuit(3).h(0).cx(0, 1).cx(1, 2)
    >>> _ = c.state(method="contraction"); _ = c.state(method="contraction")
    >>> info = tq.plan_cache_info()
    >>> info.misses, info.hits, info.path_searches
    (1, 1, 1)
    """
    return _CACHE.info()


def clear_plan_cache() -> None:
    """Forget every cached plan and reset the statistics."""
    _CACHE.clear()


def set_plan_cache(maxsize: int | None = None, enabled: bool | None = None) -> PlanCacheInfo:
    """Bound the plan cache (``maxsize`` plans, least recently used evicted) or turn it off."""
    if maxsize is not None:
        if not isinstance(maxsize, int) or maxsize < 0:
            raise ValueError(f"maxsize={maxsize!r} must be a non-negative int")
        _CACHE.maxsize = maxsize
    if enabled is not None:
        _CACHE.enabled = bool(enabled)
    if not _CACHE.enabled or _CACHE.maxsize == 0:
        _CACHE._plans.clear()
    return _CACHE.info()


def _build_plan(network: Network, max_ndim: int, output_shape: tuple[int, ...], thorough: bool) -> Plan:
    contractor = get_contractor()
    labels = sorted({leg for leaf in network.leaves for leg in leaf.legs} | set(network.output))
    symbol = {leg: opt_einsum.get_symbol(i) for i, leg in enumerate(labels)}
    inputs = [set(symbol[leg] for leg in leaf.legs) for leaf in network.leaves]
    output = set(symbol[leg] for leg in network.output)
    size_dict = {symbol[leg]: 2 for leg in labels}
    with _CACHE._lock:
        _CACHE.path_searches += 1
    path = rank_simplify(inputs, output, size_dict)
    if len(inputs) > 1:
        path += contractor.find_path(inputs, output, size_dict, thorough)
    sizes = {leg: 2 for leg in labels}
    contraction = compile_path([leaf.legs for leaf in network.leaves], path, sizes, max_ndim,
                               network.output)
    moves = permutation_moves(contraction.result_legs, network.output, sizes, max_ndim)
    return Plan(network, contraction, tuple(moves), output_shape)


def get_plan(key: tuple, make_network: Callable[[], Network], max_ndim: int,
             output_shape: tuple[int, ...], thorough: bool = False) -> Plan:
    """The cached plan for ``key`` (structure, request, contractor, limit), building it if new.

    ``thorough``: search longer for a cheaper path (for plans compiled into reused programs)."""
    full_key = key + (get_contractor().cache_key, max_ndim, output_shape, thorough)
    return _CACHE.get(full_key, lambda: _build_plan(make_network(), max_ndim, output_shape, thorough))


def run_plan(plan: Plan, K: Any, tensors: list[Any]) -> Any:
    """Contract bound tensors along the plan and shape the result."""
    result = plan.contraction.run(K, tensors)
    return K.reshape(permute(K, result, plan.output_moves), plan.output_shape)
