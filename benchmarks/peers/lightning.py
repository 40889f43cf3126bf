"""PennyLane on ``lightning.qubit`` (C++ state vector, OpenMP threads from ``OMP_NUM_THREADS``).

- statevector: a QNode returning ``qml.state()``.
- state_sampling: a QNode returning ``qml.sample()`` with ``shots`` (``qml.set_shots``) on a device
  seeded with ``SEED``.
- energies and gradients: a QNode returning ``qml.expval(H)`` with ``diff_method="adjoint"``,
  differentiated by ``qml.grad`` (autograd interface; the energy is the gradient's ``forward``);
  100 Adam steps by the shared update (PennyLane's ``AdamOptimizer`` scales ε by the bias
  correction, a different trajectory); the 64 energies by parameter broadcasting (one QNode call
  with a ``(64, P)`` array).
- brickwork 50 qubits: n/a (a 2^50 state vector).

PennyLane's wire 0 is the most significant bit, its rotations and ``IsingZZ`` are ``exp(-iθP/2)``:
our conventions.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np
from specs import SEED, Spec, z_means

from peers.common import adam_loop

SUPPORTED = ("statevector", "state_sampling", "energy_gradient", "adam_vqe_100", "batched_energies_64",
             "qaoa_gradient")


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def _apply_gates(spec: Spec, params: Any, noise: float = 0.0) -> None:
    """Queue the spec's gates; ``params`` may carry a leading batch axis (broadcasting). With
    ``noise``, each gate is followed by the depolarising channel on each of its qubits."""
    import pennylane as qml

    fixed = {"h": qml.Hadamard, "cx": qml.CNOT, "cz": qml.CZ}
    rotations = {"rx": qml.RX, "ry": qml.RY, "rz": qml.RZ, "rzz": qml.IsingZZ}
    for gate in spec.gates:
        if gate.param is None:
            fixed[gate.name](wires=list(gate.qubits))
        else:
            rotations[gate.name](gate.scale * params[..., gate.param], wires=list(gate.qubits))
        for q in gate.qubits if noise else ():
            qml.DepolarizingChannel(noise, wires=q)


def _hamiltonian(spec: Spec) -> Any:
    import pennylane as qml

    paulis = {"X": qml.PauliX, "Y": qml.PauliY, "Z": qml.PauliZ}
    coefficients, observables = [], []
    for coefficient, pauli in spec.hamiltonian:
        factors = [paulis[letter](q) for q, letter in enumerate(pauli) if letter != "I"]
        coefficients.append(coefficient)
        observables.append(functools.reduce(operator.matmul, factors))
    return qml.Hamiltonian(coefficients, observables)


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import pennylane as qml
    from pennylane import numpy as pnp

    device = qml.device("lightning.qubit", wires=spec.n)
    if spec.workload == "statevector":
        @qml.qnode(device, diff_method=None)
        def state(params: Any) -> Any:
            _apply_gates(spec, params)
            return qml.state()

        return (lambda: state(spec.params)), np.asarray
    if spec.workload == "state_sampling":  # one sample per row, wire 0 (our qubit 0) first
        sampler = qml.device("lightning.qubit", wires=spec.n, seed=SEED)

        @qml.set_shots(spec.shots)
        @qml.qnode(sampler, diff_method=None)
        def samples(params: Any) -> Any:
            _apply_gates(spec, params)
            return qml.sample()

        weights = 2 ** np.arange(spec.n - 1, -1, -1)
        return (lambda: samples(spec.params)), lambda r: z_means(np.asarray(r) @ weights, spec.n)
    hamiltonian = _hamiltonian(spec)

    @qml.qnode(device, diff_method="adjoint")
    def energy(params: Any) -> Any:
        _apply_gates(spec, params)
        return qml.expval(hamiltonian)

    if spec.workload == "batched_energies_64":
        return (lambda: energy(spec.params)), np.asarray
    gradient = qml.grad(energy)

    def value_and_grad(params: np.ndarray) -> tuple[float, np.ndarray]:
        derivative = gradient(pnp.array(params, requires_grad=True))
        return float(gradient.forward), np.asarray(derivative)

    if spec.workload in ("energy_gradient", "qaoa_gradient"):
        return (lambda: value_and_grad(spec.params)), lambda r: r
    if spec.workload == "adam_vqe_100":
        return adam_loop(spec, value_and_grad), lambda r: r
    raise ValueError(f"lightning has no workload {spec.workload!r}")
