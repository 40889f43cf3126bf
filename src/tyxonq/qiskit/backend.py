"""A Qiskit ``BackendV2`` that runs on tyxonq: ``transpile(qc, backend)``, ``backend.run`` and
``BackendEstimatorV2`` / ``BackendSamplerV2`` work as with ``AerSimulator``.

The target holds every gate tyxonq simulates natively (Qiskit's standard gate classes), measure,
reset, delay and ``if_else``, on every qubit and without a coupling map, so transpiling keeps a
circuit's width and only rewrites gates outside the set. ``run`` draws each circuit's classical
bits exactly (:func:`~tyxonq.qiskit.sampler.clbit_samples`) and reports them as Aer does: hex
keys in the result's data, ``get_counts()`` and ``get_memory()`` with registers separated by
spaces, the last declared first.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

import numpy as np
from qiskit.circuit import Delay, IfElseOp, Measure, Parameter, QuantumCircuit, Reset
from qiskit.circuit import library as gates
from qiskit.providers import BackendV2, JobStatus, JobV1, Options
from qiskit.result import Result
from qiskit.transpiler import Target

from ..noise import NoiseModel
from .circuits import check_supported, seeds
from .sampler import clbit_samples

__all__ = ["Backend", "TyxonqJob", "GATES"]

#: Qiskit standard gates tyxonq simulates as one gate of its own (name -> the class's arguments)
GATES = {
    "id": (gates.IGate, 0), "h": (gates.HGate, 0), "x": (gates.XGate, 0), "y": (gates.YGate, 0),
    "z": (gates.ZGate, 0), "s": (gates.SGate, 0), "sdg": (gates.SdgGate, 0), "t": (gates.TGate, 0),
    "tdg": (gates.TdgGate, 0), "sx": (gates.SXGate, 0), "sxdg": (gates.SXdgGate, 0),
    "rx": (gates.RXGate, 1), "ry": (gates.RYGate, 1), "rz": (gates.RZGate, 1), "p": (gates.PhaseGate, 1),
    "u": (gates.UGate, 3), "u1": (gates.U1Gate, 1), "u3": (gates.U3Gate, 3),
    "cx": (gates.CXGate, 0), "cy": (gates.CYGate, 0), "cz": (gates.CZGate, 0),
    "swap": (gates.SwapGate, 0), "iswap": (gates.iSwapGate, 0), "rxx": (gates.RXXGate, 1),
    "ryy": (gates.RYYGate, 1), "rzz": (gates.RZZGate, 1), "crx": (gates.CRXGate, 1),
    "cry": (gates.CRYGate, 1), "crz": (gates.CRZGate, 1), "cp": (gates.CPhaseGate, 1),
    "cu1": (gates.CU1Gate, 1), "ccx": (gates.CCXGate, 0), "cswap": (gates.CSwapGate, 0),
    "ecr": (gates.ECRGate, 0),
}


class TyxonqJob(JobV1):
    """A finished run of :class:`Backend` (runs are synchronous: the result exists on return).

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(1, 1); _ = qc.x(0); _ = qc.measure(0, 0)
    >>> job = Backend().run(qc, shots=3)
    >>> job.status().name, job.result().get_counts()
    ('DONE', {'1': 3})
    """

    _async = False

    def __init__(self, backend: Backend, job_id: str, result: Result) -> None:
        super().__init__(backend, job_id)
        self._result = result

    def submit(self) -> None:
        """Nothing to do: the job ran when it was made."""

    def result(self, timeout: float | None = None) -> Result:
        """The run's ``qiskit.result.Result``."""
        return self._result

    def status(self) -> JobStatus:
        """Always ``JobStatus.DONE``."""
        return JobStatus.DONE


