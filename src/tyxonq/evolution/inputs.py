"""Checks of :func:`tyxonq.evolve`'s arguments, shared by its methods (Krylov, Taylor, Magnus,
TEBD): every bad value is refused before any work, by an exception naming the argument and what
was expected, the same on every backend.

Conventions checked here:

* ``times``: real numbers (or real backend scalars), finite, non-negative, non-decreasing;
* counts (``steps``, ``order``, ``krylov_dim``, ``max_bond``): ints, ``None`` for "chosen";
  zero is not "chosen", it is refused;
* ``dt``: a finite positive number, the largest step: an interval of length ``d`` takes
  ``ceil(d / dt)`` steps, at least one (``dt`` longer than the interval: one step), and at most
  :data:`MAX_STEPS` steps in all;
* an empty :class:`~tyxonq.PauliSum` (``PauliSum([], n_qubits=n)``, or a sum whose terms
  cancelled) is the zero operator: its evolution is the identity.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from ..numerics.arguments import checked_count, checked_flag, checked_sequence
from ..numerics.host import host_values
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum

__all__ = ["MAX_STEPS", "checked_optional_count", "checked_flag", "checked_callback", "checked_step",
           "step_counts", "checked_times", "checked_observables", "checked_cutoff", "zero_if_empty",
           "coefficient_count"]

#: the most steps one propagation takes (fixed Taylor steps, Magnus or TEBD steps, over all the
#: output times): more means ``dt`` far smaller than the times, or times far longer than the
#: Hamiltonian's norm allows, and is refused as a mistake (it would run for days)
MAX_STEPS = 10 ** 8


def checked_optional_count(value: Any, name: str, minimum: int = 1) -> int | None:
    """``None`` (chosen by the method), or ``value`` checked as an int of at least ``minimum``.

    Examples
    --------
    >>> checked_optional_count(None, "steps"), checked_optional_count(4, "steps")
    (None, 4)
    >>> checked_optional_count(0, "steps")
    Traceback (most recent call last):
    ...
    ValueError: steps=0 must be a positive int (None: the method chooses)
    """
    if value is None:
        return None
    try:
        return checked_count(value, name, minimum)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{error} (None: the method chooses)") from None


def checked_callback(callback: Any) -> Callable[[Any], Any] | None:
    """``callback`` if it is ``None`` or callable, else a ``TypeError``."""
    if callback is not None and not callable(callback):
        raise TypeError(f"callback={callback!r} must be a function of the state (or None)")
    return callback


def checked_step(dt: Any, why: str) -> float:
    """``dt`` as a finite positive float; ``why`` (what ``dt`` is for) completes the message when
    it is missing.

    Examples
    --------
    >>> checked_step(0.05, "the TEBD step")
    0.05
    >>> checked_step(float("inf"), "the TEBD step")
    Traceback (most recent call last):
    ...
    ValueError: dt=inf must be a finite positive number: the TEBD step
    """
    if dt is None:
        raise ValueError(f"dt=None: give dt=, a finite positive number: {why}")
    if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, numbers.Real):
        raise TypeError(f"dt={dt!r} must be a finite positive number ({why}); got {type(dt).__name__}")
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt={dt!r} must be a finite positive number: {why}")
    return float(dt)


def step_counts(times: list[float], dt: float) -> list[int]:
    """Steps of at most ``dt`` from each output time to the next (from 0): ``ceil(d / dt)`` for an
    interval of length ``d > 0`` (``1e-12`` of a step forgiven, so that ``0.3 / 0.1`` takes 3),
    at least one; none for ``d = 0``. More than :data:`MAX_STEPS` in all is refused.

    Examples
    --------
    >>> step_counts([0.0, 0.3, 0.3, 1.0], 0.1), step_counts([1.0], 1e300)
    ([0, 3, 0, 7], [1])
    """
    counts, now = [], 0.0
    for target in times:
        ratio = (target - now) / dt
        if not ratio <= MAX_STEPS:
            raise ValueError(f"dt={dt!r} needs about {ratio:.3g} steps to reach time {target!r}; more than "
                             f"{MAX_STEPS:,} steps is refused as a mistake: give a larger dt")
        counts.append(max(1, math.ceil(ratio - 1e-12)) if target > now else 0)
        now = max(now, target)
    if sum(counts) > MAX_STEPS:
        raise ValueError(f"dt={dt!r} needs {sum(counts)} steps over times up to {times[-1]!r}; more than "
                         f"{MAX_STEPS:,} steps is refused as a mistake: give a larger dt")
    return counts


def checked_times(K: ArrayBackend, times: Any, traced: str | None) -> tuple[list[float] | None, list[Any]]:
    """``(host values, values)`` of the output times, checked: real numbers or real backend
    scalars, finite, non-negative, non-decreasing, at least one; a single number is one time.
    ``values`` keeps the backend scalars (they carry gradients). Times that cannot be read
    (traced inside ``jit``) give ``(None, values)``, or where ``traced`` is a message, a
    ``ValueError`` with it.

    Examples
    --------
    >>> import tyxonq as tq
    >>> checked_times(tq.get_backend("numpy"), [0.5, 1.0], None)
    ([0.5, 1.0], [0.5, 1.0])
    >>> checked_times(tq.get_backend("numpy"), ["1.0"], None)
    Traceback (most recent call last):
    ...
    TypeError: times must hold real numbers; times[0]='1.0' is a str
    """
    values = _time_values(K, times)
    host = []
    for k, value in enumerate(values):
        read = _host_time(K, value, k)
        if read is None:
            if traced is not None:
                raise ValueError(traced)
            return None, values
        host.append(read)
    if not host:
        raise ValueError("times must hold at least one time")
    if not all(math.isfinite(t) for t in host) or host[0] < 0 or any(b < a for a, b in zip(host, host[1:])):
        raise ValueError(f"times must be finite, non-negative and non-decreasing; got {host}")
    return host, values


def _time_values(K: ArrayBackend, times: Any) -> list[Any]:
    """The entries of ``times`` (a sequence, a 1-d array, or one number)."""
    if isinstance(times, numbers.Real) and not isinstance(times, (bool, np.bool_)) or \
            isinstance(times, np.ndarray) and times.ndim == 0:
        return [times]
    if K.is_array(times) and not isinstance(times, np.ndarray):
        if len(K.shape(times)) != 1:
            raise ValueError(f"times must be one-dimensional; got shape {tuple(K.shape(times))}")
        return [times[k] for k in range(K.shape(times)[0])]
    if isinstance(times, np.ndarray) and times.ndim != 1:
        raise ValueError(f"times must be one-dimensional; got shape {times.shape}")
    return list(checked_sequence(times, "times", "real numbers"))


def _host_time(K: ArrayBackend, value: Any, k: int) -> float | None:
    """``value`` (``times[k]``) as a float; ``None`` for a backend scalar that cannot be read."""
    if K.is_array(value) and not isinstance(value, np.ndarray):
        if K.is_complex(value):
            raise TypeError(f"times must hold real numbers; times[{k}] is complex")
        try:
            return float(np.real(host_values(K, value)))
        except Exception:  # traced under jit: not readable
            return None
    if isinstance(value, (bool, np.bool_, str, bytes)) or np.ndim(value) != 0 or \
            np.asarray(value).dtype.kind not in "iuf":
        raise TypeError(f"times must hold real numbers; times[{k}]={value!r} is a {type(value).__name__}")
    return float(value)


def checked_observables(observables: Any, n: int) -> list[PauliSum] | None:
    """``None``, or the observables as a non-empty list of :class:`~tyxonq.PauliSum` on ``n`` qubits."""
    if observables is None:
        return None
    items = ([observables] if isinstance(observables, PauliSum)
             else list(checked_sequence(observables, "observables", "tq.PauliSum operators")))
    if not items:
        raise ValueError("observables=[] holds no operator: give at least one tq.PauliSum, or None for "
                         "the states")
    for item in items:
        if not isinstance(item, PauliSum) or item.n_qubits != n:
            raise ValueError(f"observables must be tq.PauliSum operators on {n} qubits; got {item!r}")
    return items


def checked_cutoff(cutoff: Any) -> float | None:
    """``None`` (the state's own), or ``cutoff`` as a number in ``[0, 1)``, as
    :class:`~tyxonq.MPSCircuit` takes it."""
    if cutoff is None:
        return None
    if isinstance(cutoff, (bool, np.bool_)) or not isinstance(cutoff, numbers.Real) or not 0 <= cutoff < 1:
        raise ValueError(f"cutoff={cutoff!r} must be a number in [0, 1) (or None: the state's own)")
    return float(cutoff)


def coefficient_count(K: ArrayBackend, coefficients: Any, expected: int) -> None:
    """Refuse ``coefficients`` unless it holds ``expected`` entries (one per term)."""
    if K.is_array(coefficients):
        shape = tuple(K.shape(coefficients))
    else:
        try:
            shape = (len(coefficients),)
        except TypeError:
            raise TypeError(f"coefficients must be a sequence or a 1-d array of {expected} numbers; "
                            f"got {type(coefficients).__name__}") from None
    if shape != (expected,):
        raise ValueError(f"coefficients has shape {shape}; the hamiltonian has {expected} terms")


def zero_if_empty(K: ArrayBackend, hamiltonian: Any, coefficients: Any) -> tuple[Any, Any]:
    """An empty :class:`~tyxonq.PauliSum` as the zero operator ``0 * I`` (whose evolution is the
    identity), with ``coefficients`` (which must then be empty) dropped; anything else unchanged.

    Examples
    --------
    >>> import tyxonq as tq
    >>> zero_if_empty(tq.get_backend("numpy"), tq.PauliSum([], n_qubits=2), None)
    (PauliSum(0*II, n_qubits=2), None)
    """
    if not isinstance(hamiltonian, PauliSum) or len(hamiltonian):
        return hamiltonian, coefficients
    if coefficients is not None:
        coefficient_count(K, coefficients, 0)
    return PauliSum([(0.0, "I" * hamiltonian.n_qubits)], hamiltonian.n_qubits), None
