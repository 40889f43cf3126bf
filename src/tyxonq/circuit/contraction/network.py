"""The tensor network of a circuit for one kind of result, built from the circuit's structure.

A network is a list of :class:`Leaf` records (which tensor goes where, by leg labels) and its open
output legs. Leaves name their tensors symbolically (a piece of a gate's tensor form, a basis
vector, the input state, an observable), so a network, and the plan made for it, serve every
parameter value. Three exact reductions are made while the network is built:

* every gate takes its :mod:`~tyxonq.circuit.contraction.tensor_forms` form: wires pass through
  diagonal gates and controls as shared legs (hyperindices), SWAPs relabel wires, RXX/RYY split;
* **column reduction**: a leg fixed to one value (a ``|0>`` input, a requested bit of an
  amplitude) is sliced out of every tensor on it, unless it is an open output leg;
* for expectations, the light cone (:func:`~tyxonq.circuit.contraction.lightcone.light_cone`)
  drops gates that cancel against their adjoints, including diagonal gates that commute with the
  observable.

Leg layout conventions: a piece's legs are in the order its form lists them; a dense observable's
legs are its bra (row) legs then its ket (column) legs; qubit 0 is the most significant bit.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..operations.operation import Operation
from .lightcone import light_cone
from .tensor_forms import TensorForm, channel_form, dense_form, tensor_form

__all__ = ["conditional_network", "Leaf", "Network", "operation_form", "state_network", "amplitude_network",
           "expectation_network", "density_network", "matrix_network"]

Value = Any  # a fixed leg's value: 0 or 1, or ("bit", q) for the q-th requested bit


@dataclass(frozen=True)
class Leaf:
    """One tensor of a network.

    ``source`` is ``"gate"`` (piece ``piece`` of operation ``index``'s form), ``"factor"`` (a
    form's constant piece), ``"basis"`` (the basis vector ``|value>``), ``"input"`` (the input
    state), ``"operator"`` (observable ``index``; its diagonal when ``value`` is true),
    ``"channel"`` (the Kraus operators of channel ``index``) or ``"identity"``. ``conj``
    marks the bra side of an expectation. ``fixed`` lists the piece's legs sliced out, as
    ``(position in the piece's legs, value)``; ``legs`` are those that remain.
    """

    source: str
    index: int
    legs: tuple[int, ...]
    piece: int = 0
    conj: bool = False
    fixed: tuple[tuple[int, Value], ...] = ()
    value: Value = None


@dataclass
class Network:
    """Leaves and open output legs (in output order); ``cache`` is for binding's bookkeeping."""

    leaves: list[Leaf] = field(default_factory=list)
    output: tuple[int, ...] = ()
    cache: dict = field(default_factory=dict, repr=False)


def operation_form(operation: Operation) -> TensorForm:
    """The tensor form of an operation (any ``unitary`` is dense; a channel's is
    :func:`~tyxonq.circuit.contraction.tensor_forms.channel_form`)."""
    k = len(operation.qubits)
    if operation.channel is not None:
        return channel_form(k, operation.channel.num_kraus, operation.channel.diagonal)
    return dense_form(k) if operation.gate == "unitary" else tensor_form(operation.gate, k)


class _Builder:
    """Leg labels, wires, joined labels and fixed legs while a network is built."""

    def __init__(self) -> None:
        self._labels = itertools.count()
        self.leaves: list[Leaf] = []
        self._parent: dict[int, int] = {}
        self._fixers: dict[int, list[Value]] = {}
        self._kraus: dict[tuple, int] = {}

    def kraus_label(self, index: int, leg: tuple) -> int:
        """The label of a channel's Kraus leg: one per channel, shared by its ket and bra pieces."""
        if (index, leg) not in self._kraus:
            self._kraus[(index, leg)] = self.fresh()
        return self._kraus[(index, leg)]

    def fresh(self) -> int:
        return next(self._labels)

    def find(self, label: int) -> int:
        while self._parent.get(label, label) != label:
            label = self._parent[label]
        return label

    def join(self, label: int, other: int) -> None:
        """The two labels become one leg (a trace, or a diagonal observable's leg)."""
        self._parent[self.find(label)] = self.find(other)

    def fix(self, label: int, value: Value) -> None:
        self._fixers.setdefault(label, []).append(value)

    def side(self, qubits: Sequence[int], operations: Sequence[Operation], kept: Sequence[int],
             start_with: str, conj: bool = False) -> tuple[dict[int, int], dict[int, int]]:
        """One side (the ket, or the bra with ``conj``): its start labels and final labels.

        ``start_with``: ``"zero"`` (|0> on every wire), ``"input"`` (the input state) or
        ``"open"`` (start legs left open)."""
        start = {q: self.fresh() for q in qubits}
        if start_with == "input":
            self.leaves.append(Leaf("input", 0, tuple(start[q] for q in sorted(qubits)), conj=conj))
        elif start_with == "zero":
            for q in qubits:
                self.fix(start[q], 0)
        current = dict(start)
        for index in kept:
            operation = operations[index]
            form = operation_form(operation)
            wires = [current[q] for q in operation.qubits]
            new = {leg: self.kraus_label(index, leg) if leg[0] == "kraus" else self.fresh()
                   for piece in form.pieces for leg in piece.legs if leg[0] != "in"}
            for number, piece in enumerate(form.pieces):
                legs = tuple(wires[leg[1]] if leg[0] == "in" else new[leg] for leg in piece.legs)
                source = ("channel" if operation.channel is not None
                          else "factor" if piece.constant is not None else "gate")
                self.leaves.append(Leaf(source, index, legs, number, conj))
            for position, (kind, j) in enumerate(form.outputs):
                current[operation.qubits[position]] = wires[j] if kind == "in" else new[(kind, j)]
        return start, current

    def network(self, output: Sequence[int]) -> Network:
        """The leaves with joined labels and fixed legs sliced out (or kept as basis vectors)."""
        output = tuple(self.find(label) for label in output)
        slicing: dict[int, Value] = {}
        basis: list[tuple[int, Value]] = []
        fixers: dict[int, list[Value]] = {}
        for label, values in self._fixers.items():
            fixers.setdefault(self.find(label), []).extend(values)
        for label, values in fixers.items():
            distinct = list(dict.fromkeys(values))
            if label in output:  # an open leg is never sliced: its fixers stay basis vectors
                basis += [(label, value) for value in distinct]
                continue
            bits = [value for value in distinct if isinstance(value, tuple)]
            slicing[label] = bits[0] if bits else distinct[0]
            basis += [(label, value) for value in distinct if value != slicing[label]]
        leaves = list(self.leaves) + [Leaf("basis", 0, (label,), value=value) for label, value in basis]
        network = Network(output=output)
        for leaf in leaves:
            legs = tuple(self.find(label) for label in leaf.legs)
            fixed = tuple((position, slicing[label]) for position, label in enumerate(legs)
                          if label in slicing)
            kept = tuple(label for label in legs if label not in slicing)
            if len(set(kept)) < len(kept):
                kept = self._traced_apart(network, kept)
            network.leaves.append(Leaf(leaf.source, leaf.index, kept, leaf.piece, leaf.conj,
                                       leaf.fixed + fixed, leaf.value))
        return network

    def _traced_apart(self, network: Network, legs: tuple[int, ...]) -> tuple[int, ...]:
        """``legs`` with each repeated label after its first use renamed, joined to the first by
        an identity leaf: a trace within one leaf (an input density matrix's wire that no kept gate
        touches) becomes a contraction between two, which every contraction path handles."""
        seen: set[int] = set()
        renamed = []
        for label in legs:
            if label in seen:
                apart = self.fresh()
                network.leaves.append(Leaf("identity", 0, (label, apart)))
                label = apart
            seen.add(label)
            renamed.append(label)
        return tuple(renamed)


def _start(inputs: bool | str) -> str:
    """How each side starts: ``inputs`` is ``False`` (``|0...0>``), ``True`` (an input state
    vector) or ``"density"`` (an input density matrix, one leaf joining both sides)."""
    return {False: "zero", True: "input", "density": "open"}[inputs]


def _doubled(builder: _Builder, num_qubits: int, operations: Sequence[Operation], inputs: bool | str,
             measured: Sequence[int], diagonal_qubits: set[int]) -> tuple[list[int], dict, dict]:
    """Both sides of ``rho = E(|psi><psi|)`` restricted to the light cone of ``measured``: the
    qubits kept, and the ket's and bra's final labels (nothing joined yet)."""
    kept = light_cone(operations, measured, diagonal_qubits)
    active = set(measured).union(*(operations[i].qubits for i in kept))
    qubits = sorted(range(num_qubits) if inputs else active)
    ket_start, ket = builder.side(qubits, operations, kept, _start(inputs))
    bra_start, bra = builder.side(qubits, operations, kept, _start(inputs), conj=True)
    if inputs == "density":
        builder.leaves.append(Leaf("input", 0, tuple(ket_start[q] for q in qubits)
                                   + tuple(bra_start[q] for q in qubits)))
    return qubits, ket, bra


def state_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool) -> Network:
    """Network of the output state, open legs ordered qubit 0 first."""
    builder = _Builder()
    _, final = builder.side(range(num_qubits), operations, range(len(operations)),
                            _start(inputs_given))
    return builder.network([final[q] for q in range(num_qubits)])


