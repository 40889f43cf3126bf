"""quimb: ``quimb.tensor.Circuit`` contracted with cotengra (the optimizer tensorcircuit uses too).

- statevector: ``circuit.to_dense(optimize=...)``.
- brickwork 50 qubits: ``circuit.amplitude("0" * n, optimize=...)`` and
  ``circuit.local_expectation(Z, where=middle, optimize=...)`` (quimb simplifies both networks
  and keeps only the light cone).
- shallow_amplitude (scaling study): the amplitude alone.
- 100-node QAOA energies: ``Σ w/2 circuit.local_expectation(Z⊗Z, (a, b), optimize=...)`` over the
  edges, one call per edge (a list of operators in one call shares a single ``where``; quimb has
  no call for terms on different qubits), the optimizer searching 16 repeats per light cone
  instead of 64 (:data:`peers.common.LIGHT_CONE_REPEATS`).
- MPS rows: ``quimb.tensor.CircuitMPS(n, max_bond=spec.max_bond, cutoff=1e-12,
  gate_opts={"cutoff_mode": "rsum2"})`` built inside the timed call (its gates are applied as they
  are added): quimb's ``rsum2`` drops the smallest singular values whose summed squares stay below
  ``1e-12`` times the sum of all squares, our cutoff exactly; the cap is ``max_bond`` (quimb
  does not renormalise the kept values). ``mps_brickwork``: ``local_expectation(Z, observed,
  normalized=True)`` and ``sample(shots, seed=SEED)`` from the same state; ``mps_quench``: the mean
  of ``local_expectation(Z, q, normalized=True)`` over the qubits (each moves the orthogonality
  centre one site); ``truncation_error``: ``error_estimate()``, 1 - the squared norm that the
  truncations left, i.e. 1 - the product of the kept weights (quimb's infidelity estimate).
  ``mps_energy_gradient``: n/a (no gradients).
- reversible_arithmetic: the X/CX/CCX gates on a ``CircuitMPS(n, cutoff=1e-12)`` without a cap
  (the state stays a basis state, bond 1), built inside the timed call, then
  ``local_expectation(Z, q, normalized=True)`` for every qubit (quimb's best route here: its
  ``Circuit`` would contract a light cone per qubit).
- the other energies, gradients, batches: n/a (quimb's circuits have no batched or differentiated
  evaluation of their own).

The circuit is built once, outside the timed call (quimb caches simplified networks on it, as
tyxonq caches contraction plans). quimb's qubit 0 is the most significant bit of ``to_dense``.
"""

from __future__ import annotations

from functools import reduce
from typing import Any, Callable

import numpy as np
from specs import ENERGY_ONLY, SAMPLING, SEED, Spec

from peers.common import cotengra_optimizer, pauli_terms, repeats_for

MPS_ROWS = ("mps_brickwork", "mps_quench", *SAMPLING)
SUPPORTED = ("statevector", "brickwork_local", "shallow_amplitude", "reversible_arithmetic") + ENERGY_ONLY \
    + MPS_ROWS
_NAMES = {"h": "H", "x": "X", "cx": "CNOT", "ccx": "CCX", "cz": "CZ", "rx": "RX", "ry": "RY", "rz": "RZ",
          "rzz": "RZZ"}


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def build_circuit(spec: Spec) -> Any:
    import quimb.tensor as qtn

    return _apply_gates(spec, qtn.Circuit(spec.n))


def _apply_gates(spec: Spec, circuit: Any) -> Any:
    """``circuit`` (a ``Circuit`` or ``CircuitMPS``) with the spec's gates applied."""
    for gate in spec.gates:
        angles = () if gate.param is None else (gate.scale * float(spec.params[gate.param]),)
        circuit.apply_gate(_NAMES[gate.name], *angles, *gate.qubits)
    return circuit


def local_terms(spec: Spec) -> list[tuple[float, np.ndarray, tuple[int, ...]]]:
    """The Hamiltonian as ``(coefficient, operator, qubits)``: each term's Pauli matrices, Kronecker
    multiplied in qubit order, and the qubits they act on (``local_expectation``'s ``G, where``)."""
    import quimb

    return [(coefficient, reduce(np.kron, [quimb.pauli(letter) for letter in letters]), qubits)
            for coefficient, letters, qubits in pauli_terms(spec)]


def mps_circuit(spec: Spec) -> Any:
    """The spec's gates applied to a ``CircuitMPS`` (cap ``max_bond``, relative discarded weight
    at most 1e-12 per split)."""
    import quimb.tensor as qtn

    return _apply_gates(spec, qtn.CircuitMPS(spec.n, max_bond=spec.max_bond, cutoff=1e-12,
                                             gate_opts={"cutoff_mode": "rsum2"}))


def _mps_row(spec: Spec) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """``mps_brickwork``: <Z> and samples of one state; ``mps_quench``: the magnetisation."""
    import quimb

    z = quimb.pauli("Z")
    if spec.workload in ("mps_brickwork", *SAMPLING):
        def brickwork() -> dict:
            circuit = mps_circuit(spec)
            value = circuit.local_expectation(z, spec.observed, normalized=True)
            bits = [int(sample[spec.observed]) for sample in circuit.sample(spec.shots, seed=SEED)]
            return {"z": float(np.real(value)), "sampled_z": float(np.mean(1 - 2 * np.array(bits))),
                    "truncation_error": float(circuit.error_estimate())}

        return brickwork, lambda r: r

    def quench() -> dict:
        circuit = mps_circuit(spec)
        values = [circuit.local_expectation(z, q, normalized=True) for q in range(spec.n)]
        return {"magnetisation": float(np.mean(np.real(values))),
                "truncation_error": float(circuit.error_estimate())}

    return quench, lambda r: r


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import quimb

    if spec.workload in MPS_ROWS:
        return _mps_row(spec)
    if spec.workload == "reversible_arithmetic":
        import quimb.tensor as qtn

        z = quimb.pauli("Z")

        def magnetisations() -> Any:
            circuit = _apply_gates(spec, qtn.CircuitMPS(spec.n, cutoff=1e-12))
            return [circuit.local_expectation(z, q, normalized=True) for q in range(spec.n)]

        return magnetisations, lambda r: np.real(np.asarray(r))
    circuit, optimize = build_circuit(spec), cotengra_optimizer(repeats_for(spec))
    if spec.workload == "statevector":
        return (lambda: circuit.to_dense(optimize=optimize)), lambda r: np.asarray(r).reshape(-1)
    if spec.workload == "brickwork_local":
        z, zeros = quimb.pauli("Z"), "0" * spec.n

        def local() -> tuple[Any, Any]:
            return (circuit.amplitude(zeros, optimize=optimize),
                    circuit.local_expectation(z, where=spec.observed, optimize=optimize))

        return local, lambda r: (complex(r[0]), float(np.real(r[1])))
    if spec.workload == "shallow_amplitude":
        zeros = "0" * spec.n
        return (lambda: circuit.amplitude(zeros, optimize=optimize)), complex
    if spec.workload in ENERGY_ONLY:
        terms = local_terms(spec)

        def energy() -> Any:
            return sum(coefficient * circuit.local_expectation(operator, qubits, optimize=optimize)
                       for coefficient, operator, qubits in terms)

        return energy, lambda r: float(np.real(r))
    raise ValueError(f"quimb has no workload {spec.workload!r}")
