"""``tq.NoiseModel.from_qiskit`` / ``from_backend`` against Qiskit Aer's density-matrix method.

The oracle is Aer itself (``AerSimulator(method="density_matrix")``, ``save_density_matrix``), and
for what Aer can only sample (errors before measurements, readout errors) an exact
``qiskit.quantum_info`` evolution written here from Aer's semantics, which Aer's counts confirm.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq

pytest.importorskip("qiskit_aer")

from qiskit import QuantumCircuit, transpile  # noqa: E402
from qiskit.providers.fake_provider import GenericBackendV2  # noqa: E402
from qiskit.quantum_info import DensityMatrix, Kraus, random_density_matrix, random_quantum_channel  # noqa: E402
from qiskit_aer import AerSimulator  # noqa: E402
from qiskit_aer.noise import (  # noqa: E402
    NoiseModel,
    QuantumError,
    ReadoutError,
    amplitude_damping_error,
    depolarizing_error,
    pauli_error,
    phase_damping_error,
    reset_error,
    thermal_relaxation_error,
)

from tyxonq.noise.qiskit_noise import qiskit_error_channel  # noqa: E402

TOLERANCE = 1e-8
IDENTITY = pauli_error([("I", 1.0)])


# -- references ---------------------------------------------------------------------------------
def aer_density_matrix(qc: QuantumCircuit, noise_model: NoiseModel) -> np.ndarray:
    """Aer's noisy density matrix, in tyxonq's qubit order (qubit 0 most significant)."""
    qc = qc.copy()
    qc.save_density_matrix()
    result = AerSimulator(method="density_matrix", noise_model=noise_model).run(qc).result()
    return DensityMatrix(result.data()["density_matrix"]).reverse_qargs().data


def aer_counts(qc: QuantumCircuit, noise_model: NoiseModel, shots: int) -> dict[str, int]:
    simulator = AerSimulator(method="density_matrix", noise_model=noise_model, seed_simulator=11)
    return simulator.run(qc, shots=shots).result().get_counts()


def exact_density_matrix(qc: QuantumCircuit, noise_model: NoiseModel) -> np.ndarray:
    """Aer's semantics by hand: an instruction's error after it (before it for ``measure``), its
    local error on exactly its qubits instead of the all-qubit one; a measurement dephases."""
    rho = DensityMatrix.from_label("0" * qc.num_qubits)
    for instruction in qc.data:
        name = instruction.operation.name
        qubits = [qc.find_bit(q).index for q in instruction.qubits]
        if name == "barrier":
            continue
        error = noise_model._local_quantum_errors.get(name, {}).get(tuple(qubits),
                                                                    noise_model._default_quantum_errors.get(name))
        if error is not None and name == "measure":
            rho = rho.evolve(error.to_quantumchannel(), qubits)
        if name == "measure":
            dephase = Kraus([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])])
            rho = rho.evolve(dephase, qubits)
        else:
            rho = rho.evolve(instruction.operation, qubits)
            if error is not None:
                rho = rho.evolve(error.to_quantumchannel(), qubits)
    return rho.reverse_qargs().data


def tyxonq_density_matrix(qc: QuantumCircuit, model: tq.NoiseModel, **options) -> np.ndarray:
    noisy = tq.Circuit.from_qiskit(qc, **options).with_noise(model)
    return np.asarray(tq.get_backend().to_numpy(noisy.state()))


def read_through(probabilities: np.ndarray, confusions: list[np.ndarray]) -> np.ndarray:
    """The distribution of read bitstrings (qubit 0 most significant)."""
    total = np.array([[1.0]])
    for confusion in confusions:
        total = np.kron(total, confusion)
    return total @ probabilities


def bitstring_distribution(counts: dict[str, int], num_bits: int) -> np.ndarray:
    """Qiskit's counts (bit 0 last) as a distribution indexed with bit 0 most significant."""
    shots = sum(counts.values())
    distribution = np.zeros(2 ** num_bits)
    for key, count in counts.items():
        distribution[int(key.replace(" ", "")[::-1], 2)] += count / shots
    return distribution


