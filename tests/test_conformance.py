"""Backend x operation x dtype matrix, with NumPy as the oracle.

Each case computes the same thing with the backend and with plain NumPy on the same inputs and
compares values *and* dtypes (promotion must match NumPy's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

DTYPES = ("complex128", "complex64", "float64", "float32")


def tolerance(dtype: str) -> float:
    return 1e-5 if dtype in ("complex64", "float32") else 1e-10


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.normal(size=shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.normal(size=shape)
    return values.astype(dtype)


def inputs(dtype: str, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "A": random_array(rng, (3, 3), dtype),
        "B": random_array(rng, (3, 3), dtype),
        "W": random_array(rng, (3, 4), dtype),
        "v": random_array(rng, (3,), dtype),
        "w": random_array(rng, (4,), dtype),
        "T": random_array(rng, (2, 3, 4), dtype),
        "S": random_array(rng, (2, 3, 3), dtype),
        "mask": rng.random((3, 3)) > 0.5,
    }


def assert_matches(K, got: Any, expected: np.ndarray, dtype: str) -> None:
    got = K.to_numpy(got)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != oracle's {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape} != oracle's {expected.shape}"
    tol = tolerance(dtype)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[..., Any]  # run(xp_or_backend, inputs) -> array
    oracle: Callable[..., Any] | None = None  # defaults to run(numpy namespace)
    feature: str | None = None  # a key of tests/limitations.py


class NumpyOracle:
    """The oracle: the same calls answered by NumPy directly."""

    matmul, einsum, tensordot, kron, outer = np.matmul, np.einsum, np.tensordot, np.kron, np.outer
    reshape, moveaxis, transpose, stack = np.reshape, np.moveaxis, np.transpose, np.stack
    concatenate, sum, mean, diag, where = np.concatenate, np.sum, np.mean, np.diag, np.where

    @staticmethod
    def take(x, indices, axis=0):
        return np.take(x, indices, axis=axis)

    @staticmethod
    def flip(x, axes):
        return np.flip(x, axis=tuple(axes))

    abs, real, imag, conj, square, sign = np.abs, np.real, np.imag, np.conj, np.square, np.sign
    exp, sin, cos, sqrt, log, log2 = np.exp, np.sin, np.cos, np.sqrt, np.log, np.log2
    solve, inv = np.linalg.solve, np.linalg.inv

    @staticmethod
    def norm(x, ord=None, axis=None, keepdims=False):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


CASES = [
    Case("matmul", lambda k, d: k.matmul(d["A"], d["W"])),
    Case("matmul-batched", lambda k, d: k.matmul(d["S"], d["A"])),
    Case("einsum-matmul", lambda k, d: k.einsum("ij,jk->ik", d["A"], d["W"])),
    Case("einsum-trace", lambda k, d: k.einsum("ii->", d["A"])),
    Case("einsum-ellipsis", lambda k, d: k.einsum("...ij,jk->...ik", d["S"], d["W"])),
    Case("einsum-three", lambda k, d: k.einsum("i,ij,jk->k", d["v"], d["A"], d["W"])),
    Case("tensordot-1", lambda k, d: k.tensordot(d["A"], d["W"], 1)),
    Case("tensordot-pairs", lambda k, d: k.tensordot(d["T"], d["W"], ([1, 2], [0, 1]))),
    Case("kron", lambda k, d: k.kron(d["A"], d["W"])),
    Case("kron-vectors", lambda k, d: k.kron(d["v"], d["w"])),
    Case("outer", lambda k, d: k.outer(d["v"], d["w"])),
    Case("reshape", lambda k, d: k.reshape(d["T"], (4, 6))),
    Case("reshape-infer", lambda k, d: k.reshape(d["T"], (-1,))),
    Case("moveaxis", lambda k, d: k.moveaxis(d["T"], 0, 2)),
    Case("moveaxis-many", lambda k, d: k.moveaxis(d["T"], (0, 1), (2, 0))),
    Case("transpose", lambda k, d: k.transpose(d["T"])),
    Case("transpose-axes", lambda k, d: k.transpose(d["T"], (1, 0, 2))),
    Case("stack", lambda k, d: k.stack([d["A"], d["B"]], 1)),
    Case("concatenate", lambda k, d: k.concatenate([d["A"], d["W"]], 1)),
    Case("sum", lambda k, d: k.sum(d["T"])),
    Case("sum-axis", lambda k, d: k.sum(d["T"], axis=1)),
    Case("sum-axes-keepdims", lambda k, d: k.sum(d["T"], axis=(0, 2), keepdims=True)),
    Case("mean-axis", lambda k, d: k.mean(d["T"], axis=0)),
    Case("norm-vector", lambda k, d: k.norm(d["v"])),
    Case("norm-frobenius", lambda k, d: k.norm(d["A"])),
    Case("norm-rows", lambda k, d: k.norm(d["A"], axis=1)),
    Case("norm-matrix-2", lambda k, d: k.norm(d["A"], ord=2), feature="norm-matrix-2"),
    Case("diag-vector", lambda k, d: k.diag(d["v"])),
    Case("diag-offset", lambda k, d: k.diag(d["v"], 1)),
    Case("diag-matrix", lambda k, d: k.diag(d["A"])),
    Case("where", lambda k, d: k.where(d["mask"], d["A"], d["B"])),
    Case("take-rows", lambda k, d: k.take(d["A"], [2, 0, 2])),
    Case("take-axis", lambda k, d: k.take(d["T"], [1, 0], axis=2)),
    Case("take-grid", lambda k, d: k.take(d["T"], [[1, 0], [0, 0], [1, 1]], axis=-1)),
    Case("flip-axes", lambda k, d: k.flip(d["T"], (0, 2))),
    Case("flip-axis", lambda k, d: k.flip(d["A"], [1])),
    Case("abs", lambda k, d: k.abs(d["A"])),
    Case("real", lambda k, d: k.real(d["A"])),
    Case("imag", lambda k, d: k.imag(d["A"])),
    Case("conj", lambda k, d: k.conj(d["A"])),
    Case("square", lambda k, d: k.square(d["A"])),
    Case("sign", lambda k, d: k.sign(d["A"])),
    Case("exp", lambda k, d: k.exp(d["A"])),
    Case("sin", lambda k, d: k.sin(d["A"])),
    Case("cos", lambda k, d: k.cos(d["A"])),
    Case("sqrt", lambda k, d: k.sqrt(k.abs(d["A"]))),
    Case("log", lambda k, d: k.log(k.abs(d["A"]))),
    Case("log2", lambda k, d: k.log2(k.abs(d["A"]))),
    Case("solve", lambda k, d: k.solve(d["A"], d["v"])),
    Case("solve-matrix", lambda k, d: k.solve(d["A"], d["W"])),
    Case("inv", lambda k, d: k.inv(d["A"])),
    Case("matmul-conj", lambda k, d: k.matmul(k.conj(k.transpose(d["A"])), d["A"])),
]


def _to_backend(K, data: dict[str, np.ndarray]) -> dict[str, Any]:
    return {key: K.asarray(value) for key, value in data.items()}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_operation_matches_numpy(K, require, case: Case, dtype: str):
    if case.feature:
        require(case.feature)
    data = inputs(dtype)
    expected = (case.oracle or case.run)(NumpyOracle, data)
    got = case.run(K, _to_backend(K, data))
    assert_matches(K, got, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("wide", [False, True])
def test_svd_reconstructs_and_matches_singular_values(K, dtype, wide):
    data = inputs(dtype)
    a = data["W"] if wide else data["W"].T  # 3 x 4 or 4 x 3
    u, s, vh = (K.to_numpy(x) for x in K.svd(K.asarray(a), full_matrices=False))
    tol = tolerance(dtype) * 10
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol)
    np.testing.assert_allclose((u * s) @ vh, a, rtol=tol, atol=tol)
    assert s.dtype == np.linalg.svd(a, compute_uv=False).dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_full_matrices_is_unitary(K, dtype):
    a = inputs(dtype)["W"]  # 3 x 4
    u, s, vh = (K.to_numpy(x) for x in K.svd(K.asarray(a), full_matrices=True))
    tol = tolerance(dtype) * 10
    assert u.shape == (3, 3) and vh.shape == (4, 4)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(4), atol=tol)
    np.testing.assert_allclose((u * s) @ vh[:3], a, atol=tol)


@pytest.mark.parametrize("wide", [False, True])
def test_svd_defaults_to_the_reduced_factors(K, wide):
    """As upstream TyxonQ's backends and tensorcircuit: ``K.svd(a)`` is ``full_matrices=False``."""
    a = inputs("complex128")["W"]  # 3 x 4
    a = a if wide else a.T
    u, s, vh = (K.to_numpy(x) for x in K.svd(K.asarray(a)))
    assert u.shape == (a.shape[0], 3) and s.shape == (3,) and vh.shape == (3, a.shape[1])
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_reconstructs(K, dtype):
    a = inputs(dtype)["W"].T
    q, r = (K.to_numpy(x) for x in K.qr(K.asarray(a)))
    tol = tolerance(dtype) * 10
    assert q.shape == (4, 3) and r.shape == (3, 3)
    np.testing.assert_allclose(q @ r, a, atol=tol)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(3), atol=tol)
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=tol)


