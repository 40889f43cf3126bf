"""Gradient descent, Adam and the quantum natural gradient on the main demo's VQE.

The transverse-field Ising chain and hardware-efficient ansatz of `vqe_tfim.py`, from one seeded
start and one learning rate: plain gradient descent, Adam, and quantum natural gradient descent
(each step `-lr (g + lam I)^-1 grad E` with `g` the Fubini-Study metric of the ansatz's state,
exact: `tq.fubini_study_metric`). Energy against iteration goes to a plot; the table gives the
iterations each method needed to reach the energy gradient descent ends with. A trust-region
Newton run with the exact Hessian (`tq.hessian`) closes the table.

Run:  python examples-ng/natural_gradient.py [--quick] [--backend numpy|pytorch|jax] [--sites 10]
          [--layers 3] [--steps 200] [--plot natural_gradient.png]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np

import tyxonq as tq
from tyxonq.examples import save_figure


def first_within(history: list[float], target: float) -> float:
    """The first iteration (1-based) whose energy is at or below ``target``."""
    for iteration, value in enumerate(history, start=1):
        if value <= target:
            return iteration
    return math.inf


def save_plot(histories: dict[str, list[float]], exact: float, path: str) -> str:
    def draw(axis):
        for name, history in histories.items():
            axis.semilogy(np.maximum(np.asarray(history) - exact, 1e-12), label=name)
        axis.set_xlabel("iteration")
        axis.set_ylabel("energy - exact ground energy")
        axis.set_title("VQE, transverse-field Ising chain")
        axis.legend()

    return save_figure(path, draw, figsize=(6, 4), saved="energy against iteration saved to {path}",
                       missing="matplotlib not installed: no plot")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 sites, 2 layers, 80 steps (tests)")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch", "jax"])
    parser.add_argument("--sites", type=int, default=10)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--lam", type=float, default=1e-3, help="metric regularisation")
    parser.add_argument("--plot", default=None,
                        help="plot file (default natural_gradient.png; --quick: a temporary one)")
    args = parser.parse_args(argv)
    sites, layers, steps = (4, 2, 80) if args.quick else (args.sites, args.layers, args.steps)
    plot = args.plot or (os.path.join(tempfile.mkdtemp(), "natural_gradient.png") if args.quick
                         else "natural_gradient.png")

    tq.set_backend(args.backend)
    hamiltonian = tq.hamiltonians.tfim(sites)
    exact = hamiltonian.ground_energy()

    def ansatz(params):
        return tq.templates.hardware_efficient(sites, params, layers)

    def energy(params):
        return ansatz(params).expectation(hamiltonian)

    x0 = np.random.default_rng(7).uniform(-0.3, 0.3, tq.templates.hardware_efficient_size(sites, layers))
    common = dict(maxiter=steps, tol=0.0, learning_rate=args.learning_rate, progress=False)
    runs = {
        "gradient descent": dict(method="sgd"),
        "Adam": dict(method="adam"),
        "quantum natural gradient": dict(method="qng", circuit=ansatz, lam=args.lam),
    }
    print(f"VQE: TFIM {sites} sites, {layers} layers, {x0.size} parameters, {steps} steps, "
          f"learning rate {args.learning_rate}, backend {args.backend}")
    print(f"  exact ground energy {exact:.8f}")
    results = {}
    for name, options in runs.items():
        start = time.perf_counter()
        results[name] = tq.optimize.minimize(energy, x0, **common, **options)
        results[name].seconds = time.perf_counter() - start
    target = results["gradient descent"].fun  # what gradient descent reaches in all its steps
    print(f"  {'method':26s} {'final energy':>14s} {'iterations to GD final':>23s} {'time':>8s}")
    for name, result in results.items():
        print(f"  {name:26s} {result.fun:14.8f} {first_within(result.history_fun, target):>23} "
              f"{result.seconds:7.2f}s")
    start = time.perf_counter()
    newton = tq.optimize.minimize(energy, x0, method="newton", maxiter=steps, progress=False)
    print(f"  {'trust-region Newton':26s} {newton.fun:14.8f} {newton.nit:>20} it "
          f"{time.perf_counter() - start:7.2f}s")
    print(f"  {save_plot({name: r.history_fun for name, r in results.items()}, exact, plot)}")
    natural = first_within(results["quantum natural gradient"].history_fun, target)
    faster = natural < steps
    print(f"  QNG reached gradient descent's final energy after {natural} of {steps} iterations" if faster
          else "  FAIL: QNG did not reach gradient descent's final energy sooner")
    return 0 if faster else 1


if __name__ == "__main__":
    sys.exit(main())
