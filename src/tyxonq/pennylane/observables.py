"""PennyLane observables as tyxonq observables: Pauli words as a ``PauliSum``, others as a matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..operators import PauliSum

__all__ = ["pauli_sum_of", "matrix_of", "expectation", "PauliSums"]


def pauli_sum_of(obs: Any, num_qubits: int) -> PauliSum | None:
    """The ``PauliSum`` of an observable with real Pauli coefficients, else ``None``.

    Parameters
    ----------
    obs : pennylane.operation.Operator
        On standard wires (wire ``k`` is qubit ``k``).
    num_qubits : int

    Examples
    --------
    >>> import pennylane as qml
    >>> pauli_sum_of(0.5 * qml.Z(0) @ qml.Z(1) + qml.X(1), 2).n_qubits
    2
    """
    sentence = obs.pauli_rep
    if sentence is None:
        return None
    terms = []
    for word, coefficient in sentence.items():
        if abs(np.imag(coefficient)) > 1e-12:
            return None
        letters = ["I"] * num_qubits
        for wire, letter in word.items():
            letters[int(wire)] = letter
        terms.append((float(np.real(coefficient)), "".join(letters)))
    return PauliSum(terms or [(0.0, "I" * num_qubits)])


class PauliSums:
    """The ``PauliSum`` of each observable seen, kept by its terms (at most ``maxsize`` sums).

    A tyxonq ``PauliSum`` keeps what it prepares for applying itself (its terms bound to their
    coefficients); PennyLane hands the device a new observable object on every call, so the device
    keeps one ``PauliSum`` per distinct observable and hands that to tyxonq again.

    Examples
    --------
    >>> import pennylane as qml
    >>> sums = PauliSums()
    >>> sums(qml.Z(0) @ qml.Z(1), 2) is sums(qml.Z(0) @ qml.Z(1), 2)
    True
    """

    def __init__(self, maxsize: int = 64) -> None:
        self.maxsize = maxsize
        self._sums: dict[tuple, PauliSum | None] = {}

    def __call__(self, obs: Any, num_qubits: int) -> PauliSum | None:
        sentence = obs.pauli_rep
        if sentence is None:
            return None
        key = (num_qubits, tuple((tuple(word.items()), complex(c)) for word, c in sentence.items()))
        if key in self._sums:
            return self._sums[key]
        if len(self._sums) >= self.maxsize:
            self._sums.pop(next(iter(self._sums)))
        paulis = self._sums[key] = pauli_sum_of(obs, num_qubits)
        return paulis


def matrix_of(obs: Any) -> tuple[np.ndarray, list[int]]:
    """An observable as ``(matrix, qubits)``, tyxonq's local-operator form.

    Examples
    --------
    >>> import pennylane as qml
    >>> matrix_of(qml.Hermitian(np.eye(2), wires=1))[1]
    [1]
    """
    return np.asarray(obs.matrix(wire_order=obs.wires), dtype=complex), [int(w) for w in obs.wires]


def expectation(circuit: Any, obs: Any, sums: PauliSums | None = None) -> Any:
    """``<obs>`` on a tyxonq circuit: a Pauli sum where it is one, else the observable's matrix.

    ``sums`` (a :class:`PauliSums`) keeps the Pauli sums between calls.

    Examples
    --------
    >>> import pennylane as qml, tyxonq as tq
    >>> round(float(expectation(tq.Circuit(1).x(0), qml.Z(0))), 6)
    -1.0
    """
    paulis = (sums or pauli_sum_of)(obs, circuit.num_qubits)
    if paulis is not None:
        return circuit.expectation(paulis)
    matrix, qubits = matrix_of(obs)
    return circuit.expectation((matrix, qubits))
