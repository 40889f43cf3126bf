"""A tape's measurements on a tyxonq circuit: exact, or from tyxonq's samples.

Exact: ``expval`` and ``var`` of a Pauli sum or a matrix and ``probs`` of wires are tyxonq
results (``expectation``, ``marginal_probability``); every other measurement (``state``,
``density_matrix``, ``probs`` of an observable, entropies, ...) is PennyLane's own processing of
the state (or density matrix) tyxonq computed after the measurement's diagonalising gates.
Finite shots: every measurement is PennyLane's processing of bits sampled by tyxonq
(``circuit.sample(format="bits")``) after the measurement's diagonalising gates; measurements
with the same diagonalising gates share one sample.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pennylane as qml
from pennylane.measurements import (
    DensityMatrixMP,
    ExpectationMP,
    ProbabilityMP,
    StateMP,
    VarianceMP,
)
from pennylane.wires import Wires

from .observables import PauliSums, expectation

__all__ = ["exact_results", "sampled_results"]


def _one_or_tuple(results: list[Any]) -> Any:
    return results[0] if len(results) == 1 else tuple(results)


def _variance(circuit: Any, obs: Any) -> Any:
    square = None
    if obs.pauli_rep is not None:
        square = qml.pauli.PauliSentence(obs.pauli_rep @ obs.pauli_rep).operation(obs.wires)
    else:
        matrix = obs.matrix(wire_order=obs.wires)
        square = qml.Hermitian(matrix @ matrix, wires=obs.wires)
    mean = np.real(expectation(circuit, obs))
    return np.real(expectation(circuit, square)) - mean**2


def exact_results(build: Callable[[list[Any]], Any], tape: Any, mixed: bool,
                  sums: PauliSums | None = None) -> Any:
    """The exact results of a standard-wired tape's measurements.

    Parameters
    ----------
    build : callable
        ``build(extra_operations)``: the tyxonq circuit of the tape followed by ``extra_operations``
        (a measurement's diagonalising gates).
    tape : pennylane.tape.QuantumScript
    mixed : bool
        The circuits are ``DMCircuit``s (``state()`` is a density matrix).
    sums : PauliSums, optional
        Keeps the observables' Pauli sums between calls.

    Examples
    --------
    >>> import pennylane as qml
    >>> from tyxonq.pennylane.circuits import build_circuit
    >>> tape = qml.tape.QuantumScript([], [qml.expval(qml.Z(0)), qml.probs(wires=[0])])
    >>> build = lambda extra: build_circuit(tape.copy(operations=tape.operations + extra), False)
    >>> exact_results(build, tape, mixed=False)[1].tolist()
    [1.0, 0.0]
    """
    circuit = build([])
    wire_order = Wires(range(circuit.num_qubits))
    states: dict[tuple, Any] = {}
    results = []
    for m in tape.measurements:
        if isinstance(m, ExpectationMP) and m.obs is not None:
            results.append(np.asarray(np.real(expectation(circuit, m.obs, sums)), dtype=float))
        elif isinstance(m, VarianceMP) and m.obs is not None:
            results.append(np.asarray(_variance(circuit, m.obs), dtype=float))
        elif isinstance(m, ProbabilityMP) and m.obs is None and m.mv is None:
            qubits = [int(w) for w in m.wires] or list(range(circuit.num_qubits))
            results.append(np.asarray(circuit.marginal_probability(qubits), dtype=float))
        else:
            key = _diagonalising_key(m)
            if key not in states:
                rotated = circuit if not key else build(list(m.diagonalizing_gates()))
                states[key] = np.asarray(rotated.state())
            if mixed and type(m) is StateMP:  # qml.state() of a mixed device: the density matrix
                m = DensityMatrixMP(wires=m.wires or wire_order)
            process = m.process_density_matrix if mixed else m.process_state
            results.append(process(states[key], wire_order=wire_order))
    return _one_or_tuple(results)


def _diagonalising_key(m: Any) -> tuple:
    return tuple((g.name, tuple(g.wires), tuple(np.asarray(d).tobytes() for d in g.data))
                 for g in m.diagonalizing_gates())


def _sample_bits(circuit: Any, shots: int, rng: np.random.Generator) -> np.ndarray:
    seed = int(rng.integers(2**31 - 1))
    return np.asarray(circuit.sample(shots, seed=seed, format="bits"), dtype=np.int64)


def sampled_results(build: Callable[[list[Any]], Any], tape: Any, rng: np.random.Generator,
                    postselect_mode: str | None) -> Any:
    """The results of a standard-wired tape's measurements from tyxonq samples.

    Parameters
    ----------
    build : callable
        ``build(extra_operations)``: the tyxonq circuit of the tape followed by ``extra_operations``.
    tape : pennylane.tape.QuantumScript
        With finite shots (a shot vector gives one tuple of results per entry).
    rng : numpy.random.Generator
        Seeds every ``circuit.sample``.
    postselect_mode : str or None
        ``"fill-shots"`` keeps every shot of a post-selected circuit; otherwise (``"hw-like"``,
        the default) a bin keeps a binomial share of its shots, the acceptance probability.

    Examples
    --------
    >>> import pennylane as qml, numpy as np
    >>> from tyxonq.pennylane.circuits import build_circuit
    >>> tape = qml.tape.QuantumScript([qml.X(0)], [qml.sample(wires=[0])], shots=3)
    >>> build = lambda extra: build_circuit(tape.copy(operations=tape.operations + extra), False)
    >>> sampled_results(build, tape, np.random.default_rng(1), None).ravel().tolist()
    [1, 1, 1]
    """
    groups: dict[tuple, list[int]] = {}
    for index, m in enumerate(tape.measurements):
        groups.setdefault(_diagonalising_key(m), []).append(index)
    circuits = {key: build(list(tape.measurements[idx[0]].diagonalizing_gates()))
                for key, idx in groups.items()}
    wire_order = Wires(range(max(len(tape.wires), 1)))
    post_selected = any(op.name == "Projector" for op in tape.operations)
    per_bin = []
    for shots in (s for s, copies in tape.shots.shot_vector for _ in range(copies)):
        results: list[Any] = [None] * len(tape.measurements)
        for key, indices in groups.items():
            circuit = circuits[key]
            kept = shots
            if post_selected and postselect_mode != "fill-shots":
                kept = int(rng.binomial(shots, min(max(float(circuit.acceptance()), 0.0), 1.0)))
            bits = _sample_bits(circuit, kept, rng) if kept > 0 else np.zeros(
                (0, len(wire_order)), dtype=np.int64)
            for i in indices:
                results[i] = tape.measurements[i].process_samples(bits, wire_order=wire_order)
        per_bin.append(_one_or_tuple(results))
    return per_bin[0] if len(per_bin) == 1 else tuple(per_bin)
