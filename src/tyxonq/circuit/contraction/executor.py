"""Executing a contraction path as transpose + reshape + matmul steps through the backend.

A path (pairs of tensors to contract, opt_einsum's linear format) is compiled once into
:class:`PairStep` records that say, for each pair, how to lay both operands out as matrices. Each
step is then a few backend calls: at most one permutation per operand (none when the legs already
lie in order), a reshape and one ``matmul``. Tensors are kept as arrays whose C-order layout is
their leg order, so an intermediate with 30 legs never needs 30 array dimensions: permutations are
done on groups of adjacent legs, with at most ``max_ndim`` dimensions per call (cuPyNumeric: 6).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from ...numerics.moves import Move, permutation_moves
from ...numerics.protocol import ArrayBackend

__all__ = ["PairStep", "CompiledContraction", "compile_path"]

Legs = tuple[int, ...]


@dataclass(frozen=True)
class OperandLayout:
    """How one operand becomes a matrix (or a stack of matrices, with batch legs): optional
    permutation, then a 2-d or 3-d view, maybe with its last two axes transposed."""

    moves: tuple[Move, ...]
    shape: tuple[int, ...]
    transposed: bool

    @functools.cached_property
    def matrix_shape(self) -> tuple[int, ...]:
        """The operand's shape as a (stack of) matrix(es)."""
        return self.shape[:-2] + (self.shape[-1], self.shape[-2]) if self.transposed else self.shape

    @functools.cached_property
    def inverse_moves(self) -> tuple[Move, ...]:
        """The moves that undo :attr:`moves` (applied in this order)."""
        return tuple((tuple(reshape[a] for a in axes), tuple(sorted(range(len(axes)), key=axes.__getitem__)))
                     for reshape, axes in reversed(self.moves))


@dataclass(frozen=True)
class PairStep:
    """Contract tensors ``first`` and ``second`` (ids) into a new tensor with ``result_legs``."""

    first: int
    second: int
    first_layout: OperandLayout
    second_layout: OperandLayout
    result_legs: Legs


def _size(legs: Sequence[int], sizes: dict[int, int]) -> int:
    return math.prod(sizes[leg] for leg in legs)


def _layout(legs: Legs, batch: Legs, rows: Legs, columns: Legs, sizes: dict[int, int],
            max_ndim: int) -> OperandLayout:
    """View with ``batch`` legs leading (when there are any), ``rows`` as rows, ``columns`` as
    columns."""
    lead = (_size(batch, sizes),) if batch else ()
    shape = lead + (_size(rows, sizes), _size(columns, sizes))
    if tuple(legs) == tuple(batch) + tuple(rows) + tuple(columns):
        return OperandLayout((), shape, False)
    if tuple(legs) == tuple(batch) + tuple(columns) + tuple(rows):
        return OperandLayout((), lead + (shape[-1], shape[-2]), True)
    moves = permutation_moves(legs, tuple(batch) + tuple(rows) + tuple(columns), sizes, max_ndim)
    return OperandLayout(tuple(moves), shape, False)


def _batched_layout(layout: OperandLayout, size: int, max_ndim: int) -> OperandLayout | None:
    """``layout`` with a leg of ``size`` leading the operand and its matrix view (a batch leg), as
    :func:`_layout` makes it: a permutation that keeps the first run of legs in place carries the
    new leg in that run; one that moves it gets one more (leading, fixed) dimension."""
    lead = layout.shape[0] * size if len(layout.shape) == 3 else size
    shape = (lead,) + layout.shape[-2:]
    moves = []
    for reshape, axes in layout.moves:
        if axes[0] == 0:  # the first run stays first (a one-run move: (before, between, run, after))
            moves.append(((reshape[0] * size,) + reshape[1:], axes))
        elif len(reshape) + 1 > max_ndim:
            return None
        else:
            moves.append(((size,) + reshape, (0,) + tuple(axis + 1 for axis in axes)))
    return OperandLayout(tuple(moves), shape, layout.transposed)


