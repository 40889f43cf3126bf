"""qulacs: a C++ state-vector simulator (OpenMP threads from ``OMP_NUM_THREADS``).

- statevector: a ``QuantumCircuit`` of ``RotX/RotZ`` + CNOT, its gates merged into two-qubit blocks
  by ``QuantumCircuitOptimizer().optimize(circuit, 2)`` (untimed), applied to a ``QuantumState``.
- state_sampling: the same, then ``state.sampling(shots, SEED)`` (both timed).
- energies and gradients: a ``ParametricQuantumCircuit`` (parameters set in place) and an
  ``Observable``; gradients by ``backprop`` (qulacs' adjoint method); 100 Adam steps by the shared
  update; the 64 energies in a loop (qulacs has no batch API).
- brickwork 50 qubits: n/a (a 2^50 state vector).
- noisy rows: the fixed circuit with ``qulacs.gate.DepolarizingNoise(q, p)`` after every gate on each
  of its qubits (qulacs applies X, Y or Z with probability p/3 each: our convention; on a
  ``DensityMatrix`` the mixture is exact), applied to a ``DensityMatrix``; the energy by the
  ``Observable``, the state by ``get_matrix()``. Not merged by ``QuantumCircuitOptimizer``: it
  takes a probabilistic gate's matrix to be the identity (it warns so), and the merged circuit's
  density matrix is off by 1e-2. The noisy gradient: n/a (``backprop`` is for
  state vectors); the 40-qubit noisy brickwork: n/a (a 2^40 x 2^40 density matrix).

qulacs counts qubit 0 as the least significant bit: our qubit q is its ``n-1-q``, so its vector is
in our order. Its parametric rotations are ``exp(+iθP/2)``: they get ``-angle``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from specs import SEED, Spec, z_means

from peers.common import adam_loop, chain_rule, reversed_qubit

SUPPORTED = ("statevector", "state_sampling", "energy_gradient", "adam_vqe_100", "batched_energies_64",
             "qaoa_gradient", "noisy_energy", "noisy_density_matrix")
_AXIS = {"rx": "X", "ry": "Y", "rz": "Z"}


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def _fixed_circuit(spec: Spec) -> Any:
    """The spec's circuit at its angles; with ``spec.noise``, ``DepolarizingNoise(q, p)`` after
    every gate on each of its qubits."""
    from qulacs import QuantumCircuit
    from qulacs.gate import DepolarizingNoise

    circuit = QuantumCircuit(spec.n)
    for gate in spec.gates:
        qubits = [reversed_qubit(spec.n, q) for q in gate.qubits]
        if gate.name in _AXIS:  # RotX/RotY/RotZ: exp(-iθP/2)
            angle = gate.scale * spec.params[gate.param]
            getattr(circuit, f"add_Rot{_AXIS[gate.name]}_gate")(qubits[0], angle)
        else:
            _add_fixed(circuit, gate.name, qubits)
        if spec.noise:
            for qubit in qubits:
                circuit.add_gate(DepolarizingNoise(qubit, spec.noise))
    return circuit


def _add_fixed(circuit: Any, name: str, qubits: list[int]) -> None:
    {"h": circuit.add_H_gate, "cx": circuit.add_CNOT_gate, "cz": circuit.add_CZ_gate}[name](*qubits)


def _parametric_circuit(spec: Spec) -> Any:
    from qulacs import ParametricQuantumCircuit

    circuit = ParametricQuantumCircuit(spec.n)
    for gate in spec.gates:
        qubits = [reversed_qubit(spec.n, q) for q in gate.qubits]
        if gate.name in _AXIS:
            getattr(circuit, f"add_parametric_R{_AXIS[gate.name]}_gate")(qubits[0], 0.0)
        elif gate.name == "rzz":
            circuit.add_parametric_multi_Pauli_rotation_gate(qubits, [3, 3], 0.0)
        else:
            _add_fixed(circuit, gate.name, qubits)
    return circuit


def _observable(spec: Spec) -> Any:
    from qulacs import Observable

    observable = Observable(spec.n)
    for coefficient, pauli in spec.hamiltonian:
        observable.add_operator(coefficient, " ".join(
            f"{letter} {reversed_qubit(spec.n, q)}" for q, letter in enumerate(pauli) if letter != "I"))
    return observable


def _energy_functions(spec: Spec) -> tuple[Callable, Callable]:
    """``energy(params)`` and ``value_and_grad(params)`` on one parametric circuit and state."""
    from qulacs import QuantumState

    circuit, observable, state = _parametric_circuit(spec), _observable(spec), QuantumState(spec.n)
    parametric = [(k, g) for k, g in enumerate(g for g in spec.gates if g.param is not None)]

    def energy(params: np.ndarray) -> float:
        for k, gate in parametric:
            circuit.set_parameter(k, -gate.scale * params[gate.param])
        state.set_zero_state()
        circuit.update_quantum_state(state)
        return observable.get_expectation_value(state)

    def value_and_grad(params: np.ndarray) -> tuple[float, np.ndarray]:
        value = energy(params)
        return value, chain_rule(spec, np.asarray(circuit.backprop(observable)), angle_sign=-1.0)

    return energy, value_and_grad


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    from qulacs import QuantumState
    from qulacs.circuit import QuantumCircuitOptimizer

    if spec.workload == "statevector":
        circuit = _fixed_circuit(spec)
        QuantumCircuitOptimizer().optimize(circuit, 2)

        def state_vector() -> np.ndarray:
            state = QuantumState(spec.n)
            circuit.update_quantum_state(state)
            return state.get_vector()

        return state_vector, lambda r: r
    if spec.workload == "state_sampling":  # its indices are ours: the circuit's qubits are reversed
        circuit = _fixed_circuit(spec)
        QuantumCircuitOptimizer().optimize(circuit, 2)

        def samples() -> list[int]:
            state = QuantumState(spec.n)
            circuit.update_quantum_state(state)
            return state.sampling(spec.shots, SEED)

        return samples, lambda r: z_means(np.asarray(r), spec.n)
    if spec.workload in ("noisy_energy", "noisy_density_matrix"):
        from qulacs import DensityMatrix

        circuit, observable = _fixed_circuit(spec), _observable(spec)

        def noisy() -> Any:
            rho = DensityMatrix(spec.n)
            circuit.update_quantum_state(rho)
            if spec.workload == "noisy_energy":
                return observable.get_expectation_value(rho)
            return rho.get_matrix()

        return noisy, (float if spec.workload == "noisy_energy" else np.asarray)
    energy, value_and_grad = _energy_functions(spec)
    if spec.workload in ("energy_gradient", "qaoa_gradient"):
        return (lambda: value_and_grad(spec.params)), lambda r: r
    if spec.workload == "adam_vqe_100":
        return adam_loop(spec, value_and_grad), lambda r: r
    if spec.workload == "batched_energies_64":
        return (lambda: np.array([energy(row) for row in spec.params])), lambda r: r
    raise ValueError(f"qulacs has no workload {spec.workload!r}")
