"""The same computation on every backend this machine has, and how far the answers differ.

One function, written once against the ArrayBackend protocol, computes an einsum contraction,
an SVD and the value and gradient of a small variational energy. It runs under ``numpy`` and
``pytorch`` (CPU), plus ``pytorch`` on CUDA and ``cupynumeric`` where they are available, and
prints each result's largest difference from the NumPy run.

NumPy and cuPyNumeric differentiate by central finite differences, whose error in float64 is
about 1e-10 (truncation h^2 f'''/6 plus rounding eps |f| / h); PyTorch uses autograd. So the
gradient is held to 1e-8 and everything else to 1e-12.

Run:  python examples-ng/backend_switching.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq

TOLERANCES = {"einsum": 1e-12, "singular values": 1e-12, "energy": 1e-12, "gradient": 1e-8}


def make_data(size: int, seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    complex_normal = lambda *shape: rng.normal(size=shape) + 1j * rng.normal(size=shape)  # noqa: E731
    hamiltonian = complex_normal(size, size)
    return {
        "tensor": complex_normal(size, size, size),
        "matrix": complex_normal(size, size),
        "hamiltonian": hamiltonian + hamiltonian.conj().T,
        "angles": rng.uniform(0, np.pi, size=size),
    }


def workload(K: tq.ArrayBackend, data: dict[str, np.ndarray]) -> dict[str, object]:
    """Everything through the protocol: no library-specific call anywhere."""
    tensor, matrix = K.asarray(data["tensor"]), K.asarray(data["matrix"])
    hamiltonian = K.asarray(data["hamiltonian"])
    size = K.shape(matrix)[0]

    contracted = K.einsum("ijk,kl->ijl", tensor, matrix)
    singular_values = K.svd(K.reshape(contracted, (size * size, size)), full_matrices=False)[1]

    def energy(angles):
        amplitudes = K.cos(angles) + 1j * K.sin(2 * angles)
        state = amplitudes / K.norm(amplitudes)
        return K.real(K.sum(K.conj(state) * K.matmul(hamiltonian, state)))

    value, gradient = K.value_and_grad(energy)(K.asarray(data["angles"]))
    return {"einsum": contracted, "singular values": singular_values, "energy": value,
            "gradient": gradient}


def available_backends() -> list[tuple[str, dict[str, str]]]:
    candidates = [("numpy", {}), ("pytorch", {"device": "cpu"}), ("pytorch", {"device": "cuda"}),
                  ("cupynumeric", {})]
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
    size = 6 if args.quick else 24
    data = make_data(size)

    print(f"backend switching: einsum, SVD and gradient at size {size}")
    results: dict[str, dict[str, np.ndarray]] = {}
    for name, options in available_backends():
        label = f"{name}" + (f"[{options['device']}]" if "device" in options else "")
        with tq.use_backend(name, **options) as K:
            timings = []
            for _ in range(3):  # the first run holds one-off library start-up (warm-up)
                start = time.perf_counter()
                outputs = workload(K, data)
                timings.append(time.perf_counter() - start)
        results[label] = {key: K.to_numpy(value) for key, value in outputs.items()}
        print(f"  {label:<18} warm-up {timings[0] * 1e3:8.1f} ms   then {min(timings[1:]) * 1e3:7.1f} ms"
              f"   autodiff: {K.capabilities.autodiff}")

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
