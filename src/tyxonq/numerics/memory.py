"""Checking, before allocating, that a result fits in the backend's memory, or in a lower budget
set with :func:`set_memory_limit`."""

from __future__ import annotations

import contextlib
import math
import numbers
import re
from typing import Any, Iterator

from .._context import ContextualSetting
from .base import host_available_memory
from .protocol import ArrayBackend

__all__ = ["format_bytes", "format_count", "require_memory", "require_sample_memory", "sample_bytes",
           "fits_in_memory", "ContractionTooLarge", "set_memory_limit", "use_memory_limit",
           "memory_limit", "memory_budget", "parse_size", "SIZE_UNITS"]

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


_LIMIT: ContextualSetting[float] = ContextualSetting("tyxonq_memory_limit", fallback=lambda: math.inf)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE)
#: the units a size may be written in (case-insensitive), and their bytes
SIZE_UNITS = {"b": 1, **{f"{prefix}b": 1000 ** (power + 1) for power, prefix in enumerate("kmgtp")},
              **{f"{prefix}ib": 1024 ** (power + 1) for power, prefix in enumerate("kmgtp")}}
_UNITS_ACCEPTED = ("a number, then one of the units B, KB, MB, GB, TB, PB (powers of 1000), KiB, MiB, "
                   "GiB, TiB, PiB (powers of 1024), in any case, with or without a space")


def parse_size(text: str, name: str = "limit") -> float:
    """The bytes a size such as ``"512 MiB"``, ``"1 GB"`` or ``"1.5gib"`` stands for: KB, MB, GB,
    TB, PB are powers of 1000, KiB, MiB, GiB, TiB, PiB powers of 1024, B (or no unit) bytes;
    units in any case, with or without a space.

    Examples
    --------
    >>> parse_size("1 GB"), parse_size("1.5 GiB"), parse_size("64kib")
    (1000000000.0, 1610612736.0, 65536.0)
    >>> parse_size("1 GBB")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: limit='1 GBB' must be a number of bytes or a size such as '512 MiB' or '1 GB': a number, ...
    """
    match = _SIZE.match(text)
    unit = (match.group(2) or "b").lower() if match else None
    if unit not in SIZE_UNITS:
        raise ValueError(f"{name}={text!r} must be a number of bytes or a size such as '512 MiB' or '1 GB': "
                         f"{_UNITS_ACCEPTED}")
    return float(match.group(1)) * SIZE_UNITS[unit]


def _checked_limit(limit: Any) -> float:
    if limit is None:
        return math.inf
    if isinstance(limit, str):
        value = parse_size(limit)
    elif isinstance(limit, numbers.Real) and not isinstance(limit, bool):
        value = float(limit)
    else:
        raise TypeError(f"limit={limit!r} must be a number of bytes, a size such as '512 MiB', or None")
    if not value > 0:
        raise ValueError(f"limit={limit!r} must be positive")
    return value


def set_memory_limit(limit: int | str | None) -> float:
    """Cap the memory any one intermediate (a state, a contraction's largest tensor) may take, below
    what the device has: ``limit`` bytes, or a size such as ``"512 MiB"``, ``"1 GB"`` or
    ``"1.5 GiB"`` (KB, MB, GB, TB, PB: powers of 1000; KiB, MiB, GiB, TiB, PiB: powers of 1024; any
    case; :func:`parse_size`); ``None`` removes the cap. Every memory pre-check (states,
    contractions' largest intermediates, the adjoint sweep's vectors) then compares with the cap;
    what exceeds it takes another route or is refused with the sizes in the message. Returns the
    cap in bytes (``inf``: none).

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.set_memory_limit("1 GiB")
    1073741824.0
    >>> tq.set_memory_limit("1 GB")
    1000000000.0
    >>> tq.set_memory_limit(None)
    inf
    """
    return _LIMIT.set(_checked_limit(limit))


@contextlib.contextmanager
def use_memory_limit(limit: int | str | None) -> Iterator[float]:
    """:func:`set_memory_limit` inside the block only (thread- and task-local).

    Examples
    --------
    >>> import tyxonq as tq
    >>> with tq.use_memory_limit("64 MiB") as cap:
    ...     cap, tq.memory_limit()
    (67108864.0, 67108864.0)
    """
    with _LIMIT.override(_checked_limit(limit)) as value:
        yield value


def memory_limit() -> float:
    """The active cap in bytes (``inf``: none)."""
    return _LIMIT.get()


def memory_budget(K: ArrayBackend) -> float:
    """The bytes one intermediate may take on ``K``: its free memory, or the cap if lower."""
    return min(float(K.available_memory()), _LIMIT.get())


def _always_fits(needed: float) -> bool:
    """Sizes below :data:`ALWAYS_FITS_BYTES` need no device query, unless a lower cap is set."""
    return needed <= min(ALWAYS_FITS_BYTES, _LIMIT.get())


def fits_in_memory(K: ArrayBackend, elements: int) -> bool:
    """Whether ``elements`` complex numbers fit in the backend's memory (and the cap)."""
    needed = elements * (16 if K.precision == "complex128" else 8)
    return _always_fits(needed) or needed <= memory_budget(K)


def require_memory(K: ArrayBackend, elements: int, what: str, hint: str,
                   refusal: type[MemoryError] = MemoryError) -> None:
    """Raise ``refusal`` (a ``MemoryError``) naming the size if ``elements`` complex numbers do
    not fit."""
    itemsize = 16 if K.precision == "complex128" else 8
    needed = elements * itemsize
    if _always_fits(needed):  # not worth asking the device (a file read on the host)
        return
    available = memory_budget(K)
    if needed > available:
        where = f"on {K.capabilities.device}" if available < _LIMIT.get() else "under tq.set_memory_limit"
        raise refusal(
            f"{what} needs {format_bytes(needed)} ({format_count(elements)} {K.precision} entries) but "
            f"{format_bytes(available)} is available {where}. {hint}"
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
