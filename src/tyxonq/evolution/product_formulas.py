"""Product formulas: ``exp(-i H t)`` for ``H = sum_j c_j P_j`` as circuits of Pauli rotations.

* :func:`trotter`: Lie-Trotter (order 1) and Suzuki's symmetric formulas (orders 2, 4, 6, ...):
  ``steps`` repetitions of ``S_p(t / steps)``, each factor ``exp(-i c_j w dt P_j)`` one
  ``exp_pauli`` gate (adjacent factors of one term merged);
* :func:`qdrift`: Campbell's randomised formula, ``samples`` rotations by terms drawn with
  probability ``|c_j| / lambda``;
* :func:`trotter_error`: the error bound of each formula (below), in the spectral norm.

Both are differentiable in ``time`` and in the coefficients (given as a backend array with
``coefficients=``): the angles are backend arithmetic on them.

Error bounds (``r = steps``, ``H_j = c_j P_j``, ``Lambda = max_j |c_j|``, ``L`` terms):

* order 1: ``(t^2 / 2r) sum_{j<k} ||[H_j, H_k]||`` (Childs, Su, Tran, Wiebe, Zhu, PRX 11,
  011020 (2021), the commutator bound);
* order 2: ``(t^3 / 12 r^2) sum_j ||[[H_j, H_>j], H_>j]|| + (t^3 / 24 r^2) sum_j ||[[H_j, H_>j],
  H_j]||`` with ``H_>j = sum_{k>j} H_k`` (same reference);
* order ``2k >= 4``: ``(2 L 5^(k-1) Lambda t)^(2k+1) / (3 r^(2k)) exp(2 L 5^(k-1) Lambda t / r)``
  (Childs, Maslov, Nam, Ross, Su, PNAS 115, 9456 (2018));
* QDrift: ``2 lambda^2 t^2 / N`` for the averaged channel, ``lambda = sum_j |c_j|``, ``N``
  samples, in the diamond norm (Campbell, PRL 123, 070503 (2019)).

Commutator norms are bounded by the sum of the absolute coefficients of the commutator's Pauli
expansion (exact for a single Pauli string).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..circuit import Circuit
from ..numerics import get_backend
from ..numerics.arguments import checked_count, random_generator
from ..numerics.host import host_values
from ..operators.pauli import PauliSum

__all__ = ["trotter", "qdrift", "trotter_error", "qdrift_error", "suzuki_factors"]

ORDERINGS = ("given", "commuting")


def suzuki_factors(count: int, order: int) -> list[tuple[int, float]]:
    """One step of the order-``order`` product formula over ``count`` pieces as ``(piece,
    weight)`` factors, applied in list order: ``exp(-i w dt H_piece)`` each.

    Examples
    --------
    >>> suzuki_factors(3, 1)
    [(0, 1.0), (1, 1.0), (2, 1.0)]
    >>> suzuki_factors(3, 2)
    [(0, 0.5), (1, 0.5), (2, 1.0), (1, 0.5), (0, 0.5)]
    >>> round(sum(w for _, w in suzuki_factors(2, 4)), 12), len(suzuki_factors(2, 4))
    (2.0, 11)
    """
    count = checked_count(count, "count")
    _check_order(order)
    if order == 1:
        return [(j, 1.0) for j in range(count)]
    if order == 2:
        half = [(j, 0.5) for j in range(count - 1)]
        return _merged(half + [(count - 1, 1.0)] + half[::-1])
    p = 1.0 / (4.0 - 4.0 ** (1.0 / (order - 1)))
    lower = suzuki_factors(count, order - 2)
    scaled = [[(j, w * s) for j, w in lower] for s in (p, p, 1 - 4 * p, p, p)]
    return _merged([factor for part in scaled for factor in part])


def _merged(factors: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Adjacent factors of one piece joined (their exponentials commute)."""
    merged: list[tuple[int, float]] = []
    for piece, weight in factors:
        if merged and merged[-1][0] == piece:
            merged[-1] = (piece, merged[-1][1] + weight)
        else:
            merged.append((piece, weight))
    return merged


