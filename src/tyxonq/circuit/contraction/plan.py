"""Contraction plans, made once per network structure and cached.

A :class:`Plan` is everything about a contraction that does not depend on parameter values: the
network's tensors and legs in canonical order (:mod:`~tyxonq.circuit.contraction.canonical`), the
path (rank simplification, then the active contractor's search), the compiled pairwise steps and
the final reshape. Networks that are equal up to relabelling share one plan. A
:class:`NetworkPlan` ties one circuit structure's network to its shared plan: which leaf takes
which canonical position, and how its legs are transposed. Re-evaluating a circuit with new
angles, or another term of the same shape, performs no path search.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import opt_einsum

from ...numerics.arguments import checked_flag
from ...numerics.cache_registry import register_cache
from ...numerics.collector import collector_paused
from ...numerics.moves import Move, permutation_moves, permute
from ...numerics.protocol import ArrayBackend
from .canonical import network_form
from .contractor import get_contractor
from .executor import CompiledContraction, compile_path
from .network import Network
from .plan_store import load_path, report_wrong_path, store_path
from .simplify import rank_simplify

__all__ = ["Plan", "NetworkPlan", "get_plan", "get_plans", "plan_cache_info", "clear_plan_cache",
           "set_plan_cache", "PlanCacheInfo", "structure_token"]

Legs = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Plan:
    """A contraction plan for one canonical network structure.

    ``path`` is in opt_einsum's linear format over the canonical tensors (its first
    ``simplification_steps`` steps are rank simplification); ``planning_seconds`` is what building
    it took (simplification and path search); ``finder`` names the contractor.
    """

    legs: tuple[Legs, ...]
    output: Legs
    path: tuple[tuple[int, ...], ...]
    contraction: CompiledContraction
    output_moves: tuple[Move, ...]
    max_ndim: int
    simplification_steps: int
    planning_seconds: float
    finder: str
    loaded: bool = False  # the path came from the persistent cache
    _batched: dict = field(default_factory=dict, repr=False)
    groups: dict = field(default_factory=dict, repr=False)  # per group of networks: how to bind it

    @property
    def largest_tensor_size(self) -> int:
        return self.contraction.largest_size

    def batched(self, size: int) -> tuple[CompiledContraction, tuple[Move, ...]]:
        """The contraction of ``size`` networks at once: one more leg, of dimension ``size``,
        leading every tensor and the result (a hyperindex: every step is a batched matmul)."""
        if size not in self._batched:
            batch = max((leg for legs in self.legs for leg in legs), default=-1) + 1
            batch = max(batch, max(self.output, default=-1) + 1)
            sizes = _sizes(self.legs, self.output) | {batch: size}
            contraction = self.contraction.batched(batch, size, self.max_ndim) or compile_path(
                [(batch,) + legs for legs in self.legs], self.path, sizes, self.max_ndim,
                (batch,) + self.output)
            moves = permutation_moves(contraction.result_legs, (batch,) + self.output, sizes, self.max_ndim)
            self._batched[size] = (contraction, tuple(moves))
        return self._batched[size]


@dataclass(frozen=True, eq=False)
class NetworkPlan:
    """One network and its shared :class:`Plan`: canonical position ``j`` holds leaf
    ``order[j]``, whose legs ``leaf_moves[j]`` transpose into canonical order. ``slicing``
    (a :class:`~tyxonq.circuit.contraction.slicing.Slicing`): the network is contracted slice by
    slice along that plan instead (evaluation expands a request into its slices)."""

    network: Network
    plan: Plan
    order: tuple[int, ...]
    leaf_moves: tuple[tuple[Move, ...], ...]
    output_shape: tuple[int, ...]
    key: tuple = ()  # what get_plan cached it under: unique to this network
    slicing: Any = None
    slicings: dict = field(default_factory=dict, repr=False)  # target size -> Slicing or None

    @property
    def largest_tensor_size(self) -> int:
        return self.plan.largest_tensor_size

    def arrange(self, K: ArrayBackend, tensors: Sequence[Any]) -> list[Any]:
        """Bound leaf arrays (network order) in canonical order and leg layout."""
        return [permute(K, tensors[i], moves) if moves else tensors[i]
                for i, moves in zip(self.order, self.leaf_moves)]


@dataclass(frozen=True)
class PlanCacheInfo:
    """Statistics of the plan cache: ``hits`` and ``misses`` of networks looked up by circuit
    structure, ``path_searches`` plans built (a network equal to a planned one up to relabelling
    shares its plan and searches nothing), ``size`` networks cached, ``loaded`` plans whose path
    came from the persistent cache (:func:`tyxonq.set_persistent_cache`) instead of a search."""

    hits: int
    misses: int
    path_searches: int
    size: int
    maxsize: int
    enabled: bool
    loaded: int = 0


class _LRU:
    def __init__(self, maxsize: int) -> None:
        self.entries: OrderedDict[tuple, Any] = OrderedDict()
        self.maxsize = maxsize

    def get(self, key: tuple) -> Any:
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key: tuple, value: Any) -> None:
        self.entries[key] = value
        while len(self.entries) > self.maxsize:
            self.entries.popitem(last=False)


class _PlanCache:
    def __init__(self, maxsize: int = 1024) -> None:
        self._networks = _LRU(maxsize)
        self._plans = _LRU(maxsize)
        self._lists = _LRU(maxsize)
        self._lock = threading.Lock()
        self.enabled = True
        self.hits = self.misses = self.path_searches = self.loaded = 0

    @property
    def maxsize(self) -> int:
        return self._networks.maxsize

    @maxsize.setter
    def maxsize(self, value: int) -> None:
        self._networks.maxsize = self._plans.maxsize = self._lists.maxsize = value

    def get(self, key: tuple, build: Callable[[], NetworkPlan]) -> NetworkPlan:
        with self._lock:
            entry = self._networks.get(key) if self.enabled else None
            if entry is not None:
                self.hits += 1
                return entry
            self.misses += 1
        with collector_paused():
            entry = build()
        with self._lock:
            if self.enabled and self.maxsize > 0:
                self._networks.put(key, entry)
        return entry

    def shared(self, key: tuple, build: Callable[[], Plan]) -> Plan:
        with self._lock:
            plan = self._plans.get(key) if self.enabled else None
            if plan is not None:
                return plan
        plan = build()
        with self._lock:
            if plan.loaded:
                self.loaded += 1
            else:
                self.path_searches += 1
            if self.enabled and self.maxsize > 0:
                self._plans.put(key, plan)
        return plan

    def many(self, key: tuple, build: Callable[[], tuple]) -> tuple:
        """A tuple of network plans looked up together (each one a hit when found)."""
        with self._lock:
            entry = self._lists.get(key) if self.enabled else None
            if entry is not None:
                self.hits += len(entry)
                return entry
        with collector_paused():
            entry = build()
        with self._lock:
            if self.enabled and self.maxsize > 0:
                self._lists.put(key, entry)
        return entry

    def paths(self) -> list[tuple[tuple[int, ...], ...]]:
        with self._lock:
            return sorted(plan.path for plan in self._plans.entries.values())

    def info(self) -> PlanCacheInfo:
        return PlanCacheInfo(self.hits, self.misses, self.path_searches, len(self._networks.entries),
                             self.maxsize, self.enabled, self.loaded)

    def clear(self) -> None:
        with self._lock:
            self._networks.entries.clear()
            self._plans.entries.clear()
            self._lists.entries.clear()
            self.hits = self.misses = self.path_searches = self.loaded = 0


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


def plan_cache_paths() -> list[tuple[tuple[int, ...], ...]]:
    """The paths of every cached plan, sorted (to compare what two processes planned)."""
    return _CACHE.paths()


def clear_plan_cache() -> None:
    """Forget every cached plan and reset the statistics."""
    _CACHE.clear()


def set_plan_cache(maxsize: int | None = None, enabled: bool | None = None) -> PlanCacheInfo:
    """Bound the plan cache (``maxsize`` networks and as many plans, least recently used evicted)
    or turn it off."""
    if maxsize is not None:
        if not isinstance(maxsize, int) or maxsize < 0:
            raise ValueError(f"maxsize={maxsize!r} must be a non-negative int")
        _CACHE.maxsize = maxsize
    if enabled is not None:
        _CACHE.enabled = checked_flag(enabled, "enabled")
    if not _CACHE.enabled or _CACHE.maxsize == 0:
        _CACHE.clear()
    return _CACHE.info()


_TOKENS: OrderedDict[tuple, int] = OrderedDict()
_TOKENS_LOCK = threading.Lock()
_TOKENS_LIMIT = 4096


def structure_token(structure: tuple) -> int:
    """A small number standing for a (large) circuit structure in cache keys: the structure is
    hashed and compared once per call, not once per plan looked up with it.

    Examples
    --------
    >>> structure = (2, False, (("h", (0,), False),))
    >>> structure_token(structure) == structure_token((2, False, (("h", (0,), False),)))
    True
    """
    with _TOKENS_LOCK:
        token = _TOKENS.get(structure)
        if token is None:
            token = _TOKENS[structure] = next(_TOKEN_COUNTER)
            while len(_TOKENS) > _TOKENS_LIMIT:
                _TOKENS.popitem(last=False)
        else:
            _TOKENS.move_to_end(structure)
        return token


_TOKEN_COUNTER = itertools.count()


def _clear_structure_tokens() -> None:
    """Forget every structure's token (new ones are numbered on: a plan keyed by an old token is
    found no more)."""
    with _TOKENS_LOCK:
        _TOKENS.clear()


register_cache("plans", lambda: _CACHE.info().size, clear_plan_cache)
register_cache("structure tokens", lambda: len(_TOKENS), _clear_structure_tokens)


def _sizes(legs: Sequence[Legs], output: Legs) -> dict[int, int]:
    return {leg: 2 for term in legs for leg in term} | {leg: 2 for leg in output}


def _build_plan(key: tuple, legs: tuple[Legs, ...], output: Legs, max_ndim: int,
                thorough: bool) -> Plan:
    """The plan of a canonical network: its path from the persistent cache when kept there and
    found sound, else simplification and the contractor's search (then kept)."""
    start = time.perf_counter()
    sizes = _sizes(legs, output)
    loaded = _loaded_plan(key, legs, output, sizes, max_ndim)
    if loaded is not None:
        path, simplification_steps, finder, contraction = loaded
    else:
        contractor = get_contractor()
        symbol = {leg: opt_einsum.get_symbol(leg) for leg in sizes}
        inputs = [set(symbol[leg] for leg in term) for term in legs]
        symbols = set(symbol[leg] for leg in output)
        size_dict = {symbol[leg]: size for leg, size in sizes.items()}
        path = rank_simplify(inputs, symbols, size_dict)
        simplification_steps, finder = len(path), contractor.name
        if len(inputs) > 1:
            path += contractor.find_path(inputs, symbols, size_dict, thorough)
        contraction = compile_path(legs, path, sizes, max_ndim, output)
        store_path(key, path, simplification_steps, finder, contraction.largest_size)
    moves = permutation_moves(contraction.result_legs, output, sizes, max_ndim)
    return Plan(legs, output, tuple(tuple(step) for step in path), contraction, tuple(moves), max_ndim,
                simplification_steps, time.perf_counter() - start, finder, loaded is not None)


