"""Jacobians and Hessians: the library's autodiff on PyTorch and JAX, central differences on
NumPy and cuPyNumeric.

Conventions (every backend):

* ``jacobian(fn, argnums)(*args)`` has shape ``output.shape + argument.shape`` (a tuple of them
  for a tuple of ``argnums``). Outputs are arrays (or numbers), real or complex; a complex output
  is differentiated as ``d Re f + 1j d Im f`` for real arguments. For a complex argument ``z``
  of a real output the entries are ``df/dRe z + 1j df/dIm z``, as :meth:`value_and_grad`'s
  gradients; a complex output of a complex argument raises (it is not one matrix unless ``fn``
  is holomorphic).
* ``hessian(fn, argnums)(*args)`` needs a real scalar output and real arguments; its shape is
  ``argument.shape * 2`` (nested tuples ``[i][j]`` for a tuple of ``argnums``).

Central differences take a step scaled to the dtype and to each element's magnitude:
``eps^(1/3)`` for first derivatives, ``eps^(1/4)`` for second ones (the steps that balance
truncation against rounding), so float32 is as sound as float64.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .autodiff import (
    central_difference_steps,
    central_differences,
    check_argnums_in_range,
    differentiable_arguments,
    normalize_argnums,
    real_scalar_output,
)
from .protocol import ArrayBackend

__all__ = ["array_output", "finite_difference_jacobian", "finite_difference_hessian",
           "autograd_jacobian", "autograd_hessian"]


def array_output(backend: ArrayBackend, value: Any, what: str = "jacobian") -> Any:
    """``fn``'s output as a backend array, or a clear error for anything else."""
    if isinstance(value, (dict, list, tuple, str, bytes)) or value is None:
        raise TypeError(f"{what} needs fn to return an array or a number; it returned "
                        f"{type(value).__name__}. Stack the outputs into one array")
    return backend.asarray(value)


def _prepared(backend: ArrayBackend, args: tuple, nums: tuple[int, ...], real_only: bool, what: str) -> list:
    args = differentiable_arguments(backend, args, nums)
    for a in nums:
        if real_only and backend.is_complex(args[a]):
            raise TypeError(f"{what} differentiates real arguments; argument {a} is complex. "
                            "Pass its real and imaginary parts as separate real arguments")
    return args


def _check_complex_pair(backend: ArrayBackend, output: Any, args: list, nums: tuple[int, ...]) -> None:
    if backend.is_complex(output) and any(backend.is_complex(args[a]) for a in nums):
        raise TypeError("jacobian of a complex output with respect to a complex argument is not "
                        "defined here (one matrix only for holomorphic fn): differentiate its real "
                        "and imaginary parts, or pass the argument's real and imaginary parts")


