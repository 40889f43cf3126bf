"""Dynamic circuits: teleportation, a repeat-until-success gate, and a repetition code whose
syndromes are measured mid-circuit and corrected by feed-forward.

1. Teleportation of a random one-qubit state: exact (the density matrix of the target qubit,
   by deferred measurement) and sampled (the two classical bits are uniform; the target reads the
   state's Z distribution).
2. Repeat until success (Nielsen & Chuang, exercise 4.41): two ancillas, two Toffolis and an S
   apply V = diag(3 + i, 1 + 3i)/sqrt(10) (a Z rotation by arccos(3/5), an irrational multiple
   of pi) to the target when both read 0 (probability 5/8), Z otherwise (undone by a
   conditioned Z); up to three attempts, each conditioned on a flag bit that the first success sets;
   the target, post-selected on success, is V|+>.
3. A distance-3 bit-flip repetition code under bit-flip noise, with several rounds of syndrome
   measurement, reset and correction: the logical error rate, exact (the density matrix of the
   whole dynamic circuit) and sampled, against the analytic rate, plotted against the physical
   error rate.

Run:  python examples-ng/teleportation_and_qec.py [--quick] [--rounds 3] [--shots 20000]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

import numpy as np

import tyxonq as tq


def teleportation(theta: float, phi: float, lam: float) -> tq.Circuit:
    c = tq.Circuit(3).u(0, theta, phi, lam)
    c.h(1).cx(1, 2).cx(0, 1).h(0)
    m0, m1 = c.measure(0, 1)
    c.cond(m1).x(2)
    c.cond(m0).z(2)
    return c


def repeat_until_success(attempts: int) -> tq.Circuit:
    """Target 0 in |+>, ancillas 1 and 2, flag 3 (set by the first success); the last bit is
    the flag's final value."""
    c = tq.Circuit(4).h(0)
    done = None
    for _ in range(attempts):
        block = c.cond(done, 0) if done is not None else contextlib.nullcontext()
        with block:  # an attempt runs while no earlier one succeeded
            c.h(1).h(2).ccx(1, 2, 0).s(0).ccx(1, 2, 0).h(1).h(2)
        a, b = c.measure(1, 2)
        c.reset(1).reset(2)
        c.cond([a, b], value=0, negate=True).z(0)  # a failure applied Z: undo it (an attempt
        # that did not run reads 0, 0)
        earlier = [done] if done is not None else []
        c.cond([a, b] + earlier, value=0).x(3)  # both ancillas read 0, no success before
        done = c.measure(3)
    return c


def repetition_code(p: float, rounds: int) -> tq.DMCircuit:
    c = tq.DMCircuit(5)
    for _ in range(rounds):
        for q in range(3):
            c.bit_flip(q, p)
        c.cx(0, 3).cx(1, 3).cx(1, 4).cx(2, 4)
        s1, s2 = c.measure(3, 4)
        c.cond([s1, s2], value=1).x(0)
        c.cond([s1, s2], value=3).x(1)
        c.cond([s1, s2], value=2).x(2)
        c.reset(3).reset(4)
    return c


def analytic_logical_rate(p: float, rounds: int) -> float:
    per_round = 3 * p ** 2 * (1 - p) + p ** 3
    return (1 - (1 - 2 * per_round) ** rounds) / 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shots and rates (used by the tests)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shots", type=int, default=20000)
    args = parser.parse_args()
    shots = 2000 if args.quick else args.shots
    K = tq.get_backend()

    rng = np.random.default_rng(3)
    angles = rng.uniform(-np.pi, np.pi, 3)
    c = teleportation(*angles)
    psi = K.to_numpy(tq.Circuit(1).u(0, *angles).state())
    rho = np.asarray(K.to_numpy(c.to_density_matrix().reduced_density_matrix([2])))
    fidelity = float(np.real(psi.conj() @ rho @ psi))
    counts = c.sample(shots, seed=1)
    ones = sum(v for k, v in counts.items() if k[-1] == "1") / shots
    print(f"teleportation: exact fidelity {fidelity:.12f}; P(target reads 1) sampled {ones:.4f}, "
          f"exact {abs(psi[1]) ** 2:.4f}")
    if abs(fidelity - 1) > 1e-10:
        return 1

    rus = repeat_until_success(3)
    success = 1 - (3 / 8) ** 3
    exact_success = (1 - float(rus.expectation_ps(z=[3]))) / 2
    sampled = rus.sample(shots, seed=2, final=False)
    succeeded = sum(v for k, v in sampled.items() if k[-1] == "1") / shots
    v_plus = np.array([3 + 1j, 1 + 3j]) / np.sqrt(20)  # V|+>, V = diag(3 + i, 1 + 3i)/sqrt(10)
    target = np.asarray(K.to_numpy(rus.post_select(3, 1).to_density_matrix().reduced_density_matrix([0])))
    print(f"repeat until success, 3 attempts: P(success) exact {exact_success:.12f} (analytic "
          f"{success:.12f}), sampled {succeeded:.4f}; fidelity of the target with V|+> given success "
          f"{float(np.real(v_plus.conj() @ target @ v_plus)):.12f}")
    fidelity = float(np.real(v_plus.conj() @ target @ v_plus))
    if abs(exact_success - success) > 1e-10 or abs(fidelity - 1) > 1e-10:
        return 1

    rates = np.linspace(0.01, 0.2, 4 if args.quick else 8)
    exact, sampled_rates, analytic = [], [], []
    start = time.perf_counter()
    for p in rates:
        code = repetition_code(float(p), args.rounds)
        marginal = np.asarray(K.to_numpy(code.marginal_probability([0, 1, 2])))
        exact.append(sum(marginal[i] for i in range(8) if bin(i).count("1") >= 2))
        outcome = code.sample(shots, seed=int(p * 1000))
        sampled_rates.append(sum(v for k, v in outcome.items() if k.split()[1][:3].count("1") >= 2) / shots)
        analytic.append(analytic_logical_rate(float(p), args.rounds))
    elapsed = time.perf_counter() - start
    print(f"\nrepetition code, distance 3, {args.rounds} rounds ({elapsed:.1f} s, {shots} shots per rate):")
    print(f"{'p':>6} {'exact':>10} {'analytic':>10} {'sampled':>10}")
    for p, e, a, s in zip(rates, exact, analytic, sampled_rates):
        print(f"{p:6.3f} {e:10.6f} {a:10.6f} {s:10.4f}")
    if max(abs(e - a) for e, a in zip(exact, analytic)) > 1e-10:
        return 1
    if not args.quick:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.plot(rates, rates, "k:", label="unencoded")
        plt.plot(rates, analytic, "-", label="analytic")
        plt.plot(rates, sampled_rates, "o", label=f"sampled ({shots} shots)")
        plt.xlabel("physical bit-flip probability per round")
        plt.ylabel(f"logical error rate after {args.rounds} rounds")
        plt.legend()
        plt.savefig("repetition_code.png", dpi=120)
        print("plotted to repetition_code.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
