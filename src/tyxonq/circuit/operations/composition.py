"""Composition and inspection every circuit has: ``append`` / ``prepend`` another circuit on
chosen qubits, ``barrier`` markers, ``gate_count``, ``depth`` and ``num_parameters``."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Iterable, Sequence, TypeVar

from .gates import canonical_gate_name
from .operation import Operation, validate_qubits

__all__ = ["CompositionMethods"]

C = TypeVar("C", bound="CompositionMethods")


class CompositionMethods:
    _num_qubits: int
    _operations: list
    _channel_count: int
    _dynamic_count: int
    _num_clbits: int
    _barriers: list

    def _placed(self, other: Any, qubits: Sequence[int] | None, method: str) -> list[Operation]:
        """``other``'s operations with its qubit ``i`` on ``qubits[i]``."""
        if not isinstance(other, CompositionMethods):
            raise TypeError(f"{method}: other must be a circuit; got {type(other).__name__}")
        if getattr(other, "_inputs", None) is not None:
            raise ValueError(f"{method}: the other circuit starts from its own inputs=; only circuits "
                             "that start from |0...0> can be composed")
        if qubits is None:
            if other.num_qubits > self._num_qubits:
                raise ValueError(f"{method}: a {other.num_qubits}-qubit circuit does not fit on "
                                 f"{self._num_qubits} qubits; give qubits=[...] for its qubits")
            qubits = tuple(range(other.num_qubits))
        qubits = validate_qubits(tuple(qubits), self._num_qubits, method)
        if len(qubits) != other.num_qubits:
            raise ValueError(f"{method}: qubits={list(qubits)} must name one qubit for each of the "
                             f"other circuit's {other.num_qubits}")
        return [replace(op, qubits=tuple(qubits[q] for q in op.qubits)) for op in other.operations]

    def _placed_barriers(self, other: Any, qubits: Sequence[int] | None, offset: int) -> list:
        qubits = tuple(range(other.num_qubits)) if qubits is None else tuple(qubits)
        return [(position + offset, tuple(qubits[q] for q in on)) for position, on in other.barriers]

    def barrier(self: C, *qubits: int) -> C:
        """A marker between the operations before and after it (on ``qubits``, default all):
        drawn, exported to Qiskit and OpenQASM, read back; it changes no result.

        Examples
        --------
        >>> import tyxonq as tq
        >>> print(tq.Circuit(2).h(0).barrier().cx(0, 1))
        q0: ─H─░─●─
        q1: ───░─X─
        """
        chosen = validate_qubits(tuple(qubits) if qubits else tuple(range(self._num_qubits)),
                                 self._num_qubits, "barrier")
        self._barriers.append((len(self._operations), chosen))
        return self

    def append(self: C, other: Any, qubits: Sequence[int] | None = None) -> C:
        """Add ``other``'s operations after this circuit's, its qubit ``i`` on ``qubits[i]``
        (default: the same qubits); returns this circuit, for chaining.

        Examples
        --------
        >>> import tyxonq as tq
        >>> bell = tq.Circuit(2).h(0).cx(0, 1)
        >>> [(op.gate, op.qubits) for op in tq.Circuit(3).x(0).append(bell, qubits=[2, 1]).operations]
        [('x', (0,)), ('h', (2,)), ('cx', (2, 1))]
        """
        placed = self._placed(other, qubits, "append")
        barriers = self._placed_barriers(other, qubits, len(self._operations))
        self._append(placed)  # type: ignore[attr-defined] - SimulatorBase's one door
        self._barriers += barriers
        return self

    def prepend(self: C, other: Any, qubits: Sequence[int] | None = None) -> C:
        """Put ``other``'s operations before this circuit's (qubits as in :meth:`append`).

        Examples
        --------
        >>> import tyxonq as tq
        >>> [op.gate for op in tq.Circuit(2).cx(0, 1).prepend(tq.Circuit(1).h(0)).operations]
        ['h', 'cx']
        """
        placed = self._placed(other, qubits, "prepend")
        barriers = self._placed_barriers(other, qubits, 0)
        self._append(placed, at_start=True)  # type: ignore[attr-defined] - SimulatorBase's one door
        self._barriers = barriers + [(position + len(placed), on) for position, on in self._barriers]
        return self

    def gate_count(self, names: str | Iterable[str] | None = None) -> int:
        """How many operations (gates and channels), or how many of the named gates (aliases
        accepted: ``"cnot"``) and channels.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1).cnot(1, 0).rz(1, theta=0.1)
        >>> c.gate_count(), c.gate_count("cx"), c.gate_count(["h", "rz"])
        (4, 2, 2)
        """
        if names is None:
            return len(self._operations)
        wanted = {names} if isinstance(names, str) else set(names)
        gates = set()
        for name in wanted:
            try:
                gates.add(canonical_gate_name(name))
            except ValueError:
                gates.add(name)  # a channel's name (depolarizing, ...)
        counts = Counter(op.channel.name if op.channel is not None else op.gate for op in self._operations)
        return sum(counts[name] for name in gates)

    def depth(self) -> int:
        """Layers of operations when each starts as soon as its qubits are free (a global phase,
        and a detector or observable, which acts on no qubit, take no layer).

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(3).h(0).h(1).cx(0, 1).x(2).cx(1, 2).depth()
        3
        """
        free_at = [0] * self._num_qubits
        for op in self._operations:
            if op.gate == "gphase" or not op.qubits:
                continue
            layer = 1 + max(free_at[q] for q in op.qubits)
            for q in op.qubits:
                free_at[q] = layer
        return max(free_at, default=0)

    @property
    def num_parameters(self) -> int:
        """How many real gate angles the circuit has (a ``unitary``'s matrix is not counted).

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).rx(0, 0.1).u(1, 0.1, 0.2, 0.3).cx(0, 1).num_parameters
        4
        """
        return sum(len(op.params) for op in self._operations if op.has_angles)
