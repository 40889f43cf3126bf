"""value_and_grad / grad on every backend: analytic derivatives, an independent finite difference,
the complex convention, argnums, has_aux, errors and the finite-difference call count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tyxonq as tq
from conftest import make_backend
from limitations import declared_limitation


def gradient_tolerance(backend_id: str, precision: str) -> float:
    """Autograd is exact to rounding; central differences to ~eps^(2/3)."""
    single = precision == "complex64"
    if declared_limitation(backend_id, "autograd") is None:
        return 1e-5 if single else 1e-12
    return 2e-2 if single else 1e-7


def independent_central_difference(f, x: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """A plain central difference in NumPy, independent of tyxonq's."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        directions = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
        for direction in directions:
            plus, minus = x.copy(), x.copy()
            plus[index] += direction * step
            minus[index] -= direction * step
            grad[index] += direction * (f(plus) - f(minus)) / (2 * step)
    return grad


@pytest.mark.parametrize("precision", ["complex128", "complex64"])
def test_gradient_matches_analytic_derivative(backend_id, precision):
    K = make_backend(backend_id, dtype=precision)
    coefficients = K.asarray([0.3, -1.2, 2.0])

    def f(x):
        return K.sum(coefficients * K.sin(x)) + K.sum(x ** 2) / 2

    x = np.array([0.1, -0.7, 1.3], dtype=K.to_numpy(K.zeros(1, dtype=K.real_dtype)).dtype)
    value, grad = K.value_and_grad(f)(K.asarray(x))
    c = K.to_numpy(coefficients)
    np.testing.assert_allclose(K.to_numpy(value), np.sum(c * np.sin(x)) + np.sum(x ** 2) / 2,
                               rtol=gradient_tolerance(backend_id, precision))
    np.testing.assert_allclose(K.to_numpy(grad), c * np.cos(x) + x,
                               rtol=gradient_tolerance(backend_id, precision),
                               atol=gradient_tolerance(backend_id, precision))
    assert K.to_numpy(grad).dtype == x.dtype  # no silent down- or up-cast


def test_complex_argument_convention(K, backend_id):
    """For real f of complex z: grad = df/dRe z + 1j df/dIm z, on every backend."""
    a = K.asarray([1.5, -0.5])
    b = K.asarray([0.25 - 1j, 2 + 0.5j])

    def f(z):
        return K.sum(a * K.abs(z) ** 2) + K.sum(K.real(K.conj(b) * z))

    z = np.array([0.3 + 0.4j, -1.0 + 2.0j])
    _, grad = K.value_and_grad(f)(K.asarray(z))
    expected = 2 * K.to_numpy(a) * z + K.to_numpy(b)
    np.testing.assert_allclose(K.to_numpy(grad), expected, atol=gradient_tolerance(backend_id, "complex128"))
    # and against an independent finite difference of the same function
    independent = independent_central_difference(lambda v: float(K.to_numpy(f(K.asarray(v)))), z)
    np.testing.assert_allclose(K.to_numpy(grad), independent, atol=1e-6)


def test_argnums_tuple_scalars_and_has_aux(K, backend_id):
    def f(x, y, scale):
        value = scale * K.sum(x * x) * y
        return value, {"y": y}

    x = K.asarray(np.arange(6.0).reshape(2, 3))
    (value, aux), (gx, gy) = K.value_and_grad(f, argnums=(0, 1), has_aux=True)(x, 2.0, 3.0)
    tol = gradient_tolerance(backend_id, "complex128")
    np.testing.assert_allclose(K.to_numpy(value), 3 * 55 * 2)
    np.testing.assert_allclose(K.to_numpy(gx), 3 * 2 * 2 * np.arange(6.0).reshape(2, 3), rtol=tol)
    np.testing.assert_allclose(K.to_numpy(gy), 3 * 55, rtol=tol)
    assert K.shape(gx) == (2, 3) and K.shape(gy) == ()
    assert float(K.to_numpy(aux["y"])) == 2.0


def test_grad_returns_only_gradients(K, backend_id):
    g = K.grad(lambda x: K.sum(x ** 3), argnums=0)(K.asarray([1.0, 2.0]))
    np.testing.assert_allclose(K.to_numpy(g), [3.0, 12.0], rtol=gradient_tolerance(backend_id, "complex128"))
    g, aux = K.grad(lambda x: (K.sum(x ** 2), "aux"), has_aux=True)(K.asarray([1.0]))
    assert aux == "aux"


def test_integer_arguments_are_differentiated_in_the_real_dtype(K):
    _, g = K.value_and_grad(lambda x: K.sum(K.cast(x, K.real_dtype) ** 2)
                            if not K.is_floating(x) else K.sum(x ** 2))(K.asarray([1, 2]))
    assert K.to_numpy(g).dtype == np.float64


def test_keyword_arguments_pass_through(K, backend_id):
    value, g = K.value_and_grad(lambda x, *, power: K.sum(x ** power))(K.asarray([2.0]), power=3)
    np.testing.assert_allclose(K.to_numpy(g), [12.0], rtol=gradient_tolerance(backend_id, "complex128"))


