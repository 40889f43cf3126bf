"""The stabilizer simulator (stim) against the dense reference: random Clifford circuits (states up
to global phase, Pauli expectations), noise and mid-circuit measurement against the density-matrix
simulator, sample distributions by chi-square at fixed seeds, wide GHZ and surface-code circuits,
conversions, and bad input."""

from __future__ import annotations

import decimal
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


def _reference_operations(c):
    """``c``'s gates as reference.py's (gate, qubits, params), exact angles."""
    operations = []
    for op in c.operations:
        params = op.params
        if op.gate.startswith("exp:") or op.gate == "unitary" or op.dagger:
            matrix = np.asarray(tq.get_backend("numpy").to_numpy(
                gate_matrix(tq.get_backend("numpy"), op.gate, params, op.dagger)))
            operations.append(("unitary", op.qubits, (matrix,)))
        else:
            operations.append((op.gate, op.qubits, params))
    return operations


def _reference(n, c):
    """The plain dense state of ``c``'s gates (reference.py's matrices, exact angles)."""
    return reference_state(n, _reference_operations(c))


def _reference_tableau(n, c):
    """The stim tableau of the dense unitary of ``c``'s gates on ``n`` qubits (qubit 0 the most
    significant)."""
    return stim.Tableau.from_unitary_matrix(reference_unitary(n, _reference_operations(c)), endian="big")


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
    propagation = report.propagation
    if propagation is None:  # every rotation at a Clifford angle: read from the tableau
        assert report.routes == ("stabilizer",) and c.is_clifford()
    else:
        assert report.routes == ("pauli-propagation",)
        assert propagation.widest <= propagation.bound == 2 ** propagation.rotations


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


def _stim_unitary_gates():
    """Every unitary gate stim knows that takes qubit targets (not Pauli products), with its width."""
    return sorted((name, 2 if data.is_two_qubit_gate else 1) for name, data in stim.gate_data().items()
                  if data.is_unitary and not data.takes_pauli_targets)


@pytest.mark.parametrize(("name", "width"), _stim_unitary_gates())
def test_from_stim_reads_every_unitary_gate_stim_has_exactly(name, width):
    """Each of stim's Clifford gates is read (SQRT_Y, C_ZYX, SQRT_XX_DAG, H_YZ, XCY, ...), on
    reversed qubits too, as the gate stim means (its tableau) and an exactly unitary matrix."""
    qubits = list(range(width))[::-1]
    c = tq.StabilizerCircuit.from_stim(f"{name} " + " ".join(map(str, qubits)))
    expected = stim.Circuit(f"{name} " + " ".join(map(str, qubits))).to_tableau()
    assert _reference_tableau(width, c) == expected
    for op in c.operations:
        if op.gate == "unitary":
            matrix = np.asarray(op.params[0]).reshape(2 ** width, -1)
            assert matrix.dtype == np.complex128
            assert np.max(np.abs(matrix.conj().T @ matrix - np.eye(2 ** width))) < 1e-15
    padded = stim.Circuit("I " + " ".join(map(str, qubits))) + c.to_stim()  # I and II write nothing
    assert padded.to_tableau() == expected


def _clifford_gate_cases():
    """(label, build on a 2-qubit stabilizer circuit): every Clifford gate tyxonq has, rotations at
    every quarter turn (controlled ones at multiples of pi), u at all quarter-turn triples, Pauli
    rotations, adjoints and a Clifford unitary, two-qubit gates on qubits (1, 0)."""
    quarter = math.pi / 2
    cases = [(g, lambda c, g=g: getattr(c, g)(1)) for g in ONE]
    cases += [(g, lambda c, g=g: getattr(c, g)(1, 0)) for g in TWO]
    cases += [("iswap^dagger", lambda c: c.append(tq.StabilizerCircuit(2).iswap(1, 0).inverse()))]
    for gate, width in ROTATIONS.items():
        controlled = gate in ("crx", "cry", "crz", "cphase")
        for k in range(0, 8, 2) if controlled else range(4):
            qubits = (1, 0)[:width]
            cases.append((f"{gate}({k})",
                          lambda c, g=gate, q=qubits, k=k: getattr(c, g)(*q, theta=k * quarter)))
    for turns in itertools.product(range(4), repeat=3):
        angles = dict(zip(("theta", "phi", "lam"), (k * quarter for k in turns)))
        cases.append((f"u{turns}", lambda c, a=angles: c.u(1, **a)))
    for letters in ("X", "Y", "Z", "XY", "ZZ", "YX"):
        for k in range(1, 4):
            qubits = (1, 0)[:len(letters)]
            cases.append((f"exp:{letters}({k})",
                          lambda c, p=letters, q=qubits, k=k: c.exp_pauli(p, q, k * quarter)))
    matrix = reference_unitary(2, [("h", (0,), ()), ("s", (1,), ()), ("cx", (0, 1), ()), ("h", (1,), ())])
    cases.append(("unitary", lambda c: c.unitary(1, 0, matrix=matrix)))
    return cases


