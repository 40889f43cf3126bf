"""Choosing how contraction paths are found: ``set_contractor``.

A path finder follows opt_einsum's ``PathOptimizer`` protocol:
``finder(inputs, output, size_dict, memory_limit) -> path`` with ``inputs`` a list of sets of index
symbols, ``output`` a set, and ``path`` in opt_einsum's linear format.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import opt_einsum

from ..._context import ContextualSetting
from .paths import circuit_path, cotengra_path

__all__ = ["Contractor", "set_contractor", "get_contractor", "use_contractor", "CONTRACTOR_NAMES"]

CONTRACTOR_NAMES = ("circuit", "greedy", "auto", "optimal", "cotengra")


@dataclass(frozen=True)
class Contractor:
    """A path finder and its memory limit (the largest intermediate, in elements); optionally a
    ``thorough_finder`` (same signature) for plans that are compiled into reused programs."""

    name: str
    finder: Callable[..., Any]
    memory_limit: int | None = None
    thorough_finder: Callable[..., Any] | None = None

    @property
    def cache_key(self) -> tuple:
        finder_key = self.name if self.name in CONTRACTOR_NAMES else id(self.finder)
        return (finder_key, self.memory_limit)

    def find_path(self, inputs: list[set[str]], output: set[str], size_dict: dict[str, int],
                  thorough: bool = False) -> list:
        """A path for the network; ``thorough`` uses the thorough finder where there is one (the
        ``circuit`` finder's searches hyper-optimised paths from a lower cost, with more trials)."""
        finder = self.thorough_finder if thorough and self.thorough_finder else self.finder
        return list(finder(inputs, output, size_dict, self.memory_limit))


def _cotengra_finder() -> Callable[..., Any]:
    try:
        importlib.import_module("cotengra")
    except ImportError as error:
        raise ImportError(
            "set_contractor('cotengra') needs cotengra: pip install 'tyxonq[contract]' "
            f"(or pip install cotengra). The import failed: {error}"
        ) from error
    return cotengra_path


def _make_contractor(method: str | Callable[..., Any], memory_limit: int | None) -> Contractor:
    if memory_limit is not None and (not isinstance(memory_limit, int) or memory_limit <= 0):
        raise ValueError(f"memory_limit={memory_limit!r} must be a positive int (elements) or None")
    if callable(method):
        return Contractor(getattr(method, "__name__", "custom"), method, memory_limit)
    if method == "circuit":
        return Contractor(method, circuit_path, memory_limit, functools.partial(circuit_path, thorough=True))
    if method in ("greedy", "auto", "optimal"):
        return Contractor(method, opt_einsum.paths.get_path_fn(method), memory_limit)
    if method == "cotengra":
        return Contractor(method, _cotengra_finder(), memory_limit)
    raise ValueError(
        f"unknown contractor {method!r}; expected one of {CONTRACTOR_NAMES} or a callable "
        "finder(inputs, output, size_dict, memory_limit) -> path"
    )


ACTIVE_CONTRACTOR: ContextualSetting[Contractor] = ContextualSetting(
    "tyxonq_contractor", fallback=lambda: _DEFAULT
)
_DEFAULT = _make_contractor("circuit", None)


def set_contractor(method: str | Callable[..., Any] = "circuit",
                   memory_limit: int | None = None) -> Contractor:
    """Select the path finder used for every contraction from now on.

    Parameters
    ----------
    method : {"circuit", "greedy", "auto", "optimal", "cotengra"} or callable
        ``"circuit"`` (default): the cheapest of a greedy path, a growing-tensor
        (state-vector-like) path and min-fill elimination, by flops + 64 x writes, searched further
        when the contraction is worth it (:func:`~tyxonq.circuit.contraction.paths.circuit_path`);
        opt_einsum's greedy, auto or optimal
        path finders; cotengra's hyper-optimiser (``pip install 'tyxonq[contract]'``); or a
        callable with opt_einsum's path-finder signature.
    memory_limit : int, optional
        Largest intermediate tensor allowed, in elements.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.set_contractor("auto").name
    'auto'
    >>> tq.set_contractor("circuit").name
    'circuit'
    """
    return ACTIVE_CONTRACTOR.set(_make_contractor(method, memory_limit))


def get_contractor() -> Contractor:
    """The active :class:`Contractor`."""
    return ACTIVE_CONTRACTOR.get()


@contextlib.contextmanager
def use_contractor(method: str | Callable[..., Any] = "circuit",
                   memory_limit: int | None = None) -> Iterator[Contractor]:
    """Context manager: ``method`` finds paths inside the block only (thread- and task-local).

    Examples
    --------
    >>> import tyxonq as tq
    >>> with tq.use_contractor("optimal") as contractor:
    ...     contractor.name
    'optimal'
    """
    with ACTIVE_CONTRACTOR.override(_make_contractor(method, memory_limit)) as contractor:
        yield contractor
