"""Results of a matrix-product state without its ``2^n`` amplitudes: environments, expectations,
reduced density matrices, marginals, amplitudes.

Everything is a sweep over the sites between the first and last qubit a result touches, starting
from the left environment of the first and ending in the right environment of the last. In
mixed-canonical form an environment on the centre's side is the identity; the others are made
once per state and shared by every term of a Pauli sum. A sweep carries ``E[x, p, y]``: the ket
and bra bonds and ``p``, the flattened legs still open -- a ket and bra index pair per site of a
reduced density matrix or of a multi-qubit operator not yet closed, one shared index per site of
a marginal distribution. Operators close their legs at their last site. Arrays have at most 5
dimensions.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics.protocol import ArrayBackend
from .state import MPSState

__all__ = ["left_environment", "right_environment", "sweep_region", "operator_expectation",
           "pauli_string_value", "reduced_density_matrix", "marginal_probability", "amplitude",
           "dense_state", "entanglement_entropy"]


# -- environments ------------------------------------------------------------------------------
def left_environment(state: MPSState, site: int) -> Any:
    """``L[x, y]``: sites ``0 .. site - 1`` of ``<psi|psi>`` contracted (ket bond, bra bond)."""
    K = state.K
    key = ("left", site)
    if key not in state.environments:
        if site <= state.centre:
            dimension = 1 if site == 0 else K.shape(state.sites[site - 1])[2]
            value = K.eye(dimension, dtype=K.dtype)
        else:
            previous = left_environment(state, site - 1)
            x, y = K.shape(previous)
            value = _plain_step(K, K.reshape(previous, (x, 1, y)), state.sites[site - 1])
            value = K.reshape(value, (K.shape(value)[0], K.shape(value)[2]))
        state.environments[key] = value
    return state.environments[key]


def right_environment(state: MPSState, site: int) -> Any:
    """``R[u, v]``: sites ``site .. n - 1`` contracted (``site == n``: the 1 x 1 identity)."""
    K = state.K
    key = ("right", site)
    if key not in state.environments:
        if site > state.centre:
            dimension = 1 if site == state.num_sites else K.shape(state.sites[site])[0]
            value = K.eye(dimension, dtype=K.dtype)
        else:
            after = right_environment(state, site + 1)
            A = state.sites[site]
            value = K.einsum("xsv,ysv->xy", K.einsum("xsu,uv->xsv", A, after), K.conj(A))
        state.environments[key] = value
    return state.environments[key]


# -- one sweep ---------------------------------------------------------------------------------
def _plain_step(K: ArrayBackend, E: Any, A: Any, op: Any = None) -> Any:
    T = K.einsum("xpy,xsu->ypsu", E, A)
    if op is not None:
        T = K.einsum("ts,ypsu->yptu", op, T)
    return K.einsum("ypsu,ysv->upv", T, K.conj(A))


def _open_step(K: ArrayBackend, E: Any, A: Any, diagonal: bool) -> Any:
    T = K.einsum("xpy,xsu->ypsu", E, A)
    if diagonal:
        out = K.einsum("ypsu,ysv->upsv", T, K.conj(A))
        u, p, s, v = K.shape(out)
        return K.reshape(out, (u, p * s, v))
    out = K.einsum("ypsu,ytv->upstv", T, K.conj(A))
    u, p, s, t, v = K.shape(out)
    return K.reshape(out, (u, p * s * t, v))


def _legs_last(K: ArrayBackend, E: Any, dims: list[int], chosen: list[int]) -> Any:
    """``E[x, p, y]`` with the open legs ``chosen`` (positions in ``dims``) moved to the end of
    ``p``, by one gather of the flattened index."""
    order = [j for j in range(len(dims)) if j not in chosen] + list(chosen)
    if order == list(range(len(dims))):
        return E
    new_shape = [dims[j] for j in order]
    grid = np.indices(new_shape).reshape(len(dims), -1)
    old = [None] * len(dims)
    for position, j in enumerate(order):
        old[j] = grid[position]
    return K.take(E, np.ravel_multi_index(old, dims).tolist(), axis=1)


def _closing_vector(K: ArrayBackend, matrix: Any, qubits: Sequence[int]) -> Any:
    """``c[(s_1 t_1)(s_2 t_2)...]`` over the operator's legs in ascending site order:
    ``matrix[t, s]`` with ``s``, ``t`` read in the operator's own qubit order."""
    k = len(qubits)
    ascending = sorted(range(k), key=lambda j: qubits[j])  # leg position -> operator qubit
    grid = np.indices((2,) * (2 * k)).reshape(2 * k, -1)  # (s_1, t_1, s_2, t_2, ...)
    row = np.zeros(grid.shape[1], dtype=np.int64)
    column = np.zeros(grid.shape[1], dtype=np.int64)
    for leg, j in enumerate(ascending):
        row += grid[2 * leg + 1] << (k - 1 - j)
        column += grid[2 * leg] << (k - 1 - j)
    return K.take(K.reshape(matrix, (4 ** k,)), (row * 2 ** k + column).tolist())


