"""``tq.value_and_grad``: one objective, the right gradient method for the active backend.

A user writes the objective once -- a function of a parameter array that builds circuits and
returns an energy -- and ``tq.value_and_grad(objective)`` differentiates it:

* ``"adjoint"`` (the default on NumPy, cuPyNumeric and PyTorch): exact, every expectation value
  differentiated by one adjoint sweep over the state (or reverse mode through its light-cone
  contractions). On NumPy and cuPyNumeric the parameters are traced as dual numbers through the
  objective's arithmetic; on PyTorch autograd differentiates the objective and each expectation
  value is one autograd node whose backward pass is that sweep
  (:mod:`tyxonq.circuit.differentiation.node`).
* ``"autograd"`` (the default on JAX): autograd through the simulator, every gate.
* ``"parameter-shift"``: exact, like adjoint, but each angle's derivative comes from shifted
  evaluations (through the cached contraction plans, so light cones still apply).
* ``"finite-difference"``: central differences (backends without autograd).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .circuit.differentiation.tracing import gradient_method
from .numerics import get_backend
from .numerics.autodiff import check_argnums_in_range, normalize_argnums, split_value_and_aux
from .numerics.dual import Dual, TracingError, traced_array
from .numerics.host_twin import host_first
from .numerics.lanes import Lanes, LanesError
from .numerics.protocol import ArrayBackend

__all__ = ["value_and_grad", "grad", "jacobian", "hessian", "gradient_method", "GRADIENT_METHODS"]

GRADIENT_METHODS = ("autograd", "adjoint", "parameter-shift", "finite-difference")


def _default_method(K: ArrayBackend) -> str:
    autograd_only = K.capabilities.autodiff == "autograd" and not K.uses_gradient_nodes()
    return "autograd" if autograd_only else "adjoint"


def value_and_grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
                   method: str | None = None, backend: Any = None) -> Callable[..., Any]:
    """Value and exact gradient of a real scalar objective, on the active (or given) backend.

    Parameters
    ----------
    fn : callable
        Returns a real scalar (or ``(scalar, aux)`` with ``has_aux=True``), typically an energy
        of circuits built from the parameters.
    argnums : int or tuple of int
        Positional arguments to differentiate (real scalars or arrays).
    has_aux : bool
        ``fn`` returns ``(value, aux)``; the result is then ``((value, aux), grads)``.
    method : {"autograd", "adjoint", "parameter-shift", "finite-difference"}, optional
        Default: ``"adjoint"``, except on JAX (``"autograd"``, which its compiler makes fast).
        On PyTorch the exact methods run inside autograd (each expectation value one node), so
        ``fn`` may use any torch operation; where every argument is a CPU tensor autograd does
        not track, ``fn`` runs on the NumPy host twin in PyTorch's place instead (the same
        values, no autograd graph; tried once per ``fn``: one that calls torch functions runs on
        PyTorch from then on). ``has_aux=True`` keeps PyTorch.
    backend : ArrayBackend, optional
        Fix the backend instead of using the one active at each call.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> def energy(t):
    ...     c = tq.Circuit(2).ry(0, t[0]).cx(0, 1).rx(1, 2 * t[1])
    ...     return c.expectation_ps(z=[1]) + 0.5 * c.expectation_ps(x=[0])
    >>> with tq.use_backend("numpy"):
    ...     value, gradient = tq.value_and_grad(energy)(np.array([0.3, 0.2]))
    >>> np.round(gradient, 6).tolist()
    [-0.272192, -0.744051]
    """
    normalize_argnums(argnums)
    _check_method(method)
    on_twin: dict[Any, Callable[..., Any]] = {}

    @functools.wraps(fn)
    def transformed(*args: Any, **kwargs: Any) -> Any:
        K = backend if backend is not None else get_backend()
        chosen = _chosen_method(K, method)
        if chosen in ("adjoint", "parameter-shift") and not has_aux and K.uses_gradient_nodes() \
                and K.host_twin() is not K:
            if K not in on_twin:
                on_twin[K] = host_first(K, functools.partial(_on_active, fn, argnums, chosen), key=fn,
                                       role="gradient")  # the route tq.optimize.minimize shares
            return on_twin[K](*args, **kwargs)
        return _on_backend(K, fn, argnums, has_aux, chosen, args, kwargs)

    return transformed


def _on_active(fn: Callable[..., Any], argnums: Any, chosen: str, *args: Any, **kwargs: Any) -> Any:
    """:func:`value_and_grad` by the ``chosen`` exact method on the active backend: PyTorch's host
    twin in its place (:func:`~tyxonq.numerics.host_twin.host_first`: the same values without
    autograd's graph, NumPy's cost per small operation), else PyTorch itself."""
    return _on_backend(get_backend(), fn, argnums, False, chosen, args, kwargs)


def _on_backend(K: ArrayBackend, fn: Callable[..., Any], argnums: Any, has_aux: bool, chosen: str,
                args: tuple, kwargs: dict) -> Any:
    """:func:`value_and_grad` on ``K`` itself with the ``chosen`` method."""
    if chosen == "finite-difference":
        return K.value_and_grad(fn, argnums, has_aux)(*args, **kwargs)
    if chosen == "autograd" or K.uses_gradient_nodes():
        with gradient_method(chosen):  # exact methods as gradient nodes inside autograd
            return K.value_and_grad(fn, argnums, has_aux)(*args, **kwargs)
    return _traced_value_and_grad(K, fn, argnums, has_aux, chosen, args, kwargs)


def _chosen_method(K: ArrayBackend, method: str | None) -> str:
    """``method`` (or the backend's default), checked against what the backend can do."""
    chosen = method or _default_method(K)
    if chosen == "autograd" and K.capabilities.autodiff != "autograd":
        raise ValueError(
            f"method='autograd' needs a backend with autograd (pytorch, jax); the {K.name} backend "
            "differentiates with 'adjoint', 'parameter-shift' or 'finite-difference'"
        )
    if chosen == "finite-difference" and K.capabilities.autodiff != "finite-difference":
        raise ValueError(
            f"method='finite-difference' runs on the numpy or cupynumeric backends; the "
            f"{K.name} backend has exact autograd"
        )
    return chosen


def jacobian(fn: Callable[..., Any], argnums: Any = 0, *, method: str | None = None,
             backend: Any = None) -> Callable[..., Any]:
    """The Jacobian of an objective's outputs (an array of expectation values, per-term energies,
    ...), exact on every backend; shape ``output.shape + argument.shape``.

    The method is chosen as for :func:`value_and_grad`: on NumPy and cuPyNumeric the parameters
    are traced (each expectation value differentiated by one adjoint sweep, or by parameter
    shift), on PyTorch and JAX :meth:`~tyxonq.numerics.protocol.ArrayBackend.jacobian` (reverse
    mode through the simulator: its batched vector-Jacobian products cannot run the host-side
    adjoint nodes); ``method="finite-difference"`` on request.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> def terms(t):
    ...     c = tq.Circuit(2).ry(0, t[0]).cx(0, 1).rx(1, t[1])
    ...     return c.pauli_expectations(["ZI", "IZ"])
    >>> with tq.use_backend("numpy"):
    ...     J = tq.jacobian(terms)(np.array([0.3, 0.2]))
    >>> (np.round(J, 6) + 0.0).tolist()
    [[-0.29552, 0.0], [-0.289629, -0.189796]]
    """
    def from_traced(K: ArrayBackend, output: Any, values: list[np.ndarray], total: int) -> list[Any]:
        rows = _output_duals(K, output, total)
        table = np.stack([dual.gradient for dual in rows.reshape(-1)]) if rows.size else np.zeros((0, total))
        dtype = K.dtype if np.iscomplexobj(table) else K.real_dtype
        return [K.asarray(block, dtype) for block in _split(table, values, rows.shape)]

    return _second_transform("jacobian", fn, argnums, method, backend, False, from_traced)


def hessian(fn: Callable[..., Any], argnums: Any = 0, *, method: str | None = None,
            backend: Any = None) -> Callable[..., Any]:
    """The Hessian of a real scalar objective, exact on every backend (for small parameter
    counts); shape ``argument.shape * 2`` (nested blocks ``[i][j]`` for a tuple of ``argnums``).

    On NumPy and cuPyNumeric the parameters are traced to second order: each expectation value's
    second derivatives with respect to its gate angles come from the shift rule applied to its
    exact angle gradient (``2`` adjoint sweeps per angle, ``4`` for controlled rotations; with
    ``method="parameter-shift"`` shifted evaluations throughout) and are chained into the
    parameters with the classical processing around them. On PyTorch and JAX it is
    :meth:`~tyxonq.numerics.protocol.ArrayBackend.hessian` (forward over reverse autodiff).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> energy = lambda t: tq.Circuit(1).rx(0, t[0]).ry(0, 2 * t[1]).expectation_ps(z=[0])
    >>> with tq.use_backend("numpy"):
    ...     H = tq.hessian(energy)(np.array([0.3, 0.2]))
    >>> np.round(H, 6).tolist()  # of cos(t0) cos(2 t1)
    [[-0.879923, 0.230162], [0.230162, -3.519693]]
    """
    def from_traced(K: ArrayBackend, output: Any, values: list[np.ndarray], total: int) -> list[list[Any]]:
        result = _scalar_dual(K, output, total)
        table = np.zeros((total, total)) if result.hessian is None else np.real(result.hessian)
        rows = [np.moveaxis(piece, 0, -1) for piece in _split(table.T, values, (total,))]
        return [[K.asarray(block, K.real_dtype) for block in _split(row, values, value.shape)]
                for row, value in zip(rows, values)]

    return _second_transform("hessian", fn, argnums, method, backend, True, from_traced)


def _second_transform(kind: str, fn: Callable[..., Any], argnums: Any, method: str | None, backend: Any,
                      second_order: bool, from_traced: Callable) -> Callable[..., Any]:
    """:func:`jacobian` or :func:`hessian`: the backend's transform (``K.<kind>``) on autograd
    backends and for finite differences, else ``fn`` traced (to ``second_order``) and
    ``from_traced(K, output, host values, total size)`` making one block per argument."""
    normalize_argnums(argnums)
    _check_method(method)

    @functools.wraps(fn)
    def transformed(*args: Any, **kwargs: Any) -> Any:
        K = backend if backend is not None else get_backend()
        chosen = _chosen_method(K, method)
        if chosen == "finite-difference" or K.capabilities.autodiff == "autograd":
            with gradient_method("autograd"):  # the library's transform through the simulator
                return getattr(K, kind)(fn, argnums)(*args, **kwargs)
        output, values, total, single = _traced_call(K, fn, argnums, chosen, args, kwargs, second_order)
        blocks = from_traced(K, output, values, total)
        if single:
            return blocks[0][0] if second_order else blocks[0]
        return tuple(tuple(row) for row in blocks) if second_order else tuple(blocks)

    return transformed


def _split(table: np.ndarray, values: list[np.ndarray], lead: tuple[int, ...]) -> list[np.ndarray]:
    """``table``'s last axis cut into one piece per argument, each shaped ``lead + argument``."""
    offsets = np.cumsum([0] + [value.size for value in values])
    return [table[..., offsets[i]:offsets[i + 1]].reshape(lead + value.shape)
            for i, value in enumerate(values)]


def _check_method(method: str | None) -> None:
    if method is not None and method not in GRADIENT_METHODS:
        raise ValueError(f"method={method!r} must be one of {GRADIENT_METHODS}")


def grad(fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
         method: str | None = None, backend: Any = None) -> Callable[..., Any]:
    """The gradient only; see :func:`value_and_grad`.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> with tq.use_backend("numpy"):
    ...     g = tq.grad(lambda t: tq.Circuit(1).rx(0, t).expectation_ps(z=[0]))(0.4)
    >>> bool(abs(float(g) + np.sin(0.4)) < 1e-12)
    True
    """
    value_and_gradient = value_and_grad(fn, argnums, has_aux, method=method, backend=backend)

    @functools.wraps(fn)
    def gradient(*args: Any, **kwargs: Any) -> Any:
        value, grads = value_and_gradient(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return gradient


def _traced_call(K: ArrayBackend, fn: Callable[..., Any], argnums: Any, method: str, args: tuple,
                 kwargs: dict, second_order: bool) -> tuple[Any, list[np.ndarray], int, bool]:
    """``fn`` called with the ``argnums`` arguments traced (:class:`Dual` numbers, with Hessians
    for ``second_order``) under ``method``: its output, the arguments' host values, their total
    size, and whether ``argnums`` was one int."""
    nums, single = normalize_argnums(argnums)
    check_argnums_in_range(nums, len(args))
    values = []
    for a in nums:
        if isinstance(args[a], Lanes) or (isinstance(args[a], np.ndarray) and args[a].dtype == object
                                          and any(isinstance(x, Lanes) for x in args[a].flat)):
            raise LanesError(f"exact gradients (method={method!r}) of a batch of parameter sets: "
                             "they run one set at a time (vectorize_or_fallback loops)")
        host = np.asarray(K.to_numpy(K.asarray(args[a])))
        if host.dtype.kind == "c":
            raise TypeError(f"argument {a}: method={method!r} differentiates real parameters; "
                            "got a complex array")
        values.append(host.astype(np.float64))
    total = sum(v.size for v in values)
    traced_args, offset = list(args), 0
    for a, value in zip(nums, values):
        traced = traced_array(value, offset, total, second_order)
        traced_args[a] = traced.item() if traced.shape == () else traced
        offset += value.size
    with gradient_method(method):
        output = fn(*traced_args, **kwargs)
    return output, values, total, single


def _traced_value_and_grad(K: ArrayBackend, fn: Callable[..., Any], argnums: Any, has_aux: bool,
                           method: str, args: tuple, kwargs: dict) -> Any:
    output, values, total, single = _traced_call(K, fn, argnums, method, args, kwargs, False)
    result, aux = split_value_and_aux(output, has_aux)
    result = _scalar_dual(K, result, total)
    gradients, offset = [], 0
    for value in values:
        piece = result.gradient[offset: offset + value.size].reshape(value.shape)
        gradients.append(K.asarray(piece.astype(np.float64), K.real_dtype))
        offset += value.size
    scalar = K.asarray(float(result.value), K.real_dtype)
    output_value = (scalar, _untraced(K, aux)) if has_aux else scalar
    return output_value, gradients[0] if single else tuple(gradients)


def _output_duals(K: ArrayBackend, output: Any, total: int) -> np.ndarray:
    """A traced objective's outputs as an object array of Duals (constants get zero gradients)."""
    if isinstance(output, (dict, str)) or output is None:
        raise TypeError(f"jacobian needs fn to return an array or a number; it returned "
                        f"{type(output).__name__}")
    if not isinstance(output, (Dual, np.ndarray, list, tuple)) and K.is_array(output):
        output = np.asarray(K.to_numpy(output))  # a constant on the backend
    array = np.empty(np.shape(output) if not isinstance(output, Dual) else (), dtype=object)
    flat = [output] if isinstance(output, Dual) else list(np.asarray(output, dtype=object).reshape(-1))
    cells = array.reshape(-1)
    for i, item in enumerate(flat):
        if isinstance(item, Dual):
            cells[i] = item
        elif isinstance(item, (int, float, complex, np.number)):
            cells[i] = Dual(item, np.zeros(total))
        else:
            raise TracingError(f"fn returned {type(item).__name__} among its outputs, which carries no "
                               "gradient; with exact methods return expectation values (or arithmetic on "
                               "them)")
    return array


def _scalar_dual(K: ArrayBackend, result: Any, total: int) -> Dual:
    if not isinstance(result, Dual) and K.is_array(result):
        result = np.asarray(K.to_numpy(result))  # a constant on the backend (cuPyNumeric, ...)
    if isinstance(result, np.ndarray):
        if result.size != 1:
            raise ValueError(f"value_and_grad needs fn to return a scalar; got shape {result.shape}")
        result = result.reshape(-1)[0]
    if isinstance(result, (int, float, np.floating, np.integer)):
        return Dual(float(result), np.zeros(total))  # fn does not depend on the parameters
    if not isinstance(result, Dual):
        raise TracingError(
            f"fn returned {type(result).__name__}, which carries no gradient; with exact methods "
            "return expectation values (or arithmetic on them)"
        )
    if np.iscomplexobj(result.value) and np.imag(result.value) != 0:
        raise TypeError("value_and_grad needs fn to return a real scalar; it returned a complex "
                        "value. Return its real part")
    return Dual(float(np.real(result.value)), np.real(result.gradient),
                None if result.hessian is None else np.real(result.hessian))


def _untraced(K: ArrayBackend, tree: Any) -> Any:
    if isinstance(tree, Dual):
        return K.asarray(tree.value)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_untraced(K, item) for item in tree)
    if isinstance(tree, dict):
        return {key: _untraced(K, item) for key, item in tree.items()}
    if isinstance(tree, np.ndarray) and tree.dtype == object:
        return K.asarray(np.vectorize(lambda d: d.value if isinstance(d, Dual) else d)(tree))
    return tree
