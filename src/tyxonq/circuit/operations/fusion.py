"""Gate fusion for state-vector sweeps: grouping a circuit's operations into blocks that apply
cheaply to a state vector (windows of adjacent qubits, and diagonal blocks).

Fewer, larger blocks mean fewer passes over the state: a layer of one-qubit gates and its
entanglers become a few ``16 x 16`` matrices. Fusion depends only on the circuit's structure, so it
is part of the cached sweep program; block matrices are multiplied out at evaluation, through the
backend. (Tensor networks need no fusion: rank simplification merges their small tensors.)
"""

from __future__ import annotations

from typing import Sequence

from .gates import DIAGONAL_GATES
from .operation import Operation

__all__ = ["fuse_for_sweep", "MAX_BLOCK_QUBITS", "MAX_DIAGONAL_QUBITS"]

#: Largest window block of a state-vector sweep: 16 x 16 matrices keep the per-angle work small
#: while merging a layer of one-qubit gates and its entanglers into a few passes over the state.
MAX_BLOCK_QUBITS = 4

#: Largest diagonal block of a sweep: applied element-wise, its cost hardly depends on its size.
MAX_DIAGONAL_QUBITS = 10

_SCAN = 16  # how many of the newest blocks a gate may join besides the one last on its qubits


def fuse_for_sweep(operations: Sequence[Operation], max_ndim: int = 64) -> list[tuple[set, list, bool]]:
    """Greedy fusion into blocks that apply cheaply to a state vector: ``(qubits, members, diagonal)``.

    A block is either *diagonal* (diagonal gates on any qubits, at most :data:`MAX_DIAGONAL_QUBITS`
    and within ``max_ndim``: one element-wise product) or a *window* of at most
    :data:`MAX_BLOCK_QUBITS` adjacent qubits (one matmul on a view, no copies). A gate joins the
    block last on its qubits when the kinds agree and the block stays within its size (moving
    it before later blocks on other qubits, with which it commutes), or else one of the
    :data:`_SCAN` newest blocks that can take it; a gate that fits no window
    (far-apart qubits) is a block of its own.

    Examples
    --------
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("rx", (1,), (0.2,)),
    ...        Operation("cx", (0, 1)), Operation("rzz", (0, 5), (0.3,)), Operation("rz", (5,), (0.4,))]
    >>> [(sorted(q), m, d) for q, m, d in fuse_for_sweep(ops)]
    [([0, 1], [0, 1, 2], False), ([0, 5], [3, 4], True)]
    """
    diagonal_limit = min(MAX_DIAGONAL_QUBITS, (max_ndim - 1) // 2)
    blocks: list[tuple[set, list, bool]] = []
    latest: dict[int, int] = {}  # qubit -> the last block that touches it

    def joinable(index: int, qubits: tuple[int, ...], diagonal: bool) -> set | None:
        touched, _, block_diagonal = blocks[index]
        union = touched | set(qubits)
        if diagonal and block_diagonal:
            return union if len(union) <= diagonal_limit else None
        window = set(range(min(union), max(union) + 1))
        if len(window) > MAX_BLOCK_QUBITS or any(latest.get(q, -1) > index for q in window - touched):
            return None
        return window

    for position, op in enumerate(operations):
        diagonal = op.gate in DIAGONAL_GATES
        owners = [latest[q] for q in op.qubits if q in latest]
        earliest = max(owners) if owners else max(0, len(blocks) - _SCAN)
        grown, target = None, -1
        for candidate in [earliest] + list(range(len(blocks) - 1, earliest, -1))[:_SCAN]:
            if candidate < len(blocks):
                grown = joinable(candidate, op.qubits, diagonal)
                if grown is not None:
                    target = candidate
                    break
        if grown is None:
            low, high = min(op.qubits), max(op.qubits)
            if diagonal and len(op.qubits) <= diagonal_limit:
                grown = set(op.qubits)
            elif not diagonal and high - low + 1 <= MAX_BLOCK_QUBITS:
                grown = set(range(low, high + 1))
            else:
                grown, diagonal = set(op.qubits), False
            blocks.append([grown, [position], diagonal])
            target = len(blocks) - 1
        else:  # later blocks may act on the block's other qubits: only these become its own
            grown = (grown - blocks[target][0]) | set(op.qubits)
            blocks[target][0].update(grown)
            blocks[target][1].append(position)
            blocks[target][2] = blocks[target][2] and diagonal
        for q in grown:
            latest[q] = target
    return [tuple(block) for block in blocks]
