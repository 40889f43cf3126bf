"""The benchmark suite: tyxonq (numpy, pytorch) and the installed peer simulators, checked, then timed.

    python benchmarks/run.py [--quick] [--engines tyxonq-numpy qulacs ...] [--workloads ...]
                             [--sizes 12 ...] [--repeat 5] [--threads 2] [--timeout 600]
                             [--reference-timeout 3600]
                             [--output benchmarks/results/latest.json]

The dense reference of each (workload, size) is computed once, in its own process, before the
engines run. Each (workload, size, engine) runs in its own process with every thread knob pinned to
``--threads`` (:mod:`isolation`): a warm-up call (timed separately: planning, compilation,
library start-up), a check against a dense NumPy reference (a wrong result is reported as WRONG,
not timed), then ``--repeat`` timed repetitions (min and median) and the process's peak RSS
(:mod:`measure`). Engines that are not installed, or have no natural way to do a workload, are
reported and skipped. Prints the full table and a summary (tyxonq vs the fastest peer) and writes
both as JSON with the machine's description. ``--quick`` is the smoke run with tiny sizes (CI).

Exit status 1 when a tyxonq result is WRONG or a tyxonq run fails with an error; timeouts and out
of memory are reported, not failures. Peers' results never fail the run (a peer's WRONG or error
is in the table and the JSON; "n/a" and "not installed" are skipped).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from engines import ENGINES, resolve  # noqa: E402
from isolation import prepare_reference, run_isolated  # noqa: E402
from report import BENIGN, machine_info, merged, results_table, summarise, summary_table  # noqa: E402
from specs import SIZES, WORKLOADS  # noqa: E402


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repetition (smoke run)")
    parser.add_argument("--engines", nargs="+", metavar="ENGINE",
                        help=f"default: all of {', '.join(ENGINES)} (those not installed are skipped)")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--sizes", nargs="+", type=int, help="qubit counts for every chosen workload")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions after the warm-up")
    parser.add_argument("--threads", type=int, default=2, help="threads for every engine")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per engine process")
    parser.add_argument("--reference-timeout", type=float, default=3600,
                        help="seconds for each dense reference (computed once per workload and size)")
    parser.add_argument("--reference-dir", help="keep the dense references here and reuse those already "
                        "there (default: a temporary folder for this run)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other engines' records already in --output (a rerun of some "
                             "engines replaces only theirs)")
    parser.add_argument("--output", default=str(HERE / "results" / "latest.json"))
    return parser.parse_args(argv)


def run_suite(args: argparse.Namespace) -> list[dict]:
    """Every (workload, size, engine) in turn; each line printed as it finishes."""
    engines = [e for e in resolve(args.engines) if e.installed()]
    missing = [e.name for e in resolve(args.engines) if not e.installed()]
    if missing:
        print(f"not installed (skipped): {', '.join(missing)}")
    repeat = 1 if args.quick else args.repeat
    records = []
    print(results_table([]), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as temporary:
        reference_dir = args.reference_dir or temporary
        pathlib.Path(reference_dir).mkdir(parents=True, exist_ok=True)
        for workload in args.workloads:
            for n in args.sizes or SIZES[workload][1 if args.quick else 0]:
                users = [e for e in engines if e.supports(workload)]
                reference = (prepare_reference(workload, n, args.threads, args.reference_timeout,
                                               reference_dir) if users else {"status": "ok"})
                for engine in engines:
                    record = {"workload": workload, "engine": engine.name, "qubits": n}
                    if engine not in users:
                        record["status"] = "n/a"
                    elif reference["status"] != "ok":
                        record.update(status="no reference", message=f"reference: {reference['status']} "
                                      f"{reference.get('message', '')}".strip())
                    else:
                        record = run_isolated(workload, engine.name, n, repeat, args.threads,
                                              args.timeout, reference_dir)
                    records.append(record)
                    print(results_table([record]).splitlines()[-1], flush=True)
    return records


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    records = run_suite(args)
    output = pathlib.Path(args.output)
    previous = json.loads(output.read_text()) if args.merge and output.exists() else None
    if previous:
        engine_order = list(ENGINES)
        records = merged(previous["results"], records, lambda r: (
            list(WORKLOADS).index(r["workload"]), r["qubits"], engine_order.index(r["engine"])))
    summary = summarise(records)
    print("\n" + results_table(records))
    print("\nSummary (min times; ours/peer below 1: tyxonq faster)\n" + summary_table(summary))
    engines = resolve(args.engines)
    machine = machine_info(args.threads, engines, quick=args.quick, repeat=1 if args.quick else args.repeat,
                           timeout_s=args.timeout,
                           not_installed=[e.name for e in engines if not e.installed()])
    if previous:
        machine["versions"] = previous["machine"].get("versions", {}) | machine["versions"]
        # the commit of the run whose other records these join (kept through repeated merges)
        before = previous["machine"]
        machine["merged_into"] = before.get("merged_into", before.get("tyxonq_commit"))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"machine": machine, "results": records, "summary": summary}, indent=2))
    heading = "Summary (min times; ours/peer below 1: tyxonq faster)"
    output.with_suffix(".txt").write_text(f"{results_table(records)}\n\n{heading}\n{summary_table(summary)}\n")
    print(f"\nwritten to {output} and {output.with_suffix('.txt').name}")
    failed = [r for r in records if r["engine"].startswith("tyxonq") and r["status"] not in BENIGN]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
