"""Ranks as threads of one process: a communicator for testing distributed algorithms quickly
(every collective meets at a barrier; a rank that fails breaks the barrier for the others)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from tyxonq.numerics.distributed import Communicator


class _World:
    def __init__(self, size: int, timeout: float) -> None:
        self.size = size
        self.barrier = threading.Barrier(size, timeout=timeout)
        self.slots: list[Any] = [None] * size


class ThreadRank(Communicator):
    """Rank ``rank`` of the threads sharing ``world``."""

    name = "threads"

    def __init__(self, rank: int, world: _World) -> None:
        self.rank, self.size, self.world = rank, world.size, world
        self.sent = 0

    def _meet(self, array: Any) -> list[Any]:
        self.world.slots[self.rank] = np.array(array, copy=True)
        self.world.barrier.wait()
        seen = list(self.world.slots)
        self.world.barrier.wait()
        return seen

    def all_gather(self, array: Any) -> np.ndarray:
        return np.stack(self._meet(array))

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        return self.all_gather(array).sum(axis=0)

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        return self._meet(array)[root]

    def barrier(self) -> None:
        self._meet(np.zeros(1))

    def exchange(self, array: Any, partner: int) -> np.ndarray:
        self._check_partner(partner)
        self.sent += np.asarray(array).nbytes
        return self._meet(array)[partner]


def run_ranks(size: int, work: Callable[[ThreadRank], Any], timeout: float = 120.0) -> list[Any]:
    """``work(comm)`` on ``size`` thread ranks; every rank's result, by rank (the first error
    raised, if any)."""
    world = _World(size, timeout)
    results: list[Any] = [None] * size
    errors: list[BaseException] = []

    def run(rank: int) -> None:
        try:
            results[rank] = work(ThreadRank(rank, world))
        except BaseException as error:  # noqa: BLE001 - reported to the caller
            errors.append(error)
            world.barrier.abort()

    threads = [threading.Thread(target=run, args=(rank,)) for rank in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]
    return results
