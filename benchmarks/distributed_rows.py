"""Distributed rows: each workload of :mod:`distributed_worker` on 1, 2 and 4 ranks of each engine's
launcher (``mpirun`` with NumPy, ``torchrun`` with PyTorch, JAX processes with JAX), one thread
per rank, plus 1 rank with 2 threads (the whole machine to one process); every multi-rank
result is checked against the 1-rank one before its time counts. The 1-rank runs are launched
the same way (a run of one rank computes as every rank does: on JAX, gradients by host nodes).

Run:  python benchmarks/distributed_rows.py [--quick] [--engines mpi torch jax] [--workloads ...]
      -> benchmarks/results/distributed.json and .txt
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import numpy as np
from distributed_worker import WORKLOADS
from report import machine_info, seconds

HERE = pathlib.Path(__file__).parent
BIN = pathlib.Path(sys.executable).parent
BACKENDS = {"mpi": "numpy", "torch": "pytorch", "jax": "jax"}
#: results of more ranks must equal one rank's to this, relative (the sum's order differs)
TOLERANCE = 1e-10
#: trajectories draw different numbers on 2 ranks (each its own seeded stream): same mean within
TRAJECTORY_ERRORS = 4.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


#: plans persist between the launches (a thorough search runs once: the first launch's warm-up)
PLAN_CACHE = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "tyxonq-distributed-bench-cache"


def environment(threads: int, **extra: str) -> dict:
    launched = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                "PMI_SIZE", "JAX_COORDINATOR_ADDRESS")
    clean = {name: value for name, value in os.environ.items() if name not in launched}
    return {**clean, "TYXONQ_PERSISTENT_CACHE": str(PLAN_CACHE), "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            "XLA_FLAGS": f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                         f"intra_op_parallelism_threads={threads}", **extra}


def launch(engine: str, ranks: int, threads: int, arguments: list[str], timeout: float,
           worker_name: str = "distributed_worker.py") -> dict:
    """Run the worker (``worker_name`` in this folder) on ``ranks`` ranks of ``engine``'s launcher
    (``engine`` also its first argument); the record a rank printed on its ``RESULT`` line."""
    worker = [str(HERE / worker_name)]
    if engine not in BACKENDS:  # no launcher: one plain process ("none", or a worker's own mode)
        commands = [[sys.executable, *worker, engine, *arguments]]
        environments = [environment(threads)]
    elif engine == "torch":
        commands = [[str(BIN / "torchrun"), "--nproc-per-node", str(ranks), "--master-port", str(free_port()),
                     *worker, "torch", *arguments]]
        environments = [environment(threads)]
    elif engine == "mpi":
        mpirun = shutil.which("mpirun", path=str(BIN)) or shutil.which("mpirun")
        commands = [[mpirun, "-n", str(ranks), "--oversubscribe", "--bind-to", "none", sys.executable,
                     *worker, "mpi", *arguments]]
        environments = [environment(threads)]
    else:
        address = f"localhost:{free_port()}"
        commands = [[sys.executable, *worker, "jax", *arguments] for _ in range(ranks)]
        environments = [environment(threads, JAX_COORDINATOR_ADDRESS=address, JAX_NUM_PROCESSES=str(ranks),
                                    JAX_PROCESS_ID=str(rank)) for rank in range(ranks)]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for command, env in zip(commands, environments)]
    outputs = []
    try:
        for run in runs:
            out, err = run.communicate(timeout=timeout)
            if run.returncode != 0:
                last = err.strip().splitlines()[-1][:200] if err.strip() else ""
                return {"status": "error", "message": last}
            outputs.append(out)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"over {timeout:.0f} s"}
    finally:
        for run in runs:
            run.kill()
    for out in outputs:
        for line in out.splitlines():
            if line.startswith("RESULT "):
                return {"status": "ok", **json.loads(line[len("RESULT "):])}
    return {"status": "error", "message": "no result printed"}


def checked(workload: str, record: dict, baseline: dict) -> dict:
    """``record`` with its deviation from the 1-rank result, and "WRONG" past the tolerance."""
    if record["status"] != "ok" or baseline["status"] != "ok":
        return record
    found, expected = np.asarray(record["result"]), np.asarray(baseline["result"])
    if workload == "noisy_trajectories":  # each rank its own stream: agree in distribution
        (mean, error), (mean1, error1) = found, expected
        deviation = abs(mean - mean1) / float(np.hypot(error, error1))
        record["deviation"] = deviation
        record["check"] = f"{deviation:.1f} standard errors from 1 rank's mean"
        wrong = deviation > TRAJECTORY_ERRORS
    else:  # relative to the result's size (an amplitude of 49 qubits is ~1e-8)
        deviation = float(np.max(np.abs(found - expected)) / max(np.max(np.abs(expected)), 1e-300))
        record["deviation"] = deviation
        record["check"] = f"{deviation:.0e}"
        wrong = deviation > TOLERANCE
    if wrong:
        record["status"] = "WRONG"
    return record


def table(records: list[dict]) -> str:
    lines = [f"{'workload':<22}{'engine':<7}{'backend':<9}{'ranks':>6}{'threads':>8}{'median':>11}"
             f"{'min':>11}{'warm-up':>10}{'speed-up':>10}  check"]
    for r in records:
        start = f"{r['workload']:<22}{r['engine']:<7}{r['backend']:<9}{r['ranks']:>6}{r['threads']:>8}"
        if r["status"] not in ("ok", "WRONG"):
            lines.append(f"{start}  {r['status']}: {r.get('message', '')}")
            continue
        speedup = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
        lines.append(f"{start}{seconds(r['median_s']):>11}{seconds(r['min_s']):>11}{seconds(r['warmup']):>10}"
                     f"{speedup:>10}  {r['status']} ({r.get('check', 'baseline')})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 2 repetitions")
    parser.add_argument("--engines", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--output", default=str(HERE / "results" / "distributed.json"))
    args = parser.parse_args(argv)
    sizes = {"qaoa_energy_gradient": 24, "noisy_trajectories": 8, "sliced_amplitude": 4} if args.quick else {}
    repeat = 2 if args.quick else args.repeat
    records, failed = [], False
    for workload in args.workloads:
        for engine in args.engines:
            arguments = [BACKENDS[engine], workload, str(repeat)] + ([str(sizes[workload])] if sizes else [])
            baseline = None
            for ranks, threads in ((1, 1), (1, 2), (2, 1), (4, 1)):
                record = launch(engine, ranks, threads, arguments, args.timeout)
                record.update(workload=workload, engine=engine, backend=BACKENDS[engine], ranks=ranks,
                              threads=threads)
                if record["status"] == "ok":
                    record["median_s"] = float(np.median(record["times"]))
                    record["min_s"] = min(record["times"])
                if baseline is None:
                    baseline = record
                else:
                    record = checked(workload, record, baseline)
                    if record["status"] == "ok" and baseline["status"] == "ok":
                        record["speedup"] = baseline["median_s"] / record["median_s"]
                failed |= record["status"] not in ("ok", "timeout")
                records.append(record)
                print(table([record]).splitlines()[1], flush=True)
    output = pathlib.Path(args.output)
    if output.exists():  # keep the rows of workloads and engines not run now (and the peers')
        ran = {(r["workload"], r["engine"]) for r in records}
        old = json.loads(output.read_text())["records"]
        kept = [r for r in old if (r["workload"], r["engine"]) not in ran]
        order = list(WORKLOADS)
        records = sorted(kept + records, key=lambda r: (order.index(r["workload"]), r["engine"] == "quimb"))
    text = table(records)
    output.parent.mkdir(parents=True, exist_ok=True)
    machine = machine_info(1, [], repeat=repeat, quick=args.quick,
                           threads_note="1 thread per rank; 1 rank also with 2 threads")
    output.write_text(json.dumps({"machine": machine, "workloads": WORKLOADS, "records": records}, indent=1))
    output.with_suffix(".txt").write_text(text + "\n")
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
