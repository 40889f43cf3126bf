"""Qiskit programs on tyxonq: change one import.

A Qiskit V2 program written for the reference primitives runs on tyxonq by changing the import:

    from qiskit.primitives import StatevectorEstimator as Estimator   # before
    from tyxonq.qiskit import EstimatorV2 as Estimator                # after

This script runs the same energy scan (an ``efficient_su2`` ansatz, a transverse-field Ising
Hamiltonian as a ``SparsePauliOp``, a batch of parameter sets broadcast against the Hamiltonian and
its terms) with both estimators and checks that they agree; then samples a dynamic circuit
(teleportation with mid-circuit measurements and ``if_test`` corrections) with
``tyxonq.qiskit.SamplerV2``, and runs a circuit through ``transpile`` and Qiskit's
``BackendSamplerV2`` on ``tyxonq.qiskit.Backend``.

Run:  python examples-ng/qiskit_primitives.py [--quick]   (needs: pip install "tyxonq[qiskit]")
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def ising(num_qubits: int):
    """``-sum Z_i Z_{i+1} - sum X_i`` as a ``SparsePauliOp``."""
    from qiskit.quantum_info import SparsePauliOp

    terms = [("ZZ", [i, i + 1], -1.0) for i in range(num_qubits - 1)]
    terms += [("X", [i], -1.0) for i in range(num_qubits)]
    return SparsePauliOp.from_sparse_list(terms, num_qubits)


def energy_scan(Estimator, num_qubits: int, sets: int):
    """The program, as written for any V2 estimator: energies and term values of many parameter sets."""
    from qiskit.circuit.library import efficient_su2

    ansatz = efficient_su2(num_qubits, reps=2)
    hamiltonian = ising(num_qubits)
    values = np.random.default_rng(0).uniform(-np.pi, np.pi, (sets, 1, ansatz.num_parameters))
    observables = [[hamiltonian] + [term for term in hamiltonian[:3]]]  # (1, 4): H and three of its terms
    result = Estimator().run([(ansatz, observables, values)]).result()[0]
    return result.data.evs  # shape (sets, 4)


def teleportation():
    from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister

    q, m, out = QuantumRegister(3, "q"), ClassicalRegister(2, "m"), ClassicalRegister(1, "out")
    qc = QuantumCircuit(q, m, out)
    qc.ry(0.9, 0)                 # the state to send: P(1) = sin(0.45)^2
    qc.h(1)
    qc.cx(1, 2)
    qc.cx(0, 1)
    qc.h(0)
    qc.measure([0, 1], [m[0], m[1]])
    with qc.if_test((m[1], 1)):
        qc.x(2)
    with qc.if_test((m[0], 1)):
        qc.z(2)
    qc.measure(2, out[0])
    return qc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args()
    try:
        from qiskit import transpile
        from qiskit.primitives import BackendSamplerV2, StatevectorEstimator
    except ImportError:
        print('this example needs Qiskit: pip install "tyxonq[qiskit]"')
        return 1
    from tyxonq.qiskit import Backend, EstimatorV2, SamplerV2

    num_qubits, sets = (4, 4) if args.quick else (12, 32)
    timings = {}
    engines = {"StatevectorEstimator": StatevectorEstimator, "tyxonq EstimatorV2": EstimatorV2}
    for name, Estimator in engines.items():
        start = time.perf_counter()
        evs = energy_scan(Estimator, num_qubits, sets)
        timings[name] = (time.perf_counter() - start, evs)
    (_, reference), (_, ours) = timings.values()
    deviation = float(np.abs(ours - reference).max())
    print(f"energy scan: {sets} parameter sets x 4 observables on {num_qubits} qubits, "
          f"lowest energy {ours[:, 0].min():.6f}, largest deviation {deviation:.1e}")
    for name, (seconds, _) in timings.items():
        print(f"  {name:22s} {seconds:8.3f} s")
    if deviation > 1e-10:
        print("FAIL: the estimators disagree")
        return 1

    shots = 4000
    data = SamplerV2(seed=1).run([teleportation()], shots=shots).result()[0].data
    p1 = data.out.get_counts().get("1", 0) / shots
    print(f"teleported P(1) = {p1:.3f} (exact {np.sin(0.45) ** 2:.3f}); corrections m: {data.m.get_counts()}")
    if abs(p1 - np.sin(0.45) ** 2) > 5 * np.sqrt(0.25 / shots):
        print("FAIL: teleportation")
        return 1

    backend = Backend()
    circuit = teleportation()
    counts = BackendSamplerV2(backend=backend).run([transpile(circuit, backend)], shots=1000).result()[0]
    print(f"transpile + BackendSamplerV2 on tyxonq.qiskit.Backend: out {counts.data.out.get_counts()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
