"""The metric-tensor row: the Fubini-Study metric of a hardware-efficient ansatz, side by side.

    python benchmarks/metric_tensor.py [--qubits 12] [--layers 3] [--repeat 5] [--threads 2]
                                       [--engines ...] [--output benchmarks/results/metric_tensor.json]

The ansatz: RY and RZ on every qubit, then ``layers`` times a CNOT ladder and RY, RZ again (12
qubits, 3 layers: 96 parameters), at seeded random angles. Engines, each in a fresh process with
the thread count pinned (:mod:`isolation`):

- ``tyxonq-numpy``, ``tyxonq-pytorch``, ``tyxonq-jax``: ``tq.fubini_study_metric`` (exact: one
  batched sweep of the state's derivatives);
- ``pennylane-lightning``, ``pennylane-default``: ``qml.adjoint_metric_tensor`` (the full metric
  by PennyLane's adjoint method) on ``lightning.qubit`` and ``default.qubit``, and
  ``qml.metric_tensor`` (its default block-diagonal approximation) as ``...-blockdiag``;
- ``tc-jax``: tensorcircuit-ng's ``experimental.qng`` (the tensor from the state's forward-mode
  Jacobian, without its 1e-4 diagonal shift; the real part) under ``jax.jit`` (compile time
  reported beside it).

Every full metric is checked against tyxonq-numpy's (and the block-diagonal ones against its
``approximation="block-diag"``) to 1e-8. Prints a table and writes ``.json`` and ``.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from isolation import pinned_environment  # noqa: E402
from report import seconds  # noqa: E402

ENGINES = ("tyxonq-numpy", "tyxonq-pytorch", "tyxonq-jax", "pennylane-lightning", "pennylane-default",
           "pennylane-lightning-blockdiag", "pennylane-default-blockdiag", "tc-jax")


def angles(qubits: int, layers: int) -> np.ndarray:
    return np.random.default_rng(2026).uniform(-np.pi, np.pi, 2 * qubits * (layers + 1))


def tyxonq_metric(backend: str, qubits: int, layers: int, approximation: str | None = None):
    import tyxonq as tq

    K = tq.set_backend(backend)
    ansatz = lambda p: tq.templates.hardware_efficient(qubits, p, layers, ("ry", "rz"))  # noqa: E731
    params = K.asarray(angles(qubits, layers))
    return lambda: K.to_numpy(tq.fubini_study_metric(ansatz, params, approximation=approximation)), None


def pennylane_metric(device: str, qubits: int, layers: int, block_diagonal: bool):
    import pennylane as qml

    dev = qml.device(device, wires=qubits)

    @qml.qnode(dev, diff_method="adjoint" if not block_diagonal else "best")
    def circuit(params):
        index = 0
        for _ in range(layers + 1):
            if index:
                for q in range(qubits - 1):
                    qml.CNOT(wires=[q, q + 1])
            for q in range(qubits):
                qml.RY(params[index], wires=q)
                qml.RZ(params[index + 1], wires=q)
                index += 2
        return qml.expval(qml.PauliZ(0))

    params = qml.numpy.array(angles(qubits, layers), requires_grad=True)
    metric = qml.metric_tensor(circuit, approx="block-diag") if block_diagonal else \
        qml.adjoint_metric_tensor(circuit)
    return lambda: np.asarray(metric(params)), None


def tc_metric(qubits: int, layers: int):
    import jax
    import tensorcircuit as tc
    import tensorcircuit.experimental as experimental

    tc.set_backend("jax")
    tc.set_dtype("complex128")

    def state(params):
        c = tc.Circuit(qubits)
        index = 0
        for layer in range(layers + 1):
            if layer:
                for q in range(qubits - 1):
                    c.cnot(q, q + 1)
            for q in range(qubits):
                c.ry(q, theta=params[index])
                c.rz(q, theta=params[index + 1])
                index += 2
        return c.state()

    # the quantum geometric tensor from the state's forward-mode Jacobian; its real part is the
    # metric (tensorcircuit's own post-processing would add 1e-4 to the diagonal)
    tensor = experimental.qng(state, mode="fwd", postprocess=None)
    metric = jax.jit(lambda p: jax.numpy.real(tensor(p)))
    params = jax.numpy.asarray(angles(qubits, layers))
    start = time.perf_counter()
    jax.block_until_ready(metric(params))
    compile_s = time.perf_counter() - start
    return lambda: np.asarray(jax.block_until_ready(metric(params))), compile_s


def build(engine: str, qubits: int, layers: int):
    if engine.startswith("tyxonq-"):
        return tyxonq_metric(engine.removeprefix("tyxonq-"), qubits, layers)
    if engine.startswith("pennylane-"):
        device = "lightning.qubit" if "lightning" in engine else "default.qubit"
        return pennylane_metric(device, qubits, layers, engine.endswith("blockdiag"))
    if engine == "tc-jax":
        return tc_metric(qubits, layers)
    raise ValueError(f"unknown engine {engine!r}; choose from {ENGINES}")


def measure(engine: str, qubits: int, layers: int, repeat: int) -> dict:
    """In this process: build, first call, ``repeat`` timed calls; the metric for checking."""
    start = time.perf_counter()
    run, compile_s = build(engine, qubits, layers)
    first = time.perf_counter()
    metric = run()
    first_call_s = time.perf_counter() - first + (compile_s or 0.0)
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        run()
        times.append(time.perf_counter() - begin)
    return {"engine": engine, "qubits": qubits, "parameters": int(metric.shape[0]), "min_s": min(times),
            "median_s": float(np.median(times)), "first_call_s": first_call_s, "compile_s": compile_s,
            "setup_s": first - start, "metric": metric.tolist()}


def in_child(engine: str, qubits: int, layers: int, repeat: int, threads: int) -> dict:
    process = subprocess.run([sys.executable, __file__, "--child", engine, "--qubits", str(qubits),
                              "--layers", str(layers), "--repeat", str(repeat)],
                             capture_output=True, text=True, env=pinned_environment(threads), timeout=1800)
    if process.returncode != 0:
        lines = [line for line in process.stderr.splitlines() if line.strip()]
        return {"engine": engine, "qubits": qubits, "status": "error",
                "reason": lines[-1] if lines else f"exit {process.returncode}"}
    return json.loads(process.stdout.strip().splitlines()[-1]) | {"status": "ok"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qubits", type=int, default=12)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--output", default=str(HERE / "results" / "metric_tensor.json"))
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        from measure import pin_cpus

        pin_cpus(int(os.environ.get("BENCH_THREADS", "2")))
        print(json.dumps(measure(args.child, args.qubits, args.layers, args.repeat)))
        return 0
    reference = {approximation: np.asarray(_reference(args.qubits, args.layers, approximation))
                 for approximation in (None, "block-diag")}
    rows = []
    for engine in args.engines:
        row = in_child(engine, args.qubits, args.layers, args.repeat, args.threads)
        if row["status"] == "ok":
            expected = reference["block-diag" if engine.endswith("blockdiag") else None]
            deviation = float(np.abs(np.asarray(row.pop("metric")) - expected).max())
            row["deviation"] = deviation
            row["status"] = "ok" if deviation < 1e-8 else "wrong"
        rows.append(row)
    full_peers = [r["min_s"] for r in rows if r["status"] == "ok" and not r["engine"].startswith("tyxonq")
                  and not r["engine"].endswith("blockdiag")]
    fastest_peer = min(full_peers, default=None)
    lines = [f"metric tensor, {args.qubits} qubits, {2 * args.qubits * (args.layers + 1)} parameters, "
             f"{args.threads} threads, {platform.processor() or platform.machine()}",
             f"{'engine':<32}{'min':>10}{'median':>10}{'first call':>12}{'compile':>10}  check"]
    for r in rows:
        if r["status"] in ("ok", "wrong"):
            compile_s = seconds(r["compile_s"]) if r.get("compile_s") else "-"
            check = f"{r['status']} ({r['deviation']:.0e})"
            lines.append(f"{r['engine']:<32}{seconds(r['min_s']):>10}{seconds(r['median_s']):>10}"
                         f"{seconds(r['first_call_s']):>12}{compile_s:>10}  {check}")
        else:
            lines.append(f"{r['engine']:<32}{'n/a':>10}  {r['reason'][:80]}")
    ours = min((r["min_s"] for r in rows if r["status"] == "ok" and r["engine"].startswith("tyxonq")),
               default=None)
    if ours and fastest_peer:
        lines.append(f"tyxonq's best / fastest peer (full metric): {ours / fastest_peer:.2f}")
    text = "\n".join(lines)
    print(text)
    output = pathlib.Path(args.output)
    output.write_text(json.dumps({"qubits": args.qubits, "layers": args.layers, "threads": args.threads,
                                  "results": rows}, indent=1))
    output.with_suffix(".txt").write_text(text + "\n")
    return 0


def _reference(qubits: int, layers: int, approximation: str | None) -> list:
    """tyxonq-numpy's metric (tested against the dense definition in ``tests/test_geometry.py``);
    every engine must agree with it, so the peers check it too."""
    run, _ = tyxonq_metric("numpy", qubits, layers, approximation)
    return run().tolist()


if __name__ == "__main__":
    sys.exit(main())
