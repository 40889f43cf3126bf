"""quimb's bare contraction of the light-cone rows of ``overhead_rows.py`` (corr36, z50, amp50).

The circuit is built, its network simplified and its contraction tree found once (quimb's
rehearsal with the suite's cotengra optimizer, ``peers.common.cotengra_optimizer(16)``); only
``tn.contract(all, optimize=tree)`` is timed, min of ``--repeat`` after a warm-up, and checked
against the row's reference. This is the anchor issue 47 names ("quimb's contraction of the same
network, its tree found beforehand"); compare with ``overhead_rows.py`` (tyxonq's whole call) and
``compiled_rows.py`` (tyxonq's compiled call and its contraction alone).

Usage: ``python benchmarks/quimb_bare_rows.py [--repeat 20]``
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args(argv)
    failed = False
    for row, n in (("corr36", 36), ("z50", 50), ("amp50", 50)):
        best, value, reference = bare_contraction(row, n, args.repeat)
        ok = abs(value - reference) <= 1e-9 * max(1.0, abs(reference))
        failed |= not ok
        print(f"{row:7s} quimb bare contraction {best * 1e3:8.2f} ms  {'ok' if ok else 'WRONG'} "
              f"(deviation {abs(value - reference):.1e})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
