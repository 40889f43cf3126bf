"""The NumPy backend's reduced SVD through NumPy's own ufunc: numpy.linalg.svd's factors to the
bit, its errors, and its answer wherever the direct call does not apply."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tyxonq.numerics import NumpyBackend, direct_svd

DTYPES = ("float32", "float64", "complex64", "complex128")


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(1, 12), columns=st.integers(1, 12), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2 ** 16))
def test_the_factors_are_numpys_to_the_bit(rows, columns, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(rows, columns))
    a = (a + 1j * rng.normal(size=(rows, columns)) if "complex" in dtype else a).astype(dtype)
    got = NumpyBackend(dtype="complex64" if dtype in ("float32", "complex64") else "complex128").svd(a)
    expected = np.linalg.svd(a, full_matrices=False)
    for mine, numpys in zip(got, expected):
        assert mine.dtype == numpys.dtype and mine.shape == numpys.shape
        np.testing.assert_array_equal(mine, numpys)


@pytest.mark.parametrize("a", [np.ones((3, 4, 2)), np.ones((0, 3)), np.arange(6).reshape(2, 3)],
                         ids=["stacked", "empty", "int"])
def test_other_arrays_are_numpys_own_call(a):
    got = direct_svd.reduced_svd(a)
    for mine, numpys in zip(got, np.linalg.svd(a, full_matrices=False)):
        assert mine.dtype == numpys.dtype
        np.testing.assert_array_equal(mine, numpys)


def test_an_unsupported_dtype_raises_numpys_error():
    with pytest.raises(TypeError, match="float16"):
        direct_svd.reduced_svd(np.ones((2, 2), dtype=np.float16))


def test_full_matrices_are_numpys():
    a = np.random.default_rng(1).normal(size=(5, 3))
    u, s, vh = NumpyBackend().svd(a, full_matrices=True)
    assert u.shape == (5, 5) and vh.shape == (3, 3)


def test_a_failed_decomposition_raises_numpys_error_without_a_warning():
    a = np.ones((4, 4))
    a[1, 2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(np.linalg.LinAlgError):
            direct_svd.reduced_svd(a)


def test_without_a_known_ufunc_numpys_call_answers_with_one_warning(monkeypatch):
    monkeypatch.setattr(direct_svd, "_UFUNC", None)
    monkeypatch.setattr(direct_svd, "_warned", [])
    a = np.random.default_rng(2).normal(size=(3, 5))
    with pytest.warns(direct_svd.SlowSVDWarning, match="numpy.linalg.svd"):
        first = direct_svd.reduced_svd(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = direct_svd.reduced_svd(a)
    for one, other, numpys in zip(first, second, np.linalg.svd(a, full_matrices=False)):
        np.testing.assert_array_equal(one, numpys)
        np.testing.assert_array_equal(other, numpys)


def test_numpy_1_names_one_ufunc_per_shape(monkeypatch):
    """NumPy 1 has svd_m_s (fewer rows than columns) and svd_n_s (the others), no svd_s."""
    class Old:
        svd_m_s, svd_n_s = "wide", "tall"

    monkeypatch.setattr(np.linalg, "_umath_linalg", Old, raising=False)
    chosen = direct_svd._ufunc_for()
    assert chosen(2, 3) == "wide" and chosen(3, 2) == "tall" and chosen(2, 2) == "tall"
    monkeypatch.setattr(np.linalg, "_umath_linalg", object(), raising=False)
    assert direct_svd._ufunc_for() is None
