"""qiskit-aer: qiskit circuits on ``AerSimulator`` (``max_parallel_threads`` = the pinned count).

- statevector: ``method="statevector"``, ``save_statevector``, transpiled once (Aer's own gate
  fusion stays on, as by default).
- state_sampling: the same circuit with ``measure_all``, run with ``shots`` and
  ``seed_simulator=SEED`` (Aer simulates once and samples the final state), its counts read
  (timed); every count's bitstring, read as a binary number, is our index (the qubits are reversed).
- 64 energies: ``qiskit_aer.primitives.EstimatorV2`` with one parameterised circuit, a
  ``SparsePauliOp`` and a ``(64, P)`` array of parameter values (exact: precision 0).
- brickwork 50 qubits: ``method="matrix_product_state"`` (``mps_omp_threads`` pinned too; its
  default is 1) with ``save_amplitudes([0])`` and ``save_expectation_value(Z)``. Aer's MPS keeps
  about 7 significant digits of that amplitude (relative error 8e-8 against an extended-precision
  contraction at 50 qubits, with every truncation and chop threshold lowered too), so the check
  reports it as WRONG at the suite's 1e-8. shallow_amplitude (scaling study): the same, amplitude only.
- MPS rows: ``method="matrix_product_state"`` with ``matrix_product_state_max_bond_dimension =
  max_bond`` and ``matrix_product_state_truncation_threshold = 1e-12``: Aer drops the smallest
  Schmidt coefficients while their summed squares stay below the threshold, and its coefficients
  are those of the normalised state (it renormalises them after a truncation that changes the norm
  by more than 1e-9), so this is our relative 1e-12 (it also always drops coefficients whose square
  is at most 1e-16). ``mps_omp_threads`` pinned. Not transpiled: ``transpile`` refuses more than
  63 qubits (the simulator's target is sized for a state vector), and every gate is an Aer
  instruction, run as built (Aer fuses no gates on this method). ``mps_brickwork``:
  ``save_expectation_value(Z)`` then ``measure_all``, run with ``shots`` and
  ``seed_simulator=SEED``: Aer simulates once and samples the final state (``measure_sampling``
  in its metadata), so the value and the samples come from the same state. ``mps_quench``:
  ``save_expectation_value`` of ``Σ Z_q / n``. ``truncation_error``: Aer's only report is the
  ``mps_log_data`` text log (bond dimensions after every two-qubit gate and ``discarded_value``,
  the summed squares of the coefficients a split dropped); the rows turn it on and report
  1 - Π(1 - discarded_value), quimb's infidelity estimate in these terms (tyxonq's plain sum
  differs from it at second order). Aer logs a
  discarded value only above ``chop_threshold`` (default 1e-8), so the rows set that to 0 (it
  otherwise only chops small numbers in saved results). Aer 0.18.2 never empties the log (its
  ``clear_log`` calls ``stringstream::clear``, which resets error flags): it grows over a process's
  runs, so each run keeps the part written since the previous one (:data:`_LOG_SEEN`). Writing
  the log is part of the timed run. ``mps_energy_gradient``: n/a.
- reversible_arithmetic: ``method="matrix_product_state"`` (a basis state throughout: bond 1) with
  ``save_expectation_value(Z)`` on every qubit; not transpiled (qiskit's ``x``, ``cx``, ``ccx`` are
  Aer instructions; ``transpile`` refuses more than 63 qubits for this method).
- gradients (energy_gradient, adam_vqe_100, qaoa_gradient, noisy_energy_gradient,
  mps_energy_gradient): n/a, Aer has no gradient method.
- noisy rows: ``method="density_matrix"``, the circuit with ``depolarizing_error(4p/3, 1)`` appended
  after every gate on each of its qubits (Aer's parameter λ is ``rho -> (1 - λ) rho + λ I/2``, which
  is our p = 3λ/4), transpiled once; the energy by ``save_expectation_value`` of the TFIM as a
  ``SparsePauliOp``, the state by ``save_density_matrix``; ``enable_truncation=False``: with
  noise instructions in the circuit, Aer 0.18.2's qubit truncation returns wrong expectation values
  when the saved observable does not cover every qubit (``<Z_6>`` of the 12-qubit noisy brickwork:
  -0.0454 instead of -0.6161; with truncation off, or with a ``save_density_matrix`` in the same
  circuit, the right value). The TFIM covers every qubit, so the setting changes nothing for the
  energy; it is there so that the row cannot meet that bug. The 40-qubit noisy brickwork: n/a (no
  exact noisy method without a 2^40 x 2^40 matrix: Aer's matrix-product-state method applies one
  sampled Kraus operator per channel, a single trajectory, whose <Z> varies with the seed).

qiskit counts qubit 0 as the least significant bit: our qubit q is its ``n-1-q``, so its vector
and amplitudes are in our order. Its ``rx/ry/rz/rzz`` are ``exp(-iθP/2)`` like ours.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from specs import SAMPLING, SEED, Spec, z_means

from peers.common import reversed_qubit, threads

SUPPORTED = ("statevector", "state_sampling", "batched_energies_64", "brickwork_local", "shallow_amplitude",
             "noisy_energy", "noisy_density_matrix",
             "mps_brickwork", "mps_quench", "reversible_arithmetic", *SAMPLING)


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def _circuit(spec: Spec, symbolic: bool) -> Any:
    """The spec's circuit; angles are the spec's numbers, or ``ParameterVector`` entries. With
    ``spec.noise``, Aer's depolarising error (λ = 4p/3) after every gate on each of its qubits."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    values = ParameterVector("theta", spec.num_params) if symbolic else spec.params
    circuit = QuantumCircuit(spec.n)
    if spec.noise:
        from qiskit_aer.noise import depolarizing_error

        error = depolarizing_error(4 * spec.noise / 3, 1)
    for gate in spec.gates:
        qubits = [reversed_qubit(spec.n, q) for q in gate.qubits]
        if gate.param is None:
            getattr(circuit, gate.name)(*qubits)
        else:
            getattr(circuit, gate.name)(gate.scale * values[gate.param], *qubits)
        if spec.noise:
            for qubit in qubits:
                circuit.append(error, [qubit])
    return circuit


