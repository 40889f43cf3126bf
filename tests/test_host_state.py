"""A jax.jit program's state vector taken from the host twin (tyxonq.circuit.host_state), and any
contraction past the backend's host_program_entries (tyxonq.circuit.contraction.host_route: a
density matrix here): the same values as the eager result, the compiled contraction and the dense
reference, with an input state, and never under vmap or where derivatives are taken (the
contraction's trace serves them); the host_computed hook itself under jit, grad, jacfwd and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend
from reference import reference_state

jax = pytest.importorskip("jax")


#: rates under which a compiled contraction is cheap (they play no part in hosting)
COMPILED_CHEAP = tq.MachineRates(tensor_seconds=1e-3, madds_per_second=1e9, compiled_tensor_seconds=1e-7)


@pytest.fixture
def K():
    """The JAX backend, counting its host callbacks (the shapes asked for) in ``host_calls``."""
    backend = make_backend("jax")
    calls = []
    original = backend.host_computed

    def counted(*args, **kwargs):
        calls.append(args[3])
        return original(*args, **kwargs)

    backend.host_computed = counted
    backend.host_calls = calls
    return backend


@pytest.fixture
def hosting(K):
    """``K`` taking every compiled contraction of 2^6 entries or more from the host."""
    K.host_program_entries = lambda: 2.0 ** 6
    return K


def ladder(n, angles, inputs=None):
    c = tq.Circuit(n, inputs=inputs)
    for q in range(n):
        c.rx(q, theta=angles[q])
        c.rz(q, theta=angles[n + q])
    for q in range(n - 1):
        c.cx(q, q + 1)
    return c.ry(n - 1, theta=angles[2 * n] * 2.0).cz(0, n - 1)


def operations(n, angles):
    ops = [("rx", (q,), (float(angles[q]),)) for q in range(n)]
    ops += [("rz", (q,), (float(angles[n + q]),)) for q in range(n)]
    ops += [("cx", (q, q + 1), ()) for q in range(n - 1)]
    return ops + [("ry", (n - 1,), (2.0 * float(angles[2 * n]),)), ("cz", (0, n - 1), ())]


def test_a_compiled_state_comes_from_the_host_with_the_same_values(hosting):
    K = hosting
    n, angles = 6, np.linspace(-1.2, 0.9, 13)
    with tq.use_backend(K):
        compiled = K.to_numpy(jax.jit(lambda a: ladder(n, a).state())(K.asarray(angles)))
        eager = K.to_numpy(ladder(n, angles).state())
    assert K.host_calls == [(2 ** n,)]
    np.testing.assert_allclose(compiled, reference_state(n, operations(n, angles)), atol=1e-12)
    np.testing.assert_allclose(compiled, eager, atol=1e-12)


def test_below_the_hosting_size_the_compiled_contraction_runs(K):
    """JAX's own size (2^22 amplitudes on the CPU): a 6-qubit state stays in XLA."""
    n, angles = 6, np.linspace(-1.2, 0.9, 13)
    assert K.host_program_entries() == 2.0 ** 22
    with tq.use_backend(K):
        compiled = K.to_numpy(jax.jit(lambda a: ladder(n, a).state())(K.asarray(angles)))
    assert K.host_calls == []
    np.testing.assert_allclose(compiled, reference_state(n, operations(n, angles)), atol=1e-12)


def test_under_vmap_the_batch_is_contracted_in_the_program(hosting):
    """A mapped batch is one compiled contraction, not a host callback per member (64 energies of
    10 qubits: 74 ms through the host, 3.3 ms compiled), even past the hosting size."""
    K = hosting
    n, batch = 5, np.random.default_rng(3).uniform(-2, 2, (3, 11))
    with tq.use_backend(K):
        states = K.to_numpy(jax.jit(jax.vmap(lambda a: ladder(n, a).state()))(K.asarray(batch)))
        assert not K.batching()
        assert jax.vmap(lambda x: K.asarray(K.batching()))(K.asarray(batch[:, 0])).all()
    assert K.host_calls == []
    for angles, state in zip(batch, states):
        np.testing.assert_allclose(state, reference_state(n, operations(n, angles)), atol=1e-12)


def test_an_input_state_is_taken_along(hosting):
    K = hosting
    n, angles = 4, np.linspace(0.3, 1.5, 9)
    K.host_program_entries = lambda: 2.0 ** n
    rng = np.random.default_rng(5)
    psi = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    psi /= np.linalg.norm(psi)
    with tq.use_backend(K):
        given = K.asarray(psi)
        compiled = K.to_numpy(jax.jit(lambda a: ladder(n, a, given).state())(K.asarray(angles)))
        eager = K.to_numpy(ladder(n, angles, given).state())
    assert K.host_calls == [(2 ** n,)]
    np.testing.assert_allclose(compiled, eager, atol=1e-12)


def test_derivatives_use_the_contraction_not_the_host(hosting):
    K = hosting
    n, angles = 5, np.linspace(-0.7, 1.1, 11)
    weights = np.arange(2 ** n) / 2 ** n

    def loss(a):
        state = ladder(n, a).state()
        return K.sum(K.real(K.conj(state) * state) * K.asarray(weights))

    with tq.use_backend(K):
        value, grad = jax.jit(jax.value_and_grad(loss))(K.asarray(angles))
    assert K.host_calls == []
    step = 1e-6
    numeric = [(float(loss(angles + step * e)) - float(loss(angles - step * e))) / (2 * step)
               for e in np.eye(len(angles))]
    np.testing.assert_allclose(K.to_numpy(grad), numeric, atol=1e-7)


