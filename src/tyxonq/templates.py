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
    qubits = range(n)
    per_layer = n * len(rotations)
    pairs = [(q, q + 1) for q in range(n - 1)]
    for layer in range(layers + 1):
        if layer:
            circuit.layer(entangler, pairs)
        block = params[layer * per_layer:(layer + 1) * per_layer]
        for r, rotation in enumerate(rotations):  # qubit q's angle for rotation r: block[q * R + r]
            circuit.layer(rotation, qubits, block[r::len(rotations)])
    return circuit


def qaoa(graph: Any, gammas: Sequence[Any], betas: Sequence[Any]) -> Circuit:
    """QAOA for MaxCut on a networkx graph: ``|+>`` states, then per layer ``RZZ(γ·w_ij)`` on every
    edge and ``RX(2β)`` on every qubit (edge attribute ``weight``, default 1)."""
    if len(gammas) != len(betas):
        raise ValueError(f"gammas and betas need the same length; got {len(gammas)} and {len(betas)}")
    n = graph.number_of_nodes()
    circuit = Circuit(n).layer("h", range(n))
    edges = list(graph.edges)
    weights = [graph.edges[a, b].get("weight", 1.0) for a, b in edges]
    for gamma, beta in zip(gammas, betas):
        circuit.layer("rzz", edges, [gamma * w for w in weights])
        circuit.layer("rx", range(n), [2 * beta] * n)
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
    for layer in range(depth):
        circuit.layer("ry", range(high - low + 1), params[layer * n + low:layer * n + high + 1])
        circuit.layer("cz", [(q - low, q + 1 - low) for q in range(layer % 2, n - 1, 2) if low <= q < high])
    return circuit


def rotation_ladder(n: int, params: Any, layers: int) -> Circuit:
    """``layers`` times RX·RZ on every qubit then a CNOT ladder; ``params`` has ``2 * n * layers``
    entries (layer by layer, qubit by qubit, RX angle then RZ angle)."""
    if len(params) != 2 * n * layers:
        raise ValueError(f"rotation_ladder({n}, layers={layers}) needs {2 * n * layers} parameters; "
                         f"got {len(params)}")
    circuit = Circuit(n)
    pairs = [(q, q + 1) for q in range(n - 1)]
    for layer in range(layers):
        block = params[2 * n * layer:2 * n * (layer + 1)]
        circuit.layer("rx", range(n), block[0::2]).layer("rz", range(n), block[1::2]).layer("cx", pairs)
    return circuit