@pytest.mark.parametrize(
    "output, error, words",
    [
        (lambda K, x: K.sum(x) * (1 + 1j), TypeError, "real scalar"),
        (lambda K, x: x * 2, ValueError, "shape (3,)"),
    ],
    ids=["complex-output", "non-scalar-output"],
)
def test_bad_outputs_raise_clear_errors(K, output, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        K.value_and_grad(lambda x: output(K, x))(K.asarray([1.0, 2.0, 3.0]))


def test_bad_argnums_raise(K):
    with pytest.raises(TypeError, match="argnums"):
        K.value_and_grad(lambda x: x, argnums="0")
    with pytest.raises(ValueError, match="out of range"):
        K.value_and_grad(lambda x: K.sum(x), argnums=1)(K.asarray([1.0]))
    with pytest.raises(ValueError, match="repeats"):
        K.value_and_grad(lambda x: K.sum(x), argnums=(0, 0))
    with pytest.raises(TypeError, match="pair"):
        K.value_and_grad(lambda x: K.sum(x), has_aux=True)(K.asarray([1.0]))


def test_finite_difference_uses_the_fewest_calls():
    K = tq.numerics.NumpyBackend()
    calls = []

    def f(x, z):
        calls.append(1)
        return K.sum(x ** 2) + K.sum(K.abs(z) ** 2)

    x = K.asarray(np.ones((2, 3)))
    z = K.asarray(np.ones(2, complex))
    K.value_and_grad(f, argnums=(0, 1))(x, z)
    real_degrees_of_freedom = 6 + 2 * 2
    assert len(calls) == 1 + 2 * real_degrees_of_freedom


@pytest.mark.parametrize("magnitude", [1e-3, 1.0, 1e3])
def test_finite_difference_is_sound_in_float32_at_any_magnitude(magnitude):
    """The step follows eps^(1/3) * max(1, |x|): float32 gradients stay accurate to ~1e-4."""
    K = tq.numerics.NumpyBackend(dtype="complex64")
    x = (np.array([1.0, -2.5, 1.2]) * magnitude).astype(np.float32)
    _, g = K.value_and_grad(lambda v: K.sum(v ** 2) + K.sum(K.sin(v)))(K.asarray(x))
    assert K.to_numpy(g).dtype == np.float32
    x64 = x.astype(np.float64)
    expected = 2 * x64 + np.cos(x64)
    np.testing.assert_allclose(K.to_numpy(g), expected, rtol=1e-3, atol=1e-3)


@settings(max_examples=25, deadline=None)
@given(
    x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                 elements=st.floats(-3, 3)),
    c=st.floats(-2, 2),
)
def test_numpy_and_pytorch_gradients_agree(x, c):
    """Hypothesis: autograd (PyTorch) against finite differences (NumPy) on random inputs."""
    torch_backend = make_backend("pytorch")
    numpy_backend = make_backend("numpy")

    def f(K):
        return lambda v: K.sum(K.exp(c * v) * K.cos(v)) + c * K.sum(v ** 3)

    _, g_torch = torch_backend.value_and_grad(f(torch_backend))(torch_backend.asarray(x))
    _, g_numpy = numpy_backend.value_and_grad(f(numpy_backend))(numpy_backend.asarray(x))
    expected = np.exp(c * x) * (c * np.cos(x) - np.sin(x)) + 3 * c * x ** 2
    np.testing.assert_allclose(torch_backend.to_numpy(g_torch), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_numpy, expected, rtol=1e-7, atol=1e-7)


class TestPyTorchAutograd:
    @pytest.fixture
    def T(self):
        return make_backend("pytorch")

    def test_results_are_tensors_on_the_device(self, T):
        value, grad = T.value_and_grad(lambda x: T.sum(x ** 2))(np.array([1.0, 2.0]))
        assert T.is_array(value) and T.is_array(grad)
        assert str(grad.device) == T.capabilities.device

    def test_gradients_nest(self, T):
        second = T.grad(T.grad(lambda x: x ** 3))
        assert float(second(T.asarray(2.0))) == pytest.approx(12.0)

    def test_gradients_stay_differentiable_for_outer_autograd(self, T):
        x = T.requires_grad(T.asarray(2.0))
        (g,) = (T.grad(lambda v: v ** 3)(x),)
        g.backward()
        assert float(x.grad) == pytest.approx(12.0)

    def test_vmap_of_grad(self, T):
        per_row = T.vmap(T.grad(lambda v: T.sum(T.sin(v))))
        x = T.asarray(np.arange(6.0).reshape(3, 2))
        np.testing.assert_allclose(T.to_numpy(per_row(x)), np.cos(np.arange(6.0).reshape(3, 2)))

    def test_no_finite_difference_fallback_on_error(self, T):
        def broken(x):
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            T.value_and_grad(broken)(T.asarray([1.0]))


