"""Noise models: which channel follows which gate, and how each qubit is misread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..operators.channels import Channel
from ..operators.readout import confusion_matrices

__all__ = ["NoiseModel"]

_GATE_CLASSES = ("1q", "2q", "all")
#: operations other than gates that named rules may follow: a measurement's channels come just
#: before it (it reads the state they leave), a reset's just after it
_NON_GATES = ("measure", "reset")


@dataclass(frozen=True)
class _Rule:
    channel: Channel
    gates: tuple[str, ...] | str
    qubits: frozenset[int] | None
    #: a local rule (:meth:`NoiseModel.add_local`): exactly these qubits, in this order
    exact: tuple[int, ...] | None = None


def _gate_names(gates: Sequence[str]) -> tuple[str, ...]:
    """Canonical gate names, ``"measure"`` and ``"reset"`` kept as they are."""
    from ..circuit.operations.gates import canonical_gate_name

    if isinstance(gates, str):
        gates = [gates]
    return tuple(str(name).lower() if str(name).lower() in _NON_GATES else canonical_gate_name(str(name))
                 for name in gates)


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

    A local rule replaces the others for one gate on one ordered qubit tuple, as Qiskit Aer's
    ``add_quantum_error`` does (:meth:`from_qiskit` converts an Aer model):

    >>> model = (tq.NoiseModel()
    ...          .add(tq.channels.depolarizing(0.02, num_qubits=2), gates=["cx"])
    ...          .add_local(tq.channels.bit_flip(0.1), gates=["x"], qubits=[1]))
    >>> noisy = tq.Circuit(2).cx(1, 0).x(0).x(1).with_noise(model)
    >>> [(op.channel.name if op.channel else op.gate, op.qubits) for op in noisy.operations]
    [('cx', (1, 0)), ('depolarizing', (1, 0)), ('x', (0,)), ('x', (1,)), ('bit_flip', (1,))]
    """

    def __init__(self) -> None:
        self._rules: list[_Rule] = []
        self._readout: list[tuple[Any, frozenset[int] | None]] = []

    @classmethod
    def from_qiskit(cls, noise_model: Any) -> NoiseModel:
        """The model of a Qiskit Aer ``NoiseModel``, exactly: each ``QuantumError`` as one channel
        (its Kraus operators, in tyxonq's qubit order), all-qubit errors as :meth:`add` rules,
        per-qubit-tuple errors as :meth:`add_local` rules, ``measure`` errors before each measure
        operation, readout errors as confusion matrices (:mod:`tyxonq.noise.qiskit_noise` lists
        what is refused). Needs ``qiskit-aer``.

        Keep a Qiskit circuit's final measurements, ``Circuit.from_qiskit(qc,
        measurements="keep")``, when the model has ``measure`` errors: they come before the
        measure operations.

        Examples
        --------
        >>> import tyxonq as tq
        >>> from qiskit_aer.noise import NoiseModel, amplitude_damping_error
        >>> aer = NoiseModel()
        >>> aer.add_quantum_error(amplitude_damping_error(0.1), ["x"], [1])
        >>> noisy = tq.Circuit(2).x(0).x(1).with_noise(tq.NoiseModel.from_qiskit(aer))
        >>> [(op.gate, op.qubits) for op in noisy.operations]
        [('x', (0,)), ('x', (1,)), ('channel', (1,))]
        """
        from .qiskit_noise import noise_model_from_qiskit

        return noise_model_from_qiskit(noise_model, cls)

    @classmethod
    def from_backend(cls, backend: Any, **options: Any) -> NoiseModel:
        """The model of a Qiskit ``BackendV2``'s calibration (T1, T2, gate errors and durations,
        readout errors): exactly ``qiskit_aer.noise.NoiseModel.from_backend(backend, **options)``
        converted by :meth:`from_qiskit`. ``options``: Aer's ``gate_error``, ``readout_error``,
        ``thermal_relaxation``, ``temperature``, ``gate_lengths``, ``gate_length_units``. Needs
        ``qiskit-aer``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> from qiskit import transpile
        >>> from qiskit.providers.fake_provider import GenericBackendV2
        >>> backend = GenericBackendV2(2, seed=3)
        >>> model = tq.NoiseModel.from_backend(backend, thermal_relaxation=False)
        >>> qc = transpile(tq.Circuit(2).h(0).cx(0, 1).to_qiskit(), backend, seed_transpiler=1)
        >>> noisy = tq.Circuit.from_qiskit(qc).with_noise(model)
        >>> bool(0.9 < float(noisy.expectation_ps(z=[0, 1])) < 1.0)
        True
        """
        from .qiskit_noise import noise_model_from_backend

        return noise_model_from_backend(backend, cls, **options)

    def add(self, channel: Channel, gates: str | Sequence[str] = "all",
            qubits: Sequence[int] | None = None) -> NoiseModel:
        """Attach ``channel`` after every matching gate.

        Parameters
        ----------
        channel : Channel
            A channel on one qubit (applied to each qubit of a matching gate) or on as many qubits
            as the gates it follows.
        gates : "1q", "2q", "all", or list of gate names
            Which gates it follows. A list may name ``"measure"`` (the channel then comes just
            before each measurement, on the measured qubit) and ``"reset"`` (just after each
            reset); the classes never match them.
        qubits : sequence of int, optional
            Only gates whose qubits all lie among these (every qubit by default).

        Examples
        --------
        >>> import tyxonq as tq
        >>> model = tq.NoiseModel().add(tq.channels.bit_flip(0.1), gates=["measure"])
        >>> c = tq.Circuit(1).x(0)
        >>> _ = c.measure(0)
        >>> [op.channel.name if op.channel else op.gate for op in c.with_noise(model).operations]
        ['x', 'bit_flip', 'measure']
        """
        if not isinstance(channel, Channel):
            raise TypeError(f"channel={channel!r} must be a tq.channels.Channel")
        if isinstance(gates, str):
            if gates not in _GATE_CLASSES:
                raise ValueError(f"gates={gates!r} must be one of {_GATE_CLASSES} or a list of gate names")
            kind: tuple[str, ...] | str = gates
        else:
            kind = _gate_names(gates)
        self._rules.append(_Rule(channel, kind, None if qubits is None else frozenset(qubits)))
        return self

    def add_local(self, channel: Channel, gates: str | Sequence[str], qubits: Sequence[int]) -> NoiseModel:
        """Attach ``channel`` after ``gates`` acting on exactly ``qubits``, in that order, *instead
        of* the rules of :meth:`add` for those gates there (Qiskit Aer's ``add_quantum_error``).

        The channel acts on ``qubits`` in the order given (its qubit 0, the most significant, is
        ``qubits[0]``), so a rule for ``cx`` on ``(1, 0)`` does not follow ``cx(0, 1)``. Several
        local rules for one gate and qubit tuple compose, in the order added.

        Parameters
        ----------
        channel : Channel
            A channel on ``len(qubits)`` qubits.
        gates : str or list of str
            Gate names (or ``"measure"``: the channel comes just before the measurement;
            ``"reset"``: just after).
        qubits : sequence of int
            The gate's qubits, in the gate's order.

        Examples
        --------
        >>> import tyxonq as tq
        >>> model = tq.NoiseModel().add_local(tq.channels.depolarizing(0.1, 2), "cx", [1, 0])
        >>> noisy = tq.Circuit(2).cx(0, 1).cx(1, 0).with_noise(model)
        >>> [(op.channel.name if op.channel else op.gate, op.qubits) for op in noisy.operations]
        [('cx', (0, 1)), ('cx', (1, 0)), ('depolarizing', (1, 0))]
        """
        if not isinstance(channel, Channel):
            raise TypeError(f"channel={channel!r} must be a tq.channels.Channel")
        exact = tuple(int(q) for q in qubits)
        if len(set(exact)) != len(exact):
            raise ValueError(f"qubits={list(exact)} repeats a qubit")
        if channel.num_qubits != len(exact):
            raise ValueError(f"a {channel.num_qubits}-qubit {channel.name} channel cannot act on the "
                             f"{len(exact)} qubits {list(exact)}: give one qubit per channel qubit")
        self._rules.append(_Rule(channel, _gate_names(gates), frozenset(exact), exact))
        return self

    def add_readout_error(self, confusion: Any, qubits: Sequence[int] | None = None) -> NoiseModel:
        """Misread qubits (all by default): ``confusion[read, true] = P(read | true)``, a ``2 x 2``
        column-stochastic matrix (validated)."""
        confusion_matrices(confusion, 1, "confusion")
        self._readout.append((confusion, None if qubits is None else frozenset(qubits)))
        return self

    def _matches(self, rule: _Rule, gate: str, qubits: tuple[int, ...]) -> bool:
        if isinstance(rule.gates, str):
            wanted = gate not in _NON_GATES and \
                {"1q": len(qubits) == 1, "2q": len(qubits) == 2, "all": True}[rule.gates]
        else:
            wanted = gate in rule.gates
        return wanted and (rule.qubits is None or rule.qubits.issuperset(qubits))

    def _rules_for(self, gate: str, qubits: tuple[int, ...]) -> list[_Rule]:
        """The rules that follow ``gate`` on ``qubits``: its local rules there if it has any,
        otherwise the matching general rules."""
        local = [rule for rule in self._rules
                 if rule.exact == qubits and gate in rule.gates]
        if local:
            return local
        return [rule for rule in self._rules if rule.exact is None and self._matches(rule, gate, qubits)]

    def _channels_for(self, op: Any) -> list[Any]:
        """The channel operations that ``op`` brings (none for a channel or a post-selection)."""
        from ..circuit.operations.operation import DYNAMIC_KINDS, Operation

        if op.channel is not None or (op.gate in DYNAMIC_KINDS and op.gate not in _NON_GATES):
            return []
        channels = []
        for rule in self._rules_for(op.gate, tuple(op.qubits)):
            size = rule.channel.num_qubits
            if size == len(op.qubits):
                channels.append(Operation("channel", op.qubits, channel=rule.channel))
            elif size == 1:
                channels += [Operation("channel", (q,), channel=rule.channel) for q in op.qubits]
            else:
                raise ValueError(f"a {size}-qubit {rule.channel.name} channel cannot follow the "
                                 f"{len(op.qubits)}-qubit gate {op.gate} on {op.qubits}")
        return channels

    def apply(self, circuit: Any) -> Any:
        """The noisy :class:`~tyxonq.DMCircuit` of ``circuit`` (its channels kept; a
        :class:`~tyxonq.StabilizerCircuit` stays one, its model's channels Pauli). Channels follow
        gates, and resets named in a rule; rules naming ``"measure"`` put their channels just
        before each ``measure`` operation (a circuit's final readout, when it has no measure
        operations, is not one: keep Qiskit's final measurements with
        ``Circuit.from_qiskit(qc, measurements="keep")``); post-selections bring none. A gate under
        a classical condition is followed by its channels whether or not it applied (a channel
        cannot be conditioned)."""
        from ..circuit.density import DMCircuit
        from ..circuit.stabilizer import StabilizerCircuit

        operations = []
        for op in circuit.operations:
            channels = self._channels_for(op)
            # a measurement reads the state its channels leave; everything else is followed by them
            operations += [*channels, op] if op.gate == "measure" else [op, *channels]
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
