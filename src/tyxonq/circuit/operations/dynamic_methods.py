"""The dynamic-circuit methods every circuit has: mid-circuit ``measure`` into classical bits,
``reset``, ``post_select`` and gates conditioned on classical bits (``cond``).

Each appends one operation of a dynamic kind (:data:`~tyxonq.circuit.operations.operation.DYNAMIC_KINDS`)
or a gate carrying a :class:`~tyxonq.circuit.operations.operation.Condition`, in the same
operation list, validated as it is added. How a simulator computes with them is its own affair
(deferred measurement for exact results, branches for samples).
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager
from typing import Any, Iterator, Sequence, TypeVar

from ...numerics.arguments import checked_flag
from .gate_methods import GateMethods
from .operation import Condition, Operation, validate_qubits

__all__ = ["DynamicMethods", "Conditioned"]

C = TypeVar("C", bound="DynamicMethods")


class DynamicMethods:
    """Mixin: the circuit keeps ``_operations``, ``_num_qubits``, ``_num_clbits`` and
    ``_dynamic_count``; ``_condition`` is the condition attached to gates being added."""

    _num_qubits: int
    _operations: list
    _num_clbits: int = 0
    _dynamic_count: int = 0
    _condition: Condition | None = None

    @property
    def num_clbits(self) -> int:
        """How many classical bits the circuit's measurements have written (bit ``i`` is the
        ``i``-th one allocated by :meth:`measure`, unless ``into=`` named it)."""
        return self._num_clbits

    def add_clbits(self: C, count: int) -> C:
        """Make sure the circuit has at least ``count`` classical bits (bits never written read
        0), as a program that declares its classical register does.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(1).add_clbits(3).num_clbits
        3
        """
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ValueError(f"add_clbits: count={count!r} must be a non-negative int")
        self._num_clbits = max(self._num_clbits, int(count))
        return self

    def is_dynamic(self) -> bool:
        """Whether the circuit holds mid-circuit measurements, resets, post-selections or
        conditioned gates."""
        return self._dynamic_count > 0

    def _add_dynamic(self, op: Operation) -> None:
        if self._condition is not None:
            raise ValueError(f"{op.gate} cannot be conditioned on classical bits; condition gates only")
        self._append((op,))  # type: ignore[attr-defined] - SimulatorBase's one door

    def measure(self, *qubits: int, into: int | Sequence[int] | None = None) -> Any:
        """Measure ``qubits`` in the computational basis now, each into a classical bit; the
        circuit goes on with the collapsed state.

        Returns the bit (an int) for one qubit, a tuple of bits for several: pass them to
        :meth:`cond`. Bits are allocated in order (``0, 1, ...``) unless ``into`` names existing
        or new ones (a bit measured again holds its last value). ``sample`` reports every bit;
        exact results (expectations, probabilities) average over the outcomes.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0)
        >>> bit = c.measure(0)
        >>> c.cond(bit).x(1).num_clbits
        1
        >>> round(float(c.expectation_ps(z=[0, 1])), 12)  # the two qubits agree every shot
        1.0
        """
        if not qubits:
            raise ValueError("measure needs at least one qubit")
        checked = validate_qubits(qubits, self._num_qubits, "measure")
        if into is None:
            bits = tuple(range(self._num_clbits, self._num_clbits + len(checked)))
        else:
            bits = (into,) if isinstance(into, numbers.Integral) else tuple(into)
            if len(bits) != len(checked):
                raise ValueError(f"measure: into={into!r} must name one bit per qubit ({len(checked)})")
            for bit in bits:
                if isinstance(bit, bool) or not isinstance(bit, numbers.Integral) or bit < 0:
                    raise ValueError(f"measure: into={into!r} must hold non-negative int bit indices")
            bits = tuple(int(b) for b in bits)
        for qubit, bit in zip(checked, bits):
            self._add_dynamic(Operation("measure", (qubit,), clbits=(bit,)))
        return bits[0] if len(bits) == 1 else bits

    def reset(self: C, qubit: int) -> C:
        """Return ``qubit`` to ``|0>`` mid-circuit, whatever its state (on a pure-state
        ``Circuit`` too: a reset is a measurement followed by a conditional flip).

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.Circuit(1).h(0).reset(0).expectation_ps(z=[0])), 12)
        1.0
        """
        (qubit,) = validate_qubits((qubit,), self._num_qubits, "reset")
        self._add_dynamic(Operation("reset", (qubit,)))
        return self

    def post_select(self: C, qubit: int, outcome: int) -> C:
        """Keep only the runs in which measuring ``qubit`` now gives ``outcome``: every result
        is then conditioned on it (renormalised); :meth:`acceptance` is its probability.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1).post_select(0, 1)
        >>> round(float(c.expectation_ps(z=[1])), 12), round(float(c.acceptance()), 12)
        (-1.0, 0.5)
        """
        (qubit,) = validate_qubits((qubit,), self._num_qubits, "post_select")
        if isinstance(outcome, bool) or outcome not in (0, 1):
            raise ValueError(f"post_select: outcome={outcome!r} must be 0 or 1")
        self._add_dynamic(Operation("post_select", (qubit,), (int(outcome),)))
        return self

    def cond(self: C, bits: int | Sequence[int], value: int | None = None, parity: bool = False,
             negate: bool = False) -> Conditioned:
        """Gates applied only when classical ``bits`` satisfy a condition (Qiskit's ``if_test``):
        ``c.cond(b).x(1)`` appends one conditioned gate and returns the circuit; ``with
        c.cond(b): ...`` conditions every gate added in the block.

        Parameters
        ----------
        bits : int or sequence of int
            Classical bits written by :meth:`measure` (a bit never written reads 0).
        value : int, optional
            The register value required (``bits[0]`` its least significant bit, as OpenQASM's
            ``if (c == k)``); default 1 for one bit, required for several. With ``parity=True``
            the XOR of the bits must equal ``value`` (default 1).
        parity : bool
            Condition on the parity of the bits instead of their value.
        negate : bool
            Apply when the register does *not* hold ``value`` (an ``else`` branch; not with
            ``parity``, whose negation is the other value).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(3).x(0).x(1)
        >>> bits = c.measure(0, 1)
        >>> _ = c.cond(bits, value=3).x(2)
        >>> round(float(c.expectation_ps(z=[2])), 12)
        -1.0
        >>> with c.cond(bits, parity=True):  # bits 1, 1: even parity, nothing applies
        ...     _ = c.x(2)
        >>> round(float(c.expectation_ps(z=[2])), 12)
        -1.0
        """
        parity, negate = checked_flag(parity, "cond: parity"), checked_flag(negate, "cond: negate")
        if isinstance(bits, numbers.Integral) and not isinstance(bits, bool):
            bits = (bits,)
        elif isinstance(bits, Sequence) and not isinstance(bits, str):
            bits = tuple(bits)
        else:
            raise TypeError(f"cond: bits={bits!r} must be a classical bit (an int, as c.measure(q) returns) "
                            "or a sequence of them")
        if not bits:
            raise ValueError("cond: bits must name at least one classical bit")
        for bit in bits:
            known = isinstance(bit, numbers.Integral) and not isinstance(bit, bool)
            if not known or not 0 <= bit < self._num_clbits:
                raise ValueError(f"cond: bit {bit!r} is not a classical bit of this circuit; it has "
                                 f"{self._num_clbits} (c.measure(q) returns the bit it writes)")
        if len(set(bits)) != len(bits):
            raise ValueError(f"cond: bits {bits} repeat a bit")
        if value is None:
            if len(bits) > 1 and not parity:
                raise ValueError(f"cond: give value= for a register of {len(bits)} bits (bits[0] is its "
                                 "least significant bit), or parity=True")
            value = 1
        if negate and parity:
            raise ValueError("cond: negate=True applies to register values; for parity, give the other value")
        limit = 2 if parity else 2 ** len(bits)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < limit:
            raise ValueError(f"cond: value={value!r} must be an int in [0, {limit})")
        kind = "parity" if parity else ("differs" if negate else "equals")
        return Conditioned(self, Condition(tuple(int(b) for b in bits), int(value), kind))


class Conditioned:
    """The circuit's gate methods, each appending a gate under one condition (from
    :meth:`DynamicMethods.cond`); also a context manager conditioning every gate added inside."""

    def __init__(self, circuit: Any, condition: Condition) -> None:
        self._circuit = circuit
        self._condition_held = condition

    @contextmanager
    def _applied(self) -> Iterator[None]:
        circuit = self._circuit
        if circuit._condition is not None:  # noqa: SLF001 - the circuit's own state, through its proxy
            raise ValueError("cond: conditions do not nest; combine the bits into one condition")
        circuit._condition = self._condition_held  # noqa: SLF001
        try:
            yield
        finally:
            circuit._condition = None  # noqa: SLF001

    def __enter__(self) -> Any:
        self._context = self._applied()
        self._context.__enter__()
        return self._circuit

    def __exit__(self, *exc: Any) -> None:
        self._context.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or not callable(getattr(GateMethods, name, None)):
            raise AttributeError(f"cond(...).{name}: only gate methods (c.cond(b).x(q), ...) can be "
                                 "conditioned")
        method = getattr(self._circuit, name)

        def conditioned(*args: Any, **kwargs: Any) -> Any:
            with self._applied():
                return method(*args, **kwargs)

        return conditioned
