"""Expectation values as gradient nodes on PyTorch: exact methods inside autograd, equal to plain
autograd through the simulator, and everything around them still differentiable."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exact_gradients import build_objective, objectives

import tyxonq as tq
from conftest import make_backend

torch = pytest.importorskip("torch")

NODE = "GradientNodeBackward"


def ansatz(n, params, layers=1):  # 4 n parameters
    return tq.templates.hardware_efficient(n, params, layers, ("ry", "rz"))


def node_and_autograd(objective, params):
    """Value and gradient of ``objective`` with gradient nodes (the default) and by plain
    autograd, through ``tq.value_and_grad``."""
    results = [tq.value_and_grad(objective, method=method)(params)
               for method in ("adjoint", "autograd", "parameter-shift")]
    return [(float(value), gradient.numpy()) for value, gradient in results]


@settings(max_examples=20, deadline=None)
@given(case=objectives(), seed=st.integers(0, 2 ** 16))
def test_nodes_match_plain_autograd_on_random_objectives(case, seed):
    n, n_params, gates, hamiltonian = case
    objective = build_objective(n, gates, hamiltonian)
    params = torch.tensor(np.random.default_rng(seed).uniform(-np.pi, np.pi, n_params))
    with tq.use_backend("pytorch"):
        (v_node, g_node), (v_auto, g_auto), (v_shift, g_shift) = node_and_autograd(objective, params)
    assert v_node == pytest.approx(v_auto, abs=1e-12)
    np.testing.assert_allclose(g_node, g_auto, atol=1e-10)
    np.testing.assert_allclose(g_shift, g_auto, atol=1e-10)


@pytest.mark.parametrize("n", [4, 15])  # the host twin sweeps 4 qubits; PyTorch itself 15
def test_backward_reaches_the_node_and_torch_optim_steps(n):
    hamiltonian = tq.hamiltonians.tfim(n)
    start = np.random.default_rng(1).uniform(-1, 1, 4 * n)
    with tq.use_backend("pytorch"):
        params = torch.tensor(start, requires_grad=True)
        energy = ansatz(n, params).expectation(hamiltonian)
        assert type(energy.grad_fn).__name__ == NODE
        energy.backward()
        node_gradient = params.grad.clone()
        with tq.gradient_method("autograd"):
            plain = ansatz(n, params).expectation(hamiltonian)
        assert type(plain.grad_fn).__name__ != NODE
        reference, = torch.autograd.grad(plain, params)
        np.testing.assert_allclose(node_gradient.numpy(), reference.numpy(), atol=1e-10)
        optimiser = torch.optim.Adam([params], lr=0.05)
        for _ in range(3):
            optimiser.zero_grad()
            loss = ansatz(n, params).expectation(hamiltonian)
            loss.backward()
            optimiser.step()
        assert float(ansatz(n, params).expectation(hamiltonian).detach()) < float(energy.detach())


@pytest.mark.parametrize("backend_id", ["pytorch", "pytorch-cuda"])
def test_nodes_compute_on_the_host_twin_where_it_reads_every_array(backend_id, monkeypatch):
    """A node's exact method runs on NumPy (the host twin) for a sweep of up to
    ``host_twin_entries`` amplitudes, also on CUDA (the angles copied over, the value and Jacobian
    back); an observable matrix or input state the twin cannot read without a copy (a CUDA
    tensor), or a larger state, keeps it on the backend. The gradients are autograd's on every
    route, on the backend's device."""
    from tyxonq.circuit.differentiation import node

    K = make_backend(backend_id)
    routes = []
    decide = node._on_host_twin  # noqa: SLF001
    monkeypatch.setattr(node, "_on_host_twin", lambda *args: routes.append(decide(*args)) or routes[-1])
    n = 4
    start = np.random.default_rng(3).uniform(-1, 1, 4 * n)
    z_matrix = K.asarray(np.diag([1.0, -1.0]).astype(complex))
    inputs = K.asarray(np.full(2 ** n, 2 ** (-n / 2), dtype=complex))
    objectives = {
        "pauli sum": lambda p: ansatz(n, p).expectation(tq.hamiltonians.tfim(n)),
        "matrix": lambda p: ansatz(n, p).expectation((z_matrix, [1])),
        "input state": lambda p: prepared(p).expectation_ps(z=[0, 2]),
    }

    def prepared(p):
        c = tq.Circuit(n, inputs=inputs)
        for q in range(n):
            c.ry(q, theta=p[q]).rz(q, theta=p[n + q])
        for q in range(n - 1):
            c.cx(q, q + 1)
        return c

    on_device = K.device.type != "cpu"
    expected_routes = {"pauli sum": True, "matrix": not on_device, "input state": not on_device}
    assert K.host_copyable(z_matrix) and K.host_readable(z_matrix) != on_device
    with tq.use_backend(K):
        for name, objective in objectives.items():
            for entries, twin in ((2.0 ** n, expected_routes[name]), (2.0 ** (n - 1), False)):
                monkeypatch.setattr(type(K), "host_twin_entries", lambda self, e=entries: e)
                routes.clear()  # tracked parameters: value_and_grad makes nodes (untracked: the twin)
                params = K.requires_grad(K.asarray(start, K.real_dtype))
                value, gradient = tq.value_and_grad(objective)(params)
                assert routes == [twin], name
                plain_value, plain_gradient = tq.value_and_grad(objective, method="autograd")(params)
                assert gradient.device == K.device
                np.testing.assert_allclose(K.to_numpy(value), K.to_numpy(plain_value), atol=1e-12)
                np.testing.assert_allclose(K.to_numpy(gradient), K.to_numpy(plain_gradient), atol=1e-10)
        tracked = K.requires_grad(K.asarray(0.5, K.real_dtype))
        assert not K.host_copyable(tracked) and K.host_copyable(0.5) and K.host_copyable(K.asarray(0.5))


