"""Draws from large distributions looked up in sorted order: the same indices as NumPy's
``Generator.choice`` from the same generator state, and the same samples on JAX as on NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from tyxonq.numerics.array_module import SORTED_DRAWS_ABOVE
from tyxonq.numerics.compositions import searchsorted_in_order


@settings(max_examples=40, deadline=None)
@given(table_size=st.integers(1, 300), draws=st.integers(0, 300), seed=st.integers(0, 2 ** 32 - 1))
def test_searchsorted_in_order_is_searchsorted(table_size, draws, seed):
    rng = np.random.default_rng(seed)
    table = np.cumsum(rng.random(table_size))
    table /= table[-1]
    values = np.concatenate([rng.random(draws), table[rng.integers(0, table_size, 3)]])  # ties too
    np.testing.assert_array_equal(searchsorted_in_order(np, table, values),
                                  np.searchsorted(table, values, side="right"))


@pytest.mark.parametrize("shape", [(SORTED_DRAWS_ABOVE,), (50, 300)])
@pytest.mark.parametrize("seed", [0, 7])
def test_large_draws_equal_numpys_choice(shape, seed):
    K = tq.get_backend("numpy")
    n = 2 ** 14
    p = np.random.default_rng(seed).random(n) ** 4
    p /= p.sum()
    p[::7] = 0.0  # outcomes that must never be drawn
    p /= p.sum()
    drawn = K.to_numpy(K.choice(n, size=shape, p=p, rng=np.random.default_rng(seed)))
    np.testing.assert_array_equal(drawn, np.random.default_rng(seed).choice(n, size=shape, p=p))
    assert drawn.shape == shape and not np.any(drawn % 7 == 0)


@pytest.mark.parametrize("p, match", [(-np.ones(2 ** 13) / 2 ** 13, "non-negative"),
                                      (np.ones(2 ** 13), "sum to 1"), (np.ones(7) / 7, "8192 entries")])
def test_large_draws_refuse_bad_probabilities(p, match):
    K = tq.get_backend("numpy")
    with pytest.raises(ValueError, match=match):
        K.choice(2 ** 13, size=SORTED_DRAWS_ABOVE, p=p, rng=np.random.default_rng(0))


def test_jax_samples_equal_numpys():
    pytest.importorskip("jax")
    angles = np.random.default_rng(3).uniform(0, 2 * np.pi, 2 * 13 * 2)
    samples = {}
    for name in ("numpy", "jax"):
        with tq.use_backend(name) as K:
            circuit = tq.templates.rotation_ladder(13, K.asarray(angles), 2)
            samples[name] = K.to_numpy(circuit.sample(20000, seed=11, format="indices"))
    np.testing.assert_array_equal(samples["jax"], samples["numpy"])


def test_pytorch_draws_equal_its_search_in_draw_order():
    torch = pytest.importorskip("torch")
    K = tq.get_backend("pytorch")
    n = 2 ** 13
    p = torch.from_numpy(np.random.default_rng(2).random(n) ** 3)
    p[::5] = 0.0  # outcomes that must never be drawn
    p /= p.sum()
    drawn = K.choice(n, size=(40, 250), p=p, rng=torch.Generator().manual_seed(9))
    cdf = torch.cumsum(p, 0)
    uniforms = torch.rand(10000, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    expected = torch.searchsorted(cdf, uniforms * cdf[-1], right=True).clamp_max(n - 1).reshape(40, 250)
    assert drawn.dtype == torch.int64 and torch.equal(drawn, expected)
    assert not bool(torch.any(drawn % 5 == 0))


@pytest.mark.parametrize("backend, module", [("pytorch", "torch"), ("jax", "jax")])
def test_probability_read_on_the_host_equals_the_backends_own(backend, module):
    pytest.importorskip(module)
    angles = np.random.default_rng(4).uniform(0, 2 * np.pi, 2 * 9 * 3)
    with tq.use_backend(backend) as K:
        circuit = tq.templates.rotation_ladder(9, K.asarray(angles), 3)
        state = circuit.state()
        probability = circuit.probability()
        assert K.dtype_of(probability) == K.dtype_of(K.real(state))
        np.testing.assert_allclose(K.to_numpy(probability), np.abs(K.to_numpy(state)) ** 2, atol=1e-14)


def test_pytorch_draws_take_probabilities_autograd_tracks():
    torch = pytest.importorskip("torch")
    K = tq.get_backend("pytorch")
    p = torch.full((2 ** 13,), 2.0 ** -13, dtype=torch.float64, requires_grad=True)
    drawn = K.choice(2 ** 13, size=SORTED_DRAWS_ABOVE, p=p, rng=torch.Generator().manual_seed(1))
    assert drawn.shape == (SORTED_DRAWS_ABOVE,) and int(drawn.min()) >= 0 and int(drawn.max()) < 2 ** 13
