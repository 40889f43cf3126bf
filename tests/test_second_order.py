"""tq.jacobian and tq.hessian of circuit objectives: exact on every backend, against PyTorch's
plain autograd through the simulator and against finite differences of the exact gradient."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sweep import parametrised_circuits, parametrised_energy

import tyxonq as tq
from conftest import jax_in_matrix, make_backend


def objective(n, operations, hamiltonian, inverted):
    """The energy with classical processing around it: a square, a product with a trigonometric
    function of a parameter, and a parameter scaled into a gate angle."""
    energy, size = parametrised_energy(n, operations, hamiltonian, inverted)

    def f(params):
        e = energy(params * 0.5 + 0.1)
        z = tq.Circuit(n).ry(0, params[0]).rx(n - 1, params[-1] * params[0]).expectation_ps(z=[0, n - 1])
        return e + 0.3 * e * e + tq.get_backend().sin(params[0]) * z

    return f, size


def reference_hessian(f, params):
    """Plain autograd through the simulator on PyTorch (no gradient nodes), forward over reverse."""
    T = make_backend("pytorch")
    with tq.use_backend(T), tq.gradient_method("autograd"):
        return T.to_numpy(T.hessian(f)(T.asarray(params)))


@settings(max_examples=12, deadline=None)
@given(case=parametrised_circuits(), seed=st.integers(0, 2 ** 16),
       method=st.sampled_from(["adjoint", "parameter-shift"]))
def test_numpy_hessians_are_exact(case, seed, method):
    pytest.importorskip("torch")
    f, size = objective(*case)
    if size == 0:
        return
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, size)
    with tq.use_backend("numpy"):
        got = tq.hessian(f, method=method)(params)
    np.testing.assert_allclose(got, got.T, atol=1e-12)
    np.testing.assert_allclose(got, reference_hessian(f, params), atol=1e-9)


def test_hessians_match_finite_differences_of_the_exact_gradient():
    f, size = objective(4, [("rx", (0,), 1), ("cx", (0, 2), 0), ("crz", (2, 1), 1), ("u", (3,), 3),
                            ("rzz", (1, 3), 1)], tq.hamiltonians.tfim(4), False)
    params = np.random.default_rng(1).uniform(-1, 1, size)
    with tq.use_backend("numpy"):
        got = tq.hessian(f)(params)
        gradient = tq.grad(f)
        step = 1e-5
        numeric = np.stack([(gradient(params + step * e) - gradient(params - step * e)) / (2 * step)
                            for e in np.eye(size)])
    np.testing.assert_allclose(got, numeric, atol=1e-7)


@pytest.mark.parametrize("backend_id", jax_in_matrix(["pytorch", "jax", "cupynumeric-logic"]))
def test_every_backend_agrees(backend_id):
    f, size = objective(3, [("ry", (0,), 1), ("cx", (0, 1), 0), ("rx", (2,), 1), ("crx", (1, 2), 1)],
                        tq.PauliSum([(0.5, "XZI"), (-1.0, "ZZZ"), (0.25, "IYY")], 3), True)
    params = np.random.default_rng(2).uniform(-1, 1, size)
    with tq.use_backend("numpy"):
        expected = tq.hessian(f)(params)
    K = make_backend(backend_id)
    with tq.use_backend(K):
        got = K.to_numpy(tq.hessian(f)(K.asarray(params)))
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_hessians_through_light_cone_contractions():
    """A 24-qubit circuit: each local energy term contracts its light cone (no state vector)."""
    n = 24

    def f(p):
        c = tq.Circuit(n)
        for q in range(n):
            c.ry(q, p[q % 3])
        for q in range(0, n - 1, 2):
            c.rzz(q, q + 1, theta=p[3])
        return c.expectation_ps(x=[10]) + c.expectation_ps(z=[10, 11]) ** 2

    params = np.array([0.3, -0.7, 1.1, 0.4])
    with tq.use_backend("numpy"):
        adjoint = tq.hessian(f)(params)
        shifted = tq.hessian(f, method="parameter-shift")(params)
        gradient = tq.grad(f)
        step = 1e-5
        numeric = np.stack([(gradient(params + step * e) - gradient(params - step * e)) / (2 * step)
                            for e in np.eye(4)])
    np.testing.assert_allclose(adjoint, shifted, atol=1e-10)
    np.testing.assert_allclose(adjoint, numeric, atol=1e-7)


@pytest.mark.parametrize("backend_id", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_jacobians_of_per_term_energies(backend_id):
    hamiltonian = tq.hamiltonians.tfim(4)
    strings = [s for _, s in hamiltonian]

    def terms(p):
        return tq.templates.hardware_efficient(4, p, 2).pauli_expectations(strings)

    size = tq.templates.hardware_efficient_size(4, 2)
    params = np.random.default_rng(3).uniform(-1, 1, size)
    K = make_backend(backend_id)
    with tq.use_backend(K):
        got = K.to_numpy(tq.jacobian(terms)(K.asarray(params)))
    with tq.use_backend("numpy"):
        rows = np.stack([tq.grad(lambda p, i=i: terms(p)[i])(params) for i in range(len(strings))])
        fd = tq.jacobian(terms, method="finite-difference")(params)
    assert got.shape == (len(strings), size)
    np.testing.assert_allclose(got, rows, atol=1e-10)
    np.testing.assert_allclose(got, fd, atol=1e-7)


def test_jacobian_blocks_and_constants():
    def f(a, b):
        c = tq.Circuit(2).rx(0, a[0]).ry(1, b)
        return [c.expectation_ps(z=[0]), 2.0, c.expectation_ps(z=[1]) * a[1]]

    with tq.use_backend("numpy"):
        ja, jb = tq.jacobian(f, argnums=(0, 1))(np.array([0.4, 1.5]), 0.7)
    np.testing.assert_allclose(ja, [[-np.sin(0.4), 0], [0, 0], [0, np.cos(0.7)]], atol=1e-12)
    np.testing.assert_allclose(jb, [0, 0, -np.sin(0.7) * 1.5], atol=1e-12)


def test_bad_requests_raise():
    with tq.use_backend("numpy"):
        with pytest.raises(ValueError, match="method"):
            tq.hessian(lambda p: p, method="magic")
        with pytest.raises(ValueError, match="autograd"):
            tq.hessian(lambda p: p[0], method="autograd")(np.ones(2))
        with pytest.raises(ValueError, match="scalar"):
            tq.hessian(lambda p: tq.Circuit(1).rx(0, p[0]).pauli_expectations(["Z", "X"]))(np.ones(1))


@settings(max_examples=20, deadline=None)
@given(x=st.floats(0.2, 2.0), y=st.floats(0.2, 2.0))
def test_traced_numbers_carry_exact_second_derivatives(x, y):
    """Every operation of the traced numbers, to second order, against PyTorch's autograd."""
    torch = pytest.importorskip("torch")
    from tyxonq.numerics.dual import traced_array

    def f(a, b, sin, cos, exp, sqrt, log):
        return (a * b / (1 + a) + 3 / b - a ** 3 + sin(a * b) * cos(b) + exp(a - b)
                + sqrt(a + b) * log(b + 2) + abs(a - 5) - (-b) ** 2)

    a, b = traced_array(np.array([x, y]), 0, 2, second_order=True)
    got = f(a, b, np.sin, np.cos, np.exp, np.sqrt, np.log)
    point = torch.tensor([x, y], dtype=torch.float64)
    expected = torch.func.hessian(lambda v: f(v[0], v[1], torch.sin, torch.cos, torch.exp, torch.sqrt,
                                              torch.log))(point)
    np.testing.assert_allclose(got.hessian, expected.numpy(), rtol=1e-12, atol=1e-12)