def test_qr_complete_mode(K, require):
    require("qr-complete")
    a = inputs("complex128")["W"].T
    q, r = (K.to_numpy(x) for x in K.qr(K.asarray(a), mode="complete"))
    assert q.shape == (4, 4) and r.shape == (4, 3)
    np.testing.assert_allclose(q @ r, a, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_of_hermitian_matrix(K, dtype):
    a = inputs(dtype)["A"]
    hermitian = a + a.conj().T
    values, vectors = (K.to_numpy(x) for x in K.eigh(K.asarray(hermitian)))
    tol = tolerance(dtype) * 10
    np.testing.assert_allclose(values, np.linalg.eigvalsh(hermitian), atol=tol)
    np.testing.assert_allclose(vectors @ np.diag(values) @ vectors.conj().T, hermitian, atol=tol)
    assert values.dtype == np.linalg.eigvalsh(hermitian).dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_is_complex_and_diagonalises(K, dtype):
    a = inputs(dtype)["A"]
    values, vectors = (K.to_numpy(x) for x in K.eig(K.asarray(a)))
    assert values.dtype.kind == "c" and vectors.dtype.kind == "c"
    tol = tolerance(dtype) * 100
    np.testing.assert_allclose(a @ vectors, vectors * values, atol=tol)
    np.testing.assert_allclose(np.sort_complex(values), np.sort_complex(np.linalg.eigvals(a)),
                               atol=tol)


@pytest.mark.parametrize("dtype", ["complex128", "float64"])
def test_expm_matches_scipy(K, dtype):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    for scale in (0.1, 1.0, 30.0):  # 30 forces scaling and squaring
        a = inputs(dtype)["A"] * scale
        got = K.to_numpy(K.expm(K.asarray(a)))
        expected = scipy_linalg.expm(a)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


def test_expm_of_hermitian_generator_is_unitary(K):
    a = inputs("complex128")["A"]
    hermitian = a + a.conj().T
    u = K.to_numpy(K.expm(K.asarray(-1j * hermitian)))
    np.testing.assert_allclose(u @ u.conj().T, np.eye(3), atol=1e-12)


# -- creation -------------------------------------------------------------------------------

CREATION = [
    ("zeros", lambda k: k.zeros((2, 3)), np.zeros((2, 3), complex)),
    ("zeros-int-shape", lambda k: k.zeros(4), np.zeros(4, complex)),
    ("ones-float", lambda k: k.ones((2,), dtype="float64"), np.ones(2)),
    ("eye", lambda k: k.eye(3), np.eye(3, dtype=complex)),
    ("eye-offset", lambda k: k.eye(3, 4, k=1, dtype="float64"), np.eye(3, 4, 1)),
    ("eye-negative-offset", lambda k: k.eye(3, k=-1, dtype="float32"), np.eye(3, k=-1, dtype=np.float32)),
    ("arange", lambda k: k.arange(5), np.arange(5)),
    ("arange-float", lambda k: k.arange(0.5, 3.0, 0.5), np.arange(0.5, 3.0, 0.5)),
    ("linspace", lambda k: k.linspace(0, 1, 5), np.linspace(0, 1, 5)),
    ("linspace-open", lambda k: k.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
    ("array-python-complex", lambda k: k.array([1j, 2.0]), np.array([1j, 2.0])),
    ("array-python-float", lambda k: k.asarray([[0.5, 1.5]]), np.array([[0.5, 1.5]])),
    ("array-python-int", lambda k: k.asarray([1, 2]), np.array([1, 2])),
    ("array-explicit-dtype", lambda k: k.asarray([1, 2], dtype="complex64"), np.array([1, 2], np.complex64)),
    ("zeros-like", lambda k: k.zeros_like(k.asarray(np.ones(3, np.float32))), np.zeros(3, np.float32)),
    ("ones-like-dtype", lambda k: k.ones_like(k.asarray(np.ones(3)), dtype="int32"), np.ones(3, np.int32)),
    ("cast", lambda k: k.cast(k.asarray(np.arange(3)), "complex64"), np.arange(3).astype(np.complex64)),
    ("bincount", lambda k: k.bincount(k.asarray([0, 2, 2, 5])), np.bincount([0, 2, 2, 5])),
    ("bincount-weights", lambda k: k.bincount(k.asarray([0, 2, 2]), k.asarray([0.5, 1.0, 2.0]), minlength=4),
     np.bincount([0, 2, 2], [0.5, 1.0, 2.0], minlength=4)),
]


@pytest.mark.parametrize("name,run,expected", CREATION, ids=[c[0] for c in CREATION])
def test_creation_matches_numpy(K, name, run, expected):
    assert_matches(K, run(K), expected, "float64")


def test_nonzero_matches_numpy(K):
    x = np.array([[0, 1.5], [2.0, 0]])
    got = K.nonzero(K.asarray(x))
    expected = np.nonzero(x)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(K.to_numpy(g), e)


def test_dtype_constants_are_the_library_dtypes(K):
    names = ("complex64", "complex128", "float32", "float64", "int8", "int32", "int64", "bool")
    for name in names:
        array = K.zeros(2, dtype=getattr(K, name))
        assert K.to_numpy(array).dtype == np.dtype(name)
        assert K.to_numpy(K.zeros(2, dtype=name)).dtype == np.dtype(name)


# -- hypothesis: random shapes, dtypes and values --------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from conftest import BACKEND_IDS, make_backend  # noqa: E402

UNARY = ["abs", "real", "imag", "conj", "square", "sign", "exp", "sin", "cos"]


# Subnormal inputs are left out: XLA flushes them to zero on CPU (jnp.sign(5e-324j) is 0, not 1j),
# and single precision turns anything below 1e-38 subnormal. Zero itself stays in.
NORMAL_FLOATS = st.floats(-4, 4).map(lambda x: 0.0 if abs(x) < 1e-30 else x)


@st.composite
def arrays_of_any_dtype(draw, min_dims=0, max_dims=4):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=4))
    real = draw(hnp.arrays(np.float64, shape, elements=NORMAL_FLOATS))
    imag = draw(hnp.arrays(np.float64, shape, elements=NORMAL_FLOATS))
    values = real + 1j * imag if dtype.startswith("complex") else real
    return values.astype(dtype), dtype


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@settings(max_examples=30, deadline=None)
@given(data=arrays_of_any_dtype(), op=st.sampled_from(UNARY), axis_seed=st.integers(0, 10))
def test_random_arrays_through_elementwise_and_reductions(backend_name, data, op, axis_seed):
    K = make_backend(backend_name)
    x, dtype = data
    assert_matches(K, getattr(K, op)(K.asarray(x)), getattr(np, op)(x), dtype)
    axis = axis_seed % x.ndim if x.ndim else None
    assert_matches(K, K.sum(K.asarray(x), axis=axis), np.sum(x, axis=axis), dtype)
    assert_matches(K, K.reshape(K.asarray(x), (-1,)), x.reshape(-1), dtype)
    assert_matches(K, K.transpose(K.asarray(x)), np.transpose(x), dtype)


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@settings(max_examples=30, deadline=None)
@given(
    left=arrays_of_any_dtype(min_dims=1, max_dims=3),
    right_dtype=st.sampled_from(DTYPES),
    extra=st.integers(1, 3),
    seed=st.integers(0, 2 ** 16),
)
def test_random_contractions_promote_and_match(backend_name, left, right_dtype, extra, seed):
    """tensordot / einsum of the last axis of a random array with a random matrix."""
    K = make_backend(backend_name)
    x, dtype = left
    y = random_array(np.random.default_rng(seed), (x.shape[-1], extra), right_dtype)
    expected = np.tensordot(x, y, 1)
    single = {np.dtype(np.float32), np.dtype(np.complex64)} & {x.dtype, y.dtype}
    tol_dtype = "float32" if single else str(expected.dtype)
    assert_matches(K, K.tensordot(K.asarray(x), K.asarray(y), 1), expected, tol_dtype)
    letters = "abc"[: x.ndim - 1]
    subscripts = f"{letters}z,zy->{letters}y"
    expected = np.einsum(subscripts, x, y)
    assert_matches(K, K.einsum(subscripts, K.asarray(x), K.asarray(y)), expected, tol_dtype)


