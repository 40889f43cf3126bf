"""Qiskit's V2 primitives side by side: tyxonq.qiskit against Qiskit Aer's primitives and Qiskit's
reference ones, every result checked before it is timed.

    PYTHONPATH=src python benchmarks/qiskit_rows.py [--quick] [--rows a c]
        [--output benchmarks/results/qiskit_rows.json]

Rows:
(a) ``EstimatorV2``, one PUB: ``efficient_su2(16, reps=3)`` (128 parameters), 256 parameter sets
    x 32 random Pauli observables (broadcast ``(256, 1) x (1, 32)``): ``tyxonq.qiskit.EstimatorV2``,
    Aer's ``EstimatorV2`` (exact: precision 0) and ``StatevectorEstimator`` (one parameter set at
    a time in Python: run on fewer parameter sets, its time scaled, stated in the table). Checked:
    every engine's values against Aer's to 1e-8.
(c) ``SamplerV2``, 10^4 shots of a 24-qubit dynamic circuit: an RY layer and a CNOT chain, 4
    qubits measured mid-circuit, each outcome feeding an ``if_test`` X forward, the 4 reset, a
    second layer, every qubit measured. ``tyxonq.qiskit.SamplerV2`` against Aer's ``SamplerV2``
    (automatic method: shot by shot past a mid-circuit measurement; run on fewer shots, its time
    scaled) and Aer with shot branching (``shot_branching_enable``). Checked: the 16 outcomes of
    the mid-circuit register and every final bit's mean agree between engines within 5 standard
    errors of the smaller sample.

Times: the minimum of ``--repeat`` runs after a warm-up; the warm-up time is reported separately.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from side_by_side import finish, table, timed  # noqa: E402 - the shared helpers, next to this script

MIDDLE = (0, 6, 12, 18)  # row (c): the qubits measured mid-circuit


# -- (a) the estimator ----------------------------------------------------------------------------
def estimator_pub(num_qubits: int, sets: int, observables: int) -> tuple:
    from qiskit.circuit.library import efficient_su2

    qc = efficient_su2(num_qubits, reps=3)
    rng = np.random.default_rng(7)
    values = rng.uniform(-np.pi, np.pi, (sets, 1, qc.num_parameters))
    labels = [["".join(rng.choice(list("IXYZ"), num_qubits)) for _ in range(observables)]]
    return qc, labels, values


def run_estimator_rows(args, repeat: int, records: list) -> None:
    from qiskit.primitives import StatevectorEstimator
    from qiskit_aer.primitives import EstimatorV2 as AerEstimator

    from tyxonq.qiskit import EstimatorV2

    width, sets, observables = (8, 16, 8) if args.quick else (16, 256, 32)
    pub = estimator_pub(width, sets, observables)
    shape = {"qubits": width, "parameter_sets": sets, "observables": observables}
    engines = {"tyxonq": lambda: EstimatorV2().run([pub]).result()[0].data.evs,
               "qiskit-aer": lambda: AerEstimator().run([pub]).result()[0].data.evs}
    found = {}
    for engine, run in engines.items():
        warm, best, evs = timed(run, repeat)
        found[engine] = evs
        records.append({"row": "a", "engine": engine, **shape, "warm_s": warm, "best_s": best})
    few = 2 if args.quick else 4  # StatevectorEstimator: one bound circuit and observable at a time
    small = (pub[0], pub[1], pub[2][:few])
    warm, best, evs = timed(lambda: StatevectorEstimator().run([small]).result()[0].data.evs, 0)
    found["qiskit-statevector"] = np.concatenate([evs, found["tyxonq"][few:]])
    records.append({"row": "a", "engine": "qiskit-statevector", **shape, "warm_s": warm,
                    "best_s": best * sets / few,
                    "note": f"measured on {few} parameter sets ({best:.1f} s), scaled to {sets}"})
    reference = found["qiskit-aer"]
    for record in records:
        if record["row"] == "a":
            deviation = float(np.abs(found[record["engine"]] - reference).max())
            record["deviation"] = deviation
            record["check"] = "ok" if deviation < 1e-8 else "WRONG"


# -- (c) the sampler ------------------------------------------------------------------------------
def dynamic_circuit(num_qubits: int):
    from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister

    rng = np.random.default_rng(3)
    middle = [q for q in MIDDLE if q < num_qubits - 1]
    mid, final = ClassicalRegister(len(middle), "mid"), ClassicalRegister(num_qubits, "final")
    qc = QuantumCircuit(QuantumRegister(num_qubits, "q"), mid, final)

    def layer() -> None:
        for q in range(num_qubits):
            qc.ry(float(rng.uniform(0.2, 1.2)), q)
        for q in range(num_qubits - 1):
            qc.cx(q, q + 1)

    layer()
    for k, q in enumerate(middle):
        qc.measure(q, mid[k])
    for k, q in enumerate(middle):
        with qc.if_test((mid[k], 1)):
            qc.x(q + 1)
    for q in middle:
        qc.reset(q)
    layer()
    qc.measure(range(num_qubits), final)
    return qc


def run_sampler_rows(args, repeat: int, records: list) -> None:
    from qiskit_aer.primitives import SamplerV2 as AerSampler

    from tyxonq.qiskit import SamplerV2

    width, shots = (10, 2000) if args.quick else (24, 10_000)
    qc = dynamic_circuit(width)
    peer_shots = 200 if args.quick else 20  # Aer: about 10 s a shot at 24 qubits here
    found, shot_counts = {}, {}

    def tyxonq_run():
        return SamplerV2(seed=1).run([qc], shots=shots).result()[0].data

    warm, best, data = timed(tyxonq_run, min(repeat, 1))  # 24 qubits: about a minute a run
    found["tyxonq"], shot_counts["tyxonq"] = data, shots
    records.append({"row": "c", "engine": "tyxonq", "qubits": width, "shots": shots, "warm_s": warm,
                    "best_s": best, "note": "min of 1 after the warm-up"})
    record = {"row": "c", "engine": "qiskit-aer-branching", "qubits": width, "shots": shots}
    child = aer_branching_child(width, shots)  # its own process: at 24 qubits it may run out of memory
    if "statistics" in child:
        found["qiskit-aer-branching"] = np.array(child["statistics"])
        shot_counts["qiskit-aer-branching"] = shots
        records.append({**record, "warm_s": child["seconds"], "best_s": child["seconds"],
                        "note": "one run, no warm-up"})
    else:
        records.append({**record, "status": child["status"]})
    warm, best, data = timed(lambda: AerSampler(seed=1).run([qc], shots=peer_shots).result()[0].data, 0)
    found["qiskit-aer"], shot_counts["qiskit-aer"] = data, peer_shots
    records.append({"row": "c", "engine": "qiskit-aer", "qubits": width, "shots": peer_shots, "warm_s": warm,
                    "best_s": best * shots / peer_shots,
                    "note": f"measured at {peer_shots} shots ({best:.1f} s), scaled to {shots}"})
    reference = sampler_statistics(found["tyxonq"])
    for record in records:
        if record["row"] != "c" or record["engine"] not in found:
            continue
        statistics = found[record["engine"]]
        statistics = statistics if isinstance(statistics, np.ndarray) else sampler_statistics(statistics)
        fewest = min(shot_counts["tyxonq"], shot_counts[record["engine"]])
        bound = 5 * np.sqrt(0.25 / fewest)
        deviation = float(np.abs(statistics - reference).max())
        record["deviation"] = deviation
        record["check"] = "ok" if deviation < bound else f"WRONG (bound {bound:.3f})"


def aer_branching_child(width: int, shots: int) -> dict:
    """Aer's SamplerV2 with shot branching, run in a child process (``--aer-branching``)."""
    import subprocess

    command = [sys.executable, __file__, "--aer-branching", str(width), str(shots)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return {"status": "timeout (900 s)"}
    if done.returncode != 0:
        why = "killed (out of memory)" if done.returncode in (-9, 137) else done.stderr.strip()[-200:]
        return {"status": f"failed: exit status {done.returncode}, {why}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def aer_branching_run(width: int, shots: int) -> None:
    """The child: one timed run, its time and statistics as one JSON line."""
    import time

    from qiskit_aer.primitives import SamplerV2 as AerSampler

    qc = dynamic_circuit(width)
    sampler = AerSampler(seed=1, options={"backend_options": {"shot_branching_enable": True}})
    start = time.perf_counter()
    data = sampler.run([qc], shots=shots).result()[0].data
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "statistics": sampler_statistics(data).tolist()}))


