"""Composition and inspection on every simulator: append / prepend on chosen qubits against the
circuit built directly, gate counts, depth, parameter counts, and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from test_circuit import add_operations, random_circuits

SIMULATORS = [tq.Circuit, tq.DMCircuit, tq.MPSCircuit]


def state_of(circuit) -> np.ndarray:
    with tq.use_backend("numpy"):
        return np.asarray(circuit.state())


@settings(max_examples=25, deadline=None)
@given(first=random_circuits(max_qubits=4, max_gates=6), second=random_circuits(max_qubits=4, max_gates=6),
       data=st.data())
def test_append_and_prepend_place_the_other_circuit_on_the_chosen_qubits(first, second, data):
    (n, ops), (m, other_ops) = first, second
    n = max(n, m)
    qubits = data.draw(st.permutations(range(n)))[:m]
    placed = [(gate, tuple(qubits[q] for q in on), params) for gate, on, params in other_ops]
    for cls in SIMULATORS:
        other = add_operations(cls(m), other_ops)
        appended = add_operations(cls(n), ops).append(other, qubits=qubits)
        expected = add_operations(cls(n), ops + placed)
        np.testing.assert_allclose(state_of(appended), state_of(expected), atol=1e-10)
        prepended = add_operations(cls(n), ops).prepend(other, qubits=qubits)
        np.testing.assert_allclose(state_of(prepended), state_of(add_operations(cls(n), placed + ops)),
                                   atol=1e-10)


def test_an_mps_continues_or_restarts_after_composition():
    mps = tq.MPSCircuit(3).h(0).cx(0, 1)
    before = state_of(mps)
    mps.append(tq.Circuit(1).x(0), qubits=[2])  # continues from the cached state
    np.testing.assert_allclose(state_of(mps), np.kron(before.reshape(4, 2)[:, 0], [0, 1]), atol=1e-12)
    mps.prepend(tq.Circuit(1).x(0))  # changes the start: simulated again
    np.testing.assert_allclose(state_of(mps), state_of(tq.Circuit(3).x(0).h(0).cx(0, 1).x(2)), atol=1e-12)


def test_appending_noise_makes_exact_pure_results_refuse():
    noisy = tq.Circuit(1).depolarizing(0, p=0.1)
    circuit = tq.Circuit(2).h(0).append(noisy, qubits=[1])
    with pytest.raises(tq.circuit.NoisyCircuitError):
        circuit.state()
    assert circuit.gate_count("depolarizing") == 1


def test_counts_depth_and_parameters():
    c = tq.Circuit(3).h(0).h(1).cx(0, 1).x(2).cx(1, 2).rzz(0, 2, theta=0.3).u(1, 0.1, 0.2, 0.3).gphase(2, 0.5)
    assert c.gate_count() == 8
    assert c.gate_count("cnot") == 2 and c.gate_count({"h", "x"}) == 3 and c.gate_count("ry") == 0
    assert c.depth() == 4  # h h | cx x | cx | rzz, u (the phase takes no layer)
    assert c.num_parameters == 5
    assert tq.Circuit(4).depth() == 0 and tq.Circuit(4).num_parameters == 0


def test_bad_compositions_name_what_is_wrong():
    with pytest.raises(ValueError, match="does not fit on 2 qubits"):
        tq.Circuit(2).append(tq.Circuit(3))
    with pytest.raises(ValueError, match="one qubit for each"):
        tq.Circuit(3).append(tq.Circuit(2), qubits=[0])
    with pytest.raises(ValueError, match="repeat a qubit"):
        tq.Circuit(3).append(tq.Circuit(2), qubits=[1, 1])
    with pytest.raises(ValueError, match="out of range"):
        tq.Circuit(3).prepend(tq.Circuit(1), qubits=[5])
    with pytest.raises(ValueError, match="inputs="):
        tq.Circuit(2).append(tq.Circuit(1, inputs=np.array([0, 1.0])))
    with pytest.raises(TypeError, match="must be a circuit"):
        tq.Circuit(2).append("h 0")


def test_wide_long_circuits_draw_in_folded_blocks():
    c = tq.templates.brickwork(24, np.linspace(0, 1, 24 * 12), 12)  # 24 qubits, 426 operations
    text = str(c)
    blocks = text.split("\n\n")
    assert len(blocks) > 2 and all(len(block.splitlines()) == 24 for block in blocks)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert blocks[0].splitlines()[0].endswith("»") and blocks[1].splitlines()[0].startswith("q0:  «")
    assert text.count("RY(") == 24 * 12
    assert max(len(line) for line in c.draw(width=60).splitlines()) <= 60
