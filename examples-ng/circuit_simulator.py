"""The circuit simulator at three sizes: a dense state, a 50-qubit light cone, a gradient.

1. The state of a 20-qubit, 10-layer circuit (RX and RZ on every qubit, then a CNOT ladder).
2. A 50-qubit, depth-10 brickwork circuit (RY on every qubit, CZ on alternating pairs): one
   amplitude and <Z> on the middle qubit, without ever building the 2^50 state.
3. The energy and gradient of a 12-qubit, 4-layer RY/RZ/CNOT ansatz for the transverse-field
   Ising chain H = -sum Z_i Z_{i+1} - sum X_i (PyTorch autograd).

Each part reports its first call (which includes planning: network, gate fusion, path search)
and the best of the following calls (the plan is cached; no path search is repeated).

Run:  python examples-ng/circuit_simulator.py [--quick] [--backend numpy|pytorch]

On NumPy the gradient is a central finite difference (two energies per parameter); exact
gradients without autograd (adjoint, parameter shift) belong to the variational layer.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def tfim_energy(K, n: int, layers: int):
    pairs = [(q, q + 1) for q in range(n - 1)]

    def energy(params):  # params[2 * (layer * n + q)]: qubit q's RY angle, the next its RZ angle
        c = tq.Circuit(n)
        for layer in range(layers):
            block = params[2 * n * layer:2 * n * (layer + 1)]
            # one call per layer of gates: c.layer(gate, qubits, angles) checks the layer at once
            c.layer("ry", range(n), block[0::2]).layer("rz", range(n), block[1::2]).layer("cx", pairs)
        return c.expectation(hamiltonian)  # the state once, every term applied to it

    hamiltonian = tq.hamiltonians.tfim(n)
    return energy


def timed(label: str, run, repeats: int = 3):
    start = time.perf_counter()
    result = run()
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<46} first call {first:8.3f} s   then {best:8.4f} s")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (used by the tests)")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch"])
    args = parser.parse_args(argv)
    K = tq.set_backend(args.backend)
    rng = np.random.default_rng(2026)
    n_state, layers = (10, 4) if args.quick else (20, 10)
    n_wide, depth = (24, 6) if args.quick else (50, 10)
    n_energy, ansatz_layers = (6, 2) if args.quick else (12, 4)
    print(f"tyxonq circuit simulator on {K.name} ({K.capabilities.device}, {K.precision})")

    circuit = tq.templates.rotation_ladder(n_state, rng.uniform(0, 2 * np.pi, 2 * n_state * layers),
                                           layers)
    state = timed(f"state, {n_state} qubits x {layers} layers", circuit.state)
    norm = float(np.linalg.norm(K.to_numpy(state)))
    print(f"    |state| = {norm:.12f}")

    wide = tq.templates.brickwork(n_wide, rng.uniform(0, np.pi, depth * n_wide), depth)
    amplitude = timed(f"amplitude <0...0|psi>, {n_wide} qubits depth {depth}",
                      lambda: wide.amplitude("0" * n_wide))
    z_middle = timed(f"<Z_{n_wide // 2}>, {n_wide} qubits depth {depth} (light cone)",
                     lambda: wide.expectation_ps(z=[n_wide // 2]))
    print(f"    amplitude = {complex(K.to_numpy(amplitude)):.6e}, <Z> = {float(K.to_numpy(z_middle)):.12f}")

    energy = tfim_energy(K, n_energy, ansatz_layers)
    params = K.asarray(rng.uniform(0, 2 * np.pi, 2 * n_energy * ansatz_layers))
    value_and_grad = K.value_and_grad(energy)
    # finite differences (NumPy) evaluate the energy 2 x 96 times: time one call only
    repeats = 3 if K.capabilities.autodiff == "autograd" else 1
    value, grad = timed(f"energy + gradient, {n_energy} qubits, {params.shape[0]} parameters",
                        lambda: value_and_grad(params), repeats)
    print(f"    energy = {float(K.to_numpy(value)):.10f}, |gradient| = "
          f"{float(np.linalg.norm(K.to_numpy(grad))):.6f} ({K.capabilities.autodiff})")
    info = tq.plan_cache_info()
    print(f"  plan cache: {info.misses} plans built, {info.path_searches} path searches, "
          f"{info.hits} reuses")
    return 0 if abs(norm - 1) < 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