def _contiguous_order(legs: Legs, shared: set[int]) -> Legs | None:
    """The shared legs in ``legs`` order if they form a prefix or suffix of ``legs``."""
    k = len(shared)
    if set(legs[:k]) == shared:
        return tuple(legs[:k])
    if set(legs[len(legs) - k:]) == shared:
        return tuple(legs[len(legs) - k:])
    return None


def compile_pair(legs_a: Legs, legs_b: Legs, sizes: dict[int, int], max_ndim: int,
                 positions: tuple[int, int], keep: frozenset[int] | set[int] = frozenset()) -> PairStep:
    """Plan one pairwise contraction so that the larger operand is copied as rarely as possible.

    Legs of both operands that are in ``keep`` (needed by other tensors or the output: shared
    legs of a hyperindex) are batch legs, leading the result; the other shared legs are summed.
    """
    shared = set(legs_a) & set(legs_b)
    batch_set = shared & set(keep)
    summed = shared - batch_set
    (big, small), swapped = ((legs_a, legs_b), False) if _size(legs_a, sizes) >= _size(legs_b, sizes) \
        else ((legs_b, legs_a), True)
    batch = tuple(leg for leg in big if leg in batch_set)
    big_rest = tuple(leg for leg in big if leg not in batch_set)
    small_rest = tuple(leg for leg in small if leg not in batch_set)
    order = _contiguous_order(big_rest, summed) or _contiguous_order(small_rest, summed)
    if order is None:
        order = tuple(leg for leg in big_rest if leg in summed)
    free_big = tuple(leg for leg in big_rest if leg not in summed)
    free_small = tuple(leg for leg in small_rest if leg not in summed)
    big_layout = _layout(big, batch, free_big, order, sizes, max_ndim)
    small_layout = _layout(small, batch, order, free_small, sizes, max_ndim)
    first, second = positions if not swapped else (positions[1], positions[0])
    return PairStep(first, second, big_layout, small_layout, batch + free_big + free_small)


