"""What the primitives and the backend share: checking a Qiskit circuit before it runs, its
parameter sets in ``qc.parameters`` order, and per-run seeds.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..circuit import Circuit
from ..circuit.interchange.qiskit_convert import is_dynamic, require_qiskit

__all__ = ["check_supported", "coerced", "parameter_rows", "seeds", "to_tyxonq", "dynamic", "require_qiskit",
           "REFUSED"]

#: instructions no tyxonq simulator runs, and why
REFUSED = {
    "while_loop": "a while loop (its trip count depends on measurements)",
    "for_loop": "a for loop (unroll it: qiskit.transpile(qc) with a basis without control flow)",
    "switch_case": "a switch statement (write it as if_test blocks)",
    "store": "a classical store (classical variables are not simulated)",
}


def check_supported(qc: Any) -> None:
    """Raise a ``ValueError`` naming the first instruction of ``qc`` no tyxonq simulator runs.

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(1, 1)
    >>> with qc.while_loop((qc.clbits[0], 0)):
    ...     _ = qc.x(0)
    >>> check_supported(qc)
    Traceback (most recent call last):
    ...
    ValueError: instruction 0 of circuit 'circuit-...' is a while loop (...): tyxonq cannot run it
    """
    if qc.num_vars:
        raise ValueError(f"circuit {qc.name!r} declares classical variables: tyxonq simulates "
                         "classical bits and registers only")
    for position, instruction in enumerate(qc.data):
        name = instruction.operation.name
        if name in REFUSED:
            raise ValueError(f"instruction {position} of circuit {qc.name!r} is {REFUSED[name]}: "
                             "tyxonq cannot run it")


def coerced(pubs: Iterable[Any], coerce: Callable[[Any], Any]) -> list:
    """Every PUB through Qiskit's ``coerce``, a bad one's ``ValueError`` prefixed with its position
    and what its circuit expects.

    Examples
    --------
    >>> from qiskit.primitives.containers.sampler_pub import SamplerPub
    >>> from qiskit.circuit.library import real_amplitudes
    >>> coerced([(real_amplitudes(2, reps=1), [0.0])], lambda pub: SamplerPub.coerce(pub, 10))
    Traceback (most recent call last):
    ...
    ValueError: PUB 0 (circuit 'RealAmplitudes' with 4 parameters, 2 qubits): Length of ...
    """
    out = []
    for position, pub in enumerate(pubs):
        try:
            out.append(coerce(pub))
        except ValueError as error:
            circuit = pub[0] if isinstance(pub, tuple) and pub else pub
            what = (f"circuit {circuit.name!r} with {circuit.num_parameters} parameters, "
                    f"{circuit.num_qubits} qubits" if hasattr(circuit, "num_parameters") else "its circuit")
            raise ValueError(f"PUB {position} ({what}): {error}") from error
    return out


def parameter_rows(values: np.ndarray, shape: tuple[int, ...]) -> Iterator[tuple[tuple, np.ndarray]]:
    """``(index, values)`` for every parameter set of a bindings array (``values``: its
    ``as_array(qc.parameters)``, shape ``shape + (num_parameters,)``).

    Examples
    --------
    >>> [index for index, _ in parameter_rows(np.zeros((2, 1, 3)), (2, 1))]
    [(0, 0), (1, 0)]
    """
    for index in np.ndindex(*shape):
        yield index, values[index]


def to_tyxonq(qc: Any, row: np.ndarray, keep: bool = False, noise_model: Any = None) -> Any:
    """``tq.Circuit.from_qiskit(qc, row)`` (measurements kept if ``keep``), noisy (a
    ``tq.DMCircuit``) when ``noise_model`` is given.

    Examples
    --------
    >>> from qiskit.circuit.library import efficient_su2
    >>> to_tyxonq(efficient_su2(2, reps=1), np.zeros(8)).num_qubits
    2
    """
    bound = qc.assign_parameters(row) if qc.num_parameters else qc  # numeric angles: the quick path
    circuit = Circuit.from_qiskit(bound, measurements="keep" if keep else "auto")
    return circuit if noise_model is None else circuit.with_noise(noise_model)


def seeds(seed: Any, count: int) -> list[int | None]:
    """``count`` seeds drawn from ``seed`` (an int, a ``np.random.Generator`` or ``None``: fresh
    entropy), one per parameter set, so a seeded run repeats exactly.

    Examples
    --------
    >>> seeds(7, 2) == seeds(7, 2)
    True
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return [int(s) for s in rng.integers(0, 2**63 - 1, size=count)]


def dynamic(qc: Any) -> bool:
    """Whether ``qc`` is dynamic (mid-circuit measurement, reset or condition).

    Examples
    --------
    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(1); _ = qc.reset(0)
    >>> dynamic(qc)
    True
    """
    return bool(is_dynamic(qc))
