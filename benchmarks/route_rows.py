"""Does the cost model choose the faster route? Each row is a Pauli-sum expectation with two exact
routes (every term read from the one state, or each term's light cone); both are timed, and the
route ``method="auto"`` takes (by :func:`tyxonq.machine_rates` measured in this process, not the
reference rates) is compared with the measured faster one.

    PYTHONPATH=src python benchmarks/route_rows.py [--quick] [--repeat 3]
        [--output benchmarks/results/routes.json]

Rows (circuits from ``tq.templates`` and the test suite's noisy ansatz; ``--quick``: the first
four, smaller):

- hea12: ``hardware_efficient(12, 4)`` (RY·RZ + CNOT ladder), ``tfim(12)``; NumPy.
- shallow16: ``brickwork(16, 2)``, three local ``Z_q Z_q+1``; NumPy.
- deep16x4 / deep16x10: RY layers and CNOTs between qubits ``q`` and ``q + 1 + 2 layer`` (mod 16),
  4 and 10 layers, ``tfim(16)``; NumPy. The light cones of deep16x10 are not run (:data:`NOT_RUN`:
  planning them took 61 s and a call 3.7 s when measured once).
- noisy6 / noisy8 / noisy10: ``hardware_efficient(n, 2)`` (RY·RZ + CNOT ladder) with a noise model
  (depolarising p = 0.05 after every gate: one-qubit after one-qubit gates, two-qubit after
  CNOTs), ``tfim(n)``; NumPy, and noisy10 also on PyTorch.
- noisy10-jit: the same energy as a function of the angles under ``jax.jit``: each route's first
  call (tracing, planning, compiling) and its compiled call; the model counts compile time once
  per ``CALLS_PER_COMPILE`` calls, so the row compares ``first + 100 x call``.

Each time is the minimum of ``--repeat`` calls after a warm-up (the warm-up plans; its time is
reported for the JAX row only). Every route's value is checked against the other's (1e-9).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import machine_info  # noqa: E402

#: (row, route) pairs too slow to run every time (their measured times are in the docstring)
NOT_RUN = {("deep16x10", "lightcone")}


def noisy_ansatz(tq: Any, n: int, angles: Any, p: float = 0.05) -> Any:
    """``hardware_efficient(n, 2)`` under a noise model: one-qubit depolarising after every
    one-qubit gate, two-qubit depolarising after every CNOT."""
    model = (tq.NoiseModel().add(tq.channels.depolarizing(p), gates="1q")
             .add(tq.channels.depolarizing(p, num_qubits=2), gates=["cx"]))
    return tq.templates.hardware_efficient(n, angles, 2, ("ry", "rz")).with_noise(model)


def rows(tq: Any, quick: bool) -> list[tuple[str, str, Callable[[], Any], Any]]:
    """``(name, backend, circuit maker, Hamiltonian)``."""
    rng = np.random.default_rng(7)

    def deep(n: int, layers: int) -> Callable[[], Any]:
        angles = rng.uniform(-1, 1, (layers, n))

        def make() -> Any:
            c = tq.Circuit(n)
            for layer in range(layers):
                c.layer("ry", range(n), angles[layer])
                c.layer("cx", [(q, (q + 1 + 2 * layer) % n) for q in range(0, n, 2)])
            return c
        return make

    hea = rng.uniform(-1, 1, 2 * 12 * 5)
    shallow = rng.uniform(-1, 1, 2 * 16)
    local = tq.PauliSum([(1.0, "I" * q + "ZZ" + "I" * (14 - q)) for q in (3, 8, 12)])
    noisy = {n: rng.uniform(-1, 1, 6 * n) for n in (6, 8, 10)}
    table = [
        ("hea12", "numpy", lambda: tq.templates.hardware_efficient(12, hea, 4, ("ry", "rz")),
         tq.hamiltonians.tfim(12)),
        ("shallow16", "numpy", lambda: tq.templates.brickwork(16, shallow, 2), local),
        ("noisy6", "numpy", lambda: noisy_ansatz(tq, 6, noisy[6]), tq.hamiltonians.tfim(6)),
        ("deep16x4", "numpy", deep(16, 4), tq.hamiltonians.tfim(16)),
    ]
    if quick:
        return table
    return table + [
        ("deep16x10", "numpy", deep(16, 10), tq.hamiltonians.tfim(16)),
        ("noisy8", "numpy", lambda: noisy_ansatz(tq, 8, noisy[8]), tq.hamiltonians.tfim(8)),
        ("noisy10", "numpy", lambda: noisy_ansatz(tq, 10, noisy[10]), tq.hamiltonians.tfim(10)),
        ("noisy10", "pytorch", lambda: noisy_ansatz(tq, 10, noisy[10]), tq.hamiltonians.tfim(10)),
    ]


def best_of(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    value = call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best, value


def eager_row(tq: Any, name: str, backend: str, make: Callable[[], Any], hamiltonian: Any,
              repeat: int) -> dict:
    tq.set_backend(backend)
    K = tq.get_backend()
    circuit = make()
    (choice,) = tq.rehearse(circuit.expectation, hamiltonian).choices
    estimates = dict(choice.estimates)
    measured, values = {}, {}
    for route in ("state", "lightcone"):
        if (name, route) in NOT_RUN:
            measured[route] = None
            continue
        def run(r: str = route) -> Any:
            return K.to_numpy(circuit.expectation(hamiltonian, method=r))

        seconds, value = best_of(run, repeat)
        measured[route], values[route] = seconds, float(value)
    if len(values) == 2:
        assert abs(values["state"] - values["lightcone"]) < 1e-9, (name, values)
    ran = {route: seconds for route, seconds in measured.items() if seconds is not None}
    return {"row": name, "backend": backend, "chosen": choice.chosen, "estimates": estimates,
            "lower_bounds": list(choice.lower_bounds), "measured": measured,
            "faster": min(ran, key=ran.get), "right": choice.chosen == min(ran, key=ran.get)}


def jit_row(tq: Any, repeat: int) -> dict:
    import jax

    tq.set_backend("jax")
    K = tq.get_backend()
    hamiltonian = tq.hamiltonians.tfim(10)
    angles = K.asarray(np.random.default_rng(7).uniform(-1, 1, 60))
    found = []

    def choose(a: Any) -> Any:
        found.extend(tq.rehearse(noisy_ansatz(tq, 10, a).expectation, hamiltonian).choices)
        return a

    K.jit(choose)(angles)
    measured, values = {}, {}
    for route in ("state", "lightcone"):
        function = K.jit(lambda a, r=route: noisy_ansatz(tq, 10, a).expectation(hamiltonian, method=r))
        start = time.perf_counter()
        values[route] = float(jax.block_until_ready(function(angles)))
        first = time.perf_counter() - start
        call, _ = best_of(lambda f=function: jax.block_until_ready(f(angles)), repeat)
        measured[route] = {"first_s": first, "call_s": call, "first_plus_100_calls_s": first + 100 * call}
    assert abs(values["state"] - values["lightcone"]) < 1e-9, values
    totals = {route: m["first_plus_100_calls_s"] for route, m in measured.items()}
    (choice,), faster = found, min(totals, key=totals.get)
    return {"row": "noisy10-jit", "backend": "jax", "chosen": choice.chosen,
            "estimates": dict(choice.estimates), "lower_bounds": list(choice.lower_bounds),
            "measured": measured, "faster": faster, "right": choice.chosen == faster}


def table(records: list[dict], rates: dict) -> str:
    lines = [f"{'row':12s} {'backend':8s} {'chosen':9s} {'est. state':>11s} {'est. cones':>12s} "
             f"{'state':>10s} {'cones':>10s}  right"]
    for r in records:
        est = r["estimates"]
        cones = ("≥" if "lightcone" in r["lower_bounds"] else "") + f"{est['lightcone'] * 1e3:.2f} ms"
        if r["backend"] == "jax":
            m = r["measured"]
            shown = [f"{m[x]['first_s']:.1f} s+{m[x]['call_s'] * 1e3:.1f} ms" for x in ("state", "lightcone")]
        else:
            shown = ["not run" if r["measured"][x] is None else f"{r['measured'][x] * 1e3:.2f} ms"
                     for x in ("state", "lightcone")]
        lines.append(f"{r['row']:12s} {r['backend']:8s} {r['chosen']:9s} {est['state'] * 1e3:8.2f} ms "
                     f"{cones:>12s} {shown[0]:>10s} {shown[1]:>10s}  {'yes' if r['right'] else 'NO'}")
    lines.append("")
    lines += [f"rates {backend}: " + ", ".join(f"{k} {v:.3g}" for k, v in values.items() if k != "source")
              for backend, values in rates.items()]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small rows; nothing written unless --output")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    import tyxonq as tq

    tq.set_machine_rates(None)  # this machine's rates, as a user gets them
    records = [eager_row(tq, *row, args.repeat) for row in rows(tq, args.quick)]
    if not args.quick:
        records.append(jit_row(tq, args.repeat))
    rates = {}
    for backend in sorted({r["backend"] for r in records}):
        tq.set_backend(backend)
        rates[backend] = {k: v for k, v in vars(tq.machine_rates()).items()}
    text = table(records, rates)
    print(text)
    output = args.output or (None if args.quick else str(HERE / "results" / "routes.json"))
    if output:
        path = pathlib.Path(output)
        machine = machine_info(threads=0, engines=(), repeat=args.repeat)
        path.write_text(json.dumps({"machine": machine, "rates": rates, "rows": records}, indent=1))
        path.with_suffix(".txt").write_text(text + "\n")
    return 0 if all(r["right"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
