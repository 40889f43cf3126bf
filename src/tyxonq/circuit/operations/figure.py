"""A circuit drawn as a matplotlib figure: the columns of the text diagram
(:mod:`~tyxonq.circuit.operations.layout`), qubit 0 on top, long circuits folded into blocks.

Every drawn element carries a ``gid`` naming what it is (``"gate"``, ``"control"``,
``"target"``, ``"swap"``, ``"measure"``, ``"reset"``, ``"post_select"``, ``"channel"``,
``"pauli_rotation"``, ``"condition"``, ``"barrier"``, ``"detector"``, ``"observable"``,
``"wire"``, ``"fold"``), so a figure can be checked element by element
(``figure.axes[0].findobj(lambda a: a.get_gid() == "gate")``).
"""

from __future__ import annotations

from typing import Any, Sequence

from .drawing import format_param, gate_name
from .gates import GATES, PAULI_ROTATION_PREFIX
from .layout import layout
from .operation import Condition, Operation

__all__ = ["circuit_figure", "FOLD_WIDTH"]

#: the width (in gate boxes) of one block before a long circuit folds, when ``fold`` is not given
FOLD_WIDTH = 24
_BOX = 0.7  # a gate box's height (rows are 1 apart)
_INCH = 0.62  # inches per unit
_FACES = {"gate": "#dbe9f6", "channel": "#fde2c8", "measure": "#ececec", "reset": "#ececec",
          "post_select": "#ececec", "pauli_rotation": "#e2f0d9", "detector": "#f3e5f5",
          "observable": "#f3e5f5"}
_EDGE = "#1f3b57"


def _condition_text(condition: Condition) -> str:
    joiner = " ^ " if condition.kind == "parity" else " "
    relation = "≠" if condition.kind == "differs" else "="
    return "if " + joiner.join(f"c{b}" for b in condition.bits) + f" {relation} {condition.value}"


def _gate_text(operation: Operation) -> tuple[str, str]:
    """The name and the parameters shown in a gate's box."""
    name = gate_name(operation) + ("†" if operation.dagger else "")
    params = ", ".join(format_param(p) for p in operation.params) if operation.has_angles else ""
    params = f"({params})" if params else ""
    return name, params


def _kind(operation: Operation) -> str:
    if operation.channel is not None:
        return "channel"
    if operation.gate in ("measure", "reset", "post_select", "detector", "observable"):
        return operation.gate
    if operation.gate.startswith(PAULI_ROTATION_PREFIX):
        return "pauli_rotation"
    return "gate"


def _column_width(operation: Operation) -> float:
    """Units of width the operation's box needs."""
    kind = _kind(operation)
    if kind == "gate":
        name, params = _gate_text(operation)
        text = max(len(name), len(params) * 0.8)
    elif kind == "channel":
        text = len(operation.channel.name) * 0.8
    elif kind == "pauli_rotation":
        text = len(format_param(operation.params[0])) + 2 if operation.params else 1
    elif kind in ("detector", "observable"):
        text = 0.7 * len(" ".join(f"c{b}" for b in operation.clbits)) + 2
    else:
        text = 2
    return max(1.0, 0.13 * text + 0.45)


class _Canvas:
    """Draws into ``ax`` in row units: qubit ``q`` of a block is at ``y = top - q``. Artists are
    added without updating the axes' data limits (the figure sets its own): a few hundred boxes
    would otherwise spend most of the drawing time on Bezier extrema."""

    def __init__(self, ax: Any, num_qubits: int) -> None:
        self.ax, self.n = ax, num_qubits

    def box(self, x: float, low: float, high: float, width: float, gid: str, dashed: bool = False) -> None:
        from matplotlib.patches import FancyBboxPatch

        height = high - low + _BOX
        self.ax.add_artist(FancyBboxPatch((x - width / 2, low - _BOX / 2), width, height,
                                         boxstyle="round,pad=0,rounding_size=0.06", gid=gid,
                                         facecolor=_FACES.get(gid, _FACES["gate"]), edgecolor=_EDGE,
                                         linewidth=1.2, linestyle="--" if dashed else "-", zorder=3))

    def text(self, x: float, y: float, text: str, gid: str | None = None, size: float = 10.0,
             **options: Any) -> None:
        self.ax.text(x, y, text, ha="center", va="center", fontsize=size, gid=gid, zorder=4, **options)

    def line(self, xs: Sequence[float], ys: Sequence[float], gid: str, **options: Any) -> None:
        from matplotlib.lines import Line2D

        style = {"color": _EDGE, "linewidth": 1.2, "zorder": 2} | options
        self.ax.add_artist(Line2D(xs, ys, gid=gid, **style))

    def dot(self, x: float, y: float) -> None:
        from matplotlib.patches import Circle

        self.ax.add_artist(Circle((x, y), 0.09, facecolor=_EDGE, edgecolor=_EDGE, gid="control", zorder=3))

    def plus(self, x: float, y: float) -> None:
        from matplotlib.patches import Circle

        self.ax.add_artist(Circle((x, y), 0.2, facecolor="white", edgecolor=_EDGE, linewidth=1.2,
                                  gid="target", zorder=3))
        self.line([x - 0.2, x + 0.2], [y, y], "target", zorder=4)
        self.line([x, x], [y - 0.2, y + 0.2], "target", zorder=4)

    def cross(self, x: float, y: float) -> None:
        for sign in (1, -1):
            self.line([x - 0.13, x + 0.13], [y - 0.13 * sign, y + 0.13 * sign], "swap", linewidth=1.6,
                      zorder=4)

    def meter(self, x: float, y: float) -> None:
        from matplotlib.patches import Arc

        self.ax.add_artist(Arc((x, y - 0.12), 0.42, 0.36, theta1=0, theta2=180, color=_EDGE, linewidth=1.1,
                               zorder=4))
        self.line([x, x + 0.17], [y - 0.12, y + 0.16], "measure", linewidth=1.1, zorder=4)