def _observable(spec: Spec) -> Any:
    from qiskit.quantum_info import SparsePauliOp

    terms = []
    for coefficient, pauli in spec.hamiltonian:
        active = [(letter, reversed_qubit(spec.n, q)) for q, letter in enumerate(pauli) if letter != "I"]
        terms.append(("".join(a[0] for a in active), [a[1] for a in active], coefficient))
    return SparsePauliOp.from_sparse_list(terms, num_qubits=spec.n)


#: characters of Aer's (process-wide, never emptied) MPS log already read by earlier runs
_LOG_SEEN = [0]


def _new_log(result: Any) -> str:
    """The part of Aer's accumulated ``MPS_log_data`` (``{...}``) that ``result``'s run wrote."""
    log = result.results[0].metadata["MPS_log_data"][1:-1]
    start, _LOG_SEEN[0] = _LOG_SEEN[0], len(log)
    return log[start:]


def _discarded(log: str) -> float:
    """1 - Π(1 - w) over the weights w the log reports as ``discarded_value=w,``."""
    weights = [float(item[len("discarded_value="):].rstrip(",")) for item in log.split()
               if item.startswith("discarded_value=")]
    return float(1 - np.prod(1 - np.array(weights)))


def _mps_row(spec: Spec) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """``mps_brickwork``: <Z> and the samples of one simulated state; ``mps_quench``: the
    magnetisation; both with the truncation Aer logs."""
    from qiskit.quantum_info import SparsePauliOp
    from qiskit_aer import AerSimulator

    simulator = AerSimulator(method="matrix_product_state", max_parallel_threads=threads(),
                             mps_omp_threads=threads(), matrix_product_state_max_bond_dimension=spec.max_bond,
                             matrix_product_state_truncation_threshold=1e-12, mps_log_data=True,
                             chop_threshold=0.0)
    circuit = _circuit(spec, symbolic=False)
    if spec.workload in ("mps_brickwork", *SAMPLING):
        circuit.save_expectation_value(SparsePauliOp("Z"), [reversed_qubit(spec.n, spec.observed)], label="z")
        circuit.measure_all()
        options = {"shots": spec.shots, "seed_simulator": SEED}
    else:
        terms = [("Z", [q], 1 / spec.n) for q in range(spec.n)]
        magnetisation = SparsePauliOp.from_sparse_list(terms, spec.n)
        circuit.save_expectation_value(magnetisation, range(spec.n), label="z")
        options = {"shots": 1}

    def mps() -> tuple[Any, str]:
        result = simulator.run(circuit, **options).result()
        return result, _new_log(result)

    def canonical(outcome: tuple[Any, str]) -> dict:
        result, log = outcome
        value, error = float(np.real(result.data()["z"])), _discarded(log)
        if spec.workload == "mps_quench":
            return {"magnetisation": value, "truncation_error": error}
        # a count's key lists classical bit n-1 first: our qubit q (Aer's n-1-q) is character q
        counts = result.get_counts()
        sampled = sum(count * (1 - 2 * int(bits[spec.observed])) for bits, count in counts.items())
        return {"z": value, "sampled_z": sampled / spec.shots, "truncation_error": error}

    return mps, canonical


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    if spec.workload in ("mps_brickwork", "mps_quench", *SAMPLING):
        return _mps_row(spec)
    from qiskit import transpile
    from qiskit_aer import AerSimulator

    if spec.workload == "statevector":
        simulator = AerSimulator(method="statevector", max_parallel_threads=threads())
        circuit = _circuit(spec, symbolic=False)
        circuit.save_statevector()
        circuit = transpile(circuit, simulator)

        def state_vector() -> Any:
            return simulator.run(circuit).result().get_statevector()

        return state_vector, np.asarray
    if spec.workload == "state_sampling":
        simulator = AerSimulator(method="statevector", max_parallel_threads=threads())
        circuit = _circuit(spec, symbolic=False)
        circuit.measure_all()
        circuit = transpile(circuit, simulator)

        def counts() -> dict[str, int]:
            return simulator.run(circuit, shots=spec.shots, seed_simulator=SEED).result().get_counts()

        def indices(found: dict[str, int]) -> np.ndarray:
            return z_means(np.repeat([int(bits, 2) for bits in found], list(found.values())), spec.n)

        return counts, indices
    if spec.workload == "batched_energies_64":
        from qiskit_aer.primitives import EstimatorV2

        estimator = EstimatorV2(options={"default_precision": 0.0, "backend_options": {
            "method": "statevector", "max_parallel_threads": threads()}})
        circuit, observable = _circuit(spec, symbolic=True), _observable(spec)
        # bind in the circuit's parameter order (qiskit sorts them by name)
        order = [int(p.index) for p in circuit.parameters]
        values = spec.params[:, order]

        def energies() -> Any:
            return estimator.run([(circuit, observable, values)]).result()[0].data.evs

        return energies, np.asarray
    if spec.workload in ("brickwork_local", "shallow_amplitude"):
        from qiskit.quantum_info import Pauli

        simulator = AerSimulator(method="matrix_product_state", max_parallel_threads=threads(),
                                 mps_omp_threads=threads())
        circuit = _circuit(spec, symbolic=False)
        circuit.save_amplitudes([0], label="amplitude")
        if spec.workload == "brickwork_local":
            circuit.save_expectation_value(Pauli("Z"), [reversed_qubit(spec.n, spec.observed)], label="z")
        circuit = transpile(circuit, simulator)

        def local() -> Any:
            data = simulator.run(circuit).result().data()
            return data["amplitude"][0], data.get("z")

        if spec.workload == "shallow_amplitude":
            return local, lambda r: complex(r[0])
        return local, lambda r: (complex(r[0]), float(np.real(r[1])))
    if spec.workload == "reversible_arithmetic":
        from qiskit.quantum_info import Pauli

        simulator = AerSimulator(method="matrix_product_state", max_parallel_threads=threads(),
                                 mps_omp_threads=threads())
        circuit = _circuit(spec, symbolic=False)
        for q in range(spec.n):
            circuit.save_expectation_value(Pauli("Z"), [reversed_qubit(spec.n, q)], label=f"z{q}")

        def magnetisations() -> Any:
            data = simulator.run(circuit).result().data()
            return [data[f"z{q}"] for q in range(spec.n)]

        return magnetisations, lambda r: np.real(np.asarray(r, dtype=complex))
    if spec.workload in ("noisy_energy", "noisy_density_matrix"):
        simulator = AerSimulator(method="density_matrix", max_parallel_threads=threads(),
                                 enable_truncation=False)
        circuit = _circuit(spec, symbolic=False)
        if spec.workload == "noisy_energy":
            circuit.save_expectation_value(_observable(spec), range(spec.n), label="energy")
        else:
            circuit.save_density_matrix(label="rho")
        circuit = transpile(circuit, simulator)
        label = "energy" if spec.workload == "noisy_energy" else "rho"

        def noisy() -> Any:
            return simulator.run(circuit).result().data()[label]

        if spec.workload == "noisy_energy":
            return noisy, lambda r: float(np.real(r))
        return noisy, lambda r: np.asarray(r)
    raise ValueError(f"qiskit-aer has no workload {spec.workload!r}")
