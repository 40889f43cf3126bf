"""Pausing Python's cyclic garbage collector while plans are made.

Planning a structure (light cones, canonical forms, paths, compiled steps, binding programs)
allocates tens of thousands of small objects, almost none of them in reference cycles. Each
allocation burst triggers the collector's young generations, and every few bursts a full
collection that walks every tracked object of the process (PyTorch's import alone leaves about
190 000). In a first call of the 100-qubit QAOA p = 3 energy that was 0.11-0.25 s of 1.4-2.6 s
(``benchmarks/floors.py --sections first_call_gc``). Reference counting still frees everything
acyclic at once while the collector is paused; cycles made meanwhile wait for the next
collection after it resumes. Results never depend on it.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

__all__ = ["collector_paused"]

_LOCK = threading.Lock()
_depth = 0  # blocks inside collector_paused, in every thread
_resume = False  # whether the outermost block disabled an enabled collector


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Within the block, the cyclic garbage collector does not run; it resumes when the last
    block (in any thread) ends, if it was enabled when the first began. A collector disabled
    by the caller stays disabled.

    Examples
    --------
    >>> import gc
    >>> with collector_paused():
    ...     print(gc.isenabled())
    False
    >>> gc.isenabled()
    True
    """
    global _depth, _resume
    with _LOCK:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _resume:
                _resume = False
                gc.enable()