def _draw_operation(canvas: _Canvas, operation: Operation, x: float, width: float, row_of: Any,
                    detector: int) -> None:
    """One operation centred at ``x``; ``row_of(q)`` gives qubit ``q``'s ``y`` (the classical
    row's for ``q = num_qubits``); ``detector``: its number, for a detector."""
    kind = _kind(operation)
    qubits = operation.qubits
    if kind in ("detector", "observable"):
        y = row_of(canvas.n)
        canvas.box(x, y, y, width, kind)
        observable = int(operation.params[0]) if operation.params else 0
        head = f"D{detector}" if kind == "detector" else f"L{observable}"
        canvas.text(x, y + 0.1, head, size=9)
        canvas.text(x, y - 0.16, " ".join(f"c{b}" for b in operation.clbits), size=7)
        return
    if kind == "channel":
        ys = [row_of(q) for q in qubits]
        canvas.box(x, min(ys), max(ys), width, "channel", dashed=True)
        canvas.text(x, (min(ys) + max(ys)) / 2, operation.channel.name, size=8, style="italic")
        return
    if kind in ("measure", "reset", "post_select"):
        y = row_of(qubits[0])
        canvas.box(x, y, y, width, kind)
        if kind == "measure":
            canvas.meter(x, y)
            canvas.text(x, y - _BOX / 2 - 0.13, f"c{operation.clbits[0]}", size=7)
        else:
            canvas.text(x, y, "|0⟩" if kind == "reset" else f"P={int(operation.params[0])}", size=9)
        return
    if kind == "pauli_rotation":
        letters = operation.gate[len(PAULI_ROTATION_PREFIX):]
        ys = [row_of(q) for q in qubits]
        canvas.box(x, min(ys), max(ys), width, "pauli_rotation")
        for letter, y in zip(letters, ys):
            canvas.text(x, y, letter, size=10, weight="bold")
        angle = format_param(operation.params[0]) if operation.params else ""
        canvas.text(x, max(ys) + _BOX / 2 + 0.12, f"θ={angle}", size=7)
        _condition(canvas, operation, x, max(ys) + 0.25)
        return
    spec = GATES[operation.gate]
    controls, targets = qubits[: spec.num_controls], qubits[spec.num_controls:]
    base = spec.controlled_from[0] if spec.controlled_from else operation.gate
    if base in ("cx", "ccx"):
        base = "x"
    all_ys = [row_of(q) for q in qubits]
    if len(qubits) > 1:
        canvas.line([x, x], [min(all_ys), max(all_ys)], "connector")
    for q in controls:
        canvas.dot(x, row_of(q))
    target_ys = [row_of(q) for q in targets]
    if base == "x" and controls and not operation.dagger:
        canvas.plus(x, target_ys[0])
    elif base in ("swap", "cswap"):
        for y in target_ys:
            canvas.cross(x, y)
    elif operation.gate == "cz":
        canvas.dot(x, target_ys[0])
    else:
        name, params = _gate_text(operation)
        canvas.box(x, min(target_ys), max(target_ys), width, "gate")
        middle = (min(target_ys) + max(target_ys)) / 2
        if params:
            canvas.text(x, middle + 0.1, name, size=10)
            canvas.text(x, middle - 0.17, params, size=7)
        else:
            canvas.text(x, middle, name, size=10)
    _condition(canvas, operation, x, max(all_ys))


def _condition(canvas: _Canvas, operation: Operation, x: float, y: float) -> None:
    if operation.condition is not None:
        canvas.text(x, y + _BOX / 2 + 0.12, _condition_text(operation.condition), gid="condition", size=7,
                    color="#8a1c1c")