def asymmetric_model() -> NoiseModel:
    """Errors that a qubit-order mistake changes: a random 2-qubit channel on cx(1, 0) only,
    damping on one qubit of every other cx, a 1-qubit local error overriding the default."""
    model = NoiseModel()
    model.add_all_qubit_quantum_error(
        depolarizing_error(0.05, 2).compose(amplitude_damping_error(0.3).tensor(IDENTITY)), ["cx"])
    model.add_quantum_error(QuantumError(Kraus(random_quantum_channel(4, seed=7))), ["cx"], [1, 0])
    model.add_all_qubit_quantum_error(pauli_error([("X", 0.1), ("Y", 0.05), ("I", 0.85)]), ["sx", "x"])
    model.add_quantum_error(amplitude_damping_error(0.4), ["sx"], [2])
    model.add_quantum_error(phase_damping_error(0.2), ["sx"], [2])  # composes with the one above
    return model


def asymmetric_circuit() -> QuantumCircuit:
    qc = QuantumCircuit(3)
    qc.sx(0)
    qc.sx(1)
    qc.sx(2)
    qc.rz(0.7, 1)
    qc.cx(0, 1)
    qc.cx(1, 0)
    qc.cx(2, 1)
    qc.x(0)
    qc.sx(2)
    qc.cx(1, 2)
    return qc


# -- the channel of one error -------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2])
def test_channel_matches_qiskit_kraus_in_tyxonq_order(seed):
    error = QuantumError(Kraus(random_quantum_channel(4, seed=seed)))
    channel = qiskit_error_channel(error)
    rho = random_density_matrix(4, seed=seed + 10)
    expected = rho.evolve(Kraus(error.to_quantumchannel())).reverse_qargs().data
    state = tq.DMCircuit(2, inputs=rho.reverse_qargs().data).channel(channel, 0, 1).state()
    assert np.abs(tq.get_backend().to_numpy(state) - expected).max() < 1e-12


def test_damping_on_the_second_qubit_of_the_error_damps_the_gates_second_qubit():
    model = NoiseModel()
    model.add_all_qubit_quantum_error(amplitude_damping_error(1.0).tensor(IDENTITY), ["cx"])  # on qarg 1
    qc = QuantumCircuit(2)
    qc.x(0)
    qc.cx(0, 1)  # |11>, then the target (qubit 1) decays
    rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_qiskit(model))
    assert np.abs(rho - aer_density_matrix(qc, model)).max() < TOLERANCE
    assert abs(rho[2, 2] - 1.0) < 1e-12  # |10>: qubit 0 still 1, qubit 1 reset


# -- whole models against Aer ---------------------------------------------------------------------
def test_asymmetric_local_and_default_errors_match_aer():
    model = asymmetric_model()
    qc = asymmetric_circuit()
    rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_qiskit(model))
    assert np.abs(rho - aer_density_matrix(qc, model)).max() < TOLERANCE
    assert np.abs(rho - exact_density_matrix(qc, model)).max() < 1e-12


def test_local_rule_is_for_its_ordered_qubits_only():
    model = NoiseModel()
    model.add_quantum_error(QuantumError(Kraus(random_quantum_channel(4, seed=3))), ["cx"], [1, 0])
    converted = tq.NoiseModel.from_qiskit(model)
    noisy = tq.Circuit(2).cx(0, 1).cx(1, 0).with_noise(converted)
    assert [(op.gate, op.qubits) for op in noisy.operations] == [
        ("cx", (0, 1)), ("cx", (1, 0)), ("channel", (1, 0))]


