"""glibc's malloc and the megabyte temporaries of element-wise state work.

glibc serves a block larger than its mmap threshold (128 KiB when a process starts) with fresh
pages from the kernel and hands them back when it is freed, so every temporary of an element-wise
pass over a 14- to 18-qubit state (256 KiB to 4 MiB) pays its page faults again. glibc raises the
threshold itself once a larger block served that way is freed: to that block's size, at most
32 MiB, and it then keeps up to twice that in its heap before trimming it. Any process that frees
a 32 MiB array once gets this (importing PyTorch does); :func:`prime_allocator`, run when the
first NumPy backend is made, frees one such block so that NumPy work does not depend on what was
imported before. Measured on 2 cores, applying the 14-qubit Heisenberg chain's ``H`` to a state:
1.75 ms unprimed, 0.49 ms primed (16 qubits: 7.4 and 2.5-2.8 ms).

Nothing changes where the process is not on glibc, where the thresholds are set explicitly
(``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_``: glibc then keeps them fixed), or where
``TYXONQ_ALLOCATOR_PRIMING=0``.
"""

from __future__ import annotations

import os
import platform
import sys
import threading

import numpy as np

__all__ = ["prime_allocator", "PRIMING_BYTES"]

#: just under glibc's largest dynamic mmap threshold on 64-bit systems (32 MiB) with its header
PRIMING_BYTES = 32 * 2 ** 20 - 2 ** 16

_LOCK = threading.Lock()
_primed = False


def prime_allocator() -> bool:
    """Free one block of :data:`PRIMING_BYTES` from NumPy, once per process, so that glibc serves
    the following megabyte temporaries from its heap; ``True`` where that was done now.

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
    block = np.empty(PRIMING_BYTES, dtype=np.uint8)  # served by mmap, untouched: no page faults
    del block
    return True
