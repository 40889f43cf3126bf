"""The PennyLane devices tyxonq.qubit and tyxonq.mixed against default.qubit / default.mixed.

PennyLane's own device suite runs from ``tests/pennylane_suite/run.sh``; these tests check values
to 1e-10, seeded shot statistics, device gradients in three interfaces, mid-circuit
measurements, noise channels and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

qml = pytest.importorskip("pennylane")

from pennylane.exceptions import DeviceError, QuantumFunctionError  # noqa: E402 - after the skip
from pennylane.wires import WireError  # noqa: E402

from tyxonq.pennylane.gates import NATIVE_GATES  # noqa: E402

TOL = 1e-10
A, B, C = 0.37, -1.21, 0.83

GATES = [
    qml.Hadamard(0), qml.PauliX(0), qml.PauliY(0), qml.PauliZ(0), qml.S(0), qml.T(0), qml.SX(0),
    qml.CNOT([0, 1]), qml.CY([0, 1]), qml.CZ([0, 1]), qml.SWAP([0, 1]), qml.ISWAP([0, 1]),
    qml.Toffoli([0, 1, 2]), qml.CSWAP([0, 1, 2]), qml.RX(A, 0), qml.RY(A, 0), qml.RZ(A, 0),
    qml.PhaseShift(A, 0), qml.U3(A, B, C, 0), qml.IsingXX(A, [0, 1]), qml.IsingYY(A, [0, 1]),
    qml.IsingZZ(A, [0, 1]), qml.CRX(A, [0, 1]), qml.CRY(A, [0, 1]), qml.CRZ(A, [0, 1]),
    qml.ControlledPhaseShift(A, [0, 1]), qml.GlobalPhase(A, wires=[0, 1]),
]


def test_the_gate_table_is_tested_whole():
    assert {op.name for op in GATES} == set(NATIVE_GATES)


@pytest.mark.parametrize("op", GATES, ids=lambda op: op.name)
def test_native_gates_have_pennylanes_matrices(op):
    from tyxonq.pennylane.circuits import build_circuit

    wires = max(3, len(op.wires))
    tape = qml.tape.QuantumScript([op], [qml.state()])
    circuit = build_circuit(tape.copy(operations=[qml.Identity(w) for w in range(wires)] + [op]), False)
    expected = qml.matrix(op, wire_order=range(wires))
    assert np.allclose(np.asarray(circuit.matrix()), expected, atol=TOL)


def ansatz(x):
    qml.StatePrep(np.array([0.6, 0, 0, 0.8j, 0, 0, 0, 0]), wires=[0, 1, 2])
    qml.Rot(x[0], x[1], x[2], wires=0)
    qml.RX(x[1], wires=1)
    qml.CNOT(wires=[0, 1])
    qml.IsingXY(x[2], wires=[1, 2])
    qml.QubitUnitary(qml.matrix(qml.SX(0) @ qml.T(0)), wires=2)
    qml.QFT(wires=[0, 1, 2])
    qml.CRot(x[0], x[2], x[1], wires=[2, 0])


HERMITIAN = np.array([[1.0, 2 - 1j], [2 + 1j, -0.5]])
OBSERVABLES = [
    qml.Z(0), qml.X(1) @ qml.Y(2), 0.5 * qml.Z(0) + qml.X(1) @ qml.X(2) - 0.2 * qml.Identity(0),
    qml.Hamiltonian([0.3, -1.1], [qml.Y(0) @ qml.Z(2), qml.X(1)]), qml.Hermitian(HERMITIAN, 1),
    qml.Hermitian(HERMITIAN, 1) @ qml.Z(0), qml.Projector([1, 0], wires=[0, 2]), qml.Hadamard(2),
]


def measured(device, measurements, x, **kwargs):
    @qml.qnode(device, **kwargs)
    def circuit(x):
        ansatz(x)
        return [m() for m in measurements]

    return circuit(x)


@pytest.mark.parametrize("name, reference", [("tyxonq.qubit", "default.qubit"),
                                             ("tyxonq.mixed", "default.mixed")])
def test_every_measurement_matches_pennylanes_simulator(name, reference):
    x = np.array([A, B, C])
    measurements = ([lambda o=o: qml.expval(o) for o in OBSERVABLES]
                    + [lambda o=o: qml.var(o) for o in OBSERVABLES]
                    + [lambda: qml.probs(wires=[2, 0]), lambda: qml.probs(op=qml.X(1) @ qml.Y(0)),
                       lambda: qml.probs(), lambda: qml.state(), lambda: qml.density_matrix([1, 2]),
                       lambda: qml.purity([0]), lambda: qml.vn_entropy([1]),
                       lambda: qml.mutual_info([0], [2])])
    got = measured(qml.device(name, wires=3), measurements, x)
    expected = measured(qml.device(reference, wires=3), measurements, x)
    for g, e in zip(got, expected):
        assert np.allclose(g, e, atol=TOL, rtol=0)


def test_custom_wire_labels_and_unused_device_wires():
    def circuit():
        qml.Hadamard("a")
        qml.CNOT(wires=["a", 7])
        return qml.state(), qml.probs(wires=[7, "a"]), qml.expval(qml.Z("b"))

    got = qml.QNode(circuit, qml.device("tyxonq.qubit", wires=["b", "a", 7]))()
    expected = qml.QNode(circuit, qml.device("default.qubit", wires=["b", "a", 7]))()
    for g, e in zip(got, expected):
        assert np.allclose(g, e, atol=TOL)


def test_broadcasting_matches_default_qubit():
    xs = np.array([[0.1, 0.2, 0.3], [1.0, -0.4, 2.2], [0.0, 3.0, -1.0]])

    def circuit(x):
        qml.RX(x[:, 0], wires=0)
        qml.RY(x[:, 1], wires=1)
        qml.CNOT([0, 1])
        qml.RZ(x[:, 2], wires=1)
        return qml.expval(qml.X(1) + qml.Z(0)), qml.probs(wires=[1])

    def expanded(x):  # Rot has no native gate: one tape per parameter set
        qml.Rot(x[:, 0], x[:, 1], 0.3, wires=0)
        qml.CNOT([0, 1])
        return qml.expval(qml.Z(1)), qml.var(qml.X(0)), qml.state()

    for function in (circuit, expanded):
        for name, reference in (("tyxonq.qubit", "default.qubit"), ("tyxonq.mixed", "default.mixed")):
            got = qml.QNode(function, qml.device(name, wires=2))(xs)
            expected = qml.QNode(function, qml.device(reference, wires=2))(xs)
            for g, e in zip(got, expected):
                assert np.shape(g) == np.shape(e) and np.allclose(g, e, atol=TOL)


def test_a_broadcast_batch_of_native_gates_is_one_laned_execution():
    xs = np.array([0.1, 0.7, 1.9, -2.0])
    device = qml.device("tyxonq.qubit", wires=2)

    @qml.qnode(device)
    def circuit(x):
        qml.RX(x, wires=0)
        qml.CRY(2 * x, wires=[0, 1])
        return qml.expval(qml.Z(0) @ qml.X(1)), qml.probs(wires=[1]), qml.density_matrix([0])

    with qml.Tracker(device) as tracker:
        got = circuit(xs)
    assert tracker.totals["simulations"] == 1  # broadcast_expand would make it 4
    expected = qml.QNode(circuit.func, qml.device("default.qubit", wires=2))(xs)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e) and np.allclose(g, e, atol=TOL)


# -- shots ------------------------------------------------------------------------------------------
def shot_circuit(device, sampled=True):
    @qml.qnode(device)
    def circuit():
        qml.RY(1.1, wires=0)
        qml.CNOT(wires=[0, 1])
        qml.RX(0.4, wires=1)
        if not sampled:
            return (qml.expval(qml.Z(0) @ qml.Z(1)), qml.expval(qml.X(1)), qml.probs(wires=[0]),
                    qml.var(qml.Z(0)))
        return (qml.expval(qml.Z(0) @ qml.Z(1)), qml.expval(qml.X(1)), qml.probs(wires=[0]),
                qml.sample(wires=[0, 1]), qml.counts(wires=[1]), qml.var(qml.Z(0)))

    return circuit


@pytest.mark.parametrize("name", ["tyxonq.qubit", "tyxonq.mixed"])
def test_shots_estimate_within_five_standard_errors(name):
    shots = 4000
    exact = shot_circuit(qml.device("default.qubit", wires=2), sampled=False)()
    got = qml.set_shots(shot_circuit(qml.device(name, wires=2, seed=11)), shots)()
    zz, x1, p0, samples, counts, var0 = got
    bound = 5 / np.sqrt(shots)  # every estimate is a mean of numbers in [-1, 1]
    assert abs(zz - exact[0]) < bound and abs(x1 - exact[1]) < bound
    assert np.all(np.abs(p0 - exact[2]) < bound) and abs(var0 - exact[3]) < 2 * bound
    assert samples.shape == (shots, 2) and set(np.unique(samples)) <= {0, 1}
    assert sum(counts.values()) == shots
    again = qml.set_shots(shot_circuit(qml.device(name, wires=2, seed=11)), shots)()
    assert np.array_equal(again[3], samples)  # the seed fixes the samples


def test_shot_vectors_give_one_result_per_entry():
    circuit = qml.set_shots(shot_circuit(qml.device("tyxonq.qubit", wires=2, seed=3)),
                            [100, (20, 2)])
    results = circuit()
    assert len(results) == 3
    assert [r[3].shape[0] for r in results] == [100, 20, 20]


# -- gradients --------------------------------------------------------------------------------------
def gradient_circuit(x):
    qml.RX(x[0], wires=0)
    qml.Rot(x[1], x[0], x[2], wires=1)
    qml.CNOT(wires=[0, 1])
    qml.IsingYY(x[2], wires=[1, 2])
    qml.CRY(x[1], wires=[2, 0])
    return (qml.expval(qml.Z(0) @ qml.X(1)),
            qml.expval(qml.Hamiltonian([0.5, -0.3], [qml.Y(2), qml.Z(1) @ qml.Z(0)])))


X0 = np.array([0.4, -0.8, 1.3])


def reference_jacobian():
    circuit = qml.QNode(gradient_circuit, qml.device("default.qubit", wires=3), diff_method="backprop")
    from pennylane import numpy as pnp

    return qml.jacobian(lambda x: pnp.stack(circuit(x)))(pnp.array(X0, requires_grad=True))


@pytest.mark.parametrize("diff_method", ["best", "device"])
def test_device_gradients_autograd(diff_method):
    from pennylane import numpy as pnp

    circuit = qml.QNode(gradient_circuit, qml.device("tyxonq.qubit", wires=3), diff_method=diff_method)
    jac = qml.jacobian(lambda x: pnp.stack(circuit(x)))(pnp.array(X0, requires_grad=True))
    assert np.allclose(jac, reference_jacobian(), atol=1e-8, rtol=0)


def test_device_gradients_torch():
    torch = pytest.importorskip("torch")
    circuit = qml.QNode(gradient_circuit, qml.device("tyxonq.qubit", wires=3), diff_method="best")
    x = torch.tensor(X0, requires_grad=True, dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda x: torch.stack(circuit(x)), x)
    assert np.allclose(jac.numpy(), reference_jacobian(), atol=1e-8, rtol=0)


def test_device_gradients_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    circuit = qml.QNode(gradient_circuit, qml.device("tyxonq.qubit", wires=3), diff_method="best")
    jac = jax.jacobian(lambda x: jax.numpy.stack(circuit(x)))(jax.numpy.array(X0))
    assert np.allclose(np.asarray(jac), reference_jacobian(), atol=1e-8, rtol=0)


def test_mixed_device_gradients_under_noise():
    from pennylane import numpy as pnp

    def noisy(x):
        qml.RX(x[0], wires=0)
        qml.DepolarizingChannel(0.1, wires=0)
        qml.CRY(x[1], wires=[0, 1])
        qml.AmplitudeDamping(0.2, wires=1)
        return qml.expval(qml.Z(1) + 0.5 * qml.X(0))

    x = pnp.array([0.7, -1.4], requires_grad=True)
    ours = qml.grad(qml.QNode(noisy, qml.device("tyxonq.mixed", wires=2), diff_method="device"))(x)
    # default.mixed's backprop gives NaN for x[0] here; its parameter shift is exact for RX and CRY
    theirs = qml.grad(qml.QNode(noisy, qml.device("default.mixed", wires=2),
                                diff_method="parameter-shift"))(x)
    assert np.allclose(ours, theirs, atol=1e-8, rtol=0)


# -- mid-circuit measurements -------------------------------------------------------------------------
def dynamic(x):
    qml.RY(x, wires=0)
    qml.CNOT(wires=[0, 1])
    m0 = qml.measure(0)
    qml.cond(m0, qml.RX)(0.7, wires=2)
    qml.cond(~m0, qml.Hadamard)(wires=2)
    m1 = qml.measure(1, reset=True)
    return qml.expval(qml.Z(2)), qml.probs(op=m0), qml.expval(m1), qml.probs(wires=[1, 2])


def postselected(x):
    qml.RY(x, wires=0)
    qml.CNOT(wires=[0, 1])
    qml.measure(0, postselect=1)
    return qml.expval(qml.Z(1)), qml.probs(wires=[1])


@pytest.mark.parametrize("circuit", [dynamic, postselected])
def test_mid_circuit_measurements_match_default_qubit(circuit):
    got = qml.QNode(circuit, qml.device("tyxonq.qubit", wires=6))(0.9)
    expected = qml.QNode(circuit, qml.device("default.qubit", wires=6))(0.9)
    for g, e in zip(got, expected):
        assert np.allclose(g, e, atol=TOL)


def test_postselection_with_shots_keeps_the_accepted_share():
    shots = 4000
    circuit = qml.set_shots(qml.QNode(postselected, qml.device("tyxonq.qubit", wires=2, seed=5)), shots)
    accepted = np.sin(0.9 / 2) ** 2
    with_samples = qml.set_shots(qml.QNode(
        lambda: (qml.RY(0.9, 0), qml.CNOT([0, 1]), qml.measure(0, postselect=1),
                 qml.sample(wires=[1]))[-1], qml.device("tyxonq.qubit", wires=2, seed=5)), shots)()
    assert abs(len(with_samples) - accepted * shots) < 5 * np.sqrt(shots * accepted * (1 - accepted))
    assert np.all(with_samples == 1)
    assert abs(circuit(0.9)[0] + 1) < TOL


# -- noise channels ---------------------------------------------------------------------------------
KRAUS = [np.sqrt(0.7) * np.eye(2), np.sqrt(0.3) * np.array([[0, 1], [1, 0]])]
CHANNELS = [
    qml.AmplitudeDamping(0.3, wires=0), qml.PhaseDamping(0.4, wires=0),
    qml.DepolarizingChannel(0.2, wires=0), qml.BitFlip(0.15, wires=0), qml.PhaseFlip(0.25, wires=0),
    qml.GeneralizedAmplitudeDamping(0.3, 0.8, wires=0), qml.ResetError(0.1, 0.2, wires=0),
    qml.PauliError("XZ", 0.3, wires=[0, 1]), qml.ThermalRelaxationError(0.2, 100.0, 80.0, 20.0, wires=0),
    qml.ThermalRelaxationError(0.1, 50.0, 90.0, 30.0, wires=0), qml.QubitChannel(KRAUS, wires=0),
]


@pytest.mark.parametrize("channel", CHANNELS, ids=lambda op: op.name)
def test_noise_channels_match_default_mixed(channel):
    def circuit():
        qml.RY(0.8, wires=0)
        qml.RX(-0.5, wires=1)
        qml.CNOT(wires=[0, 1])
        qml.apply(channel)
        qml.Hadamard(wires=0)
        return qml.density_matrix(wires=[0, 1]), qml.expval(qml.X(0) @ qml.Y(1))

    got = qml.QNode(circuit, qml.device("tyxonq.mixed", wires=2))()
    expected = qml.QNode(circuit, qml.device("default.mixed", wires=2))()
    for g, e in zip(got, expected):
        assert np.allclose(g, e, atol=TOL, rtol=0)


def test_a_prepared_density_matrix_matches_default_mixed_on_wires_no_gate_touches():
    """QubitDensityMatrix on the mixed device, with wires 1 and 2 left to the input (before: every
    result but the state failed there, "legs appear in one operand only")."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(8, 8)) + 1j * rng.normal(size=(8, 8))
    rho = a @ a.conj().T / np.trace(a @ a.conj().T).real

    def circuit():
        qml.QubitDensityMatrix(rho, wires=[0, 1, 2])
        qml.RX(0.4, wires=0)
        return qml.expval(qml.Z(0) @ qml.X(2)), qml.probs(wires=[1, 2]), qml.density_matrix(wires=[2])

    got = qml.QNode(circuit, qml.device("tyxonq.mixed", wires=3))()
    expected = qml.QNode(circuit, qml.device("default.mixed", wires=3))()
    for g, e in zip(got, expected):
        assert np.allclose(g, e, atol=TOL, rtol=0)


