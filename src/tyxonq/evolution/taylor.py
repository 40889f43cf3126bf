"""``exp(tau A) psi`` by truncated Taylor series in steps, on any backend.

* :func:`taylor_propagate` with fixed steps and order: ``s`` steps of ``sum_{j<=m} (tau A / s)^j /
  j!`` per output interval, chosen before any product from the norm bound (or given): the result
  is a fixed composition of backend operations, so reverse mode differentiates exactly the
  scheme that was run, and under ``jit`` nothing is read back when ``steps`` and ``order`` are
  given;
* ``adaptive=True`` is Al-Mohy and Higham's ``expm_multiply`` (SIAM J. Sci. Comput. 33, 488
  (2011), the algorithm behind ``scipy.sparse.linalg.expm_multiply``): ``(m, s)`` minimising
  ``m s`` under ``||tau A||_1 / s <= theta_m``, and each step's series stopped once two
  successive terms are below the tolerance.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..numerics.host import host_values
from ..numerics.protocol import ArrayBackend
from .inputs import MAX_STEPS

__all__ = ["taylor_propagate", "taylor_schedule", "expm_multiply_schedule"]

#: Al-Mohy and Higham's theta_m for double precision (their Table 3.1, as in SciPy): the series
#: of order m is accurate to 2^-53 for ||tau A||_1 <= theta_m.
THETA = {1: 2.29e-16, 2: 2.58e-8, 3: 1.39e-5, 4: 3.40e-4, 5: 2.40e-3, 6: 9.07e-3, 7: 2.38e-2,
         8: 5.00e-2, 9: 8.96e-2, 10: 1.44e-1, 11: 2.14e-1, 12: 3.00e-1, 13: 4.00e-1, 14: 5.14e-1,
         15: 6.41e-1, 16: 7.81e-1, 17: 9.31e-1, 18: 1.09, 19: 1.26, 20: 1.44, 21: 1.62, 22: 1.82,
         23: 2.01, 24: 2.22, 25: 2.43, 26: 2.64, 27: 2.86, 28: 3.08, 29: 3.31, 30: 3.54, 35: 4.7,
         40: 6.0, 45: 7.2, 50: 8.5, 55: 9.9}

#: the norm of one fixed step's ``tau A``: terms peak near ``theta^theta / theta!``, small enough
#: that cancellation costs no digits
FIXED_THETA = 2.0


def taylor_schedule(norm: float, duration: float, tol: float) -> tuple[int, int]:
    """``(steps, order)`` of the fixed scheme for ``||A|| <= norm`` over ``duration``: steps of
    norm ``FIXED_THETA`` at most, and the order whose remainder bound per step keeps the total
    within ``tol``.

    Examples
    --------
    >>> taylor_schedule(10.0, 1.0, 1e-12)
    (5, 20)
    """
    size = norm * abs(duration)
    steps = max(1, math.ceil(size / FIXED_THETA))
    theta = size / steps
    order, term = 0, 1.0
    while term * theta / (order + 1) > tol / steps and order < 200:
        order += 1
        term *= theta / order
    return steps, max(order, 1)


def expm_multiply_schedule(norm: float, duration: float) -> tuple[int, int]:
    """Al-Mohy and Higham's ``(steps, order)``: the pair with ``||tau A||_1 / s <= theta_m``
    minimising ``m s`` (double precision).

    Examples
    --------
    >>> expm_multiply_schedule(10.0, 1.0)
    (2, 40)
    """
    size = norm * abs(duration)
    if size == 0:
        return 1, 0
    best = min((math.ceil(size / theta) * m, m) for m, theta in THETA.items())
    order = best[1]
    return max(1, math.ceil(size / THETA[order])), order


def taylor_propagate(K: ArrayBackend, apply: Callable[[Any], Any], state: Any, times: list[float] | None,
                     time_values: list[Any], scale: complex, norm: float, tol: float,
                     steps: int | None, order: int | None, adaptive: bool, normalise: bool,
                     emit: Callable[[Any], None]) -> None:
    """Call ``emit(exp(t_k s H) state)`` for each output time; ``times`` the host values (``None``
    when they cannot be read, under ``jit``: ``steps`` and ``order`` are then required). The
    whole schedule is fixed (and refused beyond :data:`~tyxonq.evolution.inputs.MAX_STEPS`
    steps) before the first product."""
    previous = 0.0
    for value, (count, degree) in zip(time_values, _schedule(times, len(time_values), norm, tol, steps,
                                                             order, adaptive)):
        if count:
            factor = (value - previous) * scale / count
            for _ in range(count):
                state = _series(K, apply, state, factor, degree, tol if adaptive else None)
                if normalise:
                    state = state / K.sqrt(K.sum(K.abs(state) ** 2))
        emit(state)
        previous = value


def _schedule(times: list[float] | None, size: int, norm: float, tol: float, steps: int | None,
              order: int | None, adaptive: bool) -> list[tuple[int, int]]:
    """``(steps, order)`` for each of the ``size`` output intervals (none for an empty one):
    ``steps`` and ``order`` where given (positive ints), else from the norm bound."""
    plan, previous = [], 0.0
    for k in range(size):
        duration = None if times is None else times[k] - previous
        previous = None if times is None else times[k]
        if duration == 0.0:
            plan.append((0, 0))
        elif steps is not None and order is not None:
            plan.append((steps, order))
        elif adaptive:
            _check_length(norm, duration, THETA[max(THETA)])
            plan.append(expm_multiply_schedule(norm, duration))
        else:
            _check_length(norm, duration, FIXED_THETA)
            count, degree = taylor_schedule(norm, duration, tol)
            plan.append((steps or count, order or degree))
    total = sum(count for count, _ in plan)
    if total > MAX_STEPS:
        raise ValueError(f"steps={steps!r}: the Taylor scheme would take {total} steps over the "
                         f"{size} output times; more than {MAX_STEPS:,} is refused as a mistake")
    return plan


def _check_length(norm: float, duration: float, theta: float) -> None:
    """Refuse an interval whose ``norm * duration`` needs more than :data:`MAX_STEPS` Taylor
    steps of norm ``theta`` (before ``ceil`` could overflow)."""
    needed = norm * duration / theta
    if not needed <= MAX_STEPS:
        raise ValueError(f"times: an interval of {duration!r} with ||H|| <= {norm:.3g} needs about "
                         f"{needed:.3g} Taylor steps; more than {MAX_STEPS:,} is refused as a mistake "
                         "(shorter times, or method='krylov', whose steps follow the spectrum)")


def _series(K: ArrayBackend, apply: Callable[[Any], Any], state: Any, factor: Any, order: int,
            tol: float | None) -> Any:
    """``sum_{j<=order} (factor H)^j / j! state``; with ``tol``, stopped early once two successive
    terms are below ``tol`` times the sum (their norms read on the host)."""
    total, term = state, state
    last = None
    for j in range(1, order + 1):
        term = apply(term) * (factor / j)
        total = total + term
        if tol is not None:
            norms = host_values(K, K.stack([K.sum(K.abs(term)), K.sum(K.abs(total))]))
            size, whole = float(norms[0]), float(norms[1])
            if last is not None and last + size <= tol * whole:  # 1-norms, one read
                break
            last = size
    return total
