"""One energy, four gradient methods side by side: values, agreement and time.

The objective (a hardware-efficient ansatz on a Heisenberg chain) is written once;
`tq.value_and_grad(objective, method=...)` differentiates it by gate-by-gate autograd (PyTorch),
the adjoint method (on NumPy by traced parameters; on PyTorch inside autograd, each energy one
node whose backward pass is the adjoint sweep), the parameter-shift rule, and central finite
differences; then the same energy simulated as a matrix-product state (`tq.MPSCircuit`), whose
NumPy gradient is the adjoint method through the MPS (and parameter shift on request).

Run:  python examples-ng/gradient_methods.py [--quick] [--sites 8] [--layers 4]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 sites, 2 layers (used by the tests)")
    parser.add_argument("--sites", type=int, default=8)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args(argv)
    sites, layers = (4, 2) if args.quick else (args.sites, args.layers)
    hamiltonian = tq.hamiltonians.heisenberg(sites, jz=0.5)
    rotations = ("ry", "rz")

    def energy(params):
        circuit = tq.templates.hardware_efficient(sites, params, layers, rotations)
        return circuit.expectation(hamiltonian)

    def mps_energy(params):
        circuit = tq.MPSCircuit(sites)
        circuit.append(tq.templates.hardware_efficient(sites, params, layers, rotations))
        return circuit.expectation(hamiltonian)

    size = tq.templates.hardware_efficient_size(sites, layers, rotations)
    params = np.random.default_rng(5).uniform(-np.pi, np.pi, size)
    runs = [("autograd", "pytorch", energy), ("adjoint", "pytorch", energy), ("adjoint", "numpy", energy),
            ("parameter-shift", "numpy", energy), ("finite-difference", "numpy", energy),
            ("adjoint", "numpy, MPS", mps_energy), ("parameter-shift", "numpy, MPS", mps_energy)]
    results = {}
    for method, backend, objective in runs:
        label = f"{method} ({backend})"
        try:
            K = tq.set_backend(backend.split(",")[0])
        except ImportError as missing:
            print(f"  skipping {label}: {missing}")
            continue
        value_and_grad = tq.value_and_grad(objective, method=method)
        value_and_grad(params)  # warm-up: plans and library start-up
        start = time.perf_counter()
        value, gradient = value_and_grad(params)
        elapsed = time.perf_counter() - start
        results[label] = (float(K.to_numpy(value)), np.asarray(K.to_numpy(gradient)), elapsed)

    reference = results.get("autograd (pytorch)", results["adjoint (numpy)"])[1]
    print(f"Heisenberg chain, {sites} sites, {layers} layers, {size} parameters")
    print(f"  {'method':<28} {'energy':>16} {'max |grad - reference|':>24} {'time':>10}")
    failures = 0
    for method, (value, gradient, elapsed) in results.items():
        difference = float(np.max(np.abs(gradient - reference)))
        bound = 1e-6 if method.startswith("finite-difference") else 1e-10
        failures += difference > bound
        print(f"  {method:<28} {value:>16.12f} {difference:>24.2e} {elapsed * 1e3:>8.1f} ms")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
