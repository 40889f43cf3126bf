"""The peers' rows for the sliced contraction of ``benchmarks/distributed_rows.py``: quimb + cotengra
slicing on the same network (the 7x7-lattice amplitude of :mod:`distributed_worker`, sliced to
the same per-slice size, 2^18 entries), one process; its amplitude checked against tyxonq's
unsliced one first. Run in the bench venv (``nox -s bench`` makes it):

    .nox/bench-venv/bin/python benchmarks/distributed_peers.py [--quick]
    -> appends to benchmarks/results/distributed.json and rewrites .txt
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import sys
import time

import numpy as np
from distributed_rows import TOLERANCE, table
from distributed_worker import lattice_circuit

HERE = pathlib.Path(__file__).parent
QUIMB_GATES = {"h": "H", "u": "U3", "iswap": "ISWAP"}


def quimb_row(side: int, depth: int, target_size: int, repeat: int, expected: complex) -> dict:
    import cotengra as ctg
    import quimb.tensor as qtn

    circuit = lattice_circuit(side, depth)
    quimb_circuit = qtn.Circuit(circuit.num_qubits)
    for op in circuit.operations:
        quimb_circuit.apply_gate(QUIMB_GATES[op.gate], *[float(p) for p in op.params], *op.qubits)
    methods = ["greedy", "kahypar"] if importlib.util.find_spec("kahypar") else ["greedy"]
    optimizer = ctg.ReusableHyperOptimizer(methods=methods, max_repeats=64, max_time=30, minimize="combo",
                                           parallel=False, progbar=False,
                                           slicing_opts={"target_size": target_size})
    zeros = "0" * circuit.num_qubits
    clock = time.perf_counter()
    value = complex(quimb_circuit.amplitude(zeros, optimize=optimizer))
    warmup = time.perf_counter() - clock
    deviation = abs(value - expected) / abs(expected)
    record = {"workload": "sliced_amplitude", "engine": "quimb", "backend": "numpy", "ranks": 1,
              "threads": int(os.environ.get("OMP_NUM_THREADS", "1")), "warmup": warmup,
              "deviation": deviation, "check": f"{deviation:.0e} vs tyxonq unsliced",
              "status": "ok" if deviation <= TOLERANCE else "WRONG"}
    if record["status"] == "ok":
        times = []
        for _ in range(repeat):
            clock = time.perf_counter()
            quimb_circuit.amplitude(zeros, optimize=optimizer)
            times.append(time.perf_counter() - clock)
        record.update(times=times, median_s=float(np.median(times)), min_s=min(times))
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", default=str(HERE / "results" / "distributed.json"))
    args = parser.parse_args(argv)
    import tyxonq as tq

    side, depth, target = (4, 8, 2 ** 8) if args.quick else (7, 10, 2 ** 18)
    with tq.use_backend("numpy"):
        expected = complex(lattice_circuit(side, depth).amplitude("0" * side * side))
    record = quimb_row(side, depth, target, 2 if args.quick else args.repeat, expected)
    output = pathlib.Path(args.output)
    data = json.loads(output.read_text()) if output.exists() else {"records": []}
    data["records"] = [r for r in data["records"] if r.get("engine") != "quimb"] + [record]
    output.write_text(json.dumps(data, indent=1))
    output.with_suffix(".txt").write_text(table(data["records"]) + "\n")
    print(table([record]))
    return 0 if record["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
