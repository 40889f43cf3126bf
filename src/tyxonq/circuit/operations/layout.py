"""Where each operation of a circuit drawing goes: the columns shared by the text diagram, the
matplotlib figure and the LaTeX (quantikz) picture, so that all three agree.

An operation takes the earliest column after everything it must follow: an operation on any row
from its lowest qubit to its highest (the rows a drawn gate covers), the measurements of the
classical bits it reads, and every barrier (which spans all rows: nothing moves left across it).
Operations on no qubit (a detector, a logical observable) sit on one more row, the classical
row below the qubits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .operation import Operation

__all__ = ["Layout", "layout", "rows_of"]


@dataclass(frozen=True)
class Layout:
    """The columns of a drawing.

    Attributes
    ----------
    columns : int
        How many columns there are.
    operation_columns : tuple of int
        Each operation's column, in the circuit's order.
    barrier_columns : tuple of (int, tuple of int)
        Each barrier's column and the qubits it marks.
    classical_row : bool
        Whether some operation sits on the classical row (row ``num_qubits``).
    """

    columns: int
    operation_columns: tuple[int, ...]
    barrier_columns: tuple[tuple[int, tuple[int, ...]], ...]
    classical_row: bool


def rows_of(num_qubits: int, operation: Operation) -> range:
    """The rows a drawn operation covers: its lowest qubit to its highest, or the classical row
    (``num_qubits``) for one on no qubit."""
    if not operation.qubits:
        return range(num_qubits, num_qubits + 1)
    return range(min(operation.qubits), max(operation.qubits) + 1)


def layout(num_qubits: int, operations: Sequence[Operation],
           barriers: Sequence[tuple[int, tuple[int, ...]]] = ()) -> Layout:
    """Each operation's and barrier's column (see the module); ``barriers`` are ``(operations
    before it, qubits)`` markers.

    Examples
    --------
    >>> ops = [Operation("h", (0,)), Operation("h", (1,)), Operation("cx", (0, 2))]
    >>> placed = layout(3, ops, barriers=[(2, (0, 1, 2))])
    >>> placed.operation_columns, placed.barrier_columns, placed.columns
    ((0, 0, 2), ((1, (0, 1, 2)),), 3)
    """
    spans: list[set[int]] = []
    markers: dict[int, list[tuple[int, ...]]] = {}
    for position, qubits in barriers:
        markers.setdefault(position, []).append(qubits)
    everything = set(range(num_qubits + 1))
    written: dict[int, int] = {}  # classical bit -> the column after its last measurement
    operation_columns: list[int] = []
    barrier_columns: list[tuple[int, tuple[int, ...]]] = []
    classical = False
    for index, operation in enumerate(list(operations) + [None]):
        for qubits in markers.get(index, ()):
            barrier_columns.append((len(spans), tuple(qubits)))
            spans.append(set(everything))
        if operation is None:
            break
        span = set(rows_of(num_qubits, operation))
        classical = classical or num_qubits in span
        bits = operation.condition.bits if operation.condition is not None else operation.clbits
        floor = max((written.get(b, 0) for b in bits), default=0)
        column = len(spans)
        while column > 0 and not spans[column - 1] & span and column > floor:
            column -= 1
        if column == len(spans):
            spans.append(set())
        spans[column] |= span
        operation_columns.append(column)
        if operation.gate == "measure":
            for bit in operation.clbits:
                written[bit] = column + 1
    return Layout(len(spans), tuple(operation_columns), tuple(barrier_columns), classical)
