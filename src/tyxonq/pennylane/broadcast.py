"""Parameter broadcasting on tyxonq's lanes: a batch of parameter sets in one sweep.

A broadcast tape (``tape.batch_size`` set) on ``tyxonq.qubit`` without shots, whose
parametrised operations are native gates and whose measurements are expectation values,
probabilities of wires, states or reduced density matrices, is evaluated once for the whole
batch: ``tq.vectorize_or_fallback`` runs the circuit with lanes (one ``(batch, 2^n)`` stack on
NumPy; see ``docs-ng/gradients.md``). Every other broadcast tape is split by PennyLane's
``broadcast_expand`` (one tape per parameter set).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pennylane as qml
from pennylane.devices.preprocess import null_postprocessing
from pennylane.measurements import ExpectationMP, ProbabilityMP, StateMP
from pennylane.wires import Wires

from ..numerics import use_backend, vectorize_or_fallback
from .circuits import build_circuit, is_state_preparation, operation_parameters
from .gates import NATIVE_GATES
from .observables import PauliSums, expectation

__all__ = ["laned", "broadcast_where_needed", "laned_results"]


def laned(tape: Any, mixed: bool) -> bool:
    """Whether a broadcast tape runs on lanes (see the module docstring).

    Examples
    --------
    >>> import pennylane as qml, numpy as np
    >>> tape = qml.tape.QuantumScript([qml.RX(np.array([0.1, 0.2]), 0)], [qml.expval(qml.Z(0))])
    >>> laned(tape, mixed=False), laned(tape, mixed=True)
    (True, False)
    """
    if mixed or tape.shots or tape.batch_size is None:
        return False
    for op in tape.operations:
        if op.num_params and (op.name not in NATIVE_GATES or is_state_preparation(op)):
            return False
    for m in tape.measurements:
        if isinstance(m, ExpectationMP) and m.obs is not None:
            continue
        if isinstance(m, (ProbabilityMP, StateMP)) and m.obs is None and m.mv is None:
            continue  # DensityMatrixMP is a StateMP
        return False
    return True


@qml.transform
def broadcast_where_needed(tape: Any, mixed: bool = False) -> tuple[Any, Any]:
    """Keep a broadcast tape that runs on lanes; split every other one (``broadcast_expand``)."""
    if tape.batch_size is None or laned(tape, mixed):
        return (tape,), null_postprocessing
    return qml.transforms.broadcast_expand(tape)


def laned_results(tape: Any, sums: PauliSums | None = None) -> Any:
    """The results of a standard-wired broadcast tape, its batch evaluated in one laned sweep.

    Examples
    --------
    >>> import pennylane as qml, numpy as np
    >>> tape = qml.tape.QuantumScript([qml.RX(np.array([0.0, np.pi]), 0)], [qml.expval(qml.Z(0))])
    >>> np.round(laned_results(tape), 6).tolist()
    [1.0, -1.0]
    """
    batch = tape.batch_size
    params = np.stack([np.broadcast_to(np.asarray(p, dtype=float), (batch,))
                       for p in operation_parameters(tape)], axis=1)
    observables = [m.obs for m in tape.measurements if isinstance(m, ExpectationMP)]
    wants_state = len(observables) < len(tape.measurements)

    def evaluate(row: Any) -> Any:
        circuit = build_circuit(tape, False, [row[k] for k in range(params.shape[1])])
        values = [expectation(circuit, obs, sums) for obs in observables]
        return (*values, circuit.state()) if wants_state else tuple(values)

    with use_backend("numpy"):
        out = vectorize_or_fallback(evaluate)(params)
    values = iter(np.real(np.asarray(v, dtype=complex)) for v in out[:len(observables)])
    states = np.asarray(out[-1]) if wants_state else None
    wire_order = Wires(range(max(len(tape.wires), 1)))
    results = []
    for m in tape.measurements:
        if isinstance(m, ExpectationMP):
            results.append(next(values).astype(float))
        else:  # probabilities, states, reduced density matrices: PennyLane's processing per row
            results.append(np.stack([m.process_state(s, wire_order=wire_order) for s in states]))
    return results[0] if len(results) == 1 else tuple(results)
