"""Time and memory against qubit count: the state of the 10-layer ladder (n = 10..26) and the
amplitude <0...0|psi> of a depth-8 brickwork (n = 20..100 in steps of 10).

    python benchmarks/scaling.py [--quick] [--engines tyxonq-numpy tyxonq-pytorch qulacs ...]
                                 [--studies statevector shallow_amplitude] [--threads 2]
                                 [--repeat 3] [--timeout 600] [--output benchmarks/results/scaling.json]

Every point is one isolated, pinned process (:mod:`isolation`), checked against the reference
before it is timed (the state against a dense simulation, the amplitude against an exact
matrix-product state). The references are computed first, each in its own process
(``--reference-timeout``); sizes past the first reference that fails are dropped. An engine's series stops
at its first point that times out, runs out of memory or fails; later points are recorded as
"skipped". Writes the JSON and one PNG per study (time and peak RSS against n, log scale) beside
it (matplotlib, when installed). ``--quick``: three and two small points, one repetition.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from engines import resolve  # noqa: E402
from isolation import prepare_reference, run_isolated  # noqa: E402
from report import machine_info, merged, results_table  # noqa: E402
from specs import SCALING  # noqa: E402

STOPPING = ("timeout", "out of memory", "error")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small points, 1 repetition")
    parser.add_argument("--engines", nargs="+", default=["tyxonq-numpy", "tyxonq-pytorch"],
                        help="engines to compare (default: tyxonq's numpy and pytorch backends)")
    parser.add_argument("--studies", nargs="+", default=list(SCALING), choices=list(SCALING))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per point")
    parser.add_argument("--reference-timeout", type=float, default=3600,
                        help="seconds for each point's dense reference")
    parser.add_argument("--sizes", nargs="+", type=int,
                        help="only these qubit counts of each study's series")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other points already in --output (a rerun replaces its own)")
    parser.add_argument("--reference-dir",
                        help="keep the references in this folder and reuse those already there "
                             "(default: a temporary folder)")
    parser.add_argument("--output", default=str(HERE / "results" / "scaling.json"))
    return parser.parse_args(argv)


def references(study: str, sizes: tuple[int, ...], args: argparse.Namespace,
               reference_dir: str) -> tuple[int, ...]:
    """Compute the references in increasing n; the sizes up to the first one that fails."""
    done = []
    for n in sizes:
        reference = prepare_reference(study, n, args.threads, args.reference_timeout, reference_dir)
        if reference["status"] != "ok":
            print(f"{study:<24}{n:>4}  {'reference':<16}{reference['status']}: {reference.get('message', '')}"
                  " (larger sizes dropped)", flush=True)
            break
        done.append(n)
    return tuple(done)


def series(study: str, engine: object, sizes: tuple[int, ...], args: argparse.Namespace,
           reference_dir: str) -> list[dict]:
    """One engine's points, in increasing n, until one of them stops the series."""
    records: list[dict] = []
    for n in sizes:
        if records and records[-1]["status"] in STOPPING + ("skipped",):
            record = {"workload": study, "engine": engine.name, "qubits": n, "status": "skipped",
                      "message": f"stopped after n = {records[-1]['qubits']}"
                      if records[-1]["status"] != "skipped" else records[-1]["message"]}
        else:
            record = run_isolated(study, engine.name, n, 1 if args.quick else args.repeat, args.threads,
                                  args.timeout, reference_dir)
        records.append(record)
        print(results_table([record]).splitlines()[-1], flush=True)
    return records


def plot(study: str, records: list[dict], path: pathlib.Path) -> bool:
    """Minimum time and peak RSS against n, one line per engine; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return False
    figure, (times, memory) = plt.subplots(1, 2, figsize=(11, 4.2))
    for engine in dict.fromkeys(r["engine"] for r in records):
        points = [r for r in records if r["engine"] == engine and r["status"] == "ok"]
        if points:
            qubits = [r["qubits"] for r in points]
            times.plot(qubits, [r["min_s"] for r in points], marker="o", label=engine)
            memory.plot(qubits, [r["peak_rss_mib"] for r in points], marker="o", label=engine)
    for axis, label in ((times, "time, min of repetitions (s)"), (memory, "peak RSS (MiB)")):
        axis.set_yscale("log")
        axis.set_xlabel("qubits")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_ylabel(label)
        axis.grid(True, which="both", alpha=0.3)
    times.legend()
    figure.suptitle(f"{study}: {SCALING[study][0]}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    engines = resolve(args.engines)
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    print(results_table([]), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as temporary:
        reference_dir = args.reference_dir or temporary
        for study in args.studies:
            sizes = tuple(n for n in SCALING[study][2 if args.quick else 1]
                          if args.sizes is None or n in args.sizes)
            users = []
            for engine in engines:
                if engine.installed() and engine.supports(study):
                    users.append(engine)
                else:
                    status = "not installed" if not engine.installed() else "n/a"
                    print(f"{study:<24}{'':>4}  {engine.name:<16}{status}")
            checkable = references(study, sizes if users else (), args, reference_dir)
            for engine in users:
                records += series(study, engine, checkable, args, reference_dir)
    machine = machine_info(args.threads, engines, quick=args.quick, repeat=1 if args.quick else args.repeat,
                           timeout_s=args.timeout)
    if args.merge and output.exists():
        previous = json.loads(output.read_text())["results"]
        engines = list(dict.fromkeys(r["engine"] for r in previous + records))
        records = merged(previous, records, lambda r: (
            list(SCALING).index(r["workload"]), engines.index(r["engine"]), r.get("qubits", 0)))
    output.write_text(json.dumps({"machine": machine, "results": records}, indent=2))
    output.with_suffix(".txt").write_text(results_table(records) + "\n")
    print(f"\nwritten to {output}")
    for study in args.studies:
        path = output.with_name(f"{output.stem}_{study}.png")
        if plot(study, [r for r in records if r["workload"] == study], path):
            print(f"plot: {path}")
        else:
            print("matplotlib is not installed: no plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