def trotter(hamiltonian: PauliSum, time: Any, steps: int = 1, order: int = 1, *,
            ordering: str = "given", coefficients: Any = None, circuit: Any = None) -> Any:
    """``exp(-i H time)`` by a product formula of ``steps`` steps, as ``exp_pauli`` gates.

    Parameters
    ----------
    hamiltonian : PauliSum
        ``H = sum_j c_j P_j`` with real coefficients.
    time : float or real backend scalar
        The evolution time (differentiable).
    steps : int
        Repetitions ``r`` of the one-step formula at ``dt = time / r``.
    order : int
        1 (Lie-Trotter) or an even order (2: Strang, 4, 6, ...: Suzuki's recursion).
    ordering : {"given", "commuting"}
        The order of the terms in a step: the sum's own, or grouped greedily into sets of
        mutually commuting terms (each set one piece of the formula: only commutators between
        sets contribute to the error).
    coefficients : backend array, optional
        The ``c_j`` (in the order of ``list(hamiltonian)``) instead of the sum's own, so
        gradients reach them.
    circuit : optional
        Append to this circuit (any simulator) instead of a new ``tq.Circuit``.

    Returns
    -------
    The circuit (the one given, or a new ``tq.Circuit``).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> h = tq.hamiltonians.tfim(3)
    >>> c = tq.evolution.trotter(h, 0.5, steps=20, order=2)
    >>> exact = tq.evolve(h, tq.Circuit(3), [0.5], method="expm")[0]
    >>> bool(abs(np.vdot(exact, c.state())) > 1 - 1e-6)
    True
    """
    strings, values = _terms(hamiltonian, coefficients, "trotter")
    steps = checked_count(steps, "steps")
    _check_time(time)
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering={ordering!r} must be one of {ORDERINGS}")
    _check_order(order)
    pieces = _commuting_sets(strings) if ordering == "commuting" else [[j] for j in range(len(strings))]
    one_step = suzuki_factors(len(pieces), order) if pieces else []  # H = 0: no gate
    factors = _merged([f for _ in range(steps) for f in one_step])
    circuit = Circuit(hamiltonian.n_qubits) if circuit is None else circuit
    _check_circuit(circuit, hamiltonian)
    dt = time / steps
    for piece, weight in factors:
        for j in pieces[piece]:
            circuit.exp_pauli(strings[j], None, (2 * weight) * dt * values[j])
    return circuit


def qdrift(hamiltonian: PauliSum, time: Any, samples: int, seed: Any = None, *,
           coefficients: Any = None, circuit: Any = None) -> Any:
    """``exp(-i H time)`` by QDrift: ``samples`` rotations ``exp(-i lambda (time / N) sign(c_j)
    P_j)``, term ``j`` drawn with probability ``|c_j| / lambda``, ``lambda = sum_j |c_j|``.

    The circuit is one random draw; the average over draws approaches the exact evolution as
    :func:`qdrift_error`. ``seed`` seeds the draw (an int or a ``numpy.random.Generator``);
    ``coefficients`` and ``circuit`` as for :func:`trotter` (gradients reach the coefficients
    through ``lambda``; the draw itself is not differentiated).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.evolution.qdrift(tq.hamiltonians.tfim(3), 0.4, samples=50, seed=1)
    >>> len(c.operations)
    50
    """
    strings, values = _terms(hamiltonian, coefficients, "qdrift")
    samples = checked_count(samples, "samples")
    _check_time(time)
    K = get_backend()
    host = np.abs(np.asarray([_host(K, v) for v in values]))
    if host.sum() == 0:
        raise ValueError("qdrift needs a Hamiltonian with a nonzero coefficient")
    drawn = random_generator(seed).choice(len(strings), size=samples, p=host / host.sum())
    scale = sum(abs(v) for v in values) if coefficients is None else K.sum(K.abs(values))
    circuit = Circuit(hamiltonian.n_qubits) if circuit is None else circuit
    _check_circuit(circuit, hamiltonian)
    for j in drawn:
        sign = 1.0 if _host(K, values[j]) >= 0 else -1.0
        circuit.exp_pauli(strings[j], None, (2 * sign / samples) * time * scale)
    return circuit


