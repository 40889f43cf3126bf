"""glibc's malloc and the large temporaries of state and density-matrix work.

glibc serves a block larger than its mmap threshold (128 KiB when a process starts) with fresh
pages from the kernel and hands them back when it is freed, so every temporary of a pass over a
large state pays its page faults again: the megabyte temporaries of element-wise work on 14- to
18-qubit states, and the 16-256 MiB products of contracting 20- to 24-qubit states and 10- to
12-qubit density matrices. glibc raises the threshold itself once a larger block served that way
is freed, but to 32 MiB at most. When the first backend (any of them) is made,
:func:`prime_allocator` sets both thresholds (``mallopt``: blocks below the mmap threshold come
from the heap, which keeps up to the trim threshold of freed memory at its top) to
:func:`large_block_bytes`: a thirty-second of the machine's memory, between 32 MiB and 1 GiB
(750 MiB on the 24 GiB reference machine). Measured there on 2 cores: applying the 14-qubit
Heisenberg chain's ``H`` to a state 1.75 ms unset, 0.49 ms with a 32 MiB threshold; the 12-qubit
noisy density matrix of ``benchmarks/`` (256 MiB products) on NumPy 442 ms a call and 2.0 s the
first with the 32 MiB threshold, 341 ms and 1.1 s with these; on PyTorch 735 against 539 ms; a
22-qubit state on NumPy 251 against 236 ms, on PyTorch 314 against 266 ms (interleaved A/B). The
cost: freed blocks stay with the process (its resident memory stays near the peak of its
temporaries) instead of going back to the kernel at once.

Nothing changes where the process is not on glibc, where the thresholds are set explicitly
(``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_``: glibc then keeps them fixed), or where
``TYXONQ_ALLOCATOR_PRIMING=0``.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading

import numpy as np

__all__ = ["prime_allocator", "large_block_bytes", "PRIMING_BYTES"]

#: just under glibc's largest dynamic mmap threshold on 64-bit systems (32 MiB) with its header:
#: the block freed to raise the threshold where ``mallopt`` cannot be called
PRIMING_BYTES = 32 * 2 ** 20 - 2 ** 16
#: glibc's ``mallopt`` parameters
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3

_LOCK = threading.Lock()
_primed = False


def large_block_bytes() -> int:
    """The blocks glibc serves from its heap once primed, and the freed memory it keeps: a
    thirty-second of this machine's memory, between 32 MiB and 1 GiB.

    Examples
    --------
    >>> 32 * 2 ** 20 <= large_block_bytes() <= 2 ** 30
    True
    """
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        memory = 0
    return int(min(max(memory // 32, 32 * 2 ** 20), 2 ** 30))


def prime_allocator() -> bool:
    """Set glibc's mmap and trim thresholds to :func:`large_block_bytes`, once per process, so
    that large temporaries come from the heap rather than fresh pages each time (where
    ``mallopt`` cannot be called: free one block of :data:`PRIMING_BYTES`, which raises the
    threshold to 32 MiB); ``True`` where that was done now.

    Examples
    --------
    >>> prime_allocator() in (True, False)  # False: done before, or not glibc, or turned off
    True
    """
    global _primed
    with _LOCK:
        if _primed:
            return False
        _primed = True
    if os.environ.get("TYXONQ_ALLOCATOR_PRIMING", "1") == "0" or sys.platform != "linux":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    if platform.libc_ver()[0] != "glibc":
        return False
    limit = large_block_bytes()
    try:
        libc = ctypes.CDLL(None)
        if libc.mallopt(M_MMAP_THRESHOLD, limit) == 1:  # (refused above 32 MiB by some glibc versions)
            libc.mallopt(M_TRIM_THRESHOLD, limit)
            return True
    except (OSError, AttributeError):
        pass
    block = np.empty(PRIMING_BYTES, dtype=np.uint8)  # served by mmap, untouched: no page faults
    del block
    return True
