"""The derivatives of a circuit's state with respect to its gate angles, all in one batched sweep.

``|d psi / d theta_s> = U_m ... (dU_k / d theta_s) ... U_1 |psi_0>`` for every angle ``s`` (of gate
``k``) is the circuit with gate ``k`` replaced by its derivative: a batch of circuits that differ
in one matrix each. They run as the lanes of one sweep (:func:`~tyxonq.circuit.statevector.lanes.
sweep_lanes`): gate ``k``'s matrix is a stack holding its derivative in lane ``s`` and itself in
the others, every other gate is shared, and each fused block is one batched matmul over the
``(angles, 2^n)`` stack. From these and the state come the quantum geometric tensor
(:mod:`tyxonq.geometry`).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..operations.gates import gate_derivative
from ..operations.operation import Operation
from .lanes import sweep_lanes
from .sweep import bind_matrices

__all__ = ["derivative_states"]


def derivative_states(K: Any, num_qubits: int, operations: Sequence[Operation],
                      slots: Sequence[tuple[int, int]], state: Any = None) -> Any:
    """``(len(slots), 2^n)``: row ``s`` is the derivative of the output state with respect to
    parameter ``slots[s][1]`` of operation ``slots[s][0]`` (``state``: the input state, ``None``
    for ``|0...0>``).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (0.0,))]  # d/dθ [cos θ/2, sin θ/2] at 0 = [0, 1/2]
    >>> np.round(derivative_states(K, 1, ops, [(0, 0)]).real, 6).tolist()
    [[0.0, 0.5]]
    """
    matrices = bind_matrices(K, operations)
    by_operation: dict[int, list[tuple[int, int]]] = {}
    for s, (k, j) in enumerate(slots):
        by_operation.setdefault(k, []).append((s, j))
    for k, entries in by_operation.items():
        op = operations[k]
        rows = [matrices[k]] * len(slots)
        for s, j in entries:
            rows[s] = gate_derivative(K, op.gate, op.params, j, op.dagger)
        matrices[k] = K.stack(rows)
    return sweep_lanes(K, num_qubits, operations, matrices, len(slots), state)