def sampler_statistics(data) -> np.ndarray:
    """The frequencies of the mid-circuit register's outcomes, then every final bit's mean."""
    mid = data.mid.to_bool_array(order="little") @ (1 << np.arange(data.mid.num_bits))
    frequencies = np.bincount(mid, minlength=2**data.mid.num_bits) / data.mid.num_shots
    final = data.final.to_bool_array(order="little").mean(axis=0)
    return np.concatenate([frequencies, final])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results" / "qiskit_rows.json"))
    parser.add_argument("--rows", nargs="+", choices="ac", default=list("ac"))
    parser.add_argument("--aer-branching", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.aer_branching:
        aer_branching_run(*args.aer_branching)
        return 0
    repeat = 1 if args.quick else args.repeat
    records: list[dict] = []
    if "a" in args.rows:
        run_estimator_rows(args, repeat, records)
    if "c" in args.rows:
        run_sampler_rows(args, repeat, records)
    stored = pathlib.Path(args.output)
    kept = [] if args.quick or not stored.exists() else [
        record for record in json.loads(stored.read_text()) if record["row"] not in args.rows]
    records = sorted(kept + records, key=lambda record: record["row"])
    machine = platform.processor() or platform.machine()
    lines = table(f"Qiskit primitives ({machine}, complex128, min of {repeat} after a warm-up)", records, 22)
    return finish(records, lines, args.output, write=not args.quick)


if __name__ == "__main__":
    sys.exit(main())
