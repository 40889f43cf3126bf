"""The PyTorch backend: CPU or CUDA tensors, autograd, native ``torch.func.vmap``.

Dtype promotion between operands follows NumPy's table (so ``complex64 x float64 -> complex128``
on every backend) rather than relying on PyTorch's own rules, and Python numbers take the
backend's precision instead of PyTorch's float32 default.
"""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any, Callable, Sequence

import numpy as np

from .arguments import checked_seed
from .array_module import einsum_index_count
from .autodiff import autograd_value_and_grad
from .base import BackendBase
from .capabilities import BackendCapabilities
from .compositions import searchsorted_in_order
from .errors import BackendNotInstalledError, DeviceNotAvailableError
from .higher_order import autograd_hessian, autograd_jacobian
from .svd_gradient import choose_rank, split_cotangent, svd_cotangent

__all__ = ["PyTorchBackend", "TORCH_INSTALL_HINT"]

TORCH_INSTALL_HINT = (
    'pip install "torch==2.13.0" (a CPU wheel; a bare "torch" requirement can pull a ~3 GB CUDA '
    "build), or pip install 'tyxonq[torch]'"
)

#: PyTorch's CUDA kernels index at most 25 dimensions; its CPU kernels accept NumPy's 64.
_MAX_NDIM = {"cpu": 64, "cuda": 25, "mps": 16}


@functools.lru_cache(maxsize=None)
def _broadened_svd(torch: Any) -> Any:
    """The reduced SVD as a ``torch.autograd.Function`` whose backward broadens denominators."""

    class BroadenedSVD(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(a: Any) -> Any:
            return tuple(torch.linalg.svd(a, full_matrices=False))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*output)

        @staticmethod
        def backward(ctx: Any, gU: Any, gS: Any, gVh: Any) -> Any:
            U, S, Vh = ctx.saved_tensors
            eye = torch.eye(S.shape[-1], dtype=S.dtype, device=S.device)
            return svd_cotangent(U, S, Vh, gU, gS, gVh, eye, lambda x, like: x.to(like.dtype))

    return BroadenedSVD


@functools.lru_cache(maxsize=None)
def _svd_split(torch: Any) -> Any:
    """The rank-r SVD split as a ``torch.autograd.Function`` (its rank chosen in the forward)."""

    class SVDSplit(torch.autograd.Function):
        @staticmethod
        def forward(a: Any, rank: Any, to_host: Any) -> Any:
            U, S, Vh = torch.linalg.svd(a, full_matrices=False)
            r = choose_rank(rank, S, to_host)
            return U[..., :, :r], S[..., :r, None] * Vh[..., :r, :], S, U, Vh

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            kept_u, _, S, U, Vh = output
            ctx.save_for_backward(U, S, Vh)
            ctx.r = kept_u.shape[-1]
            ctx.mark_non_differentiable(S, U, Vh)

        @staticmethod
        def backward(ctx: Any, gU: Any, gW: Any, *unused: Any) -> Any:
            U, S, Vh = ctx.saved_tensors
            return split_cotangent(U, S, Vh, ctx.r, gU, gW), None, None

    return SVDSplit


@functools.lru_cache(maxsize=None)
def _gradient_node(torch: Any) -> Any:
    """A value and its Jacobian as one autograd node over one float64 vector of the angles: the
    backward pass is one product (the angles' own stack, outside, splits it in C++; one input
    rather than one per angle spares ``Function.apply`` and the engine a Python step per angle)."""

    class GradientNode(torch.autograd.Function):
        @staticmethod
        def forward(compute: Any, like: Any, angles: Any) -> Any:
            value, jacobian = compute(angles.detach().cpu().numpy())
            as_tensor = functools.partial(torch.as_tensor, dtype=like.dtype, device=like.device)
            return as_tensor(np.asarray(value)), as_tensor(np.asarray(jacobian))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output[1], inputs[2])
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx: Any, cotangent: Any, unused: Any) -> Any:
            jacobian, angles = ctx.saved_tensors
            grads = torch.tensordot(cotangent, jacobian, dims=cotangent.dim()).to(angles.dtype)
            if torch.is_grad_enabled():  # create_graph: the gradient may be differentiated again,
                grads = _no_second_derivative(torch).apply(grads, angles)  # which must raise
            return None, None, grads

    return GradientNode


