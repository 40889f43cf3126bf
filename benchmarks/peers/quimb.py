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
- the other energies, gradients, batches: n/a (quimb's circuits have no batched or differentiated
  evaluation of their own).

The circuit is built once, outside the timed call (quimb caches simplified networks on it, as
tyxonq caches contraction plans). quimb's qubit 0 is the most significant bit of ``to_dense``.
"""

from __future__ import annotations

from functools import reduce
from typing import Any, Callable

import numpy as np
from specs import ENERGY_ONLY, Spec

from peers.common import cotengra_optimizer, pauli_terms, repeats_for

SUPPORTED = ("statevector", "brickwork_local", "shallow_amplitude") + ENERGY_ONLY
_NAMES = {"h": "H", "cx": "CNOT", "cz": "CZ", "rx": "RX", "ry": "RY", "rz": "RZ", "rzz": "RZZ"}


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def build_circuit(spec: Spec) -> Any:
    import quimb.tensor as qtn

    circuit = qtn.Circuit(spec.n)
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


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import quimb

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