# -- second-order optimisers ----------------------------------------------------------------
def tfim_vqe(n=4, layers=2):
    hamiltonian = tq.hamiltonians.tfim(n)
    circuit_fn = lambda p: tq.templates.hardware_efficient(n, p, layers)  # noqa: E731
    size = tq.templates.hardware_efficient_size(n, layers)
    x0 = np.random.default_rng(3).uniform(-0.3, 0.3, size)
    return (lambda p: circuit_fn(p).expectation(hamiltonian)), circuit_fn, x0, hamiltonian.ground_energy()


def iterations_to(result, target):
    """The first iteration whose energy is at or below ``target`` (or ``inf``)."""
    below = [i for i, value in enumerate(result.history_fun) if value <= target]
    return below[0] + 1 if below else np.inf


def test_natural_gradient_needs_fewer_iterations_than_gradient_descent():
    """A seeded, measured comparison (not a timing): from the same start and learning rate,
    QNG reaches 1e-2 above the ground energy in fewer iterations than plain gradient descent."""
    energy, circuit_fn, x0, ground = tfim_vqe()
    with tq.use_backend("numpy"):
        plain = tq.optimize.minimize(energy, x0, method="sgd", maxiter=300, tol=0, learning_rate=0.05,
                                     progress=False)
        natural = tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, maxiter=300, tol=0,
                                       learning_rate=0.05, progress=False)
    target = ground + 1e-2
    assert iterations_to(natural, target) < iterations_to(plain, target) / 2
    assert natural.nit == 300 and len(natural.history_fun) == 300
    assert natural.fun < plain.fun


