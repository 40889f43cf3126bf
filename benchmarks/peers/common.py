"""Helpers shared by the peer adapters."""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
from adam import Adam
from specs import Spec


def threads() -> int:
    """The pinned thread count the suite gives every engine."""
    return int(os.environ.get("BENCH_THREADS", "1"))


def reversed_qubit(n: int, q: int) -> int:
    """The index a little-endian library (qiskit, qulacs: qubit 0 = least significant bit) uses for
    our qubit ``q``, so its state vector comes out in our order."""
    return n - 1 - q


def chain_rule(spec: Spec, gate_gradient: np.ndarray, angle_sign: float = 1.0) -> np.ndarray:
    """Gradient with respect to ``spec.params`` from one entry per parametric gate (in gate order),
    given as derivatives with respect to the library's angle ``angle_sign * scale * param``."""
    gradient = np.zeros(spec.num_params)
    parametric = [g for g in spec.gates if g.param is not None]
    for gate, value in zip(parametric, gate_gradient, strict=True):
        gradient[gate.param] += angle_sign * gate.scale * value
    return gradient


def adam_loop(spec: Spec, value_and_grad: Callable[[np.ndarray], tuple[float, Any]]) -> Callable[[], Any]:
    """``spec.steps`` steps of :class:`adam.Adam` driven by ``value_and_grad``; the run returns the
    last evaluated point and its energy (tyxonq's ``history_x[-1]``, ``history_fun[-1]``)."""

    def run() -> tuple[np.ndarray, float]:
        optimizer = Adam(spec.params, spec.learning_rate)
        for _ in range(spec.steps):
            point = optimizer.x.copy()
            value, gradient = value_and_grad(point)
            optimizer.step(np.asarray(gradient, dtype=np.float64))
        return point, float(value)

    return run


def cotengra_optimizer() -> Any:
    """The contraction-path optimizer tensorcircuit and quimb share: tensorcircuit's ``"cotengra"``
    preset (``ReusableHyperOptimizer``: greedy and kahypar trials where kahypar is installed, 64
    repeats or 30 s, ``minimize="combo"``, searched once per network and reused) without its
    process pool (the thread count is pinned)."""
    import importlib.util

    import cotengra as ctg

    methods = ["greedy", "kahypar"] if importlib.util.find_spec("kahypar") else ["greedy"]
    return ctg.ReusableHyperOptimizer(methods=methods, max_repeats=64, max_time=30, minimize="combo",
                                      parallel=False, progbar=False)
