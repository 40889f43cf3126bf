"""A rotated surface-code memory experiment on the stabilizer simulator: logical error rate against
physical error rate for distances 3 and 5, decoded by minimum-weight matching.

The code is built gate by gate with ``tq.StabilizerCircuit``: data qubits on a d x d grid, one
ancilla per stabilizer (X plaquettes and Z plaquettes in a checkerboard, weight-two ones on the
boundaries), ``rounds`` rounds of syndrome extraction (reset, CNOTs, measure), then every data qubit
measured. Detectors compare each stabilizer's outcome with its previous round's (Z stabilizers
also with the first round's fixed value and the final data parities); the logical observable is
the parity of the data qubits along one row. Noise: two-qubit depolarizing after every CNOT,
one-qubit depolarizing on the data before every round, bit flips after resets and before
measurements, all of strength ``p``. The detector error model goes to pymatching (if installed);
its predictions against the sampled observable flips give the logical error rate.

Run:  python examples-ng/surface_code.py [--quick] [--plot surface_code.png]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq
from tyxonq.examples import save_figure


def stabilizers(d: int) -> list[tuple[str, list[int]]]:
    """``(kind, data qubits)`` of the rotated code's plaquettes (data qubit ``(row, column)`` is
    ``row * d + column``)."""
    found = []
    for row in range(-1, d):
        for column in range(-1, d):
            kind = "X" if (row + column) % 2 == 0 else "Z"
            corners = [(r, c) for r in (row, row + 1) for c in (column, column + 1)
                       if 0 <= r < d and 0 <= c < d]
            on_x_edge = row in (-1, d - 1) and 0 <= column < d - 1  # top and bottom: X weight two
            on_z_edge = column in (-1, d - 1) and 0 <= row < d - 1  # left and right: Z weight two
            if len(corners) == 4 or (len(corners) == 2 and ((kind == "X" and on_x_edge) or
                                                            (kind == "Z" and on_z_edge))):
                found.append((kind, [r * d + c for r, c in corners]))
    return found


def memory_experiment(d: int, rounds: int, p: float) -> tq.StabilizerCircuit:
    """The Z-basis memory experiment of distance ``d`` with circuit noise ``p``."""
    plaquettes = stabilizers(d)
    data = d * d
    c = tq.StabilizerCircuit(data + len(plaquettes))
    previous: list[int | None] = [None] * len(plaquettes)
    for round_index in range(rounds):
        for q in range(data):
            if p:
                c.depolarizing(q, p=p)
        for index, (kind, support) in enumerate(plaquettes):
            ancilla = data + index
            c.reset(ancilla)
            if p:
                c.bit_flip(ancilla, p=p)
            if kind == "X":
                c.h(ancilla)
            for q in support:
                c.cx(ancilla, q) if kind == "X" else c.cx(q, ancilla)
                if p:
                    c.depolarizing(ancilla, q, p=p)
            if kind == "X":
                c.h(ancilla)
            if p:
                c.bit_flip(ancilla, p=p)
            bit = c.measure(ancilla)
            if previous[index] is not None:
                c.detector([previous[index], bit], coords=(index, round_index))
            elif kind == "Z":  # |0...0> data: Z stabilizers start at +1
                c.detector([bit], coords=(index, round_index))
            previous[index] = bit
    final = []
    for q in range(data):
        if p:
            c.bit_flip(q, p=p)
        final.append(c.measure(q))
    for index, (kind, support) in enumerate(plaquettes):
        if kind == "Z":
            c.detector([final[q] for q in support] + [previous[index]], coords=(index, rounds))
    c.observable_include([final[column] for column in range(d)])  # Z along the first row
    return c


def logical_error_rate(circuit: tq.StabilizerCircuit, shots: int, seed: int) -> float | None:
    """Sampled detectors decoded by pymatching against the observable flips (``None`` without it)."""
    try:
        import pymatching
    except ImportError:
        return None
    model = circuit.detector_error_model(decompose_errors=True)
    matcher = pymatching.Matching.from_detector_error_model(model)
    detectors, observables = circuit.sample_detectors(shots, seed=seed)
    predictions = matcher.decode_batch(detectors)
    return float(np.mean(predictions[:, 0] != observables[:, 0]))


def save_plot(rates: dict, physical: list[float], path: str) -> str:
    def draw(axis):
        for d, values in rates.items():
            axis.loglog(physical, [max(v, 1e-6) for v in values], "o-", label=f"distance {d}")
        axis.set_xlabel("physical error rate p")
        axis.set_ylabel("logical error rate")
        axis.legend()

    return save_figure(path, draw, figsize=(5, 3.8))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two error rates, fewer shots")
    parser.add_argument("--plot", default=None, help="where to save the plot")
    args = parser.parse_args(argv)
    physical = [0.002, 0.005] if args.quick else [0.001, 0.002, 0.003, 0.005, 0.007, 0.01]
    shots = 20_000 if args.quick else 100_000

    silent = True
    for d in (3, 5):
        detectors, observables = memory_experiment(d, d, 0.0).sample_detectors(1000, seed=1)
        silent &= not detectors.any() and not observables.any()
    print("noiseless circuits, distances 3 and 5: no detector fires and the observable never flips: "
          f"{silent}")

    rates: dict[int, list[float]] = {}
    print(f"{'p':>8}" + "".join(f"{f'd={d}':>12}" for d in (3, 5)) + f"{'seconds':>10}")
    for p in physical:
        started = time.perf_counter()
        row = []
        for d in (3, 5):
            rate = logical_error_rate(memory_experiment(d, d, p), shots, seed=7)
            if rate is None:
                print("pymatching not installed (pip install pymatching): no decoding")
                return 0 if silent else 1
            rates.setdefault(d, []).append(rate)
            row.append(rate)
        print(f"{p:>8.3f}" + "".join(f"{r:>12.2e}" for r in row) + f"{time.perf_counter() - started:>10.2f}")
    plot = args.plot or (None if args.quick else "surface_code.png")
    if plot:
        print(save_plot(rates, physical, plot))
    below_threshold = rates[5][0] < rates[3][0]
    print(f"below threshold at p = {physical[0]}: distance 5 beats distance 3: {below_threshold}")
    return 0 if silent and below_threshold else 1


if __name__ == "__main__":
    sys.exit(main())
