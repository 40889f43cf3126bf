"""Dynamic circuits side by side: tyxonq (NumPy, PyTorch, JAX) against Qiskit Aer and PennyLane
(default.qubit with qml.measure / qml.cond), every result checked before it is timed.

    PYTHONPATH=src python benchmarks/dynamic_rows.py [--quick] [--rows a b c d]
        [--output benchmarks/results/dynamic.json]

``--rows`` runs only those rows; the other rows' records are kept from the output file.

Rows:
(a) 10^5 shots of a 20-qubit repetition-code memory (10 data qubits on a ring, 10 syndrome
    ancillas), 3 rounds of coherent errors (RX(0.05) on every data qubit: a flip probability of
    6e-4 per qubit and round), syndrome measurement, reset and feed-forward correction; the final
    data qubits measured. The peers simulate one shot at a time, so they run fewer shots and their
    time is scaled (stated in the table). Checked: the mean syndrome bit and the final data parity
    agree between engines (10 standard errors of the smaller sample).
(b) the exact <Z_0 Z_49> of a 50-qubit shallow circuit (RY layer, CNOT brickwork) with 10
    mid-circuit measurements, each feeding a conditioned RY forward: Aer can only sample it (its
    matrix-product-state method, 20000 shots, timed as its row); every backend's exact value
    agrees with the others to 1e-10 and with Aer's estimate within 5 standard errors.
(c) its gradient in the 60 angles (PyTorch and JAX autograd, NumPy reverse mode), checked against
    central finite differences.
(d) 20000 shots of QASMBench's counterfeit-coin program on 151 qubits (``tests/qasm/cc_n151.qasm``:
    150 coins, one parity ancilla measured mid-circuit, gates conditioned on the value of the whole
    151-bit register, then every coin measured), parsed from OpenQASM 2 by each engine (parsing
    timed apart); Aer with its automatic method (the circuit is Clifford: its stabilizer simulator)
    and its matrix-product-state method. Checked: every engine's distribution against the exact one
    (the ancilla 1: all coins 0 or all 1; else the false coin's one-hot word or its complement),
    each outcome within 5 standard errors.

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

DATA, ROUNDS, ERROR = 10, 3, 0.05


# -- (a) the repetition-code memory ----------------------------------------------------------------
def memory_tyxonq(tq, data=DATA, rounds=ROUNDS, error=ERROR):
    c = tq.Circuit(2 * data)
    for _ in range(rounds):
        for q in range(data):
            c.rx(q, error)
        for i in range(data):
            c.cx(i, data + i).cx((i + 1) % data, data + i)
        bits = c.measure(*range(data, 2 * data))
        for i in range(data):  # data qubit i sits between syndromes i - 1 and i
            c.cond([bits[i - 1], bits[i]], value=3).x(i)
        for a in range(data, 2 * data):
            c.reset(a)
    return c


def memory_qiskit():
    from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister

    data, ancillas = QuantumRegister(DATA, "d"), QuantumRegister(DATA, "a")
    registers = [ClassicalRegister(DATA, f"s{r}") for r in range(ROUNDS)]
    final = ClassicalRegister(DATA, "f")
    qc = QuantumCircuit(data, ancillas, *registers, final)
    for r in range(ROUNDS):
        for q in range(DATA):
            qc.rx(ERROR, data[q])
        for i in range(DATA):
            qc.cx(data[i], ancillas[i])
            qc.cx(data[(i + 1) % DATA], ancillas[i])
        qc.measure(ancillas, registers[r])
        for i in range(DATA):
            from qiskit.circuit.classical import expr

            condition = expr.logic_and(registers[r][i - 1], registers[r][i])
            with qc.if_test(condition):
                qc.x(data[i])
        qc.reset(ancillas)
    qc.measure(data, final)
    return qc


def memory_statistics(rows: np.ndarray) -> tuple[float, float]:
    """(mean syndrome bit over all rounds, mean final data parity) from rows of
    [syndromes r0, r1, r2 (10 each), final data bits (10)]."""
    syndromes = rows[:, :DATA * ROUNDS].mean()
    parity = (rows[:, DATA * ROUNDS:].sum(axis=1) % 2).mean()
    return float(syndromes), float(parity)


def tyxonq_memory_rows(tq, backend: str, shots: int) -> np.ndarray:
    with tq.use_backend(backend):
        c = memory_tyxonq(tq)
        strings = c.sample(shots, seed=1, format="bitstrings")
    rows = np.array([[int(b) for b in s.replace(" ", "")] for s in strings], dtype=np.int8)
    return np.concatenate([rows[:, :DATA * ROUNDS], rows[:, DATA * ROUNDS:DATA * ROUNDS + DATA]], axis=1)


def aer_memory_rows(shots: int) -> np.ndarray:
    from qiskit_aer import AerSimulator

    qc = memory_qiskit()
    counts = AerSimulator(seed_simulator=1).run(qc, shots=shots).result().get_counts()
    rows = []
    for key, count in counts.items():
        registers = key.split()[::-1]  # Aer: last register first, bit 0 rightmost
        bits = [int(b) for reg in registers for b in reg[::-1]]
        rows.extend([bits] * count)
    return np.array(rows, dtype=np.int8)


def pennylane_memory_rows(shots: int, method: str) -> np.ndarray:
    """The memory on default.qubit with qml.measure / qml.cond (``mcm_method`` as given)."""
    import pennylane as qml

    device = qml.device("default.qubit", wires=2 * DATA)

    @qml.set_shots(shots)
    @qml.qnode(device, mcm_method=method)
    def memory():
        syndromes = []
        for _ in range(ROUNDS):
            for q in range(DATA):
                qml.RX(ERROR, wires=q)
            for i in range(DATA):
                qml.CNOT(wires=[i, DATA + i])
                qml.CNOT(wires=[(i + 1) % DATA, DATA + i])
            bits = [qml.measure(DATA + i, reset=True) for i in range(DATA)]
            for i in range(DATA):
                qml.cond(bits[i - 1] & bits[i], qml.PauliX)(wires=i)
            syndromes += bits
        return qml.sample(syndromes + [qml.measure(q) for q in range(DATA)])

    return np.asarray(memory(), dtype=np.int8).reshape(shots, -1)


# -- (b), (c) the 50-qubit shallow circuit ------------------------------------------------------
WIDE, MEASURED = 50, 10


def shallow_tyxonq(tq, angles):
    c = tq.Circuit(WIDE)
    for q in range(WIDE):
        c.ry(q, angles[q])
    for layer in range(2):
        for q in range(layer, WIDE - 1, 2):
            c.cx(q, q + 1)
    for k in range(MEASURED):  # measure every fifth qubit, feed forward to its neighbour
        q = 5 * k + 2
        bit = c.measure(q)
        c.cond(bit).ry(q + 1, angles[WIDE + k])
    for q in range(0, WIDE - 1, 2):
        c.cx(q, q + 1)
    return c


def shallow_qiskit(angles):
    from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister

    q, bits, final = QuantumRegister(WIDE, "q"), ClassicalRegister(MEASURED, "m"), ClassicalRegister(2, "f")
    qc = QuantumCircuit(q, bits, final)
    for k in range(WIDE):
        qc.ry(float(angles[k]), k)
    for layer in range(2):
        for k in range(layer, WIDE - 1, 2):
            qc.cx(k, k + 1)
    for k in range(MEASURED):
        target = 5 * k + 2
        qc.measure(target, bits[k])
        with qc.if_test((bits[k], 1)):
            qc.ry(float(angles[WIDE + k]), target + 1)
    for k in range(0, WIDE - 1, 2):
        qc.cx(k, k + 1)
    qc.measure(0, final[0])
    qc.measure(WIDE - 1, final[1])
    return qc


def aer_shallow_estimate(angles, shots: int) -> float:
    """<Z_0 Z_49> estimated from Aer's matrix-product-state samples (the only way Aer has)."""
    from qiskit_aer import AerSimulator

    simulator = AerSimulator(method="matrix_product_state", seed_simulator=4)
    counts = simulator.run(shallow_qiskit(angles), shots=shots).result().get_counts()
    return sum((-1) ** key.split()[0].count("1") * count for key, count in counts.items()) / shots


