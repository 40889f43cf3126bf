"""Many random initialisations of a VQE optimised together, in one vectorised run.

`tq.vectorize_or_fallback(tq.value_and_grad(energy))` maps the energy-and-gradient over a batch of
parameter vectors: natively with `torch.func.vmap` on PyTorch; on NumPy exact gradients run one
parameter set at a time, so the batch loops (same numbers; NumPy's lanes batch the energies
themselves, as the final evaluation below does). One Adam step then updates the whole batch; the
best run is reported against the exact energy.

Run:  python examples-ng/batched_vqe.py [--quick] [--backend pytorch|numpy] [--batch 16]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 sites, batch 4, 60 steps (tests)")
    parser.add_argument("--backend", default="pytorch", choices=["numpy", "pytorch"])
    parser.add_argument("--sites", type=int, default=6)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    args = parser.parse_args(argv)
    sites, batch, steps = (4, 4, 60) if args.quick else (args.sites, args.batch, args.steps)
    layers = 2 if args.quick else args.layers

    K = tq.set_backend(args.backend)
    hamiltonian = tq.hamiltonians.tfim(sites)
    exact = hamiltonian.ground_energy()

    def energy(params):
        return tq.templates.hardware_efficient(sites, params, layers).expectation(hamiltonian)

    # on NumPy the gradients loop over the batch (policy="off" says so instead of warning)
    policy = "auto" if K.capabilities.vmap == "native" else "off"
    batched = tq.vectorize_or_fallback(tq.value_and_grad(energy), policy=policy)
    energies_of = tq.vectorize_or_fallback(energy)  # lanes on NumPy: one sweep for the batch
    size = tq.templates.hardware_efficient_size(sites, layers)
    params = np.random.default_rng(3).uniform(-np.pi, np.pi, (batch, size))
    first, second = np.zeros_like(params), np.zeros_like(params)
    start = time.perf_counter()
    for step in range(1, steps + 1):  # Adam on every row at once
        values, gradients = batched(K.asarray(params))
        gradients = np.asarray(K.to_numpy(gradients))
        first = 0.9 * first + 0.1 * gradients
        second = 0.999 * second + 0.001 * gradients ** 2
        params = params - args.learning_rate * (first / (1 - 0.9 ** step)) / (
            np.sqrt(second / (1 - 0.999 ** step)) + 1e-8)
    elapsed = time.perf_counter() - start
    energies = np.asarray(K.to_numpy(energies_of(K.asarray(params))))

    # the batched numbers equal a plain loop over the batch
    loop = np.array([float(K.to_numpy(energy(K.asarray(row)))) for row in params])
    agreement = float(np.max(np.abs(loop - energies)))
    best = float(energies.min())
    print(f"Batched VQE: TFIM {sites} sites, {layers} layers, {batch} initialisations, {steps} Adam steps")
    print(f"  backend             {K.name} (vmap: {K.capabilities.vmap})")
    print(f"  exact ground        {exact:.8f}")
    print(f"  best / median       {best:.8f} / {float(np.median(energies)):.8f}")
    print(f"  best relative error {abs(best - exact) / abs(exact):.2e}")
    print(f"  batch vs loop       max |difference| {agreement:.1e}")
    print(f"  wall time           {elapsed:.2f} s ({elapsed / steps * 1e3:.1f} ms per batched step)")
    return 0 if agreement < 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
