"""Tables and machine information for the suite's records.

A record is a dict with ``workload``, ``engine``, ``qubits`` and ``status``: "ok" (with
``min_s``, ``median_s``, ``warmup_s``, ``peak_rss_mib``, ``deviation``), "WRONG" (its deviation
from the dense reference exceeded the tolerance: not timed), "n/a" (the engine has no natural way
to do the workload), "not installed", "timeout", "out of memory", "error", "no reference" (the
dense reference itself ran out of time or memory: nothing to check against, so not timed) or
"skipped" (scaling: an earlier point of the series stopped it), with a ``message``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import subprocess
from itertools import groupby
from typing import Callable, Iterable

#: statuses that are not failures of an engine's result
BENIGN = ("ok", "n/a", "not installed", "timeout", "out of memory", "no reference", "skipped")


def seconds(value: float | None) -> str:
    """A duration with a unit that keeps 3-4 significant digits."""
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def _row(r: dict) -> str:
    start = f"{r['workload']:<24}{r['qubits']:>4}  {r['engine']:<16}"
    if r["status"] in ("ok", "WRONG"):
        timed = r["status"] == "ok"
        verdict = (f"ok ({r['deviation']:.0e})" if timed else f"WRONG ({r['deviation']:.1e})")
        return (f"{start}{seconds(r.get('min_s')):>10}{seconds(r.get('median_s')):>10}"
                f"{seconds(r['warmup_s']):>10}{r['peak_rss_mib']:>8.0f} MiB  {verdict}")
    message = f": {r['message']}" if r.get("message") else ""
    return f"{start}{r['status']}{message}"


def results_table(records: Iterable[dict]) -> str:
    """Every record: engine, min and median of the repetitions, warm-up, peak RSS, check."""
    lines = [f"{'workload':<24}{'n':>4}  {'engine':<16}{'min':>10}{'median':>10}{'warm-up':>10}"
             f"{'peak RSS':>12}  check"]
    for _, group in groupby(records, key=lambda r: (r["workload"], r["qubits"])):
        lines += [_row(r) for r in group] + [""]
    return "\n".join(lines).rstrip()


def merged(old: list[dict], new: list[dict], order: Callable[[dict], tuple]) -> list[dict]:
    """``old`` with the records of ``new`` replacing those of the same workload, engine and n,
    sorted by ``order``: a rerun of some engines updates a committed result file."""
    def key(record: dict) -> tuple:
        return record["workload"], record["engine"], record.get("qubits", 0)

    return sorted(({key(r): r for r in old} | {key(r): r for r in new}).values(), key=order)


def summarise(records: Iterable[dict]) -> list[dict]:
    """Per (workload, qubits): tyxonq's best backend, tyxonq-numpy, the fastest peer (by min time)
    and the ratio ours/peer (below 1: tyxonq is faster)."""
    summary = []
    for (workload, qubits), group in groupby(records, key=lambda r: (r["workload"], r["qubits"])):
        timed = [r for r in group if r["status"] == "ok"]
        ours = [r for r in timed if r["engine"].startswith("tyxonq")]
        peers = [r for r in timed if not r["engine"].startswith("tyxonq")]
        best = min(ours, key=lambda r: r["min_s"], default=None)
        peer = min(peers, key=lambda r: r["min_s"], default=None)
        numpy = next((r for r in ours if r["engine"] == "tyxonq-numpy"), None)
        summary.append({
            "workload": workload, "qubits": qubits,
            "tyxonq_best_engine": best and best["engine"], "tyxonq_best_s": best and best["min_s"],
            "tyxonq_numpy_s": numpy and numpy["min_s"],
            "fastest_peer": peer and peer["engine"], "fastest_peer_s": peer and peer["min_s"],
            "ratio_ours_to_peer": best["min_s"] / peer["min_s"] if best and peer else None,
        })
    return summary


def summary_table(summary: list[dict]) -> str:
    """The summary as text (min times)."""
    lines = [f"{'workload':<24}{'n':>4}  {'tyxonq best':<26}{'tyxonq-numpy':>13}  "
             f"{'fastest peer':<24}{'ours/peer':>10}"]
    for s in summary:
        best = (f"{seconds(s['tyxonq_best_s'])} ({s['tyxonq_best_engine'].removeprefix('tyxonq-')})"
                if s["tyxonq_best_engine"] else "-")
        peer = f"{seconds(s['fastest_peer_s'])} ({s['fastest_peer']})" if s["fastest_peer"] else "-"
        ratio = f"{s['ratio_ours_to_peer']:.2f}" if s["ratio_ours_to_peer"] is not None else "-"
        lines.append(f"{s['workload']:<24}{s['qubits']:>4}  {best:<26}{seconds(s['tyxonq_numpy_s']):>13}  "
                     f"{peer:<24}{ratio:>10}")
    return "\n".join(lines)


def _cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2 ** 20, 1)
    except OSError:
        pass
    return None


def _tyxonq_commit() -> str | None:
    """The checkout's commit (with "+changes" when the work tree differs), if it is a git checkout."""
    root = pathlib.Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("+changes" if dirty else "")) or None


def machine_info(threads: int, engines: Iterable, **settings: object) -> dict:
    """Platform, CPU model, cores, memory, the pinned thread count, the run's settings, tyxonq's
    commit and the package versions of every installed engine."""
    return {
        "platform": platform.platform(), "python": platform.python_version(), "cpu_model": _cpu_model(),
        "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)), "memory_gib": _memory_gib(),
        "threads": threads, **settings, "tyxonq_commit": _tyxonq_commit(),
        "versions": {e.name: e.versions() for e in engines if e.installed()},
    }
