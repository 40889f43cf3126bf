"""Deferred measurement: a dynamic circuit as a plain one on more wires.

A mid-circuit measurement of qubit ``q`` into bit ``b`` becomes a CNOT from ``q``'s wire onto a
fresh wire in ``|0>``, which then holds ``b``; a gate conditioned on bits becomes the same gate
controlled by their wires; a reset moves the qubit onto a fresh wire in ``|0>`` (the old wire is
traced out, as a reset discards its qubit); a post-selection is a measurement onto a fresh wire
whose outcome every result then conditions on. This is exact (Nielsen & Chuang, section 4.4):
the copied bit is never touched again, so its wire is decohered exactly as a measured bit is,
and the circuit's results are those of the lowered one, with

* an observable on qubit ``q`` measured on ``q``'s final wire, a classical bit as ``Z`` on its
  wire;
* post-selection: ``<O>_post = <O ⊗ Π> / <Π>`` with ``Π`` the projector on the post-selected
  wires' outcomes, and ``<Π>`` the acceptance probability.

The lowered operations are gates, channels and controlled gates
(:func:`~tyxonq.circuit.operations.gates.controlled_gate`) only, so every simulator, light cone,
plan cache and gradient method works on them unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ...numerics import get_backend
from .gates import controlled_gate, controlled_matrix, gate_matrix
from .operation import Condition, Operation

__all__ = ["Deferred", "deferred"]


@dataclass(frozen=True)
class Deferred:
    """A dynamic circuit lowered by deferred measurement.

    Attributes
    ----------
    num_wires : int
        The lowered circuit's qubits: the original ones (wires ``0..n-1``), then one per
        measurement, reset, post-selection and parity condition, in order of appearance.
    operations : tuple of Operation
        Gates, channels and controlled gates on the wires.
    qubit_wires : tuple of int
        The wire each qubit ends on.
    bit_wires : tuple of int or None
        The wire holding each classical bit's last value (``None``: never written, it reads 0).
    selected : tuple of (int, int)
        ``(wire, outcome)`` of each post-selection.
    mixed : bool
        Whether the state is mixed by a measurement or reset (its qubits are entangled with
        wires that are traced out).
    """

    num_wires: int
    operations: tuple[Operation, ...]
    qubit_wires: tuple[int, ...]
    bit_wires: tuple[int | None, ...]
    selected: tuple[tuple[int, int], ...]
    mixed: bool


def deferred(num_qubits: int, num_clbits: int, operations: Sequence[Operation]) -> Deferred:
    """Lower ``operations`` (on ``num_qubits`` qubits and ``num_clbits`` bits) to plain ones.

    Examples
    --------
    >>> ops = [Operation("h", (0,)), Operation("measure", (0,), clbits=(0,)),
    ...        Operation("x", (1,), condition=Condition((0,), 1))]
    >>> lowered = deferred(2, 1, ops)
    >>> [(op.gate, op.qubits) for op in lowered.operations]
    [('h', (0,)), ('cx', (0, 2)), ('c1:x', (2, 1))]
    >>> lowered.bit_wires, lowered.qubit_wires
    ((2,), (0, 1))
    """
    wires = list(range(num_qubits))
    bit_wires: list[int | None] = [None] * num_clbits
    lowered: list[Operation] = []
    selected: list[tuple[int, int]] = []
    count = num_qubits
    mixed = False

    def fresh() -> int:
        nonlocal count
        count += 1
        return count - 1

    for op in operations:
        if op.gate == "measure":
            bit_wires[op.clbits[0]] = wire = fresh()
            lowered.append(Operation("cx", (wires[op.qubits[0]], wire)))
            mixed = True
        elif op.gate == "reset":
            wires[op.qubits[0]] = fresh()
            mixed = True
        elif op.gate == "post_select":
            wire = fresh()
            lowered.append(Operation("cx", (wires[op.qubits[0]], wire)))
            selected.append((wire, int(op.params[0])))
        else:
            mapped = tuple(wires[q] for q in op.qubits)
            plain = replace(op, qubits=mapped, condition=None)
            if op.condition is None:
                lowered.append(plain)
            else:
                lowered.extend(_conditioned(plain, op.condition, bit_wires, fresh))
    return Deferred(count, tuple(lowered), tuple(wires), tuple(bit_wires), tuple(selected), mixed)


def _conditioned(op: Operation, condition: Condition, bit_wires: list[int | None],
                 fresh: object) -> list[Operation]:
    """``op`` controlled by the wires of ``condition``'s bits: open controls conjugated by X; a
    parity, or an inequality, computed onto a fresh wire first; bits never written (0) drop out
    or decide it."""
    if condition.kind == "parity":
        written = [bit_wires[b] for b in condition.bits if bit_wires[b] is not None]
        if not written:
            return [op] if condition.value == 0 else []
        parity = fresh()  # type: ignore[operator]
        controls = [Operation("cx", (wire, parity)) for wire in written]
        return controls + _controlled(op, [(parity, condition.value)])
    pairs = []
    differs = condition.kind == "differs"
    for bit, value in zip(condition.bits, condition.required()):
        wire = bit_wires[bit]
        if wire is None:
            if value:  # a bit that reads 0 never equals 1: never equal
                return [op] if differs else []
            continue
        pairs.append((wire, value))
    if not differs:
        return _controlled(op, pairs)
    if not pairs:
        return []  # always equal
    unequal = fresh()  # type: ignore[operator]
    flag = [Operation("x", (unequal,))] + _controlled(Operation("x", (unequal,)), pairs)
    return flag + _controlled(op, [(unequal, 1)])


def _controlled(op: Operation, controls: list[tuple[int, int]]) -> list[Operation]:
    """``op`` applied when every wire holds its value."""
    if not controls:
        return [op]
    flips = [Operation("x", (wire,)) for wire, value in controls if not value]
    wires = tuple(wire for wire, _ in controls) + op.qubits
    if op.gate == "unitary":  # its matrix is a parameter: the controlled matrix, built now
        K = get_backend()
        matrix = controlled_matrix(K, gate_matrix(K, "unitary", op.params), len(controls))
        target = replace(op, qubits=wires, params=(matrix,))
    else:
        target = replace(op, gate=controlled_gate(op.gate, len(controls)), qubits=wires)
    return flips + [target] + flips
