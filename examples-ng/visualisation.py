"""Seeing the work: a circuit drawn as a figure and as LaTeX, progress bars on long calls, and the
results plotted (sample counts, expectation values over time, a contraction plan's cost).

1. Teleportation with feed-forward (mid-circuit measurements, classically conditioned gates, a
   channel): drawn with `c.draw("mpl")`, `c.draw("latex")` and `print(c)`; 4000 shots sampled
   with a progress bar (`progress=True`), plotted with `tq.plot.counts`, and the teleported
   qubit's <Z> checked against the exact value in standard errors.
2. A Neel state quenched under the Heisenberg chain: `tq.evolve` reports the time reached on its
   bar; the staggered magnetisation is plotted with `tq.plot.expectations` and checked against
   `method="expm"` at 1e-8.
3. A 40-qubit brickwork's <Z_20>: `tq.rehearse` plans its contraction and `tq.plot.plan` draws the
   width and multiply-adds of every step; the report's flops are checked to be the steps' sum.

Figures are written to --out (PNG files, and the LaTeX source).

Run:  python examples-ng/visualisation.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import matplotlib
import numpy as np

import tyxonq as tq

matplotlib.use("Agg")


def teleportation(theta: float) -> tq.Circuit:
    """Qubit 0's state RY(theta)|0> sent to qubit 2 through a Bell pair, corrected by the two
    measured bits; a weak dephasing channel on the pair on the way."""
    c = tq.Circuit(3)
    c.ry(0, theta=theta).h(1).cx(1, 2).barrier()
    c.phase_damping(1, gamma=0.02)
    c.cx(0, 1).h(0)
    first, second = c.measure(0), c.measure(1)
    c.cond(second).x(2)
    c.cond(first).z(2)
    return c


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shots and times")
    parser.add_argument("--out", default=None, help="folder for the figures (default: ./visualisation)")
    args = parser.parse_args()
    out = pathlib.Path(args.out or (tempfile.mkdtemp() if args.quick else "visualisation"))
    out.mkdir(parents=True, exist_ok=True)
    tq.set_backend("numpy")
    failures = 0

    # 1. the circuit, three ways, and its samples
    theta = 1.1
    c = teleportation(theta)
    print(c)
    c.draw("mpl", title="teleportation with feed-forward").savefig(out / "teleportation.png", dpi=110)
    (out / "teleportation.tex").write_text(c.draw("latex") + "\n")
    shots = 1000 if args.quick else 4000
    counts = c.sample(shots, seed=11, progress=True)
    tq.plot.counts(counts, title=f"teleportation, {shots} shots").savefig(out / "counts.png", dpi=110)
    z2 = sum((1 - 2 * int(key.split()[1][2])) * value for key, value in counts.items()) / shots
    exact = np.cos(theta)  # the teleported qubit: RY(theta)|0>; dephasing leaves <Z> as it is
    error = np.sqrt((1 - exact ** 2) / shots)
    verdict = "ok" if abs(z2 - exact) < 5 * error else "FAIL"
    failures += verdict != "ok"
    deviation = abs(z2 - exact) / error
    print(f"teleported <Z>: sampled {z2:.4f}, exact {exact:.4f} ({deviation:.1f} s.e.) {verdict}")

    # 2. a quench, with the time reached on the bar
    n = 8
    h = tq.hamiltonians.heisenberg(n)
    neel = tq.Circuit(n)
    for q in range(0, n, 2):
        neel.x(q)
    staggered = tq.PauliSum([((-1) ** q / n, "I" * q + "Z" + "I" * (n - q - 1)) for q in range(n)])
    times = np.linspace(0, 2.0 if args.quick else 4.0, 21 if args.quick else 81)
    values = tq.evolve(h, neel, times, observables=[staggered, h], progress=True)
    reference = tq.evolve(h, neel, times, method="expm", observables=[staggered, h])
    difference = float(np.max(np.abs(np.asarray(values) - np.asarray(reference))))
    verdict = "ok" if difference < 1e-8 else "FAIL"
    failures += verdict != "ok"
    print(f"quench: staggered magnetisation {float(values[0, 0]):+.3f} -> {float(values[-1, 0]):+.3f}, "
          f"largest difference from expm {difference:.1e} {verdict}")
    tq.plot.expectations(times, np.asarray(values)[:, :1], labels=["staggered magnetisation"],
                         title=f"Neel quench, Heisenberg chain of {n}").savefig(out / "quench.png", dpi=110)

    # 3. a contraction plan, step by step
    wide = tq.templates.brickwork(40, np.random.default_rng(3).uniform(0, np.pi, 40 * 6), 6)
    report = tq.rehearse(wide.expectation_ps, z=[20])
    tq.plot.plan(report).savefig(out / "plan.png", dpi=110)
    summed = sum(flops for _, flops in report.steps)
    verdict = "ok" if summed == report.flops and len(report.steps) > 0 else "FAIL"
    failures += verdict != "ok"
    print(f"plan: {len(report.steps)} steps, width {report.width:.0f}, flops {summed:.3g} "
          f"(report {report.flops:.3g}) {verdict}")

    print(f"figures in {out}: " + ", ".join(sorted(p.name for p in out.iterdir())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
