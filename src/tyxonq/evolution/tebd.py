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

import numbers
from typing import Any, Callable, Iterator

import numpy as np

from ..circuit import MPSCircuit
from ..numerics.progress import progress
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum, pauli_matrix
from .inputs import (
    checked_cutoff,
    checked_optional_count,
    checked_step,
    checked_times,
    coefficient_count,
    step_counts,
)
from .outputs import Recorder
from .product_formulas import suzuki_factors

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
    """The TEBD path of :func:`tyxonq.evolve` (see there). Every argument is checked before the
    first gate: ``dt`` finite and positive (steps of at most ``dt``, at least one per output
    interval, at most :data:`~tyxonq.evolution.inputs.MAX_STEPS` in all), ``order`` 1, 2 or 4,
    ``max_bond`` a positive int, ``cutoff`` in ``[0, 1)``; an empty Hamiltonian (``H = 0``)
    leaves the state as it is."""
    _check_operands(hamiltonian, initial)
    dt = checked_step(dt, "the TEBD step (the error falls as dt^order)")
    order = _checked_order(order)
    max_bond, cutoff = checked_optional_count(max_bond, "max_bond"), checked_cutoff(cutoff)
    host, _ = checked_times(K, times, "method='tebd' needs times that can be read (not traced inside jit)")
    counts = step_counts(host, dt)
    if coefficients is not None:
        coefficient_count(K, coefficients, len(hamiltonian))
    state = initial.simulated_state("evolve").copy()
    state.truncation.max_bond = max_bond if max_bond is not None else state.truncation.max_bond
    state.truncation.cutoff = cutoff if cutoff is not None else state.truncation.cutoff
    splitting = _Splitting(K, hamiltonian, coefficients, -1.0 if imaginary else -1j, order)
    recorder = Recorder(K, observables, callback)
    now = 0.0
    with progress(int(sum(counts)), "TEBD", unit="step") as report:
        for target, count in zip(host, counts):
            if count:
                splitting.advance(state, count, (target - now) / count, imaginary)
            now = max(now, target)
            _record(recorder, state)
            if report.shown:  # the status reads the bonds and truncations: only for a bar
                report.advance(int(count), t=now, bond=max(state.bond_dimensions(), default=1),
                               discarded=_discarded(K, state))
    return recorder.result()


def _discarded(K: ArrayBackend, state: Any) -> float:
    """The total discarded weight of ``state``'s truncations so far, read on the host."""
    return float(sum(float(np.real(K.to_numpy(K.detach(K.asarray(weight)))))
                     for weight in state.truncation.discarded))


def _record(recorder: Recorder, state: Any) -> None:
    """Observables and callbacks read the state through a view (no copy); without them a snapshot
    is kept."""
    view = MPSCircuit.from_state(state)
    recorder.record(view.expectation, lambda: view, lambda: MPSCircuit.from_state(state.copy()))


def _check_operands(hamiltonian: Any, initial: Any) -> None:
    if not isinstance(hamiltonian, PauliSum):
        raise TypeError("method='tebd' needs a tq.PauliSum hamiltonian (time-independent)")
    if not isinstance(initial, MPSCircuit):
        raise TypeError(f"method='tebd' evolves a tq.MPSCircuit; got {type(initial).__name__}")
    if initial.num_qubits != hamiltonian.n_qubits:
        raise ValueError(f"initial has {initial.num_qubits} qubits; the hamiltonian acts on "
                         f"{hamiltonian.n_qubits}")
    if not hamiltonian.is_hermitian():
        raise ValueError("method='tebd' needs a Hermitian hamiltonian (real coefficients)")


def _checked_order(order: Any) -> int:
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, numbers.Integral) or \
            order not in (1, 2, 4):
        raise ValueError(f"order={order!r} must be 1, 2 or 4 for method='tebd'")
    return int(order)


class _Splitting:
    """The layers of local gates of ``H`` and their exponentials (cached by layer member and
    step), applied to a state by Suzuki's formula."""

    def __init__(self, K: ArrayBackend, hamiltonian: PauliSum, coefficients: Any, scale: complex,
                 order: int) -> None:
        values = ([c for c, _ in hamiltonian] if coefficients is None
                  else [coefficients[j] for j in range(len(hamiltonian))])
        gathered = local_terms(hamiltonian)
        self.K, self.scale, self.order = K, scale, order
        self.sites = list(gathered)
        self.local = [_local_matrix(K, gathered[s], values) for s in self.sites]
        self.layers = layers(self.sites)
        self.gates: dict[tuple[int, float], Any] = {}

    def advance(self, state: Any, count: int, h: float, imaginary: bool) -> None:
        """``count`` steps of length ``h`` on ``state`` (in place); none without layers (``H = 0``)."""
        for layer, weight in _step_factors(count, len(self.layers), self.order):
            members = self.layers[layer]
            leftward = state.centre > (min(self.sites[members[0]]) + max(self.sites[members[-1]])) / 2
            for g in (members[::-1] if leftward else members):  # sweep from where the centre is
                state.apply(self._gate(g, weight, h), self.sites[g], centre_left=leftward)
            if imaginary:
                state.normalise()

    def _gate(self, g: int, weight: float, h: float) -> Any:
        """``exp(s w h h_g)``, made once per ``(g, w h)``."""
        key = (g, round(weight * h, 15))
        if key not in self.gates:
            self.gates[key] = self.K.expm((self.scale * weight * h) * self.local[g])
        return self.gates[key]


def _step_factors(count: int, pieces: int, order: int) -> Iterator[tuple[int, float]]:
    """The factors of ``count`` steps of Suzuki's formula over ``pieces`` layers, adjacent factors
    of one layer merged across steps, one at a time (no list of them all); nothing without pieces.

    Examples
    --------
    >>> list(_step_factors(2, 2, 2))
    [(0, 0.5), (1, 1.0), (0, 1.0), (1, 1.0), (0, 0.5)]
    """
    if not pieces:
        return
    one = suzuki_factors(pieces, order)
    pending = None
    for _ in range(count):
        for piece, weight in one:
            if pending is not None and pending[0] == piece:
                pending = (piece, pending[1] + weight)
            else:
                if pending is not None:
                    yield pending
                pending = (piece, weight)
    if pending is not None:
        yield pending


def _local_matrix(K: ArrayBackend, terms: list[tuple[int, str]], values: list[Any]) -> Any:
    """``sum_t c_t P_t`` on a group's sites, ``2^k x 2^k`` (backend arithmetic on the ``c_t``)."""
    total = None
    for index, letters in terms:
        term = values[index] * K.asarray(pauli_matrix(letters), K.dtype)
        total = term if total is None else total + term
    return total

