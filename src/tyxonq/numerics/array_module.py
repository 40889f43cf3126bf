"""One implementation of :class:`ArrayBackend` over any NumPy-compatible module.

:class:`~tyxonq.numerics.numpy_backend.NumpyBackend` and
:class:`~tyxonq.numerics.cupynumeric_backend.CuPyNumericBackend` are this class over ``numpy`` and
``cupynumeric``; the latter overrides only what cuPyNumeric lacks.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .arguments import checked_seed
from .autodiff import finite_difference_value_and_grad
from .base import BackendBase
from .capabilities import BackendCapabilities
from .compositions import choice_by_inverse_cdf, kron_by_broadcasting
from .expm import expm_pade13
from .higher_order import finite_difference_hessian, finite_difference_jacobian
from .svd_gradient import choose_rank
from .vectorize import lane_vmap

__all__ = ["ArrayModuleBackend", "einsum_index_count"]


def einsum_index_count(subscripts: str, ndims: Sequence[int]) -> int:
    """Number of distinct indices an einsum iterates over (what bounds its working array).

    ``...`` counts as many indices as the widest operand's ellipsis covers.

    Examples
    --------
    >>> einsum_index_count("ab,bc->ac", [2, 2]), einsum_index_count("...a,a->...", [4, 1])
    (3, 4)
    """
    inputs = subscripts.split("->")[0].split(",")
    letters = {ch for ch in subscripts if ch.isalpha()}
    ellipsis = 0
    for term, ndim in zip(inputs, ndims):
        term = term.strip()
        if "..." in term:
            ellipsis = max(ellipsis, ndim - sum(ch.isalpha() for ch in term))
    return len(letters) + ellipsis


class ArrayModuleBackend(BackendBase):
    """:class:`ArrayBackend` over a NumPy-compatible module ``xp``; no autograd, loop vmap."""

    def __init__(self, xp: Any, capabilities: BackendCapabilities, dtype: Any = "complex128",
                 seed: int | None = None) -> None:
        self.xp = xp
        self.capabilities = capabilities
        self._max_ndim = capabilities.max_ndim
        super().__init__(dtype)
        self._generator = self.rng(seed)

    # -- dtypes ------------------------------------------------------------------------------
    def _library_dtype(self, name: str) -> Any:
        return getattr(self.xp, "bool_" if name == "bool" else name)

    def _dtype_name(self, dtype: Any) -> str:
        return np.dtype(dtype).name

    def dtype_of(self, x: Any) -> Any:
        return self.asarray(x).dtype

    def shape(self, x: Any) -> tuple[int, ...]:
        return tuple(self.asarray(x).shape)

    # -- creation and conversion ---------------------------------------------------------------
    def array(self, obj: Any, dtype: Any = None) -> Any:
        return self.xp.array(obj, dtype=self._creation_dtype(obj, dtype))

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        if dtype is None and isinstance(obj, self.xp.ndarray):
            return obj
        return self.xp.asarray(obj, dtype=self._creation_dtype(obj, dtype))

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def constant(self, value: Any, dtype: Any = None) -> Any:
        """An array for a host constant, safe to cache and reuse across calls and transforms."""
        return self.asarray(np.asarray(value), dtype)

    def is_array(self, x: Any) -> bool:
        return isinstance(x, self.xp.ndarray)

    def readable_scalar(self, x: Any) -> Any:
        """The Python number a one-element array holds, or ``None`` where it cannot be read here
        (a value being traced: inside ``jit`` or ``vmap``).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.get_backend("numpy").readable_scalar(np.float64(0.5))
        0.5
        """
        try:
            return x.item()
        except Exception:  # noqa: BLE001 - a traced value (any library's tracer) has none to read
            return None

    def _shape_tuple(self, shape: Any, operation: str) -> tuple[int, ...]:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self._check_ndim(len(shape), operation)
        return shape

    def zeros(self, shape: Any, dtype: Any = None) -> Any:
        shape = self._shape_tuple(shape, "zeros")
        return self.xp.zeros(shape, dtype=self._resolve_dtype(dtype, self.dtype))

    def ones(self, shape: Any, dtype: Any = None) -> Any:
        shape = self._shape_tuple(shape, "ones")
        return self.xp.ones(shape, dtype=self._resolve_dtype(dtype, self.dtype))

    def zeros_like(self, x: Any, dtype: Any = None) -> Any:
        return self.xp.zeros_like(x, dtype=self._resolve_dtype(dtype))

    def ones_like(self, x: Any, dtype: Any = None) -> Any:
        return self.xp.ones_like(x, dtype=self._resolve_dtype(dtype))

    def eye(self, N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
        return self.xp.eye(N, M, k, dtype=self._resolve_dtype(dtype, self.dtype))

    def arange(self, start: float, stop: float | None = None, step: float = 1,
               dtype: Any = None) -> Any:
        start, stop, step, dtype = self._arange_arguments(start, stop, step, dtype)
        return self.xp.arange(start, stop, step, dtype=dtype)

    def linspace(self, start: float, stop: float, num: int = 50, endpoint: bool = True,
                 dtype: Any = None) -> Any:
        return self.xp.linspace(start, stop, num, endpoint=endpoint,
                                dtype=self._resolve_dtype(dtype, self.real_dtype))

    def cast(self, x: Any, dtype: Any) -> Any:
        x = self.asarray(x)
        target = self._resolve_dtype(dtype)
        self._refuse_complex_to_real(x, target)
        return x.astype(target, copy=False)

    # -- shape and contraction -----------------------------------------------------------------
    def matmul(self, a: Any, b: Any) -> Any:
        if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
            return a.dot(b)  # the same product without matmul's ufunc dispatch (small ones: 2.2 -> 1.2 us)
        return self.xp.matmul(a, b)

    def einsum(self, subscripts: str, *operands: Any) -> Any:
        operands = [self.asarray(op) for op in operands]
        count = einsum_index_count(subscripts, [op.ndim for op in operands])
        self._check_ndim(count, f"einsum {subscripts!r}")
        return self.xp.einsum(subscripts, *operands)

    def tensordot(self, a: Any, b: Any, axes: Any = 2) -> Any:
        a, b = self.asarray(a), self.asarray(b)
        contracted = axes if isinstance(axes, (int, np.integer)) else len(np.atleast_1d(axes[0]))
        self._check_ndim(a.ndim + b.ndim - 2 * int(contracted), "tensordot")
        return self.xp.tensordot(a, b, axes)

    def kron(self, a: Any, b: Any) -> Any:
        # one broadcast product (NumPy's own kron costs ~40 us on 2 x 2 matrices)
        return kron_by_broadcasting(self.xp, a, b, self._max_ndim)

    def outer(self, a: Any, b: Any) -> Any:
        return self.xp.outer(a, b)

    def reshape(self, x: Any, shape: Any) -> Any:
        if type(shape) is tuple and len(shape) <= self._max_ndim and isinstance(x, self.xp.ndarray):
            return x.reshape(shape)  # the hot path: a method call, no argument normalisation
        return self.xp.reshape(x, self._shape_tuple(shape, "reshape"))

    def moveaxis(self, x: Any, source: Any, destination: Any) -> Any:
        return self.xp.moveaxis(x, source, destination)

    def transpose(self, x: Any, axes: Sequence[int] | None = None) -> Any:
        if isinstance(x, self.xp.ndarray) and x.ndim >= 2:
            return x.transpose(axes) if axes is not None else x.transpose()
        x = self.asarray(x)
        if x.ndim < 2:  # nothing to permute (cuPyNumeric aborts on transposing a 0-d array)
            return x
        return self.xp.transpose(x, axes)

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        arrays = [self.asarray(a) for a in arrays]
        self._check_ndim(arrays[0].ndim + 1 if arrays else 1, "stack")
        return self.xp.stack(arrays, axis=axis)

    def concatenate(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        return self.xp.concatenate([self.asarray(a) for a in arrays], axis=axis)

    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self.xp.sum(x, axis=axis, keepdims=keepdims)

    def mean(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self.xp.mean(x, axis=axis, keepdims=keepdims)

    def norm(self, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
        return self.xp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)

    def diag(self, v: Any, k: int = 0) -> Any:
        return self.xp.diag(v, k)

    def where(self, condition: Any, x: Any, y: Any) -> Any:
        return self.xp.where(condition, *self._weak_scalars(x, y))

    def take(self, x: Any, indices: Any, axis: int = 0) -> Any:
        return self.xp.take(x, self.xp.asarray(np.asarray(indices, dtype=np.int64)), axis=axis)

    def flip(self, x: Any, axes: Sequence[int]) -> Any:
        """``x`` with the order of its entries along ``axes`` reversed (NumPy: a view)."""
        return self.xp.flip(x, axis=tuple(axes))

    # -- element-wise --------------------------------------------------------------------------
    def abs(self, x: Any) -> Any:
        return self.xp.abs(x)

    def real(self, x: Any) -> Any:
        return self.xp.real(x)

    def imag(self, x: Any) -> Any:
        return self.xp.imag(x)

    def conj(self, x: Any) -> Any:
        return self.xp.conj(x)

    def square(self, x: Any) -> Any:
        return self.xp.square(x)

    def sign(self, x: Any) -> Any:
        x = self.asarray(x)
        return self._complex_sign(x) if self.is_complex(x) else self.xp.sign(x)

    def exp(self, x: Any) -> Any:
        return self.xp.exp(x)

    def sin(self, x: Any) -> Any:
        return self.xp.sin(x)

    def cos(self, x: Any) -> Any:
        return self.xp.cos(x)

    def sqrt(self, x: Any) -> Any:
        return self.xp.sqrt(x)

    def log(self, x: Any) -> Any:
        return self.xp.log(x)

    def log2(self, x: Any) -> Any:
        return self.xp.log2(x)

    # -- linear algebra ------------------------------------------------------------------------
    def svd(self, a: Any, full_matrices: bool = False) -> tuple[Any, Any, Any]:
        return tuple(self.xp.linalg.svd(a, full_matrices=full_matrices))

    def svd_split(self, a: Any, rank: Callable[[Any, int], int]) -> tuple[Any, Any, Any]:
        """``a ~ U_r @ W_r`` by its reduced SVD, keeping ``r = rank(s, k)`` singular values.

        ``rank`` receives the ``k`` singular values on the host (``None`` where they cannot be
        read, inside ``jit``) and returns how many to keep. Returns ``U_r`` (orthonormal
        columns), ``W_r = diag(s_r) Vh_r`` and all ``k`` singular values ``s`` (for inspection:
        they carry no gradient). On autograd backends the derivative is exact for losses
        unchanged by ``U_r -> U_r Q, W_r -> Q^H W_r`` -- a matrix-product state's -- even where
        kept singular values are degenerate (:func:`~tyxonq.numerics.svd_gradient.split_cotangent`).

        Examples
        --------
        >>> import numpy as np
        >>> from tyxonq.numerics import NumpyBackend
        >>> K = NumpyBackend()
        >>> u, w, s = K.svd_split(np.diag([3.0, 2.0, 1e-20]), lambda s, k: int(np.sum(s > 1e-12)))
        >>> u.shape, w.shape, np.round(K.to_numpy(s), 6).tolist()
        ((3, 2), (2, 3), [3.0, 2.0, 0.0])
        """
        u, s, vh = self.svd(a, full_matrices=False)
        r = choose_rank(rank, s, self.to_numpy)
        return u[..., :, :r], s[..., :r, None] * vh[..., :r, :], s

    def qr(self, a: Any, mode: str = "reduced") -> tuple[Any, Any]:
        if mode == "reduced":  # cuPyNumeric's qr takes no mode argument and computes this one
            return tuple(self.xp.linalg.qr(a))
        return tuple(self.xp.linalg.qr(a, mode=mode))

    def eigh(self, a: Any) -> tuple[Any, Any]:
        return tuple(self.xp.linalg.eigh(a))

    def eig(self, a: Any) -> tuple[Any, Any]:
        """Eigenvalues and right eigenvectors, always complex (as in PyTorch)."""
        a = self.asarray(a)
        values, vectors = self.xp.linalg.eig(a)
        complex_dtype = np.result_type(a.dtype, np.complex64)
        return values.astype(complex_dtype, copy=False), vectors.astype(complex_dtype, copy=False)

    def solve(self, a: Any, b: Any) -> Any:
        return self.xp.linalg.solve(a, b)

    def inv(self, a: Any) -> Any:
        return self.xp.linalg.inv(a)

    def expm(self, a: Any) -> Any:
        return expm_pade13(self.xp, self.asarray(a))

    # -- randomness ----------------------------------------------------------------------------
    def rng(self, seed: int | None = None) -> Any:
        """A new random generator of this backend, seeded with ``seed`` (fresh entropy if None)."""
        return self.xp.random.default_rng(checked_seed(seed))

    def _size(self, size: Any) -> tuple[int, ...] | None:
        return None if size is None else self._shape_tuple(size, "random sampling")

    def _shaped(self, sample: Any, size: tuple[int, ...] | None) -> Any:
        # cuPyNumeric's generators return shape (1,) for size=None; NumPy returns a scalar.
        return self.xp.reshape(sample, () if size is None else size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, *,
               dtype: Any = None, rng: Any = None) -> Any:
        """Normal samples; a complex dtype draws real and imaginary parts independently."""
        generator = rng if rng is not None else self._generator
        dtype = self._resolve_dtype(dtype, self.real_dtype)
        size = self._size(size)
        sample = self.xp.asarray(generator.normal(0.0, scale, size))
        if np.dtype(dtype).kind == "c":
            sample = sample + 1j * self.xp.asarray(generator.normal(0.0, scale, size))
        return self._shaped((sample + loc).astype(dtype), size)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, *,
                dtype: Any = None, rng: Any = None) -> Any:
        generator = rng if rng is not None else self._generator
        dtype = self._resolve_dtype(dtype, self.real_dtype)
        if np.dtype(dtype).kind != "f":
            raise TypeError(f"uniform samples real numbers; dtype={np.dtype(dtype).name} is not real")
        size = self._size(size)
        return self._shaped(self.xp.asarray(generator.uniform(low, high, size)).astype(dtype), size)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, *,
               rng: Any = None) -> Any:
        generator = rng if rng is not None else self._generator
        size = self._size(size)
        if p is not None and replace and isinstance(a, (int, np.integer)) and \
                int(np.prod(size, dtype=np.int64)) >= SORTED_DRAWS_ABOVE and int(a) >= SORTED_DRAWS_ABOVE:
            # the same indices from the same generator state, looked up in sorted order
            return self.xp.asarray(choice_by_inverse_cdf(np, generator, int(a), size, True, p))
        return self.xp.asarray(generator.choice(a, size=size, replace=replace, p=p))

    def bincount(self, x: Any, weights: Any = None, minlength: int = 0) -> Any:
        return self.xp.bincount(x, weights=weights, minlength=minlength)

    def nonzero(self, x: Any) -> tuple[Any, ...]:
        return tuple(self.xp.nonzero(x))

    # -- differentiation and transforms ----------------------------------------------------------
    def requires_grad(self, x: Any, flag: bool = True) -> Any:
        """Return ``x`` unchanged: this backend differentiates by finite differences."""
        return self.asarray(x)

    def detach(self, x: Any) -> Any:
        return x

    def value_and_grad(self, fn: Callable[..., Any], argnums: Any = 0,
                       has_aux: bool = False) -> Callable[..., Any]:
        """``fn``'s value and gradient by central finite differences.

        See :mod:`tyxonq.numerics.autodiff` for the step rule and the complex convention.

        Examples
        --------
        >>> from tyxonq.numerics import NumpyBackend
        >>> K = NumpyBackend()
        >>> value, grad = K.value_and_grad(lambda x: K.sum(K.sin(x)))(K.asarray([0.0, 1.0]))
        >>> bool(K.xp.allclose(grad, K.cos(K.asarray([0.0, 1.0])), atol=1e-9))
        True
        """
        return finite_difference_value_and_grad(self, fn, argnums, has_aux)

    def jacobian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Jacobian by central differences, shape ``output.shape + argument.shape``
        (see :mod:`tyxonq.numerics.higher_order` for steps and conventions).

        Examples
        --------
        >>> from tyxonq.numerics import NumpyBackend
        >>> K = NumpyBackend()
        >>> jac = K.jacobian(lambda x: K.stack([x[0] * x[1], K.sin(x[0])]))(K.asarray([0.0, 2.0]))
        >>> (np.round(jac, 8) + 0.0).tolist()
        [[2.0, 0.0], [1.0, 0.0]]
        """
        return finite_difference_jacobian(self, fn, argnums)

    def hessian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Hessian (real scalar ``fn`` of real arguments) by central second differences.

        Examples
        --------
        >>> from tyxonq.numerics import NumpyBackend
        >>> K = NumpyBackend()
        >>> np.round(K.hessian(lambda x: K.sum(x ** 3))(K.asarray([1.0, 2.0])), 5).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
        """
        return finite_difference_hessian(self, fn, argnums)

    def vmap(self, fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
        """Batch ``fn`` through lanes, looping where it cannot run on them (see :func:`lane_vmap`)."""
        return lane_vmap(self, fn, in_axes, out_axes)

    def jit(self, fn: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        """Return ``fn`` unchanged: this backend has no compiler (``capabilities.jit == 'none'``)."""
        return fn


def _numpy_max_ndim() -> int:
    return 64 if int(np.__version__.split(".")[0]) >= 2 else 32


NUMPY_MAX_NDIM = _numpy_max_ndim()

#: draws of ``choice(n, size, p=...)`` (and outcomes ``n``) from which the draws are looked up in
#: the cumulative distribution in sorted order (:func:`~tyxonq.numerics.compositions.choice_by_inverse_cdf`
#: with :func:`~tyxonq.numerics.compositions.searchsorted_in_order`: 10^5 draws from 2^20 outcomes
#: 42 ms by ``Generator.choice``, 10 ms so, on the 2-core reference machine; the same indices)
SORTED_DRAWS_ABOVE = 4096
