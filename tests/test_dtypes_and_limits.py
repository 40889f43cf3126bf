"""Explicit dtypes, promotion, capabilities, randomness, cuPyNumeric's compositions and limits."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tyxonq as tq
from conftest import make_backend
from tyxonq.numerics import DimensionLimitError
from tyxonq.numerics.array_module import ArrayModuleBackend
from tyxonq.numerics.compositions import choice_by_inverse_cdf, kron_by_broadcasting
from tyxonq.numerics.cupynumeric_backend import reshape_copy_ndim


@pytest.mark.parametrize("precision, real", [("complex128", "float64"), ("complex64", "float32")])
def test_precision_sets_working_and_python_dtypes(backend_id, precision, real):
    K = make_backend(backend_id, dtype=precision)
    assert K.to_numpy(K.zeros(2)).dtype == np.dtype(precision)
    assert K.to_numpy(K.eye(2)).dtype == np.dtype(precision)
    assert K.to_numpy(K.asarray(0.5)).dtype == np.dtype(real)
    assert K.to_numpy(K.asarray([1j])).dtype == np.dtype(precision)
    assert K.to_numpy(K.linspace(0, 1, 3)).dtype == np.dtype(real)
    assert K.to_numpy(K.normal(size=3)).dtype == np.dtype(real)


def test_arrays_keep_their_dtype_no_silent_downcast(backend_id):
    K = make_backend(backend_id, dtype="complex64")
    assert K.to_numpy(K.asarray(np.ones(2, np.complex128))).dtype == np.complex128
    assert K.to_numpy(K.asarray(np.ones(2, np.float64))).dtype == np.float64


def test_promotion_follows_numpy(K):
    c64 = K.asarray(np.ones((2, 2), np.complex64))
    f64 = K.asarray(np.ones((2, 2), np.float64))
    for result in (K.matmul(c64, f64), K.einsum("ij,jk->ik", c64, f64), K.tensordot(c64, f64, 1),
                   K.kron(c64, f64), K.stack([c64, f64]), K.where(f64 > 0, c64, f64)):
        assert K.to_numpy(result).dtype == np.complex128
    assert K.to_numpy(K.where(f64 > 0, c64, 0.0)).dtype == np.complex64  # Python scalars are weak


def test_cast_refuses_to_drop_imaginary_parts(K):
    with pytest.raises(TypeError, match="imaginary"):
        K.cast(K.asarray([1 + 1j]), "float64")
    assert K.to_numpy(K.cast(K.asarray([1.0]), "float32")).dtype == np.float32


def test_unknown_dtype_is_rejected(K):
    with pytest.raises(TypeError, match="not supported"):
        K.zeros(2, dtype="float16")


def test_capabilities_are_frozen_data(K, backend_id):
    caps = K.capabilities
    with pytest.raises(dataclasses.FrozenInstanceError):
        caps.vmap = "native"
    transforms = backend_id in ("pytorch", "pytorch-cuda", "jax")
    assert caps.autodiff == ("autograd" if transforms else "finite-difference")
    assert caps.vmap == ("native" if transforms else "lanes")
    assert caps.distributed == (not backend_id.startswith("cupynumeric"))  # ranks of tq.distributed
    # cuPyNumeric arrays have at most 6 dimensions, PyTorch's CUDA kernels index at most 25
    expected_ndim = 6 if backend_id.startswith("cupynumeric") else 25 if backend_id == "pytorch-cuda" else 64
    assert caps.max_ndim == expected_ndim
    assert caps.device in caps.devices


def test_seeded_randomness_is_reproducible(backend_id):
    first, second = make_backend(backend_id, seed=11), make_backend(backend_id, seed=11)
    for K in (first, second):
        K._draws = [K.to_numpy(K.normal(size=4)), K.to_numpy(K.uniform(size=4)),
                    K.to_numpy(K.choice(5, size=6)), K.to_numpy(K.normal(size=2, dtype="complex128"))]
    for a, b in zip(first._draws, second._draws):
        np.testing.assert_array_equal(a, b)
    generator_a, generator_b = first.rng(5), first.rng(5)
    np.testing.assert_array_equal(first.to_numpy(first.normal(size=3, rng=generator_a)),
                                  first.to_numpy(first.normal(size=3, rng=generator_b)))


def test_random_shapes_ranges_and_scalars(K):
    assert K.shape(K.normal()) == () and K.shape(K.uniform(size=(2, 3))) == (2, 3)
    u = K.to_numpy(K.uniform(2.0, 3.0, size=1000))
    assert 2.0 <= u.min() and u.max() < 3.0
    z = K.to_numpy(K.normal(1.0, 2.0, size=20000, dtype="complex128"))
    assert abs(z.real.mean() - 1.0) < 0.1 and abs(z.real.std() - 2.0) < 0.1 and abs(z.imag.std() - 2.0) < 0.1
    with pytest.raises(TypeError, match="real"):
        K.uniform(size=2, dtype="complex128")


def chi_square_ok(counts: np.ndarray, probabilities: np.ndarray) -> bool:
    expected = counts.sum() * probabilities
    statistic = float(((counts - expected) ** 2 / expected).sum())
    return statistic < 30.0  # 4 degrees of freedom: p-value < 1e-5 beyond 30


def test_choice_with_probabilities_follows_them(backend_id):
    K = make_backend(backend_id, seed=1)
    p = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    sample = K.to_numpy(K.choice(5, size=20000, p=K.asarray(p)))
    assert chi_square_ok(np.bincount(sample, minlength=5), p)
    population = K.asarray(np.array([10, 20, 30]))
    assert set(K.to_numpy(K.choice(population, size=50)).tolist()) <= {10, 20, 30}


def test_choice_without_replacement_is_distinct(K):
    picked = K.to_numpy(K.choice(10, size=10, replace=False))
    assert sorted(picked.tolist()) == list(range(10))
    picked = K.to_numpy(K.choice(6, size=2, replace=False, p=K.asarray([0.5, 0.5, 0, 0, 0, 0.0])))
    assert sorted(picked.tolist()) == [0, 1]
    with pytest.raises(ValueError):
        K.choice(3, size=4, replace=False)


@settings(max_examples=40, deadline=None)
@given(
    a=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), elements=st.floats(-2, 2)),
    b=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), elements=st.floats(-2, 2)),
)
def test_kron_by_broadcasting_matches_numpy(a, b):
    np.testing.assert_array_equal(kron_by_broadcasting(np, a, b, max_ndim=6), np.kron(a, b))


def test_kron_by_broadcasting_refuses_beyond_the_limit():
    with pytest.raises(DimensionLimitError, match="to at most 3"):
        kron_by_broadcasting(np, np.ones((1,) * 4), np.ones(2), max_ndim=6)


def test_choice_by_inverse_cdf_matches_the_distribution():
    p = np.array([0.05, 0.45, 0.2, 0.1, 0.2])
    sample = choice_by_inverse_cdf(np, np.random.default_rng(3), 5, size=(100, 200), p=p)
    assert sample.shape == (100, 200)
    assert chi_square_ok(np.bincount(sample.ravel(), minlength=5), p)
    with pytest.raises(ValueError, match="sum to 1"):
        choice_by_inverse_cdf(np, np.random.default_rng(3), 2, p=[0.5, 0.6])


@pytest.mark.parametrize(
    "operation",
    [
        lambda K: K.reshape(K.ones(2 ** 7), (2,) * 7),
        lambda K: K.zeros((1,) * 7),
        lambda K: K.einsum("abcdefg->a", np.ones((1,) * 7)),
        lambda K: K.einsum("abc,cdef,fgh->ah", np.ones((1, 1, 1)), np.ones((1,) * 4), np.ones((1,) * 3)),
        lambda K: K.tensordot(K.ones((1,) * 4), K.ones((1,) * 4), 0),
        lambda K: K.stack([K.ones((1,) * 6)] * 2),
        lambda K: K.kron(K.ones((1,) * 4), K.ones((1,) * 4)),
    ],
    ids=["reshape", "zeros", "einsum-7-indices", "einsum-7-indices-pairwise", "tensordot",
         "stack", "kron"],
)
def test_cupynumeric_never_builds_more_than_6_dimensions(operation):
    K = make_backend("cupynumeric-logic")
    with pytest.raises(DimensionLimitError, match="at most 6"):
        operation(K)


def test_six_dimensions_are_fine_on_cupynumeric():
    K = make_backend("cupynumeric-logic")
    assert K.shape(K.reshape(K.ones(64), (2,) * 6)) == (2,) * 6
    assert K.shape(K.einsum("abcdef->fedcba", K.ones((2,) * 6))) == (2,) * 6


@pytest.mark.parametrize("backend_name", ["cupynumeric", "cupynumeric-logic"])
@pytest.mark.parametrize("old, new", [
    ((16, 2, 2, 4), (2, 2, 2, 2, 8, 2)),   # one step would copy in 7 dimensions
    ((4, 2, 2, 16), (2, 8, 2, 2, 2, 2)),   # 7 again, the groups the other way round
    ((2, 8, 8, 2), (4, 4, 4, 4)),          # one step is fine
    ((64, 4), (2, 2, 2, 2, 2, 8)),
    ((16, 2, 2, 4), (2, 2, 2, 2, -1, 2)),  # an inferred size
])
def test_cupynumeric_reshapes_stay_within_6_dimensions(backend_name, old, new, monkeypatch):
    K = make_backend(backend_name)
    steps = []
    original = ArrayModuleBackend.reshape

    def recording(self, x, shape):
        steps.append(reshape_copy_ndim(tuple(x.shape), tuple(shape)))
        return original(self, x, shape)

    monkeypatch.setattr(ArrayModuleBackend, "reshape", recording)
    values = np.arange(np.prod(old), dtype=np.float64).reshape(old)
    for x in (values, np.ascontiguousarray(values.T).T):  # contiguous, and a transposed view
        got = K.to_numpy(K.reshape(K.asarray(x), new))
        np.testing.assert_array_equal(got, x.reshape(new))
    assert K.shape(K.reshape(K.asarray(values), (-1, 2))) == (values.size // 2, 2)
    assert steps and max(steps) <= 6, steps


@pytest.mark.parametrize("text, expected", [
    ("1 GB", 10 ** 9), ("1GB", 10 ** 9), ("1 gb", 10 ** 9), ("2 kB", 2000), ("0.5 MB", 5 * 10 ** 5),
    ("3 TB", 3 * 10 ** 12), ("1.5 GiB", 1.5 * 2 ** 30), ("512mib", 512 * 2 ** 20), ("1 TiB", 2 ** 40),
    (" 7 KiB ", 7 * 1024), ("100 B", 100), ("100b", 100), ("100", 100), ("2 PiB", 2 * 2 ** 50),
])
def test_memory_limits_read_decimal_and_binary_units(text, expected):
    """KB/MB/GB/TB are powers of 1000 and KiB/MiB/GiB/TiB of 1024, in any case, spaced or not."""
    with tq.use_memory_limit(text) as cap:
        assert cap == expected and tq.memory_limit() == expected


@pytest.mark.parametrize("text", ["1 GBB", "lots", "1 gigabyte", "1 Gb/s", "GB", "1.5.2 MB", "-1 MB", "1 G",
                                  ""])
def test_a_memory_limit_in_unknown_units_is_refused_listing_the_units(text):
    with pytest.raises(ValueError, match="limit=") as raised:
        tq.set_memory_limit(text)
    message = str(raised.value)
    assert all(unit in message.split() or unit + "," in message.split()
               for unit in ("B,", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")), message
    assert "1000" in message and "1024" in message and "case" in message
    assert tq.memory_limit() == float("inf")


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False)])
def test_checked_flag_takes_bools(value):
    from tyxonq.numerics.arguments import checked_flag

    assert checked_flag(value, "negate") is bool(value)


@pytest.mark.parametrize("value", ["yes", "no", "False", "", 0, 1, 1.0, None, np.array(True), [True]])
def test_checked_flag_refuses_what_is_only_truthy(value):
    """A flag given as text or a number is refused by name, never read as its truth value."""
    from tyxonq.numerics.arguments import checked_flag

    with pytest.raises(TypeError, match=rf"^final={re.escape(repr(value))} must be True or False; got "):
        checked_flag(value, "final")
