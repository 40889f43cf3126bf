"""Checking, before allocating, that a result fits in the backend's memory."""

from __future__ import annotations

from typing import Any

__all__ = ["format_bytes", "require_memory"]

#: Sizes below this are not checked (every supported device has more free).
ALWAYS_FITS_BYTES = 16 * 2 ** 20

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


def format_bytes(count: float) -> str:
    """Human-readable binary size.

    Examples
    --------
    >>> format_bytes(16 * 2 ** 40)
    '16 TiB'
    >>> format_bytes(1536)
    '1.5 KiB'
    """
    unit = 0
    while count >= 1024 and unit < len(_UNITS) - 1:
        count /= 1024
        unit += 1
    return f"{count:.3g} {_UNITS[unit]}"


def require_memory(K: Any, elements: int, what: str, hint: str) -> None:
    """Raise ``MemoryError`` naming the size if ``elements`` complex numbers do not fit."""
    itemsize = 16 if K.precision == "complex128" else 8
    needed = elements * itemsize
    if needed <= ALWAYS_FITS_BYTES:  # not worth asking the device (a file read on the host)
        return
    available = K.available_memory()
    if needed > available:
        raise MemoryError(
            f"{what} needs {format_bytes(needed)} ({elements:,} {K.precision} entries) but "
            f"{format_bytes(available)} is available on {K.capabilities.device}. {hint}"
        )