def test_host_computed_differentiates_by_the_traced_function():
    K = make_backend("jax")
    cube = lambda x: x ** 3 * K.asarray([1.0, 2.0])  # noqa: E731
    host = lambda v: v ** 3 * np.array([1.0, 2.0])  # noqa: E731
    f = lambda x: K.host_computed(host, cube, x, (2,), "float64")  # noqa: E731
    x = K.asarray(0.7)
    np.testing.assert_allclose(K.to_numpy(jax.jit(f)(x)), [0.343, 0.686], atol=1e-15)
    np.testing.assert_allclose(K.to_numpy(jax.jit(jax.jacrev(f))(x)), [1.47, 2.94], atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(jax.jacfwd(f)(x)), [1.47, 2.94], atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(jax.hessian(lambda y: f(y)[1])(x)), 12 * 0.7, atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(jax.vmap(f)(K.asarray([1.0, 2.0]))), [[1, 2], [8, 16]], atol=0)


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
def test_elsewhere_host_computed_is_the_traced_function(backend_name):
    K = make_backend(backend_name)
    value = K.host_computed(lambda v: v * 0.0, lambda x: 2 * x, K.asarray([1.5]), (1,), "float64")
    assert K.to_numpy(value).tolist() == [3.0]


def noisy_ladder(n, angles):
    """``ladder``'s gates on a DMCircuit, a depolarizing channel after each rotation."""
    c = tq.DMCircuit(n)
    for q in range(n):
        c.rx(q, theta=angles[q]).depolarizing(q, p=0.05)
        c.rz(q, theta=angles[n + q])
    for q in range(n - 1):
        c.cx(q, q + 1)
    return c.ry(n - 1, theta=angles[2 * n] * 2.0).cz(0, n - 1)


def test_a_compiled_density_matrix_from_the_host_equals_the_compiled_contraction(hosting):
    """Past ``host_program_entries`` a program's contraction (here a density matrix, which has no
    route of its own to the host) runs on the host twin; the values are the compiled contraction's,
    and without noise the dense reference's ``|psi><psi|``."""
    K, n, angles = hosting, 4, np.linspace(-1.2, 0.9, 9)
    with tq.use_backend(K):
        hosted = K.to_numpy(jax.jit(lambda a: noisy_ladder(n, a).state())(K.asarray(angles)))
        pure_state = jax.jit(lambda a: tq.DMCircuit.from_circuit(ladder(n, a)).state())
        pure = K.to_numpy(pure_state(K.asarray(angles)))
        assert K.host_calls == [(4 ** n,), (4 ** n,)]
        K.host_program_entries = lambda: np.inf
        compiled = K.to_numpy(jax.jit(lambda a: noisy_ladder(n, a).state())(K.asarray(angles)))
    assert len(K.host_calls) == 2
    np.testing.assert_allclose(hosted, compiled, atol=1e-12)
    psi = reference_state(n, operations(n, angles))
    np.testing.assert_allclose(pure, np.outer(psi, psi.conj()), atol=1e-12)


def test_below_the_hosting_size_the_program_contracts(hosting):
    K, angles = hosting, np.linspace(-1.2, 0.9, 5)
    with tq.use_backend(K):
        small = K.to_numpy(jax.jit(lambda a: noisy_ladder(2, a).state())(K.asarray(angles)))  # 2^4 entries
        eager = K.to_numpy(noisy_ladder(2, angles).state())
    assert K.host_calls == []
    np.testing.assert_allclose(small, eager, atol=1e-12)


def test_hosted_programs_differentiate_and_map_in_the_program(hosting):
    """Under ``grad`` and ``vmap`` the contraction stays in the program (no callback); the
    gradient matches central differences of the hosted value."""
    K, n = hosting, 3
    angles = np.linspace(-0.7, 1.1, 7)
    weights = np.arange(4 ** n).reshape(2 ** n, 2 ** n) / 4 ** n

    def loss(a):
        return K.sum(K.real(noisy_ladder(n, a).state()) * K.asarray(weights))

    with tq.use_backend(K):
        value, grad = jax.jit(jax.value_and_grad(loss))(K.asarray(angles))
        assert K.host_calls == []
        mapped = jax.jit(jax.vmap(loss))(K.asarray(np.stack([angles, angles[::-1]])))
        assert K.host_calls == []
        hosted = jax.jit(loss)
        step = 1e-6
        numeric = [(float(hosted(K.asarray(angles + step * e))) - float(hosted(K.asarray(angles - step * e))))
                   / (2 * step) for e in np.eye(len(angles))]
        assert K.host_calls == [(4 ** n,)]  # one trace: the program calls the host back each time
        reverse = float(loss(K.asarray(angles[::-1])))
    np.testing.assert_allclose(K.to_numpy(grad), numeric, atol=1e-7)
    np.testing.assert_allclose(K.to_numpy(mapped), [float(value), reverse], atol=1e-12)


def test_from_the_hosting_size_a_state_comes_from_the_host_whatever_the_rates(hosting):
    """Rates that make the compiled contraction cheap play no part: a 6-qubit state (2^6
    amplitudes, the hosting size here) comes from the host's own route."""
    K, n, angles = hosting, 6, np.linspace(-1.2, 0.9, 13)
    tq.set_machine_rates(COMPILED_CHEAP)
    try:
        with tq.use_backend(K):
            compiled = K.to_numpy(jax.jit(lambda a: ladder(n, a).state())(K.asarray(angles)))
    finally:
        tq.set_machine_rates(None)
    assert K.host_calls == [(2 ** n,)]
    np.testing.assert_allclose(compiled, reference_state(n, operations(n, angles)), atol=1e-12)
