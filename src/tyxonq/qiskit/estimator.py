"""Qiskit's ``EstimatorV2`` on tyxonq: ``StatevectorEstimator``'s interface, tyxonq's simulators.

A PUB is read once: its circuit's distinct Pauli strings (over every observable) are read
together (:func:`~tyxonq.operators.state_expectation.state_pauli_values`, NumPy, host tables
planned once per PUB and kept); each parameter set is converted once
(``tq.Circuit.from_qiskit``) and every string is read from its state, many states at a time
(the *state* route, circuits of up to :data:`STATE_QUBITS` qubits), or from tyxonq's
``pauli_expectations`` (light cones, shared plans; wider circuits and dynamic ones, whose
expectations are exact by deferred measurement). Observables are sums over those strings:
one matrix product combines them, and Qiskit's broadcasting of parameters against observables
picks the entries.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
from qiskit.primitives import BaseEstimatorV2
from qiskit.primitives.containers import DataBin, EstimatorPubLike, PrimitiveResult, PubResult
from qiskit.primitives.containers.estimator_pub import EstimatorPub
from qiskit.primitives.primitive_job import PrimitiveJob

from ..numerics import get_backend
from ..operators.state_expectation import state_pauli_values
from .circuits import check_supported, coerced, dynamic, parameter_rows, to_tyxonq

__all__ = ["EstimatorV2", "STATE_QUBITS"]

#: the widest circuit whose expectations are read from its state vector (wider: light cones)
STATE_QUBITS = 22
#: amplitudes held at once on the state route (states of one PUB are read in batches of this size)
_BATCH_AMPLITUDES = 2**22


class EstimatorV2(BaseEstimatorV2):
    """Expectation values of Qiskit circuits and observables, computed by tyxonq.

    A drop-in for ``qiskit.primitives.StatevectorEstimator``: the same constructor, PUBs,
    broadcasting and results. Exact by default (``stds`` 0); with ``precision > 0`` every Pauli
    term is estimated from ``ceil(1 / precision**2)`` simulated shots (drawn from its exact
    outcome distribution) and ``stds`` are the estimates' standard errors.

    Parameters
    ----------
    default_precision : float
        The precision of a run that gives none (0: exact).
    seed : int or numpy.random.Generator, optional
        Seed of the shot estimates (each PUB starts from it, as ``StatevectorEstimator``'s do).

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> from qiskit.quantum_info import SparsePauliOp
    >>> qc = QuantumCircuit(2); _ = qc.h(0); _ = qc.cx(0, 1)
    >>> result = EstimatorV2().run([(qc, [SparsePauliOp("ZZ"), SparsePauliOp("XI", 0.5)])]).result()
    >>> (result[0].data.evs.round(12) + 0.0).tolist(), result[0].metadata["route"]  # no -0.0
    ([1.0, 0.0], 'state')
    """

    def __init__(self, *, default_precision: float = 0.0,
                 seed: np.random.Generator | int | None = None) -> None:
        self._default_precision = default_precision
        self._seed = seed

    @property
    def default_precision(self) -> float:
        """The precision of a run that gives none."""
        return self._default_precision

    @property
    def seed(self) -> np.random.Generator | int | None:
        """The seed of the shot estimates."""
        return self._seed

    def run(self, pubs: Iterable[EstimatorPubLike], *,
            precision: float | None = None) -> PrimitiveJob[PrimitiveResult[PubResult]]:
        """Estimate every PUB ``(circuit, observables[, parameter_values[, precision]])``.

        Bad PUBs raise here, before anything runs: Qiskit's ``ValueError`` for parameter values
        or observables that do not fit the circuit, and a ``ValueError`` naming an instruction
        tyxonq cannot run (while and for loops, switch statements, classical variables).

        Examples
        --------
        >>> from qiskit.circuit.library import efficient_su2
        >>> qc = efficient_su2(2, reps=1)
        >>> job = EstimatorV2().run([(qc, [["ZZ"], ["XX"]], [[0.0] * 8] * 3)])  # (2, 1) x (3,)
        >>> job.result()[0].data.evs.shape
        (2, 3)
        """
        if precision is None:
            precision = self._default_precision
        pubs = coerced(pubs, lambda pub: EstimatorPub.coerce(pub, precision))
        for pub in pubs:
            check_supported(pub.circuit)
        job = PrimitiveJob(self._run, pubs)
        job._submit()  # noqa: SLF001 - Qiskit's primitives submit their jobs this way
        return job

    def _run(self, pubs: list[EstimatorPub]) -> PrimitiveResult[PubResult]:
        return PrimitiveResult([self._run_pub(pub) for pub in pubs], metadata={"version": 2})

    def _run_pub(self, pub: EstimatorPub) -> PubResult:
        qc, precision = pub.circuit, pub.precision
        observables = [pub.observables[index] for index in np.ndindex(*pub.observables.shape)]
        strings = sorted({label[::-1] for observable in observables for label in observable})
        column = {string: j for j, string in enumerate(strings)}
        combine = np.zeros((len(strings), len(observables)))
        for k, observable in enumerate(observables):
            for label, coefficient in observable.items():
                combine[column[label[::-1]], k] += np.real(coefficient)
        route = "state" if qc.num_qubits <= STATE_QUBITS and not dynamic(qc) else "light cones"
        values = pub.parameter_values.as_array(qc.parameters)
        exact = _pauli_values(qc, values, pub.parameter_values.shape, strings, route)
        metadata = {"target_precision": precision, "circuit_metadata": qc.metadata,
                    "simulator": "tyxonq", "route": route}
        if precision > 0:
            shots = math.ceil(1 / precision**2)
            estimates, variances = _shot_estimates(exact, strings, shots, np.random.default_rng(self._seed))
            evs_all, stds_all = estimates @ combine, np.sqrt(variances @ combine**2)
            metadata["shots"] = shots
        else:
            evs_all = exact @ combine
            stds_all = np.zeros_like(evs_all)
        parameter_index = np.arange(pub.parameter_values.size).reshape(pub.parameter_values.shape)
        observable_index = np.arange(len(observables)).reshape(pub.observables.shape)
        rows, columns = np.broadcast_arrays(parameter_index, observable_index)
        evs, stds = evs_all[rows, columns], stds_all[rows, columns]
        return PubResult(DataBin(evs=evs, stds=stds, shape=evs.shape), metadata=metadata)


def _pauli_values(qc: Any, values: np.ndarray, shape: tuple[int, ...], strings: list[str],
                  route: str) -> np.ndarray:
    """The exact ``<P_j>`` of every parameter set (rows, flattened in C order) and string."""
    K = get_backend()
    count = int(np.prod(shape, dtype=np.int64))
    out = np.empty((count, len(strings)))
    rows = parameter_rows(values, shape)
    if route == "light cones":
        for flat, (_, row) in enumerate(rows):
            out[flat] = K.to_numpy(to_tyxonq(qc, row).pauli_expectations(strings)).real
        return out
    host = get_backend("numpy")
    batch = max(1, _BATCH_AMPLITUDES >> qc.num_qubits)
    for start in range(0, count, batch):
        states = [K.to_numpy(to_tyxonq(qc, row).state()) for _, (_, row) in zip(range(batch), rows)]
        stack = np.stack(states).astype(np.complex128, copy=False)
        out[start:start + len(states)] = state_pauli_values(host, stack, strings) if qc.num_qubits else 1.0
    return out


def _shot_estimates(exact: np.ndarray, strings: list[str], shots: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each ``<P>`` estimated from ``shots`` +-1 outcomes of its exact distribution, and the
    estimate's variance (identity strings are exact)."""
    plus = np.clip((1 + exact) / 2, 0.0, 1.0)
    estimates = 2 * rng.binomial(shots, plus) / shots - 1
    variances = (1 - estimates**2) / shots
    identity = np.array([set(string) <= {"I"} for string in strings], dtype=bool)
    estimates[:, identity], variances[:, identity] = exact[:, identity], 0.0
    return estimates, variances
