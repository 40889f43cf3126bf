"""quimb: ``quimb.tensor.Circuit`` contracted with cotengra (the optimizer tensorcircuit uses too).

- statevector: ``circuit.to_dense(optimize=...)``.
- brickwork 50 qubits: ``circuit.amplitude("0" * n, optimize=...)`` and
  ``circuit.local_expectation(Z, where=middle, optimize=...)`` (quimb simplifies both networks
  and keeps only the light cone).
- shallow_amplitude (scaling study): the amplitude alone.
- energies, gradients, batches: n/a (quimb's circuits have no batched or differentiated
  evaluation of their own).

The circuit is built once, outside the timed call (quimb caches simplified networks on it, as
tyxonq caches contraction plans). quimb's qubit 0 is the most significant bit of ``to_dense``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from specs import Spec

from peers.common import cotengra_optimizer

SUPPORTED = ("statevector", "brickwork_local", "shallow_amplitude")
_NAMES = {"h": "H", "cx": "CNOT", "cz": "CZ", "rx": "RX", "ry": "RY", "rz": "RZ", "rzz": "RZZ"}


def supports(workload: str, option: str | None) -> bool:
    return workload in SUPPORTED


def _circuit(spec: Spec) -> Any:
    import quimb.tensor as qtn

    circuit = qtn.Circuit(spec.n)
    for gate in spec.gates:
        angles = () if gate.param is None else (gate.scale * float(spec.params[gate.param]),)
        circuit.apply_gate(_NAMES[gate.name], *angles, *gate.qubits)
    return circuit


def build(spec: Spec, option: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import quimb

    circuit, optimize = _circuit(spec), cotengra_optimizer()
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
    raise ValueError(f"quimb has no workload {spec.workload!r}")
