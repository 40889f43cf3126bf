"""One measurement in this process: build (``setup_s``, untimed otherwise: imports, circuit
objects, transpiling), warm up, check against the reference, time.

    python benchmarks/measure.py WORKLOAD ENGINE QUBITS REPEAT
    python benchmarks/measure.py --reference WORKLOAD QUBITS

prints one JSON record as its last line (the second form only fills the reference cache).
:mod:`isolation` starts it with the thread count pinned (environment and CPU affinity); this
module also tells torch that count.

Peak memory is the process's resident high-water mark (``VmHWM``) over the warm-up and the
timed repetitions; it is reset after the check so the dense reference does not count.
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import time
from typing import Callable

HERE = pathlib.Path(__file__).resolve().parent
#: stop repeating once the timed repetitions have taken this long (at least one always runs)
REPEAT_BUDGET_S = 120.0


def first_and_steady(run: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """``(first call, fastest of repeat later calls)`` of ``run``, in seconds."""
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return first, min(times)


def pin_cpus(threads: int) -> None:
    """Restrict this process to ``threads`` CPUs (XLA and other pools size themselves by it)."""
    available = sorted(os.sched_getaffinity(0))
    if threads < len(available):
        os.sched_setaffinity(0, available[:threads])


def peak_rss_mib() -> float:
    """The resident high-water mark of this process (``VmHWM``) in MiB."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> None:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0; silently kept elsewhere)."""
    try:
        pathlib.Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def measure(workload: str, engine_name: str, n: int, repeat: int, threads: int) -> dict:
    """Build, warm up, check, then time ``repeat`` repetitions; a JSON-able record."""
    from engines import ENGINES
    from specs import make_spec

    from reference import deviation, expected, part_deviations, split_report, within_tolerance

    engine = ENGINES[engine_name]
    if "torch" in engine.requires:
        import torch

        torch.set_num_threads(threads)
    spec = make_spec(workload, n)
    start = time.perf_counter()
    run, canonical = engine.adapter().build(spec, engine.option)
    record = {"workload": workload, "engine": engine_name, "qubits": n,
              "setup_s": time.perf_counter() - start}
    start = time.perf_counter()
    result = run()
    record["warmup_s"] = time.perf_counter() - start
    warmup_peak = peak_rss_mib()
    result_parts, report = split_report(workload, canonical(result))
    record.update(report)
    reference = expected(spec)
    record["deviation"] = deviation(workload, result_parts, reference)
    if spec.max_bond:  # rows checked part by part (truncated or sampled): each part's deviation
        record["deviations"] = part_deviations(workload, result_parts, reference)
    if not within_tolerance(workload, result_parts, reference):
        record.update(status="WRONG", peak_rss_mib=warmup_peak)
        return record
    del result
    reset_peak_rss()
    times: list[float] = []
    while len(times) < repeat and sum(times) < REPEAT_BUDGET_S:
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    record.update(status="ok", min_s=min(times), median_s=statistics.median(times),
                  repetitions=len(times), peak_rss_mib=max(warmup_peak, peak_rss_mib()))
    return record


def prepare_reference(workload: str, n: int) -> dict:
    """Compute the reference of (workload, n) into ``$BENCH_REFERENCE_DIR`` (before any engine
    runs, so its cost is in no engine's time limit)."""
    from specs import make_spec

    from reference import expected

    start = time.perf_counter()
    expected(make_spec(workload, n))
    return {"workload": workload, "qubits": n, "status": "ok", "seconds": time.perf_counter() - start}


def main(argv: list[str]) -> int:
    threads = int(os.environ.get("BENCH_THREADS", "1"))
    pin_cpus(threads)
    sys.path.insert(0, str(HERE))
    if argv[0] == "--reference":
        print(json.dumps(prepare_reference(argv[1], int(argv[2]))), flush=True)
        return 0
    workload, engine, n, repeat = argv[0], argv[1], int(argv[2]), int(argv[3])
    print(json.dumps(measure(workload, engine, n, repeat, threads)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
