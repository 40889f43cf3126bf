"""Issue 47's goals, row by row, read from the committed results (no timing of its own).

    python benchmarks/goals.py [--results benchmarks/results] [--misses-only]

Goals (steady = min of the suite's repetitions, checked results only):

- ``jax/numpy``: tyxonq-jax at most 1.0x tyxonq-numpy (``latest.json``, ``overhead.json`` with
  ``quimb_bare.json``: quimb's bare contraction of the light-cone rows, engine ``quimb-bare``);
- ``jax/peer``: tyxonq-jax at most 0.5x the fastest peer;
- ``eager/peer``: tyxonq-numpy and tyxonq-pytorch each at most 1.0x the fastest peer without a JIT
  (every peer but tensorcircuit-ng on JAX; quimb's bare contraction counted as it is measured);
- ``first call``: tyxonq-numpy and tyxonq-pytorch's first call (median of fresh processes,
  ``first_calls.json``) within 0.5 s of steady;
- ``compiled``: a compiled small light cone within 1.5x of its contraction alone (``compiled.json``).

A miss is printed with the measured floor that explains it (:data:`FLOORS`: the command that
shows it), or as ``UNEXPLAINED``. The exit status is 1 when any miss is unexplained.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Iterator, NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
JIT_ENGINES = ("tyxonq-jax", "tc-jax")
EAGER = ("tyxonq-numpy", "tyxonq-pytorch")
FIRST_CALL_MARGIN_S = 0.5
COMPILED_FACTOR = 1.5

_XLA = "XLA's executables: `floors.py --sections jax_programs xla_products jax_states`"
_TIE = "a tie: alternated in one process, the JAX call (NumPy's work on the host twin) is within " \
       "NumPy's spread: `floors.py --sections twin_rows`"
_HOSTED = "the hosted route's copy into the program: `floors.py --sections host_callback`"
#: misses explained by a measured floor: (goal, row) or (goal, row, engine) -> the floor and the
#: command that shows it (a row is the workload, without its qubit count, or with it for one size)
FLOORS: dict[tuple[str, ...], str] = {
    ("jax/peer", "statevector"): _XLA,
    ("jax/peer", "state20"): _XLA,
    ("jax/peer", "energy_gradient"): _XLA,
    ("jax/peer", "grad12"): _XLA,
    ("jax/peer", "heis14"): _XLA,
    ("jax/peer", "adam_vqe_100"): _XLA,
    ("jax/peer", "batched_energies_64"): _XLA,
    ("jax/peer", "tfim_brickwork_gradient"): _XLA,
    ("jax/peer", "noisy_density_matrix"): _HOSTED,
    ("jax/numpy", "noisy_density_matrix"): _HOSTED,
    ("jax/numpy", "wide_sampling"): _TIE,
    ("jax/numpy", "mps_quench"): _TIE,
    ("jax/numpy", "lattice_sampling"): _TIE,
    ("jax/numpy", "state_sampling"): _TIE,
    ("jax/numpy", "statevector 22"): "a tie: NumPy's state called back from the program, alternated with "
                                     "NumPy's own call in one process 0.96x it: `floors.py --sections "
                                     "twin_rows`",
    ("jax/numpy", "statevector 24"): "NumPy's state called back from the program and copied into it "
                                     "(alternated in one process 1.08x NumPy's call; the copy of 256 MiB "
                                     "into JAX 0.12 s): `floors.py --sections twin_rows host_callback`",
    ("eager/peer", "energy_gradient", "tyxonq-numpy"): "Python per gate block: "
                                                       "`floors.py --sections per_call`",
    ("eager/peer", "energy_gradient", "tyxonq-pytorch"): "NumPy's own gradient, run on the host twin "
                                                         "(1.0-1.1x NumPy's call alternated with it), "
                                                         "past qulacs as NumPy is: Python per gate "
                                                         "block: `floors.py --sections per_call "
                                                         "autograd_floor`",
    ("jax/peer", "mps_quench"): "ranks read from values, so no compiled program: NumPy's quench on the "
                                "host twin, whose splits replayed bare (gate product, SVD, rank, "
                                "truncation) take 0.51x qiskit-aer's whole quench: `floors.py --sections "
                                "mps_splits twin_rows`",
    ("first call", "qaoa_energy_p3"): "planning 150 light cones (42 distinct) in Python: canonical forms a "
                                      "quarter, plans a third, a cheaper path finder no faster: "
                                      "`floors.py --sections first_call_parts first_call_gc plan_trade`",
    ("first call", "qaoa_gradient_p3"): "as qaoa_energy_p3 (the same 42 cones)",
    ("first call", "noisy_energy"): "the route choice measures this machine's rates, once per process "
                                    "without a persistent cache: `floors.py --sections first_call_parts`",
    ("first call", "noisy_density_matrix"): "1.1 GiB of fresh pages: `floors.py --sections first_touch`",
    ("first call", "statevector 22"): "the plan's search and fresh pages (planning 0.59 s, the first "
                                      "contraction 0.34 s over steady): `floors.py --sections first_states "
                                      "first_touch`",
    ("first call", "statevector 24"): "0.5 GiB of fresh pages and the plan's search (planning 0.51 s, the "
                                      "first contraction 1.75 s over steady): `floors.py --sections "
                                      "first_states first_touch`",
    ("first call", "lattice_sampling"): "a thorough path search sized to its 14 s contraction: "
                                        "`floors.py --sections first_call_parts`",
}


class Check(NamedTuple):
    goal: str
    row: str
    engine: str
    value: float
    limit: float
    detail: str

    @property
    def met(self) -> bool:
        return self.value <= self.limit


def _load(path: pathlib.Path) -> list | dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def _steady_rows(results: pathlib.Path) -> dict[str, dict[str, float]]:
    """``{row label: {engine: min seconds}}`` of checked results, from the suite and the per-call rows
    (quimb's bare contractions among them)."""
    rows: dict[str, dict[str, float]] = {}
    suite = _load(results / "latest.json") or {"results": []}
    for record in suite["results"]:
        if record.get("status") == "ok":
            row = f"{record['workload']} {record['qubits']}"
            rows.setdefault(row, {})[record["engine"]] = record["min_s"]
    for record in [*(_load(results / "overhead.json") or []), *(_load(results / "quimb_bare.json") or [])]:
        if record.get("check") == "ok":
            rows.setdefault(f"{record['row']} {record['n']}", {})[record["engine"]] = record["best_s"]
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def steady_checks(results: pathlib.Path) -> Iterator[Check]:
    for row, engines in _steady_rows(results).items():
        peers = {engine: s for engine, s in engines.items() if not engine.startswith("tyxonq")}
        eager_peers = {engine: s for engine, s in peers.items() if engine not in JIT_ENGINES}
        jax, numpy = engines.get("tyxonq-jax"), engines.get("tyxonq-numpy")
        if jax is not None and numpy is not None:
            yield Check("jax/numpy", row, "tyxonq-jax", jax / numpy, 1.0, f"{_ms(jax)} / {_ms(numpy)}")
        if jax is not None and peers:
            peer = min(peers, key=peers.get)
            yield Check("jax/peer", row, "tyxonq-jax", jax / peers[peer], 0.5,
                        f"{_ms(jax)} / {peer} {_ms(peers[peer])}")
        if not eager_peers:
            continue
        eager_peer = min(eager_peers, key=eager_peers.get)
        for engine in (engine for engine in EAGER if engine in engines):
            yield Check("eager/peer", row, engine, engines[engine] / eager_peers[eager_peer], 1.0,
                        f"{_ms(engines[engine])} / {eager_peer} {_ms(eager_peers[eager_peer])}")


def first_call_checks(results: pathlib.Path) -> Iterator[Check]:
    for record in (_load(results / "first_calls.json") or {"rows": []})["rows"]:
        first, steady = record["first_call_s"], record["steady_s"]
        row = f"{record['workload']} {record['qubits']}"
        yield Check("first call", row, record["engine"], first - steady, FIRST_CALL_MARGIN_S,
                    f"first {_ms(first)}, steady {_ms(steady)}")


def compiled_checks(results: pathlib.Path) -> Iterator[Check]:
    best: dict[tuple[str, str], dict[str, float]] = {}
    for record in _load(results / "compiled.json") or []:
        row = (f"{record['row']} {record['n']}", record["backend"])
        best.setdefault(row, {})[record["mode"]] = record["best_s"]
    for (row, backend), modes in best.items():
        if "compiled" in modes and "contraction" in modes:
            yield Check("compiled", row, backend, modes["compiled"] / modes["contraction"], COMPILED_FACTOR,
                        f"{_ms(modes['compiled'])} / contraction {_ms(modes['contraction'])}")


def floor_of(check: Check) -> str | None:
    """The measured floor explaining a missed check, if :data:`FLOORS` names one for its row."""
    row = check.row.rsplit(" ", 1)[0]
    return (FLOORS.get((check.goal, check.row, check.engine)) or FLOORS.get((check.goal, check.row))
            or FLOORS.get((check.goal, row, check.engine)) or FLOORS.get((check.goal, row)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(HERE / "results"))
    parser.add_argument("--misses-only", action="store_true")
    args = parser.parse_args(argv)
    results = pathlib.Path(args.results)
    checks = [*steady_checks(results), *first_call_checks(results), *compiled_checks(results)]
    unexplained = 0
    print(f"{'goal':<11}{'row':<28}{'engine':<16}{'value':>8}{'limit':>7}  status")
    for check in checks:
        floor = None if check.met else floor_of(check)
        unexplained += not check.met and floor is None
        status = "met" if check.met else f"missed: {floor}" if floor else "UNEXPLAINED"
        if check.met and args.misses_only:
            continue
        print(f"{check.goal:<11}{check.row:<28}{check.engine:<16}{check.value:>8.2f}{check.limit:>7.2f}  "
              f"{status} ({check.detail})")
    met = sum(check.met for check in checks)
    explained = len(checks) - met - unexplained
    print(f"\n{met} of {len(checks)} checks met; {explained} misses explained by a floor, "
          f"{unexplained} unexplained")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
