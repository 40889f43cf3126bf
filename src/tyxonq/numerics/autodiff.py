"""Argument and output checks shared by every ``value_and_grad``, the wrapper shared by the
autograd backends (PyTorch, JAX), and finite differences.

The finite-difference gradient is what backends without autograd (NumPy, cuPyNumeric) use. It is
a central difference with a step scaled to the dtype and to each element's magnitude, so it is as
sound in float32 as in float64, and it calls ``fn`` ``1 + 2 * m`` times for ``m`` real degrees of
freedom (the fewest a central difference allows). For a complex argument ``z`` it returns
``df/dRe(z) + 1j * df/dIm(z)``, the convention PyTorch's autograd follows.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

from .protocol import ArrayBackend

__all__ = [
    "normalize_argnums",
    "split_value_and_aux",
    "split_arrays",
    "check_argnums_in_range",
    "finite_difference_value_and_grad",
    "central_differences",
    "central_difference_steps",
    "differentiable_arguments",
    "autograd_value_and_grad",
    "real_scalar_output",
]


def normalize_argnums(argnums: Any) -> tuple[tuple[int, ...], bool]:
    """Return ``(argnums as a tuple, whether a single int was given)``.

    Examples
    --------
    >>> normalize_argnums(0), normalize_argnums((0, 2))
    (((0,), True), ((0, 2), False))
    """
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        return (operator.index(argnums),), True
    if isinstance(argnums, (tuple, list)) and argnums and all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in argnums
    ):
        if len(set(argnums)) != len(argnums):
            raise ValueError(f"argnums={argnums!r} repeats an argument; list each one once")
        return tuple(operator.index(a) for a in argnums), False
    raise TypeError(f"argnums={argnums!r} must be an int or a non-empty tuple of ints")


def check_argnums_in_range(argnums: tuple[int, ...], n_args: int) -> None:
    """Raise ``ValueError`` if an entry of ``argnums`` names no positional argument."""
    for a in argnums:
        if not -n_args <= a < n_args:
            raise ValueError(
                f"argnums entry {a} is out of range: the function was called with {n_args} "
                "positional argument(s)"
            )


def split_value_and_aux(output: Any, has_aux: bool) -> tuple[Any, Any]:
    """Split ``fn``'s output into (value, aux) according to ``has_aux``."""
    if not has_aux:
        return output, None
    if not (isinstance(output, (tuple, list)) and len(output) == 2):
        raise TypeError(
            "has_aux=True needs fn to return a pair (value, aux); got "
            f"{type(output).__name__}"
        )
    return output[0], output[1]


def real_scalar_output(backend: ArrayBackend, value: Any) -> Any:
    """``value`` as a 0-d real backend array, or a clear error saying what was wrong."""
    value = backend.asarray(value)
    if backend.is_complex(value):
        raise TypeError(
            f"value_and_grad needs fn to return a real scalar; it returned a "
            f"{backend.dtype_name_of(value)} value. Return real(...) or abs(...) "
            "of it, or differentiate the real and imaginary parts separately"
        )
    shape = backend.shape(value)
    if int(np.prod(shape)) != 1:
        raise ValueError(
            f"value_and_grad needs fn to return a scalar; it returned an array of shape {shape}. "
            "Reduce it (e.g. sum) first, or use vmap over the gradient for per-element gradients"
        )
    if not backend.is_floating(value):
        value = backend.cast(value, backend.real_dtype)
    return backend.reshape(value, ())