def trotter_error(hamiltonian: PauliSum, time: float, steps: int = 1, order: int = 1) -> float:
    """The bound on ``||exp(-i H t) - S_p(t / r)^r||`` of :func:`trotter` (``ordering="given"``),
    from the module's table.

    Examples
    --------
    >>> import tyxonq as tq
    >>> h = tq.hamiltonians.tfim(4)
    >>> trotter_error(h, 1.0, 10, 2) < trotter_error(h, 1.0, 10, 1)
    True
    """
    strings, values = _terms(hamiltonian, None, "trotter_error")
    steps = checked_count(steps, "steps")
    _check_order(order)
    t = abs(float(_check_time(time)))
    if not strings:  # H = 0: the formula is exact
        return 0.0
    terms = [PauliSum([(c, s)], hamiltonian.n_qubits) for c, s in zip(values, strings)]
    if order == 1:
        total = sum(_norm(_commutator(terms[j], terms[k]))
                    for j in range(len(terms)) for k in range(j + 1, len(terms)))
        return t ** 2 / (2 * steps) * total
    if order == 2:
        first = second = 0.0
        for j in range(len(terms) - 1):
            later = _sum(terms[j + 1:], hamiltonian.n_qubits)
            inner = _commutator(terms[j], later)
            first += _norm(_commutator(inner, later))
            second += _norm(_commutator(inner, terms[j]))
        return t ** 3 / (12 * steps ** 2) * first + t ** 3 / (24 * steps ** 2) * second
    k = order // 2
    scale = 2 * len(terms) * 5 ** (k - 1) * max(abs(v) for v in values) * t
    return scale ** (order + 1) / (3 * steps ** order) * math.exp(scale / steps)


def qdrift_error(hamiltonian: PauliSum, time: float, samples: int) -> float:
    """``2 lambda^2 t^2 / N``: the diamond-norm bound on the averaged QDrift channel's error.

    Examples
    --------
    >>> import tyxonq as tq
    >>> round(qdrift_error(tq.PauliSum([(0.5, "XI"), (-0.5, "ZZ")]), 1.0, 100), 12)
    0.02
    """
    _, values = _terms(hamiltonian, None, "qdrift_error")
    scale = sum(abs(v) for v in values)
    return 2 * scale ** 2 * float(_check_time(time)) ** 2 / checked_count(samples, "samples")


# -- helpers --------------------------------------------------------------------------------
def _terms(hamiltonian: Any, coefficients: Any, what: str) -> tuple[list[str], list[Any]]:
    if not isinstance(hamiltonian, PauliSum):
        raise TypeError(f"{what} needs a tq.PauliSum hamiltonian; got {type(hamiltonian).__name__}")
    if not hamiltonian.is_hermitian():
        raise ValueError(f"{what} needs a Hermitian hamiltonian (real coefficients)")
    strings = [s for _, s in hamiltonian]
    if coefficients is None:
        return strings, [float(np.real(c)) for c, _ in hamiltonian]
    K = get_backend()
    shape = tuple(K.shape(coefficients)) if K.is_array(coefficients) else (len(coefficients),)
    if shape != (len(strings),):
        raise ValueError(f"coefficients has shape {shape}; the hamiltonian has {len(strings)} terms")
    return strings, [coefficients[j] for j in range(len(strings))]


def _host(K: Any, value: Any) -> float:
    return float(value) if isinstance(value, numbers.Number) else float(np.real(host_values(K, value)))


def _check_time(time: Any) -> Any:
    """``time`` unless it is plainly no real number (a string, a bool) or not finite; backend
    scalars (which carry gradients) pass as they are."""
    if isinstance(time, (str, bytes, bool, np.bool_)) or isinstance(time, numbers.Complex) and \
            not isinstance(time, numbers.Real):
        raise TypeError(f"time={time!r} must be a real number (or a real backend scalar)")
    if isinstance(time, numbers.Real) and not math.isfinite(time):
        raise ValueError(f"time={time!r} must be finite")
    return time


def _check_order(order: Any) -> None:
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or not (
            order == 1 or (order >= 2 and order % 2 == 0)):
        raise ValueError(f"order={order!r} must be 1 or an even int (2, 4, 6, ...)")


def _check_circuit(circuit: Any, hamiltonian: PauliSum) -> None:
    if circuit.num_qubits != hamiltonian.n_qubits:
        raise ValueError(f"circuit has {circuit.num_qubits} qubits; the hamiltonian acts on "
                         f"{hamiltonian.n_qubits}")


def _commute(a: str, b: str) -> bool:
    return sum(x != "I" and y != "I" and x != y for x, y in zip(a, b)) % 2 == 0


def _commuting_sets(strings: list[str]) -> list[list[int]]:
    """Greedy partition into sets of mutually commuting strings, in first-appearance order."""
    sets: list[list[int]] = []
    for j, string in enumerate(strings):
        for group in sets:
            if all(_commute(string, strings[k]) for k in group):
                group.append(j)
                break
        else:
            sets.append([j])
    return sets


def _commutator(a: PauliSum, b: PauliSum) -> PauliSum:
    return (a @ b - b @ a).simplify()


def _sum(terms: list[PauliSum], n: int) -> PauliSum:
    return PauliSum([(c, s) for term in terms for c, s in term], n)


def _norm(operator: PauliSum) -> float:
    return float(sum(abs(c) for c, _ in operator))
