"""Permutation moves (runs of adjacent legs, a dimension limit, two passes for large scattered
permutations) against NumPy's transpose."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BACKEND_IDS, make_backend
from tyxonq.numerics import moves
from tyxonq.numerics.moves import permutation_moves, permute


@st.composite
def permutations(draw, max_legs=12):
    """Leg sizes (1 to 4) and a target order of the legs."""
    count = draw(st.integers(1, max_legs))
    sizes = {leg: draw(st.integers(1, 4)) for leg in range(count)}
    target = tuple(draw(st.permutations(range(count))))
    return sizes, target


def permuted(K, sizes, target, max_ndim):
    """The moves' result on a flat ``arange`` (every move starts with a reshape), and NumPy's."""
    legs = tuple(sizes)
    array = np.arange(math.prod(sizes.values()))
    found = permute(K, K.asarray(array), permutation_moves(legs, target, sizes, max_ndim))
    expected = np.transpose(array.reshape([sizes[leg] for leg in legs]), target).reshape(-1)
    return np.asarray(K.to_numpy(K.reshape(found, (-1,)))), expected


@settings(max_examples=150, deadline=None)
@given(permutation=permutations(), max_ndim=st.sampled_from([4, 6, 32]),
       staged_from=st.sampled_from([1, 64, 2 ** 40]), inner=st.sampled_from([2, 8, 32]))
def test_moves_permute_as_numpys_transpose_within_the_dimension_limit(permutation, max_ndim, staged_from,
                                                                      inner):
    """Direct, run-by-run and two-pass moves all give the transpose, with at most ``max_ndim``
    dimensions a move; two passes only from ``STAGED_MIN_SIZE`` entries where both innermost runs
    (the tensor's and the target's) are shorter than ``INNER_BLOCK``, the second pass keeping the
    target's innermost ``INNER_BLOCK`` entries (or all, when fewer) in place."""
    sizes, target = permutation
    legs = tuple(sizes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(moves, "STAGED_MIN_SIZE", staged_from)
        patch.setattr(moves, "INNER_BLOCK", inner)
        found, expected = permuted(make_backend("numpy"), sizes, target, max_ndim)
        planned = permutation_moves(legs, target, sizes, max_ndim)
    np.testing.assert_array_equal(found, expected)
    assert all(len(shape) <= max_ndim and sorted(axes) == list(range(len(shape))) for shape, axes in planned)
    runs, order = moves._runs(legs, target, sizes)
    if len(planned) == 2 and len(runs) <= max_ndim:
        total = math.prod(sizes.values())
        assert total >= staged_from and max(runs[-1], runs[order[-1]]) < inner
        shape, axes = planned[1]
        assert axes[-1] == len(shape) - 1 and shape[-1] >= min(inner, total)


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_a_large_scattered_permutation_takes_two_passes_on_every_backend(backend):
    """A reversed 20-leg tensor (2^20 entries): two moves (when the backend's dimension limit
    allows one transpose), equal to the transpose on every backend."""
    K = make_backend(backend)
    legs = tuple(range(20))
    sizes = dict.fromkeys(legs, 2)
    if K.capabilities.max_ndim >= 20:
        assert len(permutation_moves(legs, legs[::-1], sizes, K.capabilities.max_ndim)) == 2
    found, expected = permuted(K, sizes, legs[::-1], K.capabilities.max_ndim)
    np.testing.assert_array_equal(found, expected)