def test_top_level_value_and_grad_follows_the_active_backend():
    f = tq.value_and_grad(lambda x: (x * 3.0) ** 2)
    with tq.use_backend("numpy"):
        value, grad = f(1.0)
        assert isinstance(grad, np.ndarray)
    pytest.importorskip("torch")
    with tq.use_backend("pytorch") as T:
        value, grad = f(1.0)
        assert T.is_array(grad) and float(grad) == pytest.approx(18.0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_reduced_svd_gradient_matches_finite_differences(K, backend_id, shape):
    """A loss of singular vectors that ignores their phases (like every MPS quantity): the
    broadened SVD derivative is exact away from degeneracies."""
    rng = np.random.default_rng(sum(shape))
    a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    weights = rng.normal(size=shape) + 1j * rng.normal(size=shape)

    def loss(x):
        u, s, vh = K.svd(x, full_matrices=False)
        kept = (u[:, :2] * K.sin(s[:2])) @ vh[:2]
        return K.real(K.sum(kept * K.asarray(weights))) + K.sum(s ** 3)

    def reference_loss(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return np.real(np.sum(((u[:, :2] * np.sin(s[:2])) @ vh[:2]) * weights)) + np.sum(s ** 3)

    _, grad = K.value_and_grad(loss)(K.asarray(a))
    reference = independent_central_difference(reference_loss, a)
    np.testing.assert_allclose(K.to_numpy(grad), reference, atol=1e-6)


def test_reduced_svd_gradient_is_finite_at_degenerate_singular_values(K, backend_id):
    """A Bell pair's two equal singular values, and zeros: the textbook derivative divides by
    their differences (inf, nan); the broadened one stays finite."""
    if declared_limitation(backend_id, "autograd") is not None:
        pytest.skip("finite differences need no SVD derivative")
    bell = np.zeros((4, 4), dtype=complex)
    bell[0, 0] = bell[1, 1] = 1 / np.sqrt(2)

    def loss(x):
        u, s, vh = K.svd(x, full_matrices=False)
        return K.real(K.sum(u[:, :1] * s[0] * vh[:1]))

    _, grad = K.value_and_grad(loss)(K.asarray(bell))
    assert np.all(np.isfinite(K.to_numpy(grad)))


@pytest.mark.parametrize("shape, rank", [((6, 4), 4), ((6, 4), 2), ((4, 6), 3), ((5, 5), 2)])
def test_svd_split_value_and_gradient(K, backend_id, shape, rank):
    """``U_r @ W_r`` is the best rank-r approximation; the gradient of a loss that ignores the
    gauge on the kept bond matches finite differences, kept or truncated."""
    rng = np.random.default_rng(rank + shape[0])
    a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    weights = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    probe = rng.normal(size=(shape[1], 2))

    def split(x, svd):
        u, s, vh = svd(x)
        return u[:, :rank], s[:rank, None] * vh[:rank]

    u, w, s = K.svd_split(K.asarray(a), lambda values, k: rank)
    best_u, best_w = split(a, lambda x: np.linalg.svd(x, full_matrices=False))
    np.testing.assert_allclose(K.to_numpy(u) @ K.to_numpy(w), best_u @ best_w, atol=1e-10)
    np.testing.assert_allclose(K.to_numpy(s), np.linalg.svd(a, compute_uv=False), atol=1e-10)

    def loss(x):
        u, w, _ = K.svd_split(x, lambda values, k: rank)
        return K.real(K.sum((u @ w) * K.asarray(weights))) + K.sum(K.abs(K.matmul(w, K.asarray(probe))) ** 2)

    def reference_loss(x):
        u, w = split(x, lambda y: np.linalg.svd(y, full_matrices=False))
        return np.real(np.sum((u @ w) * weights)) + np.sum(np.abs(w @ probe) ** 2)

    _, grad = K.value_and_grad(loss)(K.asarray(a))
    np.testing.assert_allclose(K.to_numpy(grad), independent_central_difference(reference_loss, a),
                               atol=2e-6)


def test_svd_split_gradient_is_exact_at_degenerate_kept_values(K, backend_id):
    """A Bell pair's equal singular values, both kept: no denominator couples them."""
    if declared_limitation(backend_id, "autograd") is not None:
        pytest.skip("finite differences need no SVD derivative")
    bell = np.zeros((4, 4), dtype=complex)
    bell[0, 0] = bell[1, 1] = 1 / np.sqrt(2)
    direction = np.random.default_rng(3).normal(size=(4, 4))

    def loss(x):
        u, w, _ = K.svd_split(x, lambda values, k: 2)
        return K.real(K.sum((u @ w) * K.asarray(direction)))

    def reference_loss(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return np.real(np.sum(((u[:, :2] * s[:2]) @ vh[:2]) * direction))

    _, grad = K.value_and_grad(loss)(K.asarray(bell))
    np.testing.assert_allclose(K.to_numpy(grad), independent_central_difference(reference_loss, bell),
                               atol=1e-8)
