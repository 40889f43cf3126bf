"""vectorize_or_fallback on backends with a host twin (PyTorch, JAX): a batch of circuits whose
parameters the twin reads runs on the twin's lanes; anything else keeps the backend's own vmap,
with the same values, gradients and no warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend
from tyxonq.numerics.lanes import Lanes

ANGLES = np.array([0.5, 1.0, 2.0, -0.7])


def energy(t):
    """<Z> after RX(t): cos(t)."""
    return tq.Circuit(1).rx(0, t).expectation_ps(z=[0])


@pytest.fixture(params=["pytorch", "jax"])
def K(request):
    backend = make_backend(request.param)
    with tq.use_backend(backend):
        yield backend


def quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def test_a_batch_the_twin_reads_runs_on_its_lanes_with_the_vmap_values(K):
    seen = []

    def recorded(t):
        seen.append(type(t))
        return energy(t)

    got = quiet(lambda: tq.vectorize_or_fallback(recorded)(K.asarray(ANGLES)))
    assert seen == [Lanes]  # one call, on lanes
    assert K.is_array(got) and K.dtype_of(got) == K.dtype_of(K.asarray(ANGLES))
    native = tq.vectorize_or_fallback(energy, policy="force")(K.asarray(ANGLES))
    np.testing.assert_allclose(K.to_numpy(got), K.to_numpy(native), rtol=0, atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(got), np.cos(ANGLES), rtol=0, atol=1e-12)


def test_single_precision_comes_back_in_single_precision():
    K = make_backend("pytorch", dtype="complex64")
    with tq.use_backend(K):
        got = tq.vectorize_or_fallback(energy)(K.asarray(ANGLES, "float32"))
    assert K.dtype_of(got) == K.real_dtype
    np.testing.assert_allclose(K.to_numpy(got), np.cos(ANGLES), atol=1e-5)


def test_a_function_of_the_backends_own_operations_keeps_its_vmap_silently():
    K = make_backend("pytorch")
    torch = K.torch
    calls = []

    def through_torch(t):
        calls.append(type(t))
        return energy(torch.sin(t))

    batched = tq.vectorize_or_fallback(through_torch)
    with tq.use_backend(K):
        first = quiet(lambda: batched(K.asarray(ANGLES)))
        second = quiet(lambda: batched(K.asarray(ANGLES)))
    np.testing.assert_allclose(K.to_numpy(first), np.cos(np.sin(ANGLES)), atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(second), K.to_numpy(first), atol=0)
    assert calls[0] is Lanes and Lanes not in calls[1:]  # lanes tried once, then vmap only


def test_tracked_parameters_keep_autograd():
    K = make_backend("pytorch")
    torch = K.torch
    angles = torch.tensor(ANGLES, requires_grad=True)
    with tq.use_backend(K):
        total = tq.vectorize_or_fallback(energy)(angles).sum()
    (gradient,) = torch.autograd.grad(total, angles)
    np.testing.assert_allclose(gradient.numpy(), -np.sin(ANGLES), atol=1e-12)


def test_a_tracked_tensor_the_function_closes_over_keeps_its_gradient():
    K = make_backend("pytorch")
    torch = K.torch
    weight = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    with tq.use_backend(K):
        got = quiet(lambda: tq.vectorize_or_fallback(lambda t: energy(t * weight))(K.asarray(ANGLES)))
    (gradient,) = torch.autograd.grad(got.sum(), weight)
    np.testing.assert_allclose(float(gradient), float(-(ANGLES * np.sin(0.3 * ANGLES)).sum()), atol=1e-12)


def test_mismatched_batches_raise_and_later_batches_still_use_lanes():
    K = make_backend("pytorch")
    seen = []

    def recorded(t, s):
        seen.append(type(t))
        return energy(t * s)

    batched = tq.vectorize_or_fallback(recorded)
    with tq.use_backend(K), pytest.raises(ValueError, match="equal batch sizes"):
        batched(K.asarray(ANGLES), K.asarray(np.ones(3)))
    with tq.use_backend(K):
        got = batched(K.asarray(ANGLES), K.asarray(np.ones(4)))
    assert seen == [Lanes]
    np.testing.assert_allclose(K.to_numpy(got), np.cos(ANGLES), atol=1e-12)


def test_random_draws_come_from_the_backends_own_streams():
    """A batched function that draws from the active backend: the twin refuses the draw, so the
    draws are PyTorch's (its vmap, or the loop after it, with the warning that names the error)."""
    K = make_backend("pytorch")
    drawn_on = []

    def noisy(t):
        drawn_on.append(tq.get_backend().name)
        return energy(t) + 0.0 * tq.get_backend().uniform(size=())

    with tq.use_backend(K), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = tq.vectorize_or_fallback(noisy)(K.asarray(ANGLES))
    assert drawn_on[0] == "numpy" and set(drawn_on[1:]) == {"pytorch"}
    np.testing.assert_allclose(K.to_numpy(got), np.cos(ANGLES), atol=1e-12)
