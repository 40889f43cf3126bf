"""Binding: the arrays of a network's slots for given parameter values, on the active backend.

This is the evaluation path: every call goes through the backend protocol (no host round-trips,
no ``.item()``), so gradients and ``vmap`` flow from the results back to the angles.
"""

from __future__ import annotations

from typing import Any, Sequence

from .gates import constant, gate_matrix
from .network import BlockRecipe, Network
from .operations import Operation

__all__ = ["bind_tensors", "block_matrix"]


def _embed(K: Any, gate: Any, gate_qubits: int, block_qubits: int, axes: tuple[int, ...]) -> Any:
    """A gate on some of a block's qubits as a matrix on all of them (block qubit order)."""
    if gate_qubits < block_qubits:
        gate = K.kron(gate, K.eye(2 ** (block_qubits - gate_qubits)))
    if axes != tuple(range(2 * block_qubits)):
        dimension = 2 ** block_qubits
        gate = K.reshape(K.transpose(K.reshape(gate, (2,) * (2 * block_qubits)), axes),
                         (dimension, dimension))
    return gate


def block_matrix(K: Any, recipe: BlockRecipe, operations: Sequence[Operation]) -> Any:
    """The product of a block's member gates, embedded in the block's qubits, in circuit order."""
    matrix = None
    for member, embedding in zip(recipe.members, recipe.embeddings):
        operation = operations[member]
        gate = gate_matrix(K, operation.gate, operation.params, operation.dagger)
        if embedding is not None:
            gate = _embed(K, gate, len(operation.qubits), len(recipe.qubits), embedding)
        matrix = gate if matrix is None else K.matmul(gate, matrix)
    return matrix


def bind_tensors(K: Any, network: Network, operations: Sequence[Operation], inputs: Any = None,
                 operators: Sequence[Any] = (), bits: Sequence[int] = ()) -> list[Any]:
    """One array per slot of ``network``, in slot order."""
    blocks: dict[int, Any] = {}
    tensors = []
    for slot in network.slots:
        if slot.kind == "block":
            if slot.index not in blocks:
                blocks[slot.index] = block_matrix(K, network.blocks[slot.index], operations)
            tensor = blocks[slot.index]
        elif slot.kind == "zero":
            tensor = constant(K, "_ket0")
        elif slot.kind == "input":
            tensor = inputs
        elif slot.kind == "operator":
            tensor = operators[slot.index]
        elif slot.kind == "bit":
            tensor = constant(K, "_ket1" if bits[slot.index] else "_ket0")
        elif slot.kind == "identity":
            tensor = constant(K, "i")
        else:  # pragma: no cover - networks only make the kinds above
            raise AssertionError(f"unknown slot kind {slot.kind!r}")
        tensors.append(K.conj(tensor) if slot.conj else tensor)
    return tensors