def shallow_value(tq, backend, angles):
    with tq.use_backend(backend):
        K = tq.get_backend()
        return float(K.to_numpy(shallow_tyxonq(tq, angles).expectation_ps(z=[0, WIDE - 1])))


# -- (d) the counterfeit coin ------------------------------------------------------------------------
COIN_PROGRAM = HERE.parent / "tests" / "qasm" / "cc_n151.qasm"
COINS, FALSE_COIN = 150, 49


def coin_distribution() -> dict[str, float]:
    """The exact distribution of the 151 classical bits (bit 0 first)."""
    one_hot = "".join("1" if i == FALSE_COIN else "0" for i in range(COINS))
    complement = "".join("0" if bit == "1" else "1" for bit in one_hot)
    return {"0" * COINS + "1": 0.25, "1" * COINS + "1": 0.25, one_hot + "0": 0.25, complement + "0": 0.25}


def coin_check(counts: dict[str, int], shots: int) -> str:
    """``ok`` when every outcome of the classical bits (bit 0 first) is within 5 standard errors."""
    expected = coin_distribution()
    extra = set(counts) - set(expected)
    if extra:
        return f"WRONG: {len(extra)} outcomes that never occur"
    for key, p in expected.items():
        if abs(counts.get(key, 0) / shots - p) > 5 * np.sqrt(p * (1 - p) / shots):
            return f"WRONG: {key[-3:]}... {counts.get(key, 0)} of {shots}"
    return "ok"


