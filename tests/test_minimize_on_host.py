"""tq.optimize.minimize on PyTorch (and JAX uncompiled) evaluates the objective on the NumPy host twin
in the backend's place, where it can run there: the same trajectory as on NumPy and on the backend
itself. An objective that cannot (torch functions, tracked tensors, random draws, autograd asked
for) runs on the backend, with its values, no warning, and is tried on the twin once only."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend, recording
from tyxonq.numerics.host_twin import TwinDrawError, draw_free_twin, host_first

X0 = np.array([0.3, -0.4, 0.8, 0.1])
HAMILTONIAN = tq.hamiltonians.tfim(2)


def energy(t):
    c = tq.Circuit(2)
    c.ry(0, t[0]).ry(1, t[1]).cx(0, 1).rx(0, t[2]).rz(1, t[3])
    return c.expectation(HAMILTONIAN)


def minimised(objective, method="adam", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return tq.optimize.minimize(objective, X0, method=method, maxiter=15, tol=1e-9, progress=False,
                                    **options)


@pytest.fixture(params=["pytorch", "jax"])
def K(request):
    backend = make_backend(request.param)
    with tq.use_backend(backend):
        yield backend


def numpy_reference(method="adam", **options):
    with tq.use_backend(make_backend("numpy")):
        return minimised(energy, method, **options)


@pytest.mark.parametrize("method", ["adam", "sgd", "L-BFGS-B", "COBYLA", "qng"])
def test_the_objective_runs_on_the_host_twin_along_numpys_trajectory(K, method):
    seen = []
    options = {"jit": False} if K.name == "jax" else {}
    got = minimised(recording(energy, seen), method, **options)
    assert set(seen) == {"numpy"}  # every evaluation on the twin
    expected = numpy_reference(method)
    np.testing.assert_allclose(got.history_fun, expected.history_fun, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.x, expected.x, rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", ["adam", "L-BFGS-B"])
def test_the_backends_own_path_gives_the_same_trajectory(method):
    """gradient_method='autograd' keeps PyTorch's autograd: the same values as the twin's adjoint."""
    K = make_backend("pytorch")
    with tq.use_backend(K):
        seen = []
        on_backend = minimised(recording(energy, seen), method, gradient_method="autograd")
        assert set(seen) == {"pytorch"}
        on_twin = minimised(energy, method)
    np.testing.assert_allclose(on_twin.history_fun, on_backend.history_fun, rtol=0, atol=1e-10)
    np.testing.assert_allclose(on_twin.x, on_backend.x, rtol=0, atol=1e-10)


def test_a_truncating_mps_objective_follows_pytorchs_derivative_of_the_truncation():
    """NumPy differentiates a truncating MPS by parameter shift, PyTorch's autograd the truncated
    simulation itself: the twin refuses an MPS gradient, and the run is PyTorch's own."""
    def truncated(t):
        c = tq.MPSCircuit(4, max_bond=1, cutoff=0.0)
        for q in range(4):
            c.ry(q, theta=t[q])
        c.rzz(0, 1, theta=t[0]).rzz(1, 2, theta=t[1]).rzz(2, 3, theta=t[2]).rx(3, theta=t[3])
        return c.expectation(tq.hamiltonians.tfim(4))

    K = make_backend("pytorch")
    with tq.use_backend(K):
        seen = []
        got = minimised(recording(truncated, seen), "adam")
        assert seen[0] == "numpy" and set(seen[1:]) == {"pytorch"}
        expected = minimised(truncated, "adam", gradient_method="autograd")
    np.testing.assert_allclose(got.history_fun, expected.history_fun, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.x, expected.x, rtol=0, atol=1e-10)


def test_an_objective_of_torch_functions_runs_on_pytorch_after_one_try():
    torch = pytest.importorskip("torch")
    K = make_backend("pytorch")

    def with_penalty(t):
        return energy(t) + 0.1 * torch.sum(torch.cos(t))

    with tq.use_backend(K):
        seen = []
        objective = recording(with_penalty, seen)
        got = minimised(objective, "adam")
        assert seen[0] == "numpy" and set(seen[1:]) == {"pytorch"}  # one try on the twin
        seen.clear()
        again = minimised(objective, "adam")
        assert set(seen) == {"pytorch"}  # remembered for this objective
    assert again.history_fun == got.history_fun
    with tq.use_backend(make_backend("numpy")):
        expected = minimised(lambda t: energy(t) + 0.1 * tq.get_backend().sum(tq.get_backend().cos(t)))
    np.testing.assert_allclose(got.history_fun, expected.history_fun, rtol=0, atol=1e-10)


