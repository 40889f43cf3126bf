"""The derivatives of a circuit's state with respect to its gate angles, all in one batched sweep.

``|d psi / d theta_s> = U_m ... (dU_k / d theta_s) ... U_1 |psi_0>`` for every angle ``s`` (of gate
``k``). One forward sweep over the fused blocks carries the state and a growing stack of
derivatives: at a block ``B``, the derivatives of the angles inside it are ``dB/dθ_s |psi>``
(``B`` with its member ``k`` replaced by its derivative, one lane per angle, in one batched call:
:mod:`~tyxonq.circuit.statevector.lanes`), and every derivative already on the stack meets ``B``
itself, one shared matrix for the whole stack (matmuls as large as the stack). From these and
the state comes the quantum geometric tensor (:mod:`tyxonq.geometry`).
"""

from __future__ import annotations

from typing import Any, Sequence

from ...numerics.protocol import ArrayBackend
from ..operations.gates import gate_derivative
from ..operations.operation import Operation
from .lanes import block_matrix, full_matrices
from .placement import apply_placed, place
from .products import block_products
from .sweep import apply_block, bind_matrices, sweep_program, zero_state

__all__ = ["derivative_states"]

#: the stack of derivatives is kept in at most this many pieces (each block meets every piece;
#: joining copies the stack)
_PIECES = 8


def derivative_states(K: ArrayBackend, num_qubits: int, operations: Sequence[Operation],
                      slots: Sequence[tuple[int, int]], state: Any = None) -> Any:
    """``(len(slots), 2^n)``: row ``s`` is the derivative of the output state with respect to
    parameter ``slots[s][1]`` of operation ``slots[s][0]`` (``state``: the input state, ``None``
    for ``|0...0>``).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> ops = [Operation("ry", (0,), (0.0,))]  # d/dθ [cos θ/2, sin θ/2] at 0 = [0, 1/2]
    >>> (np.round(derivative_states(K, 1, ops, [(0, 0)]).real, 6) + 0.0).tolist()
    [[0.0, 0.5]]
    """
    max_ndim = K.capabilities.max_ndim
    program = sweep_program(num_qubits, operations, max_ndim)
    matrices = bind_matrices(K, operations)
    block_of = {member: b for b, block in enumerate(program.blocks) for member in block.members}
    in_block: dict[int, list[int]] = {}
    for s, (k, _) in enumerate(slots):
        in_block.setdefault(block_of[k], []).append(s)
    psi = zero_state(K, num_qubits) if state is None else state
    chunks, order = [], []  # the stack in pieces: joined only when the pieces grow many
    for b, block in enumerate(program.blocks):
        operator = block_products(K, [program.shapes[b]], [block.members], [(0,)], matrices)[0]
        if b in in_block:  # this block's derivatives, applied to the state before it
            new = _block_derivatives(K, block, matrices, operations, [slots[s] for s in in_block[b]],
                                     psi, num_qubits, max_ndim)
        if len(chunks) > _PIECES:
            chunks = [K.concatenate(chunks, axis=0)]
        for i, rows in enumerate(chunks):
            placement = place(block.qubits, num_qubits, lead=K.shape(rows)[0], diagonal=block.diagonal,
                              max_ndim=max_ndim, shape=K.shape(rows))
            chunks[i] = apply_block(K, rows, operator, placement, block.diagonal)
        psi = apply_block(K, psi, operator, block.placement, block.diagonal)
        if b in in_block:
            chunks.append(new)
            order += in_block[b]
    rows = chunks[0] if len(chunks) == 1 else K.concatenate(chunks, axis=0)
    position = {s: i for i, s in enumerate(order)}
    return K.take(rows, [position[s] for s in range(len(slots))], axis=0)


def _block_derivatives(K: ArrayBackend, block: Any, matrices: list, operations: Sequence[Operation],
                       slots: list[tuple[int, int]], psi: Any, num_qubits: int, max_ndim: int) -> Any:
    """``dB/dθ_s |psi>`` for the block's slots: the block's matrix with member ``k`` replaced by
    its derivative in lane ``s`` (the others shared), applied to ``psi`` in one batched call."""
    lanes = len(slots)
    lane_matrices = list(matrices)
    for k in {k for k, _ in slots}:
        op = operations[k]
        stack = [matrices[k]] * lanes
        for s, (owner, j) in enumerate(slots):
            if owner == k:
                stack[s] = gate_derivative(K, op.gate, op.params, j, op.dagger)
        lane_matrices[k] = K.stack(stack)
    operator = block_matrix(K, block, lane_matrices, lanes, max_ndim)
    placement = place(block.qubits, num_qubits, lead=lanes, diagonal=block.diagonal, max_ndim=max_ndim,
                      lanes=True)
    if block.diagonal and placement.kind != "diagonal":
        operator = full_matrices(K, operator)
    copies = K.reshape(psi, (1, 2 ** num_qubits)) * K.ones((lanes, 1), K.dtype_of(psi))
    return apply_placed(K, copies, operator, placement)