@pytest.mark.parametrize("num_qubits, seed", [(3, 2), (5, 4)])
def test_generic_backend_transpiled_circuit_matches_aer(num_qubits, seed):
    backend = GenericBackendV2(num_qubits=num_qubits, seed=seed)
    aer_model = NoiseModel.from_backend(backend)
    model = tq.NoiseModel.from_backend(backend)
    qc = QuantumCircuit(num_qubits)
    qc.h(0)
    for q in range(num_qubits - 1):
        qc.cx(q, q + 1)
    qc.ry(0.3, num_qubits - 1)
    qc.cx(num_qubits - 1, 0)
    qc.x(1)
    transpiled = transpile(qc, backend, seed_transpiler=seed, optimization_level=1)
    assert {"cx", "sx", "rz"} <= set(transpiled.count_ops())
    rho = tyxonq_density_matrix(transpiled, model)
    assert np.abs(rho - aer_density_matrix(transpiled, aer_model)).max() < TOLERANCE
    assert np.abs(rho - exact_density_matrix(transpiled, aer_model)).max() < 1e-12


def test_an_ecr_backend_matches_aer():
    """IBM's Eagle devices entangle with ECR: tyxonq's ``ecr`` gate keeps it whole, so its errors
    apply where Aer applies them (an asymmetric gate: ``ecr(1, 0)`` is not ``ecr(0, 1)``)."""
    backend = GenericBackendV2(num_qubits=3, basis_gates=["ecr", "rz", "sx", "x"], seed=1)
    qc = _ghz(3)
    qc.cx(2, 0)
    transpiled = transpile(qc, backend, seed_transpiler=3)
    assert "ecr" in transpiled.count_ops()
    rho = tyxonq_density_matrix(transpiled, tq.NoiseModel.from_backend(backend))
    aer_model = NoiseModel.from_backend(backend)
    assert np.abs(rho - aer_density_matrix(transpiled, aer_model)).max() < TOLERANCE
    assert np.abs(rho - exact_density_matrix(transpiled, aer_model)).max() < 1e-12


def test_backend_options_pass_through_to_aer():
    backend = GenericBackendV2(num_qubits=3, seed=9)
    qc = transpile(QuantumCircuit(3).compose(_ghz(3)), backend, seed_transpiler=1)
    for options in ({"thermal_relaxation": False}, {"gate_error": False, "temperature": 20}):
        rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_backend(backend, **options))
        assert np.abs(rho - aer_density_matrix(qc, NoiseModel.from_backend(backend, **options))).max() \
            < TOLERANCE


def _ghz(n: int) -> QuantumCircuit:
    qc = QuantumCircuit(n)
    qc.h(0)
    for q in range(n - 1):
        qc.cx(q, q + 1)
    return qc


def test_reset_errors_follow_resets():
    model = NoiseModel()
    model.add_all_qubit_quantum_error(pauli_error([("X", 0.3), ("I", 0.7)]), ["reset"])
    model.add_all_qubit_quantum_error(thermal_relaxation_error(50.0, 40.0, 5.0), ["x"])
    qc = QuantumCircuit(2)
    qc.x(0)
    qc.x(1)
    qc.reset(0)
    qc.cx(0, 1)
    rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_qiskit(model))
    assert np.abs(rho - aer_density_matrix(qc, model)).max() < TOLERANCE


def test_identity_and_renamed_gates_carry_their_errors():
    model = NoiseModel(basis_gates=["id", "p", "cp", "u"])
    model.add_all_qubit_quantum_error(thermal_relaxation_error(40.0, 30.0, 8.0), ["id"])
    model.add_quantum_error(depolarizing_error(0.2, 1), ["p"], [1])
    model.add_all_qubit_quantum_error(QuantumError(Kraus(random_quantum_channel(4, seed=5))), ["cp"])
    model.add_all_qubit_quantum_error(amplitude_damping_error(0.25), ["u"])
    qc = QuantumCircuit(2)
    qc.u(1.1, 0.3, -0.4, 0)
    qc.h(1)
    qc.id(0)
    qc.p(0.5, 1)
    qc.cp(0.9, 1, 0)
    qc.id(1)
    rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_qiskit(model))
    assert np.abs(rho - aer_density_matrix(qc, model)).max() < TOLERANCE


