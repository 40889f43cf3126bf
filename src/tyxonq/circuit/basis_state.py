"""Circuits that keep a basis state a basis state: results by propagation, at any width.

A gate that maps every basis state to one basis state times a phase (a permutation such as X, Y,
CX, CY, CCX, SWAP, CSWAP, iSWAP, or a gate diagonal on all its qubits: Z, S, T, RZ, CZ, CPHASE,
RZZ, ...) takes ``c|b>`` to ``c'|b'>``. A circuit of such gates started from a basis state
(``|0...0>``, or a one-hot ``inputs`` vector) therefore holds one basis state throughout, and its
results follow from the final bits ``b`` and phase ``c`` in time linear in the gates, however
many qubits it has: ``<b|O_1 ... O_m|b>`` is a product of one diagonal entry per operator, an
amplitude is ``c`` or ``0``, a marginal is one-hot, every shot reads ``b``. Reversible
arithmetic (adders, multipliers, oracles) is made of such gates; contracting it as a network can
cost more than a machine has.

Gates with angles qualify only when their angles are plain numbers (not traced, batched or
recorded by autograd): results then need no gradient machinery.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..numerics.cache_registry import register_function_cache
from ..numerics.protocol import ArrayBackend
from .operations.gates import GATES, gate_matrix
from .operations.operation import Operation

__all__ = ["BasisState", "basis_state", "PERMUTING_GATES", "operator_product", "pauli_values", "one_hot"]

#: gates that permute basis states (with phases) for every parameter value; gates diagonal on all
#: their qubits (GateSpec.diagonal_on) qualify too
PERMUTING_GATES = frozenset({"i", "x", "y", "cx", "cy", "swap", "iswap", "ccx", "cswap"})


@dataclass(frozen=True)
class BasisState:
    """The state ``phase |bits>`` (``bits[q]`` is qubit ``q``'s bit)."""

    bits: tuple[int, ...]
    phase: complex

    def index(self, qubits: Sequence[int]) -> int:
        """The basis index of ``qubits``' bits (the first qubit most significant)."""
        index = 0
        for q in qubits:
            index = 2 * index + self.bits[q]
        return index


def basis_state(num_qubits: int, operations: Sequence[Operation], inputs: Any) -> BasisState | None:
    """The final :class:`BasisState` of the circuit, or ``None`` when it is not one (a gate that
    superposes, a channel, angles that are not plain numbers, an input that is no basis state).

    Examples
    --------
    >>> from tyxonq.circuit.operations.operation import Operation
    >>> state = basis_state(3, [Operation("x", (0,)), Operation("ccx", (0, 2, 1)),
    ...                         Operation("cx", (0, 2))], None)
    >>> state.bits, state.index([0, 1, 2])
    ((1, 0, 1), 5)
    >>> basis_state(1, [Operation("h", (0,))], None) is None
    True
    """
    for op in operations:  # the common case, a superposing gate, is refused before any work
        if not _permutes(op):
            return None
    start = _basis_input(num_qubits, inputs)
    if start is None:
        return None
    bits, phase = list(start.bits), start.phase
    for op in operations:
        column = 0
        for q in op.qubits:
            column = 2 * column + bits[q]
        row, factor = _monomial(op.gate, tuple(float(p) for p in op.params), op.dagger)[column]
        phase *= factor
        for position, q in enumerate(op.qubits):
            bits[q] = (row >> (len(op.qubits) - 1 - position)) & 1
    return BasisState(tuple(bits), complex(phase))


def operator_product(K: ArrayBackend, state: BasisState, matrices: Sequence[Any],
                     groups: Sequence[Sequence[int]]) -> Any:
    """``<b| O_1 ... O_m |b>`` for operators on disjoint qubit groups: one diagonal entry of each
    (backend arrays: gradients with respect to the operators flow)."""
    value = K.asarray(1.0 + 0j, K.dtype)
    for matrix, qubits in zip(matrices, groups):
        index = state.index(qubits)
        value = value * matrix[index, index]
    return value


def pauli_values(state: BasisState, strings: Sequence[str]) -> np.ndarray:
    """``<b|P|b>`` for each Pauli string: 0 with an X or Y, else the parity of its Z qubits' bits.

    Examples
    --------
    >>> pauli_values(BasisState((1, 0), 1.0), ["ZI", "IZ", "ZZ", "XI"]).tolist()
    [-1.0, 1.0, -1.0, 0.0]
    """
    values = np.empty(len(strings))
    for i, string in enumerate(strings):
        if "X" in string or "Y" in string:
            values[i] = 0.0
        else:
            values[i] = (-1.0) ** sum(bit for bit, letter in zip(state.bits, string) if letter == "Z")
    return values


def one_hot(size: int, index: int) -> np.ndarray:
    vector = np.zeros(size)
    vector[index] = 1.0
    return vector


def _permutes(op: Operation) -> bool:
    if op.channel is not None or op.gate not in GATES or op.gate == "unitary":
        return False
    if op.gate not in PERMUTING_GATES and len(op.diagonal_on) != len(op.qubits):
        return False
    return all(isinstance(p, numbers.Real) and not isinstance(p, bool) for p in op.params)


@register_function_cache
@functools.lru_cache(maxsize=4096)
def _monomial(gate: str, params: tuple[float, ...], dagger: bool) -> tuple[tuple[int, complex], ...]:
    """For each column of the gate's matrix, the row of its one nonzero entry and that entry."""
    from ..numerics import get_backend

    matrix = np.asarray(gate_matrix(get_backend("numpy"), gate, params, dagger))
    rows = np.argmax(np.abs(matrix), axis=0)
    return tuple((int(row), complex(matrix[row, column])) for column, row in enumerate(rows))


def _basis_input(num_qubits: int, inputs: Any) -> BasisState | None:
    if inputs is None:
        return BasisState((0,) * num_qubits, 1.0)
    if not isinstance(inputs, np.ndarray):  # a backend array: maybe recorded by autograd
        return None
    nonzero = np.flatnonzero(inputs)
    if len(nonzero) != 1:
        return None
    index = int(nonzero[0])
    return BasisState(tuple((index >> (num_qubits - 1 - q)) & 1 for q in range(num_qubits)),
                      complex(inputs[index]))
