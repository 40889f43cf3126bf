"""Quantum geometry of parametrised states: the quantum geometric tensor and the Fubini-Study
metric, exact on every backend.

For a state ``|psi(p)>`` prepared by ``circuit_fn(p)``,

    Q_ij = <d_i psi | d_j psi> - <d_i psi | psi><psi | d_j psi>,

whose real part is the Fubini-Study metric (the quantum natural gradient's metric) and whose
imaginary part is half the Berry curvature. The parameters are traced through ``circuit_fn``
(:mod:`tyxonq.numerics.dual`) to the gate angles they set; the derivatives of the
state with respect to every angle come from one batched sweep
(:mod:`tyxonq.circuit.statevector.derivative_states`), and ``Q = J^T Q_angles J`` with ``J`` the
angles' derivatives with respect to the parameters. No finite differences anywhere.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .circuit.circuit import Circuit
from .circuit.differentiation.traced import _chain, _slots, plain_operations
from .circuit.statevector.derivative_states import derivative_states
from .circuit.statevector.sweep import sweep_state
from .numerics import get_backend
from .numerics.arguments import checked_choice
from .numerics.dual import traced_array
from .numerics.memory import require_memory

__all__ = ["quantum_geometric_tensor", "fubini_study_metric", "APPROXIMATIONS"]

APPROXIMATIONS = (None, "block-diag", "diag")


def quantum_geometric_tensor(circuit_fn: Callable[[Any], Circuit], params: Any, *,
                             approximation: str | None = None, backend: Any = None) -> Any:
    """The quantum geometric tensor of the state ``circuit_fn(params)`` prepares, with respect to
    ``params``: a complex Hermitian array of shape ``params.shape * 2``.

    Parameters
    ----------
    circuit_fn : callable
        ``circuit_fn(params) -> tq.Circuit`` (a pure state; its angles may be any arithmetic of
        the parameters).
    params : array_like
        Real parameters.
    approximation : {None, "block-diag", "diag"}
        ``"block-diag"`` keeps only the entries between angles of one layer (in circuit order, a
        parametrised gate joins the current layer unless a gate of that layer lies behind it,
        through any gates; then it starts the next: PennyLane's
        ``metric_tensor(approx="block-diag")``); ``"diag"`` only each angle's own entry. Either
        is then chained into the parameters.
    backend : ArrayBackend, optional
        Backend to compute on (default: the active one).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> circuit = lambda p: tq.Circuit(1).ry(0, p[0]).rz(0, p[1])
    >>> with tq.use_backend("numpy"):
    ...     Q = tq.quantum_geometric_tensor(circuit, np.array([np.pi / 2, 0.3]))
    >>> (np.round(Q.real, 6) + 0.0).tolist()  # the Bloch sphere's metric / 4: diag(1, sin^2 θ) / 4
    [[0.25, 0.0], [0.0, 0.25]]
    """
    checked_choice(approximation, APPROXIMATIONS, "approximation")
    K = backend if backend is not None else get_backend()
    host = np.asarray(K.to_numpy(K.asarray(params)))
    if host.dtype.kind == "c":
        raise TypeError("quantum_geometric_tensor differentiates real parameters; got a complex array")
    host = host.astype(np.float64)
    traced = traced_array(host, 0, host.size)
    circuit = circuit_fn(traced.item() if traced.shape == () else traced)
    if not isinstance(circuit, Circuit):
        raise TypeError(f"circuit_fn must return a tq.Circuit (a pure state); it returned "
                        f"{type(circuit).__name__}")
    circuit.check_exact("quantum_geometric_tensor")
    slots = _slots(circuit)
    shape = host.shape * 2
    if not slots:
        return K.zeros(shape, K.dtype)
    n, operations = circuit.num_qubits, plain_operations(circuit.operations)
    require_memory(K, (len(slots) + 2) * 2 ** n,
                   f"the derivatives of a {n}-qubit state with respect to {len(slots)} angles",
                   "Use fewer qubits or parameters, or approximation='block-diag' on smaller circuits")
    inputs = circuit.input_state(K)
    derivatives = derivative_states(K, n, operations, [(k, j) for k, j, _ in slots], inputs)
    state = sweep_state(K, n, operations, inputs)
    overlaps = K.to_numpy(K.matmul(K.conj(derivatives), K.transpose(derivatives)))
    berry = K.to_numpy(K.matmul(K.conj(derivatives), state))
    angles = np.asarray(overlaps) - np.outer(berry, np.conj(berry))
    if approximation is not None:
        angles = angles * _layer_mask(operations, [k for k, _, _ in slots], approximation)
    chain = _chain(slots)
    tensor = (chain.T @ angles @ chain).reshape(shape)
    return K.asarray(tensor, K.dtype)


def fubini_study_metric(circuit_fn: Callable[[Any], Circuit], params: Any, *,
                        approximation: str | None = None, backend: Any = None) -> Any:
    """The Fubini-Study metric: the real part of :func:`quantum_geometric_tensor` (real,
    symmetric, positive semi-definite; the metric of the quantum natural gradient).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> circuit = lambda p: tq.Circuit(2).ry(0, p[0]).cx(0, 1).ry(1, p[1])
    >>> with tq.use_backend("numpy"):
    ...     g = tq.fubini_study_metric(circuit, np.array([0.4, 1.0]))
    >>> np.round(g, 6).tolist() == [[0.25, 0.0], [0.0, 0.25]]
    True
    """
    K = backend if backend is not None else get_backend()
    return K.real(quantum_geometric_tensor(circuit_fn, params, approximation=approximation, backend=K))


def _layer_mask(operations: list, slot_operations: list[int], approximation: str) -> np.ndarray:
    """Which pairs of angles an approximation keeps: the same angle (``"diag"``) or angles of one
    layer (``"block-diag"``)."""
    size = len(slot_operations)
    if approximation == "diag":
        return np.eye(size)
    traced = set(slot_operations)
    layer_of: dict[int, int] = {}
    layer = 0
    carries: dict[int, bool] = {}  # qubit -> whether a gate of the current layer lies behind it
    for k, op in enumerate(operations):
        behind = any(carries.get(q, False) for q in op.qubits)
        if k in traced:
            if behind:  # it depends on the current layer: it starts the next one
                layer, carries = layer + 1, {}
            layer_of[k], behind = layer, True
        for q in op.qubits:
            carries[q] = behind
    layers = np.array([layer_of[k] for k in slot_operations])
    return (layers[:, None] == layers[None, :]).astype(float)