def test_pauli_errors_keep_a_stabilizer_circuit_one():
    model = NoiseModel()
    model.add_all_qubit_quantum_error(depolarizing_error(0.2, 2), ["cx"])
    model.add_quantum_error(pauli_error([("X", 0.3), ("I", 0.7)]), ["h"], [0])
    converted = tq.NoiseModel.from_qiskit(model)
    noisy = tq.StabilizerCircuit(2).h(0).cx(0, 1).with_noise(converted)
    assert type(noisy).__name__ == "StabilizerCircuit"
    qc = QuantumCircuit(2)
    qc.h(0)
    qc.cx(0, 1)
    expected = np.diag(aer_density_matrix(qc, model)).real
    counts = noisy.sample(40_000, seed=3)
    sampled = np.array([counts.get(key, 0) for key in ("00", "01", "10", "11")]) / 40_000
    assert np.abs(sampled - expected).max() < 0.012


# -- measurements and readout --------------------------------------------------------------------
def test_measure_errors_come_before_measurements():
    model = NoiseModel()
    model.add_all_qubit_quantum_error(reset_error(0.3), ["measure"])
    model.add_quantum_error(amplitude_damping_error(0.5), ["measure"], [1])
    qc = QuantumCircuit(2, 2)
    qc.x(0)
    qc.x(1)
    qc.measure([0, 1], [0, 1])
    noisy = tq.Circuit.from_qiskit(qc, measurements="keep").with_noise(tq.NoiseModel.from_qiskit(model))
    assert [op.gate for op in noisy.operations] == ["x", "x", "channel", "measure", "channel", "measure"]
    probabilities = np.asarray(tq.get_backend().to_numpy(noisy.probability()))
    assert np.abs(probabilities - np.diag(exact_density_matrix(qc, model)).real).max() < 1e-12
    np.testing.assert_allclose(probabilities, [0.3 * 0.5, 0.3 * 0.5, 0.7 * 0.5, 0.7 * 0.5], atol=1e-12)
    sampled = bitstring_distribution(aer_counts(qc, model, 200_000), 2)
    assert np.abs(sampled - probabilities).max() < 0.005  # ~ 4.5 standard errors


def test_readout_errors_match_aer_counts():
    backend = GenericBackendV2(num_qubits=3, seed=12)
    aer_model = NoiseModel.from_backend(backend)
    aer_model.add_readout_error(ReadoutError([[0.8, 0.2], [0.3, 0.7]]), [2])  # stronger, to see it
    qc = _ghz(3)
    qc.measure_all()
    transpiled = transpile(qc, backend, seed_transpiler=3)
    model = tq.NoiseModel.from_qiskit(aer_model)
    noisy = tq.Circuit.from_qiskit(transpiled, measurements="keep").with_noise(model)
    confusions = [np.asarray(noisy.readout[q]) for q in range(3)]
    np.testing.assert_allclose(confusions[2], [[0.8, 0.3], [0.2, 0.7]])
    probabilities = np.asarray(tq.get_backend().to_numpy(noisy.probability()))
    assert np.abs(probabilities - np.diag(exact_density_matrix(transpiled, aer_model)).real).max() < 1e-12
    expected = read_through(probabilities, confusions)
    sampled = bitstring_distribution(aer_counts(transpiled, aer_model, 200_000), 3)
    assert np.abs(sampled - expected).max() < 0.005
    # tyxonq's samples: the classical bits, then the final qubits, which are read through the model
    bits = np.asarray(tq.get_backend().to_numpy(noisy.sample(100_000, seed=5, format="bits")))[:, -3:]
    ours = np.bincount(bits @ [4, 2, 1], minlength=8) / 100_000
    assert np.abs(ours - expected).max() < 0.006
    # the bits the measurements record are misread as Aer's are (before: exact, silently)
    records = np.asarray(tq.get_backend().to_numpy(noisy.sample(100_000, seed=6, format="bits", final=False)))
    ours = np.bincount(records @ [4, 2, 1], minlength=8) / 100_000
    assert np.abs(ours - expected).max() < 0.006


