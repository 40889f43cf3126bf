"""Helpers shared by the peer adapters."""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
from adam import Adam
from specs import LIGHT_CONE, Spec


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


#: cotengra repeats per network for the light-cone rows (150 distinct networks for a 100-node QAOA
#: energy: 64 repeats would spend most of an hour searching); what the issue measured quimb with
LIGHT_CONE_REPEATS = 16


def cotengra_optimizer(max_repeats: int = 64) -> Any:
    """The contraction-path optimizer tensorcircuit and quimb share: tensorcircuit's ``"cotengra"``
    preset (``ReusableHyperOptimizer``: greedy and kahypar trials where kahypar is installed, 64
    repeats or 30 s, ``minimize="combo"``, searched once per network and reused) without its
    process pool (the thread count is pinned). The light-cone rows pass ``max_repeats=16``
    (:data:`LIGHT_CONE_REPEATS`); everything else about the search stays the same."""
    import importlib.util

    import cotengra as ctg

    methods = ["greedy", "kahypar"] if importlib.util.find_spec("kahypar") else ["greedy"]
    return ctg.ReusableHyperOptimizer(methods=methods, max_repeats=max_repeats, max_time=30, minimize="combo",
                                      parallel=False, progbar=False)


def repeats_for(spec: Spec) -> int:
    """cotengra repeats for ``spec``: :data:`LIGHT_CONE_REPEATS` on the light-cone rows, else 64."""
    return LIGHT_CONE_REPEATS if spec.workload in LIGHT_CONE else 64


def pauli_terms(spec: Spec) -> list[tuple[float, str, tuple[int, ...]]]:
    """The Hamiltonian's terms as ``(coefficient, letters, qubits)``: the non-identity letters and
    the qubits they act on, in qubit order."""
    terms = []
    for coefficient, pauli in spec.hamiltonian:
        qubits = tuple(q for q, letter in enumerate(pauli) if letter != "I")
        terms.append((coefficient, "".join(pauli[q] for q in qubits), qubits))
    return terms
