"""Gate fusion: grouping a circuit's operations into blocks that become single tensors.

Fewer, larger tensors make smaller networks: a run of one-qubit gates becomes one 2x2 tensor and is
absorbed into a neighbouring two-qubit gate. Fusion depends only on the circuit's structure, so it
is part of the cached plan; block matrices are multiplied out at evaluation, through the backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .operations import Operation

__all__ = ["Block", "fuse_operations"]


@dataclass
class Block:
    """Operations (indices into the fused list, in order) acting within ``qubits``."""

    qubits: list[int]
    members: list[int] = field(default_factory=list)


def fuse_operations(operations: Sequence[Operation], max_qubits: int = 2) -> list[Block]:
    """Greedy block fusion into blocks of at most ``max(max_qubits, gate size)`` qubits.

    An operation is appended to the block that was last on all its touched wires (moving it
    earlier past blocks on disjoint wires, with which it commutes), or starts a new block that
    absorbs blocks at the frontier of its wires while the qubit count allows.

    Examples
    --------
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("rx", (1,), (0.2,)),
    ...        Operation("cx", (0, 1)), Operation("rz", (0,), (0.3,))]
    >>> [(b.qubits, b.members) for b in fuse_operations(ops)]
    [([0, 1], [0, 1, 2, 3])]
    """
    blocks: list[Block | None] = []
    latest: dict[int, int] = {}  # qubit -> index of the block last acting on it

    def is_frontier(index: int) -> bool:
        return all(latest.get(q) == index for q in blocks[index].qubits)

    for position, operation in enumerate(operations):
        limit = max(max_qubits, len(operation.qubits))
        owners = {latest[q] for q in operation.qubits if q in latest}
        if len(owners) == 1:
            (owner,) = owners
            union = set(blocks[owner].qubits) | set(operation.qubits)
            if len(union) <= limit:
                block = blocks[owner]
                block.members.append(position)
                block.qubits.extend(q for q in operation.qubits if q not in block.qubits)
                for q in operation.qubits:
                    latest[q] = owner
                continue
        qubits = list(operation.qubits)
        members: list[int] = []
        for owner in sorted(owners, key=lambda i: len(blocks[i].qubits)):
            union = set(qubits) | set(blocks[owner].qubits)
            if is_frontier(owner) and len(union) <= limit:
                qubits.extend(q for q in blocks[owner].qubits if q not in qubits)
                members.extend(blocks[owner].members)
                blocks[owner] = None
        members = sorted(members) + [position]
        blocks.append(Block(_ordered(qubits, operations, members), members))
        for q in blocks[-1].qubits:
            latest[q] = len(blocks) - 1
    return [block for block in blocks if block is not None]


def _ordered(qubits: list[int], operations: Sequence[Operation], members: list[int]) -> list[int]:
    """Block qubits in order of first use by its members (a stable, readable convention)."""
    order: list[int] = []
    for index in members:
        order.extend(q for q in operations[index].qubits if q not in order)
    order.extend(q for q in qubits if q not in order)
    return order
