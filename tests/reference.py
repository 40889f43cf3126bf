"""A plain dense state-vector simulator, the oracle for every circuit test.

Gate matrices are written here from their definitions (rotations of Pauli strings by their closed
form ``cos(θ/2) I - i sin(θ/2) P``, other rotations through scipy's ``expm``), not
taken from tyxonq, and applied one by one to a NumPy state vector. Qubit 0 is the most
significant bit.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

I2 = np.eye(2)
X = np.array([[0, 1], [1, 0]], dtype=complex)
Y = np.array([[0, -1j], [1j, 0]])
Z = np.diag([1.0 + 0j, -1.0])
H = np.array([[1, 1], [1, -1]], dtype=complex) / np.sqrt(2)
SX = expm(-1j * np.pi / 4 * X) * np.exp(1j * np.pi / 4)


def controlled(u: np.ndarray) -> np.ndarray:
    d = u.shape[0]
    out = np.eye(2 * d, dtype=complex)
    out[d:, d:] = u
    return out


def rotation(pauli: np.ndarray, theta: float) -> np.ndarray:
    """``exp(-i theta P / 2)``: ``cos(theta/2) I - i sin(theta/2) P`` for an involution ``P``
    (``P @ P = I``: every Pauli string), else scipy's ``expm``. (scipy's ``expm`` solves a linear
    system through its bundled OpenBLAS, which on a busy 2-core machine takes ~8 ms for a 2x2
    matrix against ~0.03 ms single-threaded: thousands of those made the dense references of
    whole tests take a minute.)"""
    pauli = np.asarray(pauli)
    identity = np.eye(pauli.shape[0])
    if np.allclose(pauli @ pauli, identity, rtol=0, atol=1e-14):
        return np.cos(theta / 2) * identity - 1j * np.sin(theta / 2) * pauli
    return expm(-0.5j * theta * pauli)


SWAP = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], dtype=complex)

FIXED = {
    "i": I2.astype(complex), "h": H, "x": X, "y": Y, "z": Z,
    "s": np.diag([1, 1j]), "sdg": np.diag([1, -1j]),
    "t": np.diag([1, np.exp(0.25j * np.pi)]), "tdg": np.diag([1, np.exp(-0.25j * np.pi)]),
    "sx": SX, "sxdg": SX.conj().T,
    "cx": controlled(X), "cy": controlled(Y), "cz": controlled(Z), "swap": SWAP,
    "iswap": expm(0.25j * np.pi * (np.kron(X, X) + np.kron(Y, Y))),
    "ccx": controlled(controlled(X)), "cswap": controlled(SWAP),
}

PARAMETRISED = {
    "rx": (1, 1, lambda t: rotation(X, t)),
    "ry": (1, 1, lambda t: rotation(Y, t)),
    "rz": (1, 1, lambda t: rotation(Z, t)),
    "phase": (1, 1, lambda t: np.diag([1, np.exp(1j * t)])),
    "gphase": (1, 1, lambda t: np.exp(1j * t) * np.eye(2)),
    "u": (1, 3, lambda t, p, lam: np.array([
        [np.cos(t / 2), -np.exp(1j * lam) * np.sin(t / 2)],
        [np.exp(1j * p) * np.sin(t / 2), np.exp(1j * (p + lam)) * np.cos(t / 2)]])),
    "rxx": (2, 1, lambda t: rotation(np.kron(X, X), t)),
    "ryy": (2, 1, lambda t: rotation(np.kron(Y, Y), t)),
    "rzz": (2, 1, lambda t: rotation(np.kron(Z, Z), t)),
    "crx": (2, 1, lambda t: controlled(rotation(X, t))),
    "cry": (2, 1, lambda t: controlled(rotation(Y, t))),
    "crz": (2, 1, lambda t: controlled(rotation(Z, t))),
    "cphase": (2, 1, lambda t: np.diag([1, 1, 1, np.exp(1j * t)])),
}

FIXED_SIZES = {name: int(np.log2(m.shape[0])) for name, m in FIXED.items()}


def pauli_matrix(letters: str) -> np.ndarray:
    """The Kronecker product of the letters' Pauli matrices (the first letter most significant)."""
    matrix = np.ones((1, 1), dtype=complex)
    for letter in letters:
        matrix = np.kron(matrix, {"I": I2, "X": X, "Y": Y, "Z": Z}[letter])
    return matrix


def reference_matrix(gate: str, params: tuple = ()) -> np.ndarray:
    if gate.startswith("exp:"):  # exp(-i θ P / 2)
        return rotation(pauli_matrix(gate[4:]), float(params[0]))
    if gate in FIXED:
        return FIXED[gate]
    if gate == "unitary":
        m = np.asarray(params[0])
        d = int(round(np.sqrt(m.size)))
        return m.reshape(d, d)
    return PARAMETRISED[gate][2](*[float(p) for p in params])


def apply(state: np.ndarray, matrix: np.ndarray, qubits: tuple[int, ...], n: int) -> np.ndarray:
    k = len(qubits)
    tensor = state.reshape((2,) * n)
    gate = matrix.reshape((2,) * (2 * k))
    tensor = np.tensordot(gate, tensor, axes=(list(range(k, 2 * k)), list(qubits)))
    tensor = np.moveaxis(tensor, list(range(k)), list(qubits))
    return tensor.reshape(-1)


def reference_state(n: int, operations: list[tuple], inputs: np.ndarray | None = None) -> np.ndarray:
    """``operations``: (gate, qubits, params) triples, applied in order."""
    state = np.zeros(2 ** n, dtype=complex)
    state[0] = 1.0
    if inputs is not None:
        state = np.asarray(inputs, dtype=complex)
    for gate, qubits, params in operations:
        state = apply(state, reference_matrix(gate, params), tuple(qubits), n)
    return state


def reference_unitary(n: int, operations: list[tuple]) -> np.ndarray:
    columns = [reference_state(n, operations, np.eye(2 ** n)[j]) for j in range(2 ** n)]
    return np.stack(columns, axis=1)


def reference_expectation(state: np.ndarray, operators: list[tuple[np.ndarray, tuple]], n: int) -> complex:
    applied = state
    for matrix, qubits in operators:
        applied = apply(applied, np.asarray(matrix).reshape(2 ** len(qubits), -1), tuple(qubits), n)
    return complex(np.vdot(state, applied))


def random_unitary(rng: np.random.Generator, k: int) -> np.ndarray:
    a = rng.normal(size=(2 ** k, 2 ** k)) + 1j * rng.normal(size=(2 ** k, 2 ** k))
    q, r = np.linalg.qr(a)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def random_hermitian(rng: np.random.Generator, k: int) -> np.ndarray:
    a = rng.normal(size=(2 ** k, 2 ** k)) + 1j * rng.normal(size=(2 ** k, 2 ** k))
    return (a + a.conj().T) / 2