class Backend(BackendV2):
    """Qiskit's ``BackendV2`` on tyxonq's exact simulators.

    Parameters
    ----------
    num_qubits : int
        The target's width (a transpiled circuit keeps its own width; this only bounds it).
    noise_model : tq.NoiseModel or qiskit_aer.noise.NoiseModel, optional
        Noise applied to every circuit (``circuit.with_noise(model)``: a ``tq.DMCircuit``); an Aer
        noise model is converted by ``tq.NoiseModel.from_qiskit`` where tyxonq has it.

    Examples
    --------
    >>> from qiskit import QuantumCircuit, transpile
    >>> qc = QuantumCircuit(2, 2); _ = qc.h(0); _ = qc.ch(0, 1); _ = qc.measure([0, 1], [0, 1])
    >>> backend = Backend()
    >>> counts = backend.run(transpile(qc, backend), shots=200, seed_simulator=1).result().get_counts()
    >>> sorted(counts), sum(counts.values())
    (['00', '01', '11'], 200)
    """

    def __init__(self, num_qubits: int = 64, noise_model: Any = None) -> None:
        super().__init__(name="tyxonq", description="tyxonq's exact simulators", backend_version="1")
        self._noise_model = _tyxonq_noise(noise_model)
        self._target = _target(num_qubits)

    @property
    def target(self) -> Target:
        """Every gate tyxonq simulates, measure, reset, delay and ``if_else``, on every qubit."""
        return self._target

    @property
    def max_circuits(self) -> None:
        """No limit on the circuits of one run."""
        return None

    @classmethod
    def _default_options(cls) -> Options:
        return Options(shots=1024, seed_simulator=None, memory=False)

    def run(self, run_input: QuantumCircuit | list[QuantumCircuit], **options: Any) -> TyxonqJob:
        """Sample every circuit; ``shots`` (1024), ``seed_simulator`` and ``memory`` (per-shot
        bits in ``get_memory()``) as Aer's.

        Bad input raises here: a ``ValueError`` for a circuit with unbound parameters, an
        instruction tyxonq cannot run or an option this backend does not have.

        Examples
        --------
        >>> from qiskit import QuantumCircuit
        >>> qc = QuantumCircuit(1, 1); _ = qc.measure(0, 0)
        >>> Backend().run(qc, shots=2, memory=True).result().get_memory()
        ['0', '0']
        """
        circuits = [run_input] if isinstance(run_input, QuantumCircuit) else list(run_input)
        unknown = sorted(set(options) - set(self.options.__dict__))
        if unknown:
            raise ValueError(f"Backend.run has no option(s) {unknown}: use shots, seed_simulator, memory")
        settings = {**self.options.__dict__, **options}
        shots = int(settings["shots"])
        if shots < 1:
            raise ValueError(f"shots={shots}: give a positive number of shots")
        for qc in circuits:
            if qc.num_parameters:
                names = ", ".join(p.name for p in qc.parameters)
                raise ValueError(f"circuit {qc.name!r} has unbound parameters ({names}): bind them with "
                                 "qc.assign_parameters(values) before run")
            check_supported(qc)
        job_id = str(uuid.uuid4())
        start = time.time()
        run_seeds = seeds(settings["seed_simulator"], len(circuits))
        results = [self._experiment(qc, shots, seed, bool(settings["memory"]))
                   for qc, seed in zip(circuits, run_seeds)]
        result = Result.from_dict({"backend_name": self.name, "backend_version": self.backend_version,
                                   "job_id": job_id, "results": results, "status": "COMPLETED",
                                   "success": True, "time_taken": time.time() - start})
        return TyxonqJob(self, job_id, result)

    def _experiment(self, qc: QuantumCircuit, shots: int, seed: int, memory: bool) -> dict:
        start = time.time()
        bits = clbit_samples(qc, np.zeros(0), shots, seed, self._noise_model)
        data: dict[str, Any] = {}
        if qc.num_clbits:
            words = _hex_words(bits)
            data["counts"] = dict(Counter(words))
            if memory:
                data["memory"] = words
        header = {"creg_sizes": [[creg.name, creg.size] for creg in qc.cregs],
                  "global_phase": float(qc.global_phase), "memory_slots": qc.num_clbits,
                  "n_qubits": qc.num_qubits, "name": qc.name,
                  "qreg_sizes": [[qreg.name, qreg.size] for qreg in qc.qregs],
                  "metadata": qc.metadata if qc.metadata is not None else {}}
        return {"name": qc.name, "shots": shots, "seed_simulator": seed, "data": data, "status": "DONE",
                "success": True, "header": header, "time_taken": time.time() - start,
                "metadata": {"simulator": "tyxonq", "noisy": self._noise_model is not None}}


def _hex_words(bits: np.ndarray) -> list[str]:
    """Each row of ``bits`` (column ``j``: clbit ``j``) as Aer's hex word (bit ``j`` is ``2**j``)."""
    if bits.shape[1] <= 62:
        weights = np.left_shift(np.int64(1), np.arange(bits.shape[1], dtype=np.int64))
        values = bits.astype(np.int64) @ weights
        return [hex(v) for v in values.tolist()]
    packed = np.packbits(bits, axis=1, bitorder="little")
    return [hex(int.from_bytes(row.tobytes(), "little")) for row in packed]


def _target(num_qubits: int) -> Target:
    """The target: every gate of :data:`GATES`, measure, reset, delay and ``if_else``."""
    target = Target(description="tyxonq", num_qubits=num_qubits)
    for name, (gate, count) in GATES.items():
        angles = [Parameter(f"theta{i}") for i in range(count)]
        target.add_instruction(gate(*angles), name=name)
    target.add_instruction(Measure(), name="measure")
    target.add_instruction(Reset(), name="reset")
    target.add_instruction(Delay(Parameter("t")), name="delay")
    target.add_instruction(IfElseOp, name="if_else")
    return target


def _tyxonq_noise(model: Any) -> Any:
    """``model`` as a ``tq.NoiseModel`` (an Aer noise model converted where tyxonq can)."""
    if model is None or isinstance(model, NoiseModel):
        return model
    convert = getattr(NoiseModel, "from_qiskit", None)
    if convert is None:
        raise TypeError(f"noise_model is a {type(model).__name__}: give a tq.NoiseModel (this tyxonq "
                        "cannot convert Aer noise models)")
    return convert(model)

