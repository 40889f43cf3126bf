"""Binding: the arrays of a network's slots for given parameter values, on the active backend.

This is the evaluation path: every call goes through the backend protocol (no host round-trips,
no ``.item()``), so gradients and ``vmap`` flow from the results back to the angles.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..operations.gates import constant
from ..operations.operation import Operation
from ..statevector.placement import place
from ..statevector.products import block_products, group_blocks
from ..statevector.sweep import bind_matrices
from .network import BlockRecipe, Network

__all__ = ["bind_tensors", "block_matrices"]


def block_matrices(K: Any, blocks: Sequence[BlockRecipe], matrices: Sequence[Any],
                   cache: dict) -> list[Any]:
    """Every block's matrix (the product of its member gates in circuit order), like blocks
    multiplied together (:mod:`tyxonq.circuit.statevector.products`); shapes are worked out once per
    network and backend dimension limit, in ``cache``."""
    max_ndim = K.capabilities.max_ndim
    if max_ndim not in cache:
        shapes = []
        for recipe in blocks:
            size = 2 ** len(recipe.qubits)
            shapes.append((False, tuple(place(p, len(recipe.qubits), trail=size, max_ndim=max_ndim,
                                              shape=(size, size)) for p in recipe.positions)))
        cache[max_ndim] = (shapes, group_blocks(shapes))
    shapes, groups = cache[max_ndim]
    return block_products(K, shapes, [recipe.members for recipe in blocks], groups, matrices)


def bind_tensors(K: Any, network: Network, operations: Sequence[Operation], inputs: Any = None,
                 operators: Sequence[Any] = (), bits: Sequence[int] = ()) -> list[Any]:
    """One array per slot of ``network``, in slot order."""
    matrices = bind_matrices(K, operations, sorted({m for b in network.blocks for m in b.members}))
    blocks = block_matrices(K, network.blocks, matrices, network.shape_cache)
    tensors = []
    for slot in network.slots:
        if slot.kind == "block":
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
