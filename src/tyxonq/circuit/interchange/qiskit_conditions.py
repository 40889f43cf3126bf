"""Classical conditions between Qiskit and tyxonq.

**Reading.** An ``if_test`` / ``c_if`` condition is either Qiskit's old pair ``(Clbit, value)`` /
``(ClassicalRegister, value)`` or a ``qiskit.circuit.classical.expr`` expression. Expressions
that are one of tyxonq's :class:`~tyxonq.circuit.operations.operation.Condition` kinds are read:
a bit (``c[0]``, ``!c[0]``, ``c[0] == true``), a register compared with a value (``c == 5``,
``c != 5``), the parity of bits (``c[0] ^ c[1]``, ``(c[0] ^ c[1]) == false``), bit tests and
register equalities joined by ``&&`` (one equality on all their bits), and the negation ``!`` of
any of these. Anything else (``<``, ``||``, arithmetic, classical variables) raises a
``ValueError`` naming the operator.

**Writing** is the inverse: one bit as ``(Clbit, value)``; an equality on exactly a register as
``(ClassicalRegister, value)``; anything else as an expression of the forms above.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..operations.operation import Condition
from .classical import Register, canonical, conjunction, negated

__all__ = ["read_condition", "qiskit_condition", "registers_by_bits"]

#: Qiskit expression operators, spelled as OpenQASM 3 does, for messages
_SYMBOLS = {"BIT_AND": "&", "BIT_OR": "|", "BIT_XOR": "^", "LOGIC_AND": "&&", "LOGIC_OR": "||",
            "EQUAL": "==", "NOT_EQUAL": "!=", "LESS": "<", "LESS_EQUAL": "<=", "GREATER": ">",
            "GREATER_EQUAL": ">=", "SHIFT_LEFT": "<<", "SHIFT_RIGHT": ">>", "ADD": "+", "SUB": "-",
            "MUL": "*", "DIV": "/", "BIT_NOT": "~", "LOGIC_NOT": "!", "NEGATE": "-"}
_SUPPORTED = ("tyxonq conditions test a bit (c[0], !c[0]), compare bits or a register with a value "
              "(==, !=), take the parity of bits (^), or join bit tests with &&")

BitIndex = Callable[[Any], int]  # a Qiskit Clbit -> tyxonq's bit index


def read_condition(condition: Any, bit_index: BitIndex) -> Condition:
    """A Qiskit condition (pair or expression) as a canonical :class:`Condition`, or a
    ``ValueError`` naming what is not supported; ``bit_index`` numbers Qiskit's ``Clbit`` objects.

    Examples
    --------
    >>> from qiskit import ClassicalRegister
    >>> from qiskit.circuit.classical import expr
    >>> c = ClassicalRegister(2, "c")
    >>> index = {bit: i for i, bit in enumerate(c)}.__getitem__
    >>> read_condition((c, 2), index), read_condition(expr.logic_not(c[1]), index)
    (Condition(bits=(0, 1), value=2, kind='equals'), Condition(bits=(1,), value=0, kind='equals'))
    >>> read_condition(expr.not_equal(c, 1), index)
    Condition(bits=(0, 1), value=1, kind='differs')
    """
    if isinstance(condition, tuple):
        target, value = condition
        bits = _bits_of(target, bit_index)
        return canonical(_compared(bits, int(value), "equals"))
    return canonical(_boolean(condition, bit_index))


def _bits_of(target: Any, bit_index: BitIndex) -> tuple[int, ...]:
    from qiskit.circuit import ClassicalRegister, Clbit

    if isinstance(target, Clbit):
        return (bit_index(target),)
    if isinstance(target, ClassicalRegister):
        if len(target) == 0:
            raise ValueError(f"the condition compares the empty register {target.name!r}: name bits to test")
        return tuple(bit_index(bit) for bit in target)
    raise ValueError(f"a condition on {target!r} (a classical variable) is not supported: {_SUPPORTED}")


def _compared(bits: tuple[int, ...], value: int, kind: str) -> Condition:
    if not 0 <= value < 2 ** len(bits):
        raise ValueError(f"the condition compares {len(bits)} bit(s) with {value}, which they cannot "
                         f"hold: compare with a value in [0, {2 ** len(bits)})")
    return Condition(bits, value, kind)


def _unsupported(node: Any) -> ValueError:
    op = getattr(node, "op", None)
    what = f"the {_SYMBOLS.get(op.name, op.name)} operator ({op.name})" if op is not None else \
        f"a {type(node).__name__} expression"
    return ValueError(f"a condition using {what} is not supported: {_SUPPORTED}")


def _is_bool(node: Any) -> bool:
    from qiskit.circuit.classical import types

    return isinstance(node.type, types.Bool)


def _boolean(node: Any, bit_index: BitIndex) -> Condition:
    """A boolean expression as a condition."""
    from qiskit.circuit.classical import expr

    if isinstance(node, expr.Cast) and node.implicit:
        return _boolean(node.operand, bit_index)
    if isinstance(node, expr.Var) and _is_bool(node):
        return Condition(_bits_of(node.var, bit_index), 1)
    if isinstance(node, expr.Unary) and node.op.name in ("LOGIC_NOT", "BIT_NOT"):
        return negated(canonical(_boolean(node.operand, bit_index)))
    if not isinstance(node, expr.Binary):
        raise _unsupported(node)
    name = node.op.name
    if name in ("LOGIC_AND", "BIT_AND") and _is_bool(node):
        return conjunction(_boolean(node.left, bit_index), _boolean(node.right, bit_index))
    if name == "BIT_XOR" and _is_bool(node):
        return Condition(_parity_bits(node, bit_index), 1, "parity")
    if name in ("EQUAL", "NOT_EQUAL"):
        return _comparison(node, bit_index)
    raise _unsupported(node)


def _comparison(node: Any, bit_index: BitIndex) -> Condition:
    """``term == value`` or ``term != value`` (either side), the term bits, a register or a parity."""
    from qiskit.circuit.classical import expr

    left, right = (_uncast(node.left), _uncast(node.right))
    if isinstance(left, expr.Value):
        left, right = right, left
    if not isinstance(right, expr.Value):
        raise ValueError(f"a condition comparing two classical expressions ({_SYMBOLS[node.op.name]}) "
                         f"is not supported: {_SUPPORTED} (compare with a constant)")
    value = int(right.value)
    if isinstance(left, expr.Binary) and left.op.name == "BIT_XOR" and _is_bool(left):
        condition = Condition(_parity_bits(left, bit_index), value, "parity")
    elif isinstance(left, expr.Var):
        condition = _compared(_bits_of(left.var, bit_index), value, "equals")
    else:
        raise _unsupported(left)
    return condition if node.op.name == "EQUAL" else negated(canonical(condition))


def _uncast(node: Any) -> Any:
    from qiskit.circuit.classical import expr

    return node.operand if isinstance(node, expr.Cast) and node.implicit else node


def _parity_bits(node: Any, bit_index: BitIndex) -> tuple[int, ...]:
    """The bits of an XOR of bits."""
    from qiskit.circuit.classical import expr

    node = _uncast(node)
    if isinstance(node, expr.Var) and _is_bool(node):
        return _bits_of(node.var, bit_index)
    if isinstance(node, expr.Binary) and node.op.name == "BIT_XOR":
        bits = _parity_bits(node.left, bit_index) + _parity_bits(node.right, bit_index)
        if len(set(bits)) != len(bits):
            raise ValueError(f"the parity condition repeats a bit ({bits}): name each bit once")
        return bits
    raise _unsupported(node)


def qiskit_condition(condition: Condition, clbits: Sequence[Any],
                     registers: dict[tuple[int, ...], Any]) -> Any:
    """``condition`` for ``QuantumCircuit.if_test``: ``clbits`` are the circuit's ``Clbit``
    objects by index, ``registers`` its ``ClassicalRegister`` objects by the bits they hold.

    Examples
    --------
    >>> from qiskit import ClassicalRegister
    >>> c = ClassicalRegister(3, "c")
    >>> qiskit_condition(Condition((0, 1, 2), 5), list(c), {(0, 1, 2): c})
    (ClassicalRegister(3, 'c'), 5)
    >>> qiskit_condition(Condition((2,), 0), list(c), {})[1]
    0
    >>> type(qiskit_condition(Condition((0, 2), 1, "parity"), list(c), {})).__name__  # an expression
    'Binary'
    """
    from qiskit.circuit.classical import expr

    condition = canonical(condition)
    bits, value = condition.bits, condition.value
    if condition.kind == "parity":
        parity = expr.lift(clbits[bits[0]])
        for bit in bits[1:]:
            parity = expr.bit_xor(parity, clbits[bit])
        return expr.equal(parity, bool(value))
    register = registers.get(bits)
    if len(bits) == 1 and condition.kind == "equals":
        return (clbits[bits[0]], value)
    if register is not None:
        return (register, value) if condition.kind == "equals" else expr.not_equal(register, value)
    tests = [expr.lift(clbits[b]) if required else expr.logic_not(clbits[b])
             for b, required in zip(bits, condition.required())]
    joined = tests[0]
    for test in tests[1:]:
        joined = expr.logic_and(joined, test)
    return joined if condition.kind == "equals" else expr.logic_not(joined)


def registers_by_bits(layout: Sequence[Register], objects: Sequence[Any]) -> dict[tuple[int, ...], Any]:
    """``{bits: ClassicalRegister}`` for a layout and the registers made from it.

    Examples
    --------
    >>> from qiskit import ClassicalRegister
    >>> registers_by_bits([Register("c", 0, 2)], [ClassicalRegister(2, "c")])
    {(0, 1): ClassicalRegister(2, 'c')}
    """
    return {register.bits: made for register, made in zip(layout, objects)}
