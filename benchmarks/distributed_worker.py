"""One distributed benchmark workload on the ranks of a launcher (or one process), timed on every
rank; rank 0 prints ``RESULT <json>`` with the result (for the driver's check) and the times.

``python distributed_worker.py ENGINE BACKEND WORKLOAD REPEAT [SIZE]``; ENGINE ``torch``,
``mpi``, ``jax`` or ``none``; WORKLOAD one of :data:`WORKLOADS`. Driven by
``benchmarks/distributed_rows.py``.
"""

from __future__ import annotations

import json
import sys
import time

import networkx as nx
import numpy as np

import tyxonq as tq

#: workload -> what it computes
WORKLOADS = {
    "qaoa_energy_gradient": "100-node 3-regular MaxCut QAOA, p = 3: energy and exact gradient "
                            "(150 light-cone terms shared between the ranks; JAX: under jax.jit)",
    "noisy_trajectories": "64 Monte-Carlo trajectories of a 16-qubit brickwork (4 layers) with "
                          "depolarizing noise after every CZ: <Z_0 Z_1> (trajectories shared)",
    "sliced_amplitude": "<0|C|0> of a 7x7-lattice circuit (H, then 10 layers of random U3 and iSWAP "
                        "on alternating bonds) planned by tq.use_contractor('cotengra') (the thorough "
                        "hyper-optimised search, kahypar; width 21, 8.0e8 flops) under a 16 MiB memory "
                        "budget: 8 slices of width 18 (8.1e8 flops), shared",
}


def qaoa(K, size: int):
    graph = nx.random_regular_graph(3, size, seed=3)
    hamiltonian = tq.hamiltonians.maxcut(graph)

    def energy(angles):
        return tq.templates.qaoa(graph, angles[:3], angles[3:]).expectation(hamiltonian, method="lightcone")

    angles = K.asarray(np.array([0.3, 0.55, 0.7, 0.55, 0.4, 0.2]), K.real_dtype)
    gradient = tq.value_and_grad(energy)
    if K.capabilities.compiles_whole_functions:  # JAX: compiled, as JAX users run it
        gradient = K.jit(gradient)

    def run():
        value, grad = gradient(angles)
        return [float(K.to_numpy(value))] + np.asarray(K.to_numpy(grad), dtype=float).tolist()
    return run


def noisy_circuit(n: int) -> tq.Circuit:
    c = tq.Circuit(n)
    for layer in range(4):
        for q in range(n):
            c.ry(q, theta=0.2 + 0.1 * q + 0.3 * layer)
        for q in range(layer % 2, n - 1, 2):
            c.cz(q, q + 1).depolarizing(q, p=0.02).depolarizing(q + 1, p=0.02)
    return c


def trajectories(K, size: int):
    circuit = noisy_circuit(size)
    observable = tq.PauliSum([(1.0, "ZZ" + "I" * (size - 2))])

    def run():
        return list(tq.noise.trajectory_expectation(circuit, observable, 64, seed=7))
    return run


def lattice_circuit(side: int, depth: int) -> tq.Circuit:
    """Random single-qubit rotations and CZ on the bonds of a side x side lattice, alternating
    horizontal and vertical bonds (as in Google's supremacy-style circuits, smaller)."""
    rng = np.random.default_rng(11)
    n = side * side
    c = tq.Circuit(n)
    for q in range(n):
        c.h(q)
    for layer in range(depth):
        for q in range(n):
            c.u(q, *rng.uniform(0, np.pi, 3))
        horizontal = layer % 2 == 0
        offset = (layer // 2) % 2
        for r in range(side):
            for col in range(side):
                if horizontal and col % 2 == offset and col + 1 < side:
                    c.iswap(r * side + col, r * side + col + 1)
                if not horizontal and r % 2 == offset and r + 1 < side:
                    c.iswap(r * side + col, (r + 1) * side + col)
    return c


def sliced(K, size: int):
    circuit = lattice_circuit(size, 10 if size >= 7 else 8)
    budget = "16 MiB" if size >= 7 else "24 KiB"

    def run():
        with tq.use_contractor("cotengra"), tq.use_memory_limit(budget):
            value = complex(K.to_numpy(circuit.amplitude("0" * size * size)))
        return [value.real, value.imag]
    return run


BUILDERS = {"qaoa_energy_gradient": (qaoa, 100), "noisy_trajectories": (trajectories, 16),
            "sliced_amplitude": (sliced, 7)}


def main(engine: str, backend: str, workload: str, repeat: str, size: str | None = None) -> None:
    comm = tq.distributed.initialize(None if engine == "none" else engine)
    K = tq.set_backend(backend)
    build, default = BUILDERS[workload]
    run = build(K, int(size) if size else default)
    clock = time.perf_counter()
    result = run()  # warm-up: plans (searched once, then cached) and first calls
    warmup = time.perf_counter() - clock
    times = []
    for _ in range(int(repeat)):
        comm.barrier()
        clock = time.perf_counter()
        run()
        times.append(time.perf_counter() - clock)
    if comm.rank == 0:  # every call ends in an all-reduce: rank 0's time is the run's
        print("RESULT " + json.dumps({"ranks": comm.size, "engine": comm.name, "backend": K.name,
                                      "result": result, "times": times,
                                      "warmup": warmup}), flush=True)
    comm.barrier()
    tq.distributed.finalize()


if __name__ == "__main__":
    main(*sys.argv[1:])
