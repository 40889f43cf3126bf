"""Circuits in and out: read an OpenQASM file, simulate it, write it back, compare with Qiskit.

Reads examples-ng/data/qft5.qasm (a five-qubit quantum Fourier transform of |10110>, measured at
the end), prints its most likely outcomes and a sample, writes the circuit as OpenQASM 2 and 3,
reads both back and checks that they prepare the same state, and checks the state against
Qiskit's own Statevector (Qiskit numbers amplitudes little-endian: tyxonq's state equals
``Statevector(qc).reverse_qargs()``). Then it imports a 20-qubit circuit from Qiskit's circuit
library (EfficientSU2 with random angles) and times the import and a TFIM energy (skipped with
--quick).

Run:  python examples-ng/qasm_roundtrip.py [--quick]   (needs: pip install "tyxonq[qiskit]")
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

import tyxonq as tq

DATA = pathlib.Path(__file__).parent / "data" / "qft5.qasm"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 20-qubit import timing")
    args = parser.parse_args()
    try:
        from qiskit import qasm2
        from qiskit.quantum_info import Statevector
    except ImportError:
        print('this example needs Qiskit: pip install "tyxonq[qiskit]"')
        return 1
    K = tq.set_backend("numpy")

    circuit = tq.Circuit.from_openqasm_file(DATA)
    state = K.to_numpy(circuit.state())
    probabilities = np.abs(state) ** 2
    print(f"{DATA.name}: {circuit.num_qubits} qubits, {len(circuit.operations)} gates")
    for index in np.argsort(probabilities)[::-1][:4]:
        print(f"  |{index:05b}>  probability {probabilities[index]:.4f}")
    print("  1000 samples, most common:", sorted(circuit.sample(1000, seed=7).items(),
                                                 key=lambda kv: -kv[1])[:3])

    failures = 0
    for version in (2, 3):
        text = circuit.to_openqasm(version)
        again = K.to_numpy(tq.Circuit.from_openqasm(text).state())
        deviation = float(np.max(np.abs(again - state)))
        ok = deviation < 1e-12
        failures += not ok
        print(f"OpenQASM {version}: {len(text.splitlines())} lines written, read back: "
              f"max deviation {deviation:.1e} {'ok' if ok else 'FAIL'}")

    theirs = Statevector(qasm2.loads(DATA.read_text(), custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
                         .remove_final_measurements(inplace=False)).reverse_qargs().data
    deviation = float(np.max(np.abs(theirs - state)))
    failures += deviation >= 1e-10
    print(f"against Qiskit's Statevector: max deviation {deviation:.1e} "
          f"{'ok' if deviation < 1e-10 else 'FAIL'}")

    if not args.quick:
        from qiskit.circuit.library import efficient_su2

        ansatz = efficient_su2(20, reps=3)
        values = np.random.default_rng(1).uniform(-np.pi, np.pi, ansatz.num_parameters)
        start = time.perf_counter()
        imported = tq.Circuit.from_qiskit(ansatz, values)
        converted = time.perf_counter() - start
        start = time.perf_counter()
        energy = float(imported.expectation(tq.hamiltonians.tfim(20)))
        simulated = time.perf_counter() - start
        print(f"efficient_su2(20, reps=3): {len(imported.operations)} gates, {ansatz.num_parameters} "
              f"parameters; import {converted * 1e3:.1f} ms, TFIM energy {energy:.6f} in "
              f"{simulated * 1e3:.0f} ms (first call, planning included)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
