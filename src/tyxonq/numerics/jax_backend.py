"""The JAX backend: NumPy's API on XLA, with autodiff, ``vmap`` and ``jit``.

It is the NumPy implementation over ``jax.numpy`` (:class:`ArrayModuleBackend`), plus JAX's
transforms: :meth:`JaxBackend.value_and_grad` is ``jax.value_and_grad``, :meth:`JaxBackend.vmap` is
``jax.vmap`` and :meth:`JaxBackend.jit` is ``jax.jit``. Everything tyxonq does through the
protocol can be traced, so a whole energy-and-gradient function compiles into one XLA program;
the compilation (seconds) happens on the first call and again for every new shape.

JAX computes in 32 bits unless ``jax_enable_x64`` is set: constructing this backend sets it,
process-wide, so that complex128 and float64 mean what they say. For the same reason it sets
``jax_default_matmul_precision`` to ``"highest"`` unless the program set a precision before: on
recent NVIDIA GPUs JAX otherwise multiplies float32 and complex64 matrices in TF32 (10 mantissa
bits; on an H200 complex64 products failed the 1e-5 single-precision bound). Random numbers come
from a seeded NumPy generator on the host (JAX's own are functional, keyed, and not a
``Generator``).
Arrays live on JAX's default device (a GPU when ``jax[cuda]`` is installed and one is visible;
``JAX_PLATFORMS=cpu`` forces the CPU).
"""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any, Callable

import numpy as np

from .arguments import checked_seed
from .array_module import ArrayModuleBackend
from .autodiff import autograd_value_and_grad
from .capabilities import BackendCapabilities
from .errors import BackendNotInstalledError, DeviceNotAvailableError
from .expm import expm_pade13
from .higher_order import autograd_hessian, autograd_jacobian
from .persistent_cache import configure_jax
from .svd_gradient import choose_rank, split_cotangent, svd_cotangent

__all__ = ["JaxBackend", "JAX_INSTALL_HINT"]

JAX_INSTALL_HINT = 'pip install "tyxonq[jax]" (jax and jaxlib for the CPU; jax[cuda12] for NVIDIA GPUs)'


def import_jax() -> Any:
    """Import ``jax`` with 64-bit types and full-precision products enabled, or raise with the
    install command."""
    try:
        jax = importlib.import_module("jax")
    except ImportError as error:
        raise BackendNotInstalledError(
            f"the jax backend needs the jax package, whose import failed ({type(error).__name__}: "
            f"{error}). Install it with: {JAX_INSTALL_HINT}"
        ) from error
    jax.config.update("jax_enable_x64", True)
    if jax.config.jax_default_matmul_precision is None:
        # JAX's default on recent NVIDIA GPUs rounds float32 and complex64 products to TF32
        # (~1e-3 relative); a precision the program chose itself is left as it is
        jax.config.update("jax_default_matmul_precision", "highest")
    return jax


