"""Common variational circuits, built from the public Circuit API.

Examples
--------
>>> import numpy as np, tyxonq as tq
>>> c = tq.templates.hardware_efficient(3, np.zeros(tq.templates.hardware_efficient_size(3, 2)), 2)
>>> len(c.operations)
13
"""

from __future__ import annotations

from typing import Any, Sequence

from .circuit import Circuit

__all__ = ["hardware_efficient", "hardware_efficient_size", "qaoa", "brickwork", "rotation_ladder"]


def _entries(params: Any) -> list[Any]:
    """The parameters as a list of scalars, split in one call (on PyTorch one ``unbind``, whose
    backward is one ``stack``, instead of one indexing node per angle)."""
    return list(params)


def hardware_efficient_size(n: int, layers: int, rotations: Sequence[str] = ("ry",)) -> int:
    """Number of parameters of :func:`hardware_efficient`."""
    return n * len(rotations) * (layers + 1)


def hardware_efficient(n: int, params: Any, layers: int, rotations: Sequence[str] = ("ry",),
                       entangler: str = "cx") -> Circuit:
    """Rotations on every qubit, then ``layers`` times: an entangler ladder and rotations.

    ``params`` has :func:`hardware_efficient_size` entries (any array the active backend, or
    tracing, accepts); they are used in order, qubit by qubit, rotation by rotation.
    """
    expected = hardware_efficient_size(n, layers, rotations)
    if len(params) != expected:
        raise ValueError(f"hardware_efficient({n}, layers={layers}, rotations={tuple(rotations)}) "
                         f"needs {expected} parameters; got {len(params)}")
    circuit = Circuit(n)
    params = _entries(params)
    index = 0

    def rotate() -> None:
        nonlocal index
        for q in range(n):
            for rotation in rotations:
                getattr(circuit, rotation)(q, params[index])
                index += 1

    rotate()
    for _ in range(layers):
        for q in range(n - 1):
            getattr(circuit, entangler)(q, q + 1)
        rotate()
    return circuit


def qaoa(graph: Any, gammas: Sequence[Any], betas: Sequence[Any]) -> Circuit:
    """QAOA for MaxCut on a networkx graph: ``|+>`` states, then per layer ``RZZ(γ·w_ij)`` on every
    edge and ``RX(2β)`` on every qubit (edge attribute ``weight``, default 1)."""
    if len(gammas) != len(betas):
        raise ValueError(f"gammas and betas need the same length; got {len(gammas)} and {len(betas)}")
    n = graph.number_of_nodes()
    circuit = Circuit(n)
    for q in range(n):
        circuit.h(q)
    for gamma, beta in zip(gammas, betas):
        for a, b in graph.edges:
            circuit.rzz(a, b, gamma * graph.edges[a, b].get("weight", 1.0))
        for q in range(n):
            circuit.rx(q, 2 * beta)
    return circuit


def brickwork(n: int, params: Any, depth: int, window: tuple[int, int] | None = None) -> Circuit:
    """``depth`` layers of RY on every qubit followed by CZ on alternating neighbour pairs;
    ``params`` has ``n * depth`` entries.

    ``window=(low, high)`` keeps only the gates within qubits ``low..high`` (renumbered from 0):
    for ``<Z_q>`` after ``depth`` layers, the window ``q - depth .. q + depth`` holds the whole
    backward light cone, so a small dense simulation of it checks a large circuit.
    """
    if len(params) != n * depth:
        raise ValueError(f"brickwork({n}, depth={depth}) needs {n * depth} parameters; got {len(params)}")
    low, high = (0, n - 1) if window is None else window
    circuit = Circuit(high - low + 1)
    params = _entries(params)
    for layer in range(depth):
        for q in range(low, high + 1):
            circuit.ry(q - low, params[layer * n + q])
        for q in range(layer % 2, n - 1, 2):
            if low <= q and q + 1 <= high:
                circuit.cz(q - low, q + 1 - low)
    return circuit


def rotation_ladder(n: int, params: Any, layers: int) -> Circuit:
    """``layers`` times RX·RZ on every qubit then a CNOT ladder; ``params`` has ``2 * n * layers``
    entries (layer by layer, qubit by qubit, RX angle then RZ angle)."""
    if len(params) != 2 * n * layers:
        raise ValueError(f"rotation_ladder({n}, layers={layers}) needs {2 * n * layers} parameters; "
                         f"got {len(params)}")
    circuit = Circuit(n)
    params = _entries(params)
    for layer in range(layers):
        for q in range(n):
            index = 2 * (layer * n + q)
            circuit.rx(q, params[index]).rz(q, params[index + 1])
        for q in range(n - 1):
            circuit.cx(q, q + 1)
    return circuit
