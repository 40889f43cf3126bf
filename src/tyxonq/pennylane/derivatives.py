"""Device derivatives: d<O>/d(gate angle) from tyxonq's exact gradients.

The trainable parameters of a tape (``tape.trainable_params``) are gate angles of native gates
(the device's preprocessing decomposes everything else until they are). They are traced by
``tq.value_and_grad`` / ``tq.jacobian`` on the NumPy backend, whose default method is exact: one
adjoint sweep over the state (reverse mode through the doubled network for a ``DMCircuit``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pennylane.exceptions import DeviceError

from ..gradients import jacobian, value_and_grad
from ..numerics import use_backend
from .circuits import build_circuit, operation_parameters
from .observables import PauliSums, expectation

__all__ = ["results_and_jacobian", "pennylane_jacobian"]


def _objective(tape: Any, mixed: bool, sums: PauliSums | None) -> tuple[Any, np.ndarray]:
    params = operation_parameters(tape)
    trainable = list(tape.trainable_params)
    if trainable and max(trainable) >= len(params):
        raise DeviceError("device derivatives differentiate gate angles only; an observable's "
                          "parameters are trainable here: use diff_method='parameter-shift'")
    observables = [m.obs for m in tape.measurements]

    def values(theta: Any) -> Any:
        angles = list(params)
        for k, index in enumerate(trainable):
            angles[index] = theta[k]
        circuit = build_circuit(tape, mixed, angles)
        return [expectation(circuit, obs, sums) for obs in observables]

    start = np.array([float(np.real(params[i])) for i in trainable], dtype=float)
    return values, start


def results_and_jacobian(tape: Any, mixed: bool, sums: PauliSums | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The expectation values of a standard-wired tape and their Jacobian, ``(m,)`` and ``(m, p)``.

    Examples
    --------
    >>> import pennylane as qml
    >>> tape = qml.tape.QuantumScript([qml.RX(0.3, 0)], [qml.expval(qml.Z(0))])
    >>> values, jac = results_and_jacobian(tape, mixed=False)
    >>> round(float(jac[0, 0]), 6)
    -0.29552
    """
    values, start = _objective(tape, mixed, sums)
    count = len(tape.measurements)
    with use_backend("numpy") as K:
        if start.size == 0:
            return np.array([float(np.real(v)) for v in values(start)]), np.zeros((count, 0))
        if count == 1:
            value, grad = value_and_grad(lambda theta: K.real(values(theta)[0]))(start)
            return np.array([float(value)]), np.asarray(grad, dtype=float).reshape(1, -1)
        jac = jacobian(lambda theta: K.real(K.stack(values(theta))))(start)
        return np.array([float(np.real(v)) for v in values(start)]), np.asarray(jac, dtype=float)


def pennylane_jacobian(jac: np.ndarray) -> Any:
    """A ``(measurements, parameters)`` Jacobian in PennyLane's nesting (``adjoint_jacobian``'s).

    Examples
    --------
    >>> pennylane_jacobian(np.array([[1.0, 2.0]]))
    (array(1.), array(2.))
    """
    squeezed = np.squeeze(jac)
    if squeezed.ndim == 0:
        return np.array(squeezed)
    if squeezed.ndim == 1:
        return tuple(np.array(j) for j in squeezed)
    return tuple(tuple(np.array(j_) for j_ in j) for j in squeezed)
