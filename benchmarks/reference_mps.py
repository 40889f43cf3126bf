"""References of the matrix-product-state rows, in plain NumPy (no tyxonq or peer code).

A textbook MPS with an orthogonality centre: one-qubit gates contract into a site, gates on
neighbours contract two sites and split them by an SVD that keeps every singular value above
``1e-14`` of the largest, up to ``max_bond`` (set far above the rows' own caps, so the
reference is exact or converged). Local expectations come from one sweep of the centre.

* ``mps_quench``: the magnetisation at ``max_bond = 256`` (the 100-site quench needs far less: its
  largest bond stays below that, so nothing is cut).
* ``mps_energy_gradient``: the 32-qubit ansatz's bonds are at most 16 (four CNOT ladders), so the
  MPS is exact; the gradient is the parameter-shift rule (every gate angle is a Pauli rotation:
  ``dE/dθ = (E(θ + π/2) - E(θ - π/2)) / 2``), chained to the parameters.
* ``mps_brickwork``: depth 20 on 50 qubits is beyond an exact MPS; its reference (in
  ``reference.py``) is the exact ``<Z>`` of the light cone by tensor-network contraction.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

X = np.array([[0, 1], [1, 0]], dtype=complex)
Y = np.array([[0, -1j], [1j, 0]])
Z = np.diag([1.0 + 0j, -1.0])
CX = np.eye(4, dtype=complex)[[0, 1, 3, 2]]
CZ = np.diag([1.0 + 0j, 1, 1, -1])
PAULIS = {"X": X, "Y": Y, "Z": Z}


def gate_matrix(name: str, angle: float | None) -> np.ndarray:
    if name == "cx":
        return CX
    if name == "cz":
        return CZ
    if name == "rzz":
        return expm(-0.5j * angle * np.kron(Z, Z))
    return expm(-0.5j * angle * {"rx": X, "ry": Y, "rz": Z}[name])


class ReferenceMPS:
    """Sites ``(D, 2, D')``, the centre, and gates on one or two neighbouring qubits."""

    def __init__(self, n: int, max_bond: int = 256) -> None:
        self.sites = [np.array([1.0, 0.0], dtype=complex).reshape(1, 2, 1) for _ in range(n)]
        self.centre = 0
        self.max_bond = max_bond

    def move(self, target: int) -> None:
        while self.centre < target:
            c = self.centre
            a, _, b = self.sites[c].shape
            q, r = np.linalg.qr(self.sites[c].reshape(2 * a, b))
            self.sites[c] = q.reshape(a, 2, -1)
            self.sites[c + 1] = np.tensordot(r, self.sites[c + 1], axes=1)
            self.centre += 1
        while self.centre > target:
            c = self.centre
            a, _, b = self.sites[c].shape
            q, r = np.linalg.qr(self.sites[c].reshape(a, 2 * b).T)
            self.sites[c] = q.T.reshape(-1, 2, b)
            self.sites[c - 1] = np.tensordot(self.sites[c - 1], r.T, axes=1)
            self.centre -= 1

    def apply(self, matrix: np.ndarray, qubits: tuple[int, ...]) -> None:
        if len(qubits) == 1:
            self.sites[qubits[0]] = np.einsum("ts,asb->atb", matrix, self.sites[qubits[0]])
            return
        i, j = qubits
        if j < i:  # the matrix for (j, i): swap its two qubits
            matrix = matrix.reshape(2, 2, 2, 2).transpose(1, 0, 3, 2).reshape(4, 4)
            i, j = j, i
        assert j == i + 1, "the reference applies gates on neighbours only"
        self.move(i)
        a, b = self.sites[i].shape[0], self.sites[j].shape[2]
        theta = np.einsum("asb,btc->astc", self.sites[i], self.sites[j]).reshape(a, 4, b)
        theta = np.einsum("ts,asb->atb", matrix, theta).reshape(2 * a, 2 * b)
        u, s, vh = np.linalg.svd(theta, full_matrices=False)
        keep = max(1, min(self.max_bond, int(np.sum(s > s[0] * 1e-14))))
        s = s[:keep] / np.linalg.norm(s[:keep])
        self.sites[i] = u[:, :keep].reshape(a, 2, keep)
        self.sites[j] = (s[:, None] * vh[:keep]).reshape(keep, 2, b)
        self.centre = j

    def local_expectations(self, terms: list[tuple[float, dict[int, np.ndarray]]]) -> float:
        """``sum c <P>`` for terms on one site or two neighbouring sites (one centre sweep)."""
        total = 0.0
        by_first = {}
        for coefficient, factors in terms:
            by_first.setdefault(min(factors), []).append((coefficient, factors))
        self.move(0)
        for site in range(len(self.sites)):
            self.move(site)
            for coefficient, factors in by_first.get(site, []):
                block = self.sites[site]
                if len(factors) == 2:
                    block = np.einsum("asb,btc->astc", block, self.sites[site + 1])
                    operator = np.kron(factors[site], factors[site + 1])
                    block = block.reshape(block.shape[0], 4, block.shape[3])
                else:
                    operator = factors[site]
                total += coefficient * np.real(np.einsum("asb,ts,atb->", block.conj(), operator, block))
        return total


def simulate(gates: tuple, params: np.ndarray, n: int, max_bond: int = 256) -> ReferenceMPS:
    state = ReferenceMPS(n, max_bond)
    for gate in gates:
        angle = None if gate.param is None else gate.scale * float(params[gate.param])
        state.apply(gate_matrix(gate.name, angle), gate.qubits)
    return state


def pauli_terms(hamiltonian: tuple) -> list[tuple[float, dict[int, np.ndarray]]]:
    return [(float(np.real(c)), {q: PAULIS[letter] for q, letter in enumerate(string) if letter != "I"})
            for c, string in hamiltonian]


def magnetisation(spec) -> float:
    state = simulate(spec.gates, spec.params, spec.n)
    return state.local_expectations([(1.0 / spec.n, {q: Z}) for q in range(spec.n)])


def energy(spec, params: np.ndarray) -> float:
    return simulate(spec.gates, params, spec.n).local_expectations(pauli_terms(spec.hamiltonian))


def energy_and_gradient(spec) -> tuple[float, np.ndarray]:
    """The energy and its parameter-shift gradient (every parametric gate shifted by ±π/2)."""
    gradient = np.zeros(spec.num_params)
    gates = list(spec.gates)
    for index, gate in enumerate(gates):
        if gate.param is None:
            continue
        shifted = []
        for shift in (np.pi / 2, -np.pi / 2):
            angles = np.append(spec.params, 0.0)
            angles[-1] = gate.scale * spec.params[gate.param] + shift
            moved = gates[:index] + [gate._replace(param=len(angles) - 1, scale=1.0)] + gates[index + 1:]
            shifted.append(simulate(tuple(moved), angles, spec.n).local_expectations(
                pauli_terms(spec.hamiltonian)))
        gradient[gate.param] += gate.scale * (shifted[0] - shifted[1]) / 2
    return energy(spec, spec.params), gradient