def test_an_objective_reading_a_tracked_tensor_keeps_autograd():
    K = make_backend("pytorch")
    weight = K.requires_grad(K.asarray(0.5, "float64"))
    with tq.use_backend(K):
        seen = []
        got = minimised(recording(lambda t: weight * energy(t), seen), "adam")
    assert set(seen[1:]) == {"pytorch"}
    with tq.use_backend(make_backend("numpy")):
        expected = minimised(lambda t: 0.5 * energy(t))
    np.testing.assert_allclose(got.history_fun, expected.history_fun, rtol=0, atol=1e-10)


def test_random_draws_come_from_the_backends_own_streams():
    """A sampled energy drawn with a seed on PyTorch: the twin refuses the draw, and every
    evaluation samples PyTorch's stream, as without the twin."""
    K = make_backend("pytorch")

    def sampled(t):
        c = tq.Circuit(2).ry(0, t[0]).ry(1, t[1]).cx(0, 1)
        indices = tq.get_backend().to_numpy(c.sample(64, seed=11, format="indices"))
        return float(np.mean(np.array([1.0, -1.0, -1.0, 1.0])[np.asarray(indices)]))  # <ZZ>, sampled

    with tq.use_backend(K):
        seen = []
        got = minimised(recording(sampled, seen), "COBYLA")
        assert seen[0] == "numpy" and set(seen[1:]) == {"pytorch"}
        expected = [sampled(K.asarray(x)) for x in got.history_x]
    assert got.history_fun == expected


def test_the_twin_refuses_draws_of_every_kind():
    twin = draw_free_twin(make_backend("pytorch"))
    for draw in (lambda: twin.rng(3), lambda: twin.normal(size=2), lambda: twin.uniform(size=2),
                 lambda: twin.choice(4, size=2)):
        with pytest.raises(TwinDrawError, match="pytorch's own streams"):
            draw()


def test_an_error_of_the_objective_is_the_backends_error():
    K = make_backend("pytorch")

    def broken(t):
        raise ValueError("objective broke")

    with tq.use_backend(K), pytest.raises(ValueError, match="objective broke"):
        minimised(broken, "adam")


def test_single_precision_stays_single():
    K = make_backend("pytorch", dtype="complex64")
    with tq.use_backend(K):
        seen = []
        got = minimised(recording(energy, seen), "adam")
    assert set(seen) == {"numpy"}
    with tq.use_backend(make_backend("numpy", dtype="complex64")):
        expected = minimised(energy)
    np.testing.assert_allclose(got.history_fun, expected.history_fun, rtol=0, atol=1e-5)


def test_compiled_jax_keeps_its_program():
    K = make_backend("jax")
    with tq.use_backend(K):
        seen = []
        minimised(recording(energy, seen), "adam")
    assert set(seen) == {"jax"}


def test_an_objective_that_ran_on_the_twin_raises_its_own_later_errors():
    """Only a first call that fails moves the objective to the backend: later errors are the
    objective's own, raised once (not retried on PyTorch)."""
    K = make_backend("pytorch")
    calls = []

    def breaks_at_the_third_call(t):
        calls.append(tq.get_backend().name)
        if len(calls) == 3:
            raise RuntimeError("the cluster went away")
        return energy(t)

    with tq.use_backend(K), pytest.raises(tq.optimize.OptimizationInterrupted) as caught:
        minimised(breaks_at_the_third_call, "adam")
    assert calls == ["numpy"] * 3
    assert str(caught.value.__cause__) == "the cluster went away"


def test_a_functions_value_and_gradient_are_routed_apart():
    """host_first decides per key and role: an objective whose value runs on the twin while its
    gradient cannot keeps each on its own backend (the gradient's first failure is not an error)."""
    K = make_backend("pytorch")
    calls = []

    def key():
        """The objective both roles belong to."""

    def value(t):
        calls.append(("value", tq.get_backend().name))
        return t * 2

    def gradient(t):
        calls.append(("gradient", tq.get_backend().name))
        if tq.get_backend().name == "numpy":
            raise TypeError("not on the twin")
        return t * 3

    on_value = host_first(K, value, key=key, role="value")
    on_gradient = host_first(K, gradient, key=key, role="gradient")
    x = K.asarray([1.0], "float64")
    with tq.use_backend(K):
        for _ in range(2):
            assert float(on_value(x)[0]) == 2.0 and float(on_gradient(x)[0]) == 3.0
    assert calls == [("value", "numpy"), ("gradient", "numpy"), ("gradient", "pytorch"),
                     ("value", "numpy"), ("gradient", "pytorch")]
