"""tyxonq.qiskit: EstimatorV2, SamplerV2 and Backend against Qiskit's reference primitives and Aer.

Exact values are compared with ``StatevectorEstimator`` to 1e-10; sampled distributions with the
exact probabilities (every outcome within 5 standard errors, at fixed seeds: deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("qiskit")
pytest.importorskip("qiskit_aer")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister, transpile  # noqa: E402
from qiskit.circuit import Parameter  # noqa: E402
from qiskit.circuit.library import efficient_su2, real_amplitudes  # noqa: E402
from qiskit.circuit.random import random_circuit  # noqa: E402
from qiskit.primitives import (  # noqa: E402
    BackendEstimatorV2,
    BackendSamplerV2,
    StatevectorEstimator,
    StatevectorSampler,
)
from qiskit.quantum_info import SparsePauliOp, Statevector  # noqa: E402
from qiskit_aer import AerSimulator  # noqa: E402
from qiskit_aer.primitives import SamplerV2 as AerSampler  # noqa: E402

import tyxonq as tq  # noqa: E402
from tyxonq.qiskit import Backend, EstimatorV2, SamplerV2  # noqa: E402
from tyxonq.qiskit import estimator as estimator_module  # noqa: E402
from tyxonq.qiskit.backend import GATES  # noqa: E402


def reference_evs(pub):
    return StatevectorEstimator().run([pub]).result()[0].data.evs


def within_errors(counts: dict, probabilities: dict, shots: int, sigmas: float = 5.0) -> None:
    """Every outcome's frequency within ``sigmas`` standard errors of its probability."""
    for key in set(counts) | set(probabilities):
        p = probabilities.get(key, 0.0)
        error = sigmas * math.sqrt(max(p * (1 - p), 1e-12) / shots) + 1 / shots
        assert abs(counts.get(key, 0) / shots - p) <= error, (key, counts.get(key, 0), p)


# -- EstimatorV2 ------------------------------------------------------------------------------------
def test_broadcast_parameters_against_observables():
    qc = efficient_su2(3, reps=1)
    values = np.random.default_rng(0).uniform(-3, 3, (3, 1, qc.num_parameters))
    observables = [[SparsePauliOp(["XIZ", "YYI"], [0.5, -1.5]), "ZZZ", "IXI", SparsePauliOp("III", 2.0)]]
    pub = (qc, observables, values)
    result = EstimatorV2().run([pub]).result()[0]
    assert result.data.evs.shape == result.data.stds.shape == (3, 4)
    np.testing.assert_allclose(result.data.evs, reference_evs(pub), atol=1e-10)
    assert np.all(result.data.stds == 0)
    assert result.metadata["simulator"] == "tyxonq" and result.metadata["target_precision"] == 0.0


def test_parameter_tables_and_several_pubs():
    theta = [Parameter("b"), Parameter("a")]
    qc = QuantumCircuit(2, metadata={"tag": 7})
    qc.ry(2 * theta[0] - 0.5, 0)
    qc.rx(theta[1], 1)
    qc.cx(0, 1)
    qc.rz(theta[0], 1)
    table = {tuple(qc.parameters): np.random.default_rng(1).uniform(-2, 2, (4, 2))}
    pubs = [(qc, ["ZZ", "XY", "IZ"], np.zeros((1, 2))), (qc, [["ZZ"], ["YX"]], table)]
    results = EstimatorV2().run(pubs).result()
    for pub, result in zip(pubs, results):
        np.testing.assert_allclose(result.data.evs, reference_evs(pub), atol=1e-10)
    assert results[1].data.evs.shape == (2, 4) and results[0].metadata["circuit_metadata"] == {"tag": 7}


def test_light_cone_route_matches(monkeypatch):
    monkeypatch.setattr(estimator_module, "STATE_QUBITS", 0)
    qc = real_amplitudes(4, reps=2)
    values = np.linspace(0, 1, 2 * 12).reshape(2, 1, 12)
    pub = (qc, [SparsePauliOp(["ZZII", "IXXI"], [1.0, 0.3]), "YIIY"], values)
    result = EstimatorV2().run([pub]).result()[0]
    assert result.metadata["route"] == "light cones"
    np.testing.assert_allclose(result.data.evs, reference_evs(pub), atol=1e-10)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), num_qubits=st.integers(1, 4))
