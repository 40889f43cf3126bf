"""The backward light cone: which operations can affect measurements on given qubits.

For ``<psi|O|psi>`` with ``O`` on qubits ``M``, a gate that acts only on qubits outside the cone
of ``M`` at its time cancels against its adjoint in the bra, so it is dropped exactly.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..operations.operation import Operation

__all__ = ["light_cone"]


def light_cone(operations: Sequence[Operation], measured: Iterable[int]) -> list[int]:
    """Indices (in circuit order) of the operations inside the backward light cone of ``measured``.

    Examples
    --------
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1)), Operation("x", (2,))]
    >>> light_cone(ops, [1])
    [0, 1]
    """
    cone = set(measured)
    kept = []
    for index in range(len(operations) - 1, -1, -1):
        qubits = operations[index].qubits
        if cone.intersection(qubits):
            cone.update(qubits)
            kept.append(index)
    return kept[::-1]
