"""A tensor network's legs as bit masks: each leg one bit, each tensor the mask of its legs, so
that the unions, intersections and sizes a path search evaluates millions of times are integer
operations rather than set operations.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["LegMasks", "PairwiseContraction"]


class LegMasks:
    """The legs of a network (``inputs``: each tensor's legs; ``output``: the open legs) as bits.

    ``masks[i]`` is tensor ``i``'s mask, ``output`` the open legs' mask and ``counts[b]`` how many
    tensors hold the leg of bit ``b``; :meth:`size` is the number of elements of a tensor with a
    mask's legs.

    Examples
    --------
    >>> legs = LegMasks([{"a"}, {"a", "b"}], {"b"}, {"a": 2, "b": 3})
    >>> legs.masks, legs.output, legs.counts, legs.size(legs.masks[1])
    ([1, 3], 2, [2, 1], 6.0)
    """

    def __init__(self, inputs: Sequence[set], output: set, size_dict: dict):
        names = sorted({leg for term in inputs for leg in term} | set(output), key=str)
        bit = {leg: 1 << position for position, leg in enumerate(names)}
        self.masks = [sum(bit[leg] for leg in term) for term in inputs]
        self.output = sum(bit[leg] for leg in output)
        self.counts = [0] * len(names)
        for term in inputs:
            for leg in term:
                self.counts[bit[leg].bit_length() - 1] += 1
        self._sizes = [size_dict[leg] for leg in names]
        #: the one size every leg has (a circuit's qubit legs: 2), else None; and its log2
        self._uniform_size = self._sizes[0] if len(set(self._sizes)) == 1 else None
        self._uniform = None if self._uniform_size is None else math.log2(self._uniform_size)
        by_size: dict[int, int] = {}
        for leg, size in zip(names, self._sizes):
            by_size[size] = by_size.get(size, 0) | bit[leg]
        self._log_sizes = [(math.log2(size), mask) for size, mask in by_size.items() if size != 1]

    def size(self, mask: int) -> float:
        """Elements of a tensor with the legs of ``mask``."""
        if self._uniform is not None:
            return 2.0 ** (self._uniform * mask.bit_count())
        return 2.0 ** sum(log_size * (mask & legs).bit_count() for log_size, legs in self._log_sizes)

    def exact_size(self, mask: int) -> int:
        """Elements of a tensor with the legs of ``mask``, as an exact integer."""
        if self._uniform_size is not None:
            return self._uniform_size ** mask.bit_count()
        total = 1
        while mask:
            low = mask & -mask
            mask ^= low
            total *= self._sizes[low.bit_length() - 1]
        return total

    def held_by(self, holders: int) -> int:
        """The mask of the legs, not open, that exactly ``holders`` tensors hold."""
        return sum(1 << index for index, count in enumerate(self.counts)
                   if count == holders and not (1 << index) & self.output)


class PairwiseContraction:
    """A network's tensors contracted two at a time on their leg masks: which legs a contraction
    leaves (:meth:`result`), and how many tensors still hold each leg, kept up to date as pairs
    are contracted (:meth:`contract`). A leg that is not open is summed when both operands are
    its last two holders, or when one operand is its only holder.

    Examples
    --------
    >>> legs = LegMasks([{"a"}, {"a", "b"}, {"b"}], set(), {"a": 2, "b": 2})
    >>> pairs = PairwiseContraction(legs)
    >>> merged = pairs.contract(legs.masks[0], legs.masks[1])
    >>> merged, pairs.contract(merged, legs.masks[2])
    (2, 0)
    """

    def __init__(self, legs: LegMasks) -> None:
        self.counts, self.output = list(legs.counts), legs.output
        self.held_once, self.held_twice = legs.held_by(1), legs.held_by(2)

    def result(self, first: int, second: int) -> int:
        """The legs left by contracting tensors with legs ``first`` and ``second``."""
        shared = first & second
        return (first | second) & ~((shared & self.held_twice) | ((first ^ second) & self.held_once))

    def contract(self, first: int, second: int) -> int:
        """:meth:`result`, and each leg both held has one holder fewer from now on."""
        result = self.result(first, second)
        shared, counts = first & second, self.counts
        while shared:
            low = shared & -shared
            shared ^= low
            index = low.bit_length() - 1
            counts[index] -= 1
            if not low & self.output:
                self.held_twice, self.held_once = self.held_twice & ~low, self.held_once & ~low
                if counts[index] == 2:
                    self.held_twice |= low
                elif counts[index] == 1:
                    self.held_once |= low
        return result