def test_random_circuits_match_statevector_estimator(seed, num_qubits):
    qc = random_circuit(num_qubits, 4, max_operands=min(3, num_qubits), seed=seed)
    rng = np.random.default_rng(seed)
    labels = ["".join(rng.choice(list("IXYZ"), num_qubits)) for _ in range(3)]
    pub = (qc, SparsePauliOp(labels, rng.normal(size=3)))
    np.testing.assert_allclose(EstimatorV2().run([pub]).result()[0].data.evs, reference_evs(pub), atol=1e-10)


def test_dynamic_circuit_expectations_are_exact():
    qc = QuantumCircuit(2, 1)
    qc.ry(1.0, 0)
    qc.measure(0, 0)
    with qc.if_test((qc.clbits[0], 1)):
        qc.x(1)
    result = EstimatorV2().run([(qc, ["IZ", "ZI", "ZZ", "XI"])]).result()[0]
    z = math.cos(1.0)
    np.testing.assert_allclose(result.data.evs, [z, z, 1.0, 0.0], atol=1e-12)
    assert result.metadata["route"] == "light cones"


def test_precision_gives_shot_estimates():
    qc = efficient_su2(3, reps=1)
    values = np.random.default_rng(2).uniform(-3, 3, (2, qc.num_parameters))
    observable = SparsePauliOp(["XIZ", "YYI", "III"], [0.5, -1.5, 0.25])
    pub = (qc, [[observable], ["ZZZ"]], values)
    exact = reference_evs(pub)
    first = EstimatorV2(seed=5).run([pub], precision=0.02).result()[0]
    again = EstimatorV2(seed=5).run([pub], precision=0.02).result()[0]
    np.testing.assert_array_equal(first.data.evs, again.data.evs)
    assert first.metadata["shots"] == 2500
    assert np.all(first.data.stds > 0) and np.all(first.data.stds <= 0.02 * (0.5 + 1.5) + 1e-12)
    assert np.all(np.abs(first.data.evs - exact) <= 6 * first.data.stds + 1e-12)
    assert np.abs(first.data.evs - exact).max() > 0  # estimates, not exact values


def test_precision_matches_aer_estimator_scale():
    from qiskit_aer.primitives import EstimatorV2 as AerEstimator

    qc = QuantumCircuit(2)
    qc.ry(0.7, 0)
    qc.cx(0, 1)
    pub = (qc, ["XI", "ZZ", "IZ"])
    ours = EstimatorV2(seed=3).run([pub], precision=0.01).result()[0].data
    aer = AerEstimator(options={"run_options": {"seed": 3}}).run([pub], precision=0.01).result()[0].data
    np.testing.assert_allclose(ours.evs, aer.evs, atol=6 * 0.01)
    assert np.all(ours.stds <= aer.stds + 1e-12)  # Aer reports the precision; tyxonq the standard error


# -- SamplerV2 ---------------------------------------------------------------------------------------
def registers_circuit():
    q = QuantumRegister(3, "q")
    a, b = ClassicalRegister(2, "alpha"), ClassicalRegister(3, "beta")
    qc = QuantumCircuit(q, a, b)
    qc.ry(1.1, 0)
    qc.cx(0, 1)
    qc.ry(0.4, 2)
    qc.measure([0, 1], [a[1], a[0]])
    qc.measure([2, 0], [b[0], b[2]])
    return qc


def register_probabilities(qc: QuantumCircuit, register: str) -> dict:
    """Exact probabilities of one register's bitstrings (final measurements only)."""
    probabilities = Statevector(qc.remove_final_measurements(inplace=False)).probabilities_dict()
    mapping = {}
    for instruction in qc.data:
        if instruction.operation.name == "measure":
            bit = qc.find_bit(instruction.clbits[0])
            mapping[bit.registers[0][1], bit.registers[0][0].name] = qc.find_bit(instruction.qubits[0]).index
    size = next(creg.size for creg in qc.cregs if creg.name == register)
    out: dict = {}
    for key, p in probabilities.items():
        bits = ["0"] * size
        for (position, name), qubit in mapping.items():
            if name == register:
                bits[size - 1 - position] = key[len(key) - 1 - qubit]
        word = "".join(bits)
        out[word] = out.get(word, 0) + p
    return out


