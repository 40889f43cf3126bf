"""Checking, before allocating, that a result fits in the backend's memory."""

from __future__ import annotations

from .base import host_available_memory
from .protocol import ArrayBackend

__all__ = ["format_bytes", "format_count", "require_memory", "require_sample_memory", "sample_bytes",
           "fits_in_memory", "ContractionTooLarge"]

#: Sizes below this are not checked (every supported device has more free).
ALWAYS_FITS_BYTES = 16 * 2 ** 20

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


def format_bytes(count: int | float) -> str:
    """Human-readable binary size, at any size (beyond YiB as a power of two).

    Examples
    --------
    >>> format_bytes(16 * 2 ** 40)
    '16 TiB'
    >>> format_bytes(1536)
    '1.5 KiB'
    >>> format_bytes(16 * 2 ** 1000000)
    '2^1000004 B'
    """
    unit = 0
    if count >= 1024 ** len(_UNITS):
        return f"2^{int(count).bit_length() - 1} B"
    while count >= 1024 and unit < len(_UNITS) - 1:
        count /= 1024
        unit += 1
    return f"{count:.3g} {_UNITS[unit]}"


def format_count(count: int) -> str:
    """A count with thousands separators, or as a power of two when it has too many digits.

    Examples
    --------
    >>> format_count(2 ** 20), format_count(2 ** 100000)
    ('1,048,576', '2^100000')
    """
    if count.bit_length() > 200:
        return f"2^{count.bit_length() - 1}"
    return f"{count:,}"


class ContractionTooLarge(MemoryError):
    """A contraction's largest intermediate does not fit: a simulator may try another exact
    route before passing the refusal on."""


def fits_in_memory(K: ArrayBackend, elements: int) -> bool:
    """Whether ``elements`` complex numbers fit in the backend's memory."""
    needed = elements * (16 if K.precision == "complex128" else 8)
    return needed <= ALWAYS_FITS_BYTES or needed <= K.available_memory()


def require_memory(K: ArrayBackend, elements: int, what: str, hint: str,
                   refusal: type[MemoryError] = MemoryError) -> None:
    """Raise ``refusal`` (a ``MemoryError``) naming the size if ``elements`` complex numbers do
    not fit."""
    itemsize = 16 if K.precision == "complex128" else 8
    needed = elements * itemsize
    if needed <= ALWAYS_FITS_BYTES:  # not worth asking the device (a file read on the host)
        return
    available = K.available_memory()
    if needed > available:
        raise refusal(
            f"{what} needs {format_bytes(needed)} ({format_count(elements)} {K.precision} entries) but "
            f"{format_bytes(available)} is available on {K.capabilities.device}. {hint}"
        )


def sample_bytes(shots: int, num_qubits: int, format: str, bits: bool) -> int:
    """Host memory that ``shots`` samples of ``num_qubits`` qubits take at their peak: basis
    indices and their sorted copy (8 bytes each, three arrays), one byte per bit where samples
    are bit rows (readout error, wide circuits), and a Python string per shot for bitstrings."""
    per_shot = 24 + (8 * num_qubits if bits else 0) + (num_qubits + 64 if format == "bitstrings" else 0)
    return shots * per_shot


def require_sample_memory(shots: int, num_qubits: int, format: str, bits: bool) -> None:
    """Raise ``MemoryError`` before sampling when the samples would not fit in host memory.

    Examples
    --------
    >>> require_sample_memory(10 ** 15, 3, "counts", bits=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    MemoryError: sample(shots=1000000000000000) needs 21.3 PiB of host memory ...
    """
    needed = sample_bytes(shots, num_qubits, format, bits)
    if needed <= ALWAYS_FITS_BYTES:
        return
    available = host_available_memory()
    if needed > available:
        raise MemoryError(
            f"sample(shots={shots}) needs {format_bytes(needed)} of host memory for {num_qubits} qubits "
            f"in format={format!r} but {format_bytes(available)} is available: draw the shots in "
            "batches of fewer (with a different seed for each batch) and add the counts")
