"""Qiskit's ``SamplerV2`` on tyxonq: ``StatevectorSampler``'s interface, dynamic circuits included.

Each parameter set is converted once with every measurement kept
(``tq.Circuit.from_qiskit(qc, values, measurements="keep")``) and its classical bits are drawn
by ``sample(shots, final=False)``: measurements at the end are read with the final qubits in one
joint draw, mid-circuit ones (with ``reset`` and ``if_test`` feed-forward) by branches of
outcomes. Bit ``j`` of the circuit is Qiskit's clbit ``j``, so every register's ``BitArray`` is
Qiskit's, bit for bit.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable

import numpy as np
from qiskit.primitives import BaseSamplerV2
from qiskit.primitives.containers import BitArray, DataBin, PrimitiveResult, SamplerPubLike, SamplerPubResult
from qiskit.primitives.containers.sampler_pub import SamplerPub
from qiskit.primitives.primitive_job import PrimitiveJob

from ..numerics import get_backend
from .circuits import check_supported, coerced, dynamic, parameter_rows, seeds, to_tyxonq

__all__ = ["SamplerV2", "clbit_samples"]


class SamplerV2(BaseSamplerV2):
    """Shots of Qiskit circuits, drawn exactly by tyxonq; one ``BitArray`` per register.

    A drop-in for ``qiskit.primitives.StatevectorSampler`` (same constructor, PUBs and results)
    that also runs dynamic circuits: mid-circuit measurements, resets and ``if_test`` blocks.

    Parameters
    ----------
    default_shots : int
        Shots of a PUB that gives none.
    seed : int or numpy.random.Generator, optional
        Seed of the draws: the same seed gives the same bits.

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(2, 2); _ = qc.h(0); _ = qc.cx(0, 1); _ = qc.measure([0, 1], [0, 1])
    >>> counts = SamplerV2(seed=1).run([qc], shots=100).result()[0].data.c.get_counts()
    >>> sorted(counts), sum(counts.values())
    (['00', '11'], 100)
    """

    def __init__(self, *, default_shots: int = 1024, seed: np.random.Generator | int | None = None) -> None:
        self._default_shots = default_shots
        self._seed = seed

    @property
    def default_shots(self) -> int:
        """Shots of a PUB that gives none."""
        return self._default_shots

    @property
    def seed(self) -> np.random.Generator | int | None:
        """The seed of the draws."""
        return self._seed

    def run(self, pubs: Iterable[SamplerPubLike], *,
            shots: int | None = None) -> PrimitiveJob[PrimitiveResult[SamplerPubResult]]:
        """Sample every PUB ``(circuit[, parameter_values[, shots]])``.

        Bad PUBs raise here: Qiskit's ``ValueError`` for parameter values that do not fit the
        circuit, and a ``ValueError`` naming an instruction tyxonq cannot run. A circuit without
        classical registers warns, as ``StatevectorSampler`` does (its result is empty).

        Examples
        --------
        >>> from qiskit.circuit.library import real_amplitudes
        >>> qc = real_amplitudes(2, reps=1); qc.measure_all()
        >>> SamplerV2().run([(qc, [[0.0] * 4] * 3, 10)]).result()[0].data.meas.shape
        (3,)
        """
        if shots is None:
            shots = self._default_shots
        pubs = coerced(pubs, lambda pub: SamplerPub.coerce(pub, shots))
        for pub in pubs:
            check_supported(pub.circuit)
        if any(not pub.circuit.cregs for pub in pubs):
            warnings.warn("One of your circuits has no output classical registers and so the result "
                          "will be empty. Did you mean to add measurement instructions?", UserWarning,
                          stacklevel=2)
        job = PrimitiveJob(self._run, pubs)
        job._submit()  # noqa: SLF001 - Qiskit's primitives submit their jobs this way
        return job

    def _run(self, pubs: list[SamplerPub]) -> PrimitiveResult[SamplerPubResult]:
        return PrimitiveResult([self._run_pub(pub) for pub in pubs], metadata={"version": 2})

    def _run_pub(self, pub: SamplerPub) -> SamplerPubResult:
        qc, shape, shots = pub.circuit, pub.parameter_values.shape, pub.shots
        values = pub.parameter_values.as_array(qc.parameters)
        registers = {creg.name: [qc.find_bit(bit).index for bit in creg] for creg in qc.cregs}
        bits = {name: np.zeros(shape + (shots, len(columns)), dtype=bool)
                for name, columns in registers.items()}
        run_seeds = seeds(self._seed, int(np.prod(shape, dtype=np.int64)))
        for (index, row), seed in zip(parameter_rows(values, shape), run_seeds):
            drawn = clbit_samples(qc, row, shots, seed)
            for name, columns in registers.items():
                bits[name][index] = drawn[:, columns]
        data = {name: BitArray.from_bool_array(array, order="little") for name, array in bits.items()}
        metadata = {"shots": shots, "circuit_metadata": qc.metadata, "simulator": "tyxonq",
                    "route": "branches" if dynamic(qc) else "final qubits"}
        return SamplerPubResult(DataBin(**data, shape=shape), metadata=metadata)


def clbit_samples(qc: Any, row: np.ndarray, shots: int, seed: int | None,
                  noise_model: Any = None) -> np.ndarray:
    """``shots`` draws of ``qc``'s classical bits at parameter values ``row``: a bool array
    ``(shots, qc.num_clbits)``, column ``j`` Qiskit's clbit ``j`` (bits never written read 0).

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(2, 3); _ = qc.x(1); _ = qc.measure(1, 2)
    >>> clbit_samples(qc, np.zeros(0), 2, seed=1).astype(int).tolist()
    [[0, 0, 1], [0, 0, 1]]
    """
    if qc.num_clbits == 0:
        return np.zeros((shots, 0), dtype=bool)
    circuit = to_tyxonq(qc, row, keep=True, noise_model=noise_model)
    drawn = circuit.sample(shots, seed=seed, format="bits", final=False)
    return np.asarray(get_backend().to_numpy(drawn), dtype=bool).reshape(shots, qc.num_clbits)
