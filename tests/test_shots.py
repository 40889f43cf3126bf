"""Finite shots, readout error, mitigation and noise models: seeded, with bounds of several
standard errors, against exact values."""

from __future__ import annotations

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend
from tyxonq.circuit.shots import commuting_groups

CONFUSION = [[0.95, 0.1], [0.05, 0.9]]


def noisy_ansatz(n: int = 4) -> tq.DMCircuit:
    c = tq.DMCircuit(n)
    for q in range(n):
        c.ry(q, 0.3 + 0.4 * q).depolarizing(q, p=0.05)
    for q in range(n - 1):
        c.cx(q, q + 1).amplitude_damping(q + 1, gamma=0.1)
    return c.rx(0, 0.7).sx(n - 1)


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "jax"])
def test_shot_estimates_are_within_four_standard_errors_and_reproducible(backend_name):
    K = make_backend(backend_name)
    with tq.use_backend(K):
        c = noisy_ansatz()
        for pauli in ({"x": [0], "z": [2]}, {"y": [1, 3]}, {"z": [0, 1, 2, 3]}):
            exact = float(K.to_numpy(c.expectation_ps(**pauli)))
            value, error = c.sample_expectation_ps(**pauli, shots=4000, seed=11, return_std=True)
            assert abs(value - exact) < 4 * error + 1e-12, (pauli, value, exact, error)
            assert c.sample_expectation_ps(**pauli, shots=4000, seed=11) == value
        hamiltonian = tq.hamiltonians.tfim(4)
        exact = float(K.to_numpy(hamiltonian.expectation(c)))
        value, error = hamiltonian.expectation(c, shots=4000, seed=3, return_std=True)
        assert abs(value - exact) < 4 * error
        assert 0 < error < 0.2


def test_shots_on_a_wide_circuit_sample_only_the_light_cone():
    c = tq.Circuit(40)
    for q in range(40):
        c.ry(q, 0.1 * q)
    for q in range(39):
        c.cz(q, q + 1)
    exact = float(c.expectation_ps(x=[20], z=[21]))
    value, error = c.sample_expectation_ps(x=[20], z=[21], shots=5000, seed=1, return_std=True)
    assert abs(value - exact) < 4 * error


def test_commuting_groups_are_qubit_wise_commuting_and_cover_every_term():
    strings = ["ZZII", "IZZI", "XIII", "XIXI", "ZIIZ", "YYII", "IIIY", "IIII"]
    groups = commuting_groups(strings)
    assert sorted(i for g in groups for i in g) == list(range(len(strings)))
    for group in groups:
        for q in range(4):
            assert len({strings[i][q] for i in group} - {"I"}) <= 1
    assert len(groups) == 3


def test_readout_error_reads_through_the_confusion_matrix():
    shots = 20000
    counts = tq.Circuit(2).x(0).sample(shots, seed=4, readout_error=CONFUSION)
    # true outcome 10: P(read r0 r1) = C[r0, 1] C[r1, 0]
    for bits, count in counts.items():
        expected = CONFUSION[int(bits[0])][1] * CONFUSION[int(bits[1])][0]
        assert abs(count / shots - expected) < 4 * np.sqrt(expected * (1 - expected) / shots)
    exact = -1.0  # <Z0> of |1>
    value = tq.Circuit(1).x(0).sample_expectation_ps(z=[0], shots=shots, seed=2, readout_error=CONFUSION)
    read = exact * (0.9 - 0.1)  # P(read 1 | 1) - P(read 0 | 1), with sign
    assert abs(value - read) < 4 * np.sqrt(1 / shots)


@pytest.mark.parametrize("method", ["inverse", "least_squares"])
def test_mitigation_recovers_the_ideal_distribution(method):
    shots = 50000
    c = tq.Circuit(2).h(0).cx(0, 1)
    counts = c.sample(shots, seed=9, readout_error=CONFUSION)
    assert counts.get("01", 0) > 0.02 * shots  # misreads are visible before mitigation
    mitigated = tq.mitigation.readout(counts, CONFUSION, method=method)
    assert abs(sum(mitigated.values()) - 1.0) < 1e-12 and min(mitigated.values()) >= 0
    bound = 4 * np.sqrt(0.25 / shots) * 3  # the inverse amplifies the sampling error
    for bits, ideal in {"00": 0.5, "11": 0.5, "01": 0.0, "10": 0.0}.items():
        assert abs(mitigated.get(bits, 0.0) - ideal) < bound, (bits, mitigated)


def test_mitigation_and_readout_reject_bad_input():
    with pytest.raises(ValueError, match="columns sum to"):
        tq.Circuit(1).sample(10, readout_error=[[0.9, 0.9], [0.2, 0.1]])
    with pytest.raises(ValueError, match="2 x 2"):
        tq.mitigation.readout({"0": 3}, np.eye(4))
    with pytest.raises(ValueError, match="singular"):
        tq.mitigation.readout({"0": 3}, [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="one length"):
        tq.mitigation.readout({"0": 3, "01": 2}, CONFUSION)
    with pytest.raises(ValueError, match="method="):
        tq.mitigation.readout({"0": 3}, CONFUSION, method="magic")
    with pytest.raises(ValueError, match="shots=0"):
        tq.Circuit(1).sample_expectation_ps(z=[0], shots=0)


def test_noise_models_attach_channels_and_readout():
    model = (tq.NoiseModel()
             .add(tq.channels.depolarizing(0.1), gates="1q")
             .add(tq.channels.depolarizing(0.05, num_qubits=2), gates=["cnot"])
             .add(tq.channels.amplitude_damping(0.2), gates=["cz"], qubits=[1, 2])
             .add_readout_error(CONFUSION, qubits=[0]))
    c = tq.Circuit(3).h(0).cx(0, 1).cz(1, 2).cz(0, 1).rx(2, 0.3)
    noisy = c.with_noise(model)
    manual = (tq.DMCircuit(3).h(0).depolarizing(0, p=0.1).cx(0, 1).depolarizing(0, 1, p=0.05)
              .cz(1, 2).amplitude_damping(1, gamma=0.2).amplitude_damping(2, gamma=0.2)
              .cz(0, 1).rx(2, 0.3).depolarizing(2, p=0.1))
    np.testing.assert_allclose(noisy.state(), manual.state(), atol=1e-12)
    assert noisy._readout[0] is not None and noisy._readout[1] is None
    counts = tq.Circuit(1).x(0).with_noise(tq.NoiseModel().add_readout_error(CONFUSION)).sample(
        20000, seed=1)
    assert abs(counts["0"] / 20000 - 0.1) < 4 * np.sqrt(0.09 / 20000)
    with pytest.raises(ValueError, match="unknown gate"):
        tq.NoiseModel().add(tq.channels.bit_flip(0.1), gates=["nope"])
    with pytest.raises(ValueError, match="gates="):
        tq.NoiseModel().add(tq.channels.bit_flip(0.1), gates="3q")
    with pytest.raises(ValueError, match="cannot follow"):
        tq.Circuit(1).h(0).with_noise(tq.NoiseModel().add(tq.channels.depolarizing(0.1, num_qubits=2)))
    with pytest.raises(ValueError, match="columns sum"):
        tq.NoiseModel().add_readout_error([[0.5, 0.5], [0.6, 0.5]])