def test_angles_from_torch_code_and_shared_tensors():
    """Angles made by any torch code (a linear layer, sin) and one tensor in several gates."""
    with tq.use_backend("pytorch"):
        layer = torch.nn.Linear(2, 6, dtype=torch.float64)
        x = torch.tensor([0.3, -0.8], dtype=torch.float64)

        def loss(method):
            angles = torch.sin(layer(x))
            c = tq.Circuit(3)
            for q in range(3):
                c.ry(q, angles[q]).rz(q, angles[3 + q])
            c.cx(0, 1).cx(1, 2).rx(2, angles[0])  # angles[0] twice
            with tq.gradient_method(method):
                return c.expectation_ps(z=[0, 2]) + 0.5 * c.expectation_ps(x=[1])

        grads = []
        for method in ("adjoint", "autograd"):
            layer.zero_grad()
            loss(method).backward()
            grads.append(layer.weight.grad.numpy().copy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_gradients_beyond_the_angles_still_flow():
    """Coefficients, input states and observables tracked by autograd: the coefficients weight
    node values in autograd; the others make the result plain autograd."""
    n = 3
    with tq.use_backend("pytorch"):
        params = torch.linspace(-0.9, 0.8, 4 * n, dtype=torch.float64, requires_grad=True)
        weights = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
        strings = ["ZZI", "IXX", "YIY"]
        circuit = ansatz(n, params)
        value = circuit.pauli_expectations(strings, weights)
        value.backward()
        terms = circuit.pauli_expectations(strings).detach().numpy()
        np.testing.assert_allclose(weights.grad.numpy(), terms, atol=1e-12)
        with tq.gradient_method("autograd"):
            reference, = torch.autograd.grad(ansatz(n, params).pauli_expectations(strings, weights), params)
        np.testing.assert_allclose(params.grad.numpy(), reference.numpy(), atol=1e-10)

        state = torch.tensor(np.ones(2 ** n) / np.sqrt(2 ** n), dtype=torch.complex128, requires_grad=True)
        observable = torch.tensor([[1.0, 0.5], [0.5, -1.0]], dtype=torch.complex128, requires_grad=True)
        c = tq.Circuit(n, inputs=state).ry(0, params[0]).cx(0, 1)
        from_state = c.expectation_ps(z=[1])
        assert type(from_state.grad_fn).__name__ != NODE
        from_state.backward()
        assert state.grad is not None and float(state.grad.abs().sum()) > 0
        local = tq.Circuit(n).ry(0, params[0]).expectation((observable, [0]))
        assert type(local.grad_fn).__name__ != NODE
        local.backward()
        assert observable.grad is not None


def test_no_node_without_recording_nor_under_vmap():
    n = 3
    hamiltonian = tq.hamiltonians.tfim(n)
    with tq.use_backend("pytorch"):
        params = torch.linspace(-1, 1, 4 * n, dtype=torch.float64, requires_grad=True)
        with torch.no_grad():
            assert ansatz(n, params).expectation(hamiltonian).grad_fn is None
        batch = torch.stack([params.detach(), params.detach() * 0.5])
        energies = tq.vmap(lambda p: ansatz(n, p).expectation(hamiltonian))(batch)
        gradients = tq.vmap(tq.grad(lambda p: ansatz(n, p).expectation(hamiltonian)))(batch)
        for row, energy, gradient in zip(batch, energies, gradients):
            value, expected = tq.value_and_grad(lambda p: ansatz(n, p).expectation(hamiltonian))(row)
            assert float(energy) == pytest.approx(float(value), abs=1e-12)
            np.testing.assert_allclose(gradient.numpy(), expected.numpy(), atol=1e-10)


def test_torch_func_grad_and_a_noisy_circuit_reach_the_node():
    def noisy(params):
        c = tq.DMCircuit(3)
        for q in range(3):
            c.ry(q, params[q]).depolarizing(q, p=0.05)
        c.cx(0, 1).rzz(1, 2, params[3]).amplitude_damping(2, gamma=0.1)
        return c.expectation(tq.hamiltonians.tfim(3))

    params = torch.tensor([0.3, -0.2, 0.8, 0.5], dtype=torch.float64)
    with tq.use_backend("pytorch"):
        by_func = torch.func.grad(noisy)(params)
        with tq.gradient_method("autograd"):
            plain = torch.func.grad(noisy)(params)
    with tq.use_backend("numpy"):
        _, by_adjoint = tq.value_and_grad(noisy)(params.numpy())
    np.testing.assert_allclose(by_func.numpy(), plain.numpy(), atol=1e-10)
    np.testing.assert_allclose(by_func.numpy(), by_adjoint, atol=1e-10)


def test_single_precision_nodes():
    n = 4
    hamiltonian = tq.hamiltonians.tfim(n)
    start = np.random.default_rng(3).uniform(-1, 1, 4 * n)
    with tq.use_backend(tq.get_backend("pytorch").__class__(dtype="complex64")):
        params = torch.tensor(start, dtype=torch.float32, requires_grad=True)
        energy = ansatz(n, params).expectation(hamiltonian)
        assert energy.dtype == torch.float32 and type(energy.grad_fn).__name__ == NODE
        energy.backward()
    with tq.use_backend("numpy"):
        value, gradient = tq.value_and_grad(lambda p: ansatz(n, p).expectation(hamiltonian))(start)
    assert params.grad.dtype == torch.float32
    assert float(energy.detach()) == pytest.approx(float(value), abs=1e-5)
    np.testing.assert_allclose(params.grad.numpy(), gradient, atol=1e-5)


def test_complex_results_are_plain_autograd():
    with tq.use_backend("pytorch"):
        theta = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
        y = torch.tensor([[0, -1j], [1j, 0]], dtype=torch.complex128)
        c = tq.Circuit(1).rx(0, theta)
        value = c.expectation((y, [0]), hermitian=False)
        assert type(value.grad_fn).__name__ != NODE
        value.real.backward()
    assert float(theta.grad) == pytest.approx(-np.cos(0.4), abs=1e-12)  # <Y> = -sin(theta)


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # torch's forward AD
def test_second_derivatives_are_never_silently_dropped():
    """A node's Jacobian is constant: double backward through it raises; torch.func.hessian
    (forward over reverse: a jvp transform) differentiates by plain autograd and is exact."""
    n = 2
    hamiltonian = tq.hamiltonians.tfim(n)
    start = torch.tensor([0.3, -0.5, 0.8, 0.1, -0.2, 0.6, 0.4, -0.7], dtype=torch.float64)
    with tq.use_backend("pytorch"):
        params = start.clone().requires_grad_()
        energy = ansatz(n, params).expectation(hamiltonian)
        gradient, = torch.autograd.grad(energy, params, create_graph=True)
        with pytest.raises(RuntimeError, match="gradient_method..autograd"):
            torch.autograd.grad(gradient.sum(), params)
        penalised = ansatz(n, params).expectation(hamiltonian) + (params ** 2).sum()
        gradient, = torch.autograd.grad(penalised, params, create_graph=True)
        with pytest.raises(RuntimeError, match="second derivatives"):  # not just the penalty's
            torch.autograd.grad(gradient.sum(), params)
        hessian = torch.func.hessian(lambda p: ansatz(n, p).expectation(hamiltonian))(start)
        with tq.gradient_method("autograd"):
            reference = torch.func.hessian(lambda p: ansatz(n, p).expectation(hamiltonian))(start)
    np.testing.assert_allclose(hessian.numpy(), reference.numpy(), atol=1e-10)
    assert float(hessian.abs().max()) > 0.1


def test_a_node_over_angles_of_mixed_shapes_and_dtypes_hands_each_its_own_gradient():
    K = make_backend("pytorch")
    single = torch.tensor(0.5, dtype=torch.float32, requires_grad=True)
    double = torch.tensor([0.25], dtype=torch.float64, requires_grad=True)
    value = K.gradient_node(lambda v: (np.sin(v[0]) * v[1], np.array([np.cos(v[0]) * v[1], np.sin(v[0])])),
                            [single, double])
    value.backward()
    assert single.grad.dtype == torch.float32 and single.grad.shape == ()
    assert double.grad.dtype == torch.float64 and double.grad.shape == (1,)
    assert float(single.grad) == pytest.approx(np.cos(0.5) * 0.25, abs=1e-7)
    assert float(double.grad[0]) == pytest.approx(np.sin(0.5), abs=1e-12)