@pytest.mark.parametrize("build", [pytest.param(build, id=label) for label, build in _clifford_gate_cases()])
def test_every_clifford_gate_round_trips_through_stim(build):
    """to_stim -> from_stim keeps every Clifford gate (ry(pi/2) is written SQRT_Y, u C_ZYNX, rxx(pi/2)
    SQRT_XX, ...): the dense unitary read back has the gate's tableau, and its state the gate's."""
    c = tq.StabilizerCircuit(2).h(0).s(0).cx(0, 1).h(1)  # an entangled state that gates change
    build(c)
    back = tq.StabilizerCircuit.from_stim(c.to_stim())
    assert _reference_tableau(2, back) == _reference_tableau(2, c)
    expected, got = _reference(2, c), tq.get_backend().to_numpy(back.state())
    assert abs(abs(np.vdot(expected, got)) - 1.0) < 1e-12


def test_from_stim_reads_negated_pauli_products():
    for text in ("SPP !X0", "SPP_DAG !X0*Z1", "SPP !X0*!Z1 Y1", "SPP_DAG Y0*!Y1 !Z0"):
        c = tq.StabilizerCircuit.from_stim(text)
        assert _reference_tableau(2, c) == (stim.Circuit("I 0 1") + stim.Circuit(text)).to_tableau()


def _error_mechanisms(model):
    """A detector error model's errors as {(detectors and observables flipped): probability}, errors
    with the same targets combined (either one, not both, flips them)."""
    found = {}
    for instruction in model.flattened():
        if instruction.type == "error":
            key = frozenset(str(target) for target in instruction.targets_copy())
            p, q = instruction.args_copy()[0], found.get(key, 0.0)
            found[key] = p * (1 - q) + q * (1 - p)
    return found


@pytest.mark.parametrize("family", ["repetition_code:memory", "surface_code:rotated_memory_x",
                                    "surface_code:rotated_memory_z", "surface_code:unrotated_memory_x",
                                    "surface_code:unrotated_memory_z", "color_code:memory_xyz"])
def test_stim_generated_noisy_circuits_give_stim_s_detector_error_model(family):
    """Every family of stim's generated circuits, with all four kinds of circuit noise, read by
    from_stim: the same error mechanisms (same targets, probabilities to 1e-12) and detector
    coordinates as stim's own circuit."""
    noise = dict(after_clifford_depolarization=0.001, before_round_data_depolarization=0.002,
                 before_measure_flip_probability=0.003, after_reset_flip_probability=0.004)
    code = stim.Circuit.generated(family, distance=3, rounds=2, **noise)
    ours = tq.StabilizerCircuit.from_stim(code)
    assert (ours.num_detectors, ours.num_observables) == (code.num_detectors, code.num_observables)
    got, expected = ours.detector_error_model(), code.detector_error_model()
    got_errors, expected_errors = _error_mechanisms(got), _error_mechanisms(expected)
    assert got_errors.keys() == expected_errors.keys() and len(got_errors) > 10
    assert all(abs(got_errors[key] - expected_errors[key]) <= 1e-12 for key in got_errors)
    assert got.get_detector_coordinates() == expected.get_detector_coordinates()


def test_the_unitary_check_follows_the_precision_of_the_dtype():
    """stim's single-precision matrices pass (as a unitary of any simulator); the tolerance is about
    1e-6 for complex64 and 1e-8 for complex128."""
    single = stim.Tableau.from_named_gate("C_XYZ").to_unitary_matrix(endian="big")
    assert single.dtype == np.complex64
    c = tq.StabilizerCircuit(1).unitary(0, matrix=single)
    assert c.to_stim().to_tableau() == stim.Tableau.from_named_gate("C_XYZ")
    tq.Circuit(1).unitary(0, matrix=single)
    with pytest.raises(ValueError, match="not unitary .* complex128"):
        tq.Circuit(1).unitary(0, matrix=single.astype(np.complex128))
    hadamard = np.array([[1, 1], [1, -1]]) / np.sqrt(2)
    for dtype, small, large in ((np.complex64, 2e-7, 3e-6), (np.complex128, 1e-9, 1e-7)):  # |U^+U - I| ~ 2x
        tq.Circuit(1).unitary(0, matrix=(hadamard * (1 + small)).astype(dtype))
        with pytest.raises(ValueError, match="not unitary"):
            tq.Circuit(1).unitary(0, matrix=(hadamard * (1 + large)).astype(dtype))