def test_sampler_registers_match_statevector_sampler():
    qc = registers_circuit()
    shots = 4000
    ours = SamplerV2(seed=11).run([qc], shots=shots).result()[0]
    theirs = StatevectorSampler(seed=11).run([qc], shots=shots).result()[0]
    for register in ("alpha", "beta"):
        mine, reference = getattr(ours.data, register), getattr(theirs.data, register)
        shape = (reference.num_bits, reference.num_shots, reference.shape)
        assert (mine.num_bits, mine.num_shots, mine.shape) == shape
        assert set(mine.get_counts()) == set(reference.get_counts())
        within_errors(mine.get_counts(), register_probabilities(qc, register), shots)
    assert ours.metadata["shots"] == shots and ours.metadata["simulator"] == "tyxonq"


def test_sampler_parameter_shape_and_seed():
    qc = real_amplitudes(2, reps=1)
    qc.measure_all()
    values = np.random.default_rng(3).uniform(-2, 2, (2, 3, qc.num_parameters))
    first = SamplerV2(seed=4).run([(qc, values, 50)]).result()[0].data.meas
    again = SamplerV2(seed=4).run([(qc, values, 50)]).result()[0].data.meas
    assert first.shape == (2, 3) and first.num_shots == 50
    assert first == again
    deterministic = QuantumCircuit(3, 3)
    deterministic.x([0, 2])
    deterministic.measure([0, 1, 2], [0, 1, 2])
    ours = SamplerV2().run([deterministic], shots=5).result()[0].data.c
    theirs = StatevectorSampler().run([deterministic], shots=5).result()[0].data.c
    assert ours == theirs and ours.get_counts() == {"101": 5}


def teleport_like_circuit():
    q = QuantumRegister(3, "q")
    m, out = ClassicalRegister(2, "m"), ClassicalRegister(1, "out")
    qc = QuantumCircuit(q, m, out)
    qc.ry(0.9, 0)
    qc.h(1)
    qc.cx(1, 2)
    qc.cx(0, 1)
    qc.h(0)
    qc.measure(0, m[0])
    qc.measure(1, m[1])
    with qc.if_test((m[1], 1)):
        qc.x(2)
    with qc.if_test((m[0], 1)):
        qc.z(2)
    qc.reset(0)
    qc.measure(2, out[0])
    return qc


def test_dynamic_sampler_matches_aer():
    qc = teleport_like_circuit()
    shots = 4000
    ours = SamplerV2(seed=2).run([qc], shots=shots).result()[0].data
    aer = AerSampler(seed=2).run([qc], shots=shots).result()[0].data
    p1 = math.sin(0.45) ** 2  # the teleported RY(0.9)|0> reads 1 with this probability
    within_errors(ours.out.get_counts(), {"1": p1, "0": 1 - p1}, shots)
    within_errors(ours.m.get_counts(), {k: 0.25 for k in ("00", "01", "10", "11")}, shots)
    assert set(ours.m.get_counts()) == set(aer.m.get_counts())
    within_errors(aer.out.get_counts(), {"1": p1, "0": 1 - p1}, shots)


def test_sampler_without_registers_warns():
    with pytest.warns(UserWarning, match="no output classical registers"):
        result = SamplerV2().run([QuantumCircuit(1)]).result()
    assert len(result[0].data) == 0


# -- Backend -----------------------------------------------------------------------------------------
def test_backend_counts_and_memory_match_aer_format():
    q = QuantumRegister(3)
    a, b = ClassicalRegister(2, "a"), ClassicalRegister(2, "b")
    qc = QuantumCircuit(q, a, b)
    qc.x(0)
    qc.ch(0, 1)
    qc.x(2)
    qc.measure(0, a[0])
    qc.measure(2, b[1])
    qc.measure(1, a[1])
    backend = Backend()
    ours = backend.run(transpile(qc, backend), shots=300, memory=True, seed_simulator=1).result()
    aer = AerSimulator().run(transpile(qc, AerSimulator()), shots=300, memory=True, seed_simulator=1).result()
    assert set(ours.get_counts()) == set(aer.get_counts()) == {"10 01", "10 11"}
    assert all(len(word) == 5 and word[2] == " " for word in ours.get_memory())
    assert set(ours.results[0].data.counts) == set(aer.results[0].data.counts)  # hex keys
    within_errors(ours.get_counts(), {"10 01": 0.5, "10 11": 0.5}, 300)


