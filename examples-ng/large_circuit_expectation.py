"""A 50-qubit shallow circuit: one amplitude and local expectations through the light cone.

A 2^50 state would need 16 PiB; neither result builds it. The amplitude contracts the whole
(shallow) network with every output leg closed; <Z_q> keeps only the gates in the backward light
cone of qubit q. Both are checked against a small circuit holding just that light cone. Then
<Z_q> is compiled (``circuit.compile``) and scanned over new angles, each call checked against
the plain call on ``with_parameters``.

Run:  python examples-ng/large_circuit_expectation.py [--quick] [--qubits 50] [--depth 10]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 qubits, depth 6 (tests)")
    parser.add_argument("--qubits", type=int, default=50)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch", "cupynumeric"])
    args = parser.parse_args(argv)
    n, depth = (30, 6) if args.quick else (args.qubits, args.depth)
    K = tq.set_backend(args.backend)
    params = np.random.default_rng(0).uniform(0, np.pi, n * depth)
    circuit = tq.templates.brickwork(n, params, depth)

    start = time.perf_counter()
    amplitude = complex(K.to_numpy(circuit.amplitude("0" * n)))
    amplitude_time = time.perf_counter() - start
    middle = n // 2
    start = time.perf_counter()
    z_middle = float(K.to_numpy(circuit.expectation_ps(z=[middle])))
    z_time = time.perf_counter() - start

    # the light cone of qubit `middle` after `depth` brickwork layers: qubits middle-depth..middle+depth
    low, high = max(0, middle - depth), min(n - 1, middle + depth)
    window = tq.templates.brickwork(n, params, depth, window=(low, high))
    probabilities = np.asarray(K.to_numpy(window.probability()))
    bits = (np.arange(2 ** window.num_qubits) >> (high - middle)) & 1
    z_window = float(np.sum(probabilities * (1 - 2 * bits)))

    print(f"{n}-qubit brickwork circuit, depth {depth}, on {K.name}")
    print(f"  <0...0|psi>      {amplitude:.6e}   ({amplitude_time * 1e3:.1f} ms, first call)")
    print(f"  <Z_{middle}>          {z_middle:.12f}   ({z_time * 1e3:.1f} ms, first call)")
    print(f"  light-cone check {z_window:.12f}   (dense {window.num_qubits}-qubit window)")

    # plan once, call many: the compiled <Z_middle> binds new angles straight into its contraction
    z_of = circuit.compile("expectation_ps", z=[middle])
    scan = [np.random.default_rng(seed).uniform(0, np.pi, n * depth) for seed in range(1, 11)]
    start = time.perf_counter()
    scanned = [float(K.to_numpy(z_of(angles))) for angles in scan]
    per_call = (time.perf_counter() - start) / len(scan)
    plain = [float(K.to_numpy(circuit.with_parameters(angles).expectation_ps(z=[middle]))) for angles in scan]
    deviation = max(abs(a - b) for a, b in zip(scanned, plain))
    print(f"  compiled <Z_{middle}> over {len(scan)} angle sets: {per_call * 1e3:.2f} ms a call "
          f"(direct: {z_of.direct}), largest deviation from the plain call {deviation:.1e}")
    return 0 if abs(z_window - z_middle) < 1e-10 and deviation < 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
