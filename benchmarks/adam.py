"""The textbook Adam update (Kingma & Ba; β = (0.9, 0.999), ε = 1e-8 added to sqrt of v̂).

The same arithmetic as ``torch.optim.Adam`` and tyxonq's NumPy Adam. Engines whose library has
no optimizer with exactly this update (pennylane's ``AdamOptimizer`` scales ε differently, qulacs
has none) take their steps from here, so every engine follows the same trajectory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8


def adam_update(x: Any, gradient: Any, first: Any, second: Any, step: int, learning_rate: float,
                xp: Any = np) -> tuple[Any, Any, Any]:
    """One functional Adam update (``step`` counts from 1); ``xp`` is the array module
    (``numpy`` or ``jax.numpy``). Returns the new ``x``, first and second moments."""
    first = BETA1 * first + (1 - BETA1) * gradient
    second = BETA2 * second + (1 - BETA2) * gradient ** 2
    corrected1 = first / (1 - BETA1 ** step)
    corrected2 = second / (1 - BETA2 ** step)
    return x - learning_rate * corrected1 / (xp.sqrt(corrected2) + EPSILON), first, second


class Adam:
    """Stateful NumPy Adam: ``step(gradient)`` updates ``x`` in place."""

    def __init__(self, x0: np.ndarray, learning_rate: float):
        self.x = np.array(x0, dtype=np.float64)
        self.learning_rate = learning_rate
        self.first = np.zeros_like(self.x)
        self.second = np.zeros_like(self.x)
        self.count = 0

    def step(self, gradient: np.ndarray) -> None:
        self.count += 1
        self.x, self.first, self.second = adam_update(
            self.x, np.asarray(gradient, dtype=np.float64), self.first, self.second, self.count,
            self.learning_rate)
