"""Exact samples of a 50-qubit circuit, with no state vector.

A depth-6 RY + CZ brickwork on 50 qubits has 2^50 amplitudes, yet `Circuit.sample` draws exact
samples from it: past the state-vector limit it simulates an untruncated matrix-product state
when a count of the gates crossing each cut bounds its bonds (here by 8), and otherwise draws
groups of qubits from conditional marginals contracted on their light cones. Both methods are
run; the empirical <Z_q> from each is compared with the exact <Z_q> of every qubit (light-cone
contraction), in standard errors, and a histogram of the marginal distribution of qubits
23..26 (from the samples against the exact marginal) is plotted to a file.

Run:  python examples-ng/wide_sampling.py [--quick] [--qubits 50] [--shots 2000] [--plot PATH]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 qubits, 500 shots")
    parser.add_argument("--qubits", type=int, default=50)
    parser.add_argument("--shots", type=int, default=2000)
    parser.add_argument("--plot", default=None, help="where to save the histogram")
    args = parser.parse_args()
    n, shots = (30, 500) if args.quick else (args.qubits, args.shots)
    plot = args.plot or (None if args.quick else "wide_sampling.png")
    depth = 6
    K = tq.set_backend("numpy")
    angles = np.random.default_rng(7).uniform(0, np.pi, n * depth)
    circuit = tq.templates.brickwork(n, angles, depth)
    exact = np.array([float(circuit.expectation_ps(z=[q])) for q in range(n)])
    window = list(range(n // 2 - 2, n // 2 + 2))
    marginal = np.asarray(K.to_numpy(circuit.marginal_probability(window)), dtype=float)

    failures = 0
    histograms = {}
    for method in ("mps", "contraction"):
        start = time.perf_counter()
        bits = np.array([[int(b) for b in row] for row in
                         circuit.sample(shots, seed=1, format="bitstrings", method=method)])
        seconds = time.perf_counter() - start
        sampled = 1 - 2 * bits.mean(axis=0)
        standard_errors = np.sqrt(np.maximum(1 - exact ** 2, 1e-12) / shots)
        worst = float(np.max(np.abs(sampled - exact) / standard_errors))
        ok = worst < 5.0
        failures += not ok
        print(f"{method:>11}: {shots} samples of {n} qubits in {seconds:.2f} s; "
              f"largest |<Z_q> sampled - exact| = {worst:.2f} standard errors {'ok' if ok else 'FAIL'}")
        indices = bits[:, window] @ (1 << np.arange(len(window) - 1, -1, -1))
        histograms[method] = np.bincount(indices, minlength=2 ** len(window)) / shots

    if plot is None:
        return 1 if failures else 0
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axis = plt.subplots(figsize=(8, 4))
        outcomes = np.arange(2 ** len(window))
        axis.bar(outcomes - 0.2, histograms["mps"], width=0.4, label="samples (mps)")
        axis.bar(outcomes + 0.2, histograms["contraction"], width=0.4, label="samples (contraction)")
        axis.plot(outcomes, marginal, "k_", markersize=14, label="exact marginal")
        axis.set_xlabel(f"outcome of qubits {window[0]}..{window[-1]}")
        axis.set_ylabel("probability")
        axis.set_title(f"{n}-qubit depth-{depth} brickwork, {shots} exact samples")
        axis.legend()
        figure.tight_layout()
        figure.savefig(plot)
        print(f"histogram written to {plot}")
    except ImportError:
        print("matplotlib is not installed: no plot")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
