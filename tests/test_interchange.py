"""Circuits in and out: Qiskit and OpenQASM 2/3 round trips of random circuits over the whole gate
set, Qiskit library circuits against Qiskit's own Statevector, a corpus of OpenQASM files
against known answers, differentiable converted ansätze, and every refusal naming what and
where."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import reference_state
from test_circuit import add_operations, random_circuits
from tyxonq.circuit.interchange.openqasm import openqasm_version
from tyxonq.circuit.operations.gates import GATES

qiskit = pytest.importorskip("qiskit")
from qiskit import QuantumCircuit  # noqa: E402
from qiskit.circuit import Parameter  # noqa: E402
from qiskit.quantum_info import Statevector  # noqa: E402

CORPUS = Path(__file__).parent / "qasm"


def qiskit_state(qc: QuantumCircuit) -> np.ndarray:
    """Qiskit's state in tyxonq's amplitude order (qubit 0 most significant)."""
    return Statevector(qc).reverse_qargs().data


def state_of(circuit) -> np.ndarray:
    with tq.use_backend("numpy"):
        return np.asarray(circuit.state())


def with_inverses(n: int, operations: list, flags: list[bool]) -> tq.Circuit:
    """The random operations, then the inverse of those flagged (daggered gates)."""
    circuit = add_operations(tq.Circuit(n), operations)
    tail = add_operations(tq.Circuit(n), [op for op, flag in zip(operations, flags) if flag])
    return circuit.with_operations(list(circuit.operations) + list(tail.inverse().operations))


@settings(max_examples=40, deadline=None)
@given(case=random_circuits(max_qubits=4, max_gates=10),
       flags=st.lists(st.booleans(), min_size=10, max_size=10))
def test_every_gate_round_trips_through_qiskit_and_openqasm(case, flags):
    n, operations = case
    circuit = with_inverses(n, operations, flags)
    expected = state_of(circuit)
    np.testing.assert_allclose(state_of(tq.Circuit.from_qiskit(circuit.to_qiskit())), expected, atol=1e-12)
    np.testing.assert_allclose(qiskit_state(circuit.to_qiskit()), expected, atol=1e-10)
    for version in (2, 3):
        text = circuit.to_openqasm(version)
        np.testing.assert_allclose(state_of(tq.Circuit.from_openqasm(text)), expected, atol=1e-10,
                                   err_msg=text)


def test_gates_without_a_unitary_round_trip_to_1e_12():
    """Every gate but ``unitary`` (synthesised by Qiskit, 1e-10), plain and daggered."""
    rng = np.random.default_rng(3)
    circuit = tq.Circuit(3).h(0).h(1).h(2)
    for name, spec in sorted(GATES.items()):
        if name == "unitary":
            continue
        angles = rng.uniform(-3, 3, len(spec.param_names))
        getattr(circuit, name)(*[(0,), (1, 2), (2, 0, 1)][spec.num_qubits - 1], *angles)
    forward = list(circuit.operations)  # then every gate daggered but the Hadamards, then again
    circuit = circuit.with_operations(forward + list(circuit.inverse().operations[:-3]) + forward)
    expected = state_of(circuit)
    assert np.linalg.norm(expected - state_of(tq.Circuit(3).h(0).h(1).h(2))) > 0.1
    np.testing.assert_allclose(state_of(tq.Circuit.from_qiskit(circuit.to_qiskit())), expected, atol=1e-12)
    for version in (2, 3):
        np.testing.assert_allclose(state_of(tq.Circuit.from_openqasm(circuit.to_openqasm(version))), expected,
                                   atol=1e-12)


def test_every_fixed_gate_is_qiskits_gate():
    """The table's matrices against Qiskit's own (each gate on a state that tells the qubits
    apart), ECR (IBM's native gate, asymmetric) included."""
    rng = np.random.default_rng(5)
    checked = []
    for name, spec in sorted(GATES.items()):
        if name == "unitary" or spec.param_names or name == "i":
            continue
        checked.append(name)
        qubits = [(1,), (2, 0), (2, 0, 1)][spec.num_qubits - 1]
        circuit = tq.Circuit(3).u(0, *rng.uniform(-3, 3, 3)).u(1, *rng.uniform(-3, 3, 3)).h(2)
        getattr(circuit, name)(*qubits)
        np.testing.assert_allclose(state_of(circuit), qiskit_state(circuit.to_qiskit()), atol=1e-12,
                                   err_msg=name)
    assert {"ecr", "iswap", "cswap", "sxdg"} <= set(checked)


def test_qiskit_library_circuits_against_qiskits_statevector():
    from qiskit.circuit.library import QFTGate, efficient_su2, qaoa_ansatz
    from qiskit.circuit.random import random_circuit
    from qiskit.quantum_info import SparsePauliOp

    rng = np.random.default_rng(7)
    qft = QuantumCircuit(5)
    qft.x([1, 3])
    qft.append(QFTGate(5), range(5))
    su2 = efficient_su2(4, reps=2)
    su2_values = rng.uniform(-np.pi, np.pi, su2.num_parameters)
    cost = SparsePauliOp.from_list([("ZZII", 1.0), ("IZZI", 0.5), ("IIZZ", -0.7), ("ZIIZ", 0.3)])
    qaoa = qaoa_ansatz(cost, reps=2)
    qaoa_values = rng.uniform(-1, 1, qaoa.num_parameters)
    randoms = [random_circuit(6, 6, max_operands=3, seed=seed) for seed in range(4)]
    cases = [(qft, None), (su2, su2_values), (qaoa, qaoa_values)] + [(qc, None) for qc in randoms]
    for qc, values in cases:
        qc = qc.remove_final_measurements(inplace=False)
        bound = qc.assign_parameters(values) if values is not None else qc
        converted = tq.Circuit.from_qiskit(qc, values)
        np.testing.assert_allclose(state_of(converted), qiskit_state(bound), atol=1e-10)


def test_qubit_order_and_global_phase():
    qc = QuantumCircuit(3, global_phase=0.4)
    qc.x(0)
    qc.rz(0.3, 2)
    circuit = tq.Circuit.from_qiskit(qc)
    state = state_of(circuit)
    # qiskit's qubit 0 is qubit 0 here, the most significant bit of the index
    assert abs(state[0b100]) == pytest.approx(1.0)
    np.testing.assert_allclose(state, qiskit_state(qc), atol=1e-12)  # equal, phase included
    assert circuit.to_qiskit().global_phase == pytest.approx(0.4)


def test_the_openqasm_corpus_against_known_answers():
    K = tq.get_backend("numpy")
    ghz = tq.Circuit.from_openqasm_file(CORPUS / "ghz5.qasm")
    probabilities = np.zeros(32)
    probabilities[[0, 31]] = 0.5
    np.testing.assert_allclose(K.to_numpy(ghz.probability()), probabilities, atol=1e-12)
    counts = ghz.sample(200, seed=1)
    assert set(counts) == {"00000", "11111"}
    qft = state_of(tq.Circuit.from_openqasm_file(CORPUS / "qft4.qasm"))
    np.testing.assert_allclose(qft, np.exp(2j * np.pi * np.arange(16) / 16) / 4, atol=1e-12)
    grover = tq.Circuit.from_openqasm_file(CORPUS / "grover2.qasm")
    np.testing.assert_allclose(K.to_numpy(grover.probability()), [0, 0, 0, 1], atol=1e-12)
    adder = tq.Circuit.from_openqasm_file(CORPUS / "adder.qasm")  # 1 + 1 + carry 1 = 0b11
    assert adder.sample(10, seed=0) == {"1111": 10}
    ansatz = tq.Circuit.from_openqasm_file(CORPUS / "ansatz.qasm", {"theta": 0.3, "phi": 0.7})
    operations = [("ry", (0,), (0.3,)), ("ry", (1,), (0.6,)), ("rz", (2,), (0.35,)), ("cx", (0, 1), ()),
                  ("cx", (1, 2), ()), ("rx", (0,), (1.0,)), ("crz", (2, 0), (-0.7,))]
    np.testing.assert_allclose(state_of(ansatz), reference_state(3, operations), atol=1e-12)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_a_converted_ansatz_is_differentiable(backend_name):
    from qiskit.circuit.library import efficient_su2

    ansatz = efficient_su2(3, reps=1)
    hamiltonian = tq.hamiltonians.tfim(3)
    values = np.random.default_rng(5).uniform(-1, 1, ansatz.num_parameters)

    def energy(params):
        return tq.Circuit.from_qiskit(ansatz, params).expectation(hamiltonian)

    with tq.use_backend("numpy"):
        reference = tq.value_and_grad(energy, method="finite-difference")(values)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        value, gradient = tq.value_and_grad(energy)(K.asarray(values))
    assert float(K.to_numpy(value)) == pytest.approx(float(reference[0]), abs=1e-10)
    np.testing.assert_allclose(K.to_numpy(gradient), reference[1], atol=1e-6)


def test_affine_angles_of_named_parameters():
    theta, phi = Parameter("theta"), Parameter("phi")
    qc = QuantumCircuit(2)
    qc.ry(2 * theta - 0.5, 0)
    qc.rzz(theta + 3 * phi, 0, 1)
    circuit = tq.Circuit.from_qiskit(qc, {"theta": 0.2, phi: 0.1})
    assert [float(op.params[0]) for op in circuit.operations] == pytest.approx([-0.1, 0.5])
    ordered = tq.Circuit.from_qiskit(qc, [0.1, 0.2])  # qc.parameters order: phi, theta
    assert [float(op.params[0]) for op in ordered.operations] == pytest.approx([-0.1, 0.5])


@pytest.mark.parametrize("text, message", [
    ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[1] q;\nbit[1] c;\nh q[0];\nc[0] = measure q[0];\n'
     'while (c[0]) {\n  x q[0];\n  c[0] = measure q[0];\n}\n',
     r"instruction 2 \(while_loop on qubits \[0\]\): a while loop \(while_loop\).*line 7"),
    ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[1];\nh q[0];\nmeasure q[0] -> c[0];\n'
     'if (c == 1) measure q[0] -> c[0];\n', r"a measurement \(measure\) inside an if body.*line 7"),
    ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[1];\nif (c == 0) reset q[0];\n',
     r"a reset \(reset\) inside an if body.*line 5"),
    ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nopaque magic a;\nh q[0];\nmagic q[0];\n',
     r"no gate 'magic'.*line 6"),
    ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nfoo q[0];\n', r"could not be parsed.*foo"),
    ('OPENQASM 4.0;\nqubit q;\n', r"OpenQASM 4 is not supported"),
    ("garbage !!", r"OpenQASM 3 could not be parsed: line 1:8 .*'garbage!'"),
    ("OPENQASM 3.0;\nqubit[2] q;\nh q[0]\n", r"could not be parsed: line 4:0: unexpected '<EOF>'"),
    ("", r"text holds no OpenQASM statements"),
    ("  // a comment only\n", r"text holds no OpenQASM statements"),
])
def test_what_cannot_be_simulated_is_refused_with_its_line(text, message):
    with pytest.raises(ValueError, match=message):
        tq.Circuit.from_openqasm(text)


