"""The same computation on every backend this machine has, and how far the answers differ.

One function, written once, computes an einsum contraction and an SVD through the
ArrayBackend protocol, and one VQE step: the energy of a hardware-efficient ansatz for a TFIM
chain and its exact gradient (`tq.value_and_grad`: autograd on PyTorch and JAX, the adjoint
method on NumPy and cuPyNumeric). It runs under ``numpy`` and ``pytorch`` (CPU), plus ``pytorch``
on CUDA, ``jax`` and ``cupynumeric`` where they are available, and prints each result's largest
difference from the NumPy run; all must agree to 1e-12. Moving between them is one `set_backend`
call.

Run:  python examples-ng/backend_switching.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq

TOLERANCES = {"einsum": 1e-12, "singular values": 1e-12, "energy": 1e-12, "gradient": 1e-12}


def make_data(size: int, sites: int, layers: int, seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    complex_normal = lambda *shape: rng.normal(size=shape) + 1j * rng.normal(size=shape)  # noqa: E731
    return {
        "tensor": complex_normal(size, size, size),
        "matrix": complex_normal(size, size),
        "angles": rng.uniform(-np.pi, np.pi, tq.templates.hardware_efficient_size(sites, layers)),
    }


def workload(K: tq.ArrayBackend, data: dict[str, np.ndarray], sites: int,
             layers: int) -> dict[str, object]:
    """Everything through the public API: no library-specific call anywhere."""
    tensor, matrix = K.asarray(data["tensor"]), K.asarray(data["matrix"])
    size = K.shape(matrix)[0]
    contracted = K.einsum("ijk,kl->ijl", tensor, matrix)
    singular_values = K.svd(K.reshape(contracted, (size * size, size)), full_matrices=False)[1]

    hamiltonian = tq.hamiltonians.tfim(sites)

    def energy(angles):
        return tq.templates.hardware_efficient(sites, angles, layers).expectation(hamiltonian)

    value, gradient = tq.value_and_grad(energy)(K.asarray(data["angles"]))
    return {"einsum": contracted, "singular values": singular_values, "energy": value,
            "gradient": gradient}


def available_backends() -> list[tuple[str, dict[str, str]]]:
    candidates = [("numpy", {}), ("pytorch", {"device": "cpu"}), ("pytorch", {"device": "cuda"}),
                  ("jax", {}), ("cupynumeric", {})]
    usable = []
    for name, options in candidates:
        try:
            tq.numerics.make_backend(name, **options)
        except (ImportError, RuntimeError) as reason:
            print(f"  skipping {name} {options or ''}: {str(reason).splitlines()[0][:100]}")
            continue
        usable.append((name, options))
    return usable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (used by the tests)")
    args = parser.parse_args(argv)
    size, sites, layers = (6, 4, 2) if args.quick else (24, 10, 4)
    data = make_data(size, sites, layers)

    print(f"backend switching: einsum and SVD at size {size}; VQE energy + gradient, "
          f"{sites} sites x {layers} layers")
    results: dict[str, dict[str, np.ndarray]] = {}
    for name, options in available_backends():
        label = f"{name}" + (f"[{options['device']}]" if "device" in options else "")
        with tq.use_backend(name, **options) as K:
            timings = []
            for _ in range(3):  # the first run holds one-off library start-up (warm-up)
                start = time.perf_counter()
                outputs = workload(K, data, sites, layers)
                timings.append(time.perf_counter() - start)
        results[label] = {key: K.to_numpy(value) for key, value in outputs.items()}
        method = "autograd" if K.capabilities.autodiff == "autograd" else "adjoint"
        print(f"  {label:<18} warm-up {timings[0] * 1e3:8.1f} ms   then {min(timings[1:]) * 1e3:7.1f} ms"
              f"   gradient: {method}")

    reference = results.pop("numpy")
    failures = 0
    print(f"\n  {'backend':<18} {'quantity':<16} {'max |diff| vs numpy':>20}  bound")
    for label, outputs in results.items():
        for quantity, value in outputs.items():
            difference = float(np.max(np.abs(value - reference[quantity])))
            ok = difference <= TOLERANCES[quantity]
            failures += not ok
            print(f"  {label:<18} {quantity:<16} {difference:>20.2e}  {TOLERANCES[quantity]:.0e}"
                  f"  {'ok' if ok else 'FAIL'}")
    print(f"\n  energy = {float(reference['energy']):.12f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
