"""Compiled results (``circuit.compile``): planned once, called with new angles; every result
equals the plain call on ``with_parameters`` and a dense reference, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import pauli_matrix as pauli
from reference import reference_expectation, reference_matrix, reference_state


def random_circuit(rng: np.random.Generator, n: int, depth: int) -> tq.Circuit:
    """Rotations of several kinds (one with two angles), CZ and CNOT, a daggered gate."""
    c = tq.Circuit(n)
    for layer in range(depth):
        for q in range(n):
            kind = ("rx", "ry", "rz")[(q + layer) % 3]
            getattr(c, kind)(q, theta=float(rng.uniform(0, np.pi)))
        for q in range(layer % 2, n - 1, 2):
            c.cz(q, q + 1) if layer % 3 else c.cx(q, q + 1)
    c.u(0, theta=0.3, phi=0.2, lam=0.1)
    c.s(n - 1).sdg(n - 1).rzz(0, n - 1, theta=0.4)
    c.append(tq.Circuit(n).crx(0, n - 1, theta=0.6).inverse())  # a daggered kind of its own
    return c


def reference_values(c: tq.Circuit, angles: np.ndarray):
    moved = c.with_parameters(angles)
    return reference_state(c.num_qubits, [
        ("unitary", op.qubits, (reference_matrix(op.gate, op.params).conj().T,)) if op.dagger
        else (op.gate, op.qubits, op.params) for op in moved.operations])


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
def test_compiled_results_equal_the_plain_calls_and_the_reference(backend_name):
    K = make_backend(backend_name)
    rng = np.random.default_rng(3)
    c = random_circuit(rng, 6, 4)
    count = len(c.parameters())
    with tq.use_backend(K):
        compiled = {
            "z": c.compile("expectation_ps", z=[2]),
            "xz": c.compile("expectation_ps", x=[1], z=[4]),
            "amplitude": c.compile("amplitude", "010110"),
            "marginal": c.compile("marginal_probability", [0, 3]),
        }
        assert all(f.direct for f in compiled.values())
        for _ in range(3):
            angles = rng.uniform(-np.pi, np.pi, count)
            state = reference_values(c, angles)
            expected = {
                "z": reference_expectation(state, [(pauli("Z"), (2,))], 6).real,
                "xz": reference_expectation(state, [(pauli("X"), (1,)), (pauli("Z"), (4,))], 6).real,
                "amplitude": state[int("010110", 2)],
                "marginal": (np.abs(state.reshape([2] * 6)) ** 2).sum(axis=(1, 2, 4, 5)).reshape(-1),
            }
            plain = c.with_parameters(angles)
            same = {"z": plain.expectation_ps(z=[2]), "xz": plain.expectation_ps(x=[1], z=[4]),
                    "amplitude": plain.amplitude("010110"), "marginal": plain.marginal_probability([0, 3])}
            for name, f in compiled.items():
                got = np.asarray(K.to_numpy(f(angles)))
                np.testing.assert_allclose(got, expected[name], atol=1e-10, err_msg=name)
                np.testing.assert_allclose(got, np.asarray(K.to_numpy(same[name])), atol=1e-12, err_msg=name)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 16), n=st.integers(2, 6), depth=st.integers(1, 4), qubit=st.integers(0, 5))
def test_compiled_expectations_match_the_reference_on_random_circuits(seed, n, depth, qubit):
    rng = np.random.default_rng(seed)
    c = random_circuit(rng, n, depth)
    qubit = qubit % n
    with tq.use_backend("numpy"):
        f = c.compile("expectation_ps", y=[qubit])
        angles = rng.uniform(-np.pi, np.pi, len(c.parameters()))
        expected = reference_expectation(reference_values(c, angles), [(pauli("Y"), (qubit,))], n).real
        np.testing.assert_allclose(float(f(angles)), expected, atol=1e-10)


def test_results_that_are_not_one_contraction_are_the_plain_call():
    """A state (a sweep for few qubits), samples and a Pauli sum compile to the plain call on
    new angles: the same results, ``direct`` false."""
    c = random_circuit(np.random.default_rng(5), 4, 3)
    angles = np.random.default_rng(6).uniform(0, 1, len(c.parameters()))
    with tq.use_backend("numpy"):
        state = c.compile("state")
        assert not state.direct
        np.testing.assert_allclose(state(angles), reference_values(c, angles), atol=1e-12)
        energy = c.compile("expectation", tq.hamiltonians.tfim(4))
        assert not energy.direct
        plain = c.with_parameters(angles).expectation(tq.hamiltonians.tfim(4))
        np.testing.assert_allclose(energy(angles), plain, atol=1e-12)
        samples = c.compile("sample", shots=64, seed=4, format="counts")
        assert samples(angles) == c.with_parameters(angles).sample(shots=64, seed=4, format="counts")


def test_single_precision_compiles_directly():
    c = random_circuit(np.random.default_rng(12), 5, 3)
    angles = np.random.default_rng(13).uniform(0, 1, len(c.parameters()))
    with tq.use_backend(make_backend("numpy", dtype="complex64")):
        f = c.compile("expectation_ps", z=[1])
        assert f.direct
        np.testing.assert_allclose(float(f(angles)), float(c.with_parameters(angles).expectation_ps(z=[1])),
                                   atol=1e-5)
    expected = reference_expectation(reference_values(c, angles), [(pauli("Z"), (1,))], 5).real
    np.testing.assert_allclose(float(f(angles)), expected, atol=1e-5)


def test_a_compiled_result_keeps_the_circuit_it_was_made_from():
    c = tq.Circuit(3).ry(0, theta=0.2).cx(0, 1).ry(2, theta=0.5)
    f = c.compile("expectation_ps", z=[1])
    before = float(f(np.array([0.7, 0.1])))
    c.x(1)  # a later gate on the caller's circuit
    assert float(f(np.array([0.7, 0.1]))) == before
    np.testing.assert_allclose(before, np.cos(0.7), atol=1e-12)


def test_gradients_flow_through_a_compiled_result_on_pytorch():
    torch = pytest.importorskip("torch")
    c = random_circuit(np.random.default_rng(8), 5, 3)
    count = len(c.parameters())
    angles = np.random.default_rng(9).uniform(0, 1, count)
    with tq.use_backend("pytorch"):
        f = c.compile("expectation_ps", x=[2], z=[3])
        tensor = torch.tensor(angles, dtype=torch.float64, requires_grad=True)
        value = f(tensor)
        value.backward()
        gradient = tensor.grad.numpy()
    with tq.use_backend("numpy"):
        shift = 1e-6
        finite = [(float(f(angles + shift * e)) - float(f(angles - shift * e))) / (2 * shift)
                  for e in np.eye(count)]
    np.testing.assert_allclose(gradient, finite, atol=1e-7)


@pytest.mark.jax_matrix
def test_a_compiled_result_traces_under_jax_jit():
    pytest.importorskip("jax")
    c = random_circuit(np.random.default_rng(10), 5, 2)
    angles = np.random.default_rng(11).uniform(0, 1, len(c.parameters()))
    with tq.use_backend("jax") as K:
        f = c.compile("expectation_ps", z=[2])
        value, gradient = K.jit(K.value_and_grad(f))(K.asarray(angles, K.real_dtype))
        plain = c.with_parameters(angles).expectation_ps(z=[2])
        np.testing.assert_allclose(float(value), float(plain), atol=1e-12)
        assert np.all(np.isfinite(np.asarray(gradient)))


def test_bad_input_is_refused_early_and_by_name():
    c = tq.Circuit(2).rx(0, theta=0.1).cx(0, 1).rz(1, theta=0.2)
    with pytest.raises(ValueError, match="result"):
        c.compile("not_a_result")
    f = c.compile("expectation_ps", z=[1])
    with pytest.raises(ValueError, match="expected 2 angles"):
        f(np.zeros(3))
    with pytest.raises(ValueError, match="not finite"):
        f(np.array([0.1, np.nan]))
    with pytest.raises(TypeError, match="real"):
        f(np.array([0.1, 0.2j]))
    with pytest.raises(ValueError, match="qubit"):
        c.compile("expectation_ps", z=[5])
