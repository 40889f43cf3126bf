"""Exact gradients of evolved expectation values without autograd (NumPy, cuPyNumeric), by the
adjoint identities of the Schrödinger equation.

For ``v = <psi(t)|O|psi(t)>``, ``psi(t) = exp(-i H t) psi_0``, ``H = sum_j c_j P_j``:

* ``dv/dt = 2 Im <O psi(t)| H psi(t)>``;
* ``dv/dc_j = 2 Im int_0^t <lambda(s)| P_j |psi(s)> ds`` with the adjoint state
  ``lambda(s) = exp(i H (t - s)) O psi(t)`` evolved backwards from ``t``.

The integral is taken by Gauss-Legendre quadrature with enough nodes for the integrand's highest
frequency (at most twice the norm of ``H``): ``ceil(||H|| t) + 24`` nodes, whose error falls
exponentially past that; ``psi`` at the nodes comes from one forward propagation, ``lambda`` from
one backward propagation per value. :func:`tyxonq.evolve` takes this route when its times or
coefficients are traced (``tq.value_and_grad`` on NumPy) and ``observables=`` are asked for.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from ..numerics.dual import Dual, TracingError
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.pauli_action import PauliStructure
from ..operators.state_expectation import apply_pauli_string

__all__ = ["is_traced_input", "traced_evolution"]

#: quadrature nodes beyond ``||H|| t``
EXTRA_NODES = 24


def is_traced_input(value: Any) -> bool:
    """Whether ``value`` is or holds a traced number (:class:`~tyxonq.numerics.dual.Dual`)."""
    if isinstance(value, Dual):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype == object and any(isinstance(v, Dual) for v in value.flat)
    if isinstance(value, (list, tuple)):
        return any(is_traced_input(v) for v in value)
    return False


def _split(values: Any, name: str) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Host values and per-entry gradients (``None`` for plain numbers) of a flat sequence;
    ``name`` names it in the error for an entry that is not a number."""
    flat = list(np.asarray(values, dtype=object).reshape(-1)) if not isinstance(values, Dual) else [values]
    for entry in flat:
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (Dual, numbers.Number)):
            raise TypeError(f"{name} must hold numbers; got {entry!r}")
    values = np.array([complex(v.value) if isinstance(v, Dual) else complex(v) for v in flat])
    return values, [v.gradient if isinstance(v, Dual) else None for v in flat]


def traced_evolution(K: ArrayBackend, hamiltonian: PauliSum, state: Any, times: Any, coefficients: Any,
                     observables: list[PauliSum] | None,
                     propagate: Callable[..., None]) -> np.ndarray:
    """``(len(times), len(observables))`` Duals: the values and their gradients with respect to
    the traced times and coefficients. ``propagate(apply, state, host_times, scale, norm, emit)``
    runs the chosen exact method."""
    if observables is None:
        raise TracingError(
            "tq.evolve with traced times or coefficients (exact gradients without autograd) "
            "differentiates expectation values: pass observables=[...]; or use the pytorch or "
            "jax backend for gradients of states and callbacks")
    time_values, time_gradients = _split(times, "times")
    if np.any(time_values.imag != 0):
        raise TracingError("traced times must be real")
    host_times = [float(t) for t in time_values.real]
    if not host_times or not np.all(np.isfinite(host_times)) or host_times[0] < 0 or \
            any(b < a for a, b in zip(host_times, host_times[1:])):
        raise ValueError(f"times must be finite, non-negative and non-decreasing; got {host_times}")
    structure, own = PauliStructure.of(hamiltonian)
    if coefficients is None:
        coefficient_values, coefficient_gradients = np.asarray(own, dtype=complex), [None] * len(own)
    else:
        coefficient_values, coefficient_gradients = _split(coefficients, "coefficients")
        if coefficient_values.shape != (len(structure),):
            raise ValueError(f"coefficients has {coefficient_values.size} entries; the hamiltonian "
                             f"has {len(structure)} terms")
    dtype = K.dtype_name_of(state)
    bound = structure.bind(K, coefficient_values, dtype)
    norm = structure.one_norm(K, coefficient_values)
    states = _propagated(propagate, bound.apply, state, host_times, -1j, norm)
    traced_coefficients = any(g is not None for g in coefficient_gradients)
    size = next((g.size for g in time_gradients + coefficient_gradients if g is not None), 0)
    measured = [PauliStructure.of(o)[0].bind(K, [c for c, _ in o], dtype) for o in observables]
    rows = []
    for t, time_gradient, psi in zip(host_times, time_gradients, states):
        row = []
        driven = bound.apply(psi) if time_gradient is not None else None
        nodes = weights = forward = None
        if traced_coefficients and t > 0:
            count = math.ceil(norm * t) + EXTRA_NODES
            unit, weights = np.polynomial.legendre.leggauss(count)
            nodes = 0.5 * t * (unit + 1)
            weights = 0.5 * t * weights
            forward = _propagated(propagate, bound.apply, state, list(nodes), -1j, norm)
        for observable in measured:
            applied = observable.apply(psi)
            value = float(np.real(K.to_numpy(_inner(K, psi, applied))))
            gradient = np.zeros(size)
            if time_gradient is not None:
                rate = 2 * float(np.imag(K.to_numpy(_inner(K, applied, driven))))
                gradient = gradient + rate * time_gradient
            if nodes is not None:
                backward = _propagated(propagate, bound.apply, applied, list(t - nodes[::-1]), 1j, norm)[::-1]
                for j, string in enumerate(structure.strings):
                    if coefficient_gradients[j] is None:
                        continue
                    integral = sum(w * K.to_numpy(_inner(K, adjoint, apply_pauli_string(K, psi_s, string)))
                                   for w, adjoint, psi_s in zip(weights, backward, forward))
                    gradient = gradient + 2 * float(np.imag(integral)) * coefficient_gradients[j]
            row.append(Dual(value, gradient))
        rows.append(row)
    return np.array(rows, dtype=object)


def _propagated(propagate: Callable[..., None], apply: Callable, state: Any, times: list[float],
                scale: complex, norm: float) -> list[Any]:
    found: list[Any] = []
    propagate(apply, state, times, scale, norm, found.append)
    return found


def _inner(K: ArrayBackend, left: Any, right: Any) -> Any:
    return K.sum(K.conj(left) * right)
