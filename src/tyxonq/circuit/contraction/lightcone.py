"""The backward light cone: which operations can affect an observable on given qubits.

For ``<psi|O|psi>`` the operations after which nothing measured is touched cancel against their
adjoints in the bra. Walking the circuit backwards, each qubit is *outside* (the evolved
observable is the identity there), *block-diagonal* (every later operation on it was diagonal on
it and the observable's factor there is diagonal), or *dense*. An operation ``G = sum_d |d><d|_D
⊗ U_d`` (block-diagonal on its qubits ``D``, e.g. a control or any qubit of RZZ) commutes with the
evolved observable, and so cancels exactly, when its other qubits are all outside and none of
``D`` is dense. With no diagonal observable this is the usual light cone (gates on qubits all
outside it); with a diagonal one it also drops the diagonal gates that commute with it, whatever
their order in the circuit (a QAOA cost layer's edges away from a measured ZZ).

A trace-preserving channel ``E(rho) = sum_a K_a rho K_a^dagger`` is treated like a gate: in the
Heisenberg picture it maps the evolved observable ``A`` to ``sum_a K_a^dagger A K_a``, which is
``A`` itself when ``A`` is the identity on the channel's qubits (``sum_a K_a^dagger K_a = I``), or
block-diagonal there with Kraus operators diagonal on them.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..operations.operation import Operation

__all__ = ["light_cone"]

_BLOCK, _DENSE = 1, 2


def light_cone(operations: Sequence[Operation], measured: Iterable[int],
               diagonal: Iterable[int] = ()) -> list[int]:
    """Indices (in circuit order) of the operations inside the backward light cone of ``measured``.

    ``diagonal``: measured qubits on which the observable is diagonal (e.g. ``Z``).

    Examples
    --------
    >>> ops = [Operation("h", (0,)), Operation("cx", (0, 1)), Operation("x", (2,))]
    >>> light_cone(ops, [1])
    [0, 1]
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("rzz", (0, 1), (0.2,)), Operation("rz", (0,), (0.3,))]
    >>> light_cone(ops, [0], diagonal=[0])  # RZZ and RZ commute with Z_0
    [0]
    """
    diagonal = set(diagonal)
    state = {q: _BLOCK if q in diagonal else _DENSE for q in measured}
    kept = []
    for index in range(len(operations) - 1, -1, -1):
        operation = operations[index]
        if state.keys().isdisjoint(operation.qubits):
            continue  # outside the cone on every qubit: cancels (most operations of a small cone)
        positions = operation.diagonal_on
        block = [q for p, q in enumerate(operation.qubits) if p in positions]
        dense = [q for p, q in enumerate(operation.qubits) if p not in positions]
        if all(q not in state for q in dense) and all(state.get(q) != _DENSE for q in block):
            continue  # commutes with the evolved observable: cancels against its adjoint
        kept.append(index)
        for q in dense:
            state[q] = _DENSE
        for q in block:
            state.setdefault(q, _BLOCK)
    return kept[::-1]
