"""PennyLane on ``default.mixed`` (its density-matrix simulator, NumPy underneath), for the noisy rows.

- the circuit: the spec's gates, each followed by ``qml.DepolarizingChannel(p, wires=q)`` on each
  of its qubits (PennyLane's Kraus operators ``sqrt(1 - p) I, sqrt(p/3) X, sqrt(p/3) Y, sqrt(p/3) Z``:
  our convention);
- noisy_energy: a QNode returning ``qml.expval(H)`` (the TFIM as ``qml.Hamiltonian``);
- noisy_energy_gradient: the same QNode with ``diff_method="backprop"`` (``default.mixed`` has no
  adjoint method) differentiated by ``qml.grad`` (autograd interface, as the lightning adapter);
  the energy is the gradient's ``forward``;
- noisy_density_matrix: a QNode returning ``qml.density_matrix(wires=range(n))``;
- the 40-qubit noisy brickwork: n/a (a 2^40 x 2^40 density matrix).

PennyLane's wire 0 is the most significant bit and its rotations are ``exp(-iθP/2)``: our
conventions. Every other workload is the lightning engine's.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from specs import Spec

from peers.lightning import _apply_gates, _hamiltonian

SUPPORTED = ("noisy_energy", "noisy_energy_gradient", "noisy_density_matrix")


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def _apply_noisy_gates(spec: Spec, params: Any) -> None:
    """Queue the spec's gates, each followed by the depolarising channel on each of its qubits."""
    _apply_gates(spec, params, noise=spec.noise)


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import pennylane as qml
    from pennylane import numpy as pnp

    device = qml.device("default.mixed", wires=spec.n)
    if spec.workload == "noisy_density_matrix":
        @qml.qnode(device, diff_method=None)
        def state(params: Any) -> Any:
            _apply_noisy_gates(spec, params)
            return qml.density_matrix(wires=range(spec.n))

        return (lambda: state(spec.params)), np.asarray
    hamiltonian = _hamiltonian(spec)
    if spec.workload == "noisy_energy":
        @qml.qnode(device, diff_method=None)
        def value(params: Any) -> Any:
            _apply_noisy_gates(spec, params)
            return qml.expval(hamiltonian)

        return (lambda: value(spec.params)), lambda r: float(np.real(r))

    @qml.qnode(device, diff_method="backprop", interface="autograd")
    def energy(params: Any) -> Any:
        _apply_noisy_gates(spec, params)
        return qml.expval(hamiltonian)

    gradient = qml.grad(energy)

    def value_and_grad() -> tuple[float, np.ndarray]:
        derivative = gradient(pnp.array(spec.params, requires_grad=True))
        return float(gradient.forward), np.asarray(derivative)

    if spec.workload == "noisy_energy_gradient":
        return value_and_grad, lambda r: r
    raise ValueError(f"pennylane-mixed has no workload {spec.workload!r}")
