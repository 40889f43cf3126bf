"""Large state vectors worked on in chunks, in place: no temporary as large as the state.

A block on some qubits of an ``n``-qubit register acts independently on every value of the other
qubits' bits. Fixing the leading ``t`` of those (the *outer* qubits) cuts the register into ``2^t``
chunks of ``2^(n-t)`` amplitudes, each an ``(n-t)``-qubit register that holds every qubit of the
block: the block runs on each chunk and the result is written back into the chunk's view. A
sharded state's sweep, swaps, Pauli sums and transitions work this way where the backend updates
pieces of an array without copying the rest (:meth:`~tyxonq.numerics.protocol.ArrayBackend.updates_in_pieces`:
NumPy and PyTorch in place, JAX by compiled updates into a donated buffer), so a rank holds its
shard plus a few chunks, never two shards.

:data:`CHUNK_QUBITS` bounds a chunk (``2^15`` amplitudes: 512 KiB in complex128); registers no
larger than that are one chunk.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .cache_registry import register_function_cache
from .protocol import ArrayBackend

__all__ = ["CHUNK_QUBITS", "Chunking", "chunking", "chunk_views", "update_in_chunks", "contiguous_chunks",
           "chunk_amplitudes", "read_in_chunks"]

#: A chunk holds at most ``2^CHUNK_QUBITS`` amplitudes (512 KiB in complex128: within a core's
#: cache). Measured on a 22-qubit depth-20 sweep and 50-term Pauli sum (NumPy, 1 thread; sweep /
#: Pauli values): 2^12: 4.6 / 5.5 s; 2^14: 3.6 / 3.6 s; 2^15: 2.4-2.6 / 2.3-2.6 s; 2^16: 3.0-3.8 /
#: 3.0-3.3 s; 2^20: 4.1 / 4.5 s; one chunk (2^22): 4.8 / 7.1 s.
CHUNK_QUBITS = 15


@dataclass(frozen=True)
class Chunking:
    """How an ``n``-qubit register is cut into chunks that each hold ``qubits``.

    Attributes
    ----------
    view : tuple of int
        The register viewed with every outer qubit its own axis of two, the runs between them
        merged (within any ``max_ndim``: at most ``2 t + 1`` axes).
    selections : tuple of tuple
        Per chunk, the index of its view (ints on the outer axes, slices elsewhere).
    qubits : tuple of int
        The block's qubits within a chunk's ``(n - t)``-qubit register (their order kept).
    chunk_qubits : int
        ``n - t``.
    """

    view: tuple[int, ...]
    selections: tuple[tuple[Any, ...], ...]
    qubits: tuple[int, ...]
    chunk_qubits: int

    def piece(self, selection: tuple[Any, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """A selection as the ``(starts, sizes)`` of a block of :attr:`view`
        (:meth:`~tyxonq.numerics.protocol.ArrayBackend.read_piece`)."""
        starts = tuple(0 if isinstance(index, slice) else index for index in selection)
        sizes = tuple(size if isinstance(index, slice) else 1 for index, size in zip(selection, self.view))
        return starts, sizes


@register_function_cache
@functools.lru_cache(maxsize=4096)
def chunking(num_qubits: int, qubits: tuple[int, ...], limit: int) -> Chunking:
    """The :class:`Chunking` of a ``num_qubits`` register for a block on ``qubits``: the leading
    qubits not in the block are outer until a chunk holds at most ``2^limit`` amplitudes (or only
    the block's qubits are left; :data:`CHUNK_QUBITS` is the usual ``limit``).

    Examples
    --------
    >>> cut = chunking(4, (1,), limit=2)
    >>> cut.view, cut.qubits, len(cut.selections)
    ((2, 2, 2, 2), (0,), 4)
    >>> chunking(4, (0, 3), limit=2).view, chunking(4, (0, 3), limit=2).qubits
    ((2, 2, 2, 2), (0, 1))
    """
    keep = max(limit, len(qubits))
    others = [q for q in range(num_qubits) if q not in qubits]
    outer = others[:max(0, num_qubits - keep)]
    view: list[int] = []
    axes: list[int | None] = []  # per view axis: the outer qubit it holds, None for a run
    run = 0
    for q in range(num_qubits):
        if q in outer:
            if run:
                view.append(2 ** run)
                axes.append(None)
                run = 0
            view.append(2)
            axes.append(q)
        else:
            run += 1
    if run or not view:
        view.append(2 ** run)
        axes.append(None)
    t = len(outer)
    selections = []
    for value in range(2 ** t):
        bits = {q: (value >> (t - 1 - i)) & 1 for i, q in enumerate(outer)}
        selections.append(tuple(slice(None) if q is None else bits[q] for q in axes))
    inner = [q for q in range(num_qubits) if q not in outer]
    return Chunking(tuple(view), tuple(selections), tuple(inner.index(q) for q in qubits), num_qubits - t)


def chunk_views(K: ArrayBackend, array: Any, cut: Chunking) -> Iterator[Any]:
    """Every chunk of ``array`` (a ``2^n`` vector), in :attr:`Chunking.view`'s shape with ones on
    the outer axes (:meth:`~tyxonq.numerics.protocol.ArrayBackend.read_piece`: a view where the
    backend has views, else a copy of the chunk only; reshape it to ``(-1,)`` for the chunk's
    register, a copy where the view is strided)."""
    for selection in cut.selections:
        yield K.read_piece(array, cut.view, *cut.piece(selection))


def update_in_chunks(K: ArrayBackend, array: Any, qubits: tuple[int, ...], num_qubits: int,
                     update: Callable[[Any, Chunking], Any]) -> Any:
    """``array`` (a ``2^n`` vector) with every chunk ``c`` (flattened, an ``(n-t)``-qubit register
    holding ``qubits``) replaced by ``update(c, cut)``: written in place where the backend writes
    in place (returns ``array`` itself), piece by piece into a donated buffer on JAX (the
    returned array; ``array`` is gone), otherwise ``update`` on the whole array
    (:meth:`~tyxonq.numerics.protocol.ArrayBackend.updates_in_pieces`).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> state = np.arange(8.0)
    >>> flip = lambda c, cut: c.reshape(-1, 2, 2 ** (cut.chunk_qubits - 3))[:, ::-1].reshape(-1)
    >>> update_in_chunks(K, state, (2,), 3, flip) is state, state.tolist()
    (True, [1.0, 0.0, 3.0, 2.0, 5.0, 4.0, 7.0, 6.0])
    """
    if not K.updates_in_pieces(array):
        return update(array, chunking(num_qubits, qubits, num_qubits))
    cut = chunking(num_qubits, qubits, CHUNK_QUBITS)
    for selection in cut.selections:
        starts, sizes = cut.piece(selection)
        chunk = K.reshape(K.read_piece(array, cut.view, starts, sizes), (-1,))
        array = K.write_piece(array, cut.view, starts, K.reshape(update(chunk, cut), sizes))
    return array


def read_in_chunks(K: ArrayBackend, arrays: Sequence[Any], qubits: tuple[int, ...],
                   num_qubits: int) -> Iterator[tuple[list[Any], Chunking]]:
    """The matching chunks of ``arrays`` (``2^n`` vectors) for a block on ``qubits``, each
    flattened (a copy only where strided), with the :class:`Chunking` that says where ``qubits``
    are in them: for sums over the other qubits (a transition, a norm), chunk by chunk.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> sum(float(np.sum(a * b)) for (a, b), _ in read_in_chunks(K, [np.ones(8), np.arange(8.0)], (0,), 3))
    28.0
    """
    cut = chunking(num_qubits, qubits, CHUNK_QUBITS)
    for views in zip(*(chunk_views(K, array, cut) for array in arrays)):
        yield [K.reshape(view, (-1,)) for view in views], cut


def chunk_amplitudes() -> int:
    """The most amplitudes a chunk holds: ``2^CHUNK_QUBITS``."""
    return 2 ** CHUNK_QUBITS


def contiguous_chunks(size: int, limit: int | None = None) -> list[slice]:
    """Consecutive slices of at most ``2^limit`` (default :data:`CHUNK_QUBITS`) of ``size``
    entries (one when it is smaller).

    Examples
    --------
    >>> contiguous_chunks(8, limit=2)
    [slice(0, 4, None), slice(4, 8, None)]
    """
    step = 2 ** (CHUNK_QUBITS if limit is None else limit)
    return [slice(start, min(start + step, size)) for start in range(0, max(size, 1), step)]