def test_records_of_mid_circuit_measurements_are_misread_as_in_aer():
    """A qubit measured twice, into bits in another order than its qubits: every record misread
    through its qubit's matrix, through tyxonq.qiskit.Backend as through Aer (counts within
    5 standard errors)."""
    from tyxonq.qiskit import Backend

    model = NoiseModel()
    model.add_all_qubit_readout_error(ReadoutError([[0.9, 0.1], [0.3, 0.7]]))
    qc = QuantumCircuit(2, 3)
    qc.x(0)
    qc.measure(0, 2)
    qc.h(1)
    qc.x(0)
    qc.measure([0, 1], [0, 1])
    shots = 40_000
    ours = bitstring_distribution(Backend(noise_model=model).run(qc, shots=shots, seed_simulator=3)
                                  .result().get_counts(), 3)
    theirs = bitstring_distribution(aer_counts(qc, model, shots), 3)
    assert np.abs(ours - theirs).max() < 5 * np.sqrt(2 * 0.25 / shots)


def test_a_condition_on_a_misread_bit_is_refused():
    c = tq.Circuit(2).x(0)
    bit = c.measure(0)
    c.cond(bit).x(1)
    noisy = c.with_readout([[[0.9, 0.2], [0.1, 0.8]], None])
    with pytest.raises(ValueError, match=r"misread the bits \[0\], which conditions read"):
        noisy.sample(10, seed=1)
    assert noisy.with_readout([None, [[0.9, 0.2], [0.1, 0.8]]]).sample(10, seed=1)  # qubit 1: fine


def test_certain_readout_flip_is_exact():
    model = NoiseModel()
    model.add_all_qubit_readout_error(ReadoutError([[0.0, 1.0], [1.0, 0.0]]))
    model.add_readout_error(ReadoutError([[1.0, 0.0], [1.0, 0.0]]), [1])  # qubit 1 always reads 0
    converted = tq.NoiseModel.from_qiskit(model)
    qc = QuantumCircuit(2, 2)
    qc.x(0)
    qc.measure([0, 1], [0, 1])
    assert aer_counts(qc, model, 100) == {"00": 100}  # qubit 0: 1 read as 0
    noisy = tq.Circuit.from_qiskit(qc).with_noise(converted)
    confusions = [np.asarray(noisy.readout[q]) for q in range(2)]
    read = read_through(np.asarray(tq.get_backend().to_numpy(noisy.probability())), confusions)
    np.testing.assert_allclose(read, [1.0, 0.0, 0.0, 0.0], atol=1e-12)


# -- an IBM device's calibration -----------------------------------------------------------------
def test_ibm_fake_backend_matches_aer():
    fake_provider = pytest.importorskip("qiskit_ibm_runtime.fake_provider")
    backend = fake_provider.FakeManilaV2()
    qc = _ghz(4)
    qc.rx(0.4, 2)
    transpiled = transpile(qc, backend, seed_transpiler=2)
    rho = tyxonq_density_matrix(transpiled, tq.NoiseModel.from_backend(backend))
    assert np.abs(rho - aer_density_matrix(transpiled, NoiseModel.from_backend(backend))).max() < TOLERANCE


# -- random models --------------------------------------------------------------------------------
def _random_error(draw, num_qubits: int) -> QuantumError:
    if num_qubits == 2:
        kind = draw(st.sampled_from(["kraus", "depolarizing", "damped"]))
        if kind == "kraus":
            return QuantumError(Kraus(random_quantum_channel(4, seed=draw(st.integers(0, 10_000)))))
        if kind == "depolarizing":
            return depolarizing_error(draw(st.floats(0.0, 0.3)), 2)
        damping = amplitude_damping_error(draw(st.floats(0.0, 1.0)))
        return damping.tensor(phase_damping_error(draw(st.floats(0.0, 1.0))))
    kind = draw(st.sampled_from(["kraus", "pauli", "thermal", "reset"]))
    if kind == "kraus":
        return QuantumError(Kraus(random_quantum_channel(2, seed=draw(st.integers(0, 10_000)))))
    if kind == "pauli":
        px, pz = draw(st.floats(0.0, 0.4)), draw(st.floats(0.0, 0.4))
        return pauli_error([("X", px), ("Z", pz), ("I", 1 - px - pz)])
    if kind == "thermal":
        t1 = draw(st.floats(10.0, 100.0))
        return thermal_relaxation_error(t1, draw(st.floats(1.0, 2 * t1)), draw(st.floats(0.0, 20.0)),
                                        draw(st.floats(0.0, 0.3)))
    return reset_error(draw(st.floats(0.0, 0.3)), draw(st.floats(0.0, 0.3)))


