"""First calls of tyxonq's engines, in a first and a second process sharing a persistent cache.

    python benchmarks/first_calls.py [--engines tyxonq-numpy tyxonq-pytorch] [--workloads ...]
                                     [--repeat 3] [--first-runs 3] [--merge]
                                     [--output benchmarks/results/first_calls.json]
                                     [--reference-dir DIR]

Runs :mod:`run` ``--first-runs`` times per engine (3 by default), each with
``TYXONQ_PERSISTENT_CACHE`` pointing at a fresh temporary directory (one per workload, so that
rows sharing a network do not find each other's plans): each run's warm-up is a first
call in a first process (planning, compilation, library start-up); then once more on the last
run's directory, whose warm-up is the first call of a second process that finds the first one's
contraction paths, measured machine rates and (JAX) compiled programs on disk. A single first
call on this virtual machine varies by a factor of two or more (the same 12-qubit density matrix:
0.62 and 2.40 s in two fresh processes), so the table gives the median first call (the JSON every
run's). Writes every run and a table of ``steady (min)``, ``first call`` (median) and ``second
process`` per row (``.json`` and ``.txt``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import statistics
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402
from report import seconds  # noqa: E402
from specs import WORKLOADS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="+", default=["tyxonq-numpy", "tyxonq-pytorch"])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--first-runs", type=int, default=3, help="first processes per engine (median)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--output", default=str(HERE / "results" / "first_calls.json"))
    parser.add_argument("--merge", action="store_true",
                        help="replace only these rows (and their runs) in an existing output")
    parser.add_argument("--reference-dir", default=None,
                        help="keep the dense references here and reuse them (default: computed per run)")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)
    passes = args.first_runs + 1
    runs: list[list[dict]] = [[] for _ in range(passes)]  # the first processes', then the second's
    references = ["--reference-dir", args.reference_dir] if args.reference_dir else []
    for engine in args.engines:
        for workload in args.workloads:  # caches of its own: rows that share a network (the 20-qubit
            # state and its samples) would otherwise find each other's plans
            with contextlib.ExitStack() as caches:
                for index in range(passes):
                    if index < args.first_runs:  # a fresh cache per first process; the second reuses the last
                        cache = caches.enter_context(tempfile.TemporaryDirectory(prefix="tyxonq-cache-"))
                        os.environ["TYXONQ_PERSISTENT_CACHE"] = cache  # inherited by every engine process
                    target = output.with_name(f"{output.stem}_pass{index}.json")
                    run.main(["--engines", engine, "--workloads", workload, "--repeat", str(args.repeat),
                              "--timeout", str(args.timeout), "--output", str(target), *references])
                    runs[index] += json.loads(target.read_text())["results"]
                    target.unlink()
                    target.with_suffix(".txt").unlink()
    rows = []
    for records in zip(*runs):
        if any(record.get("status") != "ok" for record in records):
            continue
        first, second = records[:-1], records[-1]
        rows.append({"workload": second["workload"], "qubits": second["qubits"], "engine": second["engine"],
                     "steady_s": min(record["min_s"] for record in records),
                     "first_call_s": statistics.median(record["warmup_s"] for record in first),
                     "first_calls_s": [record["warmup_s"] for record in first],
                     "second_process_s": second["warmup_s"]})
    if args.merge and output.exists():
        rows, runs = _merged(json.loads(output.read_text()), rows, runs)
    header = f"{'workload':<25}{'n':>4}  {'engine':<16}{'steady':>10}{'first call':>12}{'2nd process':>13}" \
        f"  (first call: median of {args.first_runs} first processes)"
    lines = [header] + [f"{r['workload']:<25}{r['qubits']:>4}  {r['engine']:<16}{seconds(r['steady_s']):>10}"
                        f"{seconds(r['first_call_s']):>12}{seconds(r['second_process_s']):>13}" for r in rows]
    output.write_text(json.dumps({"rows": rows, "runs": runs}, indent=2))
    output.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _key(record: dict) -> tuple:
    return record["workload"], record["qubits"], record["engine"]


def _merged(old: dict, rows: list[dict], runs: list[list[dict]]) -> tuple[list[dict], list[list[dict]]]:
    """``old``'s rows and runs with those of the same workload, size and engine replaced by the
    new ones (in place; rows it lacks appended)."""
    new_rows = {_key(row): row for row in rows}
    merged_rows = [new_rows.pop(_key(row), row) for row in old["rows"]] + list(new_rows.values())
    if len(old["runs"]) != len(runs):
        raise SystemExit(f"--merge: the output has {len(old['runs']) - 1} first runs per row, not "
                         f"{len(runs) - 1}; use --first-runs {len(old['runs']) - 1}")
    merged_runs = []
    for before, now in zip(old["runs"], runs):
        fresh = {_key(record): record for record in now}
        merged_runs.append([fresh.pop(_key(record), record) for record in before] + list(fresh.values()))
    return merged_rows, merged_runs


if __name__ == "__main__":
    sys.exit(main())