def test_a_refusal_names_its_own_line_when_an_earlier_line_reads_alike():
    """Regression: lines were found by the statement's first word, so the ``if`` refused on line 8
    was reported at the first ``if`` (line 5); ``x q;`` makes one instruction per qubit."""
    text = ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[1];\nif (c == 0) x q;\nh q[0];\n'
            'if (c == 0) x q[0];\nif (c == 0) reset q[0];\nh q[0];\n')
    with pytest.raises(ValueError, match=r"instruction 4 \(if_else.*inside an if body.*OpenQASM line 8\)$"):
        tq.Circuit.from_openqasm(text)
    text = text.replace("if (c == 0) reset q[0];", "opaque magic a;\nmagic q[0];\nh q[0];\nmagic q[1];")
    with pytest.raises(ValueError, match=r"instruction 4 \(magic.*line 9\)$"):
        tq.Circuit.from_openqasm(text)


def test_a_version_2_program_without_its_header_is_read_as_version_2():
    """Qiskit's version-2 parser reads programs without an OPENQASM line; so does tyxonq."""
    from qiskit import qasm2

    text = 'include "qelib1.inc";\nqreg q[3];\ncreg c[3];\nh q[0];\ncx q[0],q[1];\nu3(0.3,0.2,0.1) q[2];\n'
    expected = qiskit_state(qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS))
    np.testing.assert_allclose(state_of(tq.Circuit.from_openqasm(text)), expected, atol=1e-12)
    assert openqasm_version(text) == 2
    assert openqasm_version("qubit[2] q;\nh q[0];\n") == 3  # no header and no version-2 marks: 3
    assert openqasm_version('include "stdgates.inc";\nqreg q[1];\n') == 3  # version 3's own include


