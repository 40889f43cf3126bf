"""What a distributed run shares between its ranks, run under a launcher (torchrun, mpirun, or
two JAX processes) or as one process: every rank prints ``RESULT <rank> <json>`` for the test to
compare with one process's results (``tests/test_distributed_work.py``).

``python workloads.py ENGINE [MODE]``: ENGINE is ``torch``, ``mpi``, ``jax`` or ``none`` (one
process); MODE ``work`` (default: the workloads, then a circuit that differs between the ranks and
a rank whose share fails) or ``crash`` (rank 1 raises outside any collective while rank 0 waits in
one: the launcher must end the run).
"""

from __future__ import annotations

import json
import sys

import networkx as nx
import numpy as np

import tyxonq as tq

BACKENDS = {"torch": "pytorch", "mpi": "numpy", "jax": "jax", "none": "numpy"}
QAOA_NODES = 24  # light cones (cheaper than the 24-qubit state), 36 terms
SLICE_QUBITS, SLICE_DEPTH, SLICE_BUDGET = 12, 8, "96 KiB"


def qaoa_energy(graph: nx.Graph) -> tuple:
    hamiltonian = tq.hamiltonians.maxcut(graph)

    def energy(angles):
        layers = len(angles) // 2
        return tq.templates.qaoa(graph, angles[:layers], angles[layers:]).expectation(hamiltonian,
                                                                                       method="lightcone")
    return energy, hamiltonian


_PAIRING = np.random.default_rng(0)
PAIRS = [_PAIRING.permutation(SLICE_QUBITS).reshape(-1, 2) for _ in range(SLICE_DEPTH)]


def scrambled_energy(angles):
    """RY layers and CX on random pairs: light cones over every qubit, wide enough to slice."""
    c = tq.Circuit(SLICE_QUBITS)
    for layer, pairs in enumerate(PAIRS):
        for q in range(SLICE_QUBITS):
            c.ry(q, theta=angles[layer * SLICE_QUBITS + q])
        for a, b in pairs:
            c.cx(int(a), int(b))
    return c.expectation_ps(z=[3]) + 0.5 * c.expectation_ps(x=[7], z=[2])


def noisy_circuit() -> tq.Circuit:
    c = tq.Circuit(6)
    for q in range(6):
        c.ry(q, theta=0.3 + 0.2 * q)
    for q in range(5):
        c.cx(q, q + 1).depolarizing(q + 1, p=0.1)
    return c.amplitude_damping(0, gamma=0.2)


def sampled_circuit(n: int) -> tq.Circuit:
    c = tq.Circuit(n)
    for q in range(n):
        c.ry(q, theta=0.4 + 0.3 * q)
    for q in range(n - 1):
        c.cx(q, q + 1)
    return c


def dynamic_circuit(kind: str):
    """A mid-circuit measurement feeding a gate forward, a reset, another measurement."""
    c = getattr(tq, kind)(4)
    for q in range(4):
        c.ry(q, theta=0.5 + 0.2 * q)
    c.cx(0, 1)
    c.cond(c.measure(1)).x(2)
    c.reset(1).cx(2, 3).measure(3)
    return c


def samples() -> dict:
    """Shots with a seed, drawn from the state (6 qubits), by conditional marginals (30), and by
    branches of a dynamic circuit's outcomes (state vectors and MPS)."""
    dynamic = {f"dynamic {kind} samples":
               np.asarray(dynamic_circuit(kind).sample(64, seed=5, format="indices")).tolist()
               for kind in ("Circuit", "MPSCircuit")}
    return {**dynamic,
            "state samples": np.asarray(sampled_circuit(6).sample(64, seed=5, format="indices")).tolist(),
            "wide samples": np.asarray(sampled_circuit(30).sample(16, seed=5, format="indices",
                                                                   method="contraction")).tolist()}


def as_list(K, value) -> list:
    return np.asarray(K.to_numpy(value), dtype=float).reshape(-1).tolist()


