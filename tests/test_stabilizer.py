"""The stabilizer simulator (stim) against the dense reference: random Clifford circuits (states up
to global phase, Pauli expectations), noise and mid-circuit measurement against the density-matrix
simulator, sample distributions by chi-square at fixed seeds, wide GHZ and surface-code circuits,
conversions, and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

stim = pytest.importorskip("stim")

import tyxonq as tq  # noqa: E402
from conftest import make_backend  # noqa: E402
from reference import reference_state, reference_unitary  # noqa: E402
from tyxonq.circuit.operations.clifford import NonCliffordError  # noqa: E402
from tyxonq.circuit.operations.gates import GATES, gate_matrix  # noqa: E402

CHI2 = pytest.importorskip("scipy.stats").chi2
ONE = ("h", "s", "sdg", "sx", "sxdg", "x", "y", "z", "i")
TWO = ("cx", "cy", "cz", "swap", "iswap")
ROTATIONS = {"rx": 1, "ry": 1, "rz": 1, "phase": 1, "rxx": 2, "ryy": 2, "rzz": 2, "crx": 2, "cry": 2,
             "crz": 2, "cphase": 2}


@st.composite
def clifford_circuits(draw):
    """(n, [(gate, qubits, params)]): fixed Clifford gates, rotations at multiples of pi/2
    (controlled ones at multiples of pi), Pauli rotations, u at Clifford angles and Clifford
    unitaries."""
    n = draw(st.integers(1, 4))
    items = []
    for _ in range(draw(st.integers(1, 14))):
        order = draw(st.permutations(range(n)))
        kind = draw(st.sampled_from(["one", "two", "rotation", "exp", "u", "unitary"] if n > 1 else
                                    ["one", "rotation", "exp", "u", "unitary"]))
        if kind == "one":
            items.append((draw(st.sampled_from(ONE)), (order[0],), ()))
        elif kind == "two":
            items.append((draw(st.sampled_from(TWO)), tuple(order[:2]), ()))
        elif kind == "rotation":
            gate = draw(st.sampled_from([g for g, k in ROTATIONS.items() if k <= n]))
            turns = draw(st.integers(-8, 8)) * (2 if gate in ("crx", "cry", "crz", "cphase") else 1)
            items.append((gate, tuple(order[:ROTATIONS[gate]]), (turns * math.pi / 2,)))
        elif kind == "exp":
            k = draw(st.integers(1, n))
            letters = "".join(draw(st.sampled_from("IXYZ")) for _ in range(k))
            items.append((f"exp:{letters}", tuple(order[:k]), (draw(st.integers(-4, 4)) * math.pi / 2,)))
        elif kind == "u":
            angles = tuple(draw(st.integers(-4, 4)) * math.pi / 2 for _ in range(3))
            items.append(("u", (order[0],), angles))
        else:
            k = min(n, draw(st.integers(1, 2)))
            steps = [draw(st.sampled_from([("h", (0,)), ("s", (0,))]
                                          + ([("h", (1,)), ("cx", (0, 1))] if k > 1 else [])))
                     for _ in range(6)]
            matrix = reference_unitary(k, [(gate, qubits, ()) for gate, qubits in steps])
            items.append(("unitary", tuple(order[:k]), (matrix,)))
    return n, items


def add(c, gate, qubits, params):
    if gate.startswith("exp:"):
        return c.exp_pauli(gate[4:], qubits, params[0])
    if gate == "unitary":
        return c.unitary(*qubits, matrix=params[0])
    names = GATES[gate].param_names
    return getattr(c, gate)(*qubits, **dict(zip(names, params)))


def all_strings(n):
    return ["".join(p) for p in itertools.product("IXYZ", repeat=n)]


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch", "jax"])
def test_random_clifford_circuits_match_the_dense_reference(backend_id):
    K = make_backend(backend_id)

    @settings(max_examples=25, deadline=None)
    @given(case=clifford_circuits(), inverse=st.booleans())
    def check(case, inverse):
        n, items = case
        with tq.use_backend(K):
            c = tq.StabilizerCircuit(n)
            for item in items:
                add(c, *item)
            if inverse:
                c = c.inverse()
            expected = _reference(n, c)
            got = K.to_numpy(c.state())
            assert abs(abs(np.vdot(expected, got)) - 1.0) < 1e-10
            strings = all_strings(n)
            values = np.array([np.vdot(expected, tq.operators.pauli.pauli_matrix(s) @ expected).real
                               for s in strings])
            np.testing.assert_allclose(K.to_numpy(c.pauli_expectations(strings)), values, atol=1e-10)

    check()


def _reference(n, c):
    """The plain dense state of ``c``'s gates (reference.py's matrices, exact angles)."""
    operations = []
    for op in c.operations:
        params = op.params
        if op.gate.startswith("exp:") or op.gate == "unitary" or op.dagger:
            matrix = np.asarray(tq.get_backend("numpy").to_numpy(
                gate_matrix(tq.get_backend("numpy"), op.gate, params, op.dagger)))
            operations.append(("unitary", op.qubits, (matrix,)))
        else:
            operations.append((op.gate, op.qubits, params))
    return reference_state(n, operations)


@st.composite
def noisy_dynamic_circuits(draw):
    """Steps of a 3-qubit circuit: Clifford gates, Pauli channels, measurements, resets and Paulis
    conditioned on a bit or a parity of bits."""
    n, items, bits = 3, [], 0
    for _ in range(draw(st.integers(4, 16))):
        order = draw(st.permutations(range(n)))
        kind = draw(st.sampled_from(["one", "two", "noise", "noise2", "measure", "reset", "cond"]))
        if kind == "one":
            items.append(("gate", draw(st.sampled_from(ONE)), (order[0],)))
        elif kind == "two":
            items.append(("gate", draw(st.sampled_from(TWO)), tuple(order[:2])))
        elif kind == "noise":
            p = draw(st.floats(0.0, 0.3))
            channel = draw(st.sampled_from([tq.channels.depolarizing(p), tq.channels.bit_flip(p),
                                            tq.channels.phase_flip(p),
                                            tq.channels.pauli(p / 3, p / 2, p / 5)]))
            items.append(("channel", channel, (order[0],)))
        elif kind == "noise2":
            items.append(("channel", tq.channels.depolarizing(draw(st.floats(0.0, 0.3)), num_qubits=2),
                          tuple(order[:2])))
        elif kind == "measure":
            items.append(("measure", order[0]))
            bits += 1
        elif kind == "reset":
            items.append(("reset", order[0]))
        elif bits:
            chosen = sorted(set(draw(st.lists(st.integers(0, bits - 1), min_size=1, max_size=3))))
            value = draw(st.integers(0, 1))
            options = {"parity": True, "value": value} if len(chosen) > 1 else {"value": value}
            items.append(("cond", chosen if len(chosen) > 1 else chosen[0], options,
                          draw(st.sampled_from("xyz")), order[0]))
    return n, items


def build(kind, n, items):
    c = kind(n)
    for item in items:
        if item[0] == "gate":
            getattr(c, item[1])(*item[2])
        elif item[0] == "channel":
            c.channel(item[1], *item[2])
        elif item[0] == "measure":
            c.measure(item[1])
        elif item[0] == "reset":
            c.reset(item[1])
        else:
            getattr(c.cond(item[1], **item[2]), item[3])(item[4])
    return c


@settings(max_examples=40, deadline=None)
@given(case=noisy_dynamic_circuits())
def test_noise_and_mid_circuit_measurements_match_the_density_matrix(case):
    n, items = case
    stabilizer, density = build(tq.StabilizerCircuit, n, items), build(tq.DMCircuit, n, items)
    K = tq.get_backend()
    strings = all_strings(n)
    np.testing.assert_allclose(K.to_numpy(stabilizer.pauli_expectations(strings)),
                               K.to_numpy(density.pauli_expectations(strings)), atol=1e-10)


@pytest.mark.parametrize("seed", [3, 11])
def test_sample_distributions_pass_a_chi_square_test(seed):
    rng = np.random.default_rng(seed)
    n, steps = 3, []
    for _ in range(12):
        q = [int(v) for v in rng.permutation(3)]
        steps += [("gate", ONE[rng.integers(len(ONE))], (q[0],)),
                  ("gate", TWO[rng.integers(len(TWO))], tuple(q[:2])),
                  ("channel", tq.channels.depolarizing(0.05), (q[2],))]
    steps += [("measure", 0), ("cond", 0, {"value": 1}, "x", 2), ("channel", tq.channels.bit_flip(0.1), (1,))]
    stabilizer, density = build(tq.StabilizerCircuit, n, steps), build(tq.DMCircuit, n, steps)
    K = tq.get_backend()
    probabilities = K.to_numpy(density.probability())
    shots = 20000
    bits = K.to_numpy(stabilizer.sample(shots, seed=seed, format="bits"))
    assert bits.shape == (shots, 1 + n)
    observed = np.bincount(bits[:, 1:].astype(int) @ (1 << np.arange(n - 1, -1, -1)), minlength=2 ** n)
    used = probabilities > 1e-12
    assert observed[~used].sum() == 0
    statistic = np.sum((observed[used] - shots * probabilities[used]) ** 2 / (shots * probabilities[used]))
    assert statistic < CHI2.ppf(1 - 1e-6, used.sum() - 1)
    counts = stabilizer.sample(100, seed=seed)
    assert all(len(key) == 1 + 1 + n for key in counts) and sum(counts.values()) == 100


def test_a_thousand_qubit_ghz_and_readout_error():
    c = tq.StabilizerCircuit(1000).h(0)
    for q in range(999):
        c.cx(q, q + 1)
    K = tq.get_backend()
    bits = K.to_numpy(c.sample(200, seed=5, format="bits"))
    assert set(bits.sum(axis=1).tolist()) == {0, 1000} and 40 < bits[:, 0].sum() < 160
    assert float(c.expectation_ps(z=[3, 700])) == 1.0 and float(c.expectation_ps(x=[3, 700])) == 0.0
    assert float(c.expectation_ps(x=range(1000))) == 1.0
    flipped = K.to_numpy(tq.StabilizerCircuit(2).sample(4000, seed=1, format="bits",
                                                        readout_error=[[0.9, 0.0], [0.1, 1.0]]))
    assert abs(flipped.mean() - 0.1) < 0.02


def test_surface_code_memory_detectors_and_decoding():
    code = stim.Circuit.generated("surface_code:rotated_memory_z", distance=5, rounds=5)
    c = tq.StabilizerCircuit.from_stim(code)
    assert (c.num_detectors, c.num_observables) == (code.num_detectors, 1)
    assert c.depth() == c.to_circuit().depth() > 0  # detectors and observables take no layer
    detectors, observables = c.sample_detectors(500, seed=2)
    assert not detectors.any() and not observables.any()  # noiseless: every parity as expected
    records = tq.get_backend().to_numpy(c.sample(50, seed=2, format="bits", final=False))
    final = records[:, -25:]  # the data qubits' last Z measurement: the logical Z has even parity
    assert not (final[:, [0, 1, 2, 3, 4]].sum(axis=1) % 2).any()
    noisy = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                   after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    ours = tq.StabilizerCircuit.from_stim(noisy)
    assert str(ours.detector_error_model(decompose_errors=True)) == \
        str(noisy.flattened().detector_error_model(decompose_errors=True))
    detectors, observables = ours.sample_detectors(4000, seed=1)
    expected = stim.Circuit(str(noisy.flattened())).compile_detector_sampler(seed=9).sample(4000)
    assert abs(detectors.mean() - expected.mean()) < 5 * np.sqrt(expected.mean()
                                                                 / (4000 * detectors.shape[1]))


def test_conversions_round_trip():
    c = tq.Circuit(3).h(0).cx(0, 1).rz(1, theta=math.pi / 2).exp_pauli("XY", (1, 2), -math.pi / 2).swap(0, 2)
    assert c.is_clifford() and not tq.Circuit(1).t(0).is_clifford()
    assert not tq.Circuit(1, inputs=np.array([0.0, 1.0])).is_clifford()
    s = c.to_stabilizer()
    assert [op.structure for op in s.to_circuit().operations] == [op.structure for op in c.operations]
    back = tq.StabilizerCircuit.from_stim(s.to_stim())
    strings = all_strings(3)
    K = tq.get_backend()
    np.testing.assert_allclose(K.to_numpy(back.pauli_expectations(strings)),
                               K.to_numpy(c.pauli_expectations(strings)), atol=1e-12)
    again = tq.StabilizerCircuit.from_openqasm(s.to_openqasm())
    np.testing.assert_allclose(K.to_numpy(again.pauli_expectations(strings)),
                               K.to_numpy(c.pauli_expectations(strings)), atol=1e-12)
    qiskit = pytest.importorskip("qiskit")  # noqa: F841
    d = tq.StabilizerCircuit(2).h(0)
    d.cond(d.measure(0)).x(1)
    d.depolarizing(1, p=0.1)
    assert type(d.to_circuit()).__name__ == "DMCircuit"
    assert tq.StabilizerCircuit.from_qiskit(d.to_circuit().with_operations(
        [op for op in d.operations if op.channel is None]).to_qiskit()).num_clbits == 1


def test_bad_input_is_named():
    c = tq.StabilizerCircuit(2)
    with pytest.raises(NonCliffordError, match="t is not a Clifford gate"):
        c.t(0)
    with pytest.raises(NonCliffordError, match="rx.*not a multiple of pi/2"):
        c.rx(0, theta=0.3)
    with pytest.raises(NonCliffordError, match="cphase.*at these angles"):
        c.cphase(0, 1, theta=math.pi / 2)
    with pytest.raises(NonCliffordError, match="amplitude_damping is not a Pauli channel"):
        c.amplitude_damping(0, gamma=0.1)
    with pytest.raises(NonCliffordError, match="not a Clifford matrix"):
        c.unitary(0, matrix=np.diag([1.0, np.exp(0.1j)]))
    assert len(c.operations) == 0 and not c.is_noisy()
    a, b = c.measure(0, 1)
    with pytest.raises(NonCliffordError, match="not a Pauli gate"):
        c.cond(a).h(1)
    with pytest.raises(NonCliffordError, match="not a parity"):
        c.cond([a, b], value=3).x(1)
    with pytest.raises(NonCliffordError, match="post_select"):
        c.post_select(0, 1)
    with pytest.raises(ValueError, match="has not been measured"):
        c.detector([5])
    with pytest.raises(ValueError, match="mixed"):
        c.state()
    with pytest.raises(ValueError, match="at most 24 qubits"):
        tq.StabilizerCircuit(30).probability()
    with pytest.raises(ValueError, match="no detector"):
        tq.StabilizerCircuit(1).sample_detectors(10)
    with pytest.raises(NonCliffordError, match="t is not"):
        tq.Circuit(1).h(0).t(0).to_stabilizer()
    with pytest.raises(ValueError, match="MPP"):
        tq.StabilizerCircuit.from_stim("MPP X0*X1")
    assert c.sample(10, seed=1, format="counts") and c.is_dynamic()


@st.composite
def near_clifford_circuits(draw):
    """Clifford circuits with a few rotations at any angle (t, rx, crz, cphase, u, exp_pauli, ...)."""
    n, items = draw(clifford_circuits())
    for _ in range(draw(st.integers(1, 5))):
        order = draw(st.permutations(range(n)))
        angle = draw(st.floats(-3.0, 3.0))
        gate = draw(st.sampled_from(["t", "tdg", "u", "exp"] + [g for g, k in ROTATIONS.items() if k <= n]))
        if gate in ("t", "tdg"):
            item = (gate, (order[0],), ())
        elif gate == "u":
            item = ("u", (order[0],), (angle, draw(st.floats(-3.0, 3.0)), draw(st.floats(-3.0, 3.0))))
        elif gate == "exp":
            item = ("exp:" + "".join(draw(st.sampled_from("XYZ")) for _ in range(n)), tuple(order), (angle,))
        else:
            item = (gate, tuple(order[:ROTATIONS[gate]]), (angle,))
        items.insert(draw(st.integers(0, len(items))), item)
    return n, items


@settings(max_examples=30, deadline=None)
@given(case=near_clifford_circuits(), inverse=st.booleans())
def test_a_few_non_clifford_rotations_are_exact_by_propagation(case, inverse):
    n, items = case
    c = tq.StabilizerCircuit(n, max_non_clifford=20)
    for item in items:
        add(c, *item)
    if inverse:
        c = c.inverse()
    expected = _reference(n, c)
    strings = all_strings(n)
    values = np.array([np.vdot(expected, tq.operators.pauli.pauli_matrix(s) @ expected).real
                       for s in strings])
    np.testing.assert_allclose(tq.get_backend().to_numpy(c.pauli_expectations(strings)), values, atol=1e-10)
    report = c.rehearse("pauli_expectations", strings)
    assert report.widest <= report.bound == 2 ** report.rotations


def test_rotations_with_noise_and_feedback_match_the_density_matrix_and_are_bounded():
    def build_on(kind, **options):
        c = kind(2, **options).h(0).t(0).depolarizing(0, p=0.1).cx(0, 1).rx(1, theta=0.3)
        c.cond(c.measure(0)).x(1)
        return c.ry(1, theta=0.7).crz(1, 0, theta=1.1)

    stabilizer, density = build_on(tq.StabilizerCircuit, max_non_clifford=5), build_on(tq.DMCircuit)
    K = tq.get_backend()
    np.testing.assert_allclose(K.to_numpy(stabilizer.pauli_expectations(all_strings(2))),
                               K.to_numpy(density.pauli_expectations(all_strings(2))), atol=1e-12)
    assert not stabilizer.is_clifford()
    with pytest.raises(NonCliffordError, match="only its Pauli expectations"):
        stabilizer.sample(10)
    with pytest.raises(NonCliffordError, match="holds at most 5 non-Clifford"):
        stabilizer.t(1)
    with pytest.raises(NonCliffordError, match="ccx is not a Clifford gate"):
        tq.StabilizerCircuit(3, max_non_clifford=5).ccx(0, 1, 2)
    wide = tq.Circuit(300).h(0).t(0).h(0)
    for q in range(299):
        wide.cx(q, q + 1)
    assert abs(float(wide.to_stabilizer(max_non_clifford=1).expectation_ps(z=[299]))
               - np.cos(np.pi / 4)) < 1e-12


def test_noise_models_apply_to_stabilizer_circuits():
    model = tq.NoiseModel().add(tq.channels.depolarizing(0.05), gates="1q").add(
        tq.channels.depolarizing(0.02, num_qubits=2), gates="2q")
    model.add_readout_error([[0.95, 0.1], [0.05, 0.9]])
    circuit = tq.Circuit(3).h(0).cx(0, 1).s(2).cx(1, 2).h(2)
    stabilizer = circuit.to_stabilizer().with_noise(model)
    density = circuit.with_noise(model)
    assert stabilizer.readout is not None and stabilizer.is_noisy()
    K = tq.get_backend()
    np.testing.assert_allclose(K.to_numpy(stabilizer.pauli_expectations(all_strings(3))),
                               K.to_numpy(density.pauli_expectations(all_strings(3))), atol=1e-12)
    with pytest.raises(NonCliffordError, match="amplitude_damping is not a Pauli channel"):
        circuit.to_stabilizer().with_noise(tq.NoiseModel().add(tq.channels.amplitude_damping(0.1)))


def test_marginal_probabilities_and_shot_estimates():
    steps = [("gate", "h", (0,)), ("gate", "cx", (0, 1)), ("channel", tq.channels.depolarizing(0.1), (1,)),
             ("measure", 0), ("cond", 0, {"value": 1}, "x", 2), ("gate", "h", (2,)),
             ("channel", tq.channels.pauli(0.05, 0.1, 0.02), (2,))]
    stabilizer, density = build(tq.StabilizerCircuit, 3, steps), build(tq.DMCircuit, 3, steps)
    K = tq.get_backend()
    for qubits in ([0, 1, 2], [2, 0], [1]):
        np.testing.assert_allclose(K.to_numpy(stabilizer.marginal_probability(qubits)),
                                   K.to_numpy(density.marginal_probability(qubits)), atol=1e-12)
    exact = float(density.expectation_ps(x=[2], z=[1]))
    value, error = stabilizer.sample_expectation_ps(x=[2], z=[1], shots=4000, seed=2, return_std=True)
    assert abs(value - exact) < 5 * error + 1e-12
    with pytest.raises(ValueError, match="at most 12"):
        tq.StabilizerCircuit(13).marginal_probability(range(13))
