"""vmap and vectorize_or_fallback: same values and shapes under every policy and backend."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend
from limitations import declared_limitation
from tyxonq.numerics import VectorizationFallbackWarning


def test_vmap_in_axes_and_out_axes(K):
    x = K.asarray(np.arange(6.0).reshape(3, 2))
    scale = K.asarray(np.array([1.0, 10.0]))
    batched = K.vmap(lambda row, s: row * s, in_axes=(0, None), out_axes=1)
    got = K.to_numpy(batched(x, scale))
    np.testing.assert_allclose(got, (np.arange(6.0).reshape(3, 2) * [1.0, 10.0]).T)


def test_vmap_over_a_non_leading_axis_with_tuple_outputs(K):
    x = K.asarray(np.arange(6.0).reshape(2, 3))
    batched = K.vmap(lambda col: (K.sum(col), col * 2), in_axes=1)
    total, doubled = batched(x)
    np.testing.assert_allclose(K.to_numpy(total), [3.0, 5.0, 7.0])
    np.testing.assert_allclose(K.to_numpy(doubled), 2 * np.arange(6.0).reshape(2, 3).T)


def test_vmap_rejects_mismatched_batches(K):
    with pytest.raises(ValueError):
        K.vmap(lambda a, b: a + b)(K.ones(2), K.ones(3))


def energy_like(K):
    """Different per-row values and a scalar per row: running once on the batch would be wrong."""
    return lambda row: K.sum(K.cos(row) * K.arange(1.0, 4.0))


@pytest.mark.parametrize("policy", ["off", "auto", "force"])
def test_every_policy_returns_the_loop_values(K, backend_id, policy):
    x = K.asarray(np.random.default_rng(1).normal(size=(5, 3)))
    expected = np.array([np.sum(np.cos(r) * np.arange(1.0, 4.0)) for r in K.to_numpy(x)])
    batched = tq.vectorize_or_fallback(energy_like(K), backend=K, policy=policy)
    if policy != "off" and declared_limitation(backend_id, "lanes-with-object-arrays"):
        if policy == "force":
            with pytest.raises(TypeError, match="object"):
                batched(x)
            return
        with pytest.warns(VectorizationFallbackWarning, match="object"):
            got = K.to_numpy(batched(x))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # vectorised natively or by lanes
            got = K.to_numpy(batched(x))
    assert got.shape == (5,)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_auto_falls_back_once_with_a_warning_naming_the_error():
    T = make_backend("pytorch")

    def uses_item(row):  # .item() cannot run under torch.func.vmap
        return row * float(row.sum().item())

    batched = tq.vectorize_or_fallback(uses_item, backend=T, policy="auto")
    x = T.asarray(np.arange(6.0).reshape(3, 2))
    with pytest.warns(VectorizationFallbackWarning, match="RuntimeError"):
        first = batched(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = batched(x)
    expected = np.array([r * r.sum() for r in np.arange(6.0).reshape(3, 2)])
    np.testing.assert_allclose(T.to_numpy(first), expected)
    np.testing.assert_allclose(T.to_numpy(second), expected)


def test_force_raises_when_native_vmap_fails():
    T = make_backend("pytorch")
    batched = tq.vectorize_or_fallback(lambda r: r * float(r.sum().item()), backend=T, policy="force")
    with pytest.raises(RuntimeError):
        batched(T.ones((2, 2), dtype="float64"))


def test_unknown_policy_raises():
    with pytest.raises(ValueError, match="policy"):
        tq.vectorize_or_fallback(lambda x: x, policy="sometimes")


def test_default_backend_is_the_active_one_at_call_time():
    batched = tq.vectorize_or_fallback(lambda r: r * 2)
    with tq.use_backend("numpy") as K:
        assert isinstance(batched(K.ones((2, 2))), np.ndarray)