SECOND_DERIVATIVE_HINT = (
    "second derivatives of an expectation value computed as a gradient node are not available "
    "(its Jacobian is constant to autograd); differentiate gate by gate for Hessians: "
    "tq.gradient_method('autograd') or tq.value_and_grad(..., method='autograd')")


@functools.lru_cache(maxsize=None)
def _no_second_derivative(torch: Any) -> Any:
    """The identity on a node's gradient, whose derivative raises with
    :data:`SECOND_DERIVATIVE_HINT` (never a silently dropped second derivative)."""

    class NoSecondDerivative(torch.autograd.Function):
        @staticmethod
        def forward(grads: Any, *inputs: Any) -> Any:
            return grads.clone()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, *cotangents: Any) -> Any:
            raise RuntimeError(SECOND_DERIVATIVE_HINT)

    return NoSecondDerivative


def _inside_functorch_batching(torch: Any) -> bool:
    """Whether a ``torch.func.vmap`` or ``jvp`` transform is active (a gradient node's forward
    reads values, which batched and dual tensors do not have)."""
    functorch = torch._C._functorch  # noqa: SLF001 - torch has no public query of active transforms
    return any(interpreter.key() != functorch.TransformType.Grad
               for interpreter in functorch.get_interpreter_stack() or ())


def _autograd_value_and_grad(torch: Any, fn: Callable, positions: tuple[int, ...], has_aux: bool,
                             args: tuple, kwargs: dict, single: bool) -> tuple[Any, Any]:
    """``(output, grads)`` as ``torch.func.grad_and_value`` returns them, by
    ``torch.autograd.grad``: arguments autograd already tracks keep their graph (the results stay
    differentiable), the others are fresh leaves."""
    args = list(args)
    tracked = any(args[a].requires_grad for a in positions)
    for a in positions:
        if not args[a].requires_grad:
            args[a] = args[a].detach().requires_grad_()
    with torch.enable_grad():
        output = fn(*args, **kwargs)
        value = output[0] if has_aux else output
        inputs = [args[a] for a in positions]
        grads = (torch.autograd.grad(value, inputs, create_graph=tracked, allow_unused=True)
                 if value.requires_grad else [None] * len(inputs))  # a constant objective
    grads = tuple(torch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs))
    if not tracked:
        output = (value.detach(), tuple(a.detach() for a in output[1])) if has_aux else value.detach()
    return output, grads[0] if single else grads


def import_torch() -> Any:
    """Import ``torch`` or raise :class:`BackendNotInstalledError` with the install command."""
    try:
        return importlib.import_module("torch")
    except ImportError as error:
        raise BackendNotInstalledError(
            f"the pytorch backend needs PyTorch, whose import failed ({error}). "
            f"Install it with: {TORCH_INSTALL_HINT}"
        ) from error


def resolve_device(torch: Any, device: Any) -> Any:
    """A ``torch.device`` for ``device``, or a clear error if this machine does not have it."""
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"device={device!r} is not a device name; expected 'cpu', 'cuda' or 'cuda:N'"
        ) from error
    if resolved.type == "cpu":
        return resolved
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceNotAvailableError(
                f"device={device!r} was requested but PyTorch {torch.__version__} sees no CUDA "
                "device (no GPU, no driver, or a CPU-only build). Use device='cpu', or install a "
                "CUDA build of torch on a machine with an NVIDIA GPU"
            )
        index = torch.cuda.current_device() if resolved.index is None else resolved.index
        if index >= torch.cuda.device_count():
            raise DeviceNotAvailableError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} CUDA "
                f"device(s) exist (cuda:0 .. cuda:{torch.cuda.device_count() - 1})"
            )
        return torch.device("cuda", index)
    if resolved.type == "mps" and torch.backends.mps.is_available():
        return resolved
    raise DeviceNotAvailableError(f"device={device!r} is not available to this PyTorch build")


def available_devices(torch: Any) -> tuple[str, ...]:
    """Names of the devices PyTorch can use on this machine."""
    cuda = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return ("cpu", *cuda)


