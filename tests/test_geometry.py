"""The quantum geometric tensor and the Fubini-Study metric: against the dense definition (exact
state Jacobians by PyTorch's autograd), finite differences of the fidelity, and across backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sweep import parametrised_circuits

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import PARAMETRISED


def circuit_function(n, operations):
    """The circuit of the parameters, with classical processing into the angles (a scale, an
    offset, a product of two parameters)."""
    def circuit_fn(params):
        circuit, used = tq.Circuit(n), 0
        for gate, qubits, count in operations:
            angles = [params[(used + i) % len(params)] * 0.7 + 0.2 for i in range(count)]
            if gate in PARAMETRISED and count and len(params) > 1:
                angles[0] = angles[0] + params[0] * params[1]
            getattr(circuit, gate)(*qubits, *angles)
            used += count
        return circuit

    return circuit_fn, sum(count for _, _, count in operations)


def dense_tensor(circuit_fn, params):
    """The definition, from the state and its exact Jacobian (plain autograd on PyTorch)."""
    T = make_backend("pytorch")
    with tq.use_backend(T), tq.gradient_method("autograd"):
        x = T.asarray(params)
        state = T.to_numpy(circuit_fn(x).state())
        jac = T.to_numpy(T.jacobian(lambda p: circuit_fn(p).state())(x)).reshape(len(state), -1)
    return jac.conj().T @ jac - np.outer(jac.conj().T @ state, state.conj() @ jac)


@settings(max_examples=15, deadline=None)
@given(case=parametrised_circuits(), seed=st.integers(0, 2 ** 16))
def test_the_tensor_matches_its_dense_definition(case, seed):
    pytest.importorskip("torch")
    n, operations, _, _ = case
    circuit_fn, size = circuit_function(n, operations)
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, max(size, 2))
    with tq.use_backend("numpy"):
        got = tq.quantum_geometric_tensor(circuit_fn, params)
        metric = tq.fubini_study_metric(circuit_fn, params)
    np.testing.assert_allclose(got, got.conj().T, atol=1e-12)
    np.testing.assert_allclose(got, dense_tensor(circuit_fn, params), atol=1e-10)
    np.testing.assert_allclose(metric, got.real, atol=1e-14)
    assert np.linalg.eigvalsh(metric).min() > -1e-10


def test_the_metric_is_the_curvature_of_the_fidelity():
    """1 - |<psi(p)|psi(p + d)>|^2 = d^T g d + O(d^3): g from second differences of the fidelity."""
    size = tq.templates.hardware_efficient_size(3, 2, ("ry", "rz"))
    circuit_fn = lambda p: tq.templates.hardware_efficient(3, p, 2, ("ry", "rz"))  # noqa: E731
    params = np.random.default_rng(4).uniform(-1, 1, size)
    with tq.use_backend("numpy") as K:
        metric = tq.fubini_study_metric(circuit_fn, params)
        state = K.to_numpy(circuit_fn(params).state())

        def fidelity(shift):
            return abs(np.vdot(state, K.to_numpy(circuit_fn(params + shift).state()))) ** 2

        h = 1e-4
        basis = np.eye(size) * h
        numeric = np.empty((size, size))
        for i in range(size):
            for j in range(size):
                corners = (fidelity(basis[i] + basis[j]) - fidelity(basis[i] - basis[j])
                           - fidelity(basis[j] - basis[i]) + fidelity(-basis[i] - basis[j]))
                numeric[i, j] = -corners / (8 * h * h)
    np.testing.assert_allclose(metric, numeric, atol=1e-6)


@pytest.mark.parametrize("backend_id", jax_in_matrix(["pytorch", "jax", "cupynumeric-logic"]))
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
def test_every_backend_and_precision_agree(backend_id, precision):
    circuit_fn = lambda p: tq.templates.hardware_efficient(4, p, 2, ("ry", "rz"))  # noqa: E731
    params = np.random.default_rng(5).uniform(-1, 1, tq.templates.hardware_efficient_size(4, 2, ("ry", "rz")))
    with tq.use_backend("numpy"):
        expected = tq.quantum_geometric_tensor(circuit_fn, params)
    K = make_backend(backend_id, dtype=precision)
    with tq.use_backend(K):
        got = tq.quantum_geometric_tensor(circuit_fn, K.asarray(params, K.real_dtype))
    assert K.dtype_of(got) == K.dtype
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=1e-10 if precision == "complex128" else 1e-5)


def test_block_diagonal_and_diagonal_approximations():
    """Two layers of RY on three qubits around a CNOT ladder: block-diag keeps each layer's 3x3
    block of the full tensor and zeroes the rest; diag keeps the diagonal."""
    def circuit_fn(p):
        c = tq.Circuit(3)
        for q in range(3):
            c.ry(q, p[q])
        c.cx(0, 1).cx(1, 2)
        for q in range(3):
            c.ry(q, p[3 + q])
        return c

    params = np.random.default_rng(6).uniform(-1, 1, 6)
    with tq.use_backend("numpy"):
        full = tq.quantum_geometric_tensor(circuit_fn, params)
        blocks = tq.quantum_geometric_tensor(circuit_fn, params, approximation="block-diag")
        diagonal = tq.fubini_study_metric(circuit_fn, params, approximation="diag")
    mask = np.kron(np.eye(2), np.ones((3, 3)))
    np.testing.assert_allclose(blocks, full * mask, atol=1e-14)
    assert np.abs(full * (1 - mask)).max() > 1e-3  # the approximation drops something
    np.testing.assert_allclose(diagonal, np.diag(np.diag(full.real)), atol=1e-14)


def test_bad_inputs_raise():
    with tq.use_backend("numpy"):
        with pytest.raises(ValueError, match="approximation"):
            tq.quantum_geometric_tensor(lambda p: tq.Circuit(1).rx(0, p[0]), np.ones(1), approximation="x")
        with pytest.raises(TypeError, match="tq.Circuit"):
            tq.quantum_geometric_tensor(lambda p: tq.DMCircuit(1).rx(0, p[0]), np.ones(1))
        with pytest.raises(TypeError, match="real parameters"):
            tq.quantum_geometric_tensor(lambda p: tq.Circuit(1).rx(0, p[0]), np.ones(1) * 1j)
        with pytest.raises(ValueError, match="channel"):
            tq.quantum_geometric_tensor(lambda p: tq.Circuit(1).rx(0, p[0]).depolarizing(0, p=0.1),
                                        np.ones(1))
        zeros = tq.quantum_geometric_tensor(lambda p: tq.Circuit(1).h(0), np.ones(2))
    assert zeros.shape == (2, 2) and not np.any(zeros)
