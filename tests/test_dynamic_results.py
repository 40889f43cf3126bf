"""Dynamic circuits' results through the one interface: terminal measurements drawn with the final
qubits, wide programs conditioned on whole registers sampled from MPS branches, impossible and
improbable post-selections refused clearly, and a mixed state's pure-state results refused by one
exception on every simulator."""

from __future__ import annotations

import numpy as np
import pytest

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from tyxonq.circuit.dynamic import DynamicResults, terminal_measurements
from tyxonq.circuit.mps.branches import MPSBranches


def counterfeit_coin(n: int, false_coin: int) -> str:
    """The counterfeit-coin program of QASMBench (``large/cc_n151``) for ``n - 1`` coins: gates
    conditioned on the value of the whole ``n``-bit register."""
    k = n - 1
    lines = ["OPENQASM 2.0;", 'include "qelib1.inc";', f"qreg q0[{n}];", f"creg c0[{n}];"]
    lines += [f"h q0[{i}];" for i in range(k)]
    lines += [f"cx q0[{i}],q0[{k}];" for i in range(k)]
    lines += [f"measure q0[{k}] -> c0[{k}];", f"if(c0==0) x q0[{k}];", f"if(c0==0) h q0[{k}];"]
    lines += [f"if(c0=={2 ** k}) h q0[{i}];" for i in range(k)]
    barrier = "barrier " + ",".join(f"q0[{i}]" for i in range(n)) + ";"
    lines += [barrier, f"if(c0==0) cx q0[{false_coin}],q0[{k}];", barrier]
    lines += [f"if(c0==0) h q0[{i}];" for i in range(k)]
    lines += [f"measure q0[{i}] -> c0[{i}];" for i in range(k)]
    return "\n".join(lines) + "\n"


def counterfeit_coin_distribution(n: int, false_coin: int) -> dict[str, float]:
    """Measuring the parity ancilla gives 1 (then every coin reads 0 or every coin 1) or 0 (then
    the coins read the false coin's one-hot word or its complement, the ancilla either way)."""
    k = n - 1
    one_hot = "".join("1" if i == false_coin else "0" for i in range(k))
    complement = "".join("0" if bit == "1" else "1" for bit in one_hot)
    found = {}
    for word in ("0" * k, "1" * k):
        found[f"{word}1 {word}1"] = 0.25
    for word in (one_hot, complement):
        for ancilla in "01":
            found[f"{word}0 {word}{ancilla}"] = 0.125
    return found


def test_a_151_qubit_program_conditioned_on_its_whole_register_samples_from_mps_branches():
    """QASMBench's counterfeit coin on 151 qubits: its deferred-measurement circuit found no
    route in two minutes; its MPS branches (two, with bonds of 2) sample it in seconds."""
    n, false_coin, shots = 151, 49, 4000
    c = tq.Circuit.from_openqasm(counterfeit_coin(n, false_coin))
    assert c.num_clbits == n and any(op.condition is not None and len(op.condition.bits) == n
                                     for op in c.operations)
    assert tq.rehearse(c.sample, shots, seed=1).routes == ("mps-branches",)
    counts = c.sample(shots, seed=1)
    expected = counterfeit_coin_distribution(n, false_coin)
    assert set(counts) <= set(expected)
    for key, p in expected.items():
        assert abs(counts.get(key, 0) / shots - p) <= 5 * np.sqrt(p * (1 - p) / shots), (key, counts.get(key))


def test_the_counterfeit_coin_matches_its_distribution_on_the_state_vector_branches_too():
    n, false_coin, shots = 9, 3, 4000
    c = tq.Circuit.from_openqasm(counterfeit_coin(n, false_coin))
    assert tq.rehearse(c.sample, shots, seed=2).routes == ("branches",)
    counts = c.sample(shots, seed=2)
    expected = counterfeit_coin_distribution(n, false_coin)
    assert set(counts) <= set(expected)
    for key, p in expected.items():
        assert abs(counts.get(key, 0) / shots - p) <= 5 * np.sqrt(p * (1 - p) / shots)


def test_terminal_measurements_are_those_whose_bit_is_their_qubits_final_value():
    c = tq.Circuit(3).h(0)
    first = c.measure(0)
    c.cond(first).x(1)
    c.measure(1, into=2)      # terminal: nothing follows on qubit 1, bit 2 is not read after
    again = c.measure(0)      # qubit 0 measured again: the first is no longer terminal
    c.measure(2, into=first)  # writes bit 0 again, but bit 0 was read by the condition before
    core, terminal = terminal_measurements(c.operations)
    assert terminal == [(1, 2), (0, again), (2, first)]
    assert [op.gate for op in core] == ["h", "measure", "x"] and core[2].condition is not None
    # a measurement whose bit a later condition reads, or whose qubit a later gate touches, stays
    c = tq.Circuit(2).h(0)
    bit = c.measure(0)
    c.cond(bit).x(1).h(0)
    core, terminal = terminal_measurements(c.operations)
    assert terminal == [] and len(core) == len(c.operations)


