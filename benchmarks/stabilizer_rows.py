"""The stabilizer simulator side by side: tyxonq's StabilizerCircuit against stim itself, PennyLane's
default.clifford, Qiskit Aer's stabilizer method and tensorcircuit-ng's StabilizerCircuit, every
result checked before it is timed.

    PYTHONPATH=src python benchmarks/stabilizer_rows.py [--quick] [--output results/stabilizer.json]

Rows (each engine builds the circuit through its own API, inside the timing):
(a) 10^4 shots of a 1000-qubit random Clifford circuit of depth 100 (each layer: a random one-qubit
    Clifford from {H, S, S^dagger, X, Y, Z} on every qubit (the gates every peer has), then CX on a
    random pairing), every qubit measured at the end. stim builds its circuit from text (its
    fastest route) and samples with its compiled sampler. Checked: the per-qubit means agree with
    stim's within 6 standard errors, and qubits stim finds deterministic are deterministic with the
    same value.
(a-sample) the same, the circuit built beforehand (outside the timing): the first sample of a
    fresh circuit object (tyxonq's translation to stim included) against stim's compile + sample.
(b) detector sampling of a rotated surface-code memory, distance 7, 7 rounds, circuit noise 10^-3
    (stim's generated circuit; tyxonq reads it with StabilizerCircuit.from_stim outside the
    timing), 10^5 shots. Checked: the detector event rate agrees with stim's (6 standard errors).
(c) exact <P> of 100 random Pauli strings (weight 1 to 8) on the circuit of (a), built inside the
    timing. Checked: equal to stim's TableauSimulator values.
(d) the same 100 strings on the circuit of (a) with 10 T gates at random places, exact by Pauli
    propagation (StabilizerCircuit(max_non_clifford=10); no peer computes it exactly at this
    width). Checked on a 16-qubit, depth-12 instance against tq.Circuit's dense state (1e-10);
    the 16-qubit row times that dense route (the state, each string applied to it) beside the
    propagation.

The other peers are slow at this size: each runs two small shares (10 and 30 shots, 5 and 15
strings) after a warm-up, and its time is extrapolated linearly (fixed costs once, the cost per
shot or string scaled), as the table says; stim built one append per gate is shown once. Times:
the minimum of ``--repeat`` runs after a warm-up.
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

from side_by_side import finish, table, timed  # noqa: E402 - the shared helpers, next to this script

ONE = ("h", "s", "sdg", "x", "y", "z")
STIM = {"h": "H", "s": "S", "sdg": "S_DAG", "x": "X", "y": "Y", "z": "Z"}


def random_layers(n: int, depth: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, len(ONE), n), rng.permutation(n)) for _ in range(depth)]


def random_strings(n: int, count: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    strings = []
    for _ in range(count):
        letters = ["I"] * n
        for q in rng.choice(n, rng.integers(1, 9), replace=False):
            letters[q] = "XYZ"[rng.integers(3)]
        strings.append("".join(letters))
    return strings


# -- building the circuit in each engine --------------------------------------------------------------
def tyxonq_circuit(tq, n: int, layers, t_gates: frozenset = frozenset(), **options) -> object:
    c = tq.StabilizerCircuit(n, **options)
    for depth, (gates, pairing) in enumerate(layers):
        for q in range(n):
            getattr(c, ONE[gates[q]])(q)
            if (depth, q) in t_gates:
                c.t(q)
        for k in range(0, n - 1, 2):
            c.cx(int(pairing[k]), int(pairing[k + 1]))
    return c


def stim_circuit(n: int, layers, measure: bool = True):
    import stim

    lines = []
    for gates, pairing in layers:
        lines += [f"{STIM[ONE[g]]} {q}" for q, g in enumerate(gates)]
        lines.append("CX " + " ".join(str(int(q)) for q in pairing[: n - n % 2]))
    if measure:
        lines.append("M " + " ".join(map(str, range(n))))
    return stim.Circuit("\n".join(lines))


def qiskit_circuit(n: int, layers, measure: bool = True):
    from qiskit import QuantumCircuit

    qc = QuantumCircuit(n)
    for gates, pairing in layers:
        for q, g in enumerate(gates):
            getattr(qc, ONE[g])(q)
        for k in range(0, n - 1, 2):
            qc.cx(int(pairing[k]), int(pairing[k + 1]))
    if measure:
        qc.measure_all()
    return qc


def pennylane_gates(qml, n: int, layers) -> None:
    names = {"h": qml.Hadamard, "s": qml.S, "x": qml.PauliX, "y": qml.PauliY, "z": qml.PauliZ}
    for gates, pairing in layers:
        for q, g in enumerate(gates):
            name = ONE[g]
            qml.adjoint(qml.S(q)) if name == "sdg" else names[name](q)
        for k in range(0, n - 1, 2):
            qml.CNOT([int(pairing[k]), int(pairing[k + 1])])


def tc_circuit(tc, n: int, layers):
    c = tc.StabilizerCircuit(n)
    for gates, pairing in layers:
        for q, g in enumerate(gates):
            getattr(c, ONE[g])(q)
        for k in range(0, n - 1, 2):
            c.cx(int(pairing[k]), int(pairing[k + 1]))
    return c


# -- (a) samples ---------------------------------------------------------------------------------------
def sample_tyxonq(tq, n, layers, shots):
    c = tyxonq_circuit(tq, n, layers)
    return np.asarray(tq.get_backend().to_numpy(c.sample(shots, seed=1, format="bits")), dtype=bool)


def sample_stim(n, layers, shots):
    circuit = stim_circuit(n, layers)
    return circuit.compile_sampler(seed=1).sample(shots)


def sample_aer(n, layers, shots):
    from qiskit_aer import AerSimulator

    counts = AerSimulator(method="stabilizer").run(qiskit_circuit(n, layers), shots=shots, seed_simulator=1,
                                                    memory=True).result().get_memory()
    return np.array([[c == "1" for c in reversed(bits.replace(" ", ""))] for bits in counts])


def sample_pennylane(n, layers, shots):
    import pennylane as qml

    device = qml.device("default.clifford", wires=n, seed=1)

    @qml.set_shots(shots)
    @qml.qnode(device)
    def run():
        pennylane_gates(qml, n, layers)
        return qml.sample(wires=range(n))

    return np.asarray(run(), dtype=bool)


def sample_tc(n, layers, shots):
    import tensorcircuit as tc

    c = tc_circuit(tc, n, layers)
    return np.asarray(c.sample(batch=shots), dtype=bool) if hasattr(c, "sample") else None


def check_samples(bits: np.ndarray, reference: np.ndarray) -> str:
    bits = np.asarray(bits, dtype=float)
    if bits.shape[1] != reference.shape[1]:
        return f"WRONG shape {bits.shape}"
    mean, expected = bits.mean(axis=0), reference.mean(axis=0)
    fixed = (expected == 0) | (expected == 1)
    if np.any(mean[fixed] != expected[fixed]):
        return "WRONG (a deterministic qubit differs from stim's)"
    bound = 6 * np.sqrt(0.25 / len(bits) + 0.25 / len(reference))
    worst = float(np.max(np.abs(mean - expected)))
    return "ok" if worst < bound else f"WRONG (a qubit's mean differs by {worst:.3f})"


# -- (b) detectors -------------------------------------------------------------------------------------
def surface_code(distance: int):
    import stim

    return stim.Circuit.generated("surface_code:rotated_memory_z", distance=distance, rounds=distance,
                                  after_clifford_depolarization=1e-3, before_round_data_depolarization=1e-3,
                                  before_measure_flip_probability=1e-3, after_reset_flip_probability=1e-3)


# -- (c) expectations ------------------------------------------------------------------------------------
def expectations_tyxonq(tq, n, layers, strings):
    values = tyxonq_circuit(tq, n, layers).pauli_expectations(strings)
    return np.asarray(tq.get_backend().to_numpy(values))


def expectations_stim(n, layers, strings):
    import stim

    simulator = stim.TableauSimulator()
    simulator.do(stim_circuit(n, layers, measure=False))
    peek = simulator.peek_observable_expectation
    return np.array([peek(stim.PauliString(s)) for s in strings], dtype=float)


def expectations_pennylane(n, layers, strings):
    import pennylane as qml

    device = qml.device("default.clifford", wires=n)

    @qml.qnode(device)
    def run():
        pennylane_gates(qml, n, layers)
        wires = {q: q for q in range(n)}
        return [qml.expval(qml.pauli.string_to_pauli_word(s, wire_map=wires)) for s in strings]

    return np.asarray(run(), dtype=float)


def expectations_tc(n, layers, strings):
    import tensorcircuit as tc

    c = tc_circuit(tc, n, layers)
    values = []
    for s in strings:
        letters = {k: [q for q, letter in enumerate(s) if letter == k.upper()] for k in "xyz"}
        values.append(float(np.real(c.expectation_ps(**letters))))
    return np.array(values)


def expectations_aer(n, layers, strings):
    from qiskit.quantum_info import Pauli
    from qiskit_aer import AerSimulator

    qc = qiskit_circuit(n, layers, measure=False)
    for i, s in enumerate(strings):
        qc.save_expectation_value(Pauli(s[::-1]), list(range(n)), label=f"e{i}")
    data = AerSimulator(method="stabilizer").run(qc, shots=1).result().data()
    return np.array([float(np.real(data[f"e{i}"])) for i in range(len(strings))])


def record_peer(records, row, engine, run, full, shares, unit, check):
    """Time a slow peer on two small shares of the work (``run(k)``: ``k`` shots or strings, after
    a warm-up run) and extrapolate linearly to ``full``: its fixed cost (building, compiling)
    counted once, its cost per unit ``full`` times. Or record why it did not run."""
    small, large = shares
    try:
        run(small)  # warm-up: imports, caches
        start = time.perf_counter()
        run(small)
        first = time.perf_counter() - start
        start = time.perf_counter()
        result = run(large)
        second = time.perf_counter() - start
    except Exception as error:  # noqa: BLE001 - a peer's failure is reported, not fatal
        records.append({"row": row, "engine": engine, "status": f"failed or missing: {error!r}"[:160]})
        return
    per_unit = max(second - first, 0.0) / (large - small)
    estimate = first + (full - small) * per_unit
    records.append({"row": row, "engine": engine, "warm_s": estimate, "best_s": estimate,
                    "check": check(result),
                    "note": f"extrapolated: {small} {unit} {first:.2f} s, {large} {unit} {second:.2f} s"})


def build_stim_by_append(n: int, layers):
    """stim's circuit built one ``append`` per gate, as a Python program that builds gate by gate
    would (for comparison with the text route)."""
    import stim

    circuit = stim.Circuit()
    for gates, pairing in layers:
        for q, g in enumerate(gates):
            circuit.append(STIM[ONE[g]], [q])
        for k in range(0, n - 1, 2):
            circuit.append("CX", [int(pairing[k]), int(pairing[k + 1])])
    circuit.append("M", range(n))
    return circuit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results" / "stabilizer.json"))
    args = parser.parse_args()
    import tyxonq as tq

    n, depth, shots = (100, 10, 1000) if args.quick else (1000, 100, 10_000)
    repeat = 1 if args.quick else args.repeat
    layers = random_layers(n, depth)
    records = []

    # (a): build and sample
    warm, best, reference = timed(lambda: sample_stim(n, layers, shots), repeat)
    records.append({"row": "a", "engine": "stim", "warm_s": warm, "best_s": best, "check": "ok (reference)"})
    warm, best, bits = timed(lambda: sample_tyxonq(tq, n, layers, shots), repeat)
    records.append({"row": "a", "engine": "tyxonq", "warm_s": warm, "best_s": best,
                    "check": check_samples(bits, reference)})
    warm, best, bits = timed(lambda: build_stim_by_append(n, layers).compile_sampler(seed=1).sample(shots),
                             0)
    records.append({"row": "a", "engine": "stim-append-per-gate", "warm_s": warm, "best_s": best,
                    "check": check_samples(bits, reference), "note": "one append per gate, one run"})
    shares = (10, 30)
    record_peer(records, "a", "qiskit-aer-stabilizer", lambda k: sample_aer(n, layers, k), shots, shares,
                "shots", lambda b: check_samples(b, reference))
    record_peer(records, "a", "pennylane-clifford", lambda k: sample_pennylane(n, layers, k), shots, shares,
                "shots", lambda b: check_samples(b, reference))
    record_peer(records, "a", "tc-ng-stabilizer", lambda k: sample_tc(n, layers, k), shots, shares, "shots",
                lambda b: check_samples(b, reference))

    # (a-sample): the circuit built beforehand
    stim_built = stim_circuit(n, layers)
    warm, best, _ = timed(lambda: stim_built.compile_sampler(seed=1).sample(shots), repeat)
    records.append({"row": "a-s", "engine": "stim", "warm_s": warm, "best_s": best, "check": "ok"})
    fresh = [tyxonq_circuit(tq, n, layers) for _ in range(repeat + 1)]
    samples = iter(fresh)
    warm, best, bits = timed(lambda: next(samples).sample(shots, seed=1, format="bits"), repeat)
    records.append({"row": "a-s", "engine": "tyxonq", "warm_s": warm, "best_s": best,
                    "check": check_samples(np.asarray(bits, dtype=bool), reference)})
    del fresh

    # (b): detector sampling
    distance, detector_shots = (3, 10_000) if args.quick else (7, 100_000)
    code = surface_code(distance)
    warm, best, (events, _) = timed(lambda: code.compile_detector_sampler(seed=1).sample(
        detector_shots, separate_observables=True), repeat)
    records.append({"row": "b", "engine": "stim", "warm_s": warm, "best_s": best, "check": "ok (reference)"})
    ours = tq.StabilizerCircuit.from_stim(code)
    warm, best, (found, _) = timed(lambda: ours.sample_detectors(detector_shots, seed=2), repeat)
    rate, expected = found.mean(), events.mean()
    bound = 6 * np.sqrt(expected / events.size)
    records.append({"row": "b", "engine": "tyxonq", "warm_s": warm, "best_s": best,
                    "check": "ok" if abs(rate - expected) < bound else
                    f"WRONG rate {rate:.4g} vs {expected:.4g}"})

    # (c): exact expectations
    strings = random_strings(n, 100)
    warm, best, exact = timed(lambda: expectations_stim(n, layers, strings), repeat)
    records.append({"row": "c", "engine": "stim", "warm_s": warm, "best_s": best, "check": "ok (reference)"})

    def same(values):
        return "ok" if np.allclose(values, exact, atol=1e-12) else "WRONG values"

    warm, best, values = timed(lambda: expectations_tyxonq(tq, n, layers, strings), repeat)
    records.append({"row": "c", "engine": "tyxonq", "warm_s": warm, "best_s": best, "check": same(values)})
    peers = (("qiskit-aer-stabilizer", expectations_aer), ("pennylane-clifford", expectations_pennylane),
             ("tc-ng-stabilizer", expectations_tc))
    for engine, run in peers:
        record_peer(records, "c", engine, lambda k, run=run: run(n, layers, strings[:k]), len(strings),
                    (5, 15), "strings",
                    lambda v: "ok" if np.allclose(v, exact[:len(v)], atol=1e-12) else "WRONG values")

    # (d): a few T gates, exact by propagation
    def t_places(width, layer_count, count, seed=2):
        rng = np.random.default_rng(seed)
        places = set()
        while len(places) < count:
            places.add((int(rng.integers(layer_count)), int(rng.integers(width))))
        return frozenset(places)

    small_layers, small_strings = random_layers(16, 12), random_strings(16, 100)
    small_places = t_places(16, 12, 10)

    def small_dense():
        from tyxonq.operators.state_expectation import apply_pauli_string

        circuit = tyxonq_circuit(tq, 16, small_layers, small_places, max_non_clifford=10).to_circuit()
        K = tq.get_backend()
        state = circuit.state()
        return np.array([float(np.real(K.to_numpy(K.sum(K.conj(state) * apply_pauli_string(K, state, p)))))
                         for p in small_strings])

    def propagate(width, layer_list, places, pauli_strings):
        circuit = tyxonq_circuit(tq, width, layer_list, places, max_non_clifford=len(places))
        return np.asarray(tq.get_backend().to_numpy(circuit.pauli_expectations(pauli_strings)))

    warm, best, dense = timed(small_dense, repeat)
    records.append({"row": "d16", "engine": "tyxonq-Circuit-state", "warm_s": warm, "best_s": best,
                    "check": "ok (reference)", "note": "16 qubits, depth 12, 10 T: the dense state"})
    warm, best, values = timed(lambda: propagate(16, small_layers, small_places, small_strings), repeat)
    records.append({"row": "d16", "engine": "tyxonq-propagation", "warm_s": warm, "best_s": best,
                    "check": "ok" if np.allclose(values, dense, atol=1e-10) else "WRONG values"})
    places = t_places(n, depth, 10)
    warm, best, values = timed(lambda: propagate(n, layers, places, strings), repeat)
    rehearsed = tyxonq_circuit(tq, n, layers, places, max_non_clifford=10)
    report = rehearsed.rehearse("pauli_expectations", strings).propagation
    records.append({"row": "d", "engine": "tyxonq-propagation", "warm_s": warm, "best_s": best,
                    "check": "ok (checked at 16 qubits)" if np.all(np.abs(values) <= 1 + 1e-12) else "WRONG",
                    "note": f"{report.widest} strings at most at once, {report.passes} passes"})

    machine = platform.processor() or platform.machine()
    lines = table(f"stabilizer circuits ({machine}, {n} qubits, depth {depth}, {shots} shots; "
                  f"min of {repeat} after a warm-up)", records, 22)
    return finish(records, lines, args.output, write=not args.quick)


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(f"total {time.perf_counter() - started:.1f} s")
    sys.exit(status)
