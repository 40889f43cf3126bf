"""Time-dependent Hamiltonians ``H(t) = sum_k f_k(t) P_k`` and their propagation by the
fourth-order commutator-free Magnus scheme CF4:2 (Alvermann and Fehske, J. Comput. Phys. 230,
5930 (2011)): per step ``h`` from ``t``, with ``H_1, H_2`` at the Gauss points
``t + (1/2 -+ sqrt(3)/6) h``,

    U(t + h, t) ≈ exp(-i h (a_1 H_1 + a_2 H_2)) exp(-i h (a_2 H_1 + a_1 H_2)),
    a_1 = (3 - 2 sqrt(3)) / 12,  a_2 = (3 + 2 sqrt(3)) / 12,

each exponential of a Pauli sum with the same strings applied by the chosen exact method. Its
error is ``O(h^4)`` over a fixed time; both factors are unitary, so the norm is kept.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterable

from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.pauli_action import PauliStructure
from .inputs import checked_step, step_counts

__all__ = ["TimeDependentHamiltonian", "magnus_propagate"]

_ROOT3 = math.sqrt(3.0)
NODES = (0.5 - _ROOT3 / 6, 0.5 + _ROOT3 / 6)
WEIGHTS = ((3 - 2 * _ROOT3) / 12, (3 + 2 * _ROOT3) / 12)


class TimeDependentHamiltonian:
    """``H(t) = sum_k f_k(t) P_k``.

    Parameters
    ----------
    terms : iterable of (coefficient, pauli string)
        Each coefficient a number or a function of the time returning a real number (or a real
        backend scalar, e.g. built from parameters that carry gradients).
    n_qubits : int, optional
        Defaults to the strings' length; needed without terms (``H = 0``, whose evolution is
        the identity).

    Examples
    --------
    >>> import numpy as np
    >>> drive = TimeDependentHamiltonian([(1.0, "ZZ"), (lambda t: np.cos(t), "XI")])
    >>> drive.at(0.0).terms
    {'ZZ': 1.0, 'XI': 1.0}
    """

    def __init__(self, terms: Iterable[tuple[Any, str]], n_qubits: int | None = None) -> None:
        terms = list(terms)
        for term in terms:
            if not (isinstance(term, (tuple, list)) and len(term) == 2):
                raise TypeError("each term must be a (coefficient or function, pauli string) pair; "
                                f"got {term!r}")
            if not callable(term[0]) and (isinstance(term[0], bool) or not isinstance(term[0], numbers.Real)):
                raise TypeError(f"coefficient {term[0]!r} must be a real number or a function of the time")
        self.structure = PauliStructure([s for _, s in terms]) if terms else None
        if self.structure is None:
            self._n_qubits = _checked_width(n_qubits)
        elif n_qubits is not None and n_qubits != self.structure.n_qubits:
            raise ValueError(f"n_qubits={n_qubits} but the strings have {self.structure.n_qubits} letters")
        else:
            self._n_qubits = self.structure.n_qubits
        self.functions = [c if callable(c) else float(c) for c, _ in terms]

    @property
    def n_qubits(self) -> int:
        return self._n_qubits

    @property
    def strings(self) -> tuple[str, ...]:
        return () if self.structure is None else self.structure.strings

    def coefficients(self, t: float) -> list[Any]:
        """The ``f_k(t)``."""
        return [f(t) if callable(f) else f for f in self.functions]

    def at(self, t: float) -> PauliSum:
        """``H(t)`` as a :class:`PauliSum` (coefficients read as numbers)."""
        return PauliSum([(float(c), s) for c, s in zip(self.coefficients(t), self.strings)], self.n_qubits)


def magnus_propagate(K: ArrayBackend, hamiltonian: TimeDependentHamiltonian, state: Any,
                     times: list[float] | None, scale: complex, tol: float, dt: Any, normalise: bool,
                     exponentiate: Callable[..., None], emit: Callable[[Any], None]) -> None:
    """Call ``emit`` with the state at each output time, stepping by at most ``dt`` (every step
    counted, and too many refused, before the first: :func:`~tyxonq.evolution.inputs.step_counts`)."""
    if times is None:
        raise ValueError("a TimeDependentHamiltonian needs times that can be read (not traced)")
    dt = checked_step(dt, "the largest step of a TimeDependentHamiltonian's Magnus scheme (the error falls "
                          "as dt^4)")
    counts = step_counts(times, dt) if hamiltonian.structure is not None else [0] * len(times)
    now = 0.0
    for target, count in zip(times, counts):
        h = (target - now) / count if count else 0.0
        for step in range(count):
            state = _magnus_step(K, hamiltonian, state, now + step * h, h, scale, normalise, exponentiate)
        now = max(now, target)
        emit(state)


def _magnus_step(K: ArrayBackend, hamiltonian: TimeDependentHamiltonian, state: Any, start: float, h: float,
                 scale: complex, normalise: bool, exponentiate: Callable[..., None]) -> Any:
    """One CF4:2 step from ``start`` to ``start + h``: two exponentials of Pauli sums."""
    structure, dtype = hamiltonian.structure, K.dtype_name_of(state)
    early, late = (hamiltonian.coefficients(start + c * h) for c in NODES)
    for first, second in ((WEIGHTS[1], WEIGHTS[0]), (WEIGHTS[0], WEIGHTS[1])):
        combined = _combined(K, early, late, first, second)
        captured: list[Any] = []
        exponentiate(structure.bind(K, combined, dtype).apply, state, [h], [h], scale,
                     structure.one_norm(K, combined), normalise, captured.append)
        state = captured[-1]
    return state


def _checked_width(n_qubits: Any) -> int:
    if n_qubits is None:
        raise ValueError("a TimeDependentHamiltonian without terms needs n_qubits")
    if isinstance(n_qubits, bool) or not isinstance(n_qubits, numbers.Integral) or n_qubits < 1:
        raise ValueError(f"n_qubits={n_qubits!r} must be a positive int")
    return int(n_qubits)


def _combined(K: ArrayBackend, early: list[Any], late: list[Any], a: float, b: float) -> Any:
    values = [a * x + b * y for x, y in zip(early, late)]
    if all(isinstance(v, numbers.Number) for v in values):
        return values
    return K.stack([K.asarray(v) if K.is_array(v) else K.asarray(float(v)) for v in values])
