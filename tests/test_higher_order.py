"""K.jacobian and K.hessian on every backend: against analytic derivatives, with hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import jax_in_matrix

points = st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3).map(np.array)


def tolerance(K, order):
    """Exact autodiff to rounding; central differences to their truncation and rounding."""
    if K.capabilities.autodiff == "autograd":
        return 1e-10
    return 1e-6 if order == 1 else 2e-5


def vector_function(K):
    return lambda x: K.stack([K.sin(x[0]) * x[1], x[0] ** 2 + K.cos(x[1]), K.exp(x[2]) * x[0]])


def vector_jacobian(x):
    a, b, c = x
    return np.array([[np.cos(a) * b, np.sin(a), 0.0],
                     [2 * a, -np.sin(b), 0.0],
                     [np.exp(c), 0.0, np.exp(c) * a]])


def scalar_function(K):
    return lambda x: K.sum(x ** 3) + x[0] * x[1] * x[2] + K.sin(x[0] * x[1])


def scalar_hessian(x):
    a, b, c = x
    s = -np.sin(a * b)
    return np.array([[6 * a + s * b * b, c + np.cos(a * b) + s * a * b, b],
                     [c + np.cos(a * b) + s * a * b, 6 * b + s * a * a, a],
                     [b, a, 6 * c]])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=points)
def test_jacobian_matches_the_analytic_one(K, x):
    got = K.to_numpy(K.jacobian(vector_function(K))(K.asarray(x, "float64")))
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, vector_jacobian(x), atol=tolerance(K, 1), rtol=tolerance(K, 1))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=points)
def test_hessian_matches_the_analytic_one(K, x):
    got = K.to_numpy(K.hessian(scalar_function(K))(K.asarray(x, "float64")))
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, got.T, atol=1e-12)
    np.testing.assert_allclose(got, scalar_hessian(x), atol=tolerance(K, 2) * 10, rtol=tolerance(K, 2))


def test_tuple_argnums_give_blocks(K):
    x, y = K.asarray([0.3, -0.4], "float64"), K.asarray(1.2, "float64")
    f = lambda x, y: K.sum(x ** 2) * y + y ** 3  # noqa: E731
    jx, jy = (K.to_numpy(j) for j in K.jacobian(lambda x, y: K.stack([f(x, y), x[0] * y]), (0, 1))(x, y))
    assert jx.shape == (2, 2) and jy.shape == (2,)
    tol = tolerance(K, 1)
    np.testing.assert_allclose(jx, [[2 * 0.3 * 1.2, 2 * -0.4 * 1.2], [1.2, 0.0]], atol=tol)
    np.testing.assert_allclose(jy, [0.25 + 3 * 1.44, 0.3], atol=tol)
    blocks = K.hessian(f, (0, 1))(x, y)
    (hxx, hxy), (hyx, hyy) = ((K.to_numpy(b) for b in row) for row in blocks)
    assert hxx.shape == (2, 2) and hxy.shape == (2,) and hyx.shape == (2,) and hyy.shape == ()
    tol = tolerance(K, 2) * 10
    np.testing.assert_allclose(hxx, 2 * 1.2 * np.eye(2), atol=tol)
    np.testing.assert_allclose(hxy, [0.6, -0.8], atol=tol)
    np.testing.assert_allclose(hyx, [0.6, -0.8], atol=tol)
    np.testing.assert_allclose(hyy, 6 * 1.2, atol=tol)


def test_complex_outputs_and_complex_arguments(K):
    x = K.asarray([0.3, -1.1], "float64")
    phase = K.to_numpy(K.jacobian(lambda t: K.exp(1j * t) * t[0])(x))
    a, b = 0.3, -1.1
    expected = np.array([[np.exp(1j * a) * (1j * a + 1), 0.0],
                         [np.exp(1j * b) * a * 1j * 0 + np.exp(1j * b), np.exp(1j * b) * 1j * a]])
    np.testing.assert_allclose(phase, expected, atol=tolerance(K, 1))
    z = K.asarray([1 + 2j, -0.5 + 0.25j])
    weights = K.asarray([1.0, 3.0], "float64")
    got = K.to_numpy(K.jacobian(lambda z: K.stack([K.sum(K.abs(z) ** 2 * weights), K.real(z[0])]))(z))
    # df/dRe z + 1j df/dIm z, as value_and_grad's gradients
    np.testing.assert_allclose(got, [[2 * (1 + 2j), 6 * (-0.5 + 0.25j)], [1.0, 0.0]], atol=tolerance(K, 1))
    with pytest.raises(TypeError, match="complex output"):
        K.jacobian(lambda z: z * 2)(z)


def test_bad_outputs_and_arguments_raise_clear_errors(K):
    x = K.asarray([0.1, 0.2], "float64")
    with pytest.raises(TypeError, match="array or a number"):
        K.jacobian(lambda x: {"a": x})(x)
    with pytest.raises(TypeError, match="real"):
        K.hessian(lambda x: K.sum(x) * 1j)(x)
    with pytest.raises(ValueError, match="scalar"):
        K.hessian(lambda x: x ** 2)(x)
    with pytest.raises(TypeError, match="real arguments"):
        K.hessian(lambda z: K.sum(K.abs(z)))(K.asarray([1j, 2.0]))
    with pytest.raises(ValueError, match="out of range"):
        K.jacobian(lambda x: x, argnums=1)(x)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_hermitian_expectations_differentiate_like_the_plain_form(backend_name):
    """``K.hermitian_expectation`` (JAX: a custom VJP reusing ``O|psi>``): the value, gradient
    and Hessian of a Heisenberg energy equal NumPy's exact ones; jit and vmap compose."""
    import tyxonq as tq
    from conftest import make_backend

    n = 4
    hamiltonian = tq.hamiltonians.heisenberg(n)

    def energy(p):
        return tq.templates.hardware_efficient(n, p, 2, ("ry", "rz")).expectation(hamiltonian)

    x = np.random.default_rng(1).uniform(-1, 1, n * 2 * 3)
    with tq.use_backend("numpy"):
        value, gradient = tq.value_and_grad(energy)(x)
        hessian = tq.hessian(energy)(x)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        got_value, got_gradient = tq.value_and_grad(energy)(K.asarray(x))
        got_hessian = tq.hessian(energy)(K.asarray(x))
        np.testing.assert_allclose(float(K.to_numpy(got_value)), value, atol=1e-12)
        np.testing.assert_allclose(K.to_numpy(got_gradient), gradient, atol=1e-12)
        np.testing.assert_allclose(K.to_numpy(got_hessian), hessian, atol=1e-10)
        if backend_name == "jax":
            _, jitted = K.jit(tq.value_and_grad(energy))(K.asarray(x))
            np.testing.assert_allclose(K.to_numpy(jitted), gradient, atol=1e-12)
            batch = K.vmap(tq.grad(energy))(K.asarray(np.stack([x, -x])))
            np.testing.assert_allclose(K.to_numpy(batch[0]), gradient, atol=1e-12)