def _loaded_plan(key: tuple, legs: tuple[Legs, ...], output: Legs, sizes: dict[int, int],
                 max_ndim: int) -> tuple | None:
    """``(path, simplification steps, finder, contraction)`` from the persistent cache, when its
    entry passes :func:`load_path`'s checks and its path compiles to the largest tensor it recorded
    (a path that contracts this network differently is not the one searched for it)."""
    stored = load_path(key, len(legs))
    if stored is None:
        return None
    try:
        contraction = compile_path(legs, stored.path, sizes, max_ndim, output)
    except (ValueError, IndexError, KeyError, TypeError):
        contraction = None
    if contraction is None or contraction.largest_size != stored.largest_size or \
            set(contraction.result_legs) != set(output):
        report_wrong_path(key)
        return None
    return stored.path, stored.simplification_steps, stored.finder, contraction


def _network_plan(network: Network, max_ndim: int, output_shape: tuple[int, ...],
                  thorough: bool, network_key: tuple = ()) -> NetworkPlan:
    leaf_legs = [leaf.legs for leaf in network.leaves]
    form = network_form(network)
    legs, output = form.key
    key = (legs, output, get_contractor().cache_key, max_ndim, thorough)
    plan = _CACHE.shared(key, lambda: _build_plan(key, legs, output, max_ndim, thorough))
    leaf_moves = []
    for i, permutation in zip(form.order, form.permutations):
        if permutation is None:
            leaf_moves.append(())
            continue
        current = leaf_legs[i]
        target = tuple(current[p] for p in permutation)
        leaf_moves.append(tuple(permutation_moves(current, target, _sizes([current], ()), max_ndim)))
    return NetworkPlan(network, plan, form.order, tuple(leaf_moves), output_shape, network_key)


def get_plan(key: tuple, make_network: Callable[[], Network], max_ndim: int,
             output_shape: tuple[int, ...], thorough: bool = False) -> NetworkPlan:
    """The cached :class:`NetworkPlan` for ``key`` (structure and request), building it if new.

    ``thorough``: search longer for a cheaper path (for plans compiled into reused programs)."""
    full_key = key + (get_contractor().cache_key, max_ndim, output_shape, thorough)
    return _CACHE.get(full_key, lambda: _network_plan(make_network(), max_ndim, output_shape, thorough,
                                                      full_key))


def get_plans(key: tuple, build: Callable[[], tuple[NetworkPlan, ...]], max_ndim: int,
              thorough: bool = False) -> tuple[NetworkPlan, ...]:
    """The cached plans of many results of one structure (the terms of a Hamiltonian) under one
    key, so a repeated evaluation looks them up at once; ``build`` makes them by :func:`get_plan`."""
    return _CACHE.many(key + (get_contractor().cache_key, max_ndim, thorough), build)
