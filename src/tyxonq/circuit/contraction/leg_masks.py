"""A tensor network's legs as bit masks: each leg one bit, each tensor the mask of its legs, so
that the unions, intersections and sizes a path search evaluates millions of times are integer
operations rather than set operations.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["LegMasks"]


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
        self._uniform_size = self._sizes[0] if len(set(self._sizes)) == 1 else None
        by_size: dict[int, int] = {}
        for leg in names:
            by_size[size_dict[leg]] = by_size.get(size_dict[leg], 0) | bit[leg]
        self._log_sizes = [(math.log2(size), mask) for size, mask in by_size.items() if size != 1]
        #: log2 of the one size every leg has (a circuit's qubit legs: 1.0), else None
        self._uniform = self._log_sizes[0][0] if len(by_size) == 1 and self._log_sizes else None

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
