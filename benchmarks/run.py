"""The benchmark suite: tyxonq's backends on every workload, checked first, then timed.

    python benchmarks/run.py [--quick] [--backends numpy pytorch] [--repeat 5] [--threads 2]
                             [--output benchmarks/results/latest.json]

Each (workload, backend, size) runs in its own process with BLAS/OpenMP/torch threads pinned to
``--threads``: a warm-up call (timed separately: it holds planning and library start-up), a
correctness check against a dense NumPy reference (a wrong result is reported, not timed), then
``--repeat`` timed repetitions (min and median) and the process's peak RSS. The table is printed
and written as JSON. ``--quick`` is a smoke run with tiny sizes (what CI runs).

Peer simulators are not wired in yet (issue 6); the suite reports tyxonq alone.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def measure(name: str, backend: str, size: int, repeat: int) -> dict:
    """In this process: build, warm up, check, time. Returns a JSON-able record."""
    sys.path.insert(0, str(HERE))
    from workloads import TOLERANCE, WORKLOADS

    import tyxonq as tq

    if backend == "pytorch":
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    tq.set_backend(backend)
    run, check = WORKLOADS[name](size)
    start = time.perf_counter()
    result = run()
    warmup = time.perf_counter() - start
    deviation = check(result)
    record = {"workload": name, "backend": backend, "qubits": size, "warmup_s": warmup,
              "deviation": deviation, "correct": bool(deviation <= TOLERANCE)}
    if record["correct"]:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        record.update(min_s=min(times), median_s=statistics.median(times))
    record["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return record


def run_isolated(name: str, backend: str, size: int, repeat: int, threads: int) -> dict:
    environment = dict(os.environ)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        environment[variable] = str(threads)
    completed = subprocess.run(
        [sys.executable, __file__, "--one", name, backend, str(size), str(repeat)],
        capture_output=True, text=True, env=environment, timeout=3600)
    if completed.returncode != 0:
        reason = (completed.stderr.strip().splitlines() or ["?"])[-1]
        return {"workload": name, "backend": backend, "qubits": size, "error": reason}
    return json.loads(completed.stdout.strip().splitlines()[-1])


def table(records: list[dict]) -> str:
    lines = [f"{'workload':<22}{'backend':<10}{'qubits':>7}{'min':>11}{'median':>11}"
             f"{'warm-up':>11}{'peak RSS':>11}  check"]
    for r in records:
        if "error" in r:
            lines.append(f"{r['workload']:<22}{r['backend']:<10}{r['qubits']:>7}  error: {r['error']}")
            continue
        timing = (f"{r['min_s'] * 1e3:>9.1f}ms{r['median_s'] * 1e3:>9.1f}ms" if r["correct"]
                  else f"{'-':>11}{'-':>11}")
        verdict = f"ok ({r['deviation']:.0e})" if r["correct"] else f"WRONG ({r['deviation']:.1e})"
        lines.append(f"{r['workload']:<22}{r['backend']:<10}{r['qubits']:>7}{timing}"
                     f"{r['warmup_s'] * 1e3:>9.1f}ms{r['peak_rss_mib']:>8.0f}MiB  {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--one":
        name, backend, size, repeat = argv[1], argv[2], int(argv[3]), int(argv[4])
        print(json.dumps(measure(name, backend, size, repeat)))
        return 0
    sys.path.insert(0, str(HERE))
    from workloads import SIZES, WORKLOADS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repetition (smoke)")
    parser.add_argument("--backends", nargs="+", default=["numpy", "pytorch"])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", default=str(HERE / "results" / "latest.json"))
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    records = []
    for name in args.workloads:
        for size in SIZES[name][1 if args.quick else 0]:
            for backend in args.backends:
                records.append(run_isolated(name, backend, size, repeat, args.threads))
                print(table(records[-1:]).splitlines()[-1], flush=True)
    print("\n" + table(records))
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    machine = {"platform": platform.platform(), "python": platform.python_version(),
               "cpus": os.cpu_count(), "threads": args.threads, "quick": args.quick}
    output.write_text(json.dumps({"machine": machine, "results": records}, indent=2))
    print(f"\nwritten to {output}")
    bad = [r for r in records if "error" in r or not r.get("correct")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