@st.composite
def noise_models(draw):
    model = NoiseModel()
    for _ in range(draw(st.integers(1, 5))):
        gate = draw(st.sampled_from(["x", "sx", "h", "cx", "cz"]))
        size = 2 if gate in ("cx", "cz") else 1
        error = _random_error(draw, size)
        if draw(st.booleans()):
            model.add_all_qubit_quantum_error(error, [gate], warnings=False)
        else:
            qubits = draw(st.permutations([0, 1, 2]))[:size]
            model.add_quantum_error(error, [gate], qubits, warnings=False)
    return model


@st.composite
def circuits(draw):
    qc = QuantumCircuit(3)
    for _ in range(draw(st.integers(3, 9))):
        gate = draw(st.sampled_from(["x", "sx", "h", "cx", "cz", "rz"]))
        qubits = draw(st.permutations([0, 1, 2]))
        if gate in ("cx", "cz"):
            getattr(qc, gate)(qubits[0], qubits[1])
        elif gate == "rz":
            qc.rz(draw(st.floats(-3.0, 3.0)), qubits[0])
        else:
            getattr(qc, gate)(qubits[0])
    return qc


@settings(max_examples=12, deadline=None)
@given(noise_models(), circuits())
def test_random_models_match_aer(model, qc):
    rho = tyxonq_density_matrix(qc, tq.NoiseModel.from_qiskit(model))
    assert np.abs(rho - aer_density_matrix(qc, model)).max() < TOLERANCE


# -- refusals -----------------------------------------------------------------------------------
def test_refuses_what_is_not_an_aer_model():
    with pytest.raises(TypeError, match="str is not a qiskit_aer.noise.NoiseModel"):
        tq.NoiseModel.from_qiskit("depolarizing")
    with pytest.raises(TypeError, match="not a Qiskit BackendV2"):
        tq.NoiseModel.from_backend(NoiseModel())


def test_refuses_correlated_readout_error():
    model = NoiseModel()
    model.add_readout_error(ReadoutError(np.full((4, 4), 0.25)), [0, 1])
    with pytest.raises(ValueError, match=r"readout error on qubits \[0, 1\] is correlated"):
        tq.NoiseModel.from_qiskit(model)


@pytest.mark.parametrize("name", ["delay", "u2"])
def test_refuses_errors_on_instructions_tyxonq_does_not_keep(name):
    model = NoiseModel(basis_gates=["u2", "cx"])
    model.add_all_qubit_quantum_error(depolarizing_error(0.1, 1), [name])
    with pytest.raises(ValueError, match=f"instruction '{name}'"):
        tq.NoiseModel.from_qiskit(model)


def test_refuses_two_errors_on_one_tyxonq_gate():
    model = NoiseModel(basis_gates=["p", "u1"])
    model.add_all_qubit_quantum_error(depolarizing_error(0.1, 1), ["p"])
    model.add_all_qubit_quantum_error(depolarizing_error(0.2, 1), ["u1"])
    with pytest.raises(ValueError, match="'p' and 'u1' are both tyxonq's 'phase'"):
        tq.NoiseModel.from_qiskit(model)


def test_refuses_custom_noise_passes():
    from qiskit_aer.noise.passes import LocalNoisePass

    model = NoiseModel()
    model._custom_noise_passes.append(LocalNoisePass(lambda op, qubits: None))
    with pytest.raises(ValueError, match="custom noise pass LocalNoisePass"):
        tq.NoiseModel.from_qiskit(model)


def test_add_local_refuses_a_channel_of_the_wrong_size():
    with pytest.raises(ValueError, match="cannot act on the 1 qubits"):
        tq.NoiseModel().add_local(tq.channels.depolarizing(0.1, 2), "x", [0])
