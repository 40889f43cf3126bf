"""A PennyLane VQE on tyxonq: the one-line change is the device name.

    dev = qml.device("default.qubit", wires=n)   # before
    dev = qml.device("tyxonq.qubit", wires=n)    # after: tyxonq simulates, PennyLane is unchanged

The same QNode (a hardware-efficient ansatz on a transverse-field Ising chain) runs on both
devices; energies and gradients are compared, a few gradient-descent steps run on tyxonq
(``diff_method="best"``: exact device derivatives from tyxonq's adjoint sweep), and the same
circuit runs with depolarising noise on ``tyxonq.mixed`` against ``default.mixed``.

Run:  python examples-ng/pennylane_device.py [--quick] [--wires 10] [--layers 3] [--steps 20]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pennylane as qml
from pennylane import numpy as pnp


def tfim(wires: int):
    """-sum Z_i Z_{i+1} - sum X_i on an open chain."""
    coefficients = [-1.0] * (wires - 1) + [-1.0] * wires
    terms = [qml.Z(i) @ qml.Z(i + 1) for i in range(wires - 1)] + [qml.X(i) for i in range(wires)]
    return qml.Hamiltonian(coefficients, terms)


def energy_qnode(device_name: str, wires: int, layers: int, noise: float = 0.0):
    """The ansatz's energy as a QNode on ``device_name`` (noise: a depolarising channel per layer)."""
    hamiltonian = tfim(wires)

    @qml.qnode(qml.device(device_name, wires=wires), diff_method="best")
    def energy(params):
        for layer in range(layers):
            for q in range(wires):
                qml.RY(params[layer, q, 0], wires=q)
                qml.RZ(params[layer, q, 1], wires=q)
            for q in range(wires - 1):
                qml.CNOT(wires=[q, q + 1])
            if noise:
                for q in range(wires):
                    qml.DepolarizingChannel(noise, wires=q)
        return qml.expval(hamiltonian)

    return energy


def timed_gradient(qnode, params):
    grad = qml.grad(qnode)
    start = time.perf_counter()
    gradient = grad(params)
    return float(grad.forward), gradient, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 wires, 2 layers, 5 steps (the tests)")
    parser.add_argument("--wires", type=int, default=10)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    wires, layers, steps = (4, 2, 5) if args.quick else (args.wires, args.layers, args.steps)
    params = pnp.array(np.random.default_rng(1).uniform(-0.3, 0.3, (layers, wires, 2)), requires_grad=True)

    print(f"TFIM chain, {wires} wires, {layers} layers; energy and gradient of one QNode")
    results = {}
    for name in ("default.qubit", "tyxonq.qubit"):
        qnode = energy_qnode(name, wires, layers)
        timed_gradient(qnode, params)  # warm-up: plans and caches
        results[name] = timed_gradient(qnode, params)
        energy, _, seconds = results[name]
        print(f"  {name:14} energy {energy:+.10f}   energy + gradient {seconds * 1e3:7.1f} ms")
    deviation = max(abs(results["tyxonq.qubit"][0] - results["default.qubit"][0]),
                    float(np.abs(results["tyxonq.qubit"][1] - results["default.qubit"][1]).max()))
    ok = deviation < 1e-8
    print(f"  largest difference (energy, gradient): {deviation:.1e}  {'ok' if ok else 'FAIL'}")

    qnode = energy_qnode("tyxonq.qubit", wires, layers)
    optimizer = qml.GradientDescentOptimizer(stepsize=0.05)
    history = [float(qnode(params))]
    for _ in range(steps):
        params = optimizer.step(qnode, params)
        history.append(float(qnode(params)))
    descended = history[-1] < history[0]
    ok &= descended
    print(f"gradient descent on tyxonq.qubit, {steps} steps: {history[0]:+.6f} -> {history[-1]:+.6f}"
          f"  {'ok' if descended else 'FAIL'}")

    noisy = {name: float(energy_qnode(name, wires, layers, noise=0.02)(params))
             for name in ("default.mixed", "tyxonq.mixed")}
    close = abs(noisy["tyxonq.mixed"] - noisy["default.mixed"]) < 1e-10
    ok &= close
    print(f"with depolarising noise p=0.02: default.mixed {noisy['default.mixed']:+.10f}, "
          f"tyxonq.mixed {noisy['tyxonq.mixed']:+.10f}  {'ok' if close else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
