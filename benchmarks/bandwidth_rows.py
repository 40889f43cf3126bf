"""State vectors against the memory-bandwidth bound: the statevector workload (10 layers of RX·RZ on
every qubit and a CNOT ladder) at 20 and 22 qubits, each backend's time over the time of one pass
over the state per layer at this machine's bandwidth, measured here; and over the time of the
least arithmetic any method must do, at this machine's measured matrix-product rate.

    PYTHONPATH=src python benchmarks/bandwidth_rows.py [--quick] [--output benchmarks/results/bandwidth.json]

The bandwidth is the best of 20 copies of a 64 MiB complex128 array (bytes read plus bytes
written, over the time). The bound of a state of ``n`` qubits is ``layers x 2 x 16 x 2^n`` bytes
(each layer's fused pass reads and writes the state once) over that bandwidth. The compute bound
is ``layers x n x 2^(n+4)`` real flops (each qubit's RX·RZ is at least one general 2x2 gate on
``2^(n-1)`` amplitude pairs, 4 complex multiply-adds of 8 flops each; a CNOT is a permutation, no
arithmetic) over the best rate of a 1024 x 1024 complex128 matrix product (8 x 1024^3 flops). Each
state is
checked against the dense reference (1e-10) before it is timed; times are the minimum of
``--repeat`` runs after a warm-up, the circuit built inside the timing as a user would.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from side_by_side import finish, timed  # noqa: E402 - the shared helpers, next to this script

LAYERS = 10


def bandwidth_bytes_per_second(megabytes: int = 64, copies: int = 20) -> float:
    """Read plus written bytes per second of the best of ``copies`` array copies."""
    source = np.ones(megabytes * 2 ** 20 // 16, dtype=complex)
    target = np.empty_like(source)
    best = float("inf")
    for _ in range(copies):
        start = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - start)
    return 2 * source.nbytes / best


def matmul_flops_per_second(size: int = 1024, repeats: int = 5) -> float:
    """Real flops per second of the best of ``repeats`` complex128 ``size x size`` matrix products."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)) + 1j * rng.standard_normal((size, size))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.matmul(a, a)
        best = min(best, time.perf_counter() - start)
    return 8 * size ** 3 / best


def least_flops(n: int) -> int:
    """Real flops every method of the ladder's state needs: one general 2x2 gate per qubit and
    layer (``2^(n-1)`` pairs x 4 complex multiply-adds x 8 flops); CNOTs move amplitudes only."""
    return LAYERS * n * 2 ** (n + 4)


def ladder_state(tq, n: int, angles: np.ndarray):
    c = tq.Circuit(n)
    for layer in range(LAYERS):
        for q in range(n):
            c.rx(q, float(angles[layer, q, 0]))
            c.rz(q, float(angles[layer, q, 1]))
        for q in range(n - 1):
            c.cx(q, q + 1)
    return c.state()


def reference_state(n: int, angles: np.ndarray) -> np.ndarray:
    """The dense reference: each gate applied to the state by ``numpy.einsum`` on its axes."""
    state = np.zeros((2,) * n, dtype=complex)
    state[(0,) * n] = 1.0

    def apply(matrix: np.ndarray, qubits: tuple[int, ...]) -> None:
        nonlocal state
        k = len(qubits)
        tensor = matrix.reshape((2,) * (2 * k))
        state = np.moveaxis(np.tensordot(tensor, state, axes=(list(range(k, 2 * k)), list(qubits))),
                            list(range(k)), list(qubits))

    cx = np.eye(4)[[0, 1, 3, 2]]
    for layer in range(LAYERS):
        for q in range(n):
            a, b = angles[layer, q]
            c, s = np.cos(a / 2), np.sin(a / 2)
            apply(np.array([[c, -1j * s], [-1j * s, c]]), (q,))
            apply(np.diag([np.exp(-0.5j * b), np.exp(0.5j * b)]), (q,))
        for q in range(n - 1):
            apply(cx, (q, q + 1))
    return state.reshape(-1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results" / "bandwidth.json"))
    args = parser.parse_args()
    import tyxonq as tq

    sizes = (12,) if args.quick else (20, 22)
    repeat = 1 if args.quick else args.repeat
    bandwidth = bandwidth_bytes_per_second()
    flop_rate = matmul_flops_per_second()
    records = []
    for n in sizes:
        angles = np.random.default_rng(n).uniform(0, 2 * np.pi, (LAYERS, n, 2))
        expected = reference_state(n, angles)
        bound = LAYERS * 2 * 16 * 2 ** n / bandwidth
        compute = least_flops(n) / flop_rate
        for backend in ("numpy", "pytorch"):
            with tq.use_backend(backend):
                K = tq.get_backend()
                warm, best, state = timed(lambda n=n, angles=angles: ladder_state(tq, n, angles), repeat)
                deviation = float(np.max(np.abs(np.asarray(K.to_numpy(state)) - expected)))
            records.append({"row": f"{n}q", "engine": f"tyxonq-{backend}", "warm_s": warm, "best_s": best,
                            "bound_s": bound, "ratio": best / bound, "bandwidth_GBps": bandwidth / 1e9,
                            "compute_bound_s": compute, "compute_ratio": best / compute,
                            "matmul_GFlops": flop_rate / 1e9,
                            "check": "ok" if deviation < 1e-10 else f"WRONG (deviation {deviation:.1e})"})
    machine = platform.processor() or platform.machine()
    lines = [f"state vectors against the bandwidth bound ({machine}, complex128, {LAYERS} layers, "
             f"measured bandwidth {bandwidth / 1e9:.1f} GB/s, matrix products {flop_rate / 1e9:.1f} GFlop/s, "
             f"min of {repeat} after a warm-up)",
             f"{'row':4} {'engine':16} {'best (s)':>10} {'bandwidth bound':>16} {'ratio':>6} "
             f"{'compute bound':>14} {'ratio':>6}  check"]
    lines += [f"{r['row']:4} {r['engine']:16} {r['best_s']:10.4f} {r['bound_s']:16.4f} {r['ratio']:6.1f} "
              f"{r['compute_bound_s']:14.4f} {r['compute_ratio']:6.1f}  {r['check']}" for r in records]
    return finish(records, lines, args.output, write=not args.quick)


if __name__ == "__main__":
    sys.exit(main())
