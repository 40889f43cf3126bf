"""The first call and the steady call of issue 47's own examples on one backend, in a fresh process:
a 24-qubit state and 10^5 samples of a 20-qubit circuit (the 10-layer RX.RZ + CNOT ladder of the
``statevector`` workload, angles uniform in [-1, 1) from seed 5). Neither is a row of ``run.py``
or ``first_calls.py`` yet; the steady figure is the min of five calls after the first.

Usage: ``python benchmarks/large_first_calls.py numpy|pytorch|jax``
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    import tyxonq as tq

    name = (argv if argv is not None else sys.argv[1:])[0]
    K = tq.set_backend(name)
    rng = np.random.default_rng(5)

    def ladder(n: int) -> tq.Circuit:
        return tq.templates.rotation_ladder(n, K.asarray(rng.uniform(-1, 1, 20 * n), K.real_dtype), 10)

    def samples() -> np.ndarray:
        return K.to_numpy(ladder(20).sample(100000, seed=3, format="indices"))

    calls = {"state, 24 qubits": lambda: K.to_numpy(ladder(24).state()), "10^5 samples, 20 qubits": samples}
    for label, call in calls.items():
        start = time.perf_counter()
        call()
        first = time.perf_counter() - start
        steady = []
        for _ in range(5):
            start = time.perf_counter()
            call()
            steady.append(time.perf_counter() - start)
        print(f"{name:8s} {label:24s} first {first:.3f} s  steady {min(steady):.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