def amplitude_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool) -> Network:
    """Network of one amplitude <bits|psi>: every output leg fixed to its requested bit."""
    builder = _Builder()
    _, final = builder.side(range(num_qubits), operations, range(len(operations)),
                            _start(inputs_given))
    for q in range(num_qubits):
        builder.fix(final[q], ("bit", q))
    return builder.network(())


def expectation_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool | str,
                        operator_qubits: Sequence[tuple[int, ...]],
                        operator_diagonal: Sequence[bool] | None = None) -> Network:
    """Network of ``Tr(O_1 ... O_m rho)`` (``<psi| O_1 ... O_m |psi>`` for a pure state),
    restricted to the light cone of the O_j; channels among the operations join the two sides
    through their Kraus legs, and those outside the light cone drop out (trace preserving).

    ``operator_diagonal[j]`` says that ``O_j`` is diagonal: it is then one leg per qubit, shared
    by the bra and the ket, and gates that commute with it drop out of the light cone.
    """
    diagonal = tuple(operator_diagonal or (False,) * len(operator_qubits))
    measured = sorted({q for qubits in operator_qubits for q in qubits})
    diagonal_qubits = {q for qubits, flag in zip(operator_qubits, diagonal) if flag for q in qubits}
    builder = _Builder()
    qubits, ket, bra = _doubled(builder, num_qubits, operations, inputs_given, measured, diagonal_qubits)
    dense_measured = {q for qubits, flag in zip(operator_qubits, diagonal) if not flag for q in qubits}
    for q in qubits:
        if q not in dense_measured:  # a trace, or a diagonal observable's single leg
            builder.join(bra[q], ket[q])
    for index, (op_qubits, flag) in enumerate(zip(operator_qubits, diagonal)):
        if flag:
            legs = tuple(ket[q] for q in op_qubits)
        else:
            legs = tuple(bra[q] for q in op_qubits) + tuple(ket[q] for q in op_qubits)
        builder.leaves.append(Leaf("operator", index, legs, value=flag))
    return builder.network(())


