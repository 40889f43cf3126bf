"""Noise models: which channel follows which gate, and how each qubit is misread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..operators.channels import Channel
from ..operators.readout import confusion_matrices

__all__ = ["NoiseModel"]

_GATE_CLASSES = ("1q", "2q", "all")


@dataclass(frozen=True)
class _Rule:
    channel: Channel
    gates: tuple[str, ...] | str
    qubits: frozenset[int] | None


class NoiseModel:
    """Channels attached to gates, and readout errors; :meth:`apply` (or
    ``circuit.with_noise(model)``) makes the noisy :class:`~tyxonq.DMCircuit`. This mirrors Qiskit
    Aer's ``NoiseModel`` and TyxonQ's ``with_noise``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> model = (tq.NoiseModel()
    ...          .add(tq.channels.depolarizing(0.01), gates="1q")
    ...          .add(tq.channels.depolarizing(0.02, num_qubits=2), gates=["cx"])
    ...          .add_readout_error([[0.98, 0.05], [0.02, 0.95]]))
    >>> noisy = tq.Circuit(2).h(0).cx(0, 1).with_noise(model)
    >>> [op.channel.name if op.channel else op.gate for op in noisy.operations]
    ['h', 'depolarizing', 'cx', 'depolarizing']
    """

    def __init__(self) -> None:
        self._rules: list[_Rule] = []
        self._readout: list[tuple[Any, frozenset[int] | None]] = []

    def add(self, channel: Channel, gates: str | Sequence[str] = "all",
            qubits: Sequence[int] | None = None) -> NoiseModel:
        """Attach ``channel`` after every matching gate.

        Parameters
        ----------
        channel : Channel
            A channel on one qubit (applied to each qubit of a matching gate) or on as many qubits
            as the gates it follows.
        gates : "1q", "2q", "all", or list of gate names
            Which gates it follows.
        qubits : sequence of int, optional
            Only gates whose qubits all lie among these (every qubit by default).
        """
        if not isinstance(channel, Channel):
            raise TypeError(f"channel={channel!r} must be a tq.channels.Channel")
        if isinstance(gates, str):
            if gates not in _GATE_CLASSES:
                raise ValueError(f"gates={gates!r} must be one of {_GATE_CLASSES} or a list of gate names")
            kind: tuple[str, ...] | str = gates
        else:
            from ..circuit.operations.gates import canonical_gate_name

            kind = tuple(canonical_gate_name(str(name)) for name in gates)
        self._rules.append(_Rule(channel, kind, None if qubits is None else frozenset(qubits)))
        return self

    def add_readout_error(self, confusion: Any, qubits: Sequence[int] | None = None) -> NoiseModel:
        """Misread qubits (all by default): ``confusion[read, true] = P(read | true)``, a ``2 x 2``
        column-stochastic matrix (validated)."""
        confusion_matrices(confusion, 1, "confusion")
        self._readout.append((confusion, None if qubits is None else frozenset(qubits)))
        return self

    def _matches(self, rule: _Rule, gate: str, qubits: tuple[int, ...]) -> bool:
        if isinstance(rule.gates, str):
            wanted = {"1q": len(qubits) == 1, "2q": len(qubits) == 2, "all": True}[rule.gates]
        else:
            wanted = gate in rule.gates
        return wanted and (rule.qubits is None or rule.qubits.issuperset(qubits))

    def apply(self, circuit: Any) -> Any:
        """The noisy :class:`~tyxonq.DMCircuit` of ``circuit`` (its channels kept; a
        :class:`~tyxonq.StabilizerCircuit` stays one, its model's channels Pauli). Channels follow
        gates only: not measurements, resets or post-selections (their errors are readout
        errors); a gate under a classical condition is followed by its channels whether or not it
        applied (a channel cannot be conditioned)."""
        from ..circuit.density import DMCircuit
        from ..circuit.operations.operation import DYNAMIC_KINDS, Operation
        from ..circuit.stabilizer import StabilizerCircuit

        operations = []
        for op in circuit.operations:
            operations.append(op)
            if op.channel is not None or op.gate in DYNAMIC_KINDS:
                continue
            for rule in self._rules:
                if not self._matches(rule, op.gate, op.qubits):
                    continue
                size = rule.channel.num_qubits
                if size == len(op.qubits):
                    operations.append(Operation("channel", op.qubits, channel=rule.channel))
                elif size == 1:
                    operations += [Operation("channel", (q,), channel=rule.channel) for q in op.qubits]
                else:
                    raise ValueError(f"a {size}-qubit {rule.channel.name} channel cannot follow the "
                                     f"{len(op.qubits)}-qubit gate {op.gate} on {op.qubits}")
        noisy = circuit.to_density_matrix() if hasattr(circuit, "to_density_matrix") else circuit
        if not isinstance(noisy, (DMCircuit, StabilizerCircuit)):
            raise TypeError("with_noise needs a Circuit, DMCircuit or StabilizerCircuit")
        noisy = noisy.with_operations(operations)  # a stabilizer circuit checks for Pauli channels
        n = circuit.num_qubits
        readout: list = list(circuit.readout) if circuit.readout is not None else [None] * n
        for confusion, qubits in self._readout:
            for q, matrix in enumerate(confusion_matrices(confusion, n, "confusion")):
                if qubits is None or q in qubits:
                    readout[q] = matrix
        return noisy.with_readout(readout)
