"""Fused blocks' matrices: the product of each block's member gates, blocks of one shape at once.

A block's matrix is built by applying its members, in circuit order, to the identity of its
``2^k``-dimensional space (each member where its :class:`~tyxonq.circuit.statevector.placement.Placement`
says; a diagonal block keeps only diagonals). Blocks with the same *shape* -- the same members'
placements, whatever the gates -- are multiplied together: their members' matrices are stacked
and every step is one batched call, so a layer of like blocks costs a handful of backend calls
instead of a handful per block. Shapes depend only on the circuit's structure: :func:`group_blocks`
runs once per plan.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics.constants import backend_constant
from ...numerics.protocol import ArrayBackend
from .placement import Placement, apply_placed

__all__ = ["BlockShape", "group_blocks", "block_products", "neutral"]


def neutral(K: ArrayBackend, size: int, diagonal: bool) -> Any:
    """The identity of a block's space: ``ones(size)`` for diagonals, else ``eye(size)``."""
    return backend_constant(K, ("neutral", size, diagonal),
                            lambda: np.ones(size, complex) if diagonal else np.eye(size, dtype=complex))

BlockShape = tuple[bool, tuple[Placement, ...]]  # (diagonal, each member's placement)

_BATCHABLE = ("view", "right", "diagonal")


def _batchable(placement: Placement) -> bool:
    """Applicable to a stack in a few calls within 6 dimensions (a reordered 3-qubit matrix
    would need 7)."""
    return placement.kind in _BATCHABLE and (placement.matrix_axes is None or placement.size <= 4)


def group_blocks(shapes: Sequence[BlockShape]) -> tuple[tuple[int, ...], ...]:
    """Indices of blocks that share a shape and can be multiplied in batched calls; every other
    block (alone in its shape, or with a member needing leg permutations) is a group of one.

    Examples
    --------
    >>> from tyxonq.circuit.statevector.placement import place
    >>> first = place((0,), 2, trail=4, shape=(4, 4))
    >>> group_blocks([(False, (first,)), (False, (first,)), (True, ())])
    ((0, 1), (2,))
    """
    groups: dict[BlockShape, list[int]] = {}
    for index, shape in enumerate(shapes):
        groups.setdefault(shape, []).append(index)
    result: list[tuple[int, ...]] = []
    for shape, indices in groups.items():
        if len(indices) > 1 and all(_batchable(p) for p in shape[1]):
            result.append(tuple(indices))
        else:
            result.extend((index,) for index in indices)
    return tuple(sorted(result))


def block_products(K: ArrayBackend, shapes: Sequence[BlockShape], members: Sequence[Sequence[int]],
                   groups: Sequence[Sequence[int]], matrices: Sequence[Any],
                   keep: dict[int, Sequence[int]] | None = None,
                   prefixes: dict[int, list[Any]] | None = None) -> list[Any]:
    """Every block's matrix (its diagonal, for a diagonal block).

    ``members[b]`` are block ``b``'s operation indices into ``matrices``; ``keep`` maps a block to
    member positions whose prefix products (members up to and including that one) are stored in
    ``prefixes[b]``, in position order.
    """
    products: list[Any] = [None] * len(shapes)
    for group in groups:
        diagonal, placements = shapes[group[0]]
        size = placements[0].shape[0] if placements else 1
        if len(group) == 1:
            index = group[0]
            products[index] = _single(K, diagonal, placements, members[index], matrices,
                                      keep.get(index, ()) if keep else (), prefixes, index, size)
            continue
        product = None
        for position, placement in enumerate(placements):
            stack = K.stack([matrices[members[b][position]] for b in group])
            if diagonal:
                stack = K.sum(stack * K.eye(K.shape(stack)[-1], dtype=K.dtype_of(stack)), axis=2)
            product = _apply_stacked(K, neutral(K, size, diagonal) if product is None else product,
                                     stack, placement, len(group), stacked=product is not None)
            for g, b in enumerate(group):
                if keep and position in keep.get(b, ()):
                    prefixes.setdefault(b, []).append(product[g])
        for g, b in enumerate(group):
            products[b] = product[g]
    return products


def _single(K: ArrayBackend, diagonal: bool, placements: Sequence[Placement], members: Sequence[int],
            matrices: Sequence[Any], wanted: Sequence[int], prefixes: Any, index: int, size: int) -> Any:
    """One block's product, member by member (a lone member covering the block is its matrix)."""
    first = matrices[members[0]]
    covering = len(members) == 1 and placements[0].kind in ("view", "right", "diagonal") \
        and placements[0].matrix_axes is None and placements[0].size == size
    if covering:
        product = K.diag(first) if diagonal else first
        if wanted:
            prefixes[index] = [product]
        return product
    product, stored = neutral(K, size, diagonal), []
    for position, member in enumerate(members):
        matrix = K.diag(matrices[member]) if diagonal else matrices[member]
        product = apply_placed(K, product, matrix, placements[position])
        if position in wanted:
            stored.append(product)
    if wanted:
        prefixes[index] = stored
    return product


def _apply_stacked(K: ArrayBackend, array: Any, stack: Any, placement: Placement, count: int,
                   stacked: bool) -> Any:
    """``count`` matrices (or diagonals) applied to ``count`` stacked arrays, or to one array."""
    lead = (count,) if stacked else (1,)
    if placement.matrix_axes is not None:
        k = placement.size.bit_length() - 1
        legs = (2,) * (k if placement.kind == "diagonal" else 2 * k)
        axes = (0,) + tuple(1 + a for a in placement.matrix_axes)
        stack = K.reshape(K.transpose(K.reshape(stack, (count,) + legs), axes), K.shape(stack))
    view = K.reshape(array, lead + placement.view)
    if placement.kind == "diagonal":
        result = view * K.reshape(stack, (count,) + placement.factor_shape)
    elif placement.kind == "view":
        result = K.matmul(K.reshape(stack, (count, 1, placement.size, placement.size)), view)
    else:  # "right"
        result = K.matmul(view, K.transpose(stack, (0, 2, 1)))
    return K.reshape(result, (count,) + placement.shape)
