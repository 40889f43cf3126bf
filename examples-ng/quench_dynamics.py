"""Quench dynamics three ways: TEBD on 100 sites, exact Krylov evolution on 16 qubits, and
Trotter circuits whose error falls at their order's rate.

1. A 100-site transverse-field Ising chain H = -sum Z_i Z_{i+1} - g sum X_i quenched from
   |0...0> by TEBD (``tq.evolve(..., method="tebd")``, fourth order, bond cap 64): the
   magnetisation, the middle site's <Z> and the half-chain entropy along the way, read from the
   state at each output time. Checked first at 12 sites against the exact Krylov evolution.
2. A 16-qubit Heisenberg chain quenched from the Neel state: the exact states at 20 times by
   restarted Krylov (``tq.evolve``), the staggered magnetisation printed.
3. The same quench as Trotter circuits (``tq.evolution.trotter``) of orders 1, 2, 4 at several
   step counts: the state error at the final time against the steps, with the fitted slopes
   (-1, -2, -4) and the a-priori bound (``tq.evolution.trotter_error``); plotted to a file.

Run:  python examples-ng/quench_dynamics.py [--quick] [--plot quench.png]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq
from tyxonq.examples import save_figure


def z_operators(n: int) -> list:
    return [tq.PauliSum([(1.0, "I" * q + "Z" + "I" * (n - q - 1))]) for q in range(n)]


def ising_quench(sites: int, field: float, times: list[float], bond: int) -> dict:
    """TEBD of the Ising quench: <Z_i> for every site, the half-chain entropy, the cut weight."""
    start = tq.MPSCircuit(sites, max_bond=bond)

    def observe(view) -> tuple:
        z = [float(view.expectation_ps(z=[q])) for q in range(sites)]
        return z, float(view.entanglement_entropy(sites // 2)), float(view.truncation_error())

    rows = tq.evolve(tq.hamiltonians.tfim(sites, h=field), start, times, method="tebd", dt=0.05, order=4,
                     callback=observe)
    return {"z": np.array([r[0] for r in rows]), "entropy": [r[1] for r in rows],
            "error": [r[2] for r in rows]}


def check_tebd(field: float) -> float:
    """Largest <Z_i> difference between TEBD and the exact Krylov evolution at 12 sites."""
    n, times = 12, [0.5, 1.0]
    hamiltonian = tq.hamiltonians.tfim(n, h=field)
    exact = tq.evolve(hamiltonian, tq.Circuit(n), times, observables=z_operators(n))
    tebd = tq.evolve(hamiltonian, tq.MPSCircuit(n, cutoff=0.0), times, method="tebd", dt=0.02, order=4,
                     observables=z_operators(n))
    return float(np.max(np.abs(np.asarray(tebd) - np.asarray(exact))))


def neel(n: int) -> tq.Circuit:
    circuit = tq.Circuit(n)
    for q in range(0, n, 2):
        circuit.x(q)
    return circuit


def trotter_errors(n: int, time_: float, orders: dict[int, list[int]]) -> dict[int, list[tuple]]:
    """Per order, ``(steps, error of the state at time_, the a-priori bound)``."""
    hamiltonian = tq.hamiltonians.heisenberg(n) + tq.PauliSum(
        [(0.5, "I" * q + "X" + "I" * (n - q - 1)) for q in range(n)])
    exact = tq.evolve(hamiltonian, neel(n), [time_])[0]
    found = {}
    for order, steps in orders.items():
        found[order] = []
        for r in steps:
            state = tq.evolution.trotter(hamiltonian, time_, r, order, circuit=neel(n)).state()
            error = float(np.linalg.norm(np.asarray(state) - np.asarray(exact)))
            found[order].append((r, error, tq.evolution.trotter_error(hamiltonian, time_, r, order)))
    return found


def save_plot(errors: dict, path: str) -> str:
    def draw(axis):
        for order, rows in errors.items():
            steps, values, _ = zip(*rows)
            axis.loglog(steps, values, "o-", label=f"order {order}")
        axis.set_xlabel("Trotter steps")
        axis.set_ylabel("||state - exact||")
        axis.legend()

    return save_figure(path, draw, figsize=(5, 3.8))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 sites, 10 qubits, fewer steps")
    parser.add_argument("--field", type=float, default=1.0)
    parser.add_argument("--plot", default=None, help="where to save the error plot")
    args = parser.parse_args(argv)
    quick = args.quick
    tq.set_backend("numpy")

    deviation = check_tebd(args.field)
    print(f"12 sites: TEBD against the exact Krylov evolution, largest <Z_i> difference {deviation:.1e}")

    sites, bond = (20, 16) if quick else (100, 64)
    times = [0.5, 1.0] if quick else [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    started = time.perf_counter()
    ising = ising_quench(sites, args.field, times, bond)
    print(f"\n1. Ising quench by TEBD, {sites} sites, g = {args.field}, bond cap {bond} "
          f"({time.perf_counter() - started:.1f} s)")
    print(f"{'time':>6}{'magnetisation':>15}{'<Z_mid>':>10}{'entropy':>10}{'cut weight':>12}")
    for k, t in enumerate(times):
        print(f"{t:>6.2f}{ising['z'][k].mean():>15.6f}{ising['z'][k][sites // 2]:>10.5f}"
              f"{ising['entropy'][k]:>10.4f}{ising['error'][k]:>12.1e}")

    n = 10 if quick else 16
    heisenberg = tq.hamiltonians.heisenberg(n)
    grid = np.linspace(0.25, 5.0, 20)
    staggered = tq.PauliSum([((-1.0) ** q / n, "I" * q + "Z" + "I" * (n - q - 1)) for q in range(n)])
    started = time.perf_counter()
    order_parameter = tq.evolve(heisenberg, neel(n), grid, observables=staggered)[:, 0]
    print(f"\n2. Heisenberg quench from the Neel state by Krylov, {n} qubits "
          f"({time.perf_counter() - started:.1f} s): staggered magnetisation")
    print("  " + "  ".join(f"t={t:.2f}: {float(m):+.4f}" for t, m in zip(grid[::4], order_parameter[::4])))

    orders = {1: [8, 16, 32], 2: [4, 8, 16], 4: [2, 4, 8]} if quick else \
        {1: [8, 16, 32, 64, 128], 2: [4, 8, 16, 32, 64], 4: [2, 4, 8, 16]}
    started = time.perf_counter()
    errors = trotter_errors(n, 1.0, orders)
    print(f"\n3. Trotter circuits against the exact state at t = 1, {n} qubits "
          f"({time.perf_counter() - started:.1f} s)")
    print(f"{'order':>6}{'steps':>7}{'error':>12}{'bound':>12}")
    slopes = {}
    for order, rows in errors.items():
        for r, error, bound in rows:
            print(f"{order:>6}{r:>7}{error:>12.3e}{bound:>12.3e}")
        steps, values, _ = zip(*rows)
        slopes[order] = float(np.polyfit(np.log(steps), np.log(values), 1)[0])
    print("fitted slopes of log(error) against log(steps): " +
          ", ".join(f"order {o}: {s:.2f}" for o, s in slopes.items()))
    plot = args.plot or (None if quick else "quench_trotter_errors.png")
    if plot:
        print(save_plot(errors, plot))
    within = all(error <= bound for rows in errors.values() for _, error, bound in rows)
    rates = all(abs(slopes[o] + o) < 0.3 for o in slopes)
    return 0 if deviation < 1e-6 and within and rates else 1


if __name__ == "__main__":
    sys.exit(main())
