"""tensorcircuit-ng's ``DistributedContractor`` on the sliced-amplitude network of
``benchmarks/distributed_rows.py``: the same 7x7-lattice circuit, its cotengra tree sliced to
2^18-entry slices, the slices spread over the JAX devices of every process. Run in the bench venv
as 1 process, or as 2 JAX processes (one CPU device each):

    .nox/bench-venv/bin/python benchmarks/distributed_tensorcircuit.py 1
    .nox/bench-venv/bin/python benchmarks/distributed_tensorcircuit.py 2   # launches both

Rank 0 prints ``RESULT <json>`` (amplitude, times). Measured outcome (tensorcircuit-ng 1.10.0,
cotengra 0.8.3, kahypar): on this unsimplified network the search returned trees of about 2^41
slices at 2^18 and 2^20 targets and ``DistributedContractor`` failed allocating its slice index
array (16 TiB), so the distributed table has no row for it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
from distributed_worker import lattice_circuit

SIDE, DEPTH, TARGET = 7, 10, 2 ** 20


def run(repeat: int) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    if "JAX_COORDINATOR_ADDRESS" in os.environ:
        jax.distributed.initialize(os.environ["JAX_COORDINATOR_ADDRESS"],
                                   int(os.environ["JAX_NUM_PROCESSES"]), int(os.environ["JAX_PROCESS_ID"]))
    import tensorcircuit as tc
    from tensorcircuit.experimental import DistributedContractor

    tc.set_backend("jax")
    tc.set_dtype("complex128")
    ops = lattice_circuit(SIDE, DEPTH).operations
    angles = np.asarray([float(p) for op in ops for p in op.params])

    def nodes_fn(params):
        c = tc.Circuit(SIDE * SIDE)
        k = 0
        for op in ops:
            if op.gate == "h":
                c.h(*op.qubits)
            elif op.gate == "iswap":
                c.iswap(*op.qubits)
            else:
                c.u(op.qubits[0], theta=params[k], phi=params[k + 1], lbd=params[k + 2])
                k += 3
        return c.amplitude_before("0" * SIDE * SIDE)

    clock = time.perf_counter()
    contractor = DistributedContractor(nodes_fn, jax.numpy.asarray(angles), cotengra_options={
        "slicing_reconf_opts": {"target_size": TARGET}, "max_repeats": 64, "max_time": 30,
        "minimize": "write", "progbar": False, "parallel": False})
    value = complex(contractor.value(jax.numpy.asarray(angles)))
    warmup = time.perf_counter() - clock
    times = []
    for _ in range(repeat):
        clock = time.perf_counter()
        jax.block_until_ready(contractor.value(jax.numpy.asarray(angles)))
        times.append(time.perf_counter() - clock)
    if jax.process_index() == 0:
        print("RESULT " + json.dumps({"ranks": jax.process_count(), "amplitude": [value.real, value.imag],
                                      "times": times, "warmup": warmup}), flush=True)


def main(processes: int, repeat: int = 5) -> int:
    if processes == 1 or "JAX_PROCESS_ID" in os.environ:
        run(repeat)
        return 0
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    runs = [subprocess.Popen([sys.executable, __file__, str(processes), str(repeat)],
                             env={**os.environ, "JAX_COORDINATOR_ADDRESS": f"localhost:{port}",
                                  "JAX_NUM_PROCESSES": str(processes), "JAX_PROCESS_ID": str(rank)})
            for rank in range(processes)]
    return max(run_.wait() for run_ in runs)


if __name__ == "__main__":
    sys.exit(main(*[int(a) for a in sys.argv[1:]]))