def test_bad_conversions_name_what_is_wrong():
    theta = Parameter("theta")
    qc = QuantumCircuit(1)
    qc.rx(theta, 0)
    with pytest.raises(ValueError, match="free parameters"):
        tq.Circuit.from_qiskit(qc)
    with pytest.raises(ValueError, match="no value for parameter"):
        tq.Circuit.from_qiskit(qc, {"phi": 1.0})
    with pytest.raises(ValueError, match="1 parameters"):
        tq.Circuit.from_qiskit(qc, [0.1, 0.2])
    with pytest.raises(ValueError, match="no free parameters"):
        tq.Circuit.from_qiskit(QuantumCircuit(1), {"theta": 0.1})
    assert tq.Circuit.from_qiskit(QuantumCircuit(1), {}).num_qubits == 1
    with pytest.raises(ValueError, match="channel has no Qiskit gate"):
        tq.Circuit(1).h(0).depolarizing(0, p=0.1).to_qiskit()
    with pytest.raises(ValueError, match="version"):
        tq.Circuit(1).to_openqasm(version=4)
    with pytest.raises(TypeError, match="OpenQASM source"):
        tq.Circuit.from_openqasm(b"OPENQASM 2.0;")


def test_other_simulators_convert_too():
    qc = QuantumCircuit(4)
    qc.h(0)
    for q in range(3):
        qc.cx(q, q + 1)
    mps = tq.MPSCircuit.from_qiskit(qc, max_bond=4)
    np.testing.assert_allclose(state_of(mps), qiskit_state(qc), atol=1e-12)
    dm = tq.DMCircuit.from_openqasm(tq.Circuit.from_qiskit(qc).to_openqasm(3))
    with tq.use_backend("numpy"):
        assert float(dm.expectation_ps(z=[0, 3])) == pytest.approx(1.0)


def test_barriers_are_kept_as_markers():
    c = tq.Circuit(3).h(0).barrier().cx(0, 1).barrier(1, 2).x(2)
    assert c.gate_count() == 3 and "░" in c.draw()
    qc = c.to_qiskit()
    assert [i.operation.name for i in qc.data] == ["h", "barrier", "cx", "barrier", "x"]
    for again in (tq.Circuit.from_qiskit(qc), tq.Circuit.from_openqasm(c.to_openqasm()),
                  tq.Circuit.from_openqasm(c.to_openqasm(3))):
        assert again._barriers == [(1, (0, 1, 2)), (2, (1, 2))]
        np.testing.assert_allclose(state_of(again), state_of(c), atol=1e-12)
    assert "barrier q[1], q[2];" in c.to_openqasm()
    appended = tq.Circuit(4).x(3).append(c, qubits=[1, 2, 3])
    assert appended._barriers == [(2, (1, 2, 3)), (3, (2, 3))]
    assert c.inverse()._barriers == [] and c.copy()._barriers == c._barriers
