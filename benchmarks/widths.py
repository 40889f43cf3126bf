"""Planned contraction widths and flops of the suite's tensor-network rows: tyxonq against quimb.

    python benchmarks/widths.py [--quick] [--workloads statevector qaoa_energy_p3 ...]
                                [--output benchmarks/results/widths.json]

For every tensor-network row of the suite (the ladder's state at 16, 20 and 22 qubits, contracted;
the 50-qubit brickwork's ``<0...0|psi>`` and ``<Z_middle>``; the 100-node QAOA energies, p = 1..3;
the 50-qubit TFIM brickwork energy) both libraries plan the result without contracting it:
tyxonq by ``Circuit.rehearse`` (NumPy backend), quimb by ``to_dense_rehearse``,
``amplitude_rehearse`` and ``local_expectation_rehearse`` (one per Hamiltonian term) with the
suite's cotengra ``ReusableHyperOptimizer`` at 16 repeats. Each row reports the width (log2 of
the entries of the largest intermediate; for an energy, the largest over its terms), log10 of the
flops (for an energy, of their sum over the terms) and the differences ours - quimb; the goal is
ours <= quimb + 1 everywhere. Both libraries count flops as multiply-adds: for each pairwise step
the product of the sizes of every index involved (cotengra's ``contraction_cost``; its
``total_flops(dtype="complex")`` would be 4x that, neither applies it). cotengra's search is
randomised, so quimb's numbers vary by about one between runs. Prints the table and writes it with
the machine's description as JSON and text. ``--quick``: the suite's ``--quick`` sizes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import textwrap
import time
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from engines import ENGINES  # noqa: E402
from peers.common import LIGHT_CONE_REPEATS  # noqa: E402
from report import machine_info  # noqa: E402
from specs import SIZES, Spec, make_spec  # noqa: E402

#: (workload, result): the suite's rows that are contracted as tensor networks
ROWS = (("statevector", "state"), ("brickwork_local", "amplitude"), ("brickwork_local", "<Z_middle>"),
        ("qaoa_energy_p1", "energy"), ("qaoa_energy_p2", "energy"), ("qaoa_energy_p3", "energy"),
        ("tfim_brickwork_gradient", "energy"))
#: cotengra repeats of quimb's searches (those of the suite's light-cone rows)
QUIMB_REPEATS = LIGHT_CONE_REPEATS


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the suite's --quick sizes")
    workloads = list(dict.fromkeys(workload for workload, _ in ROWS))
    parser.add_argument("--workloads", nargs="+", default=workloads, choices=workloads)
    parser.add_argument("--output", default=str(HERE / "results" / "widths.json"))
    return parser.parse_args(argv)


def ours(spec: Spec, result: str) -> dict:
    """tyxonq's rehearsal of ``result`` (NumPy backend): width, flops, contractions, plans."""
    from tyxonq_engine import ansatz

    import tyxonq as tq

    tq.set_backend("numpy")
    start = time.perf_counter()
    if spec.workload == "statevector":
        circuit = tq.templates.rotation_ladder(spec.n, spec.params, spec.layers)
        report = circuit.rehearse("state", method="contraction")
    elif spec.workload == "brickwork_local":
        circuit = tq.templates.brickwork(spec.n, spec.params, spec.layers)
        report = (circuit.rehearse("amplitude", "0" * spec.n) if result == "amplitude"
                  else circuit.rehearse("expectation_ps", z=[spec.observed]))
    else:
        make, hamiltonian = ansatz(spec)
        report = make(spec.params).rehearse("expectation", hamiltonian, method="lightcone")
    return {"status": "ok", "width": report.width, "log10_flops": report.log10_flops,
            "contractions": report.contractions, "distinct_plans": report.distinct_plans,
            "planning_s": report.planning_seconds, "seconds": time.perf_counter() - start}


def quimb_rehearsals(spec: Spec, result: str) -> list[dict]:
    """quimb's rehearsal dicts (``tree`` among them) of ``result``: one per Hamiltonian term for an
    energy."""
    import quimb
    from peers.common import cotengra_optimizer
    from peers.quimb import build_circuit, local_terms

    circuit, optimize = build_circuit(spec), cotengra_optimizer(QUIMB_REPEATS)
    if spec.workload == "statevector":
        return [circuit.to_dense_rehearse(optimize=optimize)]
    if result == "amplitude":
        return [circuit.amplitude_rehearse("0" * spec.n, optimize=optimize)]
    if result == "<Z_middle>":
        return [circuit.local_expectation_rehearse(quimb.pauli("Z"), spec.observed, optimize=optimize)]
    return [circuit.local_expectation_rehearse(operator, qubits, optimize=optimize)
            for _, operator, qubits in local_terms(spec)]


