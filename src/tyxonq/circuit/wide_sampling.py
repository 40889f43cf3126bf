"""Exact samples of circuits too wide for their state vector.

Two exact methods besides the dense distribution (``method="state"``):

* ``"mps"``: the circuit simulated as a matrix-product state with nothing truncated (only
  rounding-level singular values dropped), then sampled perfectly, all shots at once
  (:func:`~tyxonq.circuit.mps.sampling.perfect_samples`). Its cost is set by the bonds, which a
  cheap count bounds before anything runs: each gate crossing a cut multiplies that bond by at
  most its operator Schmidt rank (2 for controlled and two-qubit rotation gates, 4 otherwise).
  Shallow circuits on a line keep small bonds (a depth-6 brickwork: at most 8).
* ``"contraction"``: sequential conditional marginals. Qubits are taken in groups of
  :data:`GROUP_QUBITS`; for each distinct prefix of bits drawn so far, the joint probabilities of
  the prefix and the group's outcomes come from contracting the light cone of the measured
  qubits (the prefix's legs fixed to its bits), and every shot with that prefix draws the
  group's bits from them. The prefixes of one group share one network, so they are contracted
  together as one batched contraction; nothing has more entries than the plan's width. A plan
  contracted for many prefixes is searched thoroughly (as for a compiled program).

``method="auto"`` takes the dense distribution while ``2^n`` probabilities fit (at most
:data:`STATE_QUBITS` qubits), then the MPS while its bound stays within :data:`MPS_BOND_BITS`
bits, else the contraction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import checked_choice
from ..numerics.progress import progress
from ..numerics.protocol import ArrayBackend
from .contraction.evaluation import Request, evaluate_requests
from .contraction.network import conditional_network
from .contraction.plan import structure_token
from .operations.gates import GATES

__all__ = ["sampling_method", "bond_bound_bits", "mps_samples", "marginal_samples",
           "STATE_QUBITS", "MPS_BOND_BITS", "GROUP_QUBITS", "SAMPLING_METHODS"]

SAMPLING_METHODS = ("auto", "state", "mps", "contraction")
#: ``method="auto"`` samples from the dense distribution up to this many qubits
STATE_QUBITS = 24
#: ``method="auto"`` takes the MPS while every bond is bounded by ``2**MPS_BOND_BITS``
MPS_BOND_BITS = 8
#: qubits drawn together from one conditional distribution by ``method="contraction"``
GROUP_QUBITS = 8
#: entries the prefixes contracted together may hold at once (their batch times the plan's width)
BATCH_ENTRIES = 2 ** 24


def _schmidt_bits(op: Any) -> float:
    """log2 of a bound of an operation's operator Schmidt rank across any cut of its qubits."""
    k = len(op.qubits)
    if k < 2:
        return 0.0
    spec = GATES.get(op.gate) if op.channel is None and op.gate != "unitary" else None
    if k == 2 and spec is not None and (spec.num_controls or spec.param_names):
        return 1.0  # controlled gates and exp(-i t P P) rotations: rank 2
    return 2.0 * (k - 1)


def bond_bound_bits(num_qubits: int, operations: Any) -> float:
    """An upper bound of log2 of the largest bond an exact MPS of the circuit needs."""
    crossing = np.zeros(num_qubits + 1)
    for op in operations:
        low, high = min(op.qubits), max(op.qubits)
        crossing[low + 1:high + 1] += _schmidt_bits(op)
    cuts = np.arange(num_qubits + 1)
    return float(np.max(np.minimum(crossing, np.minimum(cuts, num_qubits - cuts)), initial=0.0))


def sampling_method(circuit: Any, method: str) -> str:
    """The method ``sample`` uses (see the module)."""
    checked_choice(method, SAMPLING_METHODS, "method")
    if method != "auto":
        return method
    n = circuit.num_qubits
    if n <= STATE_QUBITS:
        return "state"
    if circuit.has_state_vector() and bond_bound_bits(n, circuit.operations) <= MPS_BOND_BITS:
        return "mps"
    return "contraction"


def mps_samples(circuit: Any, shots: int, rng: np.random.Generator) -> np.ndarray:
    """``(shots, n)`` bits from an untruncated MPS of ``circuit`` (a pure one)."""
    from .mps.sampling import perfect_samples

    if not circuit.has_state_vector() or circuit.is_noisy():
        raise ValueError("method='mps' samples pure circuits; a noisy circuit samples by "
                         "method='contraction' or 'state'")
    state = circuit.to_mps(max_bond=None, cutoff=0.0).simulated_state("sample()", host=True)
    return perfect_samples(state, shots, rng)


def _joint_probabilities(K: ArrayBackend, circuit: Any, inputs: Any, plan: Any, prefixes: list) -> np.ndarray:
    """``(prefixes, 2^group)`` joint probabilities, the prefixes contracted in batches whose
    sizes are powers of two (a few compiled batched contractions serve every call) and whose
    entries stay within :data:`BATCH_ENTRIES`."""
    limit = max(1, BATCH_ENTRIES // max(plan.largest_tensor_size, 1))
    batch = min(1 << (len(prefixes) - 1).bit_length(), 1 << (limit.bit_length() - 1))
    rows = []
    for start in range(0, len(prefixes), batch):
        chunk = prefixes[start:start + batch]
        chunk = chunk + [chunk[-1]] * (batch - len(chunk))  # padded: the same batch size again
        requests = [Request(plan, bits=tuple(row)) for row in chunk]
        values = evaluate_requests(K, circuit.operations, inputs, requests,
                                   numbers_only=circuit.holds_only_numbers())
        rows += [np.real(K.to_numpy(K.detach(value))).astype(float) for value in values]
    return np.clip(np.stack(rows[:len(prefixes)]), 0.0, None)


def marginal_samples(circuit: Any, shots: int, rng: np.random.Generator,
                     group_qubits: int = GROUP_QUBITS) -> np.ndarray:
    """``(shots, n)`` bits by sequential conditional marginals (see the module)."""
    K = get_backend()
    n = circuit.num_qubits
    operations, kind = list(circuit.operations), circuit.inputs_kind()
    token = structure_token(circuit.structure())
    inputs = circuit.input_state(K)
    bits = np.zeros((shots, n), dtype=np.int8)
    drawn: list[int] = []
    with progress(-(-n // group_qubits), "sampling: qubit groups", unit="group") as report:
        for start in range(0, n, group_qubits):
            group = tuple(range(start, min(start + group_qubits, n)))
            fixed = tuple(drawn)
            if fixed:
                prefixes, which = np.unique(bits[:, list(fixed)], axis=0, return_inverse=True)
                which = which.reshape(-1)
            else:
                prefixes, which = np.zeros((1, 0), dtype=np.int8), np.zeros(shots, dtype=np.int64)
            network = lambda f=fixed, g=group: conditional_network(n, operations, kind, f, g)  # noqa: E731
            plan = circuit.result_plan(("conditional", fixed, group), network, (2 ** len(group),), "sample()",
                                       token, repeats=len(prefixes))
            joint = _joint_probabilities(K, circuit, inputs, plan, prefixes.tolist())
            conditional = joint / np.maximum(joint.sum(axis=1, keepdims=True), 1e-300)
            cumulative = np.cumsum(conditional, axis=1)
            outcomes = np.minimum((cumulative[which] <= rng.random(shots)[:, None]).sum(axis=1),
                                  2 ** len(group) - 1)
            width = len(group)
            bits[:, list(group)] = (outcomes[:, None] >> np.arange(width - 1, -1, -1)[None, :]) & 1
            drawn.extend(group)
            report.advance(qubits=len(drawn))
    return bits

