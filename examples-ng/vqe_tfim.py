"""VQE for the 1D transverse-field Ising chain, compared with its exact ground energy.

H = -sum Z_i Z_{i+1} - sum X_i on an open chain. The ansatz is hardware-efficient: RY on every
qubit, then `layers` times a CNOT ladder and RY again (the Hamiltonian is real, so real
amplitudes suffice). L-BFGS-B minimises the energy with exact gradients by the adjoint method,
through traced parameters; on PyTorch's CPU `minimize` evaluates the same objective on PyTorch's
NumPy host twin in its place (the same values without an autograd graph; an objective that needs
torch runs inside autograd, each energy one autograd node whose backward pass is the adjoint
sweep) -- the objective is written once for both.

Run:  python examples-ng/vqe_tfim.py [--quick] [--backend numpy|pytorch] [--sites 10] [--layers 6]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq
from tyxonq.examples import save_figure


def make_energy(sites: int, layers: int):
    hamiltonian = tq.hamiltonians.tfim(sites)

    def energy(params):
        circuit = tq.templates.hardware_efficient(sites, params, layers)
        return circuit.expectation(hamiltonian)

    return hamiltonian, energy


def save_plot(history: list[float], exact: float, path: str) -> str:
    def draw(axis):
        axis.semilogy(np.abs(np.asarray(history) - exact) / abs(exact))
        axis.set_xlabel("objective evaluation")
        axis.set_ylabel("relative error of the energy")
        axis.set_title("VQE, transverse-field Ising chain")

    return save_figure(path, draw, figsize=(6, 4), saved="convergence plot saved to {path}",
                       missing="matplotlib not installed: no plot")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 sites, 3 layers (used by the tests)")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch", "cupynumeric"])
    parser.add_argument("--sites", type=int, default=10)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--method", default="L-BFGS-B")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="relative error required")
    parser.add_argument("--plot", default=None, help="where to save the convergence plot")
    args = parser.parse_args(argv)
    sites, layers = (4, 3) if args.quick else (args.sites, args.layers)
    plot = args.plot or (None if args.quick else "vqe_tfim_convergence.png")

    K = tq.set_backend(args.backend)
    hamiltonian, energy = make_energy(sites, layers)
    exact = hamiltonian.ground_energy()
    size = tq.templates.hardware_efficient_size(sites, layers)
    x0 = np.random.default_rng(7).uniform(-0.1, 0.1, size)
    evaluated_on = set()

    def recorded_energy(params):
        evaluated_on.add(tq.get_backend().name)  # where minimize evaluates it
        return energy(params)

    start = time.perf_counter()
    result = tq.optimize.minimize(recorded_energy, x0, method=args.method, maxiter=2000)
    elapsed = time.perf_counter() - start
    relative = abs(result.fun - exact) / abs(exact)

    print(f"VQE, TFIM chain of {sites} sites, {layers} layers, {size} parameters")
    twin = " (its host twin)" if evaluated_on == {"numpy"} and K.name != "numpy" else ""
    print(f"  backend            {K.name} ({K.capabilities.device}), gradients by the adjoint method, "
          f"evaluated on {', '.join(sorted(evaluated_on))}{twin}")
    print(f"  exact ground       {exact:.10f}")
    print(f"  VQE energy         {result.fun:.10f}")
    print(f"  relative error     {relative:.2e}  (required {args.tolerance:.0e})")
    print(f"  iterations         {result.nit} ({len(result.history_fun)} evaluations), {result.message}")
    print(f"  wall time          {elapsed:.2f} s")
    if plot:
        print(f"  {save_plot(result.history_fun, exact, plot)}")
    return 0 if relative <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
