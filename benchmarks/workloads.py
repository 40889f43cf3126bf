"""The benchmark workloads: exact circuits, seeds and sizes, each with a dense NumPy check.

Every workload is a function ``build(size) -> (run, check)``: ``run()`` performs the timed work
on the active tyxonq backend and returns its result; ``check(result)`` compares it with an
independent dense NumPy computation and returns the largest deviation. A result whose deviation
exceeds :data:`TOLERANCE` is reported as wrong and not timed.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tyxonq as tq

TOLERANCE = 1e-8
SEED = 2026


# -- a dense reference, independent of tyxonq ---------------------------------------------
def _apply(state: np.ndarray, matrix: np.ndarray, qubits: tuple[int, ...], n: int) -> np.ndarray:
    k = len(qubits)
    tensor = np.tensordot(matrix.reshape((2,) * (2 * k)), state.reshape((2,) * n),
                          axes=(list(range(k, 2 * k)), list(qubits)))
    return np.moveaxis(tensor, list(range(k)), list(qubits)).reshape(-1)


def _reference_state(circuit: tq.Circuit) -> np.ndarray:
    n = circuit.num_qubits
    state = np.zeros(2 ** n, dtype=complex)
    state[0] = 1
    K = tq.get_backend("numpy")
    for op in circuit.operations:
        params = tuple(float(np.asarray(p)) for p in op.params)
        from tyxonq.circuit.gates import gate_matrix

        state = _apply(state, np.asarray(gate_matrix(K, op.gate, params, op.dagger)), op.qubits, n)
    return state


def _dense_energy(state: np.ndarray, hamiltonian: tq.PauliSum) -> float:
    return float(np.vdot(state, hamiltonian.to_sparse() @ state).real)


# -- circuits -------------------------------------------------------------------------------
def ladder(n: int, layers: int = 10) -> tq.Circuit:
    angles = np.random.default_rng(SEED).uniform(0, 2 * np.pi, 2 * n * layers)
    return tq.templates.rotation_ladder(n, angles, layers)


def _tfim_energy(n: int, layers: int = 4) -> tuple[Callable[[Any], Any], int, tq.PauliSum]:
    hamiltonian = tq.hamiltonians.tfim(n)
    rotations = ("ry", "rz")

    def energy(params: Any) -> Any:
        return tq.templates.hardware_efficient(n, params, layers, rotations).expectation(hamiltonian)

    return energy, tq.templates.hardware_efficient_size(n, layers, rotations), hamiltonian


def _params(size: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    return np.random.default_rng(SEED).uniform(-np.pi, np.pi, batch + (size,))


# -- workloads ------------------------------------------------------------------------------
def statevector(n: int) -> tuple[Callable, Callable]:
    """State of an n-qubit, 10-layer RX·RZ + CNOT-ladder circuit."""
    circuit = ladder(n)
    K = tq.get_backend()

    def check(state: Any) -> float:
        return float(np.max(np.abs(K.to_numpy(state) - _reference_state(circuit))))

    return circuit.state, check


def energy_gradient(n: int) -> tuple[Callable, Callable]:
    """Energy and full gradient of a 4-layer RY·RZ + CNOT ansatz for the TFIM chain."""
    energy, size, hamiltonian = _tfim_energy(n)
    params = _params(size)
    value_and_grad = tq.value_and_grad(energy)
    K = tq.get_backend()

    def check(result: Any) -> float:
        circuit = tq.templates.hardware_efficient(n, params, 4, ("ry", "rz"))
        reference = _dense_energy(_reference_state(circuit), hamiltonian)
        shift = np.zeros(size)  # parameter shift on the dense reference, first 3 parameters
        for i in range(3):
            plus, minus = params.copy(), params.copy()
            plus[i] += np.pi / 2
            minus[i] -= np.pi / 2
            shift[i] = (_dense_energy(_reference_state(tq.templates.hardware_efficient(
                n, plus, 4, ("ry", "rz"))), hamiltonian) - _dense_energy(_reference_state(
                    tq.templates.hardware_efficient(n, minus, 4, ("ry", "rz"))), hamiltonian)) / 2
        value, gradient = (K.to_numpy(x) for x in result)
        return max(abs(float(value) - reference), float(np.max(np.abs(gradient[:3] - shift[:3]))))

    return lambda: value_and_grad(K.asarray(params)), check


def adam_vqe(n: int, steps: int = 100) -> tuple[Callable, Callable]:
    """A 100-step Adam VQE (learning rate 0.05) on the TFIM chain."""
    energy, size, hamiltonian = _tfim_energy(n)

    def run() -> Any:
        return tq.optimize.minimize(energy, _params(size) * 0.1, method="adam", maxiter=steps,
                                    learning_rate=0.05, tol=0.0, progress=False)

    def check(result: Any) -> float:
        circuit = tq.templates.hardware_efficient(n, result.history_x[-1], 4, ("ry", "rz"))
        return abs(result.history_fun[-1] - _dense_energy(_reference_state(circuit), hamiltonian))

    return run, check


def batched_energies(n: int, batch: int = 64) -> tuple[Callable, Callable]:
    """Energies of 64 parameter sets in one batched call."""
    energy, size, hamiltonian = _tfim_energy(n)
    params = _params(size, (batch,))
    batched = tq.vectorize_or_fallback(energy)
    K = tq.get_backend()

    def check(result: Any) -> float:
        values = K.to_numpy(result)
        rows = (0, batch - 1)
        return max(abs(float(values[r]) - _dense_energy(_reference_state(
            tq.templates.hardware_efficient(n, params[r], 4, ("ry", "rz"))), hamiltonian))
            for r in rows)

    return lambda: batched(K.asarray(params)), check


def qaoa_gradient(n: int, layers: int = 3) -> tuple[Callable, Callable]:
    """QAOA MaxCut energy and gradient, random 3-regular graph (seed 2026), p = 3."""
    import networkx as nx

    graph = nx.random_regular_graph(3, n, seed=SEED)
    hamiltonian = tq.hamiltonians.maxcut(graph)
    params = np.concatenate([np.linspace(0.1, 0.7, layers), np.linspace(0.7, 0.1, layers)])

    def energy(p: Any) -> Any:
        return tq.templates.qaoa(graph, p[:layers], p[layers:]).expectation(hamiltonian)

    value_and_grad = tq.value_and_grad(energy)
    K = tq.get_backend()

    def check(result: Any) -> float:
        circuit = tq.templates.qaoa(graph, params[:layers], params[layers:])
        return abs(float(K.to_numpy(result[0])) - _dense_energy(_reference_state(circuit), hamiltonian))

    return lambda: value_and_grad(K.asarray(params)), check


def brickwork_local(n: int, depth: int = 10) -> tuple[Callable, Callable]:
    """An n-qubit depth-10 brickwork circuit: <0...0|psi> and <Z> on the middle qubit.

    The check is <Z>'s, against a dense simulation of the light-cone window; a 2^50 amplitude has
    no dense reference.
    """
    params = np.random.default_rng(SEED).uniform(0, np.pi, n * depth)
    circuit = tq.templates.brickwork(n, params, depth)
    middle = n // 2
    K = tq.get_backend()

    def run() -> Any:
        return circuit.amplitude("0" * n), circuit.expectation_ps(z=[middle])

    def check(result: Any) -> float:
        low, high = max(0, middle - depth), min(n - 1, middle + depth)
        window = tq.templates.brickwork(n, params, depth, window=(low, high))
        probabilities = np.abs(_reference_state(window)) ** 2
        bits = (np.arange(probabilities.size) >> (high - middle)) & 1
        return abs(float(K.to_numpy(result[1])) - float(np.sum(probabilities * (1 - 2 * bits))))

    return run, check


WORKLOADS: dict[str, Callable[[int], tuple[Callable, Callable]]] = {
    "statevector": statevector,
    "energy_gradient": energy_gradient,
    "adam_vqe_100": adam_vqe,
    "batched_energies_64": batched_energies,
    "qaoa_gradient": qaoa_gradient,
    "brickwork_local": brickwork_local,
}

#: full and --quick sizes (qubits) per workload
SIZES = {
    "statevector": ((16, 20, 22), (10,)),
    "energy_gradient": ((8, 12, 16), (6,)),
    "adam_vqe_100": ((12,), (6,)),
    "batched_energies_64": ((10,), (6,)),
    "qaoa_gradient": ((16,), (8,)),
    "brickwork_local": ((50,), (24,)),
}
