"""One script from a laptop to many GPUs: NumPy here, cuPyNumeric on Legate with one switch.

The workload -- the state of a 20-qubit, 10-layer circuit and the energy and exact (adjoint)
gradient of a 12-qubit TFIM ansatz -- is written once against tyxonq's public API. Only
`--backend` changes between runs; nothing on the evaluation path leaves the backend (no
`to_numpy`, no `.item()`, no Python loops over array elements), so Legate can partition the work:

    python examples-ng/cupynumeric_at_scale.py                          # NumPy, one process
    python examples-ng/cupynumeric_at_scale.py --backend cupynumeric    # cuPyNumeric, defaults
    legate --gpus 4 examples-ng/cupynumeric_at_scale.py --backend cupynumeric
    legate --nodes 2 --gpus 8 --launcher mpirun examples-ng/cupynumeric_at_scale.py --backend cupynumeric

Verified here: NumPy, and cuPyNumeric on one CPU (through the test session's stand-in driver, see
tests/cupynumeric_ci/README.md). Not verified here: GPUs and multiple nodes.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="12 and 6 qubits (tests)")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "cupynumeric", "pytorch"])
    args = parser.parse_args(argv)
    n_state, layers, n_energy, ansatz_layers = (12, 4, 6, 2) if args.quick else (20, 10, 12, 4)

    K = tq.set_backend(args.backend)  # the only line that differs between NumPy and cuPyNumeric
    rng = np.random.default_rng(1)
    circuit = tq.templates.rotation_ladder(n_state, rng.uniform(0, 2 * np.pi, 2 * n_state * layers),
                                           layers)

    hamiltonian = tq.hamiltonians.tfim(n_energy)

    def energy(params):
        return tq.templates.hardware_efficient(n_energy, params, ansatz_layers,
                                               ("ry", "rz")).expectation(hamiltonian)

    size = tq.templates.hardware_efficient_size(n_energy, ansatz_layers, ("ry", "rz"))
    params = rng.uniform(0, 2 * np.pi, size)
    value_and_grad = tq.value_and_grad(energy)
    print(f"backend {K.name} (device {K.capabilities.device}, distributed: {K.capabilities.distributed})")
    for label, run in ((f"state, {n_state} qubits x {layers} layers", circuit.state),
                       (f"energy + gradient, {n_energy} qubits, {size} parameters",
                        lambda: value_and_grad(params))):
        timings = []
        for _ in range(3):
            start = time.perf_counter()
            result = run()
            if isinstance(result, tuple):
                K.to_numpy(result[1])  # wait for the (asynchronous) backend to finish
            else:
                K.to_numpy(result[:1])
            timings.append(time.perf_counter() - start)
        print(f"  {label:<44} first {timings[0]:7.3f} s   best of the next two {min(timings[1:]):7.3f} s")
    value, gradient = value_and_grad(params)
    norm = float(np.linalg.norm(K.to_numpy(gradient)))
    print(f"  energy {float(K.to_numpy(value)):.12f}   |gradient| {norm:.12f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