@pytest.mark.parametrize("backend_id", jax_in_matrix(["pytorch", "jax"]))
def test_natural_gradient_steps_agree_on_every_backend(backend_id):
    energy, circuit_fn, x0, _ = tfim_vqe(3, 1)
    with tq.use_backend("numpy"):
        expected = tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, maxiter=5, tol=0,
                                        approximation="block-diag", progress=False)
    with tq.use_backend(make_backend(backend_id)):
        got = tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, maxiter=5, tol=0,
                                   approximation="block-diag", progress=False)
    np.testing.assert_allclose(got.history_fun, expected.history_fun, atol=1e-10)


def test_newton_with_the_exact_hessian_leaves_a_maximum():
    """At cos(θ) near its maximum θ = 0 plain Newton steps go to the maximum; the trust region
    uses the negative curvature and reaches the minimum."""
    energy = lambda t: tq.Circuit(1).ry(0, t[0]).expectation_ps(z=[0])  # noqa: E731
    with tq.use_backend("numpy"):
        result = tq.optimize.minimize(energy, np.array([0.01]), method="newton", progress=False)
    assert result.converged and abs(result.fun + 1) < 1e-10
    assert result.history_fun[0] > 0.99 and len(result.history_fun) == len(result.history_x)


def test_newton_reaches_the_vqe_minimum_in_few_iterations():
    energy, _, x0, ground = tfim_vqe(3, 1)
    with tq.use_backend("numpy"):
        newton = tq.optimize.minimize(energy, x0, method="newton", progress=False)
        bfgs = tq.optimize.minimize(energy, x0, method="BFGS", progress=False)
    assert newton.converged and abs(newton.fun - bfgs.fun) < 1e-8
    assert newton.nit < bfgs.nit


def test_natural_gradient_finds_the_objective_circuit_by_tracing():
    """Without circuit=, QNG traces the objective to find its circuit (as PennyLane's QNG finds the
    QNode's): the same steps as with circuit=, classical processing of the parameters included;
    an objective of two circuits is refused, naming circuit=."""
    hamiltonian = tq.hamiltonians.tfim(3)
    circuit_fn = lambda p: tq.templates.hardware_efficient(3, 2 * p + 0.1, 1)  # noqa: E731
    energy = lambda p: 0.5 * circuit_fn(p).expectation(hamiltonian)  # noqa: E731
    x0 = np.random.default_rng(4).uniform(-0.3, 0.3, tq.templates.hardware_efficient_size(3, 1))
    with tq.use_backend("numpy"):
        given = tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, maxiter=4, tol=0,
                                     progress=False)
        traced = tq.optimize.minimize(energy, x0, method="qng", maxiter=4, tol=0, progress=False)
        np.testing.assert_allclose(traced.history_fun, given.history_fun, atol=1e-12)
        np.testing.assert_allclose(traced.x, given.x, atol=1e-12)
        two = lambda p: circuit_fn(p).expectation(hamiltonian) + circuit_fn(-p).expectation(hamiltonian)  # noqa
        with pytest.raises(ValueError, match="found 2.*pass circuit="):
            tq.optimize.minimize(two, x0, method="qng", maxiter=2, progress=False)


def test_second_order_options_are_checked():
    energy, circuit_fn, x0, _ = tfim_vqe(3, 1)
    with tq.use_backend("numpy"):
        with pytest.raises(ValueError, match="found 0.*circuit="):
            tq.optimize.minimize(lambda p: np.sum(p * p), x0, method="qng", progress=False)
        with pytest.raises(ValueError, match="lam"):
            tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, lam=0.0)
        with pytest.raises(ValueError, match="approximation"):
            tq.optimize.minimize(energy, x0, method="qng", circuit=circuit_fn, approximation="full")