def tyxonq_coin_counts(tq, backend: str, circuit, shots: int) -> dict[str, int]:
    with tq.use_backend(backend):
        counts = circuit.sample(shots, seed=7, final=False)
    return dict(counts)


def aer_coin_counts(circuit, shots: int, method: str) -> dict[str, int]:
    from qiskit_aer import AerSimulator

    counts = AerSimulator(method=method, seed_simulator=7).run(circuit, shots=shots).result().get_counts()
    return {key.replace(" ", "")[::-1]: value for key, value in counts.items()}  # Aer: bit 0 rightmost


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results" / "dynamic.json"))
    parser.add_argument("--rows", nargs="+", choices="abcd", default=list("abcd"))
    args = parser.parse_args()
    import tyxonq as tq

    shots = 2000 if args.quick else 100_000
    repeat = 1 if args.quick else args.repeat
    records = []

    if "a" in args.rows:
        run_memory_rows(tq, args, shots, records)
    if "b" in args.rows or "c" in args.rows:
        run_shallow_rows(tq, repeat, records)
    if "d" in args.rows:
        run_coin_rows(tq, args, repeat, records)
    stored = pathlib.Path(args.output)
    kept = [] if args.quick or not stored.exists() else [
        record for record in json.loads(stored.read_text()) if record["row"] not in args.rows]
    records = sorted(kept + records, key=lambda record: record["row"])
    machine = platform.processor() or platform.machine()
    lines = table(f"dynamic circuits ({machine}, complex128, min of {repeat} after a warm-up)", records, 18)
    return finish(records, lines, args.output, write=not args.quick)


def run_memory_rows(tq, args, shots: int, records: list) -> None:
    """(a)"""
    found = {}
    for backend in ("numpy", "pytorch"):
        warm, best, rows = timed(lambda b=backend: tyxonq_memory_rows(tq, b, shots), 1)
        found[f"tyxonq-{backend}"] = rows
        records.append({"row": "a", "engine": f"tyxonq-{backend}", "shots": shots, "warm_s": warm,
                        "best_s": best})
    # the peers simulate one shot at a time (Aer: about 0.5 s a shot here): fewer shots, the time
    # scaled to the same number of shots, stated in the table
    peer_shots = 10 if args.quick else 200
    try:
        warm, best, rows = timed(lambda: aer_memory_rows(peer_shots), 1)
        found["qiskit-aer"] = rows
        records.append({"row": "a", "engine": "qiskit-aer", "shots": peer_shots, "warm_s": warm,
                        "best_s": best * shots / peer_shots,
                        "note": f"measured at {peer_shots} shots ({best:.1f} s), scaled to {shots}"})
    except ImportError as error:
        records.append({"row": "a", "engine": "qiskit-aer", "status": f"not installed ({error})"})
    pennylane_shots = peer_shots
    try:
        warm, best, rows = timed(lambda: pennylane_memory_rows(pennylane_shots, "one-shot"), 1)
        found["pennylane-one-shot"] = rows
        records.append({"row": "a", "engine": "pennylane-one-shot", "shots": pennylane_shots, "warm_s": warm,
                        "best_s": best * shots / pennylane_shots,
                        "note": f"measured at {pennylane_shots} shots ({best:.2f} s), scaled to {shots}"})
    except Exception as error:  # noqa: BLE001 - a peer's failure is reported, not fatal
        records.append({"row": "a", "engine": "pennylane-one-shot", "status": f"failed: {error!r}"[:200]})
    reference = memory_statistics(found["tyxonq-numpy"])
    for engine, rows in found.items():
        statistics = memory_statistics(rows)
        bound = 10 * np.sqrt(0.25 / len(rows))
        ok = all(abs(a - b) < bound for a, b in zip(statistics, reference))
        for record in records:
            if record["engine"] == engine and record["row"] == "a":
                record["check"] = "ok" if ok else f"WRONG {statistics} vs {reference}"