def theirs(spec: Spec, result: str) -> dict:
    """quimb's plan of ``result``: the largest width and the summed flops of its rehearsals."""
    if not ENGINES["quimb"].installed():
        return {"status": "not installed"}
    start = time.perf_counter()
    trees = [rehearsal["tree"] for rehearsal in quimb_rehearsals(spec, result)]
    flops = sum(tree.contraction_cost() for tree in trees)
    return {"status": "ok", "width": max(tree.contraction_width() for tree in trees),
            "log10_flops": math.log10(flops) if flops > 0 else 0.0, "contractions": len(trees),
            "seconds": time.perf_counter() - start}


def measure_row(workload: str, result: str, n: int) -> dict:
    """Both plans of one row and their differences (ours - quimb); a failure is recorded, not raised."""
    spec = make_spec(workload, n)
    record: dict[str, Any] = {"workload": workload, "qubits": n, "result": result}
    for name, plan in (("tyxonq", ours), ("quimb", theirs)):
        try:
            record[name] = plan(spec, result)
        except Exception as error:  # noqa: BLE001 - reported in the table, the other rows go on
            record[name] = {"status": "error", "message": f"{type(error).__name__}: {error}"[:300]}
    if record["tyxonq"]["status"] == record["quimb"]["status"] == "ok":
        record["width_difference"] = record["tyxonq"]["width"] - record["quimb"]["width"]
        record["log10_flops_difference"] = record["tyxonq"]["log10_flops"] - record["quimb"]["log10_flops"]
    return record


def _cell(plan: dict, key: str, form: str) -> str:
    return format(plan[key], form) if plan["status"] == "ok" else "-"


HEADER = (f"{'workload':<24}{'n':>4}  {'result':<12}{'terms':>6}{'W ours':>8}{'W quimb':>9}{'dW':>6}"
          f"{'log10 F ours':>14}{'quimb':>7}{'dF':>7}{'plans':>7}{'ours s':>8}{'quimb s':>9}")
LEGEND = ("W: log2 of the largest intermediate's entries (an energy: the largest over its terms); "
          "F: multiply-adds (an energy: summed over its terms); d = ours - quimb (goal: dW <= +1); "
          "plans: tyxonq's distinct plans; s: seconds to plan (quimb: simplification and "
          f"cotengra search, {QUIMB_REPEATS} repeats). quimb's W and F are those of the network left "
          "after its simplification (ADCRS), which itself contracts tensors: a term it reduces "
          "to a scalar counts W 0-1, F 0")


def line(r: dict) -> str:
    """One row of the table."""
    a, b = r["tyxonq"], r["quimb"]
    terms = a.get("contractions", b.get("contractions", 0))
    dw = f"{r['width_difference']:+.0f}" if "width_difference" in r else "-"
    df = f"{r['log10_flops_difference']:+.2f}" if "log10_flops_difference" in r else "-"
    return (f"{r['workload']:<24}{r['qubits']:>4}  {r['result']:<12}{terms:>6}"
            f"{_cell(a, 'width', '.0f'):>8}{_cell(b, 'width', '.0f'):>9}{dw:>6}"
            f"{_cell(a, 'log10_flops', '.2f'):>14}{_cell(b, 'log10_flops', '.2f'):>7}{df:>7}"
            f"{_cell(a, 'distinct_plans', 'd'):>7}{_cell(a, 'seconds', '.1f'):>8}"
            f"{_cell(b, 'seconds', '.1f'):>9}")


def table(records: list[dict]) -> str:
    """Every row, the legend, and what failed or is not installed."""
    failures = dict.fromkeys(
        f"{name}: not installed" if r[name]["status"] == "not installed"
        else f"{r['workload']} {r['result']} ({name}): {r[name]['status']}: {r[name].get('message', '')}"
        for r in records for name in ("tyxonq", "quimb") if r[name]["status"] != "ok")
    return "\n".join([HEADER, *map(line, records), "", *textwrap.wrap(LEGEND, 110), *failures])


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    records: list[dict] = []
    print(HEADER, flush=True)
    for workload, result in ROWS:
        if workload not in args.workloads:
            continue
        for n in SIZES[workload][1 if args.quick else 0]:
            records.append(measure_row(workload, result, n))
            print(line(records[-1]), flush=True)
    text = table(records)
    print("\n" + text)
    engines = [ENGINES["tyxonq-numpy"], ENGINES["quimb"]]
    machine = machine_info(len(os.sched_getaffinity(0)), engines, quick=args.quick,
                           quimb_repeats=QUIMB_REPEATS,
                           not_installed=[e.name for e in engines if not e.installed()])
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"machine": machine, "results": records}, indent=2))
    output.with_suffix(".txt").write_text(text + "\n")
    print(f"\nwritten to {output} and {output.with_suffix('.txt').name}")
    failed = [r for r in records if r["tyxonq"]["status"] != "ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
