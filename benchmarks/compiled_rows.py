"""Compiled results against the contraction alone: small light cones and amplitudes, called with
new angles, on tyxonq's NumPy and PyTorch backends.

    PYTHONPATH=src python benchmarks/compiled_rows.py [--quick] [--repeat 20]
        [--output benchmarks/results/compiled.json]

Rows (full size / ``--quick``, in qubits; the workloads of :mod:`overhead_rows`): z50, ``<Z_n//2>``
of ``brickwork(n, 10)``; amp50, ``<0...0|psi>`` of it; corr36, ``<Z_a Z_a+1>`` of ``lattice(n, 8)``.

Per row and backend, each timed as the best of ``--repeat`` calls after a warm-up, each call with
fresh angles (drawn beforehand):

- plain: the circuit built from the angles and the result asked (``overhead_rows``' timing);
- with_parameters: ``c.with_parameters(angles).<result>(...)`` on a circuit built once;
- compiled: ``f = c.compile(<result>, ...)`` once, then ``f(angles)``;
- contraction: the contraction alone, on leaves bound beforehand (the plan's compiled pairwise
  steps, what ``run_plan`` runs, on the backend the call runs it on: PyTorch's small light cones
  run on its NumPy host twin): the floor a call cannot go below without a cheaper contraction.

The goal (issue 47): compiled within 1.5x of the contraction alone. Every result is checked
against :mod:`reference` (light-cone dense simulation; the exact MPS amplitude, relative to its
magnitude).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import overhead_rows  # noqa: E402 - the rows' workloads and references

ROWS = ("z50", "amp50", "corr36")
BACKENDS = ("numpy", "pytorch")
MODES = ("plain", "with_parameters", "compiled", "contraction")


def best_of(calls: list[Callable[[], Any]]) -> tuple[float, Any]:
    """The fastest of the calls (one warm-up first), and the last result."""
    result = calls[0]()
    best = float("inf")
    for call in calls:
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def row_calls(tq: Any, row: str, spec: Any) -> tuple[Callable[[Any], Any], str, tuple, dict]:
    """The circuit of the row from angles, and the result asked of it."""
    n = spec.n
    if row == "corr36":
        return (lambda p: overhead_rows.lattice_circuit(tq, spec, p), "expectation_ps", (),
                {"z": overhead_rows.correlated(spec)})
    if row == "z50":
        return (lambda p: tq.templates.brickwork(n, p, spec.layers), "expectation_ps", (),
                {"z": [spec.observed]})
    return (lambda p: tq.templates.brickwork(n, p, spec.layers), "amplitude", ("0" * n,), {})


def contraction_alone(tq: Any, circuit: Any, method: str, args: tuple, kwargs: dict) -> Callable[[], Any]:
    """The call's contraction on leaves bound beforehand, where the call runs it (on PyTorch's
    host twin, NumPy, for light cones this small)."""
    from tyxonq.circuit.contraction import execution
    from tyxonq.circuit.contraction.binding import Binder
    from tyxonq.circuit.contraction.evaluation import capturing_requests
    from tyxonq.circuit.contraction.host_route import host_twin_for

    with capturing_requests() as captured:
        getattr(circuit, method)(*args, **kwargs)
    (evaluation,) = captured
    K, operations, inputs, requests = (tq.get_backend(), evaluation.operations, evaluation.inputs,
                                       evaluation.requests)
    if (host := host_twin_for(K, operations, inputs, requests)) is not None:
        K, operations, inputs, requests = host
    (request,) = requests
    leaves = Binder(K, operations, inputs).bind(request.network_plan.network, **request.binding)
    return lambda: execution.run_plan(request.network_plan, K, leaves)


def measure(row: str, backend: str, n: int, repeat: int) -> list[dict]:
    import tyxonq as tq

    spec = overhead_rows.make_spec(row, n)
    want = overhead_rows.expected(row, spec)
    tq.set_backend(backend)
    K = tq.get_backend()
    build, method, args, kwargs = row_calls(tq, row, spec)
    rng = np.random.default_rng(7)
    angle_sets = [spec.params] + [rng.uniform(0, np.pi, len(spec.params)) for _ in range(repeat - 1)]
    circuit = build(spec.params)
    compiled = circuit.compile(method, *args, **kwargs)
    ask = lambda c: getattr(c, method)(*args, **kwargs)  # noqa: E731
    calls = {
        "plain": [lambda p=p: ask(build(p)) for p in angle_sets],
        "with_parameters": [lambda p=p: ask(circuit.with_parameters(p)) for p in angle_sets],
        "compiled": [lambda p=p: compiled(p) for p in angle_sets],
        "contraction": [contraction_alone(tq, circuit, method, args, kwargs)] * repeat,
    }
    records = []
    for mode in MODES:
        best, _ = best_of(calls[mode])
        result = complex(K.to_numpy(calls[mode][0]()))
        check = overhead_rows.deviation(row, result if row == "amp50" else result.real, want)
        records.append({"row": row, "n": n, "backend": backend, "mode": mode, "best_s": best,
                        "deviation": check, "direct": compiled.direct if mode == "compiled" else None})
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--output", default=str(HERE / "results" / "compiled.json"))
    args = parser.parse_args(argv)
    records = []
    for row in ROWS:
        n = overhead_rows.SIZES[row][1 if args.quick else 0]
        for backend in BACKENDS:
            records += measure(row, backend, n, args.repeat)
    lines = [f"compiled results ({platform.machine()}; best of {args.repeat} calls with fresh angles after a "
             "warm-up; deviation from the reference)",
             f"{'row':7}{'n':>4}  {'backend':8}" + "".join(f"{mode:>17}" for mode in MODES)
             + f"{'compiled/contraction':>22}  check"]
    for row in ROWS:
        for backend in BACKENDS:
            mine = {r["mode"]: r for r in records if r["row"] == row and r["backend"] == backend}
            worst = max(r["deviation"] for r in mine.values())
            lines.append(f"{row:7}{mine['plain']['n']:>4}  {backend:8}"
                         + "".join(f"{mine[mode]['best_s'] * 1e3:14.3f} ms" for mode in MODES)
                         + f"{mine['compiled']['best_s'] / mine['contraction']['best_s']:21.2f}x"
                         + f"  {'ok' if worst < 1e-8 else 'WRONG'} ({worst:.0e})")
    print("\n".join(lines))
    output = pathlib.Path(args.output)
    output.write_text(json.dumps(records, indent=1))
    output.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    return 0 if all(r["deviation"] < 1e-8 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