def finite_difference_jacobian(backend: ArrayBackend, fn: Callable[..., Any],
                               argnums: Any = 0) -> Callable[..., Any]:
    """``jacobian`` by central differences (see the module docstring for shapes and conventions).

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> jac = finite_difference_jacobian(K, lambda x: x ** 2)(K.asarray([1.0, 3.0]))
    >>> (np.round(jac, 6) + 0.0).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    nums, single = normalize_argnums(argnums)

    @functools.wraps(fn)
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        args = _prepared(backend, args, nums, False, "jacobian")
        _check_complex_pair(backend, array_output(backend, fn(*args, **kwargs)), args, nums)

        def partial(position: int, x: Any) -> Any:
            trial = list(args)
            trial[position] = x
            return array_output(backend, fn(*trial, **kwargs))

        result = tuple(central_differences(backend, functools.partial(partial, a), args[a]) for a in nums)
        return result[0] if single else result

    return jacobian


def finite_difference_hessian(backend: ArrayBackend, fn: Callable[..., Any],
                              argnums: Any = 0) -> Callable[..., Any]:
    """``hessian`` by central second differences with steps ``eps^(1/4)`` (real scalar output,
    real arguments; ``1 + 2m + 2m(m-1)`` calls for ``m`` entries).

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> K = NumpyBackend()
    >>> hess = finite_difference_hessian(K, lambda x: x[0] ** 2 * x[1])(K.asarray([1.0, 3.0]))
    >>> (np.round(hess, 5) + 0.0).tolist()
    [[6.0, 2.0], [2.0, 0.0]]
    """
    nums, single = normalize_argnums(argnums)

    @functools.wraps(fn)
    def hessian(*args: Any, **kwargs: Any) -> Any:
        args = _prepared(backend, args, nums, True, "hessian")
        xp = backend.xp
        flats = [xp.reshape(args[a], (-1,)) for a in nums]
        offsets = np.cumsum([0] + [int(f.shape[0]) for f in flats])
        steps = [central_difference_steps(backend, f, 0.25) for f in flats]

        def value(shifts: dict[tuple[int, int], float]) -> float:
            trial = list(args)
            for i, a in enumerate(nums):
                moved = flats[i].copy()
                for (owner, k), step in shifts.items():
                    if owner == i:
                        moved[k] = moved[k] + step
                trial[a] = xp.reshape(moved, backend.shape(args[a]))
            return float(real_scalar_output(backend, fn(*trial, **kwargs)))

        entries = [(i, k) for i in range(len(nums)) for k in range(int(flats[i].shape[0]))]
        size = len(entries)
        table = np.zeros((size, size))
        center = value({})
        for p, (i, k) in enumerate(entries):
            h = float(steps[i][k])
            table[p, p] = (value({(i, k): 2 * h}) - 2 * center + value({(i, k): -2 * h})) / (4 * h * h)
            for q in range(p):
                j, m = entries[q]
                g = float(steps[j][m])
                corners = [value({(i, k): s * h} | {(j, m): t * g}) * s * t
                           for s in (1.0, -1.0) for t in (1.0, -1.0)]
                table[p, q] = table[q, p] = sum(corners) / (4 * h * g)
        blocks = [[backend.asarray(table[offsets[x]:offsets[x + 1], offsets[y]:offsets[y + 1]].reshape(
                       tuple(backend.shape(args[nums[x]])) + tuple(backend.shape(args[nums[y]]))),
                   backend.real_dtype) for y in range(len(nums))] for x in range(len(nums))]
        return blocks[0][0] if single else tuple(tuple(row) for row in blocks)

    return hessian


def _complex_output_jacobian(backend: ArrayBackend, jacobian: Callable[..., Callable], fn: Callable[..., Any],
                             nums: Any, args: list, kwargs: dict) -> Any:
    """``jacobian`` (the library transform) of a complex output: of its real and imaginary parts
    stacked, recombined."""
    stacked = jacobian(lambda *a: backend.stack([backend.real(fn(*a, **kwargs)),
                                                 backend.imag(fn(*a, **kwargs))]), nums)(*args)
    combine = lambda j: j[0] + 1j * j[1]  # noqa: E731
    return combine(stacked) if isinstance(nums, int) else tuple(combine(j) for j in stacked)


def autograd_jacobian(backend: ArrayBackend, fn: Callable[..., Any], argnums: Any, transform: Callable,
                      prepare: Callable[[Any], Any]) -> Callable[..., Any]:
    """``jacobian`` over a library's reverse-mode Jacobian ``transform(fn, argnums)`` of real
    arguments; ``prepare`` makes each differentiated argument a floating array. A complex
    argument ``z`` is differentiated through its real and imaginary parts
    (``df/dRe z + 1j df/dIm z``)."""
    nums, single = normalize_argnums(argnums)

    @functools.wraps(fn)
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        check_argnums_in_range(nums, len(args))
        args = list(args)
        for a in nums:
            args[a] = prepare(args[a])
        output = array_output(backend, fn(*args, **kwargs))
        _check_complex_pair(backend, output, args, nums)
        pieces, owners = [], []  # real arguments of the transform; per piece (argnum, part)
        for a in nums:
            if backend.is_complex(args[a]):
                pieces += [backend.real(args[a]), backend.imag(args[a])]
                owners += [(a, 1.0), (a, 1j)]
            else:
                pieces.append(args[a])
                owners.append((a, None))

        def real_function(*values: Any) -> Any:
            trial = list(args)
            for a in nums:
                trial[a] = None
            for value, (a, part) in zip(values, owners):
                term = value if part is None else value * part
                trial[a] = term if trial[a] is None else trial[a] + term
            return array_output(backend, fn(*trial, **kwargs))

        positions = tuple(range(len(pieces)))
        if backend.is_complex(output):
            columns = _complex_output_jacobian(backend, transform, real_function, positions, pieces, {})
        else:
            columns = transform(real_function, positions)(*pieces)
        parts: dict[int, Any] = {}
        for column, (a, part) in zip(columns, owners):
            term = column if part is None else column * part
            parts[a] = term if a not in parts else parts[a] + term
        return parts[nums[0]] if single else tuple(parts[a] for a in nums)

    return jacobian


def autograd_hessian(backend: ArrayBackend, fn: Callable[..., Any], argnums: Any, transform: Callable,
                     prepare: Callable[[Any], Any]) -> Callable[..., Any]:
    """``hessian`` over a library's Hessian ``transform(fn, argnums)`` (forward over reverse)."""
    nums, single = normalize_argnums(argnums)

    @functools.wraps(fn)
    def hessian(*args: Any, **kwargs: Any) -> Any:
        check_argnums_in_range(nums, len(args))
        args = list(args)
        for a in nums:
            args[a] = prepare(args[a])
            if backend.is_complex(args[a]):
                raise TypeError(f"hessian differentiates real arguments; argument {a} is complex. "
                                "Pass its real and imaginary parts as separate real arguments")
        checked = lambda *a: real_scalar_output(backend, fn(*a, **kwargs))  # noqa: E731
        result = transform(checked, nums[0] if single else nums)(*args)
        return result if single else tuple(tuple(row) for row in result)

    return hessian
