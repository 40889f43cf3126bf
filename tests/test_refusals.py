"""Refusals under the memory budget: decided the same way on every backend, every route (the
untruncated MPS a local result falls back to included) held to the budget, and a refusal reached
without searching for what cannot succeed."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch"])
def test_a_gradient_under_a_tiny_memory_limit_is_refused_on_every_backend(backend_id):
    """Under 128 bytes a 10-qubit energy gradient was refused on NumPy and computed on PyTorch,
    whose exact-MPS fallback ignored the limit."""
    K = make_backend(backend_id)
    h = tq.hamiltonians.tfim(10)

    def energy(params):
        return tq.templates.hardware_efficient(10, params, 2).expectation(h)

    with tq.use_backend(K), tq.use_memory_limit("128 B"):
        with pytest.raises(MemoryError):
            tq.value_and_grad(energy)(K.asarray(np.linspace(0.1, 1.0, 30)))
    with tq.use_backend(K):  # without the limit it is computed
        value, _ = tq.value_and_grad(energy)(K.asarray(np.linspace(0.1, 1.0, 30)))
        assert np.isfinite(float(value))


def test_the_exact_mps_route_respects_the_memory_limit():
    """The untruncated MPS a refused local result falls back to is held to the budget: its sites
    (three times over, a gate's split holding two) must fit, else no MPS is offered."""
    c = tq.templates.brickwork(24, np.linspace(-1, 1, 24 * 4), 4)
    mps = c._exact_mps()
    bonds = [1] + mps.bond_dimensions() + [1]
    needed = 3 * 16 * sum(2 * left * right for left, right in zip(bonds, bonds[1:]))
    with tq.use_memory_limit(f"{needed} B"):
        assert c._exact_mps() is not None
    with tq.use_memory_limit(f"{needed - 16} B"):
        assert c._exact_mps() is None


def test_a_hopeless_slicing_is_refused_without_a_search(monkeypatch):
    """A 25-qubit depth-30 amplitude under 128 bytes would need 2^18 slices at least: refused at
    once (before: a cotengra slicing search of 17-95 s first)."""
    import tyxonq.circuit.base as base

    def no_search(*args, **kwargs):
        raise AssertionError("a slicing search was run")

    rng = np.random.default_rng(1)
    c = tq.templates.brickwork(25, rng.uniform(-1, 1, 25 * 30), 30)
    c.rehearse("amplitude", 0)  # the plan, made once outside the limit
    monkeypatch.setattr(base, "find_slicing", no_search)
    with tq.use_memory_limit("128 B"), pytest.raises(MemoryError, match=r"at least \d+ slices") as refusal:
        c.amplitude(0)
    # the count depends on the path found (a backend's max_ndim shapes it): never fewer than 2^18
    assert int(re.search(r"at least (\d+) slices", str(refusal.value)).group(1)) >= 2**18
