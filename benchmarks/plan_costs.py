"""The contraction paths each row's first call chooses, and what they cost: run at two commits and
compare, to check that a planning change keeps every row's plans (or to see which it changes).

    PYTHONPATH=src python benchmarks/plan_costs.py [--backends numpy jax] [--workloads ...]
                                                   [--output plan_costs.json]

Every (workload, size, backend) runs in a fresh process with the persistent cache off: the
contractor's ``find_path`` is wrapped to record the cost (flops + 64 x writes) of every path it
returns, then the row's first call and the best of three later calls are timed. Prints one line
per row and writes them all as JSON: ``plans`` (paths found), ``cost_sum``, ``max_log10_cost``,
``first_s``, ``steady_s``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from specs import SIZES, WORKLOADS  # noqa: E402

_ROW = """
import json, math, sys
sys.path.insert(0, {here!r})
import tyxonq as tq
import tyxonq_engine
from measure import first_and_steady
from specs import make_spec
from tyxonq.circuit.contraction import contractor, paths

costs = []
find_path = contractor.Contractor.find_path

def recorded(self, inputs, output, size_dict, thorough=False):
    path = find_path(self, inputs, output, size_dict, thorough)
    costs.append(paths.path_cost(inputs, output, size_dict, path))
    return path

contractor.Contractor.find_path = recorded
tq.set_backend({backend!r})
run, _ = tyxonq_engine.build(make_spec({workload!r}, {n}), {backend!r})
first, steady = first_and_steady(run)
print(json.dumps(dict(plans=len(costs), cost_sum=sum(costs),
                      max_log10_cost=round(math.log10(max(costs)), 4) if costs else 0.0,
                      first_s=first, steady_s=steady)))
"""

#: rows that plan no contraction by default (MPS, the reversible circuit's basis route, state-vector
#: sweeps of small ansatz circuits)
PLANLESS = ("mps_brickwork", "mps_quench", "mps_energy_gradient", "reversible_arithmetic", "adam_vqe_100",
            "batched_energies_64")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["numpy"], choices=["numpy", "pytorch", "jax"])
    parser.add_argument("--workloads", nargs="+", default=[w for w in WORKLOADS if w not in PLANLESS],
                        choices=list(WORKLOADS))
    parser.add_argument("--output", default="plan_costs.json")
    args = parser.parse_args(argv)
    environment = dict(os.environ, TYXONQ_PERSISTENT_CACHE="")
    rows = []
    for backend in args.backends:
        for workload in args.workloads:
            for n in SIZES[workload][0]:
                script = _ROW.format(here=str(HERE), backend=backend, workload=workload, n=n)
                done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True,
                                      text=True, check=True)
                row = dict(workload=workload, qubits=n, backend=backend,
                           **json.loads(done.stdout.strip().splitlines()[-1]))
                rows.append(row)
                print(f"{workload:<25}{n:>4}  {backend:<8} plans {row['plans']:>3}  cost sum "
                      f"{row['cost_sum']:.6g}  first {row['first_s']:.3f} s  "
                      f"steady {row['steady_s'] * 1e3:.2f} ms", flush=True)
    pathlib.Path(args.output).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