def finite_difference_value_and_grad(
    backend: ArrayBackend, fn: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``value_and_grad`` by central finite differences, for backends without autograd.

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> value, grad = finite_difference_value_and_grad(K, lambda x: (x ** 3).sum())(K.asarray([1.0, 2.0]))
    >>> np.allclose(grad, [3.0, 12.0], atol=1e-8)
    True
    """
    nums, single = normalize_argnums(argnums)

    @functools.wraps(fn)
    def value_and_grad(*args: Any, **kwargs: Any) -> Any:
        args = differentiable_arguments(backend, args, nums)
        value, aux = split_value_and_aux(fn(*args, **kwargs), has_aux)
        value = real_scalar_output(backend, value)

        def objective(position: int, x: Any) -> Any:
            trial = list(args)
            trial[position] = x
            return real_scalar_output(backend, split_value_and_aux(fn(*trial, **kwargs), has_aux)[0])

        grads = tuple(backend.cast(central_differences(backend, functools.partial(objective, a), args[a]),
                                   backend.dtype_of(args[a])) for a in nums)
        result = (value, aux) if has_aux else value
        return result, grads[0] if single else grads

    return value_and_grad


def central_difference_steps(backend: ArrayBackend, flat: Any, power: float) -> Any:
    """Steps ``eps^power * max(1, |x_i|)`` for the elements of ``flat`` (``eps`` of its dtype):
    ``power = 1/3`` balances truncation and rounding for first derivatives, ``1/4`` for second."""
    real_dtype = backend.xp.real(flat).dtype
    base = float(np.finfo(np.dtype(str(real_dtype))).eps) ** power
    return base * backend.xp.maximum(1.0, backend.xp.abs(flat))


def central_differences(backend: ArrayBackend, f: Callable[[Any], Any], x: Any) -> Any:
    """``df/dx`` by central differences, shape ``f(x).shape + x.shape`` (complex ``x``:
    ``df/dRe + 1j df/dIm``); each difference is divided by the step actually taken after
    rounding, not the nominal one."""
    xp = backend.xp
    shape = backend.shape(x)
    flat = xp.reshape(x, (-1,))
    steps = central_difference_steps(backend, flat, 1.0 / 3.0)
    directions = (1.0, 1j) if backend.is_complex(x) else (1.0,)
    columns = []
    for k in range(flat.shape[0]):
        column = None
        for direction in directions:
            plus, minus = flat.copy(), flat.copy()
            plus[k] = flat[k] + direction * steps[k]
            minus[k] = flat[k] - direction * steps[k]
            taken = xp.real((plus[k] - minus[k]) / direction)
            slope = (f(xp.reshape(plus, shape)) - f(xp.reshape(minus, shape))) / taken
            column = direction * slope if column is None else column + direction * slope
        columns.append(column)
    if not columns:
        return xp.zeros(tuple(backend.shape(f(x))) + tuple(shape))
    return xp.reshape(xp.stack(columns, axis=-1), tuple(backend.shape(columns[0])) + tuple(shape))


def differentiable_arguments(backend: ArrayBackend, args: tuple, nums: tuple[int, ...]) -> list:
    """``args`` with the ``nums`` arguments as backend arrays of their differentiable dtype."""
    check_argnums_in_range(nums, len(args))
    args = list(args)
    for a in nums:
        x = backend.asarray(args[a])
        args[a] = backend.cast(x, backend.differentiable_dtype(x))
    return args


def split_arrays(tree: Any, is_array: Callable[[Any], bool]) -> tuple[list[Any], Callable]:
    """The arrays of a tuple/list/dict tree, and a function that puts new ones in their place
    (autodiff transforms carry arrays only; the tree's other leaves ride along here)."""
    arrays: list[Any] = []

    def template(node: Any) -> Any:
        if is_array(node):
            arrays.append(node)
            return _ArraySlot(len(arrays) - 1)
        if isinstance(node, (list, tuple)):
            return type(node)(template(item) for item in node)
        if isinstance(node, dict):
            return {key: template(item) for key, item in node.items()}
        return node

    shape = template(tree)

    def rebuild(new_arrays: list[Any], node: Any = shape) -> Any:
        if isinstance(node, _ArraySlot):
            return new_arrays[node.index]
        if isinstance(node, (list, tuple)):
            return type(node)(rebuild(new_arrays, item) for item in node)
        if isinstance(node, dict):
            return {key: rebuild(new_arrays, item) for key, item in node.items()}
        return node

    return arrays, rebuild


class _ArraySlot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def autograd_value_and_grad(backend: ArrayBackend, fn: Callable[..., Any], argnums: Any, has_aux: bool,
                            transform: Callable[..., Callable[..., Any]],
                            prepare: Callable[[Any], Any],
                            finish: Callable[[Any], Any] = lambda grads: grads) -> Callable[..., Any]:
    """``value_and_grad`` over a library transform, with tyxonq's checks and calling convention.

    ``transform(checked, argnums, has_aux)`` is the library's value-and-gradient transform
    returning ``(output, grads)``; ``prepare`` makes each differentiated argument a floating
    array; ``finish`` puts the gradients into tyxonq's convention. ``fn`` must return a real
    scalar (checked here), and ``aux`` may hold non-array leaves, which ride outside the
    transform (:func:`split_arrays`).
    """
    nums, single = normalize_argnums(argnums)
    aux_structure: list[Any] = []

    def checked(*args: Any, **kwargs: Any) -> Any:
        value, aux = split_value_and_aux(fn(*args, **kwargs), has_aux)
        value = real_scalar_output(backend, value)
        if not has_aux:
            return value
        arrays, rebuild = split_arrays(aux, backend.is_array)
        aux_structure[:] = [rebuild]
        return value, tuple(arrays)

    transformed = transform(checked, nums[0] if single else nums, has_aux)

    @functools.wraps(fn)
    def value_and_grad(*args: Any, **kwargs: Any) -> Any:
        check_argnums_in_range(nums, len(args))
        args = list(args)
        for a in nums:
            args[a] = prepare(args[a])
        output, grads = transformed(*args, **kwargs)
        if has_aux:
            value, aux_arrays = output
            output = (value, aux_structure[0](list(aux_arrays)))
        return output, finish(grads)

    return value_and_grad
