"""What the writers share about classical bits: conditions in one canonical form, the classical
registers a circuit's bits are declared in, and the circuit as runs of operations under one
condition (one ``if`` block each).

Registers. A circuit numbers its classical bits ``0..m-1`` and has no registers; Qiskit and
OpenQASM declare bits in registers, and compare a whole register with a value (``if (c == 5)``).
:func:`register_layout` cuts ``0..m-1`` into consecutive registers so that every register
condition asked for is exactly one register (its ``bits[0]`` the register's bit 0): ``c`` when one
register does, else ``c0, c1, ...`` in bit order. Registers are declared in bit order, so Qiskit's
clbit ``j`` (numbered across registers in declaration order) is bit ``j`` here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..operations.operation import Condition, Operation

__all__ = ["Register", "Block", "canonical", "negated", "conjunction", "register_layout", "register_of",
           "runs", "describe_condition"]


@dataclass(frozen=True)
class Register:
    """A classical register: bits ``start .. start + size - 1`` of the circuit, named ``name``."""

    name: str
    start: int
    size: int

    @property
    def bits(self) -> tuple[int, ...]:
        return tuple(range(self.start, self.start + self.size))


def canonical(condition: Condition) -> Condition:
    """``condition`` with a one-bit test spelled as ``equals``: ``b != v`` and ``parity(b) == v``
    are ``b == 1 - v`` and ``b == v``.

    Examples
    --------
    >>> canonical(Condition((3,), 1, "differs"))
    Condition(bits=(3,), value=0, kind='equals')
    """
    if len(condition.bits) != 1 or condition.kind == "equals":
        return condition
    value = 1 - condition.value if condition.kind == "differs" else condition.value
    return Condition(condition.bits, value, "equals")


def negated(condition: Condition) -> Condition:
    """The condition that holds exactly when ``condition`` does not (an ``else`` branch).

    Examples
    --------
    >>> negated(Condition((0, 1), 2))
    Condition(bits=(0, 1), value=2, kind='differs')
    >>> negated(Condition((0,), 1))
    Condition(bits=(0,), value=0, kind='equals')
    """
    if condition.kind == "parity":
        return Condition(condition.bits, 1 - condition.value, "parity")
    kind = "differs" if condition.kind == "equals" else "equals"
    return canonical(Condition(condition.bits, condition.value, kind))


def conjunction(first: Condition, second: Condition) -> Condition:
    """Both equality conditions at once: one equality on their bits (``first``'s, then the others).

    Examples
    --------
    >>> conjunction(Condition((0,), 1), Condition((2,), 0))
    Condition(bits=(0, 2), value=1, kind='equals')
    """
    first, second = canonical(first), canonical(second)
    if first.kind != "equals" or second.kind != "equals":
        raise ValueError("only bit tests and register equalities can be joined with &&; "
                         "negations or parities of several bits cannot")
    required = dict(zip(first.bits, first.required()))
    for bit, value in zip(second.bits, second.required()):
        if required.setdefault(bit, value) != value:
            raise ValueError(f"the condition requires bit {bit} to be both 0 and 1: it never holds")
    bits = tuple(required)
    return Condition(bits, sum(required[b] << i for i, b in enumerate(bits)), "equals")


def describe_condition(condition: Condition) -> str:
    """The condition in words, for messages.

    Examples
    --------
    >>> describe_condition(Condition((0, 2), 1, "parity"))
    'the parity of bits (0, 2) == 1'
    """
    if condition.kind == "parity":
        return f"the parity of bits {condition.bits} == {condition.value}"
    relation = "==" if condition.kind == "equals" else "!="
    return f"bits {condition.bits} {relation} {condition.value}"


def register_layout(num_clbits: int, wanted: Iterable[Sequence[int]]) -> tuple[list[Register], set]:
    """Registers covering bits ``0..num_clbits-1``, with each of the ``wanted`` bit tuples a
    register of its own where it can be (consecutive ascending bits, not straddling another), and
    the set of wanted tuples that are.

    Examples
    --------
    >>> registers, fitted = register_layout(5, [(1, 2), (0, 2)])
    >>> [(r.name, r.start, r.size) for r in registers], fitted
    ([('c0', 0, 1), ('c1', 1, 2), ('c2', 3, 2)], {(1, 2)})
    >>> register_layout(3, [])[0]
    [Register(name='c', start=0, size=3)]
    """
    accepted: list[tuple[int, int]] = []
    for bits in wanted:
        bits = tuple(bits)
        start, end = bits[0], bits[0] + len(bits)
        if bits != tuple(range(start, end)):
            continue
        if all(end <= s or e <= start or (start, end) == (s, e) for s, e in accepted):
            if (start, end) not in accepted:
                accepted.append((start, end))
    spans, cursor = [], 0
    for start, end in sorted(accepted):
        if cursor < start:
            spans.append((cursor, start))
        spans.append((start, end))
        cursor = end
    if cursor < num_clbits:
        spans.append((cursor, num_clbits))
    names = ["c"] if len(spans) == 1 else [f"c{i}" for i in range(len(spans))]
    registers = [Register(name, start, end - start) for name, (start, end) in zip(names, spans)]
    return registers, {tuple(range(s, e)) for s, e in accepted}


def register_of(registers: Sequence[Register], bit: int) -> tuple[Register, int]:
    """The register holding ``bit`` and the bit's index in it.

    Examples
    --------
    >>> register_of(register_layout(4, [(2, 3)])[0], 3)
    (Register(name='c1', start=2, size=2), 1)
    """
    for register in registers:
        if register.start <= bit < register.start + register.size:
            return register, bit - register.start
    raise ValueError(f"bit {bit} is in no register")  # pragma: no cover - layouts cover every bit


@dataclass
class Block:
    """Consecutive gates under one ``condition`` (the first at ``position``), then those under
    its negation (the ``else`` branch, the first at ``else_position``)."""

    position: int
    condition: Condition
    operations: list[Operation]
    else_position: int = -1
    else_operations: list[Operation] = field(default_factory=list)

    def take(self, position: int, op: Operation) -> bool:
        """Add ``op`` if it continues the block (in its branch, or opening the ``else``)."""
        if not self.else_operations and op.condition == self.condition:
            self.operations.append(op)
            return True
        if canonical(self.condition).kind == "differs" or op.condition is None:
            return False  # an else of != would put its gates first: keep the order
        if canonical(op.condition) == negated(canonical(self.condition)):
            if not self.else_operations:
                self.else_position = position
            self.else_operations.append(op)
            return True
        return False


def runs(circuit: Any) -> list[tuple]:
    """The circuit as ``("barrier", qubits)``, ``("op", index, operation)`` and ``("if", block)``
    items in order: consecutive gates under one condition, then consecutive gates under its
    negation, form one :class:`Block` (``if``, ``else``), split where a barrier stands.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> bit = c.measure(0)
    >>> with c.cond(bit):
    ...     _ = c.x(1).z(1)
    >>> _ = c.cond(bit, value=0).h(1)
    >>> items = runs(c.barrier())
    >>> [item[0] for item in items], len(items[2][1].operations), len(items[2][1].else_operations)
    (['op', 'op', 'if', 'barrier'], 2, 1)
    """
    barriers: dict[int, list[tuple[int, ...]]] = {}
    for position, qubits in circuit.barriers:
        barriers.setdefault(position, []).append(qubits)
    items: list[tuple] = []
    operations: Sequence[Operation] = circuit.operations
    for position, op in enumerate(list(operations) + [None]):
        items += [("barrier", qubits) for qubits in barriers.get(position, ())]
        if op is None:
            break
        last = items[-1] if items else None
        if op.condition is None:
            items.append(("op", position, op))
        elif last is None or last[0] != "if" or not last[1].take(position, op):
            items.append(("if", Block(position, op.condition, [op])))
    return items