def workloads(backend: str) -> dict:
    """Every shared result: a QAOA energy and gradient (terms shared), Pauli expectations without
    gradients, a sliced contraction's value and gradient (slices shared), a batch of energies and
    gradients (lanes shared), noisy trajectories with a seed, and three Adam steps."""
    K = tq.set_backend(backend)
    graph = nx.random_regular_graph(3, QAOA_NODES, seed=7)
    energy, hamiltonian = qaoa_energy(graph)
    x = K.asarray(np.array([0.3, 0.5, 0.4, 0.2]), K.real_dtype)
    value, gradient = tq.value_and_grad(energy)(x)
    strings = list(hamiltonian.terms)[:12]
    circuit = tq.templates.qaoa(graph, [0.3, 0.5], [0.4, 0.2])
    angles = K.asarray(np.linspace(0.1, 2.9, SLICE_QUBITS * SLICE_DEPTH), K.real_dtype)
    with tq.use_memory_limit(SLICE_BUDGET):
        slices = tq.rehearse(scrambled_energy, angles).slices
        sliced_value, sliced_gradient = tq.value_and_grad(scrambled_energy)(angles)
    mean, error = tq.noise.trajectory_expectation(noisy_circuit(), tq.PauliSum([(1.0, "IIZZII")]), 64,
                                                  seed=11)
    batch = K.asarray(np.array([[0.3, 0.5, 0.4, 0.2], [0.1, 0.2, 0.3, 0.4], [0.5, 0.4, 0.3, 0.2]]),
                      K.real_dtype)
    batch_values, batch_gradients = tq.vectorize_or_fallback(tq.value_and_grad(energy))(batch)
    steps = tq.optimize.minimize(energy, np.array([0.3, 0.5, 0.4, 0.2]), method="adam", maxiter=3,
                                 progress=False)
    return {"energy": as_list(K, value), "gradient": as_list(K, gradient),
            "pauli": as_list(K, circuit.pauli_expectations(strings + ["I" * QAOA_NODES])),
            "slices": slices, "sliced": as_list(K, sliced_value),
            "sliced gradient": as_list(K, sliced_gradient),
            "batch": as_list(K, batch_values), "batch gradient": as_list(K, batch_gradients),
            "trajectories": [mean, error], "adam": np.asarray(steps.x, dtype=float).tolist(),
            "adam fun": float(steps.fun)}


def disagreements(comm) -> dict:
    """A circuit that differs between the ranks, and a rank (the last) whose share fails."""
    from tyxonq.circuit.contraction import evaluation

    graph = nx.random_regular_graph(3, QAOA_NODES, seed=7)
    energy, _ = qaoa_energy(graph)
    found = {}
    try:
        tq.value_and_grad(energy)(np.array([0.3, 0.5, 0.4, 0.2 + 0.1 * comm.rank]))
        found["mismatch"] = None
    except tq.distributed.DistributedMismatchError as error:
        found["mismatch"] = str(error)
    if comm.rank == comm.size - 1:
        def failing(*args, **kwargs):
            raise RuntimeError(f"rank {comm.rank}'s share failed on purpose")
        evaluation._values_and_gradients = failing
    try:
        tq.value_and_grad(energy)(np.array([0.3, 0.5, 0.4, 0.2]))
        found["failure"] = None
    except Exception as error:  # noqa: BLE001 - the test reads which error each rank saw
        found["failure"] = f"{type(error).__name__}: {error}"
    return found


def main(engine: str, mode: str = "work") -> None:
    comm = tq.distributed.initialize(engine, timeout=120)
    if mode == "crash":
        tq.set_backend(BACKENDS[engine])
        if comm.rank == 1:
            raise RuntimeError("rank 1 stops before the collective")
        comm.all_reduce_sum(np.ones(1))
        return
    result = {"size": comm.size, **workloads(BACKENDS[engine])}
    tq.set_backend("numpy")
    result.update(samples())
    result.update(disagreements(comm))
    for rank in range(comm.size):  # one rank at a time: the ranks may share one output pipe
        if rank == comm.rank:
            sys.stdout.write(f"RESULT {comm.rank} " + json.dumps(result) + "\n")
            sys.stdout.flush()
        comm.barrier()
    tq.distributed.finalize()


if __name__ == "__main__":
    main(*sys.argv[1:])