@dataclass(frozen=True)
class CompiledContraction:
    """Steps of a contraction, the id and legs of the result, the largest tensor's size, and the
    cost: ``flops`` (multiply-adds of the matmuls) and ``writes`` (elements of the results)."""

    steps: tuple[PairStep, ...]
    result: int
    result_legs: Legs
    largest_size: int
    flops: int = 0
    writes: int = 0

    def step_costs(self) -> tuple[tuple[float, int], ...]:
        """Each step's width (log2 of its result's entries) and multiply-adds, in order."""
        return tuple((math.log2(max(math.prod(shape), 1)),
                      math.prod(step.first_layout.shape) * step.second_layout.shape[-1])
                     for step, shape in zip(self.steps, self.product_shapes))

    @functools.cached_property
    def product_shapes(self) -> tuple[tuple[int, ...], ...]:
        """Each step's product, a (stack of) matrix(es)."""
        return tuple(step.first_layout.matrix_shape[:-1] + step.second_layout.matrix_shape[-1:]
                     for step in self.steps)

    def batched(self, leg: int, size: int, max_ndim: int) -> CompiledContraction | None:
        """This contraction of ``size`` networks at once: what :func:`compile_path` makes of the
        same path with one more ``leg``, of dimension ``size``, leading every tensor and the output
        (a hyperindex: a batch leg of every step), derived step by step without compiling again;
        ``None`` where a step's permutation would then need more than ``max_ndim`` dimensions.

        Examples
        --------
        >>> plain = compile_path([(0, 1), (1, 2)], [(0, 1)], {0: 2, 1: 2, 2: 2}, 6, (0, 2))
        >>> batched = compile_path([(9, 0, 1), (9, 1, 2)], [(0, 1)], {0: 2, 1: 2, 2: 2, 9: 5}, 6, (9, 0, 2))
        >>> plain.batched(9, 5, 6) == batched
        True
        """
        steps = []
        for step in self.steps:
            first, second = (_batched_layout(layout, size, max_ndim)
                             for layout in (step.first_layout, step.second_layout))
            if first is None or second is None:
                return None
            steps.append(PairStep(step.first, step.second, first, second, (leg,) + step.result_legs))
        return CompiledContraction(tuple(steps), self.result, (leg,) + self.result_legs,
                                   self.largest_size * size, self.flops * size, self.writes * size)

    @functools.cached_property
    def _program(self) -> tuple[tuple[int, int, Any, Any], ...]:
        """Each step as ``(first, second, how_first, how_second)``: an operand's ``how`` is its
        matrix shape where one reshape makes it (most operands: no permutation, no transpose),
        else its layout (:func:`_as_matrix`)."""
        return tuple((step.first, step.second, _how(step.first_layout), _how(step.second_layout))
                     for step in self.steps)

    def run(self, K: ArrayBackend, tensors: Sequence[Any]) -> Any:
        """Contract ``tensors`` (arrays whose layouts match the compiled legs)."""
        tensors = list(tensors)
        reshape, matmul, append = K.reshape, K.matmul, tensors.append
        for first, second, how_first, how_second in self._program:
            a, tensors[first] = tensors[first], None  # handed over: the slot no longer holds it
            b, tensors[second] = tensors[second], None
            a = reshape(a, how_first) if type(how_first) is tuple else _as_matrix(K, a, how_first)
            b = reshape(b, how_second) if type(how_second) is tuple else _as_matrix(K, b, how_second)
            append(matmul(a, b))
            del a, b
        return tensors[self.result]

    def run_with_vjp(self, K: ArrayBackend, tensors: Sequence[Any], cotangent: Any,
                     wanted: Sequence[int] | None = None) -> tuple[Any, list[Any]]:
        """The result and every input tensor's environment: the derivative of ``sum(cotangent *
        result)`` with respect to that tensor, in its shape (holomorphic: no conjugation).

        The vector-Jacobian product of a step ``C = A B`` is two more products, ``dA = dC B^T``
        and ``dB = A^T dC``, laid back out by the inverse of the step's permutations; the forward
        pass keeps every step's operands for them. ``wanted``: the inputs whose environments are
        needed (default all); products leading only to others are skipped and their
        environments are ``None``.
        """
        tensors = list(tensors)
        produced = len(tensors)
        needed = [True] * produced if wanted is None else [False] * produced
        for index in wanted or ():
            needed[index] = True
        shapes: list[Any] = [None] * produced + list(self.product_shapes)  # inputs': when needed
        operands = []
        for step in self.steps:
            for index in (step.first, step.second):
                if index < produced and needed[index]:
                    shapes[index] = K.shape(tensors[index])
            first = _as_matrix(K, tensors[step.first], step.first_layout)
            second = _as_matrix(K, tensors[step.second], step.second_layout)
            tensors[step.first] = tensors[step.second] = None
            operands.append((first, second))
            tensors.append(K.matmul(first, second))
            needed.append(needed[step.first] or needed[step.second])
        result = tensors[self.result]
        environments: list[Any] = [None] * len(tensors)
        environments[self.result] = K.reshape(cotangent, K.shape(result))
        for number in range(len(self.steps) - 1, -1, -1):
            step, (first, second) = self.steps[number], operands[number]
            environment = environments[produced + number]
            environments[produced + number] = operands[number] = None
            if environment is None:
                continue
            if needed[step.first]:
                environments[step.first] = _from_matrix(
                    K, K.matmul(environment, _swap_last(K, second, len(step.second_layout.shape))),
                    step.first_layout, shapes[step.first])
            if needed[step.second]:
                environments[step.second] = _from_matrix(
                    K, K.matmul(_swap_last(K, first, len(step.first_layout.shape)), environment),
                    step.second_layout, shapes[step.second])
        return result, environments[:produced]