def density_network(num_qubits: int, operations: Sequence[Operation], inputs: bool | str,
                    qubits: Sequence[int], diagonal: bool = False) -> Network:
    """Network of the (reduced) density matrix on ``qubits``: open legs the ket's then the bra's,
    in the order given, every other qubit traced out and outside the light cone dropped. With
    ``diagonal``: its diagonal (the probabilities), one open leg per qubit.
    """
    builder = _Builder()
    kept_qubits, ket, bra = _doubled(builder, num_qubits, operations, inputs, qubits,
                                     set(qubits) if diagonal else set())
    for q in kept_qubits:
        if diagonal or q not in qubits:
            builder.join(bra[q], ket[q])
    if diagonal:
        return builder.network(tuple(ket[q] for q in qubits))
    return builder.network(tuple(ket[q] for q in qubits) + tuple(bra[q] for q in qubits))


def conditional_network(num_qubits: int, operations: Sequence[Operation], inputs: bool | str,
                        fixed: Sequence[int], open_qubits: Sequence[int]) -> Network:
    """Network of the joint probabilities ``P(bits of fixed, outcomes of open_qubits)``: the
    ``fixed`` qubits measured with their requested bits (``("bit", j)`` for ``fixed[j]``), one open
    leg per qubit of ``open_qubits``, every other qubit traced out and outside the light cone of
    the measured ones dropped (what sampling qubit by qubit asks for)."""
    measured = list(fixed) + list(open_qubits)
    builder = _Builder()
    kept_qubits, ket, bra = _doubled(builder, num_qubits, operations, inputs, measured, set(measured))
    for q in kept_qubits:
        builder.join(bra[q], ket[q])
    for j, q in enumerate(fixed):
        builder.fix(ket[q], ("bit", j))
    return builder.network(tuple(ket[q] for q in open_qubits))


def matrix_network(num_qubits: int, operations: Sequence[Operation]) -> Network:
    """Network of the circuit's unitary: output legs (rows) then input legs (columns)."""
    builder = _Builder()
    start, final = builder.side(range(num_qubits), operations, range(len(operations)), "open")
    starts = set(start.values())
    rows = []
    for q in range(num_qubits):
        if final[q] in starts:  # the wire is (a permutation of) an input wire: an explicit identity
            row = builder.fresh()
            builder.leaves.append(Leaf("identity", q, (row, final[q])))
            rows.append(row)
        else:
            rows.append(final[q])
    return builder.network(tuple(rows) + tuple(start[q] for q in range(num_qubits)))
