"""The sharded-state workload on the ranks of a launcher (or one process), timed on every rank;
rank 0 prints ``RESULT <json>``: the energy, the gradient's checksum and norm (for the driver's
check), times, each rank's peak memory and what each rank sends.

``python sharded_worker.py ENGINE BACKEND QUBITS DEPTH``: ENGINE ``torch``, ``mpi``, ``jax`` or
``none`` (one process: the state swept whole). With more than one rank each rank's memory limit
is set below the whole state (:data:`RANK_SHARE` of it), so the state is sharded. Driven by
``benchmarks/sharded_rows.py``; the peers (Aer, qulacs) by ``--peer``.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

#: each rank's memory limit, as a share of one state vector (a shard and half of one fit)
RANK_SHARE = 0.8
TERMS = 50


def circuit_spec(qubits: int, depth: int) -> tuple[list, np.ndarray]:
    """Layers of RY and RZ with random angles on every qubit and CX on alternate nearest-neighbour
    pairs, plus a CZ between the first and last qubits every fourth layer: ``(gates, angles)``."""
    angles = np.random.default_rng(5).uniform(-np.pi, np.pi, 2 * qubits * depth)
    gates = []
    for layer in range(depth):
        for q in range(qubits):
            index = 2 * (layer * qubits + q)
            gates += [("ry", (q,), index), ("rz", (q,), index + 1)]
        gates += [("cx", (q, q + 1), None) for q in range(layer % 2, qubits - 1, 2)]
        if layer % 4 == 3:
            gates.append(("cz", (0, qubits - 1), None))
    return gates, angles


def terms(qubits: int) -> list[tuple[float, str]]:
    """50 random Pauli strings of weight 1-4 on random qubits."""
    rng = np.random.default_rng(9)
    found = []
    for _ in range(TERMS):
        letters = ["I"] * qubits
        for q in rng.choice(qubits, size=int(rng.integers(1, 5)), replace=False):
            letters[int(q)] = str(rng.choice(list("XYZ")))
        found.append((float(rng.normal()), "".join(letters)))
    return found


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def tyxonq_run(engine: str, backend: str, qubits: int, depth: int) -> None:
    import tyxonq as tq
    from tyxonq.circuit.statevector.sweep import sweep_state
    from tyxonq.operators.pauli_action import pauli_sum_expectation

    comm = tq.distributed.initialize(None if engine == "none" else engine)
    K = tq.set_backend(backend)
    gates, angles = circuit_spec(qubits, depth)
    h = tq.PauliSum(terms(qubits), n_qubits=qubits)

    def build(x):
        c = tq.Circuit(qubits)
        for name, wires, index in gates:
            getattr(c, name)(*wires, *(() if index is None else (x[index],)))
        return c

    energy = lambda x: build(x).expectation(h)  # noqa: E731
    x = K.asarray(angles, K.real_dtype)
    before = peak_bytes()
    if comm.size > 1:
        tq.set_memory_limit(int(RANK_SHARE * 2 ** qubits * 16))
        energy_report = tq.rehearse(energy, x).sharding
        gradient_report = tq.rehearse(tq.value_and_grad(energy), x).sharding
        sent = {"energy": energy_report.bytes_sent, "gradient": gradient_report.bytes_sent,
                "swaps": energy_report.swaps, "global qubits": list(energy_report.global_qubits)}
    else:
        sent = {"energy": 0, "gradient": 0, "swaps": 0, "global qubits": []}
    comm.barrier()
    start = time.perf_counter()
    if comm.size > 1:
        value = float(K.to_numpy(energy(x)))
    else:  # one process: the state swept whole, the sum read from it
        state = sweep_state(K, qubits, build(angles).operations)
        value = float(np.real(K.to_numpy(pauli_sum_expectation(K, state, h))))
        del state
    energy_seconds = time.perf_counter() - start
    energy_peak = peak_bytes()
    comm.barrier()
    start = time.perf_counter()
    gradient_value, gradient = tq.value_and_grad(energy)(x)
    gradient_seconds = time.perf_counter() - start
    gradient = np.asarray(K.to_numpy(gradient), dtype=float)
    peaks = comm.all_gather(np.array([float(peak_bytes())]))[:, 0].tolist()
    energy_peaks = comm.all_gather(np.array([float(energy_peak)]))[:, 0].tolist()
    if comm.rank == 0:
        record = {"energy": value, "gradient value": float(K.to_numpy(gradient_value)),
                  "gradient sum": float(gradient.sum()), "gradient head": gradient[:8].tolist(),
                  "energy_s": energy_seconds, "gradient_s": gradient_seconds, "peak_bytes": peaks,
                  "energy_peak_bytes": energy_peaks, "start_bytes": before, "sent": sent, "ranks": comm.size}
        sys.stdout.write("RESULT " + json.dumps(record) + "\n")
        sys.stdout.flush()
    comm.barrier()
    tq.distributed.finalize()


def aer_run(qubits: int, depth: int) -> dict:
    from qiskit import QuantumCircuit
    from qiskit.quantum_info import SparsePauliOp
    from qiskit_aer.primitives import EstimatorV2

    gates, angles = circuit_spec(qubits, depth)
    qc = QuantumCircuit(qubits)
    for name, wires, index in gates:
        getattr(qc, name)(*(() if index is None else (float(angles[index]),)), *wires)
    observable = SparsePauliOp.from_list([(string[::-1], weight) for weight, string in terms(qubits)])
    estimator = EstimatorV2(options={"backend_options": {"method": "statevector", "max_parallel_threads": 1}})
    start = time.perf_counter()
    value = float(estimator.run([(qc, observable)]).result()[0].data.evs)
    return {"energy": value, "energy_s": time.perf_counter() - start, "peak_bytes": [peak_bytes()]}


def qulacs_run(qubits: int, depth: int) -> dict:
    from qulacs import GeneralQuantumOperator, ParametricQuantumCircuit, QuantumState

    gates, angles = circuit_spec(qubits, depth)
    circuit = ParametricQuantumCircuit(qubits)
    wire = lambda q: qubits - 1 - q  # noqa: E731 - qulacs's qubit 0 is the least significant bit
    for name, wires, index in gates:
        if name in ("ry", "rz"):  # qulacs rotates by exp(+i θ P / 2)
            getattr(circuit, f"add_parametric_R{name[1].upper()}_gate")(wire(wires[0]), -float(angles[index]))
        elif name == "cx":
            circuit.add_CNOT_gate(wire(wires[0]), wire(wires[1]))
        else:
            circuit.add_CZ_gate(wire(wires[0]), wire(wires[1]))
    observable = GeneralQuantumOperator(qubits)
    for weight, string in terms(qubits):
        text = " ".join(f"{letter} {wire(q)}" for q, letter in enumerate(string) if letter != "I")
        observable.add_operator(weight, text)
    state = QuantumState(qubits)
    start = time.perf_counter()
    circuit.update_quantum_state(state)
    value = float(np.real(observable.get_expectation_value(state)))
    energy_seconds = time.perf_counter() - start
    del state
    start = time.perf_counter()
    gradient = -np.asarray(circuit.backprop(observable))  # d/dθ of our angle = -d/d(qulacs angle)
    return {"energy": value, "energy_s": energy_seconds, "gradient_s": time.perf_counter() - start,
            "gradient sum": float(gradient.sum()), "gradient head": gradient[:8].tolist(),
            "peak_bytes": [peak_bytes()]}


if __name__ == "__main__":
    if sys.argv[1] == "--peer":
        peer, qubits, depth = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        record = (aer_run if peer == "aer" else qulacs_run)(qubits, depth)
        sys.stdout.write("RESULT " + json.dumps(record) + "\n")
    else:
        tyxonq_run(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