# -- refusals -----------------------------------------------------------------------------------------
def test_channels_on_the_pure_state_device_are_refused():
    circuit = qml.QNode(lambda: (qml.BitFlip(0.1, wires=0), qml.expval(qml.Z(0)))[-1],
                        qml.device("tyxonq.qubit", wires=1))
    with pytest.raises(DeviceError, match="BitFlip"):
        circuit()


def test_unsupported_measurement_is_refused():
    circuit = qml.set_shots(qml.QNode(lambda: (qml.Hadamard(0), qml.classical_shadow(wires=[0]))[-1],
                                      qml.device("tyxonq.qubit", wires=1)), 10)
    with pytest.raises(DeviceError, match="shadow"):
        circuit()


def test_too_many_wires_are_refused():
    circuit = qml.QNode(lambda: (qml.CNOT([0, 2]), qml.expval(qml.Z(0)))[-1],
                        qml.device("tyxonq.qubit", wires=2))
    with pytest.raises(WireError, match="2"):
        circuit()


def test_unsupported_mcm_method_is_refused():
    circuit = qml.QNode(lambda: (qml.measure(0), qml.expval(qml.Z(0)))[-1],
                        qml.device("tyxonq.qubit", wires=1), mcm_method="one-shot")
    with pytest.raises(DeviceError, match="one-shot"):
        qml.set_shots(circuit, 10)()


def test_device_derivatives_of_probabilities_are_refused():
    from pennylane import numpy as pnp

    circuit = qml.QNode(lambda x: (qml.RX(x, 0), qml.probs(wires=[0]))[-1],
                        qml.device("tyxonq.qubit", wires=1), diff_method="device")
    with pytest.raises(QuantumFunctionError, match="device"):
        qml.jacobian(circuit)(pnp.array(0.3, requires_grad=True))


def test_best_falls_back_to_parameter_shift_with_shots():
    circuit = qml.set_shots(qml.QNode(lambda x: (qml.RX(x, 0), qml.expval(qml.Z(0)))[-1],
                                      qml.device("tyxonq.qubit", wires=1, seed=1)), 100)
    assert qml.workflow.get_best_diff_method(circuit)(0.3) == "parameter-shift"