def run_shallow_rows(tq, repeat: int, records: list) -> None:
    """(b), (c)"""
    rng = np.random.default_rng(5)
    angles = rng.uniform(-1.5, 1.5, WIDE + MEASURED)
    values = {}
    for backend in ("numpy", "pytorch", "jax"):
        warm, best, value = timed(lambda b=backend: shallow_value(tq, b, angles), repeat)
        values[backend] = value
        records.append({"row": "b", "engine": f"tyxonq-{backend}", "warm_s": warm, "best_s": best,
                        "value": value})
    samples = 20000
    try:
        warm, best, estimate = timed(lambda: aer_shallow_estimate(angles, samples), repeat)
        records.append({"row": "b", "engine": "qiskit-aer-mps", "warm_s": warm, "best_s": best,
                        "value": estimate,
                        "note": f"{samples} samples: an estimate, not the exact value"})
    except ImportError:
        with tq.use_backend("numpy"):  # without Aer: our own samples (the deferred circuit's sampler)
            counts = shallow_tyxonq(tq, angles).sample(samples, seed=3)
        estimate = sum((-1) ** (int(k.split()[1][0]) + int(k.split()[1][-1])) * v
                       for k, v in counts.items()) / samples
    for record in records:
        if record["row"] == "b":
            exact = abs(record["value"] - values["numpy"]) < 1e-10 or record["engine"] == "qiskit-aer-mps"
            agree = exact and abs(record["value"] - estimate) < 5 / np.sqrt(samples)
            record["check"] = "ok" if agree else f"WRONG vs {values['numpy']} / sampled {estimate}"

    step = 1e-5
    numeric = np.array([(shallow_value(tq, "numpy", angles + step * e)
                         - shallow_value(tq, "numpy", angles - step * e))
                        / (2 * step) for e in np.eye(len(angles))])
    for backend in ("numpy", "pytorch", "jax"):
        def gradient(b=backend):
            with tq.use_backend(b):
                K = tq.get_backend()
                fn = tq.value_and_grad(lambda x: shallow_tyxonq(tq, x).expectation_ps(z=[0, WIDE - 1]))
                return np.asarray(K.to_numpy(fn(K.asarray(angles))[1]))

        warm, best, found_gradient = timed(gradient, repeat)
        error = float(np.max(np.abs(found_gradient - numeric)))
        records.append({"row": "c", "engine": f"tyxonq-{backend}", "warm_s": warm, "best_s": best,
                        "check": "ok" if error < 1e-6 else f"WRONG (max error {error:.2e})"})


def run_coin_rows(tq, args, repeat: int, records: list) -> None:
    """(d)"""
    text = COIN_PROGRAM.read_text()
    coin_shots = 2000 if args.quick else 20000
    warm, best, program = timed(lambda: tq.Circuit.from_openqasm(text), repeat)
    records.append({"row": "d", "engine": "tyxonq-parse", "warm_s": warm, "best_s": best,
                    "note": "OpenQASM 2 to a tq.Circuit (Qiskit's parser, then the conversion)"})
    for backend in ("numpy", "pytorch"):
        warm, best, counts = timed(lambda b=backend: tyxonq_coin_counts(tq, b, program, coin_shots), repeat)
        records.append({"row": "d", "engine": f"tyxonq-{backend}", "shots": coin_shots, "warm_s": warm,
                        "best_s": best, "check": coin_check(counts, coin_shots)})
    # Aer runs these shot by shot (about 5 ms a shot with its stabilizer method, 0.1 s with its MPS
    # method here): fewer shots, the time scaled to the same number, stated in the table
    try:
        import qiskit.qasm2

        parsed = qiskit.qasm2.loads(text)
    except ImportError:
        parsed = None
    for method, measured in (("automatic", coin_shots // 10), ("matrix_product_state", coin_shots // 100)):
        try:
            if parsed is None:
                raise ImportError("qiskit")
            warm, best, counts = timed(lambda m=method, k=measured: aer_coin_counts(parsed, k, m), 1)
            records.append({"row": "d", "engine": f"qiskit-aer-{method}", "shots": measured, "warm_s": warm,
                            "best_s": best * coin_shots / measured, "check": coin_check(counts, measured),
                            "note": f"measured at {measured} shots ({best:.1f} s), scaled to {coin_shots}"})
        except ImportError as error:
            records.append({"row": "d", "engine": f"qiskit-aer-{method}",
                            "status": f"not installed ({error})"})


if __name__ == "__main__":
    sys.exit(main())
