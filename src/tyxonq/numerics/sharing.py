"""Work shared between the ranks of a distributed run (:mod:`tyxonq.numerics.distributed`): which
rank computes which items, the seed each rank draws with, and sums over ranks that raise on every
rank when one rank fails instead of leaving the others waiting.

Every rank runs the same program (SPMD): it builds the same items (contractions, trajectories) in
the same order, computes its share, and :func:`summed_over_ranks` adds the shares up, so every rank
ends with the same result, the one a single process computes (to rounding: the sum's order differs).
"""

from __future__ import annotations

import hashlib
from contextvars import ContextVar
from typing import Any, Callable, Sequence

import numpy as np

from .arguments import checked_seed
from .distributed import Communicator, communicator

__all__ = ["DistributedRankError", "balanced_shares", "rank_share", "rank_seed", "shared_rows",
           "summed_over_ranks", "structure_digest", "sharing"]


class DistributedRankError(RuntimeError):
    """Another rank of a distributed run failed while this one computed its share (raised on
    every rank that did not fail; the failing rank raises its own error)."""


#: set while a rank computes its own share: what it calls then is not shared again
_OWN_SHARE: ContextVar[bool] = ContextVar("tyxonq_own_share", default=False)


def sharing() -> Communicator | None:
    """The active communicator when this process is one rank of several and is not computing its
    own share of something already shared, else ``None``."""
    comm = communicator()
    return comm if comm.size > 1 and not _OWN_SHARE.get() else None


def balanced_shares(costs: Sequence[float], size: int) -> list[list[int]]:
    """The items' indices per rank, each rank's total cost as even as the items allow: the most
    costly item first, to the rank with the least so far (ties: the lower index, the lower rank),
    so every rank computes the same shares. Each share is in ascending order.

    Examples
    --------
    >>> balanced_shares([5.0, 1.0, 1.0, 3.0, 2.0], 2)
    [[0, 1], [2, 3, 4]]
    """
    loads = [0.0] * size
    shares: list[list[int]] = [[] for _ in range(size)]
    for index in sorted(range(len(costs)), key=lambda i: (-float(costs[i]), i)):
        rank = min(range(size), key=lambda r: (loads[r], r))
        loads[rank] += float(costs[index])
        shares[rank].append(index)
    return [sorted(share) for share in shares]


def rank_share(count: int, comm: Communicator) -> tuple[int, int]:
    """The ``[start, stop)`` of ``count`` equal items (shots, trajectories) this rank draws: the
    first ``count % size`` ranks take one more.

    Examples
    --------
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> rank_share(10, SingleProcess())
    (0, 10)
    """
    base, extra = divmod(count, comm.size)
    start = comm.rank * base + min(comm.rank, extra)
    return start, start + base + (1 if comm.rank < extra else 0)


def rank_seed(seed: Any, comm: Communicator) -> int | None:
    """This rank's seed, derived from the user's ``seed`` and the rank and number of ranks: a
    seeded run gives the same numbers on every run with the same number of ranks, and the ranks'
    streams are independent. One process keeps ``seed`` as it is.

    Examples
    --------
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> rank_seed(7, SingleProcess())
    7
    """
    seed = checked_seed(seed)
    if seed is None or comm.size == 1:
        return seed
    sequence = np.random.SeedSequence(seed, spawn_key=(comm.size, comm.rank))
    return int(sequence.generate_state(1, np.uint64)[0])


def shared_rows(draw: Callable[[int, int | None], Any], count: int, seed: Any, width: int,
                what: str) -> Any:
    """``count`` random rows: ``draw(rows, seed)`` as it is in one process; in a distributed run
    each rank draws its share of the rows (:func:`rank_share`) with its own seed
    (:func:`rank_seed`), as a host array of shape ``(rows, width)`` of integers below ``2**53``,
    and every rank gets all ``count`` rows, in rank order.

    Examples
    --------
    >>> shared_rows(lambda k, s: np.random.default_rng(s).integers(2, size=(k, 3)), 4, 1, 3, "bits").shape
    (4, 3)
    """
    comm = sharing()
    if comm is None:
        return draw(count, checked_seed(seed))
    comm.agree((count, width, checked_seed(seed), what), what)
    start, stop = rank_share(count, comm)

    def compute() -> np.ndarray:
        rows = np.zeros((count, width))
        if stop > start:
            drawn = np.asarray(draw(stop - start, rank_seed(seed, comm)))
            rows[start:stop] = drawn.reshape(stop - start, width)
        return rows

    return np.rint(summed_over_ranks(comm, compute, (count, width), what).real).astype(np.int64)


def structure_digest(value: Any) -> str:
    """A short digest of ``repr(value)`` (what :meth:`~Communicator.agree` compares)."""
    return hashlib.sha256(repr(value).encode()).hexdigest()


def summed_over_ranks(comm: Communicator, compute: Callable[[], np.ndarray], shape: tuple[int, ...],
                      what: str) -> np.ndarray:
    """The sum over ranks of ``compute()`` (this rank's share, a complex host array of ``shape``,
    computed alone: nothing it calls is shared again), on every rank. A rank whose ``compute``
    raises re-raises its error after the sum and every other rank raises
    :class:`DistributedRankError`: one collective, and none waits forever.

    Examples
    --------
    >>> from tyxonq.numerics.distributed import SingleProcess
    >>> summed_over_ranks(SingleProcess(), lambda: np.ones(2), (2,), "ones").real.tolist()
    [1.0, 1.0]
    """
    failure = None
    token = _OWN_SHARE.set(True)
    try:
        local = np.asarray(compute(), dtype=complex).reshape(shape)
    except Exception as error:  # noqa: BLE001 - re-raised below, after the others heard of it
        failure, local = error, np.zeros(shape, dtype=complex)
    finally:
        _OWN_SHARE.reset(token)
    total = comm.all_reduce_sum(np.concatenate([[1.0 if failure else 0.0], local.reshape(-1)]))
    if failure is not None:
        raise failure
    failed = int(round(total[0].real))
    if failed:
        raise DistributedRankError(
            f"{failed} other rank(s) of {comm.size} failed while computing {what}; their own errors "
            "say why (this rank's share succeeded)")
    return total[1:].reshape(shape)
