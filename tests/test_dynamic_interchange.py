"""Dynamic circuits in and out: mid-circuit measurement, reset and conditioned gates read from and
written to Qiskit and OpenQASM 2/3, round trips that keep the operations and the exact results,
samples of the classical register against Qiskit Aer's counts, and every refusal naming what and
where."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.circuit.interchange.classical import canonical, negated
from tyxonq.circuit.operations.operation import Condition

qiskit = pytest.importorskip("qiskit")
qiskit_aer = pytest.importorskip("qiskit_aer")
from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister, qasm2, qasm3  # noqa: E402
from qiskit.circuit.classical import expr  # noqa: E402

CORPUS = Path(__file__).parent / "qasm"
SHOTS = 20000
#: Two independent samples of ``SHOTS`` shots from one distribution over ``k`` outcomes differ in
#: total variation by ``E[TV] <= 1/2 sum_i sqrt(2 p_i (1 - p_i) / SHOTS) <= 1/2 sqrt(2 k / SHOTS)``,
#: 0.014 for the at most 8 outcomes of these circuits, with tails far below 0.05 (the seeds are
#: fixed: the test is deterministic; the bound says a correct simulator passes with any seeds).
TV_BOUND = 0.05


# -- helpers ----------------------------------------------------------------------------------
def exact(circuit) -> np.ndarray:
    """Probabilities of every basis state, then every one-qubit and neighbouring two-qubit Pauli
    expectation (averaged over the measurement outcomes)."""
    n = circuit.num_qubits
    strings = []
    for q in range(n):
        strings += ["I" * q + p + "I" * (n - q - 1) for p in "XYZ"]
    for q in range(n - 1):
        strings += ["I" * q + pair + "I" * (n - q - 2) for pair in ("XX", "ZZ", "XY")]
    with tq.use_backend("numpy"):
        return np.concatenate([np.asarray(circuit.probability()),
                               np.asarray(circuit.pauli_expectations(strings))])


def described(op) -> tuple:
    condition = canonical(op.condition) if op.condition is not None else None
    return op.gate, op.qubits, op.dagger, op.clbits, condition


def assert_same(got, expected) -> None:
    """The same operations (angles to 1e-12) and the same exact results (to 1e-10)."""
    assert [described(op) for op in got.operations] == [described(op) for op in expected.operations]
    for a, b in zip(got.operations, expected.operations):
        np.testing.assert_allclose([float(p) for p in a.params], [float(p) for p in b.params], atol=1e-12)
    assert got.num_clbits == expected.num_clbits
    np.testing.assert_allclose(exact(got), exact(expected), atol=1e-10)


def conditioned(circuit, condition: Condition):
    return circuit.cond(condition.bits, condition.value, parity=condition.kind == "parity",
                        negate=condition.kind == "differs")


def ours(circuit, seed: int = 11) -> dict[str, float]:
    counts = circuit.sample(SHOTS, seed=seed, final=False)
    return {key: count / SHOTS for key, count in counts.items()}


def aer_counts(qc: QuantumCircuit, shots: int = SHOTS, seed: int = 5) -> dict[str, int]:
    # Aer's truncation of qubits used only inside if_test blocks fails on such circuits
    # ("unordered_map::at", qiskit-aer 0.18): keep every qubit
    simulator = qiskit_aer.AerSimulator(enable_truncation=False)
    return simulator.run(qc, shots=shots, seed_simulator=seed).result().get_counts()


def aer(qc: QuantumCircuit, seed: int = 5) -> dict[str, float]:
    """Aer's counts as a distribution over tyxonq's keys: Aer lists registers last-declared first,
    separated by spaces, each with its bit 0 rightmost; tyxonq lists bit 0 first."""
    return {key.replace(" ", "")[::-1]: count / SHOTS for key, count in aer_counts(qc, seed=seed).items()}


def total_variation(p: dict, q: dict) -> float:
    return 0.5 * sum(abs(p.get(key, 0.0) - q.get(key, 0.0)) for key in set(p) | set(q))


def qiskit_reading(path: Path) -> QuantumCircuit:
    text = path.read_text()
    if text.find("OPENQASM 2") >= 0:
        return qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    return qasm3.loads(text)


# -- the corpus: teleportation, a repetition-code round, iterative phase estimation ----------------
@pytest.mark.parametrize("name, versions", [("teleport.qasm", (2, 3)), ("repetition.qasm", (2, 3)),
                                            ("ipe.qasm", (3,))])
def test_dynamic_programs_round_trip_and_sample_as_aer_does(name, versions):
    circuit = tq.Circuit.from_openqasm_file(CORPUS / name)
    assert circuit.is_dynamic()
    for version in versions:
        assert_same(tq.Circuit.from_openqasm(circuit.to_openqasm(version)), circuit)
    assert_same(tq.Circuit.from_qiskit(circuit.to_qiskit()), circuit)
    direct = qiskit_reading(CORPUS / name)
    assert_same(tq.Circuit.from_qiskit(direct), circuit)
    assert circuit.num_clbits == direct.num_clbits
    sampled = ours(circuit)
    assert total_variation(sampled, aer(direct)) < TV_BOUND
    assert total_variation(sampled, aer(circuit.to_qiskit(), seed=6)) < TV_BOUND
    dm = tq.DMCircuit.from_openqasm_file(CORPUS / name)
    np.testing.assert_allclose(exact(dm), exact(circuit), atol=1e-10)


def test_teleportation_moves_the_state_exactly():
    circuit = tq.Circuit.from_openqasm_file(CORPUS / "teleport.qasm")
    with tq.use_backend("numpy"):
        moved = np.asarray(circuit.pauli_expectations(["IIX", "IIY", "IIZ"]))
        source = np.asarray(tq.Circuit(1).ry(0, 0.7).rz(0, 0.3).pauli_expectations(["X", "Y", "Z"]))
    np.testing.assert_allclose(moved, source, atol=1e-12)
    assert set(circuit.sample(100, seed=2, final=False)) == {"00", "01", "10", "11"}


def test_a_corrected_repetition_code_measures_a_zero_syndrome_again():
    circuit = tq.Circuit.from_openqasm_file(CORPUS / "repetition.qasm")
    assert circuit.num_clbits == 7  # syn[2], again[2], out[3]: Qiskit's clbits in order
    counts = circuit.sample(2000, seed=3, final=False)
    assert {key[2:4] for key in counts} == {"00"}  # bits 2 and 3: again
    assert {key[:2] for key in counts} == {"00", "01", "10", "11"}  # every syndrome occurs
    assert {key[4:] for key in counts} == {"000", "111"}  # corrected to the code space


def test_ipe_is_refused_in_openqasm_2_with_a_pointer_to_version_3():
    circuit = tq.Circuit.from_openqasm_file(CORPUS / "ipe.qasm")
    with pytest.raises(ValueError, match=r"operation \d+ \(phase on qubits \[0\]\) is conditioned on "
                                         r"bits \(0, 1, 2\) == 3: OpenQASM 2 .*version=3"):
        circuit.to_openqasm(2)


# -- conditions and else branches written here ----------------------------------------------------
def prepared() -> tuple[tq.Circuit, tuple[int, int]]:
    """Two measured qubits with unequal outcome probabilities."""
    circuit = tq.Circuit(3).ry(0, 1.1).ry(1, 2.0).ry(2, 0.4)
    return circuit, circuit.measure(0, 1)


def register_else():
    c, bits = prepared()
    with c.cond(bits, value=2):
        c.rx(2, 0.9).rz(2, 0.2)
    with c.cond(bits, value=2, negate=True):
        c.ry(2, 1.3)
    return c


def bit_else():
    c, (b0, b1) = prepared()
    c.cond(b1).x(2)
    c.cond(b1, value=0).ry(2, 0.7)
    c.cond(b0, negate=True).h(2)  # a one-bit != is == the other value
    return c


def bare_inequality():
    c, bits = prepared()
    return c.cond(bits, value=1, negate=True).ry(2, 2.2)


def parity():
    c, bits = prepared()
    c.cond(bits, parity=True).x(2)
    return c.cond(bits, value=0, parity=True).ry(2, 0.5)


def reversed_bits():
    c, (b0, b1) = prepared()
    c.cond((b1, b0), value=1).x(2)  # b1 is the least significant bit here: no register holds it
    return c.cond((b1, b0), value=1, negate=True).ry(2, 0.3)


def overlapping():
    c, (b0, b1) = prepared()
    c.cond(b0).ry(2, 0.8)
    return c.cond((b0, b1), value=3).x(2)  # bit 0 alone and bits (0, 1): OpenQASM 3 only


@pytest.mark.parametrize("build, versions", [(register_else, (3,)), (bit_else, (2, 3)),
                                             (bare_inequality, (3,)), (parity, ()),
                                             (reversed_bits, ()), (overlapping, (3,))])
def test_written_conditions_read_back_and_sample_as_aer_does(build, versions):
    circuit = build()
    circuit.measure(2)
    assert_same(tq.Circuit.from_qiskit(circuit.to_qiskit()), circuit)
    for version in (2, 3):
        if version in versions:
            assert_same(tq.Circuit.from_openqasm(circuit.to_openqasm(version)), circuit)
        else:
            with pytest.raises(ValueError, match=r"operation \d+ \(\w+ on qubits \[2\]\) is conditioned on "
                                                 r".*(version=3|to_qiskit)"):
                circuit.to_openqasm(version)
    assert total_variation(ours(circuit), aer(circuit.to_qiskit())) < TV_BOUND


def test_an_else_is_written_as_one_if_statement():
    text = register_else().to_openqasm(3)
    assert "if (c == 2) {\n  rx(0.9) q[2];\n  rz(0.2) q[2];\n} else {\n  ry(1.3) q[2];\n}" in text
    assert "if (c[1]) {\n  x q[2];\n} else {\n  ry(0.7) q[2];\n}\nif (!c[0]) {\n  h q[2];\n}" in \
        bit_else().to_openqasm(3)
    assert "if (c == 1) {\n} else {\n  ry(2.2) q[2];\n}" in bare_inequality().to_openqasm(3)
    assert "if(c1==1) x q[2];\nif(c1==0) ry(0.7) q[2];\nif(c0==0) h q[2];" in bit_else().to_openqasm(2)
    qc = register_else().to_qiskit()
    assert [i.operation.name for i in qc.data] == ["ry", "ry", "ry", "measure", "measure", "if_else"]
    assert qc.data[-1].operation.blocks[1] is not None  # the else body


# -- reading what Qiskit builds ---------------------------------------------------------------------
def two_bits() -> tuple[QuantumCircuit, ClassicalRegister]:
    c = ClassicalRegister(2, "c")
    qc = QuantumCircuit(QuantumRegister(3, "q"), c)
    qc.ry(1.1, 0)
    qc.ry(2.0, 1)
    qc.measure([0, 1], [0, 1])
    return qc, c


@pytest.mark.parametrize("condition, bits, value, kind", [
    (lambda c: (c, 2), (0, 1), 2, "equals"),
    (lambda c: (c[1], True), (1,), 1, "equals"),
    (lambda c: expr.equal(c, 1), (0, 1), 1, "equals"),
    (lambda c: expr.not_equal(c, 1), (0, 1), 1, "differs"),
    (lambda c: expr.logic_not(c[0]), (0,), 0, "equals"),
    (lambda c: expr.not_equal(c[0], True), (0,), 0, "equals"),
    (lambda c: expr.logic_and(c[1], expr.logic_not(c[0])), (1, 0), 1, "equals"),
    (lambda c: expr.bit_xor(c[0], c[1]), (0, 1), 1, "parity"),
    (lambda c: expr.equal(expr.bit_xor(c[0], c[1]), False), (0, 1), 0, "parity"),
])
def test_qiskit_conditions_read_as_tyxonq_conditions(condition, bits, value, kind):
    qc, c = two_bits()
    with qc.if_test(condition(c)) as otherwise:
        qc.x(2)
    with otherwise:
        qc.h(2)
    circuit = tq.Circuit.from_qiskit(qc)
    expected = tq.Circuit(3).ry(0, 1.1).ry(1, 2.0)
    expected.measure(0, 1)
    held = Condition(bits, value, kind)
    conditioned(expected, held).x(2)
    conditioned(expected, negated(held)).h(2)  # the else body runs under the negation
    assert_same(circuit, expected)
    qc.measure(2, 0)  # the final readout into a bit Aer reports
    again = tq.Circuit.from_qiskit(qc)
    assert total_variation(ours(again), aer(qc)) < TV_BOUND


@pytest.mark.parametrize("condition, message", [
    (lambda c: expr.less(c, 2), r"the < operator \(LESS\)"),
    (lambda c: expr.logic_or(c[0], c[1]), r"the \|\| operator \(LOGIC_OR\)"),
    (lambda c: expr.equal(c[0], c[1]), r"comparing two classical expressions \(==\)"),
    (lambda c: expr.logic_not(expr.logic_and(c[0], expr.bit_xor(c[0], c[1]))), r"joined with &&"),
])
def test_unsupported_qiskit_conditions_name_their_operator(condition, message):
    qc, c = two_bits()
    with qc.if_test(condition(c)):
        qc.x(2)
    with pytest.raises(ValueError, match=r"instruction 4 \(if_else on qubits \[2\]\): .*" + message):
        tq.Circuit.from_qiskit(qc)


def test_control_flow_that_tyxonq_has_no_form_of_is_refused_naming_it():
    qc, c = two_bits()
    with qc.if_test((c[0], 1)):
        with qc.if_test((c[1], 1)):
            qc.x(2)
    with pytest.raises(ValueError, match=r"instruction 4 \(if_else .*an if statement \(if_else\) inside "
                                         r"an if body is not supported"):
        tq.Circuit.from_qiskit(qc)
    for build, construct in [
        (lambda qc, c: qc.measure(2, 0), r"a measurement \(measure\) inside an if body"),
        (lambda qc, c: qc.reset(2), r"a reset \(reset\) inside an if body"),
    ]:
        qc, c = two_bits()
        with qc.if_test((c, 3)):
            build(qc, c)
        with pytest.raises(ValueError, match=construct):
            tq.Circuit.from_qiskit(qc)
    qc, c = two_bits()
    with qc.while_loop((c[0], 1)):
        qc.x(0)
        qc.measure(0, 0)
    with pytest.raises(ValueError, match=r"instruction 4 \(while_loop on qubits \[0\]\): a while loop "
                                         r"\(while_loop\) is not supported"):
        tq.Circuit.from_qiskit(qc)
    qc, c = two_bits()
    with qc.for_loop(range(3)):
        qc.x(2)
    with pytest.raises(ValueError, match=r"a for loop \(for_loop\)"):
        tq.Circuit.from_qiskit(qc)
    qc, c = two_bits()
    with qc.switch(c) as case:
        with case(0):
            qc.x(2)
    with pytest.raises(ValueError, match=r"a switch statement \(switch_case\)"):
        tq.Circuit.from_qiskit(qc)


def test_an_old_style_c_if_condition_is_read():
    """Qiskit < 2 conditions an instruction with ``c_if`` (its ``condition`` attribute); Qiskit 2
    removed it, so there a gate carries the attribute by hand."""
    from qiskit.circuit import Gate

    qc, c = two_bits()
    flip = Gate("flip", 1, [])
    definition = QuantumCircuit(1)
    definition.x(0)
    flip.definition = definition
    conditioned = flip.c_if(c, 2) if hasattr(flip, "c_if") else flip
    conditioned.condition = (c, 2)
    qc.append(conditioned, [2])
    measured = Gate("measure", 1, [])  # a conditioned measurement is refused
    measured.condition = (c[0], 1)
    circuit = tq.Circuit.from_qiskit(qc)
    assert described(circuit.operations[-1]) == ("x", (2,), False, (), Condition((0, 1), 2))
    qc.append(measured, [2])
    with pytest.raises(ValueError, match=r"instruction 5 \(measure .*a conditioned measurement \(c_if\)"):
        tq.Circuit.from_qiskit(qc)


def test_a_box_is_read_as_its_instructions():
    if not hasattr(QuantumCircuit, "box"):
        pytest.skip("this Qiskit has no box")
    qc = QuantumCircuit(2)
    with qc.box():
        qc.h(0)
        qc.cx(0, 1)
    assert [op.gate for op in tq.Circuit.from_qiskit(qc).operations] == ["h", "cx"]


# -- final measurements, bit order ----------------------------------------------------------------
def test_final_measurements_stand_for_sampling_unless_the_circuit_is_dynamic():
    qc = QuantumCircuit(2, 3)
    qc.h(0)
    qc.cx(0, 1)
    qc.measure([0, 1], [0, 1])
    plain = tq.Circuit.from_qiskit(qc)  # as before: the measurements are the sampling
    assert [op.gate for op in plain.operations] == ["h", "cx"] and not plain.is_dynamic()
    assert plain.state().shape == (4,)
    kept = tq.Circuit.from_qiskit(qc, measurements="keep")
    assert [op.gate for op in kept.operations] == ["h", "cx", "measure", "measure"]
    assert kept.num_clbits == 3  # every clbit of qc, the unused last one too
    np.testing.assert_allclose(exact(kept)[:4], exact(plain)[:4], atol=1e-12)  # probabilities
    with pytest.raises(ValueError, match="mixed"):
        kept.state()
    assert total_variation(ours(kept), aer(qc)) < TV_BOUND
    qc.reset(1)  # now dynamic: every measurement is kept, final ones too
    dynamic = tq.Circuit.from_qiskit(qc)
    assert [op.gate for op in dynamic.operations] == ["h", "cx", "measure", "measure", "reset"]
    with pytest.raises(ValueError, match="measurements='bogus'"):
        tq.Circuit.from_qiskit(qc, measurements="bogus")


def test_a_circuit_whose_only_dynamic_operations_are_final_measurements_needs_keep_to_read_back():
    circuit = tq.Circuit(2).h(0).cx(0, 1)
    circuit.measure(0, 1)
    text = circuit.to_openqasm(3)
    assert "c[1] = measure q[1];" in text
    assert not tq.Circuit.from_openqasm(text).is_dynamic()  # read as sampling, as programs are
    assert_same(tq.Circuit.from_openqasm(text, measurements="keep"), circuit)
    assert_same(tq.Circuit.from_qiskit(circuit.to_qiskit(), measurements="keep"), circuit)


def test_classical_bits_keep_qiskits_numbering_across_registers():
    text = ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[3];\ncreg a[1];\ncreg b[2];\nx q[0];\nx q[1];\n'
            'measure q[0] -> a[0];\nmeasure q[1] -> b[0];\nmeasure q[2] -> b[1];\nreset q[0];\n')
    circuit = tq.Circuit.from_openqasm(text)
    assert [op.clbits for op in circuit.operations if op.gate == "measure"] == [(0,), (1,), (2,)]
    assert circuit.sample(50, seed=1, final=False) == {"110": 50}  # a0 = 1, b0 = 1, b1 = 0
    qc = qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    assert aer_counts(qc, shots=50) == {"01 1": 50}  # b1 b0, then a0: bit 0 last
    assert circuit.sample(50, seed=1) == {"110 010": 50}  # the bits, then the final qubits


# -- refusals ----------------------------------------------------------------------------------------
def test_what_has_no_form_is_refused_with_what_and_where():
    c = tq.Circuit(2).h(0).post_select(0, 1).x(1)
    with pytest.raises(ValueError, match=r"operation 1 \(post_select on qubit 0\): Qiskit has no "
                                         r"post-selection; measure the qubit instead .* bit is 1"):
        c.to_qiskit()
    with pytest.raises(ValueError, match=r"operation 1 \(post_select on qubit 0\): OpenQASM has no post"):
        c.to_openqasm(3)
    c, bits = prepared()
    c.cond(bits, value=1, negate=True).x(2)
    with pytest.raises(ValueError, match=r"operation 5 \(x on qubits \[2\]\) is conditioned on bits \(0, 1\) "
                                         r"!= 1: OpenQASM 2 has no != and no else; write version=3"):
        c.to_openqasm(2)


@pytest.mark.parametrize("text, message", [
    ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[2] q;\nbit[2] c;\nh q[0];\nc[0] = measure q[0];\n'
     'if (c[0]) {\n  x q[1];\n}\nwhile (c[0]) {\n  x q[0];\n  c[0] = measure q[0];\n}\n',
     r"instruction 3 \(while_loop on qubits \[0\]\): a while loop \(while_loop\) is not supported.*"
     r"\(OpenQASM line 10\)"),
    ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[2] q;\nbit[2] c;\nc[0] = measure q[0];\n'
     'if (c[0]) {\n  x q[1];\n}\nif (c[0]) {\n  if (c[1]) {\n    x q[1];\n  }\n}\n',
     r"instruction 2 \(if_else.*an if statement \(if_else\) inside an if body.*\(OpenQASM line 9\)"),
    ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[2] q;\nbit[2] c;\nfor int i in [0:2] {\n  x q[0];\n}\n',
     r"a for loop \(for_loop\).*\(OpenQASM line 5\)"),
    ('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[2];\nif (c[0] == 1) x q[0];\n',
     r"OpenQASM 2 could not be parsed: .*<input>:5,5: needed '==', but instead saw \[.*OpenQASM 2 "
     r"conditions compare a whole creg: if \(c == k\); version 3 tests a bit"),
])
def test_refused_programs_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        tq.Circuit.from_openqasm(text)