def test_jit_returns_an_equivalent_function(K):
    f = lambda x: K.sum(K.sin(x))  # noqa: E731
    x = K.asarray([0.1, 0.2])
    assert K.to_numpy(K.jit(f)(x)) == pytest.approx(K.to_numpy(f(x)))
    if K.capabilities.jit == "none":
        assert K.jit(f) is f


def test_requires_grad_and_detach(K, backend_id):
    x = K.requires_grad(K.asarray([1.0, 2.0]))
    if backend_id.startswith("pytorch"):
        assert x.requires_grad and not K.detach(x * 2).requires_grad
        assert not K.requires_grad(x, False).requires_grad
    else:
        np.testing.assert_array_equal(K.to_numpy(K.detach(x)), [1.0, 2.0])


PIECES = [((32,), (8,), (16,)), ((2, 4, 4), (1, 2, 0), (1, 2, 4)), ((4, 2, 4), (0, 1, 1), (4, 1, 3))]


@pytest.mark.parametrize("view,starts,sizes", PIECES)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_pieces_are_read_and_written_without_a_second_array(K, backend_id, dtype, view, starts, sizes):
    """read_piece equals NumPy's slice; write_piece updates in place (NumPy, PyTorch: the same
    array) or into the donated buffer (JAX: the input is gone) where updates_in_pieces says so,
    and refuses elsewhere, naming what to do instead."""
    rng = np.random.default_rng(3)
    original = random_array(rng, (32,), dtype)
    value = random_array(rng, sizes, dtype)
    blocks = tuple(slice(start, start + size) for start, size in zip(starts, sizes))
    array = K.asarray(original.copy())
    assert_matches(K, K.read_piece(array, view, starts, sizes), original.reshape(view)[blocks], dtype)
    expected = original.copy()
    expected.reshape(view)[blocks] = value
    if not K.updates_in_pieces(array):
        assert backend_id.startswith("cupynumeric")
        with pytest.raises(ValueError, match=r"updates_in_pieces is False\): compute the whole array"):
            K.write_piece(array, view, starts, K.asarray(value))
        return
    updated = K.write_piece(array, view, starts, K.asarray(value))
    assert_matches(K, updated, expected, dtype)
    if backend_id == "jax":
        assert array.is_deleted()  # donated: XLA wrote into its buffer
    else:
        assert updated is array
