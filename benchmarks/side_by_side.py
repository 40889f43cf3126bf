"""Shared by the side-by-side row scripts (``dynamic_rows.py``, ``evolution_rows.py``): timing a
call, the table of records, and writing the results.

A record is a dict with ``row`` and ``engine``, then either ``best_s`` and ``warm_s`` (with a
``check``, optionally a ``deviation`` and a ``note``) or a ``status`` (not installed, failed).
"""

from __future__ import annotations

import json
import pathlib
import time
from typing import Any, Callable


def timed(fn: Callable[[], Any], repeat: int, long_run_s: float = float("inf")) -> tuple[float, float, Any]:
    """``(warm-up seconds, best of repeat seconds, result)``; with ``repeat == 0``, or a warm-up
    longer than ``long_run_s``, the warm-up is the only run and its time the best."""
    start = time.perf_counter()
    result = fn()
    warm = time.perf_counter() - start
    if repeat == 0 or warm > long_run_s:
        return warm, warm, result
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return warm, best, result


def table(title: str, records: list[dict], width: int) -> list[str]:
    """The lines of the table: a title, a header, one line per record."""
    lines = [title, f"{'row':4} {'engine':{width}} {'best (s)':>10} {'warm-up (s)':>12}  check"]
    for record in records:
        if "best_s" in record:
            deviation = f" (deviation {record['deviation']:.1e})" if "deviation" in record else ""
            lines.append(f"{record['row']:4} {record['engine']:{width}} {record['best_s']:10.3f} "
                         f"{record['warm_s']:12.3f}  {record.get('check', 'unchecked')}{deviation}"
                         + (f" ({record['note']})" if "note" in record else ""))
        else:
            lines.append(f"{record['row']:4} {record['engine']:{width}} {record['status']}")
    return lines


def finish(records: list[dict], lines: list[str], output: str, write: bool) -> int:
    """Print the table, write the JSON and the table next to it when ``write``; the exit status:
    0 when every checked result is ok."""
    print("\n".join(lines))
    if write:
        pathlib.Path(output).write_text(json.dumps(records, indent=1))
        pathlib.Path(output).with_suffix(".txt").write_text("\n".join(lines) + "\n")
    return 0 if all(r.get("check", "ok") == "ok" for r in records) else 1