@functools.lru_cache(maxsize=None)
def _piece_functions(jax: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Compiled reads and writes of a block of an array viewed in another shape: the read
    materialises the piece only, the write donates the array's buffer (updated in place by XLA).
    The view and the sizes are static, the starts traced: one compilation per chunking."""
    lax = jax.lax

    @functools.partial(jax.jit, static_argnums=(1, 3))
    def read(array: Any, view: tuple[int, ...], starts: tuple[Any, ...], sizes: tuple[int, ...]) -> Any:
        return lax.dynamic_slice(array.reshape(view), starts, sizes)

    @functools.partial(jax.jit, static_argnums=(1,), donate_argnums=(0,))
    def write(array: Any, view: tuple[int, ...], starts: tuple[Any, ...], value: Any) -> Any:
        updated = lax.dynamic_update_slice(array.reshape(view), value, starts)
        return updated.reshape(array.shape)

    return read, write


@functools.lru_cache(maxsize=None)
def _broadened_svd(jax: Any) -> Any:
    """The reduced SVD with a custom VJP that broadens denominators."""
    jnp = jax.numpy

    @jax.custom_vjp
    def svd(a: Any) -> Any:
        return tuple(jnp.linalg.svd(a, full_matrices=False))

    def forward(a: Any) -> Any:
        outputs = svd(a)
        return outputs, outputs

    def backward(outputs: Any, cotangents: Any) -> Any:
        U, S, Vh = outputs
        gU, gS, gVh = cotangents
        eye = jnp.eye(S.shape[-1], dtype=S.dtype)
        return (svd_cotangent(U, S, Vh, gU, gS, gVh, eye, lambda x, like: x.astype(like.dtype),
                              conjugate_convention=True),)

    svd.defvjp(forward, backward)
    return svd


@functools.lru_cache(maxsize=None)
def _svd_split(jax: Any) -> Any:
    """The rank-``r`` split of ``a`` from its SVD ``(U, S, Vh)`` (computed without gradient),
    with a custom VJP: all of ``a``'s cotangent comes through it (``r`` static)."""
    jnp = jax.numpy

    def split(a: Any, U: Any, S: Any, Vh: Any, r: int) -> Any:
        return U[..., :, :r], S[..., :r, None] * Vh[..., :r, :]

    @functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
    def svd_split(a: Any, U: Any, S: Any, Vh: Any, r: int) -> Any:
        return split(a, U, S, Vh, r)

    def forward(a: Any, U: Any, S: Any, Vh: Any, r: int) -> Any:
        return split(a, U, S, Vh, r), (U, S, Vh)

    def backward(r: int, saved: Any, cotangents: Any) -> Any:
        U, S, Vh = saved
        gU, gW = cotangents
        ga = split_cotangent(U, S, Vh, r, gU, gW, conjugate_convention=True)
        return ga, jnp.zeros_like(U), jnp.zeros_like(S), jnp.zeros_like(Vh)

    svd_split.defvjp(forward, backward)
    return svd_split


def _trace_active(kinds: tuple[type, ...]) -> bool:
    """Whether a trace of one of ``kinds`` is on JAX's current trace stack."""
    from jax._src import core

    trace = core.trace_ctx.trace
    while trace is not None:
        if isinstance(trace, kinds):
            return True
        trace = getattr(trace, "parent_trace", None)
    return False


def _device_name(device: Any) -> str:
    return "cpu" if device.platform == "cpu" else f"cuda:{device.id}"


SECOND_DERIVATIVE_HINT = (
    "second derivatives of an expectation value computed as a gradient node (a distributed run) "
    "are not available; differentiate gate by gate outside a distributed run for Hessians")


def _gradient_node(jax: Any, compute: Callable, shape: tuple[int, ...], count: int, dtype: Any) -> Callable:
    """A value and its Jacobian, computed on the host, as one differentiable JAX function."""
    jnp = jax.numpy
    real = jnp.dtype(dtype)
    results = (jax.ShapeDtypeStruct(shape, real), jax.ShapeDtypeStruct(shape + (count,), real))

    def host(*values: Any) -> tuple[np.ndarray, np.ndarray]:
        value, jacobian = compute(np.asarray([float(np.asarray(v).reshape(())) for v in values]))
        return np.asarray(value, dtype=real).reshape(shape), np.asarray(jacobian, dtype=real).reshape(
            shape + (count,))

    def evaluated(*inputs: Any) -> tuple[Any, Any]:
        return jax.pure_callback(host, results, *inputs, vmap_method="sequential")

    @jax.custom_vjp
    def node(*inputs: Any) -> Any:
        return evaluated(*inputs)[0]

    def forward(*inputs: Any) -> tuple[Any, tuple]:
        value, jacobian = evaluated(*inputs)
        return value, (jacobian, tuple(jnp.shape(x) for x in inputs))

    def backward(residuals: tuple, cotangent: Any) -> tuple:
        jacobian, shapes = residuals
        grads = _first_order_only(jax)(jnp.tensordot(cotangent, jacobian, axes=len(shape)))
        return tuple(jnp.reshape(grads[i], input_shape) for i, input_shape in enumerate(shapes))

    node.defvjp(forward, backward)
    return node


@functools.lru_cache(maxsize=None)
def _first_order_only(jax: Any) -> Callable:
    """The identity on a node's gradient, whose derivative raises :data:`SECOND_DERIVATIVE_HINT`
    (never a silently dropped second derivative)."""

    @jax.custom_jvp
    def identity(x: Any) -> Any:
        return x

    @identity.defjvp
    def _(primals: tuple, tangents: tuple) -> Any:
        raise NotImplementedError(SECOND_DERIVATIVE_HINT)

    return identity


class JaxBackend(ArrayModuleBackend):
    """:class:`~tyxonq.numerics.ArrayBackend` over ``jax.numpy``, with JAX's transforms.

    Parameters
    ----------
    dtype : {"complex128", "complex64"}
        Working complex dtype.
    seed : int, optional
        Seed of the backend's default random generator.
    device : str, optional
        Must name JAX's default device (``"cpu"`` or ``"cuda:0"``) when given; JAX places every
        array there. Choose another with ``JAX_PLATFORMS`` before the first import of jax.

    Examples
    --------
    >>> K = JaxBackend()
    >>> value, grad = K.value_and_grad(lambda x: K.sum(K.sin(x)))(K.asarray([0.0, 1.0]))
    >>> [round(float(g), 6) for g in grad]
    [1.0, 0.540302]
    """

    name = "jax"

    def __init__(self, dtype: Any = "complex128", seed: int | None = None,
                 device: str | None = None) -> None:
        self.jax = import_jax()
        configure_jax()  # the persistent compilation cache, when one is set
        default = self.jax.devices()[0]
        if device is not None and device != _device_name(default):
            raise DeviceNotAvailableError(
                f"device={device!r}: the jax backend places arrays on JAX's default device, "
                f"{_device_name(default)!r}; pick the platform with JAX_PLATFORMS before jax is imported"
            )
        capabilities = BackendCapabilities(
            autodiff="autograd", vmap="native", jit="jax.jit",
            devices=tuple(dict.fromkeys(_device_name(d) for d in self.jax.devices())),
            device=_device_name(default), distributed=True, max_ndim=64,
        )
        super().__init__(importlib.import_module("jax.numpy"), capabilities, dtype=dtype, seed=seed)

    def constant(self, value: Any, dtype: Any = None) -> Any:
        """A concrete array even inside ``jit``/``grad`` tracing (so caching it leaks no tracer)."""
        with self.jax.ensure_compile_time_eval():
            return super().constant(value, dtype)

    def is_array(self, x: Any) -> bool:
        return isinstance(x, self.jax.Array)

    def needs_gradient(self, x: Any) -> bool:
        """Whether ``x`` is traced (by ``grad``, ``jit`` or ``vmap``): its value cannot be read
        and what is computed from it must stay a JAX array."""
        return isinstance(x, self.jax.core.Tracer)

    def hermitian_expectation(self, state: Any, apply: Callable[[Any], Any]) -> Any:
        """``Re <state|O|state>`` as a ``jax.custom_vjp``: the reverse pass reuses the forward
        pass's ``O|state>`` (cotangent ``2 conj(O|state>)``) instead of differentiating through
        ``apply`` (a 14-qubit Heisenberg energy and gradient under ``jit``: 2.6 -> 1.5 ms).
        Second derivatives (``jax.hessian``) still work: the rules are JAX code."""
        jax, jnp = self.jax, self.jax.numpy

        @jax.custom_vjp
        def form(vector: Any) -> Any:
            return jnp.real(jnp.sum(jnp.conj(vector) * apply(vector)))

        def forward(vector: Any) -> tuple[Any, Any]:
            applied = apply(vector)
            return jnp.real(jnp.sum(jnp.conj(vector) * applied)), applied

        def backward(applied: Any, cotangent: Any) -> tuple[Any]:
            return (2 * cotangent * jnp.conj(applied),)

        form.defvjp(forward, backward)
        return form(state)

    def host_readable(self, x: Any) -> bool:
        """Whether ``x`` is a number or a concrete array on the CPU (not traced)."""
        if isinstance(x, self.jax.core.Tracer):
            return False
        return not isinstance(x, self.jax.Array) or all(d.platform == "cpu" for d in x.devices())

    def readable_scalar(self, x: Any) -> Any:
        """The Python number a one-element array holds, or ``None`` for a traced value."""
        if isinstance(x, self.jax.core.Tracer):
            return None
        return x.item()

    def rng(self, seed: int | None = None) -> Any:
        """A seeded NumPy generator; samples are drawn on the host and moved to the device."""
        return np.random.default_rng(checked_seed(seed))

    def updates_in_pieces(self, array: Any) -> bool:
        """Concrete JAX arrays (not tracers): :meth:`write_piece` donates their buffer."""
        return isinstance(array, self.jax.Array) and not isinstance(array, self.jax.core.Tracer)

    def read_piece(self, array: Any, view: tuple[int, ...], starts: tuple[int, ...],
                   sizes: tuple[int, ...]) -> Any:
        """A compiled ``dynamic_slice`` of ``array`` viewed as ``view``: a copy of the piece only
        (an eager reshape would copy the whole array first)."""
        if not self.updates_in_pieces(array):
            return super().read_piece(array, view, starts, sizes)
        read, _ = _piece_functions(self.jax)
        return read(array, tuple(view), tuple(starts), tuple(sizes))

    def write_piece(self, array: Any, view: tuple[int, ...], starts: tuple[int, ...],
                    value: Any) -> Any:
        """A compiled ``dynamic_update_slice`` that donates ``array``'s buffer: XLA updates it in
        place, and ``array`` itself is deleted (continue with the returned array)."""
        if not self.updates_in_pieces(array):
            return super().write_piece(array, view, starts, value)
        _, write = _piece_functions(self.jax)
        return write(array, tuple(view), tuple(starts), self.asarray(value))

    def available_memory(self) -> int:
        stats = self.jax.devices()[0].memory_stats() if self.capabilities.device != "cpu" else None
        if stats and "bytes_limit" in stats:
            return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
        return super().available_memory()

    def svd(self, a: Any, full_matrices: bool = False) -> tuple[Any, Any, Any]:
        """SVD; the reduced one (``full_matrices=False``) differentiates with broadened
        denominators at degenerate singular values (:mod:`tyxonq.numerics.svd_gradient`)."""
        if full_matrices:
            return super().svd(a, full_matrices=True)
        return tuple(_broadened_svd(self.jax)(self.asarray(a)))

    def expm(self, a: Any) -> Any:
        """Higham's Padé(13) with scaling and squaring in JAX operations (differentiable), the
        squarings chosen from the 1-norm read with gradients detached; inside ``jit``, where it
        cannot be read, ``jax.scipy.linalg.expm`` (which chooses them in the program, and loses
        digits on strongly non-normal matrices: 3e-11 on a Krylov method's Hessenberg matrix)."""
        a = self.asarray(a)
        if not (self.is_complex(a) or a.dtype.kind == "f"):
            a = a.astype(self.real_dtype)
        try:
            host = np.asarray(self.jax.lax.stop_gradient(a))
        except Exception:  # traced under jit
            import jax.scipy.linalg

            return jax.scipy.linalg.expm(a)
        one_norm = float(np.max(np.sum(np.abs(host), axis=-2))) if host.size else 0.0
        return expm_pade13(self.xp, a, one_norm)

    def svd_split(self, a: Any, rank: Callable[[Any, int], int]) -> tuple[Any, Any, Any]:
        """See :meth:`ArrayModuleBackend.svd_split`; JAX differentiates it by
        :func:`~tyxonq.numerics.svd_gradient.split_cotangent`. Inside ``jit`` the singular
        values cannot be read: ``rank`` gets ``None`` and must answer from shapes alone."""
        a = self.asarray(a)
        u, s, vh = self.jax.lax.stop_gradient(self.xp.linalg.svd(a, full_matrices=False))
        r = choose_rank(rank, s, self.to_numpy)
        kept_u, kept_w = _svd_split(self.jax)(a, u, s, vh, r)
        return kept_u, kept_w, s

    # -- transforms ------------------------------------------------------------------------------
    def compiling(self) -> bool:
        """Whether a ``jax.jit`` trace is active (also beneath ``grad``/``vmap`` inside it);
        eager calls, eager ``jax.grad`` and ``vmap`` included, are not compiling."""
        try:
            from jax._src.interpreters.partial_eval import DynamicJaxprTrace
        except ImportError:  # pragma: no cover - a JAX without these internals: the quick plans
            return False
        return _trace_active((DynamicJaxprTrace,))

    def differentiating(self) -> bool:
        """Whether a ``jax.grad``/``jvp``/``jacfwd`` trace is active (derivatives of what is
        computed now may be taken)."""
        try:
            from jax._src.interpreters.ad import JVPTrace, LinearizeTrace
        except ImportError:  # pragma: no cover - a JAX without these internals: assume so
            return True
        return _trace_active((JVPTrace, LinearizeTrace))

    def batching(self) -> bool:
        """Whether a ``jax.vmap`` trace is active (inside ``jit`` or not)."""
        try:
            from jax._src.interpreters.batching import BatchTrace
        except ImportError:  # pragma: no cover - a JAX without these internals: assume so
            return True
        return _trace_active((BatchTrace,))

    def detach(self, x: Any) -> Any:
        return self.jax.lax.stop_gradient(self.asarray(x))

    def uses_gradient_nodes(self) -> bool:
        """Only in a distributed run (``tq.distributed.initialize()`` joined a launcher's run, of
        any number of ranks): JAX differentiates by tracing, but traced values cannot leave the
        computation for the ranks to share; a gradient node's host computation can."""
        from .distributed import joined

        return joined()

    def records_gradients(self) -> bool:
        """A node's inputs are traced wherever a transform differentiates (``needs_gradient``)."""
        return True

    def gradient_node(self, compute: Callable[[np.ndarray], tuple[Any, Any]], inputs: list[Any],
                      shape: tuple[int, ...] = ()) -> Any:
        """``compute(values)``'s value (of ``shape``), whose derivative with respect to
        ``inputs`` (real scalars) is its Jacobian: a ``jax.custom_vjp`` whose forward pass is a
        host callback (``jax.pure_callback``: it runs under ``jit`` and ``vmap`` too) and whose
        backward pass is one product with the Jacobian. Differentiating it twice raises.

        Examples
        --------
        >>> import jax
        >>> K = JaxBackend()
        >>> f = lambda x: K.gradient_node(lambda v: (np.sin(v[0]), np.cos(v[:1])), [x])
        >>> round(float(jax.grad(f)(0.5)), 6) == round(float(np.cos(0.5)), 6)
        True
        """
        return _gradient_node(self.jax, compute, tuple(shape), len(inputs),
                              self.real_dtype)(*[self.asarray(x) for x in inputs])

    def host_twin(self) -> Any:
        """The NumPy backend of this precision: a gradient node computes inside a host callback."""
        from .numpy_backend import numpy_twin

        return numpy_twin(self)

    def host_twin_entries(self) -> float:
        """On the CPU every eager contraction's size: XLA's complex products run 1.5-2.4x slower
        than OpenBLAS's at a 20- to 22-qubit state's shapes (``benchmarks/floors.py``) and eager
        JAX pays dispatch per operation besides (a 36-qubit lattice's exact samples: 48 s eager,
        18 s on NumPy); on a GPU only small ones (its kernels win above)."""
        return math.inf if self.capabilities.device == "cpu" else super().host_twin_entries()

    def host_program_entries(self) -> float:
        """On the CPU 2^22 entries: XLA contracted a 22-qubit state and a 12-qubit density matrix
        (largest intermediates 2^22 and 2^24 entries) 1.47-1.53x slower than NumPy, a 20-qubit
        state and a 10- or 11-qubit density matrix at 0.6-1.2x NumPy's time, and a host callback
        adds a copy of the result (3% of a 22-qubit state); on a GPU never (infinite)."""
        return float(2 ** 22) if self.capabilities.device == "cpu" else math.inf

    def host_computed(self, host: Callable[[np.ndarray], np.ndarray], traced: Callable[[Any], Any],
                      operand: Any, shape: tuple[int, ...], dtype: Any) -> Any:
        """``traced(operand)`` with its value from ``host`` in a host callback
        (``jax.pure_callback``: inside ``jit`` the program calls NumPy there), its derivatives
        ``traced``'s (a ``jax.custom_jvp``: forward and reverse mode, ``vmap`` one operand at a
        time). Exact as long as ``host`` computes the same values.

        Examples
        --------
        >>> import jax, numpy as np
        >>> K = JaxBackend()
        >>> f = jax.jit(lambda x: K.host_computed(np.sin, K.sin, x, (2,), "float64"))
        >>> [round(float(v), 6) for v in f(K.asarray([0.0, 1.0]))]
        [0.0, 0.841471]
        >>> round(float(jax.grad(lambda x: K.host_computed(np.sin, K.sin, x, (), "float64"))(1.0)), 6)
        0.540302
        """
        jax = self.jax
        result = jax.ShapeDtypeStruct(tuple(shape), self._resolve_dtype(dtype))

        def on_host(values: Any) -> np.ndarray:
            return np.asarray(host(np.asarray(values)), dtype=result.dtype).reshape(result.shape)

        @jax.custom_jvp
        def value(x: Any) -> Any:
            return jax.pure_callback(on_host, result, x, vmap_method="sequential")

        @value.defjvp
        def derivative(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            return value(primals[0]), jax.jvp(traced, primals, tangents)[1]

        return value(operand)

    def value_and_grad(self, fn: Callable[..., Any], argnums: Any = 0,
                       has_aux: bool = False) -> Callable[..., Any]:
        """``fn``'s value and gradient by ``jax.value_and_grad`` (composes with ``jit``/``vmap``).

        For a complex argument ``z`` the gradient is ``df/dRe z + 1j df/dIm z``, as on the other
        backends (JAX's own convention is its conjugate).

        Examples
        --------
        >>> K = JaxBackend()
        >>> value, grad = K.value_and_grad(lambda z: K.sum(K.abs(z) ** 2))(K.asarray([1 + 2j]))
        >>> complex(grad[0])
        (2+4j)
        """
        def transform(checked: Callable, nums: Any, aux: bool) -> Callable:
            return self.jax.value_and_grad(checked, argnums=nums, has_aux=aux)

        def conjugated(grads: Any) -> Any:
            return self.jax.tree_util.tree_map(
                lambda g: self.xp.conj(g) if self.is_complex(g) else g, grads)

        return autograd_value_and_grad(self, fn, argnums, has_aux, transform, self._prepared, conjugated)

    def jacobian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Jacobian by ``jax.jacrev`` (shape ``output.shape + argument.shape``; for a
        complex argument ``df/dRe z + 1j df/dIm z``, through its real and imaginary parts).

        Examples
        --------
        >>> K = JaxBackend()
        >>> K.jacobian(lambda x: x ** 2)(K.asarray([1.0, 3.0])).tolist()
        [[2.0, 0.0], [0.0, 6.0]]
        """
        return autograd_jacobian(self, fn, argnums, self.jax.jacrev, self._prepared)

    def hessian(self, fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
        """``fn``'s Hessian by ``jax.hessian`` (forward over reverse; a real scalar ``fn`` of real
        arguments).

        Examples
        --------
        >>> K = JaxBackend()
        >>> K.hessian(lambda x: K.sum(x ** 3))(K.asarray([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
        """
        return autograd_hessian(self, fn, argnums, self.jax.hessian, self._prepared)

    def _prepared(self, argument: Any) -> Any:
        """A differentiated argument as a floating array."""
        return self.cast(argument, self.differentiable_dtype(self.asarray(argument)))

    def vmap(self, fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
        """Vectorise ``fn`` with ``jax.vmap``."""
        in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        out_axes = tuple(out_axes) if isinstance(out_axes, list) else out_axes
        return self.jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)

    def jit(self, fn: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        """``jax.jit(fn, **options)``: compiled on the first call, again for each new shape."""
        return self.jax.jit(fn, **options)
