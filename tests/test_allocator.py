"""The NumPy backend primes glibc's malloc once (:mod:`tyxonq.numerics.allocator`): afterwards a
megabyte temporary, and one of half :func:`large_block_bytes` (a density matrix's product), comes
from the heap, not from fresh pages; ``TYXONQ_ALLOCATOR_PRIMING=0`` leaves the allocator alone.
Checked in fresh processes by glibc's own count of mmap'd bytes."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

CHECK = """
import ctypes, numpy as np
FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
from tyxonq.numerics.numpy_backend import NumpyBackend
NumpyBackend()
from tyxonq.numerics.allocator import large_block_bytes
for size in (2 ** 19 * 16, large_block_bytes() // 2):  # 8 MiB, then 375 MiB on a 24 GiB machine
    before = libc.mallinfo2().hblkhd
    block = np.ones(size // 16, dtype=complex)
    print(libc.mallinfo2().hblkhd - before >= size)
    del block
"""


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
@pytest.mark.parametrize("priming, mapped", [("1", "False"), ("0", "True")])
def test_large_temporaries_come_from_the_heap_once_primed(priming, mapped):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
    environment["TYXONQ_ALLOCATOR_PRIMING"] = priming
    result = subprocess.run([sys.executable, "-c", CHECK], env=environment, capture_output=True, text=True,
                            check=True, timeout=120)
    assert result.stdout.strip().splitlines()[-2:] == [mapped, mapped]
