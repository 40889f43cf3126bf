"""Behaviour shared by every backend: dtype configuration, dtype lookup and dimension checks."""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable

import numpy as np

from .allocator import prime_allocator
from .autodiff import normalize_argnums
from .capabilities import BackendCapabilities
from .dtypes import DTYPE_NAMES, python_dtype_name, real_dtype_name, validate_precision
from .errors import DimensionLimitError

__all__ = ["BackendBase"]


class BackendBase:
    """Configuration and helpers common to all backends; subclasses supply the array library.

    Subclasses implement :meth:`_library_dtype` (a dtype name to the library's dtype object) and
    :meth:`_dtype_name` (the inverse), and set :attr:`capabilities`.
    """

    name: str = "base"
    capabilities: BackendCapabilities

    def __init__(self, dtype: Any = "complex128") -> None:
        self.precision = validate_precision(dtype)
        for dtype_name in DTYPE_NAMES:
            setattr(self, dtype_name, self._library_dtype(dtype_name))
        self.dtype = self._library_dtype(self.precision)
        self.real_dtype = self._library_dtype(real_dtype_name(self.precision))
        prime_allocator()  # large temporaries from glibc's heap, not fresh pages each time

    # -- to be provided by subclasses -------------------------------------------------------
    def _library_dtype(self, name: str) -> Any:
        raise NotImplementedError

    def _dtype_name(self, dtype: Any) -> str:
        raise NotImplementedError

    # -- dtype helpers ----------------------------------------------------------------------
    def _resolve_dtype(self, dtype: Any, default: Any = None) -> Any:
        """Map ``None``/a name/a library dtype to the library dtype, rejecting unknown ones."""
        if dtype is None:
            return default
        name = dtype if isinstance(dtype, str) else self._dtype_name(dtype)
        if name not in DTYPE_NAMES:
            raise TypeError(f"dtype={dtype!r} is not supported; expected one of {DTYPE_NAMES}")
        return self._library_dtype(name)

    def _creation_dtype(self, obj: Any, dtype: Any) -> Any:
        """Dtype for ``array``/``asarray``: explicit, else Python inputs take the precision."""
        if dtype is not None:
            return self._resolve_dtype(dtype)
        inferred = python_dtype_name(obj, self.precision)
        return None if inferred is None else self._library_dtype(inferred)

    def _arange_arguments(self, start: float, stop: float | None, step: float,
                          dtype: Any) -> tuple[float, float, float, Any]:
        """NumPy's ``arange(stop)`` / ``arange(start, stop, step)`` forms, with the dtype rule."""
        bounds = [v for v in (start, stop, step) if v is not None]
        dtype = self._creation_dtype(bounds, dtype)
        if stop is None:
            start, stop = 0, start
        return start, stop, step, dtype

    def dtype_name_of(self, x: Any) -> str:
        """The name of ``x``'s dtype (``"complex128"``, ``"float32"``, ``"int64"`` ...).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.get_backend("numpy").dtype_name_of(np.ones(2, dtype=np.float32))
        'float32'
        """
        return self._dtype_name(self.dtype_of(x))

    def is_complex(self, x: Any) -> bool:
        """Whether ``x`` has a complex dtype."""
        return self._dtype_name(self.dtype_of(x)).startswith("complex")

    def is_floating(self, x: Any) -> bool:
        """Whether ``x`` has a real floating dtype."""
        return self._dtype_name(self.dtype_of(x)).startswith("float")

    def differentiable_dtype(self, x: Any) -> Any:
        """Dtype an argument is differentiated in: complex/float keep theirs, others go real."""
        if self.is_complex(x) or self.is_floating(x):
            return self.dtype_of(x)
        return self.real_dtype

    def _refuse_complex_to_real(self, x: Any, target: Any) -> None:
        if self.is_complex(x) and not self._dtype_name(target).startswith("complex"):
            raise TypeError(
                f"cast from {self._dtype_name(self.dtype_of(x))} to {self._dtype_name(target)} "
                "would drop the imaginary part; take real(x) or abs(x) explicitly first"
            )

    def _weak_scalars(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Python numbers take the dtype of the array beside them (NumPy 2's weak scalars),
        widened only as far as their kind needs (a complex number next to float32 -> complex64)."""

        def weak(scalar: Any, other: Any) -> Any:
            if not isinstance(scalar, (bool, int, float, complex)) or not self.is_array(other):
                return scalar
            name = self._dtype_name(self.dtype_of(other))
            if isinstance(scalar, complex) and not name.startswith("complex"):
                name = np.result_type(name if name.startswith("float") else self.real_dtype_name,
                                      np.complex64).name
            elif isinstance(scalar, float) and not name.startswith(("float", "complex")):
                name = self.real_dtype_name
            return self.asarray(scalar, name)

        return weak(x, y), weak(y, x)

    @property
    def real_dtype_name(self) -> str:
        return real_dtype_name(self.precision)

    def _complex_sign(self, x: Any) -> Any:
        """``z / |z|`` (0 at 0), NumPy 2's complex sign, by real divisions: a complex division
        overflows for subnormal ``z`` (NumPy's own formula does not; ``torch.sgn`` does)."""
        magnitude = self.abs(x)
        safe = self.where(magnitude == 0, 1.0, magnitude)
        unit = self.real(x) / safe + 1j * (self.imag(x) / safe)
        return self.cast(self.where(magnitude == 0, 0.0, unit), self.dtype_of(x))

    # -- dimension limit --------------------------------------------------------------------
    def _check_ndim(self, ndim: int, operation: str) -> None:
        limit = self.capabilities.max_ndim
        if ndim > limit:
            raise DimensionLimitError(
                f"{operation} would need {ndim} array dimensions but the {self.name} backend "
                f"supports at most {limit}; reshape into fewer, larger axes"
            )

    # -- memory -----------------------------------------------------------------------------
    def available_memory(self) -> int:
        """Bytes this backend can allocate on its device (host: physical memory available)."""
        return host_available_memory()

    def writes_in_place(self, array: Any) -> bool:
        """Whether ``array``'s views may be written in place (``view[...] = values`` changes
        ``array``, and nothing else observes it): memory-lean sweeps of large states use it. Here
        never; NumPy (writeable arrays) and PyTorch (tensors outside autograd) override it.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.get_backend("numpy").writes_in_place(np.zeros(2)), tq.get_backend("numpy").writes_in_place(0)
        (True, False)
        """
        return False

    def updates_in_pieces(self, array: Any) -> bool:
        """Whether :meth:`write_piece` on ``array`` costs only the piece (no second array as large
        as ``array``): where the backend writes in place (:meth:`writes_in_place`), and on JAX for
        concrete arrays (a compiled update that reuses the donated buffer).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.get_backend("numpy").updates_in_pieces(np.zeros(2))
        True
        """
        return self.writes_in_place(array)

    def read_piece(self, array: Any, view: tuple[int, ...], starts: tuple[int, ...],
                   sizes: tuple[int, ...]) -> Any:
        """The block of ``array`` viewed with shape ``view`` that starts at ``starts`` and has
        shape ``sizes`` (a view where the backend has views; on JAX a copy of the piece only).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.get_backend("numpy").read_piece(np.arange(8), (2, 4), (1, 2), (1, 2)).tolist()
        [[6, 7]]
        """
        blocks = tuple(slice(start, start + size) for start, size in zip(starts, sizes))
        return self.reshape(array, view)[blocks]

    def write_piece(self, array: Any, view: tuple[int, ...], starts: tuple[int, ...],
                    value: Any) -> Any:
        """``array`` with the block of :meth:`read_piece` (its shape that of ``value``) replaced by
        ``value``; only where :meth:`updates_in_pieces` says so. In place here (the result is
        ``array``); on JAX ``array``'s buffer is donated to the result, so ``array`` must not be
        used again: always continue with the returned array.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> state = np.zeros(4)
        >>> tq.get_backend("numpy").write_piece(state, (2, 2), (1, 0), np.ones((1, 2))).tolist()
        [0.0, 0.0, 1.0, 1.0]
        """
        if not self.updates_in_pieces(array):
            raise ValueError(f"the {self.name} backend cannot update pieces of this array "
                             "(updates_in_pieces is False): compute the whole array instead")
        sizes = tuple(self.shape(value))
        self.read_piece(array, view, starts, sizes)[...] = value
        return array

    # -- gradients --------------------------------------------------------------------------
    def grad(self, fn: Callable[..., Any], argnums: Any = 0,
             has_aux: bool = False) -> Callable[..., Any]:
        """Gradient of a real scalar function; see :meth:`value_and_grad`.

        Returns the gradient (a tuple for tuple ``argnums``), or ``(gradient, aux)`` when
        ``has_aux`` is true.
        """
        normalize_argnums(argnums)
        value_and_grad = self.value_and_grad(fn, argnums, has_aux)

        def gradient(*args: Any, **kwargs: Any) -> Any:
            value, grads = value_and_grad(*args, **kwargs)
            return (grads, value[1]) if has_aux else grads

        return functools.wraps(fn)(gradient)

    def value_and_grad(self, fn: Callable[..., Any], argnums: Any = 0,
                       has_aux: bool = False) -> Callable[..., Any]:
        raise NotImplementedError

    def compiling(self) -> bool:
        """Whether the code running now is being traced into a compiled program (inside
        ``jax.jit``): work done once per program (a thorough path search) pays off only then."""
        return False

    def differentiating(self) -> bool:
        """Whether a transform taking derivatives of what is computed now is active (JAX's
        ``grad``/``jvp`` traces); ``False`` where derivatives are recorded as computed (PyTorch)
        or not taken by autograd (NumPy)."""
        return False

    def batching(self) -> bool:
        """Whether a transform mapping what is computed now over a batch is active (JAX's
        ``vmap`` traces); ``False`` where batches are arrays with a leading axis."""
        return False

    def uses_gradient_nodes(self) -> bool:
        """Whether simulators should make each expectation value one :meth:`gradient_node` now
        (PyTorch always, JAX in a distributed run): ``capabilities.gradient_nodes`` by default."""
        return self.capabilities.gradient_nodes

    def records_gradients(self) -> bool:
        """Whether a :meth:`gradient_node` made now would be recorded by autograd (``False`` on
        backends without gradient nodes)."""
        return False

    def needs_gradient(self, x: Any) -> bool:
        """Whether autograd tracks ``x`` (PyTorch) or a transform traces it (JAX): what is computed
        from it must stay the backend's arrays. ``False`` for NumPy's."""
        return False

    def gradient_node(self, compute: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                      inputs: list[Any], shape: tuple[int, ...] = ()) -> Any:
        """A value computed outside autograd, differentiable with respect to ``inputs`` (real
        scalars) through its Jacobian: ``compute(values)`` returns ``(value, jacobian)`` as host
        arrays, the value of ``shape``, the Jacobian of shape ``shape + (len(inputs),)``. Where
        :meth:`uses_gradient_nodes`."""
        raise NotImplementedError(f"the {self.name} backend has no gradient nodes")

    def host_twin(self) -> Any:
        """The backend that computes fastest for this one's arrays outside autograd: the NumPy
        backend of the same precision for arrays in host memory, else this backend."""
        return self

    def host_twin_entries(self) -> float:
        """The largest intermediate (entries) of an eager contraction, of values nothing
        differentiates, that runs faster on :meth:`host_twin` than here: below it a contraction's
        cost is per-call dispatch, which NumPy pays least; above it this backend's threaded
        kernels win (PyTorch on the CPU: 2^18, measured on 2 cores)."""
        return float(2 ** 18)

    def host_program_entries(self) -> float:
        """The largest intermediate (entries) from which a contraction inside a program this
        backend compiles runs faster on :meth:`host_twin`, called back from the program
        (:meth:`host_computed`), than compiled; infinite (never) here: nothing compiles."""
        return math.inf

    def host_computed(self, host: Callable[[np.ndarray], np.ndarray], traced: Callable[[Any], Any],
                      operand: Any, shape: tuple[int, ...], dtype: Any) -> Any:
        """``traced(operand)``, whose value a compiled program may take from ``host`` instead:
        ``host`` gets the operand's values as a host array and returns the same values (of
        ``shape`` and ``dtype``) faster; derivatives are always ``traced``'s. Here (nothing
        compiles) the value is ``traced(operand)``; JAX overrides it with a host callback.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> K = tq.get_backend("numpy")
        >>> K.host_computed(np.sin, K.sin, np.array([0.0]), (1,), "float64").tolist()
        [0.0]
        """
        return traced(operand)

    def hermitian_expectation(self, state: Any, apply: Callable[[Any], Any]) -> Any:
        """``Re <state|O|state>`` for a Hermitian ``O`` given by its action ``apply(state)``
        (linear). Backends with a cheaper derivative override it: the derivative is
        ``2 Re <d state|O|state>``, from the ``O|state>`` the value already computed.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> K = tq.get_backend("numpy")
        >>> round(float(K.hermitian_expectation(np.array([0.6, 0.8j]), lambda s: s * np.array([1, -1]))), 12)
        -0.28
        """
        return self.real(self.sum(self.conj(state) * apply(state)))

    def row_sparse(self, columns: np.ndarray, values: np.ndarray) -> Callable[[Any], Any]:
        """The product with the sparse ``N x N`` matrix ``A[i, columns[i, t]] = values[i, t]``
        (``t`` runs over a fixed number of entries per row; ``columns`` and ``values`` host arrays
        of shape ``(N, T)``), as a function of a vector ``(N,)`` or a stack ``(batch, N)``. The
        matrix is prepared once; the product is not differentiated. Here a gather and a sum;
        backends whose :attr:`~BackendCapabilities.sparse_products` is true override it with a
        compiled sparse product.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> K = tq.get_backend("numpy")
        >>> swap = K.row_sparse(np.array([[1], [0]]), np.array([[1.0], [2.0]]))  # [[0, 1], [2, 0]]
        >>> np.asarray(swap(np.array([3.0, 4.0]))).tolist()
        [4.0, 6.0]
        """
        columns = np.asarray(columns, dtype=np.int64)
        entries = self.constant(np.asarray(values))

        def product(vector: Any) -> Any:
            return self.sum(entries * self.take(vector, columns, axis=-1), axis=-1)

        return product

    def host_readable(self, x: Any) -> bool:
        """Whether :meth:`host_twin` may compute with ``x``'s value in its place: nothing tracks
        or traces it and it lies in host memory (a number always is)."""
        return not self.needs_gradient(x)

    def host_copyable(self, x: Any) -> bool:
        """Whether :meth:`host_twin` may compute with a copy of ``x``'s value (read by
        :meth:`to_numpy`): nothing tracks or traces it; a device array costs one transfer. Here
        the same as :meth:`host_readable`; PyTorch on CUDA also takes its device's tensors (a
        light cone's few angles and matrices)."""
        return self.host_readable(x)

    def dtype_of(self, x: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.precision!r}, device={self.capabilities.device!r})"


def host_available_memory() -> int:
    """Physical memory currently available on this host, in bytes (total if unknown)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
