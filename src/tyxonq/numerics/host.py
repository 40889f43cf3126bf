"""Reading backend values on the host, for decisions (step sizes, truncations) that do not carry
gradients."""

from __future__ import annotations

from typing import Any

import numpy as np

from .protocol import ArrayBackend

__all__ = ["host_values"]


def host_values(K: ArrayBackend, x: Any) -> np.ndarray:
    """``x``'s values as a NumPy array, gradients detached (readable under ``jax.grad`` and in
    PyTorch autograd alike); raises where they cannot be read (inside ``jit``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> host_values(tq.get_backend("numpy"), [1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    return np.asarray(K.to_numpy(K.detach(K.asarray(x))))
