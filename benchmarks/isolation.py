"""Run one measurement in a fresh process with the thread count pinned and a time limit.

Every engine gets the same environment: ``OMP/MKL/OPENBLAS/NUMEXPR/NUMBA/VECLIB`` thread counts,
``BENCH_THREADS`` (which qiskit-aer's ``max_parallel_threads`` and torch's ``set_num_threads``
read), XLA's single-thread flags when one thread is asked for, and CPU affinity to that many
cores (set by the child, :func:`measure.pin_cpus`).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BENCH_THREADS")
_MEMORY_SIGNS = ("memoryerror", "bad_alloc", "out of memory", "unable to allocate", "resource_exhausted",
                 "insufficient memory")


def pinned_environment(threads: int, reference_dir: str | None = None) -> dict[str, str]:
    """This process's environment with every thread knob set to ``threads``."""
    environment = dict(os.environ)
    for variable in THREAD_VARIABLES:
        environment[variable] = str(threads)
    flags = environment.get("XLA_FLAGS", "")
    if threads == 1 and "xla_cpu_multi_thread_eigen" not in flags:
        environment["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                    "intra_op_parallelism_threads=1").strip()
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if reference_dir:
        environment["BENCH_REFERENCE_DIR"] = reference_dir
    return environment


def _failure(returncode: int, stderr: str) -> tuple[str, str]:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    reason = lines[-1].strip() if lines else f"exit status {returncode}"
    if returncode in (-signal.SIGKILL, 137) or any(sign in stderr.lower() for sign in _MEMORY_SIGNS):
        return "out of memory", reason if lines else "killed (out of memory?)"
    return "error", reason


def _child(arguments: list[str], record: dict, threads: int, timeout: float,
           reference_dir: str | None) -> dict:
    """``measure.py arguments`` in a pinned child process: its JSON record, or ``record`` with
    ``status`` "timeout", "error" or "out of memory"."""
    process = subprocess.Popen(
        [sys.executable, str(HERE / "measure.py"), *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=pinned_environment(threads, reference_dir), start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {**record, "status": "timeout", "message": f"no result within {timeout:.0f} s"}
    if process.returncode == 0:
        try:
            return json.loads(stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            pass
    status, message = _failure(process.returncode, stderr)
    return {**record, "status": status, "message": message[:300]}


def run_isolated(workload: str, engine: str, n: int, repeat: int, threads: int, timeout: float,
                 reference_dir: str | None = None) -> dict:
    """:func:`measure.measure` in a child process; a record with ``status`` "timeout", "error" or
    "out of memory" when the child does not finish with a result."""
    return _child([workload, engine, str(n), str(repeat)],
                  {"workload": workload, "engine": engine, "qubits": n}, threads, timeout, reference_dir)


def prepare_reference(workload: str, n: int, threads: int, timeout: float, reference_dir: str) -> dict:
    """Fill the reference cache for (workload, n) in a child process; ``status`` "ok" or why not."""
    return _child(["--reference", workload, str(n)], {"workload": workload, "qubits": n}, threads, timeout,
                  reference_dir)
