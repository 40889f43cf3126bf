"""quimb's bare contraction of the light-cone rows of ``overhead_rows.py`` (corr36, z50, amp50).

The circuit is built, its network simplified and its contraction tree found once (quimb's
rehearsal with the suite's cotengra optimizer, ``peers.common.cotengra_optimizer(16)``); only
``tn.contract(all, optimize=tree)`` is timed, min of ``--repeat`` after a warm-up, and checked
against the row's reference. This is the anchor issue 47 names ("quimb's contraction of the same
network, its tree found beforehand"); compare with ``overhead_rows.py`` (tyxonq's whole call) and
``compiled_rows.py`` (tyxonq's compiled call and its contraction alone).

Writes ``results/quimb_bare.json`` (records as ``overhead.json``'s, engine ``quimb-bare``; a
``.txt`` table beside it), which ``goals.py`` counts among the peers of the overhead rows.

Usage: ``python benchmarks/quimb_bare_rows.py [--repeat 20] [--output benchmarks/results/quimb_bare.json]``
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from overhead_rows import correlated, expected, make_spec  # noqa: E402


def bare_contraction(row: str, n: int, repeat: int) -> tuple[float, complex, complex]:
    """``(best seconds, value, reference)`` of quimb's contraction of ``row``'s network."""
    import quimb
    from peers.common import cotengra_optimizer
    from peers.quimb import build_circuit

    spec = make_spec(row, n)
    circuit, optimize, z = build_circuit(spec), cotengra_optimizer(16), quimb.pauli("Z")
    if row == "corr36":
        rehearsal = circuit.local_expectation(np.kron(z, z), tuple(correlated(spec)), optimize=optimize,
                                              rehearse=True)
    elif row == "z50":
        rehearsal = circuit.local_expectation(z, where=spec.observed, optimize=optimize, rehearse=True)
    else:
        rehearsal = circuit.amplitude("0" * spec.n, optimize=optimize, rehearse=True)
    network, tree = rehearsal["tn"], rehearsal["tree"]
    value = complex(network.contract(all, optimize=tree, output_inds=()))  # the warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        network.contract(all, optimize=tree, output_inds=())
        times.append(time.perf_counter() - start)
    reference = complex(np.asarray(expected(row, spec)).reshape(-1)[0])
    return min(times), value, reference


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--output", default=str(pathlib.Path(__file__).resolve().parent / "results"
                                                / "quimb_bare.json"))
    args = parser.parse_args(argv)
    records, lines = [], []
    for row, n in (("corr36", 36), ("z50", 50), ("amp50", 50)):
        best, value, reference = bare_contraction(row, n, args.repeat)
        deviation = abs(value - reference)
        ok = deviation <= 1e-9 * max(1.0, abs(reference))
        records.append({"row": row, "engine": "quimb-bare", "n": n, "best_s": best,
                        "check": "ok" if ok else "WRONG", "deviation": deviation})
        lines.append(f"{row:7s} quimb bare contraction {best * 1e3:8.2f} ms  {'ok' if ok else 'WRONG'} "
                     f"(deviation {deviation:.1e})")
        print(lines[-1], flush=True)
    output = pathlib.Path(args.output)
    output.write_text(json.dumps(records, indent=2) + "\n")
    output.with_suffix(".txt").write_text(f"quimb's bare contraction, its tree found beforehand (min of "
                                          f"{args.repeat} after a warm-up)\n" + "\n".join(lines) + "\n")
    return 0 if all(record["check"] == "ok" for record in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
