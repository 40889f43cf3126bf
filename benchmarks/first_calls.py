"""First calls of tyxonq's engines, in a first and a second process sharing a persistent cache.

    python benchmarks/first_calls.py [--engines tyxonq-numpy tyxonq-pytorch] [--workloads ...]
                                     [--repeat 3] [--output benchmarks/results/first_calls.json]
                                     [--reference-dir DIR]

Runs :mod:`run` twice per engine with ``TYXONQ_PERSISTENT_CACHE`` pointing at a fresh temporary
directory of that engine's own: the first run's warm-up is a first call in a first process
(planning, compilation, library start-up), the second run's warm-up the first call of a second
process that finds the first one's contraction paths and (JAX) compiled programs on disk. Writes
both runs and a table of ``steady (min)``, ``first call`` and ``second process`` per row
(``.json`` and ``.txt``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
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
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--output", default=str(HERE / "results" / "first_calls.json"))
    parser.add_argument("--reference-dir", default=None,
                        help="keep the dense references here and reuse them (default: computed per run)")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)
    runs: list[list[dict]] = [[], []]
    for engine in args.engines:
        with tempfile.TemporaryDirectory(prefix="tyxonq-cache-") as cache:
            os.environ["TYXONQ_PERSISTENT_CACHE"] = cache  # inherited by every engine process
            for index, name in enumerate(("first", "second")):
                target = output.with_name(f"{output.stem}_{name}.json")
                references = ["--reference-dir", args.reference_dir] if args.reference_dir else []
                run.main(["--engines", engine, "--workloads", *args.workloads, "--repeat",
                          str(args.repeat), "--timeout", str(args.timeout), "--output", str(target),
                          *references])
                runs[index] += json.loads(target.read_text())["results"]
                target.unlink()
                target.with_suffix(".txt").unlink()
    rows = []
    for first, second in zip(*runs):
        if first.get("status") != "ok" or second.get("status") != "ok":
            continue
        rows.append({"workload": first["workload"], "qubits": first["qubits"], "engine": first["engine"],
                     "steady_s": min(first["min_s"], second["min_s"]), "first_call_s": first["warmup_s"],
                     "second_process_s": second["warmup_s"]})
    header = f"{'workload':<25}{'n':>4}  {'engine':<16}{'steady':>10}{'first call':>12}{'2nd process':>13}"
    lines = [header] + [f"{r['workload']:<25}{r['qubits']:>4}  {r['engine']:<16}{seconds(r['steady_s']):>10}"
                        f"{seconds(r['first_call_s']):>12}{seconds(r['second_process_s']):>13}" for r in rows]
    output.write_text(json.dumps({"rows": rows, "runs": runs}, indent=2))
    output.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
