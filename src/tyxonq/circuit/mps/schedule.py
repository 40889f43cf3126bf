"""The order in which a circuit's gates reach the matrix-product state.

Two savings, both exact:

* one-qubit gates are not applied on their own: they wait on their qubit (multiplied together)
  and enter the next gate that touches it, as a factor of its matrix; what is left waits until
  the end;
* consecutive gates on disjoint qubits commute, so a run of them (a brickwork layer) is applied
  in the direction that starts nearest the orthogonality centre and sweeps away from it: the
  centre then moves one site between gates, instead of back across the chain at every layer.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .state import MPSState

__all__ = ["apply_operations"]


def apply_operations(state: MPSState, operations: Sequence[Any],
                     matrix_of: Callable[[Any], Any]) -> None:
    """Apply ``operations`` (gates with ``.qubits``; ``matrix_of(op)`` is the gate's matrix) to
    ``state``."""
    K = state.K
    waiting: dict[int, Any] = {}  # qubit -> product of the one-qubit gates not yet applied
    index = 0
    while index < len(operations):
        op = operations[index]
        if len(op.qubits) == 1:
            q = op.qubits[0]
            matrix = matrix_of(op)
            waiting[q] = matrix if q not in waiting else K.matmul(matrix, waiting[q])
            index += 1
            continue
        run, touched = [], set()
        while index < len(operations) and len(operations[index].qubits) > 1 \
                and touched.isdisjoint(operations[index].qubits):
            run.append(operations[index])
            touched.update(operations[index].qubits)
            index += 1
        first, last = min(touched), max(touched)
        descending = abs(state.centre - last) < abs(state.centre - first)
        for op in sorted(run, key=lambda o: min(o.qubits), reverse=descending):
            matrix = _absorbing(K, matrix_of(op), op.qubits, waiting)
            state.apply(matrix, op.qubits, centre_left=descending)
    for q, matrix in waiting.items():
        state.apply(matrix, (q,))


def _absorbing(K: Any, matrix: Any, qubits: tuple[int, ...], waiting: dict[int, Any]) -> Any:
    """``matrix`` times the waiting one-qubit gates of its qubits (applied before it)."""
    if not any(q in waiting for q in qubits):
        return matrix
    before = None
    for q in qubits:
        factor = waiting.pop(q, None)
        factor = factor if factor is not None else K.eye(2, dtype=K.dtype)
        before = factor if before is None else K.kron(before, factor)
    return K.matmul(matrix, before)
