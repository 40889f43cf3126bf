"""tq.value_and_grad by an exact method (adjoint, parameter shift) on PyTorch computes on the NumPy
host twin in PyTorch's place where every argument is a CPU tensor autograd does not track and the
function runs there: the same values and gradients as PyTorch's own path (a gradient node inside
autograd), handed back as tensors. Tracked arguments, torch operations and ``has_aux`` keep PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tyxonq as tq
from conftest import make_backend, recording

START = [0.3, -0.7, 1.1]


def energy(t):
    c = tq.Circuit(3)
    c.ry(0, t[0]).cx(0, 1).rx(1, t[1]).cx(1, 2).ry(2, t[2])
    return c.expectation_ps(z=[2]) + 0.5 * c.expectation_ps(x=[0], z=[1])


@pytest.fixture(params=["complex128", "complex64"])
def K(request):
    backend = make_backend("pytorch", dtype=request.param)
    with tq.use_backend(backend):
        yield backend


def tolerance(K):
    return 1e-10 if K.precision == "complex128" else 1e-5


def autograd_reference(K, objective, params):
    value, gradient = tq.value_and_grad(objective, method="autograd")(K.requires_grad(K.asarray(params)))
    return float(K.to_numpy(value)), K.to_numpy(gradient)


@pytest.mark.parametrize("method", ["adjoint", "parameter-shift"])
def test_untracked_tensors_compute_on_the_twin_with_autograds_values(K, method):
    seen = []
    params = K.asarray(START, K.real_dtype)
    value, gradient = tq.value_and_grad(recording(energy, seen), method=method)(params)
    assert seen == ["numpy"]
    assert isinstance(value, torch.Tensor) and isinstance(gradient, torch.Tensor)
    assert gradient.dtype == params.dtype and gradient.shape == params.shape
    expected_value, expected_gradient = autograd_reference(K, energy, START)
    assert abs(float(value) - expected_value) < tolerance(K)
    np.testing.assert_allclose(K.to_numpy(gradient), expected_gradient, atol=tolerance(K))


def test_a_function_of_torch_operations_is_tried_on_the_twin_once_then_runs_on_pytorch(K):
    seen = []

    def with_torch(t):
        seen.append(tq.get_backend().name)
        return energy(t) + torch.sin(t[0])  # a NumPy array on the twin: torch.sin refuses it

    evaluate = tq.value_and_grad(with_torch)
    params = K.asarray(START, K.real_dtype)
    first = evaluate(params)
    assert seen == ["numpy", "pytorch"]
    second = evaluate(params)
    assert seen == ["numpy", "pytorch", "pytorch"]  # decided once per function
    expected_value, expected_gradient = autograd_reference(K, with_torch, START)
    for value, gradient in (first, second):
        assert abs(float(value) - expected_value) < tolerance(K)
        np.testing.assert_allclose(K.to_numpy(gradient), expected_gradient, atol=tolerance(K))


def test_tracked_arguments_and_aux_keep_pytorchs_gradient_nodes(K):
    seen = []
    tracked = K.requires_grad(K.asarray(START, K.real_dtype))
    tq.value_and_grad(recording(energy, seen))(tracked)
    assert seen == ["pytorch"]
    seen.clear()

    def with_aux(t):
        return recording(energy, seen)(t), {"angle": t[0]}

    (value, aux), gradient = tq.value_and_grad(with_aux, has_aux=True)(K.asarray(START, K.real_dtype))
    assert seen == ["pytorch"] and isinstance(aux["angle"], torch.Tensor)
    assert abs(float(value) - autograd_reference(K, energy, START)[0]) < tolerance(K)


def test_an_error_on_the_first_twin_call_is_pytorchs_own(K):
    def broken(t):
        return energy(t[:2])  # three angles needed: fails on the twin and on PyTorch alike

    with pytest.raises(Exception) as on_pytorch:
        tq.value_and_grad(broken, method="autograd")(K.requires_grad(K.asarray(START, K.real_dtype)))
    with pytest.raises(type(on_pytorch.value)):
        tq.value_and_grad(broken)(K.asarray(START, K.real_dtype))


def mps_energy(t, max_bond):
    c = tq.MPSCircuit(4, max_bond=max_bond, cutoff=0.0)
    for q in range(4):
        c.ry(q, theta=t[q])
    for q in range(3):
        c.rzz(q, q + 1, theta=t[4 + q])
    for q in range(4):
        c.rx(q, theta=t[7 + q])
    return c.expectation(tq.hamiltonians.tfim(4))


@pytest.mark.parametrize("max_bond", [None, 1])
def test_an_mps_gradient_is_pytorchs_autograd_through_the_mps(K, max_bond):
    """PyTorch differentiates an MPSCircuit by autograd through the MPS (faster than NumPy's
    adjoint method, and a truncating simulation's own derivative, which NumPy's parameter shift is
    not): the twin refuses such an objective, which then runs on PyTorch."""
    seen = []
    params = np.random.default_rng(3).uniform(-1, 1, 11)
    objective = recording(lambda t: mps_energy(t, max_bond), seen)
    value, gradient = tq.value_and_grad(objective)(K.asarray(params, K.real_dtype))
    assert seen == ["numpy", "pytorch"]
    seen.clear()
    expected_value, expected_gradient = autograd_reference(K, objective, params)
    assert abs(float(value) - expected_value) < tolerance(K)
    np.testing.assert_allclose(K.to_numpy(gradient), expected_gradient, atol=tolerance(K))


def test_a_state_larger_than_pytorch_hands_its_twin_is_swept_by_pytorch(K, monkeypatch):
    """PyTorch computes states of up to host_twin_entries() amplitudes on its twin (its threaded
    kernels are faster above): a whole function on the twin refuses a larger sweep and runs on
    PyTorch, with the same values."""
    monkeypatch.setattr(type(K), "host_twin_entries", lambda self: 2.0 ** 2)
    monkeypatch.setattr(K, "_draw_free_twin", None, raising=False)  # made again with this limit
    seen = []
    params = K.asarray(START, K.real_dtype)
    value, gradient = tq.value_and_grad(recording(energy, seen))(params)
    assert seen == ["numpy", "pytorch"]
    expected_value, expected_gradient = autograd_reference(K, energy, START)
    assert abs(float(value) - expected_value) < tolerance(K)
    np.testing.assert_allclose(K.to_numpy(gradient), expected_gradient, atol=tolerance(K))
