"""Dtype names, working precisions and the rule for dtypes of Python inputs.

Every backend is built with a *precision*: ``"complex128"`` (default) or ``"complex64"``. The
precision fixes the working complex dtype and the matching real dtype. Python numbers and lists
take the precision's dtypes; arrays keep theirs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DTYPE_NAMES",
    "PRECISIONS",
    "real_dtype_name",
    "validate_precision",
    "python_dtype_name",
]

#: The dtype constants every backend exposes as attributes.
DTYPE_NAMES = ("complex64", "complex128", "float32", "float64", "int8", "int32", "int64", "bool")

#: working complex dtype -> matching real dtype
PRECISIONS = {"complex128": "float64", "complex64": "float32"}


def validate_precision(dtype: Any) -> str:
    """Return the canonical working dtype name for ``dtype`` or raise a clear ``ValueError``.

    Examples
    --------
    >>> validate_precision("complex64")
    'complex64'
    >>> validate_precision(np.complex128)
    'complex128'
    """
    name = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", str(dtype))
    name = str(np.dtype(name)) if name in ("complex", "complex_") else name
    name = name.replace("torch.", "")
    if name not in PRECISIONS:
        raise ValueError(
            f"dtype={dtype!r} is not a supported working dtype; expected one of "
            f"{sorted(PRECISIONS)} (the matching real dtype is chosen for you)"
        )
    return name


def real_dtype_name(complex_name: str) -> str:
    """Real dtype name matching a working complex dtype name (``complex64 -> float32``)."""
    return PRECISIONS[complex_name]


def python_dtype_name(obj: Any, precision: str) -> str | None:
    """Dtype name a Python number or (nested) list should take under ``precision``.

    Returns ``None`` for objects that carry their own dtype (NumPy arrays and scalars, or arrays
    of any backend), which keep it.

    Examples
    --------
    >>> python_dtype_name(0.5, "complex64"), python_dtype_name([1j], "complex64")
    ('float32', 'complex64')
    >>> python_dtype_name(3, "complex128"), python_dtype_name(np.ones(2), "complex64") is None
    ('int64', True)
    """
    if not _is_python_numbers(obj):
        return None
    kind = np.asarray(obj).dtype.kind
    if kind == "c":
        return precision
    if kind == "f":
        return real_dtype_name(precision)
    if kind in "iu":
        return "int64"
    if kind == "b":
        return "bool"
    raise TypeError(f"cannot make an array of {type(obj).__name__} {obj!r}; expected numbers")


def _is_python_numbers(obj: Any) -> bool:
    if isinstance(obj, (bool, int, float, complex)):
        return True
    if isinstance(obj, (list, tuple)):
        return all(_is_python_numbers(item) for item in obj)
    return False
