"""quimb's bare contraction of the light-cone rows of ``overhead_rows.py`` (corr36, z50, amp50),
alternated in one process with tyxonq's ordinary call of the same row on NumPy and PyTorch.

quimb's circuit is built, its network simplified and its contraction tree found once (quimb's
rehearsal with the suite's cotengra optimizer, ``peers.common.cotengra_optimizer(16)``); only
``tn.contract(all, optimize=tree)`` is timed. tyxonq's call is ``overhead_rows.py``'s: the circuit
built inside the timed call, as a user builds it. Each engine's best of ``--repeat`` rounds (one
call per engine per round, after a warm-up), every result checked against the row's reference.
This is the anchor issue 47 names ("quimb's contraction of the same network, its tree found
beforehand"); ``compiled_rows.py`` has tyxonq's compiled call and its contraction alone.

Writes ``results/quimb_bare.json`` (records as ``overhead.json``'s; engines ``quimb-bare``,
``tyxonq-numpy``, ``tyxonq-pytorch``; a ``.txt`` table beside it), which ``goals.py`` reads after
``overhead.json``: these side-by-side figures are the rows' figures for those engines.

Usage: ``python benchmarks/quimb_bare_rows.py [--repeat 30] [--output benchmarks/results/quimb_bare.json]``
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from overhead_rows import correlated, deviation, expected, make_spec, tyxonq_build  # noqa: E402
from specs import TOLERANCE  # noqa: E402

ROWS = (("corr36", 36), ("z50", 50), ("amp50", 50))
TYXONQ = ("numpy", "pytorch")


def bare_contraction(row: str, spec: Any) -> Callable[[], Any]:
    """quimb's contraction of ``row``'s network, its tree found beforehand (the call to time)."""
    import quimb
    from peers.common import cotengra_optimizer
    from peers.quimb import build_circuit

    circuit, optimize, z = build_circuit(spec), cotengra_optimizer(16), quimb.pauli("Z")
    if row == "corr36":
        rehearsal = circuit.local_expectation(np.kron(z, z), tuple(correlated(spec)), optimize=optimize,
                                              rehearse=True)
    elif row == "z50":
        rehearsal = circuit.local_expectation(z, where=spec.observed, optimize=optimize, rehearse=True)
    else:
        rehearsal = circuit.amplitude("0" * spec.n, optimize=optimize, rehearse=True)
    network, tree = rehearsal["tn"], rehearsal["tree"]
    return lambda: complex(network.contract(all, optimize=tree, output_inds=()))


def side_by_side(row: str, n: int, repeat: int) -> list[dict]:
    """Every engine's record on ``row``: the best of ``repeat`` alternated rounds, and its check."""
    import tyxonq as tq

    spec = make_spec(row, n)
    want = expected(row, spec)
    calls: dict[str, tuple[Callable[[], Any], Callable[[Any], Any], str]] = {
        "quimb-bare": (bare_contraction(row, spec), lambda r: r, "numpy")}
    for backend in TYXONQ:
        run, convert = tyxonq_build(backend, row, spec)
        calls[f"tyxonq-{backend}"] = (run, convert, backend)
    results, times = {}, {name: [] for name in calls}
    for name, (run, convert, backend) in calls.items():  # the warm-ups (plans), and the checks
        with tq.use_backend(backend):
            results[name] = convert(run())
    for _ in range(repeat):
        for name, (run, _, backend) in calls.items():
            with tq.use_backend(backend):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
    records = []
    for name in calls:
        worst = deviation(row, np.real(results[name]) if row != "amp50" else results[name], want)
        records.append({"row": row, "engine": name, "n": n, "best_s": min(times[name]),
                        "check": "ok" if worst < TOLERANCE else "WRONG", "deviation": worst})
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--output", default=str(pathlib.Path(__file__).resolve().parent / "results"
                                                / "quimb_bare.json"))
    args = parser.parse_args(argv)
    records = [record for row, n in ROWS for record in side_by_side(row, n, args.repeat)]
    lines = [f"{record['row']:7s} {record['engine']:15s} {record['best_s'] * 1e3:8.2f} ms  {record['check']} "
             f"(deviation {record['deviation']:.1e})" for record in records]
    print("\n".join(lines), flush=True)
    output = pathlib.Path(args.output)
    output.write_text(json.dumps(records, indent=2) + "\n")
    output.with_suffix(".txt").write_text(
        f"quimb's bare contraction (its tree found beforehand) alternated in one process with tyxonq's "
        f"ordinary call (the circuit built in the call); best of {args.repeat} rounds after a warm-up\n"
        + "\n".join(lines) + "\n")
    return 0 if all(record["check"] == "ok" for record in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
