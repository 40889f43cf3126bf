"""Work shared between the ranks of a distributed run (:mod:`tyxonq.numerics.distributed`): which
rank computes which items, the seed each rank draws with, and sums over ranks that raise on every
rank when one rank fails instead of leaving the others waiting.

Every rank runs the same program (SPMD): it builds the same items (contractions, trajectories) in
the same order, computes its share, and :func:`summed_over_ranks` adds the shares up, so every rank
ends with the same result, the one a single process computes (to rounding: the sum's order differs).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .arguments import checked_seed
from .distributed import Communicator, DistributedMismatchError, communicator

__all__ = ["DistributedRankError", "balanced_shares", "rank_share", "rank_seed", "shared_rows",
           "shared_lanes", "summed_over_ranks", "sharing"]


class DistributedRankError(RuntimeError):
    """Another rank of a distributed run failed while this one computed its share (raised on
    every rank that did not fail; the failing rank raises its own error)."""


#: how many of this rank's own shares are being computed: what they call is not shared again. One
#: flag for the whole process, not per thread: JAX runs a gradient node's host callback on a thread
#: of its own
_OWN_SHARE = [0]


def sharing() -> Communicator | None:
    """The active communicator when this process is one rank of several and is not computing its
    own share of something already shared, else ``None``."""
    comm = communicator()
    return comm if comm.size > 1 and not _OWN_SHARE[0] else None


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
    return _share_bounds(count, comm.rank, comm.size)


def _share_bounds(count: int, rank: int, size: int) -> tuple[int, int]:
    base, extra = divmod(count, size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


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
                what: str, dtype: Any = np.int64, structure: Any = None) -> Any:
    """``count`` random rows: ``draw(rows, seed)`` as it is in one process; in a distributed run
    each rank draws its share of the rows (:func:`rank_share`) with its own seed
    (:func:`rank_seed`), as a host array of shape ``(rows, width)`` (integers below ``2**53``,
    or floats with ``dtype=float``), and every rank gets all ``count`` rows of ``dtype``, in rank
    order, after the ranks agreed on the count, the seed and ``structure`` (what is drawn from).

    Examples
    --------
    >>> shared_rows(lambda k, s: np.random.default_rng(s).integers(2, size=(k, 3)), 4, 1, 3, "bits").shape
    (4, 3)
    """
    comm = sharing()
    if comm is None:
        return draw(count, checked_seed(seed))
    comm.agree((count, width, checked_seed(seed), what, structure), what)
    start, stop = rank_share(count, comm)

    def compute() -> np.ndarray:
        rows = np.zeros((count, width))
        if stop > start:
            drawn = np.asarray(draw(stop - start, rank_seed(seed, comm)))
            rows[start:stop] = drawn.reshape(stop - start, width)
        return rows

    rows = summed_over_ranks(comm, compute, (count, width), what).real
    return np.rint(rows).astype(dtype) if np.issubdtype(dtype, np.integer) else rows.astype(dtype)


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
    _OWN_SHARE[0] += 1
    try:
        local = np.asarray(compute(), dtype=complex).reshape(shape)
    except Exception as error:  # noqa: BLE001 - re-raised below, after the others heard of it
        failure, local = error, np.zeros(shape, dtype=complex)
    finally:
        _OWN_SHARE[0] -= 1
    total = comm.all_reduce_sum(np.concatenate([[1.0 if failure else 0.0], local.reshape(-1)]))
    if failure is not None:
        raise failure
    failed = int(round(total[0].real))
    if failed:
        raise DistributedRankError(
            f"{failed} other rank(s) of {comm.size} failed while computing {what}; their own errors "
            "say why (this rank's share succeeded)")
    return total[1:].reshape(shape)


def shared_lanes(K: Any, compute: Callable[[int, int], Any], size: int) -> Any:
    """A batch of ``size`` lanes computed in shares: ``compute(start, stop)`` returns the lanes
    ``start:stop`` (backend arrays stacked along axis 0, or tuples, lists and dicts of them); each
    rank computes its share (:func:`rank_share`, alone) and every rank returns all lanes, in order.
    One all-gather of the shares' sizes (a rank that failed sends -1: the others raise
    :class:`DistributedRankError`), one all-reduce of the values."""
    comm = communicator()
    start, stop = rank_share(size, comm)
    failure, leaves, rebuild = None, [], None
    _OWN_SHARE[0] += 1
    try:
        if stop == start:
            raise ValueError(f"a batch of {size} lanes is smaller than the {comm.size} ranks sharing "
                             "it: give every rank at least one lane")
        leaves, rebuild = _flattened(compute(start, stop))
        host = [np.asarray(K.to_numpy(leaf)) for leaf in leaves]
    except Exception as error:  # noqa: BLE001 - re-raised below, after the others heard of it
        failure, host = error, []
    finally:
        _OWN_SHARE[0] -= 1
    described = np.asarray([-1.0] if failure else [float(sum(h.size for h in host))])
    counts = comm.all_gather(described).real.reshape(-1)
    if failure is not None:
        raise failure
    if np.any(counts < 0):
        raise DistributedRankError(f"{int(np.sum(counts < 0))} other rank(s) of {comm.size} failed while "
                                   "computing their lanes of a batch; their own errors say why")
    per_lane = [int(np.prod(h.shape[1:])) for h in host]  # each leaf's entries per lane
    bounds = [_share_bounds(size, rank, comm.size) for rank in range(comm.size)]
    if not np.array_equal(counts, [(stop_r - start_r) * sum(per_lane) for start_r, stop_r in bounds]):
        raise DistributedMismatchError("a batch's lanes have different shapes on different ranks: every "
                                       "rank must compute the same function of the same batch")
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    total = np.zeros(offsets[-1], dtype=complex)
    total[offsets[comm.rank]:offsets[comm.rank + 1]] = np.concatenate([h.reshape(-1) for h in host])
    total = comm.all_reduce_sum(total)
    gathered = []
    for index, mine in enumerate(host):  # every rank's lanes of this leaf, in rank order
        pieces = []
        for rank, (start_r, stop_r) in enumerate(bounds):
            begin = offsets[rank] + (stop_r - start_r) * sum(per_lane[:index])
            piece = total[begin:begin + (stop_r - start_r) * per_lane[index]]
            pieces.append(piece.reshape((stop_r - start_r,) + mine.shape[1:]))
        joined = np.concatenate(pieces)
        gathered.append(K.asarray(joined if np.iscomplexobj(mine) else joined.real.astype(mine.dtype)))
    return rebuild(gathered)


def _flattened(tree: Any) -> tuple[list, Callable[[list], Any]]:
    """The arrays of a tuple/list/dict tree, and the function that rebuilds it from new ones."""
    if isinstance(tree, (tuple, list)):
        parts = [_flattened(item) for item in tree]
        leaves = [leaf for part, _ in parts for leaf in part]

        def rebuild(new: list) -> Any:
            items, position = [], 0
            for part, inner in parts:
                items.append(inner(new[position:position + len(part)]))
                position += len(part)
            return type(tree)(items)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        inner_leaves, inner = _flattened([tree[key] for key in keys])
        return inner_leaves, lambda new: dict(zip(keys, inner(new)))
    return [tree], lambda new: new[0]