def test_stim_tableaus_are_checked_against_the_memory_limit():
    """stim's tableau grows as n^2: sampling (its reference sample) is refused by a MemoryError naming
    the call before stim allocates, exact values go by propagation instead; a wide circuit acting
    on a few qubits samples (its reference sample is made on those)."""
    wide = tq.StabilizerCircuit(10 ** 6).x(0)
    previous = tq.memory_limit()
    try:
        tq.set_memory_limit("1 GiB")
        bits = tq.get_backend().to_numpy(wide.sample(2, seed=1, format="bits"))
        assert bits.shape == (2, 10 ** 6) and bits.sum() == 2 and bits[:, 0].all()
        assert float(wide.expectation_ps(z=[0, 5])) == -1.0
        c = tq.StabilizerCircuit(3000).h(0)
        for q in range(2999):
            c.cx(q, q + 1)
        tq.set_memory_limit("1 MiB")
        with pytest.raises(MemoryError, match=r"sample\(\) of a circuit acting on 3,000 qubits needs .* "
                                              r"tableau .* under tq.set_memory_limit.*sample_detectors"):
            c.sample(2, seed=1)
        assert float(c.expectation_ps(z=[0, 2999])) == 1.0 and float(c.expectation_ps(x=range(3000))) == 1.0
        assert float(c.expectation_ps(x=[0])) == 0.0
    finally:
        tq.set_memory_limit(None if math.isinf(previous) else previous)
    bits = tq.get_backend().to_numpy(c.sample(20, seed=1, format="bits"))
    assert sorted(set(bits.sum(axis=1).tolist())) == [0, 3000]


_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _nearest_quarter_turn(angle):
    """``(k, |angle - k pi/2|)`` for the nearest ``k``: the float's exact value against pi to 60
    digits (enough for angles below 1e30)."""
    with decimal.localcontext() as context:
        context.prec = 60
        quarter, exact = _PI / 2, decimal.Decimal(angle)
        k = int((exact / quarter).to_integral_value())
        return k, abs(exact - k * quarter)


def test_clifford_angles_are_judged_by_absolute_distance():
    """A rotation is Clifford when its angle is within 1e-9 of a multiple of pi/2, at any size: rz(1e9)
    is refused (it once passed as a quarter turn), so is the float nearest a huge multiple of pi/2
    computed as k * (pi/2) (its rounding puts it 4e-8 away), while a float within 1e-9 of a huge
    multiple is accepted with the turns it means."""
    from tyxonq.circuit.operations.clifford import is_quarter_turn, quarter_turns
    from tyxonq.circuit.operations.operation import Operation

    k = round(1e9 / (math.pi / 2))
    with decimal.localcontext() as context:
        context.prec = 60
        floats = (float(decimal.Decimal(j) * _PI / 2) for j in range(k, k + 2000))
        near = next(f for f in floats if _nearest_quarter_turn(f)[1] < decimal.Decimal("5e-10"))
    ordinary = [0.0, math.pi / 2, -math.pi, 3 * math.pi / 2 + 5e-10, 7 * math.pi / 2, 0.3, math.pi / 2 + 3e-9]
    for angle in ordinary + [1e9, k * (math.pi / 2), near, -near]:
        turns, distance = _nearest_quarter_turn(angle)
        clifford = distance <= decimal.Decimal("1e-9")
        assert is_quarter_turn(angle) == clifford, angle
        if not clifford:
            with pytest.raises(NonCliffordError, match="not a multiple of pi/2"):
                tq.StabilizerCircuit(1).h(0).rz(0, theta=angle)
            continue
        assert quarter_turns(Operation("crz", (0, 1), (angle,))) == (turns % 8,)
        c, dense = tq.StabilizerCircuit(1).h(0).rz(0, theta=angle), tq.Circuit(1).h(0).rz(0, theta=angle)
        for axis in ("x", "y"):
            value, reference = c.expectation_ps(**{axis: [0]}), dense.expectation_ps(**{axis: [0]})
            assert abs(float(value) - float(reference)) < 2e-9
    assert not is_quarter_turn(1e9) and is_quarter_turn(near) and not is_quarter_turn(k * (math.pi / 2))
    assert not is_quarter_turn(math.inf) and not is_quarter_turn(math.nan)


def test_stim_caches_are_registered():
    """The stabilizer simulator's caches (Clifford checks, stim names of tableaus and gates, stim's
    gate matrices) are listed by tq.cache_info() and emptied by tq.clear_caches()."""
    names = ["tyxonq.circuit.operations.clifford._table_gate_is_clifford",
             "tyxonq.circuit.stabilizer.program._named_tableaus",
             "tyxonq.circuit.stabilizer.program._table_instructions",
             "tyxonq.circuit.stabilizer.from_stim._gate_matrix"]
    tq.clear_caches()
    c = tq.StabilizerCircuit(2).ry(0, theta=math.pi / 2).cx(0, 1)  # ry(pi/2) is written SQRT_Y
    tq.StabilizerCircuit.from_stim(c.to_stim())
    sizes = tq.cache_info().sizes
    assert all(sizes[name] > 0 for name in names), {name: sizes.get(name) for name in names}
    tq.clear_caches()
    assert all(tq.cache_info().sizes[name] == 0 for name in names)
