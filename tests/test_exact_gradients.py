"""Exact gradients without autograd (adjoint, parameter shift) against autograd and FD."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import make_backend
from tyxonq.numerics.dual import TracingError

torch = pytest.importorskip("torch")

ONE_PARAMETER = ["rx", "ry", "rz", "phase", "rxx", "ryy", "rzz", "crx", "cry", "crz", "cphase"]


@st.composite
def objectives(draw):
    """A random objective: gates with angles c*params[i] + d (shared, scaled), several
    expectation kinds, combined non-linearly."""
    n = draw(st.integers(2, 4))
    n_params = draw(st.integers(1, 4))
    gates = []
    for _ in range(draw(st.integers(1, 10))):
        gate = draw(st.sampled_from(ONE_PARAMETER + ["u", "h", "cx", "inverse-ry", "exp_pauli"]))
        if gate == "exp_pauli":  # a random two-letter Pauli rotation
            gate = "exp:" + "".join(draw(st.sampled_from("XYZ")) for _ in range(2))
        qubits = tuple(draw(st.permutations(range(n)))[:2])
        scale = draw(st.sampled_from([1.0, -0.5, 2.0, 0.7]))
        offset = draw(st.floats(-1, 1))
        index = draw(st.integers(0, n_params - 1))
        gates.append((gate, qubits, scale, offset, index))
    terms = [draw(st.sampled_from(["XZIY", "ZZII", "IXXI", "YIIZ", "ZIIZ"]))[:n]
             for _ in range(draw(st.integers(1, 3)))]
    hamiltonian = tq.PauliSum([(draw(st.floats(-1, 1)), t) for t in terms], n)
    return n, n_params, gates, hamiltonian


def build_objective(n, gates, hamiltonian):
    def objective(params):
        c = tq.Circuit(n)
        for gate, qubits, scale, offset, index in gates:
            angle = scale * params[index] + offset
            if gate == "u":
                c.u(qubits[0], angle, 0.3 * params[index], -angle)
            elif gate == "h":
                c.h(qubits[0])
            elif gate == "cx":
                c.cx(*qubits)
            elif gate == "inverse-ry":
                c = c.copy().ry(qubits[0], angle)
                c = c.inverse().inverse()
            elif gate.startswith("exp:"):
                c.exp_pauli(gate[4:], qubits, angle)
            elif gate in ("rx", "ry", "rz", "phase"):
                getattr(c, gate)(qubits[0], angle)
            else:
                getattr(c, gate)(qubits[0], qubits[1], angle)
        first = c.expectation(hamiltonian, method="state")
        second = c.expectation(hamiltonian, method="lightcone")
        z0 = c.expectation_ps(z=[0])
        return first + 0.5 * second * z0 - 0.25 * z0 ** 2
    return objective


@settings(max_examples=25, deadline=None)
@given(case=objectives(), seed=st.integers(0, 2 ** 16))
def test_adjoint_and_parameter_shift_match_autograd_and_finite_differences(case, seed):
    n, n_params, gates, hamiltonian = case
    objective = build_objective(n, gates, hamiltonian)
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, n_params)
    with tq.use_backend("pytorch"):
        value_torch, grad_torch = tq.value_and_grad(
            lambda t: objective([t[i] for i in range(n_params)]))(params)
    with tq.use_backend("numpy"):
        for method in ("adjoint", "parameter-shift"):
            value, gradient = tq.value_and_grad(objective, method=method)(params)
            np.testing.assert_allclose(float(value), float(value_torch), atol=1e-12)
            np.testing.assert_allclose(gradient, grad_torch.numpy(), atol=1e-10)
        _, fd = tq.value_and_grad(objective, method="finite-difference")(params)
        np.testing.assert_allclose(gradient, fd, atol=1e-6)


@pytest.mark.parametrize("backend_name", ["numpy", "cupynumeric-logic", "cupynumeric"])
@pytest.mark.parametrize("method", ["adjoint", "parameter-shift"])
def test_qaoa_scaled_angles_on_non_autograd_backends(backend_name, method):
    nx = pytest.importorskip("networkx")
    graph = nx.random_regular_graph(3, 6, seed=2)
    for a, b in graph.edges:
        graph.edges[a, b]["weight"] = 0.5 + 0.25 * ((a + b) % 3)
    hamiltonian = tq.hamiltonians.maxcut(graph)

    def qaoa(params):
        gammas, betas = params[:2], params[2:]
        c = tq.Circuit(6)
        for q in range(6):
            c.h(q)
        for gamma, beta in zip(gammas, betas):
            for a, b in graph.edges:
                c.rzz(a, b, gamma * graph.edges[a, b]["weight"])  # γ·w_ij
            for q in range(6):
                c.rx(q, 2 * beta)
        return c.expectation(hamiltonian)

    params = np.array([0.4, -0.9, 0.3, 0.8])
    with tq.use_backend("pytorch"):
        _, expected = tq.value_and_grad(lambda t: qaoa([t[i] for i in range(4)]))(params)
    with tq.use_backend(make_backend(backend_name)) as K:
        value, gradient = tq.value_and_grad(qaoa, method=method)(params)
        assert K.is_array(gradient) and K.shape(gradient) == (4,)
        np.testing.assert_allclose(K.to_numpy(gradient), expected.numpy(), atol=1e-10)


@pytest.mark.parametrize("backend_name", ["numpy", "cupynumeric-logic", "cupynumeric"])
@pytest.mark.parametrize("method", ["adjoint", "parameter-shift"])
def test_an_objective_that_is_a_backend_constant_has_a_zero_gradient(backend_name, method):
    """A zero Hamiltonian's light-cone value is a backend scalar, not a traced one (on cuPyNumeric
    it is a cuPyNumeric 0-d array): value 0, gradient 0, no error."""
    zero = tq.PauliSum([(0.0, "III")], 3)

    def energy(params):
        return tq.Circuit(3).rx(0, params[0]).cx(0, 2).expectation(zero, method="lightcone")

    with tq.use_backend(make_backend(backend_name)) as K:
        value, gradient = tq.value_and_grad(energy, method=method)(np.array([0.4]))
        assert float(value) == 0.0 and K.to_numpy(gradient).tolist() == [0.0]


def test_default_methods_and_several_arguments():
    def f(a, b):
        c = tq.Circuit(2).ry(0, a).rx(1, b[0] - b[1]).cx(0, 1)
        return c.expectation_ps(z=[0, 1]) * a

    with tq.use_backend("numpy"):
        (va, (ga, gb)) = tq.value_and_grad(f, argnums=(0, 1))(0.5, np.array([0.2, 0.7]))
        assert np.shape(gb) == (2,) and gb[0] == pytest.approx(-gb[1])
    with tq.use_backend("pytorch"):
        vt, (ta, tb) = tq.value_and_grad(f, argnums=(0, 1))(0.5, np.array([0.2, 0.7]))
    np.testing.assert_allclose([ga, *gb], [float(ta), *tb.numpy()], atol=1e-10)


def test_has_aux_returns_untraced_values():
    def f(t):
        c = tq.Circuit(1).rx(0, t)
        z = c.expectation_ps(z=[0])
        return z, {"z": z, "label": "rx"}

    with tq.use_backend("numpy"):
        (value, aux), gradient = tq.value_and_grad(f, has_aux=True)(0.3)
    assert aux["label"] == "rx" and float(aux["z"]) == pytest.approx(np.cos(0.3))
    assert float(gradient) == pytest.approx(-np.sin(0.3), abs=1e-12)


def test_plain_functions_are_traced_exactly_too():
    with tq.use_backend("numpy"):
        value, gradient = tq.value_and_grad(lambda x: np.sum(np.sin(x) * x ** 2))(np.array([0.5, 1.0]))
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(gradient, np.cos(x) * x ** 2 + 2 * x * np.sin(x), atol=1e-14)


def test_shift_evaluations_reuse_the_cached_plans():
    def energy(t):
        c = tq.Circuit(4)
        for q in range(4):
            c.ry(q, t[q])
        for q in range(3):
            c.cx(q, q + 1)
        return c.expectation_ps(z=[1, 2])

    with tq.use_backend("numpy"):
        tq.clear_plan_cache()
        tq.value_and_grad(energy, method="parameter-shift")(np.arange(4.0))
        assert tq.plan_cache_info().path_searches == 1


@pytest.mark.parametrize(
    "objective, error, words",
    [
        (lambda t: tq.Circuit(1).rx(0, t).state()[0].real, TracingError, "expectation values only"),
        (lambda t: float(t) * 2, TracingError, "drop its gradient"),
        (lambda t: tq.Circuit(1).rx(0, t).expectation((np.eye(2), [0]), hermitian=False),
         TracingError, "real objective"),
        (lambda t: "energy", TracingError, "carries no gradient"),
    ],
)
def test_what_tracing_cannot_follow_raises(objective, error, words):
    with tq.use_backend("numpy"):
        with pytest.raises(error, match=words):
            tq.value_and_grad(objective)(0.3)


def test_method_and_backend_mismatches_raise():
    with tq.use_backend("numpy"):
        with pytest.raises(ValueError, match="autograd"):
            tq.value_and_grad(lambda t: t, method="autograd")(0.1)
    with tq.use_backend("pytorch"):
        with pytest.raises(ValueError, match="finite-difference"):
            tq.value_and_grad(lambda t: t, method="finite-difference")(0.1)
    with pytest.raises(ValueError, match="method"):
        tq.value_and_grad(lambda t: t, method="symbolic")
    with tq.use_backend("numpy"):
        with pytest.raises(TypeError, match="complex"):
            tq.value_and_grad(lambda z: z.real)(np.array([1j]))
