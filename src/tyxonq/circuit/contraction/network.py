"""The tensor network of a circuit for one kind of result, built from the circuit's structure.

A network is a list of :class:`Slot` records (which tensor goes where, by leg labels) and its open
output legs. Slots name their tensors symbolically (input vector, fused block, operator, basis
vector) so a network, and the contraction path found for it, serves every parameter value.

Leg layout conventions: a block's tensor is its ``2^k x 2^k`` matrix, whose C-order legs are the
outputs of its qubits then their inputs; qubit 0 is the most significant bit of a basis index.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

from ..operations.fusion import fuse_operations
from ..operations.operation import Operation
from .lightcone import light_cone

__all__ = ["Slot", "BlockRecipe", "Network", "state_network", "amplitude_network",
           "expectation_network", "matrix_network"]


@dataclass(frozen=True)
class Slot:
    """One tensor of a network.

    ``kind`` is ``"zero"`` (|0>), ``"input"`` (the circuit's input state), ``"block"`` (a fused
    block; ``index`` into :attr:`Network.blocks`), ``"operator"`` (``index``-th observable factor),
    ``"bit"`` (the basis vector of the ``index``-th requested bit) or ``"identity"``. ``conj``
    marks the bra side of an expectation.
    """

    kind: str
    index: int
    legs: tuple[int, ...]
    conj: bool = False


@dataclass(frozen=True)
class BlockRecipe:
    """How to build a fused block's matrix: member operations and where each acts in the block."""

    qubits: tuple[int, ...]
    members: tuple[int, ...]  # indices into the circuit's operations
    positions: tuple[tuple[int, ...], ...]  # per member: its qubits as positions in ``qubits``


@dataclass
class Network:
    slots: list[Slot] = field(default_factory=list)
    output: tuple[int, ...] = ()
    blocks: list[BlockRecipe] = field(default_factory=list)
    shape_cache: dict = field(default_factory=dict, repr=False)  # for binding: block shapes, groups


class _Wires:
    """Hands out fresh leg labels and tracks the current label of each qubit wire."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self.current: dict[int, int] = {}

    def fresh(self) -> int:
        return next(self._counter)

    def start(self, qubits: Sequence[int]) -> dict[int, int]:
        self.current = {q: self.fresh() for q in qubits}
        return dict(self.current)


def _recipes(operations: Sequence[Operation], selected: Sequence[int]) -> list[BlockRecipe]:
    chosen = [operations[i] for i in selected]
    recipes = []
    for block in fuse_operations(chosen):
        qubits = tuple(block.qubits)
        members = tuple(selected[m] for m in block.members)
        positions = tuple(tuple(qubits.index(q) for q in operations[m].qubits) for m in members)
        recipes.append(BlockRecipe(qubits, members, positions))
    return recipes


def _add_side(network: Network, wires: _Wires, qubits: Sequence[int], inputs_given: bool,
              conj: bool) -> dict[int, int]:
    """Input tensors and block tensors of one side (ket, or bra with ``conj``); final labels."""
    start = wires.start(qubits)
    if inputs_given:
        network.slots.append(Slot("input", 0, tuple(start[q] for q in sorted(qubits)), conj))
    else:
        network.slots.extend(Slot("zero", q, (start[q],), conj) for q in qubits)
    for index, block in enumerate(network.blocks):
        inputs = tuple(wires.current[q] for q in block.qubits)
        outputs = tuple(wires.fresh() for _ in block.qubits)
        network.slots.append(Slot("block", index, outputs + inputs, conj))
        wires.current.update(zip(block.qubits, outputs))
    return dict(wires.current)


def state_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool) -> Network:
    """Network of the output state, open legs ordered qubit 0 first."""
    network = Network(blocks=_recipes(operations, range(len(operations))))
    final = _add_side(network, _Wires(), range(num_qubits), inputs_given, conj=False)
    network.output = tuple(final[q] for q in range(num_qubits))
    return network


def amplitude_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool) -> Network:
    """Network of one amplitude <bits|psi>: every output leg closed by a basis vector."""
    network = state_network(num_qubits, operations, inputs_given)
    network.slots.extend(Slot("bit", q, (leg,)) for q, leg in enumerate(network.output))
    network.output = ()
    return network


def expectation_network(num_qubits: int, operations: Sequence[Operation], inputs_given: bool,
                        operator_qubits: Sequence[tuple[int, ...]]) -> Network:
    """Network of <psi| O_1 ... O_m |psi>, restricted to the backward light cone of the O_j."""
    measured = sorted({q for qubits in operator_qubits for q in qubits})
    kept = light_cone(operations, measured)
    active = set(measured).union(*(operations[i].qubits for i in kept))
    qubits = sorted(range(num_qubits) if inputs_given else active)
    network = Network(blocks=_recipes(operations, kept))
    wires = _Wires()
    ket = _add_side(network, wires, qubits, inputs_given, conj=False)
    bra_start = len(network.slots)
    bra = _add_side(network, wires, qubits, inputs_given, conj=True)
    for index, op_qubits in enumerate(operator_qubits):
        legs = tuple(bra[q] for q in op_qubits) + tuple(ket[q] for q in op_qubits)
        network.slots.append(Slot("operator", index, legs))
    # unmeasured wires: the bra's output leg is the ket's output leg (the trace over that qubit)
    join = {bra[q]: ket[q] for q in qubits if q not in measured}
    for i in range(bra_start, len(network.slots)):
        slot = network.slots[i]
        network.slots[i] = Slot(slot.kind, slot.index, tuple(join.get(leg, leg) for leg in slot.legs),
                                slot.conj)
    return network


def matrix_network(num_qubits: int, operations: Sequence[Operation]) -> Network:
    """Network of the circuit's unitary: output legs (rows) then input legs (columns)."""
    network = Network(blocks=_recipes(operations, range(len(operations))))
    wires = _Wires()
    start = wires.start(range(num_qubits))
    for index, block in enumerate(network.blocks):
        inputs = tuple(wires.current[q] for q in block.qubits)
        outputs = tuple(wires.fresh() for _ in block.qubits)
        network.slots.append(Slot("block", index, outputs + inputs))
        wires.current.update(zip(block.qubits, outputs))
    for q in range(num_qubits):
        if wires.current[q] == start[q]:  # an idle wire: an explicit identity keeps legs distinct
            output = wires.fresh()
            network.slots.append(Slot("identity", q, (output, start[q])))
            wires.current[q] = output
    network.output = tuple(wires.current[q] for q in range(num_qubits)) + tuple(
        start[q] for q in range(num_qubits))
    return network