def compile_path(operand_legs: Sequence[Legs], path: Sequence[Sequence[int]], sizes: dict[int, int],
                 max_ndim: int, output: Sequence[int] = ()) -> CompiledContraction:
    """Compile a linear-format path into steps on tensor ids.

    Operands have ids ``0..len(operand_legs)-1``; each step's result gets the next id. A leg
    shared by more than two operands (a hyperindex) stays until its last tensor is reached; every
    leg is in at least two operands, or in ``output``.
    """
    legs = [tuple(lg) for lg in operand_legs]
    counts = Counter(leg for lg in legs for leg in set(lg))
    counts.update(set(output))
    lonely = [leg for leg, count in counts.items() if count < 2]
    if lonely:
        raise ValueError(f"legs {lonely} appear in one operand only and not in the output")
    alive = list(range(len(legs)))
    steps: list[PairStep] = []

    def contract(first: int, second: int) -> int:
        pair = set(legs[first]) | set(legs[second])
        for leg in set(legs[first]):
            counts[leg] -= 1
        for leg in set(legs[second]):
            counts[leg] -= 1
        keep = {leg for leg in pair if counts[leg] > 0}
        step = compile_pair(legs[first], legs[second], sizes, max_ndim, (first, second), keep)
        steps.append(step)
        legs.append(step.result_legs)
        counts.update(step.result_legs)
        return len(legs) - 1

    for contraction in path:
        group = [alive[i] for i in contraction]
        for i in sorted(contraction, reverse=True):
            alive.pop(i)
        result = group[0]
        for other in group[1:]:
            result = contract(result, other)
        alive.append(result)
    while len(alive) > 1:  # pieces a partial path left apart: outer products
        alive.append(contract(alive.pop(0), alive.pop(0)))
    largest = max(_size(lg, sizes) for lg in legs) if legs else 1
    flops = sum(math.prod(step.first_layout.shape) * step.second_layout.shape[-1] for step in steps)
    writes = sum(_size(step.result_legs, sizes) for step in steps)
    return CompiledContraction(tuple(steps), alive[0], legs[alive[0]], largest, flops, writes)


def _swap_last(K: ArrayBackend, array: Any, ndim: int) -> Any:
    """A (stack of) matrix(es) of ``ndim`` dimensions, transposed."""
    return K.transpose(array) if ndim == 2 else K.transpose(array, (0, 2, 1))


def _from_matrix(K: ArrayBackend, matrix: Any, layout: OperandLayout, shape: tuple[int, ...]) -> Any:
    """The inverse of :func:`_as_matrix`: an operand's matrix view back in the operand's layout."""
    array = _swap_last(K, matrix, len(layout.shape)) if layout.transposed else matrix
    for moved, inverse in layout.inverse_moves:
        array = K.transpose(K.reshape(array, moved), inverse)
    return K.reshape(array, shape)


def _how(layout: OperandLayout) -> tuple[int, ...] | OperandLayout:
    """The matrix shape where a reshape alone lays an operand out, else its layout."""
    return layout.shape if not layout.moves and not layout.transposed else layout


def _taken(tensors: list, index: int) -> Any:
    """``tensors[index]``, its slot emptied: the caller holds the only reference the list had."""
    tensor, tensors[index] = tensors[index], None
    return tensor


def _as_matrix(K: ArrayBackend, array: Any, layout: OperandLayout) -> Any:
    """An operand laid out as its step's matrix (or stack of matrices). Each move reassigns
    ``array``, so that an operand handed over (:func:`_taken`) is freed once its first copy is made:
    a permutation of two moves holds two copies of a large state, not the state and two copies
    (the 24-qubit ladder's state: three 256 MiB buffers at a time instead of four, whose pages a
    first call touches fresh)."""
    for shape, axes in layout.moves:  # permute(), inlined: its argument would keep ``array``
        array = K.transpose(K.reshape(array, shape), axes)
    array = K.reshape(array, layout.shape)
    return _swap_last(K, array, len(layout.shape)) if layout.transposed else array
