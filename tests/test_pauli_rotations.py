"""Pauli rotations ``exp(-i θ P / 2)`` as one gate kind: every simulator against the dense
reference, gradients, light cones, conditions, drawing, interchange and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import pauli_matrix, reference_state, rotation
from tyxonq.circuit.contraction.lightcone import light_cone
from tyxonq.circuit.operations.gates import MAX_PAULI_ROTATION_QUBITS

SIMULATORS = (tq.Circuit, tq.DMCircuit, tq.MPSCircuit)


@st.composite
def rotations(draw):
    """(n, [(letters, qubits, theta)]) with random strings, including identities."""
    n = draw(st.integers(1, 5))
    items = []
    for _ in range(draw(st.integers(1, 6))):
        k = draw(st.integers(1, n))
        qubits = tuple(draw(st.permutations(range(n)))[:k])
        letters = "".join(draw(st.sampled_from("IXYZ")) for _ in range(k))
        items.append((letters, qubits, draw(st.floats(-2 * np.pi, 2 * np.pi))))
    return n, items


def dense_rotation(n: int, letters: str, qubits: tuple, theta: float) -> np.ndarray:
    full = ["I"] * n
    for q, letter in zip(qubits, letters):
        full[q] = letter
    return rotation(pauli_matrix("".join(full)), theta)


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch", "jax", "cupynumeric-logic"])
@pytest.mark.parametrize("simulator", SIMULATORS, ids=lambda c: c.__name__)
def test_rotations_match_the_dense_exponential(backend_id, simulator):
    K = make_backend(backend_id)

    @settings(max_examples=15, deadline=None)
    @given(case=rotations())
    def check(case):
        n, items = case
        with tq.use_backend(K):
            c = simulator(n)
            for q in range(n):
                c.ry(q, 0.3 + 0.4 * q)
            expected = reference_state(n, [("ry", (q,), (0.3 + 0.4 * q,)) for q in range(n)])
            for letters, qubits, theta in items:
                c.exp_pauli(letters, qubits, theta)
                expected = dense_rotation(n, letters, qubits, theta) @ expected
            if simulator is tq.DMCircuit:
                got = K.to_numpy(c.state())
                np.testing.assert_allclose(got, np.outer(expected, expected.conj()), atol=1e-10)
            else:
                np.testing.assert_allclose(K.to_numpy(c.state()), expected, atol=1e-10)

    check()


def test_decomposed_and_single_gate_forms_agree_and_identities_are_dropped():
    a = tq.Circuit(4).h(1).exp_pauli("YIXZ", theta=0.9)
    b = tq.Circuit(4).h(1).exp_pauli("YIXZ", theta=0.9, decompose=True)
    np.testing.assert_allclose(a.state(), b.state(), atol=1e-12)
    assert a.operations[-1].gate == "exp:YXZ" and a.operations[-1].qubits == (0, 2, 3)
    assert {op.gate for op in b.operations} <= {"h", "sdg", "s", "cx", "rz"}
    phase = tq.Circuit(2).exp_pauli("II", theta=0.6)  # exp(-0.3i) I
    np.testing.assert_allclose(phase.state(), [np.exp(-0.3j), 0, 0, 0], atol=1e-12)


@pytest.mark.parametrize("backend_id, methods", jax_in_matrix([
    ("numpy", ["adjoint", "parameter-shift"]), ("pytorch", ["autograd", "adjoint", "parameter-shift"]),
    ("jax", ["autograd", "adjoint", "parameter-shift"])]))
def test_gradients_of_every_method_match_finite_differences(backend_id, methods):
    hamiltonian = tq.PauliSum([(1.0, "ZIXY"), (0.5, "XXII"), (-0.3, "IZZI")])

    def energy(x):
        c = tq.Circuit(4)
        for q in range(4):
            c.rx(q, 0.2 * q + 0.1)
        c.exp_pauli("XYZ", (0, 1, 2), x[0]).exp_pauli("ZZ", (3, 0), x[1]).exp_pauli("YXZY", None, 2 * x[2])
        return c.expectation(hamiltonian)

    x0 = np.array([0.7, 0.2, -1.1])
    numeric = np.array([(energy(x0 + e) - energy(x0 - e)) / 2e-6 for e in 1e-6 * np.eye(3)]).real
    K = make_backend(backend_id)
    with tq.use_backend(K):
        for method in methods:
            _, gradient = tq.value_and_grad(energy, method=method)(K.asarray(x0))
            np.testing.assert_allclose(K.to_numpy(gradient), numeric, atol=1e-7, err_msg=method)


def test_mps_and_density_matrix_gradients_by_parameter_shift():
    def value(x, simulator):
        c = simulator(3).ry(0, 0.3).rx(1, 0.4).ry(2, 0.7)
        c.exp_pauli("XZY", theta=x[0]).exp_pauli("YY", (0, 2), x[1])
        return c.expectation_ps(z=[0]) + c.expectation_ps(x=[1], y=[2])

    x0 = np.array([0.3, 0.5])
    expected = tq.value_and_grad(lambda x: value(x, tq.Circuit), method="adjoint")(x0)[1]
    for simulator in (tq.DMCircuit, tq.MPSCircuit):
        got = tq.value_and_grad(lambda x, s=simulator: value(x, s), method="parameter-shift")(x0)[1]
        np.testing.assert_allclose(got, expected, atol=1e-10)
    assert np.max(np.abs(expected)) > 0.1  # the check compares something


def test_light_cone_lets_rotations_commute_with_what_they_commute_with():
    ops = tq.Circuit(3).h(0).exp_pauli("ZZ", (0, 1), 0.3).exp_pauli("XZ", (2, 0), 0.2).operations
    assert light_cone(ops, [0], diagonal=[0]) == [0]  # ZZ and X_2 Z_0 commute with Z_0
    assert light_cone(ops, [2], diagonal=[]) == [0, 2]  # X Z on (2, 0) does not commute with X_2
    value = tq.Circuit(3).h(0).exp_pauli("XZ", (2, 0), 0.2)
    lightcone = value.expectation(tq.PauliSum([(1.0, "IIX"), (1.0, "ZII")]), method="lightcone")
    np.testing.assert_allclose(lightcone, value.expectation(tq.PauliSum([(1.0, "IIX"), (1.0, "ZII")])),
                               atol=1e-12)


def test_conditioned_rotations_and_batches():
    c = tq.Circuit(3).h(0)
    bit = c.measure(0)
    c.cond(bit).exp_pauli("XY", (1, 2), 0.8)
    expected = 0.5 * 1 + 0.5 * np.cos(0.8)  # <Z_1> after exp(-0.4i X Y) on |00>
    assert abs(float(c.expectation_ps(z=[1])) - expected) < 1e-10
    K = make_backend("numpy")
    angles = np.array([0.1, 0.5, 1.2])

    def z1(theta):
        return tq.Circuit(2).exp_pauli("YX", theta=theta).expectation_ps(z=[0])

    with tq.use_backend(K):
        batched = K.to_numpy(tq.vmap(z1)(K.asarray(angles)))
    np.testing.assert_allclose(batched, np.cos(angles), atol=1e-12)


def test_drawing_shows_each_qubits_letter():
    text = tq.Circuit(3).exp_pauli("XZY", theta=0.3).draw()
    assert "e^X(0.3)" in text and "e^Z(0.3)" in text and "e^Y(0.3)" in text


def test_bad_input_is_named():
    c = tq.Circuit(3)
    with pytest.raises(ValueError, match="pauli='XA'"):
        c.exp_pauli("XA", (0, 1), 0.1)
    with pytest.raises(ValueError, match="one letter per qubit"):
        c.exp_pauli("XZ", (0, 1, 2), 0.1)
    with pytest.raises(TypeError, match="theta"):
        c.exp_pauli("XZ", (0, 1))
    with pytest.raises(ValueError, match="distinct|twice|repeated"):
        c.exp_pauli("XZ", (1, 1), 0.1)
    wide = tq.Circuit(MAX_PAULI_ROTATION_QUBITS + 1)
    with pytest.raises(ValueError, match="decompose=True"):
        wide.exp_pauli("X" * (MAX_PAULI_ROTATION_QUBITS + 1), theta=0.1)
    wide.exp_pauli("X" * (MAX_PAULI_ROTATION_QUBITS + 1), theta=0.1, decompose=True)


def test_qiskit_and_openqasm_round_trips():
    pytest.importorskip("qiskit")
    from qiskit import QuantumCircuit
    from qiskit.circuit import Parameter
    from qiskit.circuit.library import PauliEvolutionGate, PauliGate
    from qiskit.quantum_info import SparsePauliOp, Statevector

    def big_endian(qc):
        n = qc.num_qubits
        return Statevector(qc).data.reshape([2] * n).transpose(range(n - 1, -1, -1)).reshape(-1)

    c = tq.Circuit(3).h(0).exp_pauli("XZY", theta=0.3).exp_pauli("YX", (2, 0), -0.4)
    qc = c.to_qiskit()
    assert [i.operation.name for i in qc.data].count("PauliEvolution") == 2
    np.testing.assert_allclose(big_endian(qc), c.state(), atol=1e-12)
    back = tq.Circuit.from_qiskit(qc)
    assert [op.gate for op in back.operations] == ["h", "exp:XZY", "exp:YX"]
    np.testing.assert_allclose(tq.Circuit.from_openqasm(c.to_openqasm()).state(), c.state(), atol=1e-12)

    t = Parameter("t")
    qc = QuantumCircuit(3)
    qc.h(1)
    qc.append(PauliEvolutionGate(SparsePauliOp(["ZZI", "IXX"], [0.5, 0.3]), time=0.9), [0, 1, 2])
    qc.append(PauliEvolutionGate(SparsePauliOp(["ZZI", "IZX"], [0.5, 0.3]), time=t), [0, 1, 2])
    qc.append(PauliGate("XYZ"), [0, 1, 2])
    read = tq.Circuit.from_qiskit(qc, binding={"t": 0.7})
    assert [op.gate for op in read.operations] == ["h", "unitary", "exp:ZZ", "exp:XZ", "z", "y", "x"]
    np.testing.assert_allclose(read.state(), big_endian(qc.assign_parameters({t: 0.7})), atol=1e-12)

    def z0(time):  # commuting terms: exp_pauli gates, differentiable in the bound time
        return tq.Circuit.from_qiskit(qc, binding={"t": time}).expectation_ps(z=[2])

    gradient = tq.value_and_grad(z0, method="parameter-shift")(0.7)[1]
    assert abs(float(gradient) - float((z0(0.7 + 1e-6) - z0(0.7 - 1e-6)) / 2e-6)) < 1e-7
