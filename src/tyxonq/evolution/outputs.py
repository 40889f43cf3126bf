"""What a propagation returns at its output times."""

from __future__ import annotations

import numbers
from typing import Any

from ..numerics.protocol import ArrayBackend

__all__ = ["collected"]


def collected(K: ArrayBackend, outputs: list[Any]) -> Any:
    """``outputs`` stacked along a new first axis when each is a backend array or a number (states,
    observables, array-valued callbacks), else the list itself (callbacks returning tuples,
    dictionaries, circuits).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> collected(K, [1.0, 2.0]).tolist(), collected(K, [(1, 2), (3, 4)])
    ([1.0, 2.0], [(1, 2), (3, 4)])
    """
    if all(K.is_array(o) or isinstance(o, numbers.Number) for o in outputs):
        return K.stack([K.asarray(o) for o in outputs])
    return outputs