def sweep_region(state: MPSState, first: int, last: int, ops: dict | None = None,
                 operators: Sequence[tuple[Any, tuple]] = (), keep: Sequence[int] = (),
                 diagonal: bool = False) -> Any:
    """Contract sites ``first .. last`` between their environments.

    ``ops``: one-site matrices applied at their sites; ``operators``: ``(matrix, qubits)`` on
    several qubits, closed at their last qubit; ``keep``: sites left open (ket and bra, or one
    shared index with ``diagonal``). Returns the open legs' values, flattened in ascending
    site order (``(s, t)`` pairs, or ``s``), or a scalar when none stay open.
    """
    K = state.K
    ops = ops or {}
    left = left_environment(state, first)
    E = K.reshape(left, (K.shape(left)[0], 1, K.shape(left)[1]))
    legs: list[tuple[Any, int]] = []  # (owner, site) of each open leg; owner None: kept
    dims: list[int] = []
    closing = {max(qubits): (matrix, qubits) for matrix, qubits in operators}
    owned = {q: index for index, (_, qubits) in enumerate(operators) for q in qubits}
    for site in range(first, last + 1):
        A = state.sites[site]
        if site in owned or site in keep:
            shared = diagonal and site in keep
            E = _open_step(K, E, A, shared)
            legs.append((owned.get(site), site))
            dims.append(2 if shared else 4)
        else:
            E = _plain_step(K, E, A, ops.get(site))
        if site in closing:
            matrix, qubits = closing[site]
            mine = [j for j, (owner, _) in enumerate(legs) if owner == owned[site]]
            E = _legs_last(K, E, dims, mine)
            x, _, y = K.shape(E)
            rest = int(np.prod([d for j, d in enumerate(dims) if j not in mine]))
            E = K.einsum("xpqy,q->xpy", K.reshape(E, (x, rest, 4 ** len(mine), y)),
                         _closing_vector(K, matrix, qubits))
            legs = [leg for j, leg in enumerate(legs) if j not in mine]
            dims = [d for j, d in enumerate(dims) if j not in mine]
    values = K.einsum("upv,uv->p", E, right_environment(state, last + 1))
    return values if legs else values[0]


# -- results -----------------------------------------------------------------------------------
def operator_expectation(state: MPSState, matrices: list, groups: list) -> Any:
    """``<psi| O_1 ⊗ ... |psi>`` (complex) for non-overlapping ``(matrix, qubits)``."""
    ops = {qubits[0]: matrix for matrix, qubits in zip(matrices, groups) if len(qubits) == 1}
    operators = [(matrix, tuple(qubits)) for matrix, qubits in zip(matrices, groups)
                 if len(qubits) > 1]
    touched = [q for qubits in groups for q in qubits]
    return sweep_region(state, min(touched), max(touched), ops, operators)


def pauli_string_value(state: MPSState, factors: dict[int, Any]) -> Any:
    """``<psi|P|psi>`` for one-site factors ``{site: matrix}`` (through shared environments)."""
    return sweep_region(state, min(factors), max(factors), factors)


def reduced_density_matrix(state: MPSState, qubits: Sequence[int]) -> Any:
    """The density matrix of ``qubits`` (in the order given)."""
    K = state.K
    k = len(qubits)
    pairs = sweep_region(state, min(qubits), max(qubits), keep=qubits)
    ascending = sorted(qubits)
    # entry [(s_1 t_1)(s_2 t_2)...] in ascending order -> rho[s, t] in the requested order
    grid = np.indices((2,) * k + (2,) * k).reshape(2 * k, -1)  # (s in order, t in order)
    flat = np.zeros(grid.shape[1], dtype=np.int64)
    for j, q in enumerate(qubits):
        leg = ascending.index(q)
        flat += (grid[j] * 2 + grid[k + j]) << (2 * (k - 1 - leg))
    return K.reshape(K.take(pairs, flat.tolist()), (2 ** k, 2 ** k))


def marginal_probability(state: MPSState, qubits: Sequence[int]) -> Any:
    """Probabilities of the outcomes of ``qubits`` (in the order given; the first most
    significant), real."""
    K = state.K
    k = len(qubits)
    values = sweep_region(state, min(qubits), max(qubits), keep=qubits, diagonal=True)
    ascending = sorted(qubits)
    grid = np.indices((2,) * k).reshape(k, -1)
    flat = np.zeros(grid.shape[1], dtype=np.int64)
    for j, q in enumerate(qubits):
        flat += grid[j] << (k - 1 - ascending.index(q))
    return K.real(K.take(values, flat.tolist()))


def amplitude(state: MPSState, bits: Sequence[int]) -> Any:
    """``<bits|psi>``: one vector-matrix product per site."""
    K = state.K
    vector = None
    for site, bit in zip(state.sites, bits):
        matrix = site[:, bit, :]
        vector = matrix if vector is None else K.matmul(vector, matrix)
    return K.reshape(vector, ())


def dense_state(state: MPSState) -> Any:
    """The ``2^n`` amplitudes (qubit 0 most significant)."""
    K = state.K
    psi = K.reshape(state.sites[0], (2, K.shape(state.sites[0])[2]))
    for site in state.sites[1:]:
        left, _, right = K.shape(site)
        psi = K.reshape(K.matmul(psi, K.reshape(site, (left, 2 * right))), (-1, right))
    return K.reshape(psi, (-1,))


def entanglement_entropy(state: MPSState, cut: int) -> Any:
    """Von Neumann entropy (natural log) across the bond between sites ``cut - 1`` and ``cut``."""
    K = state.K
    state.move_centre(cut - 1)
    left, _, right = K.shape(state.sites[cut - 1])
    _, values, _ = K.svd(K.reshape(state.sites[cut - 1], (left * 2, right)), full_matrices=False)
    p = values ** 2 / K.sum(values ** 2)
    safe = K.where(p > 0, p, 1.0)
    return 0.0 - K.sum(p * K.log(safe))  # not -0.0 for a product state