class PyTorchBackend(BackendBase):
    """:class:`~tyxonq.numerics.ArrayBackend` over PyTorch.

    Parameters
    ----------
    dtype : {"complex128", "complex64"}
        Working complex dtype; the real dtype follows (``float64``/``float32``).
    device : str
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``. Every array this backend creates lives there; a
        device the machine lacks raises :class:`~tyxonq.numerics.errors.DeviceNotAvailableError`.
    seed : int, optional
        Seed of the backend's default random generator.
    jit_compile : bool, optional
        Whether :meth:`jit` applies ``torch.compile``. Default: on CUDA only, since on CPU
        ``torch.compile`` of complex code was measured several times slower than eager.

    Examples
    --------
    >>> K = PyTorchBackend()
    >>> value, grad = K.value_and_grad(lambda x: K.sum(K.sin(x)))(K.asarray([0.0, 1.0]))
    >>> grad.dtype, str(grad.device)
    (torch.float64, 'cpu')
    """

    name = "pytorch"

    def __init__(self, dtype: Any = "complex128", device: Any = "cpu", seed: int | None = None,
                 jit_compile: bool | None = None) -> None:
        self.torch = import_torch()
        self.device = resolve_device(self.torch, device)
        compile_ = self.device.type == "cuda" if jit_compile is None else jit_compile
        self.capabilities = BackendCapabilities(
            autodiff="autograd", vmap="native", jit="torch.compile" if compile_ else "none",
            devices=available_devices(self.torch), device=str(self.device), distributed=True,
            max_ndim=_MAX_NDIM.get(self.device.type, 25), gradient_nodes=True,
        )
        super().__init__(dtype)
        self._generator = self.rng(seed)

    def writes_in_place(self, array: Any) -> bool:
        return isinstance(array, self.torch.Tensor) and not array.requires_grad

    def available_memory(self) -> int:
        """Free bytes on this backend's device (CUDA: ``torch.cuda.mem_get_info``)."""
        if self.device.type == "cuda":
            return int(self.torch.cuda.mem_get_info(self.device)[0])
        return super().available_memory()

    # -- dtypes ------------------------------------------------------------------------------
    def _library_dtype(self, name: str) -> Any:
        return getattr(self.torch, name)

    def _dtype_name(self, dtype: Any) -> str:
        if isinstance(dtype, self.torch.dtype):
            return str(dtype).removeprefix("torch.")
        return np.dtype(dtype).name

    def dtype_of(self, x: Any) -> Any:
        return self._tensor(x).dtype

    def shape(self, x: Any) -> tuple[int, ...]:
        return tuple(self._tensor(x).shape)

    def _tensor(self, x: Any) -> Any:
        return x if isinstance(x, self.torch.Tensor) else self.asarray(x)

    def _floating(self, x: Any) -> Any:
        """``x`` as a tensor, integers and booleans cast to the real dtype (as NumPy does)."""
        x = self._tensor(x)
        return x if (x.is_floating_point() or x.is_complex()) else x.to(self.real_dtype)

    def _promoted(self, *operands: Any) -> list[Any]:
        """Operands as tensors of one dtype, chosen by NumPy's promotion table."""
        tensors = [self._tensor(op) for op in operands]
        names = {self._dtype_name(t.dtype) for t in tensors}
        if len(names) <= 1:
            return tensors
        target = self._library_dtype(np.result_type(*names).name)
        return [t if t.dtype == target else t.to(target) for t in tensors]

    # -- creation and conversion ---------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        torch = self.torch
        if isinstance(obj, torch.Tensor):
            target = self._resolve_dtype(dtype, obj.dtype)
            if obj.device == self.device and obj.dtype == target:
                return obj
            return obj.to(device=self.device, dtype=target)
        if isinstance(obj, (list, tuple)) and obj and any(self.is_array(o) for o in _leaves(obj)):
            return self.stack([self.asarray(o, dtype) for o in obj])
        target = self._creation_dtype(obj, dtype)
        if target is None:  # NumPy arrays and scalars, or another library's arrays: keep dtype
            host = np.asarray(obj)
            if not host.flags.c_contiguous:  # e.g. negative strides, which torch cannot view
                host = np.ascontiguousarray(host)
            return torch.as_tensor(host, device=self.device)
        return torch.as_tensor(obj, dtype=target, device=self.device)

    def array(self, obj: Any, dtype: Any = None) -> Any:
        return self.asarray(obj, dtype).clone()

    def to_numpy(self, x: Any) -> np.ndarray:
        if isinstance(x, self.torch.Tensor):
            return x.detach().cpu().resolve_conj().resolve_neg().numpy()
        return np.asarray(x)

    def is_array(self, x: Any) -> bool:
        return isinstance(x, self.torch.Tensor)

    def readable_scalar(self, x: Any) -> Any:
        """The Python number a one-element tensor holds (a device synchronisation on CUDA), or
        ``None`` under ``torch.func.vmap``, where it has none."""
        try:
            return x.item()
        except RuntimeError:
            return None

    def constant(self, value: Any, dtype: Any = None) -> Any:
        """A tensor for a host constant, safe to cache and reuse across calls and transforms.

        Tensors created inside ``torch.func`` transforms are wrapped for that transform; a cached
        one would leak out of it. Constants are therefore created with the transforms disabled.
        """
        with self.torch._C._DisableFuncTorch():  # noqa: SLF001 - torch has no public switch
            return self.asarray(np.asarray(value), dtype)

    def _shape_tuple(self, shape: Any, operation: str) -> tuple[int, ...]:
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self._check_ndim(len(shape), operation)
        return shape

    def zeros(self, shape: Any, dtype: Any = None) -> Any:
        return self.torch.zeros(self._shape_tuple(shape, "zeros"),
                                dtype=self._resolve_dtype(dtype, self.dtype), device=self.device)

    def ones(self, shape: Any, dtype: Any = None) -> Any:
        return self.torch.ones(self._shape_tuple(shape, "ones"),
                               dtype=self._resolve_dtype(dtype, self.dtype), device=self.device)

    def zeros_like(self, x: Any, dtype: Any = None) -> Any:
        x = self._tensor(x)
        return self.torch.zeros_like(x, dtype=self._resolve_dtype(dtype, x.dtype))

    def ones_like(self, x: Any, dtype: Any = None) -> Any:
        x = self._tensor(x)
        return self.torch.ones_like(x, dtype=self._resolve_dtype(dtype, x.dtype))

    def eye(self, N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
        torch, M = self.torch, N if M is None else M
        dtype = self._resolve_dtype(dtype, self.dtype)
        rows = torch.arange(N, device=self.device)[:, None]
        cols = torch.arange(M, device=self.device)[None, :]
        return (cols - rows == k).to(dtype)

    def arange(self, start: float, stop: float | None = None, step: float = 1,
               dtype: Any = None) -> Any:
        start, stop, step, dtype = self._arange_arguments(start, stop, step, dtype)
        return self.torch.arange(start, stop, step, dtype=dtype, device=self.device)

    def linspace(self, start: float, stop: float, num: int = 50, endpoint: bool = True,
                 dtype: Any = None) -> Any:
        dtype = self._resolve_dtype(dtype, self.real_dtype)
        if endpoint:
            return self.torch.linspace(start, stop, num, dtype=dtype, device=self.device)
        return self.torch.linspace(start, stop, num + 1, dtype=dtype, device=self.device)[:-1]

    def cast(self, x: Any, dtype: Any) -> Any:
        x = self._tensor(x)
        target = self._resolve_dtype(dtype)
        self._refuse_complex_to_real(x, target)
        return x.to(target)

    # -- shape and contraction -----------------------------------------------------------------
    def matmul(self, a: Any, b: Any) -> Any:
        return self.torch.matmul(*self._promoted(a, b))

    def einsum(self, subscripts: str, *operands: Any) -> Any:
        operands = self._promoted(*operands)
        count = einsum_index_count(subscripts, [op.ndim for op in operands])
        self._check_ndim(count, f"einsum {subscripts!r}")
        return self.torch.einsum(subscripts, *operands)

    def tensordot(self, a: Any, b: Any, axes: Any = 2) -> Any:
        a, b = self._promoted(a, b)
        if isinstance(axes, (int, np.integer)):
            dims: Any = int(axes)
            contracted = dims
        else:
            dims = [list(np.atleast_1d(axes[0])), list(np.atleast_1d(axes[1]))]
            contracted = len(dims[0])
        self._check_ndim(a.ndim + b.ndim - 2 * contracted, "tensordot")
        return self.torch.tensordot(a, b, dims=dims)

    def kron(self, a: Any, b: Any) -> Any:
        a, b = self._promoted(a, b)  # torch.kron fails on transposed (non-contiguous) operands
        return self.torch.kron(a.contiguous(), b.contiguous())

    def outer(self, a: Any, b: Any) -> Any:
        a, b = self._promoted(a, b)
        return self.torch.outer(a.reshape(-1), b.reshape(-1))

    def reshape(self, x: Any, shape: Any) -> Any:
        return self.torch.reshape(self._tensor(x), self._shape_tuple(shape, "reshape"))

    def moveaxis(self, x: Any, source: Any, destination: Any) -> Any:
        return self.torch.movedim(self._tensor(x), source, destination)

    def transpose(self, x: Any, axes: Sequence[int] | None = None) -> Any:
        x = self._tensor(x)
        return x.permute(tuple(reversed(range(x.ndim))) if axes is None else tuple(axes))

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        arrays = self._promoted(*arrays)
        self._check_ndim(arrays[0].ndim + 1 if arrays else 1, "stack")
        return self.torch.stack(arrays, dim=axis)

    def concatenate(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        return self.torch.cat(self._promoted(*arrays), dim=axis)

    def _reduce(self, reducer: Callable[..., Any], x: Any, axis: Any, keepdims: bool) -> Any:
        if axis is None:
            result = reducer(x)
            return result.reshape((1,) * x.ndim) if keepdims else result
        return reducer(x, dim=axis, keepdim=keepdims)

    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self._reduce(self.torch.sum, self._tensor(x), axis, keepdims)

    def mean(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self._reduce(self.torch.mean, self._floating(x), axis, keepdims)

    def norm(self, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
        return self.torch.linalg.norm(self._floating(x), ord=ord, dim=axis, keepdim=keepdims)

    def diag(self, v: Any, k: int = 0) -> Any:
        return self.torch.diag(self._tensor(v), k)

    def take(self, x: Any, indices: Any, axis: int = 0) -> Any:
        x = self._tensor(x)
        indices = self.torch.as_tensor(np.asarray(indices, dtype=np.int64), device=x.device)
        axis %= x.ndim  # NumPy's shape: the indices' axes replace ``axis``
        taken = self.torch.index_select(x, axis, indices.reshape(-1))
        return taken.reshape(x.shape[:axis] + indices.shape + x.shape[axis + 1:])

    def flip(self, x: Any, axes: Sequence[int]) -> Any:
        return self.torch.flip(self._tensor(x), tuple(axes))

    def where(self, condition: Any, x: Any, y: Any) -> Any:
        condition = self._tensor(condition).to(self.torch.bool)
        x, y = self._weak_scalars(x, y)
        return self.torch.where(condition, *self._promoted(x, y))

    # -- element-wise --------------------------------------------------------------------------
    def abs(self, x: Any) -> Any:
        return self.torch.abs(self._tensor(x))

    def real(self, x: Any) -> Any:
        x = self._tensor(x)
        return self.torch.real(x) if x.is_complex() else x

    def imag(self, x: Any) -> Any:
        x = self._tensor(x)
        return self.torch.imag(x) if x.is_complex() else self.torch.zeros_like(x)

    def conj(self, x: Any) -> Any:
        return self.torch.conj(self._tensor(x))

    def square(self, x: Any) -> Any:
        return self.torch.square(self._tensor(x))

    def sign(self, x: Any) -> Any:
        x = self._tensor(x)
        return self._complex_sign(x) if x.is_complex() else self.torch.sign(x)

    def exp(self, x: Any) -> Any:
        return self.torch.exp(self._floating(x))

    def sin(self, x: Any) -> Any:
        return self.torch.sin(self._floating(x))

    def cos(self, x: Any) -> Any:
        return self.torch.cos(self._floating(x))

    def sqrt(self, x: Any) -> Any:
        return self.torch.sqrt(self._floating(x))

    def log(self, x: Any) -> Any:
        return self.torch.log(self._floating(x))

    def log2(self, x: Any) -> Any:
        return self.torch.log2(self._floating(x))

    # -- linear algebra ------------------------------------------------------------------------
    def svd(self, a: Any, full_matrices: bool = False) -> tuple[Any, Any, Any]:
        """SVD; the reduced one (``full_matrices=False``) differentiates with broadened
        denominators at degenerate singular values (:mod:`tyxonq.numerics.svd_gradient`)."""
        a = self._floating(a)
        if full_matrices or not self._differentiated(a):
            return tuple(self.torch.linalg.svd(a, full_matrices=full_matrices))
        return tuple(_broadened_svd(self.torch).apply(a))

    def svd_split(self, a: Any, rank: Callable[[Any, int], int]) -> tuple[Any, Any, Any]:
        """See :meth:`tyxonq.numerics.array_module.ArrayModuleBackend.svd_split`; autograd runs
        :func:`~tyxonq.numerics.svd_gradient.split_cotangent`."""
        a = self._floating(a)
        if self._differentiated(a):
            return tuple(_svd_split(self.torch).apply(a, rank, self.to_numpy)[:3])
        U, S, Vh = self.torch.linalg.svd(a, full_matrices=False)
        r = choose_rank(rank, S, self.to_numpy)
        return U[..., :, :r], S[..., :r, None] * Vh[..., :r, :], S

    def _differentiated(self, a: Any) -> bool:
        """Whether autograd may differentiate through ``a``: it requires grad, or a
        ``torch.func`` transform is active (its wrapped tensors may not say so). Where neither,
        the SVDs run without their custom autograd nodes, whose ``apply`` costs more than a small
        SVD (binding its arguments by signature on every call: a 151-site MPS did 22,701 of them,
        9.5 s of 38 s)."""
        torch = self.torch
        if a.requires_grad and torch.is_grad_enabled():
            return True
        functorch = torch._C._functorch  # noqa: SLF001 - torch has no public query of active transforms
        return bool(functorch.get_interpreter_stack()) or functorch.is_functorch_wrapped_tensor(a)

    def qr(self, a: Any, mode: str = "reduced") -> tuple[Any, Any]:
        return tuple(self.torch.linalg.qr(self._floating(a), mode=mode))

    def eigh(self, a: Any) -> tuple[Any, Any]:
        return tuple(self.torch.linalg.eigh(self._floating(a)))

    def eig(self, a: Any) -> tuple[Any, Any]:
        """Eigenvalues and right eigenvectors, always complex."""
        return tuple(self.torch.linalg.eig(self._floating(a)))

    def solve(self, a: Any, b: Any) -> Any:
        a, b = self._promoted(self._floating(a), self._floating(b))
        return self.torch.linalg.solve(a, b)

    def inv(self, a: Any) -> Any:
        return self.torch.linalg.inv(self._floating(a))

    def expm(self, a: Any) -> Any:
        return self.torch.linalg.matrix_exp(self._floating(a))

    # -- randomness ----------------------------------------------------------------------------
    def rng(self, seed: int | None = None) -> Any:
        """A new ``torch.Generator`` on this backend's device, seeded (fresh entropy if None)."""
        generator = self.torch.Generator(device=self.device)
        seed = checked_seed(seed)
        if seed is None:
            generator.seed()
        else:
            generator.manual_seed(int(seed))
        return generator

    def _size(self, size: Any) -> tuple[int, ...]:
        return () if size is None else self._shape_tuple(size, "random sampling")

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, *,
               dtype: Any = None, rng: Any = None) -> Any:
        """Normal samples; a complex dtype draws real and imaginary parts independently."""
        generator = rng if rng is not None else self._generator
        dtype = self._resolve_dtype(dtype, self.real_dtype)
        shape = self._size(size)
        part_dtype = self.torch.empty((), dtype=dtype).real.dtype
        draw = functools.partial(self.torch.randn, shape, generator=generator, dtype=part_dtype,
                                 device=self.device)
        sample = self.torch.complex(draw(), draw()) if dtype.is_complex else draw()
        return sample * scale + loc

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, *,
                dtype: Any = None, rng: Any = None) -> Any:
        generator = rng if rng is not None else self._generator
        dtype = self._resolve_dtype(dtype, self.real_dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"uniform samples real numbers; dtype={dtype} is not real")
        sample = self.torch.rand(self._size(size), generator=generator, dtype=dtype,
                                 device=self.device)
        return sample * (high - low) + low

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, *,
               rng: Any = None) -> Any:
        """Samples of ``a`` (an int n means ``arange(n)``), by inverse CDF when ``p`` is given."""
        torch = self.torch
        generator = rng if rng is not None else self._generator
        population = None if isinstance(a, (int, np.integer)) else self._tensor(a)
        n = int(a) if population is None else int(population.shape[0])
        shape = self._size(size)
        count = math.prod(shape)
        if not replace and count > n:
            raise ValueError(f"cannot take {count} distinct samples from {n} items; use replace=True")
        if p is None:
            indices = (torch.randint(n, (count,), generator=generator, device=self.device)
                       if replace else
                       torch.randperm(n, generator=generator, device=self.device)[:count])
        else:
            probabilities = self.cast(self._tensor(p), "float64")
            if probabilities.shape != (n,):
                raise ValueError(f"p must be 1-d with {n} entries; got shape {tuple(probabilities.shape)}")
            if replace:
                cdf = torch.cumsum(probabilities, 0)
                uniforms = torch.rand(count, generator=generator, dtype=cdf.dtype, device=self.device)
                draws = uniforms * cdf[-1]
                if self.device.type == "cpu":  # NumPy's sort reads the tensors in place (10^5
                    # draws in 2^20 outcomes: torch.argsort 8 ms, NumPy's 1.7; the search 6 ms)
                    indices = torch.from_numpy(searchsorted_in_order(np, cdf.detach().numpy(),
                                                                      draws.detach().numpy()))
                else:
                    indices = searchsorted_in_order(torch, cdf, draws)
                indices = indices.clamp_max(n - 1)
            else:
                indices = torch.multinomial(probabilities, count, replacement=False,
                                            generator=generator)
        picked = indices if population is None else population[indices]
        return picked.reshape(shape)

    def bincount(self, x: Any, weights: Any = None, minlength: int = 0) -> Any:
        weights = None if weights is None else self._tensor(weights)
        return self.torch.bincount(self._tensor(x), weights=weights, minlength=minlength)

    def nonzero(self, x: Any) -> tuple[Any, ...]:
        return tuple(self.torch.nonzero(self._tensor(x), as_tuple=True))

    # -- differentiation and transforms ----------------------------------------------------------
    def requires_grad(self, x: Any, flag: bool = True) -> Any:
        """``x`` as a tensor that autograd tracks (``flag=True``) or not; leaves are marked in place."""
        x = self._floating(x)
        if x.requires_grad == flag:
            return x
        if x.is_leaf:
            return x.requires_grad_(flag)
        return x if flag else x.detach()

    def detach(self, x: Any) -> Any:
        return self._tensor(x).detach()

    def records_gradients(self) -> bool:
        """Whether autograd records now: grad mode is on and no ``torch.func.vmap``/``jvp`` is
        active (their tensors carry no values a gradient node could read)."""
        return self.torch.is_grad_enabled() and not _inside_functorch_batching(self.torch)

    def needs_gradient(self, x: Any) -> bool:
        """Whether ``x`` is a tensor autograd tracks (see :meth:`records_gradients`)."""
        return isinstance(x, self.torch.Tensor) and x.requires_grad

    def host_readable(self, x: Any) -> bool:
        """Whether ``x`` is a number or a CPU tensor that autograd does not track and no
        ``torch.func`` transform wraps (NumPy reads it without a copy)."""
        if not isinstance(x, self.torch.Tensor):
            return True
        return (not x.requires_grad and x.device.type == "cpu"
                and not self.torch._C._functorch.is_functorch_wrapped_tensor(x))  # noqa: SLF001

    def gradient_node(self, compute: Callable[[np.ndarray], tuple[Any, Any]],
                      inputs: list[Any], shape: tuple[int, ...] = ()) -> Any:
        """``compute(values)``'s value, whose derivative with respect to ``inputs`` (real scalar
        tensors, ``values`` their float64 values) is its Jacobian: one
        ``torch.autograd.Function``; ``backward`` and ``torch.func.grad`` both reach it
        (``shape``, the value's, is read from the result here).

        Examples
        --------
        >>> K = PyTorchBackend()
        >>> x = K.requires_grad(K.asarray(0.5, "float64"))
        >>> y = K.gradient_node(lambda v: (np.sin(v[0]), np.cos(v[:1])), [x])
        >>> y.backward()
        >>> round(float(x.grad), 6) == round(float(np.cos(0.5)), 6)
        True
        """
        torch = self.torch
        like = torch.empty((), dtype=self.real_dtype, device=self.device)
        try:  # one stack (type-promoting; its backward casts back), not one call per angle
            angles = torch.stack(inputs).reshape(-1)
        except RuntimeError:  # shapes () and (1,) mixed
            angles = torch.cat([x.reshape(1) for x in inputs])
        angles = angles.to(torch.float64)
        return _gradient_node(torch).apply(compute, like, angles)[0]

    def host_twin(self) -> Any:
        """The NumPy backend of this precision: it reads CPU tensors without a copy, at a fraction
        of PyTorch's cost per small call; a CUDA device's small work (a light cone's few hundred
        products, each a kernel launch there) costs less on it than launched, the angles and
        matrices copied over once and the results back (:meth:`host_twin_entries`)."""
        from .numpy_backend import numpy_twin

        return numpy_twin(self)

    def host_twin_entries(self) -> float:
        """On the CPU 2^18 entries (measured on 2 cores: PyTorch's threaded kernels win above);
        on a GPU 2^14: there each operation is a kernel launch, about 1.5 us of host time
        (``benchmarks/cuda_profile.py``). Swept on an H200 (``benchmarks/host_twin_sweep.py``):
        2^12 and 2^14 alike, 2^16 moved a 16-qubit energy and gradient to the host at 34.8 ms
        against 15.2 ms on the device."""
        return float(2 ** 18) if self.device.type == "cpu" else float(2 ** 14)

    def host_copyable(self, x: Any) -> bool:
        """Whether ``x`` is a number or a tensor, on any device, that autograd does not track and
        no ``torch.func`` transform wraps (a CUDA tensor is copied to the host in one transfer).

        Examples
        --------
        >>> K = PyTorchBackend()
        >>> K.host_copyable(K.asarray(0.5)), K.host_copyable(K.requires_grad(K.asarray(0.5, "float64")))
        (True, False)
        """
        if not isinstance(x, self.torch.Tensor):
            return True
        return not x.requires_grad and not self.torch._C._functorch.is_functorch_wrapped_tensor(x)  # noqa: SLF001

    def value_and_grad(self, fn: Callable[..., Any], argnums: Any = 0,
                       has_aux: bool = False) -> Callable[..., Any]:
        """``fn``'s value and gradient by autograd.

        Outside other transforms this is ``torch.autograd.grad`` (``torch.func``'s wrapped
        tensors cost about a microsecond more per operation); inside ``torch.func`` transforms,
        and to nest, ``torch.func.grad_and_value``. Values and gradients are tensors on the
        backend's device; where an argument is itself tracked by autograd they stay
        differentiable, so ``grad`` nests and composes with ``vmap``.

        Examples
        --------
        >>> K = PyTorchBackend()
        >>> value, grad = K.value_and_grad(lambda z: K.sum(K.abs(z) ** 2))(K.asarray([1 + 2j]))
        >>> grad.tolist()  # df/dRe z + 1j df/dIm z
        [(2+4j)]
        """
        torch = self.torch

        def transform(checked: Callable, nums: Any, aux: bool) -> Callable:
            grad_and_value = torch.func.grad_and_value(checked, argnums=nums, has_aux=aux)
            positions = (nums,) if isinstance(nums, int) else nums

            def value_first(*args: Any, **kwargs: Any) -> Any:
                if torch._C._functorch.get_interpreter_stack():  # noqa: SLF001 - as above
                    grads, output = grad_and_value(*args, **kwargs)
                    return output, grads
                return _autograd_value_and_grad(torch, checked, positions, aux, args, kwargs,
                                                single=isinstance(nums, int))

            return value_first

        return autograd_value_and_grad(self, fn, argnums, has_aux, transform, self._floating)

    def jacobian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Jacobian by ``torch.func.jacrev`` (shape ``output.shape + argument.shape``;
        conventions in :mod:`tyxonq.numerics.higher_order`).

        Examples
        --------
        >>> K = PyTorchBackend()
        >>> K.jacobian(lambda x: x ** 2)(K.asarray([1.0, 3.0])).tolist()
        [[2.0, 0.0], [0.0, 6.0]]
        """
        return autograd_jacobian(self, fn, argnums, self.torch.func.jacrev, self._floating)

    def hessian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Hessian by ``torch.func.hessian`` (forward over reverse; a real scalar ``fn``
        of real arguments).

        Examples
        --------
        >>> K = PyTorchBackend()
        >>> K.hessian(lambda x: K.sum(x ** 3))(K.asarray([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
        """
        return autograd_hessian(self, fn, argnums, self.torch.func.hessian, self._floating)

    def vmap(self, fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
        """Vectorise ``fn`` with ``torch.func.vmap``."""
        in_dims = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        out_dims = tuple(out_axes) if isinstance(out_axes, list) else out_axes
        return self.torch.func.vmap(fn, in_dims=in_dims, out_dims=out_dims)

    def jit(self, fn: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        """``torch.compile(fn)`` where ``capabilities.jit == 'torch.compile'``, else ``fn``."""
        if self.capabilities.jit == "torch.compile":
            return self.torch.compile(fn, **options)
        return fn


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj]
