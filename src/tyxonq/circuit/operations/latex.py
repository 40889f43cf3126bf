"""A circuit as LaTeX source for the quantikz package (``\\usepackage{quantikz}``): the columns of
the text diagram (:mod:`~tyxonq.circuit.operations.layout`), qubit 0 on top.

Gates are boxes with their angles, controls ``\\ctrl``, CNOT targets ``\\targ``, swaps
``\\swap``/``\\targX``, measurements ``\\meter`` (the classical bit as a label), channels dashed
boxes, barriers ``\\slice``; a classical condition is written under its gate's name. Detectors and
observables are not drawn (they act on no qubit).
"""

from __future__ import annotations

from typing import Sequence

from .drawing import format_param, gate_name
from .gates import GATES, PAULI_ROTATION_PREFIX
from .layout import layout
from .operation import Condition, Operation

__all__ = ["circuit_latex"]


def _escaped(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def _condition(condition: Condition | None) -> str:
    if condition is None:
        return ""
    joiner = r"\oplus " if condition.kind == "parity" else ","
    relation = r"\neq" if condition.kind == "differs" else "="
    bits = joiner.join("c_{" + str(b) + "}" for b in condition.bits)
    return r"_{[" + bits + relation + str(condition.value) + "]}"


def _name(operation: Operation) -> str:
    name = r"\mathrm{" + _escaped(gate_name(operation)) + "}" + (r"^\dagger" if operation.dagger else "")
    if operation.has_angles:
        name += "(" + ", ".join(format_param(p) for p in operation.params) + ")"
    return name + _condition(operation.condition)


def _cells(operation: Operation) -> dict[int, str]:
    """The quantikz command on each row the operation writes."""
    qubits = operation.qubits
    if operation.channel is not None:
        label = r"\mathcal{E}_{\mathrm{" + _escaped(operation.channel.name) + "}}"
        return _boxed(qubits, label, r"[style={dashed}]")
    if operation.gate == "measure":
        return {qubits[0]: r"\meter[label style={below}]{c_{" + str(operation.clbits[0]) + "}}"}
    if operation.gate == "reset":
        return {qubits[0]: r"\gate{\ket{0}}"}
    if operation.gate == "post_select":
        return {qubits[0]: r"\gate{P_{" + str(int(operation.params[0])) + "}}"}
    if operation.gate.startswith(PAULI_ROTATION_PREFIX):
        letters = operation.gate[len(PAULI_ROTATION_PREFIX):]
        angle = format_param(operation.params[0]) if operation.params else ""
        return _boxed(qubits, r"e^{-i\theta\," + letters + r"/2},\ \theta=" + angle
                      + _condition(operation.condition), "")
    spec = GATES[operation.gate]
    controls, targets = qubits[: spec.num_controls], qubits[spec.num_controls:]
    base = spec.controlled_from[0] if spec.controlled_from else operation.gate
    cells: dict[int, str] = {}
    anchor = targets[0]
    for q in controls:
        cells[q] = r"\ctrl{" + str(anchor - q) + "}"
    if base in ("cx", "ccx", "x") and controls and not operation.dagger and operation.condition is None:
        cells[anchor] = r"\targ{}"
    elif base in ("swap", "cswap"):
        cells[targets[0]] = r"\swap{" + str(targets[1] - targets[0]) + "}"
        cells[targets[1]] = r"\targX{}"
    else:
        cells.update(_boxed(targets, _name(operation), ""))
    return cells


def _boxed(qubits: Sequence[int], label: str, options: str) -> dict[int, str]:
    """One box over contiguous qubits (``wires=k``), else a box on each."""
    ordered = sorted(qubits)
    if ordered == list(range(ordered[0], ordered[0] + len(ordered))) and len(ordered) > 1:
        wires = f"[wires={len(ordered)}" + ("," + options[1:-1] if options else "") + "]"
        return {ordered[0]: r"\gate" + wires + "{" + label + "}"}
    return {q: r"\gate" + options + "{" + label + "}" for q in ordered}


def circuit_latex(num_qubits: int, operations: Sequence[Operation],
                  barriers: Sequence[tuple[int, tuple[int, ...]]] = ()) -> str:
    """The quantikz environment of the circuit (see the module).

    Examples
    --------
    >>> print(circuit_latex(2, [Operation("h", (0,)), Operation("cx", (0, 1))]))
    \\begin{quantikz}
    \\lstick{$q_{0}$} & \\gate{\\mathrm{H}} & \\ctrl{1} & \\qw \\\\
    \\lstick{$q_{1}$} & \\qw & \\targ{} & \\qw
    \\end{quantikz}
    """
    quantum = [op for op in operations if op.qubits]
    placed = layout(num_qubits, quantum, barriers)
    grid = [[r"\qw"] * placed.columns for _ in range(num_qubits)]
    for column, qubits in placed.barrier_columns:
        if qubits:
            grid[min(qubits)][column] = r"\qw \slice{}"
    for operation, column in zip(quantum, placed.operation_columns):
        for q, cell in _cells(operation).items():
            grid[q][column] = cell
    rows = [" & ".join([f"\\lstick{{$q_{{{q}}}$}}"] + grid[q] + [r"\qw"]) for q in range(num_qubits)]
    return "\\begin{quantikz}\n" + " \\\\\n".join(rows) + "\n\\end{quantikz}"
