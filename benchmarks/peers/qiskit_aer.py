"""qiskit-aer: qiskit circuits on ``AerSimulator`` (``max_parallel_threads`` = the pinned count).

- statevector: ``method="statevector"``, ``save_statevector``, transpiled once (Aer's own gate
  fusion stays on, as by default).
- 64 energies: ``qiskit_aer.primitives.EstimatorV2`` with one parameterised circuit, a
  ``SparsePauliOp`` and a ``(64, P)`` array of parameter values (exact: precision 0).
- brickwork 50 qubits: ``method="matrix_product_state"`` (``mps_omp_threads`` pinned too; its
  default is 1) with ``save_amplitudes([0])`` and ``save_expectation_value(Z)``. Aer's MPS keeps
  about 7 significant digits of that amplitude (relative error 8e-8 against an extended-precision
  contraction at 50 qubits, with every truncation and chop threshold lowered too), so the check
  reports it as WRONG at the suite's 1e-8. shallow_amplitude (scaling study): the same, amplitude only.
- gradients (energy_gradient, adam_vqe_100, qaoa_gradient, noisy_energy_gradient): n/a, Aer has
  no gradient method.
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
from specs import Spec

from peers.common import reversed_qubit, threads

SUPPORTED = ("statevector", "batched_energies_64", "brickwork_local", "shallow_amplitude", "noisy_energy",
             "noisy_density_matrix")


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


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
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
