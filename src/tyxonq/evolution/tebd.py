"""TEBD: ``exp(-i H t)`` on a matrix-product state by a Trotter splitting into layers of local
gates.

The terms of ``H`` are gathered into local Hamiltonians ``h_g`` on the sites they touch (a
one-site term joins a bond next to it); gates whose site ranges do not overlap form a layer
(even and odd bonds for a nearest-neighbour chain; longer-range gates are applied through swaps
by the state). Each layer is swept from the end where the orthogonality centre is, leaving it at
the other end, so moving the centre costs one QR per gate, not a crossing of the chain per
layer. A step of length ``h`` is Suzuki's formula of order 2 or 4 over the layers
(:func:`~tyxonq.evolution.product_formulas.suzuki_factors`), each factor ``exp(-i w h h_g)`` a
dense ``2^k x 2^k`` gate split by SVDs with the state's truncation (``max_bond``, ``cutoff``);
the discarded weight accumulates as for any :class:`~tyxonq.MPSCircuit`. Observables are read
from the state at each output time without copying it.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from ..circuit import MPSCircuit
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum, pauli_matrix
from .outputs import collected
from .product_formulas import _merged, suzuki_factors

__all__ = ["tebd_propagate", "local_terms", "layers"]



def local_terms(hamiltonian: PauliSum) -> dict[tuple[int, ...], list[tuple[int, str]]]:
    """``{sites: [(term index, letters on those sites)]}``: each term on the sites it touches,
    one-site terms on a bond next to them (the bond to the right, the last site's to the left).

    Examples
    --------
    >>> import tyxonq as tq
    >>> sorted(local_terms(tq.hamiltonians.tfim(3)).items())
    [((0, 1), [(0, 'ZZ'), (2, 'XI')]), ((1, 2), [(1, 'ZZ'), (3, 'XI'), (4, 'IX')])]
    """
    n = hamiltonian.n_qubits
    gathered: dict[tuple[int, ...], list[tuple[int, str]]] = {}
    for index, (_, string) in enumerate(hamiltonian):
        sites = tuple(q for q, letter in enumerate(string) if letter != "I") or (0,)
        if len(sites) == 1 and n > 1:
            q = sites[0]
            sites = (q, q + 1) if q + 1 < n else (q - 1, q)
        gathered.setdefault(sites, []).append((index, "".join(string[q] for q in sites)))
    return gathered


def layers(groups: list[tuple[int, ...]]) -> list[list[int]]:
    """Indices of ``groups`` (site tuples) in layers whose site ranges do not overlap.

    Examples
    --------
    >>> layers([(0, 1), (1, 2), (2, 3), (3, 4)])
    [[0, 2], [1, 3]]
    """
    found: list[tuple[list[int], list[tuple[int, int]]]] = []
    for index in sorted(range(len(groups)), key=lambda i: (min(groups[i]), max(groups[i]))):
        span = (min(groups[index]), max(groups[index]))
        for members, spans in found:
            if all(span[1] < a or span[0] > b for a, b in spans):
                members.append(index)
                spans.append(span)
                break
        else:
            found.append(([index], [span]))
    return [sorted(members, key=lambda i: min(groups[i])) for members, _ in found]  # left to right


def tebd_propagate(K: ArrayBackend, hamiltonian: Any, initial: Any, times: Any, *, observables: Any,
                   callback: Callable[[Any], Any] | None, imaginary: bool, dt: Any, order: int,
                   max_bond: int | None, cutoff: float | None, coefficients: Any) -> Any:
    """The TEBD path of :func:`tyxonq.evolve` (see there)."""
    if not isinstance(hamiltonian, PauliSum):
        raise TypeError("method='tebd' needs a tq.PauliSum hamiltonian (time-independent)")
    if not isinstance(initial, MPSCircuit):
        raise TypeError(f"method='tebd' evolves a tq.MPSCircuit; got {type(initial).__name__}")
    if initial.num_qubits != hamiltonian.n_qubits:
        raise ValueError(f"initial has {initial.num_qubits} qubits; the hamiltonian acts on "
                         f"{hamiltonian.n_qubits}")
    if not hamiltonian.is_hermitian():
        raise ValueError("method='tebd' needs a Hermitian hamiltonian (real coefficients)")
    if isinstance(dt, bool) or not isinstance(dt, numbers.Real) or not dt > 0:
        raise ValueError(f"dt={dt!r} must be a positive number: the TEBD step (the error falls as dt^order)")
    if order not in (1, 2, 4):
        raise ValueError(f"order={order!r} must be 1, 2 or 4 for method='tebd'")
    times = [float(t) for t in np.atleast_1d(np.asarray(times, dtype=float))]
    if not times or times[0] < 0 or any(b < a for a, b in zip(times, times[1:])):
        raise ValueError(f"times must be non-negative and non-decreasing; got {times}")
    state = initial.simulated_state("evolve").copy()
    if max_bond is not None or cutoff is not None:
        state.truncation.max_bond = max_bond if max_bond is not None else state.truncation.max_bond
        state.truncation.cutoff = float(cutoff) if cutoff is not None else state.truncation.cutoff
    values = ([c for c, _ in hamiltonian] if coefficients is None
              else [coefficients[j] for j in range(len(hamiltonian))])
    gathered = local_terms(hamiltonian)
    sites = list(gathered)
    local = [_local_matrix(K, gathered[s], values) for s in sites]
    grouped = layers(sites)
    scale = -1.0 if imaginary else -1j
    results: list[Any] = []
    now = 0.0
    gates: dict[tuple[int, float], Any] = {}
    for target in times:
        count = math.ceil((target - now) / dt - 1e-12) if target > now else 0
        if count:
            h = (target - now) / count
            factors = _merged([f for _ in range(count) for f in suzuki_factors(len(grouped), order)])
            for layer, weight in factors:
                members = grouped[layer]
                leftward = state.centre > (min(sites[members[0]]) + max(sites[members[-1]])) / 2
                for g in (members[::-1] if leftward else members):  # sweep from where the centre is
                    key = (g, round(weight * h, 15))
                    if key not in gates:
                        gates[key] = K.expm((scale * weight * h) * local[g])
                    state.apply(gates[key], sites[g], centre_left=leftward)
                if imaginary:
                    state.normalise()
        now = max(now, target)
        view = MPSCircuit.from_state(state)
        if callback is not None:
            results.append(callback(view))
        elif observables is not None:
            results.append(K.stack([K.real(view.expectation(o)) for o in observables]))
        else:
            results.append(MPSCircuit.from_state(state.copy()))
    return collected(K, results)


def _local_matrix(K: ArrayBackend, terms: list[tuple[int, str]], values: list[Any]) -> Any:
    """``sum_t c_t P_t`` on a group's sites, ``2^k x 2^k`` (backend arithmetic on the ``c_t``)."""
    total = None
    for index, letters in terms:
        term = values[index] * K.asarray(pauli_matrix(letters), K.dtype)
        total = term if total is None else total + term
    return total