@pytest.mark.parametrize("kind", [tq.Circuit, tq.DMCircuit, tq.MPSCircuit])
def test_terminal_measurements_sample_as_the_branches_do(kind):
    """The same distribution whether the last measurements branch or are read from the final
    qubits: a Bell pair measured twice, one bit conditioning a flip before the last read."""
    shots = 4000
    c = kind(3).h(0).cx(0, 1)
    bit = c.measure(0)
    c.cond(bit).x(2)
    c.measure(1)
    c.measure(2)
    counts = c.sample(shots, seed=5)
    assert set(counts) == {"000 000", "111 111"}
    assert abs(counts["000 000"] / shots - 0.5) < 5 * 0.5 / np.sqrt(shots)
    bits = c.sample(10, seed=5, format="bits", final=False)
    assert tuple(tq.get_backend().shape(bits)) == (10, 3)


@pytest.mark.parametrize("backend_id", jax_in_matrix(["numpy", "pytorch", "jax"]))
@pytest.mark.parametrize("kind", [tq.Circuit, tq.DMCircuit, tq.MPSCircuit])
def test_an_impossible_post_selection_is_refused_by_every_result(kind, backend_id):
    """Post-selecting an outcome of probability 0 leaves every conditioned result undefined: the
    same ValueError everywhere (before: NaN on Circuit and DMCircuit, another error on MPS)."""
    K = make_backend(backend_id)
    with tq.use_backend(K):
        c = kind(2).h(0).post_select(1, 1)
        assert float(c.acceptance()) == 0.0
        calls = [lambda: c.expectation_ps(z=[0]), lambda: c.marginal_probability([0]), c.probability,
                 lambda: c.reduced_density_matrix([0]), lambda: c.sample(10, seed=1),
                 lambda: c.pauli_expectations(["ZI", "XX"])]
        if kind is not tq.DMCircuit:
            calls += [c.state, lambda: c.amplitude("00")]
        for call in calls:
            with pytest.raises(ValueError, match="post-selections succeed with probability 0"):
                call()


def test_an_impossible_post_selection_is_refused_under_exact_gradients():
    """value_and_grad on NumPy traces the angles: the same refusal, not a ZeroDivisionError."""
    def energy(theta):
        return tq.Circuit(2).ry(0, theta[0]).post_select(1, 1).expectation_ps(z=[0])

    with pytest.raises(ValueError, match="post-selections succeed with probability 0"):
        tq.value_and_grad(energy)(np.array([0.3]))


def test_sampling_a_rare_post_selection_is_refused_before_drawing():
    """26 qubits, a post-selection kept once in 10^5 shots: the trials it would take are refused at
    once (before: 36 s and 1.2 GB for 1000 shots, no end at 10^-6), naming the exact results."""
    angle = 2 * np.arcsin(np.sqrt(1e-5))
    rare = tq.Circuit(26).ry(25, angle).post_select(25, 1)
    assert abs(float(rare.acceptance()) - 1e-5) < 1e-12
    with pytest.raises(ValueError, match="keep a shot with probability 1e-05.*exact conditioned results"):
        rare.sample(1000, seed=1)
    assert rare.sample(10, seed=1, format="bits").shape == (10, 26)


@pytest.mark.parametrize("kind", [tq.Circuit, tq.DMCircuit, tq.MPSCircuit])
def test_a_mixed_state_refuses_pure_results_with_one_exception(kind):
    c = kind(2).h(0)
    c.measure(0)
    c.cx(0, 1)
    if kind is not tq.DMCircuit:
        with pytest.raises(tq.MixedStateError, match="to_density_matrix"):
            c.state()
        with pytest.raises(tq.MixedStateError):
            c.amplitude("00")
    with pytest.raises(tq.UnsupportedResult, match="not a unitary"):
        c.matrix()
    np.testing.assert_allclose(tq.get_backend().to_numpy(c.probability()), [0.5, 0, 0, 0.5], atol=1e-12)


def test_every_simulator_answers_dynamic_circuits_through_the_one_interface():
    """The dynamic results of each simulator are a DynamicResults (an abstract interface with
    the shared answers): deferred measurement, MPS branches, the stabilizer's own."""
    for kind in (tq.Circuit, tq.DMCircuit, tq.MPSCircuit, tq.StabilizerCircuit):
        c = kind(1).h(0)
        c.measure(0)
        results = c._dynamic_results()
        assert isinstance(results, DynamicResults), kind
    assert isinstance(tq.MPSCircuit(1)._dynamic_results(), MPSBranches)
    with pytest.raises(TypeError):
        DynamicResults(tq.Circuit(1))  # abstract: each kind answers the questions it declares
