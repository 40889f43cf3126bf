"""A text diagram of a circuit: one row per qubit, gates in the earliest free column."""

from __future__ import annotations

from typing import Sequence

from .gates import GATES, PAULI_ROTATION_PREFIX
from .layout import layout, rows_of
from .operation import Condition, Operation

__all__ = ["draw", "operation_labels", "format_param", "gate_name"]

TARGET_LABELS = {"cx": "X", "cy": "Y", "cz": "Z", "crx": "RX", "cry": "RY", "crz": "RZ",
                  "cphase": "P", "ccx": "X", "cswap": "x"}


def gate_name(operation: Operation) -> str:
    """A gate's name in a figure's box or a LaTeX cell: its target's letter for a controlled gate
    (``cx`` and ``c1:x`` -> ``X``), ``U`` for a ``unitary``, else the name in capitals.

    Examples
    --------
    >>> gate_name(Operation("crz", (0, 1), (0.5,))), gate_name(Operation("h", (0,)))
    ('RZ', 'H')
    """
    spec = GATES[operation.gate]
    base = spec.controlled_from[0] if spec.controlled_from else operation.gate
    return "U" if operation.gate == "unitary" else TARGET_LABELS.get(base, base.upper())


def format_param(value: object) -> str:
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return "·"


def _condition_label(condition: Condition | None) -> str:
    """``[c0=1]``, ``[c0c1=2]`` (a register's bits, least significant first), ``[c0c1≠2]``,
    ``[c0^c1=1]``."""
    if condition is None:
        return ""
    joiner = "^" if condition.kind == "parity" else ""
    relation = "≠" if condition.kind == "differs" else "="
    return "[" + joiner.join(f"c{b}" for b in condition.bits) + f"{relation}{condition.value}]"


def operation_labels(operation: Operation) -> dict[int, str]:
    """The text diagram's label of ``operation`` on each qubit it acts on."""
    if operation.channel is not None:  # a channel: its name on every qubit, in braces
        return {q: "{" + operation.channel.name + "}" for q in operation.qubits}
    if operation.gate == "measure":
        return {operation.qubits[0]: f"M→c{operation.clbits[0]}"}
    if operation.gate == "reset":
        return {operation.qubits[0]: "|0⟩"}
    if operation.gate == "post_select":
        return {operation.qubits[0]: f"P={operation.params[0]}"}
    spec = GATES[operation.gate]
    dagger = "†" if operation.dagger else ""
    params = "" if not spec.is_parametrised or operation.gate == "unitary" else (
        "(" + ",".join(format_param(p) for p in operation.params) + ")")
    controls = operation.qubits[: spec.num_controls]
    targets = operation.qubits[spec.num_controls:]
    name = TARGET_LABELS.get(operation.gate, operation.gate.upper())
    if operation.gate in ("swap", "cswap"):
        label = "x"
    elif operation.gate == "unitary":
        label = "U"
    else:
        label = name
    labels = {q: "●" for q in controls}
    condition = _condition_label(operation.condition)
    if operation.gate.startswith(PAULI_ROTATION_PREFIX):  # exp(-iθP/2): P's letter on each qubit
        letters = operation.gate[len(PAULI_ROTATION_PREFIX):]
        return {q: f"e^{letter}{params}{dagger}{condition}" for q, letter in zip(targets, letters)}
    labels.update({q: f"{label}{params}{dagger}{condition}" for q in targets})
    return labels


def draw(num_qubits: int, operations: Sequence[Operation], width: int = 100,
         barriers: Sequence[tuple[int, tuple[int, ...]]] = ()) -> str:
    """Text diagram; qubit 0 is the top row. Columns that would pass ``width`` characters are
    folded into further blocks (``»`` ends a block that continues, ``«`` starts its sequel).
    ``barriers``: ``(operations before it, qubits)`` markers, drawn ``░``; nothing moves across.

    Examples
    --------
    >>> print(draw(2, [Operation("h", (0,)), Operation("cx", (0, 1))]))
    q0: ─H─●─
    q1: ───X─
    >>> print(draw(1, [Operation("h", (0,))] * 6, width=14))
    q0: ─H─H─H─H─»
    <BLANKLINE>
    q0: «H─H─
    """
    placed = layout(num_qubits, operations, barriers)
    columns: list[dict[int, str]] = [{} for _ in range(placed.columns)]
    for column, qubits in placed.barrier_columns:
        columns[column] = {q: "░" for q in qubits}
    for operation, column in zip(operations, placed.operation_columns):
        labels = operation_labels(operation)
        columns[column].update({q: labels.get(q, "│") for q in rows_of(num_qubits, operation)})
    cells = []  # per column: its label on every row, padded to the column's width
    for column in columns:
        size = max(len(label) for label in column.values())
        cells.append([column[q].center(size, "─") if q in column else "─" * size
                      for q in range(num_qubits)])
    names = [f"q{q}:".ljust(len(f"q{num_qubits - 1}") + 1) for q in range(num_qubits)]
    room = max(width - len(names[0]) - 3, 1)
    blocks, current, used = [], [], 0
    for column in cells:
        if current and used + len(column[0]) + 1 > room:
            blocks.append(current)
            current, used = [], 0
        current.append(column)
        used += len(column[0]) + 1
    blocks.append(current)
    drawn = []
    for number, block in enumerate(blocks):
        start = " ─" if number == 0 else " «"
        end = "─" if number == len(blocks) - 1 else "─»"
        rows = [names[q] + start + "─".join(column[q] for column in block) + end for q in range(num_qubits)]
        drawn.append("\n".join(rows))
    return "\n\n".join(drawn)
