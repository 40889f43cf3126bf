"""The TFIM VQE of the main demo under noise: ideal vs depolarising noise vs finite shots vs
mitigated readout error.

H = -sum Z_i Z_{i+1} - sum X_i on an open chain, the hardware-efficient ansatz of
``vqe_tfim.py``. The ideal energy is optimised on the pure state; the noisy one on the density
matrix of the same circuit with a depolarising channel after every gate (a ``tq.NoiseModel``),
with exact gradients (reverse mode through the doubled network on NumPy). The noisy optimum is
then measured as hardware would: with finite shots, then with readout error on the sampled bits,
then with that error mitigated (``tq.mitigation.readout``). Printed as a table, plotted to a file.

Run:  python examples-ng/noisy_vqe.py [--quick] [--sites 6] [--layers 3] [--noise 0.01] [--shots 4000]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq
from tyxonq.examples import save_figure

#: readout error of every qubit: confusion[read, true]
CONFUSION = [[0.97, 0.06], [0.03, 0.94]]


def optimise(energy, size: int, seed: int = 7) -> tuple[np.ndarray, float]:
    x0 = np.random.default_rng(seed).uniform(-0.1, 0.1, size)
    result = tq.optimize.minimize(energy, x0, method="L-BFGS-B", maxiter=500, progress=False)
    return result.x, float(result.fun)


def energy_from_counts(counts: dict[str, float], hamiltonian: tq.PauliSum, basis: str) -> float:
    """The terms of ``hamiltonian`` measured in ``basis`` ("Z" or "X" on every qubit) from a
    distribution over bitstrings (counts or probabilities)."""
    total = sum(counts.values())
    value = 0.0
    for coefficient, string in hamiltonian:
        if set(string) - {"I", basis}:
            continue
        qubits = [q for q, letter in enumerate(string) if letter == basis]
        parity = sum(weight * (-1) ** sum(int(bits[q]) for q in qubits) for bits, weight in counts.items())
        value += float(np.real(coefficient)) * parity / total
    return value


def measured_energies(circuit: tq.DMCircuit, hamiltonian: tq.PauliSum, shots: int,
                      seed: int) -> tuple[float, float]:
    """Raw and mitigated energies from ``shots`` shots per basis (Z, then X after H on every
    qubit), every bit read through :data:`CONFUSION`."""
    raw, mitigated = 0.0, 0.0
    for offset, basis in enumerate("ZX"):
        measured = circuit.copy()
        if basis == "X":
            for q in range(circuit.num_qubits):
                measured.h(q)
        counts = measured.sample(shots, seed=seed + offset, readout_error=CONFUSION)
        raw += energy_from_counts(counts, hamiltonian, basis)
        mitigated += energy_from_counts(tq.mitigation.readout(counts, CONFUSION), hamiltonian, basis)
    return raw, mitigated


def save_plot(rows: list[tuple[str, float, float]], exact: float, path: str) -> str:
    def draw(axis):
        labels = [label for label, _, _ in rows]
        values = [value for _, value, _ in rows]
        errors = [error for _, _, error in rows]
        axis.errorbar(range(len(rows)), values, yerr=errors, fmt="o", color="tab:blue", capsize=4)
        axis.axhline(exact, color="k", linestyle="--", label="exact ground energy")
        axis.set_xticks(range(len(rows)), labels, rotation=20, ha="right", fontsize=8)
        axis.set_ylabel("energy")
        axis.margins(x=0.1, y=0.15)
        axis.legend()

    return save_figure(path, draw, figsize=(7, 3.8))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 sites, 2 layers, 2000 shots (the tests)")
    parser.add_argument("--sites", type=int, default=6)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--noise", type=float, default=0.01, help="depolarising p after every gate")
    parser.add_argument("--shots", type=int, default=4000)
    parser.add_argument("--plot", default=None, help="where to save the plot")
    args = parser.parse_args(argv)
    sites, layers, shots = (4, 2, 2000) if args.quick else (args.sites, args.layers, args.shots)
    plot = args.plot or (None if args.quick else "noisy_vqe.png")

    tq.set_backend("numpy")
    hamiltonian = tq.hamiltonians.tfim(sites)
    exact = hamiltonian.ground_energy()
    size = tq.templates.hardware_efficient_size(sites, layers)
    model = tq.NoiseModel().add(tq.channels.depolarizing(args.noise), gates="all")

    def ideal_energy(params):
        return tq.templates.hardware_efficient(sites, params, layers).expectation(hamiltonian)

    def noisy_energy(params):
        circuit = tq.templates.hardware_efficient(sites, params, layers).with_noise(model)
        return circuit.expectation(hamiltonian)

    start = time.perf_counter()
    ideal_x, ideal = optimise(ideal_energy, size)
    noisy_x, noisy = optimise(noisy_energy, size)
    circuit = tq.templates.hardware_efficient(sites, noisy_x, layers).with_noise(model)
    sampled, error = hamiltonian.expectation(circuit, shots=shots, seed=1, return_std=True)
    raw, mitigated = measured_energies(circuit, hamiltonian, shots, seed=2)
    elapsed = time.perf_counter() - start

    rows = [("ideal, exact", ideal, 0.0),
            (f"depolarising p={args.noise:g}, exact", noisy, 0.0),
            (f"+ {shots} shots per group", sampled, error),
            ("+ readout error", raw, error),
            ("+ readout mitigated", mitigated, error)]
    print(f"TFIM chain of {sites} sites, hardware-efficient ansatz ({layers} layers, {size} parameters)")
    print(f"exact ground energy {exact:.6f}; readout confusion {CONFUSION}")
    print(f"{'setting':<36}{'energy':>12}{'std. error':>12}{'vs ground':>12}")
    for label, value, std in rows:
        print(f"{label:<36}{value:>12.6f}{std:>12.4f}{value - exact:>12.4f}")
    print(f"({elapsed:.1f} s)")
    # the exact noisy energy has two exact routes (the density matrix, or each term's light cone):
    # the one estimated faster on this machine was taken, and a rehearsal says which and why
    (choice,) = tq.rehearse(circuit.expectation, hamiltonian).choices
    print(f"route of the exact noisy energy: {choice}")
    if plot:
        print(save_plot(rows, exact, plot))
    # the checks a reader can rely on: noise costs energy, mitigation recovers most of the readout loss
    worse_with_noise = noisy > ideal - 1e-9
    shots_agree = abs(sampled - noisy) < 5 * error
    mitigation_helps = abs(mitigated - noisy) < abs(raw - noisy) + 5 * error
    return 0 if worse_with_noise and shots_agree and mitigation_helps else 1


if __name__ == "__main__":
    sys.exit(main())