def test_backend_runs_qiskit_backend_primitives():
    backend = Backend()
    qc = efficient_su2(2, reps=1)
    values = np.random.default_rng(4).uniform(-2, 2, qc.num_parameters)
    pub = (transpile(qc, backend), ["ZZ", "XI"], values)
    estimator = BackendEstimatorV2(backend=backend, options={"seed_simulator": 1})
    estimate = estimator.run([pub], precision=0.02).result()[0]
    assert np.all(np.abs(estimate.data.evs - reference_evs(pub)) <= 6 * estimate.data.stds + 1e-9)
    measured = qc.copy()
    measured.measure_all()
    sampler = BackendSamplerV2(backend=backend)
    counts = sampler.run([(transpile(measured, backend), values)], shots=100).result()[0]
    assert counts.data.meas.num_shots == 100


def test_target_gates_are_kept_by_transpile():
    backend = Backend()
    qc = QuantumCircuit(3)
    for gate, count in GATES.values():
        instance = gate(*[0.1 * (k + 1) for k in range(count)])
        qc.append(instance, list(range(instance.num_qubits)))
    assert dict(transpile(qc, backend, optimization_level=0).count_ops()) == dict(qc.count_ops())
    state = tq.Circuit.from_qiskit(qc).state()
    expected = Statevector(qc).reverse_qargs().data
    np.testing.assert_allclose(tq.get_backend().to_numpy(state), expected, atol=1e-10)
    assert "if_else" in backend.target and backend.max_circuits is None


def test_backend_noise_model():
    model = tq.NoiseModel().add(tq.channels.bit_flip(0.2), gates=["x"])
    qc = QuantumCircuit(1, 1)
    qc.x(0)
    qc.measure(0, 0)
    counts = Backend(noise_model=model).run(qc, shots=2000, seed_simulator=3).result().get_counts()
    within_errors(counts, {"1": 0.8, "0": 0.2}, 2000)
    if hasattr(tq.NoiseModel, "from_qiskit"):  # an Aer noise model, converted
        from qiskit_aer.noise import NoiseModel as AerNoiseModel
        from qiskit_aer.noise import pauli_error

        aer_model = AerNoiseModel()
        aer_model.add_all_qubit_quantum_error(pauli_error([("X", 0.2), ("I", 0.8)]), ["x"])
        counts = Backend(noise_model=aer_model).run(qc, shots=2000, seed_simulator=3).result().get_counts()
        within_errors(counts, {"1": 0.8, "0": 0.2}, 2000)


# -- bad input ----------------------------------------------------------------------------------------
def test_bad_input_raises_qiskits_errors():
    qc = real_amplitudes(2, reps=1)
    with pytest.raises(ValueError, match="PUB 0 .*4 parameters.*inconsistent"):
        EstimatorV2().run([(qc, "ZZ", np.zeros(3))])
    with pytest.raises(ValueError, match="PUB 0 .*4 parameters.*inconsistent"):
        SamplerV2().run([(qc, np.zeros((2, 5)))])
    with pytest.raises(ValueError, match="qubits"):
        EstimatorV2().run([(qc, "ZZZ", np.zeros(4))])
    with pytest.raises(ValueError, match="broadcastable"):
        EstimatorV2().run([(qc, ["ZZ", "XX", "YY"], np.zeros((2, 4)))])
    looped = QuantumCircuit(1, 1)
    with looped.while_loop((looped.clbits[0], 0)):
        looped.x(0)
    for run in (lambda: EstimatorV2().run([(looped, "Z")]), lambda: SamplerV2().run([looped]),
                lambda: Backend().run(looped)):
        with pytest.raises(ValueError, match="while loop"):
            run()
    with pytest.raises(ValueError, match="unbound parameters"):
        Backend().run(qc.measure_all(inplace=False))
    with pytest.raises(ValueError, match="no option"):
        Backend().run(QuantumCircuit(1, 1), shot=3)
