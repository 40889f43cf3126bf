"""Standard Hamiltonians as :class:`~tyxonq.operators.PauliSum`.

Examples
--------
>>> from tyxonq import hamiltonians
>>> len(hamiltonians.tfim(4))
7
"""

from __future__ import annotations

from typing import Any

from ..numerics.arguments import checked_flag
from .pauli import PauliSum

__all__ = ["tfim", "heisenberg", "maxcut"]


def _string(n: int, letters: dict[int, str]) -> str:
    return "".join(letters.get(q, "I") for q in range(n))


def _bonds(n: int, periodic: bool) -> list[tuple[int, int]]:
    periodic = checked_flag(periodic, "periodic")
    bonds = [(q, q + 1) for q in range(n - 1)]
    if periodic and n > 2:
        bonds.append((n - 1, 0))
    return bonds


def tfim(n: int, j: float = 1.0, h: float = 1.0, periodic: bool = False) -> PauliSum:
    """Transverse-field Ising chain ``H = -j sum Z_i Z_{i+1} - h sum X_i``.

    Examples
    --------
    >>> round(tfim(2).ground_energy(), 6)
    -2.236068
    """
    terms = [(-j, _string(n, {a: "Z", b: "Z"})) for a, b in _bonds(n, periodic)]
    terms += [(-h, _string(n, {q: "X"})) for q in range(n)]
    return PauliSum(terms, n)


def heisenberg(n: int, jx: float = 1.0, jy: float = 1.0, jz: float = 1.0,
               periodic: bool = False) -> PauliSum:
    """Heisenberg chain ``H = sum jx X_i X_{i+1} + jy Y_i Y_{i+1} + jz Z_i Z_{i+1}``.

    Examples
    --------
    >>> round(heisenberg(2).ground_energy(), 6)  # the singlet
    -3.0
    """
    terms = []
    for a, b in _bonds(n, periodic):
        terms += [(jx, _string(n, {a: "X", b: "X"})), (jy, _string(n, {a: "Y", b: "Y"})),
                  (jz, _string(n, {a: "Z", b: "Z"}))]
    return PauliSum(terms, n)


def maxcut(graph: Any) -> PauliSum:
    """MaxCut of a networkx graph: ``H = sum_edges w/2 Z_i Z_j`` (edge attribute ``weight``, 1).

    Minimising ``H`` maximises the cut: ``cut = sum w/2 - <H>``. Nodes must be ``0..n-1``.

    Examples
    --------
    >>> import networkx as nx
    >>> round(maxcut(nx.cycle_graph(4)).ground_energy(), 6)  # the cut of a 4-cycle is 4
    -2.0
    """
    nodes = set(graph.nodes)
    if nodes != set(range(len(nodes))):
        raise ValueError("maxcut needs graph nodes labelled 0..n-1; relabel with "
                         "networkx.convert_node_labels_to_integers")
    n = len(nodes)
    terms = [(graph.edges[a, b].get("weight", 1.0) / 2, _string(n, {a: "Z", b: "Z"}))
             for a, b in graph.edges]
    return PauliSum(terms, n)
