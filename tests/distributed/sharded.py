"""A state vector sharded across the ranks of a launcher's run: a 22-qubit depth-24 random
circuit under a per-rank memory limit below its state (64 MiB), so that every result takes the
sharded state (noisy trajectories of it too). Every rank prints ``RESULT <rank> <json>``
(``tests/test_sharded_launchers.py`` compares them with one unrestricted process).

``python sharded.py ENGINE [MODE]``: ENGINE ``torch``, ``mpi``, ``jax`` (the ``JAX_*`` variables),
``jax-self`` (the script calls ``jax.distributed.initialize(...)`` itself with the coordinator,
count and rank from ``SHARDED_TEST_*`` variables, as a JAX user would, and
``tq.distributed.initialize()`` finds that runtime) or ``none`` (one process, no limit); MODE
``work`` (default) or ``fail`` (the last rank raises inside its sweep while the others wait in an
exchange: the run must end, not hang).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

import tyxonq as tq

#: each engine's backend; a self-started JAX runtime shares NumPy's work (what it tests is joining)
BACKENDS = {"torch": "pytorch", "mpi": "numpy", "jax": "jax", "jax-self": "numpy", "none": "numpy"}
QUBITS, DEPTH = 22, 24
RANK_MEMORY = "48 MiB"  # one 22-qubit state: 64 MiB
MARGINAL = [0, 7, 21]


def random_circuit(angles) -> tq.Circuit:
    """``DEPTH`` layers of random RY and RZ angles on every qubit and CX on alternate
    nearest-neighbour pairs (a brickwork), with a CZ between the first and last qubits every
    fourth layer."""
    c = tq.Circuit(QUBITS)
    for layer in range(DEPTH):
        for q in range(QUBITS):
            c.ry(q, theta=angles[2 * (layer * QUBITS + q)]).rz(q, theta=angles[2 * (layer * QUBITS + q) + 1])
        for q in range(layer % 2, QUBITS - 1, 2):
            c.cx(q, q + 1)
        if layer % 4 == 3:
            c.cz(0, QUBITS - 1)
    return c


def hamiltonian() -> tq.PauliSum:
    """12 random Pauli strings on every qubit (weights 1-4) and nearest-neighbour ZZ."""
    rng = np.random.default_rng(7)
    terms = []
    for _ in range(12):
        string = ["I"] * QUBITS
        for q in rng.choice(QUBITS, size=int(rng.integers(1, 5)), replace=False):
            string[int(q)] = str(rng.choice(list("XYZ")))
        terms.append((float(rng.normal()), "".join(string)))
    terms += [(0.5, "I" * q + "ZZ" + "I" * (QUBITS - q - 2)) for q in range(0, QUBITS - 1, 3)]
    return tq.PauliSum(terms, n_qubits=QUBITS)


ANGLES = np.random.default_rng(11).uniform(-np.pi, np.pi, 2 * QUBITS * DEPTH)


def noisy_circuit() -> tq.Circuit:
    """The random circuit with amplitude damping, depolarising and phase damping on three
    qubits (a global one among them) and a last CX: its trajectories, one at a time (the one
    process too: :data:`~tyxonq.circuit.statevector.trajectories.TRAJECTORY_BATCH_ENTRIES` is
    lowered below, so its draws are those the ranks make)."""
    c = random_circuit(ANGLES)
    return c.amplitude_damping(3, gamma=0.3).depolarizing(0, p=0.2).phase_damping(QUBITS - 1, gamma=0.4) \
        .cx(0, QUBITS - 1).amplitude_damping(QUBITS - 1, gamma=0.5)


def results(K) -> dict:
    h = hamiltonian()
    strings = [string for _, string in h][:8]
    angles = K.asarray(ANGLES, K.real_dtype)
    c = random_circuit(ANGLES)
    energy = lambda x: random_circuit(x).expectation(h)  # noqa: E731
    value, gradient = tq.value_and_grad(energy)(angles)
    report = tq.rehearse(tq.value_and_grad(energy), angles)
    return {"pauli": np.asarray(K.to_numpy(c.pauli_expectations(strings)), dtype=float).tolist(),
            "energy": float(K.to_numpy(c.expectation(h))),
            "marginal": np.asarray(K.to_numpy(c.marginal_probability(MARGINAL)), dtype=float).tolist(),
            "samples": np.asarray(K.to_numpy(c.sample(2000, seed=5, format="indices"))).tolist(),
            "amplitude": complex(K.to_numpy(c.amplitude("01" * (QUBITS // 2)))),
            "gradient value": float(K.to_numpy(value)),
            "gradient": np.asarray(K.to_numpy(gradient), dtype=float).tolist(),
            "trajectories": tq.noise.trajectory_expectation(noisy_circuit(), h, 3, seed=4),
            "routes": list(report.routes),
            "sharding": None if report.sharding is None else str(report.sharding)}


def join(engine: str):
    if engine == "jax-self":
        import jax

        jax.distributed.initialize(coordinator_address=os.environ["SHARDED_TEST_COORDINATOR"],
                                   num_processes=int(os.environ["SHARDED_TEST_PROCESSES"]),
                                   process_id=int(os.environ["SHARDED_TEST_PROCESS_ID"]))
        return tq.distributed.initialize()  # finds the runtime started above
    return tq.distributed.initialize(engine, timeout=60)


def main(engine: str, mode: str = "work") -> None:
    from tyxonq.circuit.statevector import trajectories

    trajectories.TRAJECTORY_BATCH_ENTRIES = 2 ** QUBITS  # one trajectory at a time everywhere
    comm = join(engine)
    K = tq.set_backend(BACKENDS[engine] if mode == "work" else "numpy")
    if engine != "none":
        tq.set_memory_limit(RANK_MEMORY)
    if mode == "fail" and comm.rank == comm.size - 1:
        from tyxonq.circuit.statevector import sharded

        def fails(*args, **kwargs):
            raise RuntimeError(f"rank {comm.rank} fails inside its sweep")
        sharded.apply_sharded_block = fails
    found = {"size": comm.size, "engine": comm.name, **results(K)}
    for turn in range(comm.size):  # one rank at a time: the ranks may share one output pipe
        if turn == comm.rank:
            text = json.dumps(found, default=lambda z: [z.real, z.imag])
            sys.stdout.write(f"RESULT {comm.rank} {text}\n")
            sys.stdout.flush()
        comm.barrier()
    tq.distributed.finalize()


if __name__ == "__main__":
    main(*sys.argv[1:])
