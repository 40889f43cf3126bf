"""Binding: the arrays of a network's slots for given parameter values, on the active backend.

This is the evaluation path: every call goes through the backend protocol (no host round-trips,
no ``.item()``), so gradients and ``vmap`` flow from the results back to the angles.
"""

from __future__ import annotations

from typing import Any, Sequence

from .gates import constant
from .network import BlockRecipe, Network
from .operations import Operation
from .statevector import apply_placed, place
from .sweep import bind_matrices, neutral

__all__ = ["bind_tensors", "block_matrix"]


def block_matrix(K: Any, recipe: BlockRecipe, matrices: Sequence[Any]) -> Any:
    """The product of a block's member gates (``matrices``: every operation's matrix), in circuit
    order, each applied to the running product where it acts (no Kronecker products)."""
    k = len(recipe.qubits)
    first = recipe.members[0]
    if len(recipe.members) == 1 and recipe.positions[0] == tuple(range(k)):
        return matrices[first]
    max_ndim = K.capabilities.max_ndim
    product = neutral(K, 2 ** k, False)
    for member, positions in zip(recipe.members, recipe.positions):
        product = apply_placed(K, product, matrices[member],
                               place(positions, k, trail=2 ** k, max_ndim=max_ndim, shape=(2 ** k, 2 ** k)))
    return product


def bind_tensors(K: Any, network: Network, operations: Sequence[Operation], inputs: Any = None,
                 operators: Sequence[Any] = (), bits: Sequence[int] = ()) -> list[Any]:
    """One array per slot of ``network``, in slot order."""
    blocks: dict[int, Any] = {}
    matrices = bind_matrices(K, operations, sorted({m for b in network.blocks for m in b.members}))
    tensors = []
    for slot in network.slots:
        if slot.kind == "block":
            if slot.index not in blocks:
                blocks[slot.index] = block_matrix(K, network.blocks[slot.index], matrices)
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