def circuit_figure(num_qubits: int, operations: Sequence[Operation],
                   barriers: Sequence[tuple[int, tuple[int, ...]]] = (), fold: int | None = None,
                   ax: Any = None, title: str | None = None) -> Any:
    """The circuit as a matplotlib ``Figure`` (see the module): ``fold`` columns per block
    (``None``: blocks about :data:`FOLD_WIDTH` boxes wide; ``0``: never fold), drawn into ``ax``
    when one is given (unfolded, on that axes' figure).

    Examples
    --------
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1)), Operation("measure", (1,), clbits=(0,))]
    >>> figure = circuit_figure(2, ops)
    >>> sorted({a.get_gid() for a in figure.axes[0].findobj() if a.get_gid()})
    ['connector', 'control', 'gate', 'measure', 'target', 'wire']
    """
    try:
        import matplotlib  # noqa: F401 - only to say what is missing
    except ImportError as error:
        raise ImportError("draw(output='mpl') needs matplotlib: pip install matplotlib (or draw the circuit "
                          "as output='text' or 'latex')") from error
    operations = list(operations)
    placed = layout(num_qubits, operations, barriers)
    widths = [1.0] * placed.columns
    in_column: list[list[tuple[Operation, float, int]]] = [[] for _ in range(placed.columns)]
    detectors = 0
    for operation, column in zip(operations, placed.operation_columns):
        width = _column_width(operation)
        widths[column] = max(widths[column], width)
        in_column[column].append((operation, width, detectors))
        detectors += operation.gate == "detector"
    for column, _ in placed.barrier_columns:
        widths[column] = max(widths[column], 0.5)
    blocks = _blocks(widths, fold if ax is None else 0)
    rows = num_qubits + (1 if placed.classical_row else 0)
    block_height = rows + 0.8
    longest = max((sum(widths[c] + 0.25 for c in block) for block in blocks), default=1.0)
    if ax is None:
        from matplotlib.figure import Figure

        size = (max(2.5, (longest + 1.6) * _INCH),
                max(1.2, len(blocks) * block_height * _INCH) + (0.4 if title is not None else 0.0))
        figure = Figure(figsize=size)
        ax = figure.add_subplot()
        figure.subplots_adjust(left=0.01, right=0.99, top=0.99 if title is None else 1 - 0.4 / size[1],
                               bottom=0.01)
    else:
        figure = ax.figure
    canvas = _Canvas(ax, num_qubits)
    for number, block in enumerate(blocks):
        top = -number * block_height
        xs, edge = {}, 0.4
        for column in block:
            xs[column] = edge + widths[column] / 2
            edge += widths[column] + 0.25
        _wires(canvas, num_qubits, placed.classical_row, top, edge, number, len(blocks))
        for column in block:
            for operation, width, detector in in_column[column]:
                _draw_operation(canvas, operation, xs[column], width * 0.86, lambda q, t=top: t - q, detector)
        for column, qubits in placed.barrier_columns:
            if column in xs and qubits:
                low, high = top - max(qubits) - 0.45, top - min(qubits) + 0.45
                ax.fill_between([xs[column] - 0.08, xs[column] + 0.08], low, high, color="#bbbbbb", alpha=0.5,
                                linewidth=0, gid="barrier", zorder=1)
                canvas.line([xs[column], xs[column]], [low, high], "barrier", linestyle="--", color="#777777")
    ax.set_xlim(-1.0, longest + 0.6)
    ax.set_ylim(-(len(blocks) - 1) * block_height - rows + 0.35, 0.95)
    ax.set_aspect("equal")
    ax.axis("off")
    if title is not None:
        ax.set_title(title)
    return figure


def _blocks(widths: list[float], fold: int | None) -> list[list[int]]:
    """Columns per block: ``fold`` each, or (``None``) up to :data:`FOLD_WIDTH` units; ``0``: one."""
    columns = list(range(len(widths)))
    if fold == 0 or not columns:
        return [columns]
    if fold is not None:
        return [columns[i:i + fold] for i in range(0, len(columns), fold)]
    blocks, current, used = [], [], 0.0
    for column in columns:
        if current and used + widths[column] > FOLD_WIDTH:
            blocks.append(current)
            current, used = [], 0.0
        current.append(column)
        used += widths[column] + 0.25
    blocks.append(current)
    return blocks


def _wires(canvas: _Canvas, num_qubits: int, classical: bool, top: float, end: float, number: int,
           count: int) -> None:
    start = 0.0 if number == 0 else 0.15
    for q in range(num_qubits):
        canvas.line([start, end], [top - q, top - q], "wire", color="#444444", linewidth=1.0, zorder=1)
        canvas.text(-0.45, top - q, f"q{q}", size=10)
    if classical:
        y = top - num_qubits
        for offset in (0.035, -0.035):
            canvas.line([start, end], [y + offset, y + offset], "wire", color="#444444", linewidth=0.8,
                        zorder=1)
        canvas.text(-0.45, y, "c", size=10)
    rows = num_qubits + (1 if classical else 0)
    if number > 0:
        canvas.text(0.05, top - (rows - 1) / 2, "«", gid="fold", size=14)
    if number < count - 1:
        canvas.text(end + 0.1, top - (rows - 1) / 2, "»", gid="fold", size=14)
