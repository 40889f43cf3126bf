"""The NumPy reference every engine's result is checked against.

Independent of tyxonq and of every peer: gate matrices are written out here, states are dense
vectors (qubit 0 = most significant bit), gradients come from an adjoint sweep, Adam is the
textbook update (:mod:`adam`). Wide shallow circuits (brickwork) are checked without a 2^n vector:
``<Z>`` by a dense simulation of its light-cone window, ``<0...0|psi>`` by an exact (untruncated)
matrix-product state. :func:`expected` gives each workload's result in the canonical form the
engines' results are converted to; :func:`deviation` compares the two.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any, Sequence

import numpy as np
from adam import Adam
from specs import Gate, Spec

_PAULI = {
    "I": np.eye(2, dtype=complex),
    "X": np.array([[0, 1], [1, 0]], dtype=complex),
    "Y": np.array([[0, -1j], [1j, 0]], dtype=complex),
    "Z": np.diag([1.0, -1.0]).astype(complex),
}
#: the Pauli operator P of each rotation exp(-iθP/2)
_GENERATOR = {"rx": _PAULI["X"], "ry": _PAULI["Y"], "rz": _PAULI["Z"],
              "rzz": np.kron(_PAULI["Z"], _PAULI["Z"])}
_FIXED = {
    "h": np.array([[1, 1], [1, -1]], dtype=complex) / np.sqrt(2),
    "cx": np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=complex),
    "cz": np.diag([1.0, 1.0, 1.0, -1.0]).astype(complex),
}


def gate_matrix(gate: Gate, params: np.ndarray) -> np.ndarray:
    """The unitary of ``gate`` (rotations: ``cos(θ/2) I - i sin(θ/2) P``)."""
    if gate.name in _FIXED:
        return _FIXED[gate.name]
    angle = gate.scale * float(params[gate.param])
    generator = _GENERATOR[gate.name]
    return np.cos(angle / 2) * np.eye(len(generator)) - 1j * np.sin(angle / 2) * generator


def apply(state: np.ndarray, matrix: np.ndarray, qubits: Sequence[int], n: int) -> np.ndarray:
    """``matrix`` on ``qubits`` of the dense ``n``-qubit ``state``."""
    k = len(qubits)
    tensor = np.tensordot(matrix.reshape((2,) * (2 * k)), state.reshape((2,) * n),
                          axes=(list(range(k, 2 * k)), list(qubits)))
    return np.moveaxis(tensor, list(range(k)), list(qubits)).reshape(-1)


def simulate(gates: Sequence[Gate], params: np.ndarray, n: int) -> np.ndarray:
    """The state ``gates`` make from ``|0...0>`` (consecutive one-qubit gates on a qubit are
    multiplied into one matrix first: a third fewer passes over a large state)."""
    state = np.zeros(2 ** n, dtype=complex)
    state[0] = 1
    pending: dict[int, np.ndarray] = {}

    def flush(qubits: Sequence[int]) -> np.ndarray:
        nonlocal state
        for q in qubits:
            if q in pending:
                state = apply(state, pending.pop(q), (q,), n)
        return state

    for gate in gates:
        matrix = gate_matrix(gate, params)
        if len(gate.qubits) == 1:
            q = gate.qubits[0]
            pending[q] = matrix @ pending[q] if q in pending else matrix
        else:
            state = apply(flush(gate.qubits), matrix, gate.qubits, n)
    return flush(list(pending))


def apply_hamiltonian(state: np.ndarray, hamiltonian: Sequence[tuple[float, str]], n: int) -> np.ndarray:
    """``H |state>`` for ``H = Σ c P`` (Pauli strings, letter q on qubit q)."""
    result = np.zeros_like(state)
    for coefficient, pauli in hamiltonian:
        term = state
        for q, letter in enumerate(pauli):
            if letter != "I":
                term = apply(term, _PAULI[letter], (q,), n)
        result += coefficient * term
    return result


def energy(gates: Sequence[Gate], params: np.ndarray, hamiltonian: Sequence[tuple[float, str]],
           n: int) -> float:
    state = simulate(gates, params, n)
    return float(np.vdot(state, apply_hamiltonian(state, hamiltonian, n)).real)


def energy_and_gradient(gates: Sequence[Gate], params: np.ndarray,
                        hamiltonian: Sequence[tuple[float, str]], n: int) -> tuple[float, np.ndarray]:
    """Energy and its exact gradient by an adjoint sweep: for ``U(θ) = exp(-iθP/2)``,
    ``dE/dθ = Im <λ| P |ψ>`` with ``λ`` the back-propagated ``H ψ`` and ``ψ`` the state after the gate."""
    state = simulate(gates, params, n)
    adjoint = apply_hamiltonian(state, hamiltonian, n)
    value = float(np.vdot(state, adjoint).real)
    gradient = np.zeros(params.shape[-1])
    for gate in reversed(gates):
        if gate.param is not None:
            generated = apply(state, _GENERATOR[gate.name], gate.qubits, n)
            gradient[gate.param] += gate.scale * float(np.vdot(adjoint, generated).imag)
        inverse = gate_matrix(gate, params).conj().T
        state = apply(state, inverse, gate.qubits, n)
        adjoint = apply(adjoint, inverse, gate.qubits, n)
    return value, gradient


def adam_run(spec: Spec) -> tuple[np.ndarray, float]:
    """``spec.steps`` Adam steps from ``spec.params``: the last evaluated point and its energy."""
    optimizer = Adam(spec.params, spec.learning_rate)
    for _ in range(spec.steps):
        point = optimizer.x.copy()
        value, gradient = energy_and_gradient(spec.gates, point, spec.hamiltonian, spec.n)
        optimizer.step(gradient)
    return point, value


def window(gates: Sequence[Gate], low: int, high: int) -> list[Gate]:
    """The gates acting only within qubits ``low..high``, renumbered from 0."""
    return [g._replace(qubits=tuple(q - low for q in g.qubits)) for g in gates
            if all(low <= q <= high for q in g.qubits)]


def local_z(spec: Spec) -> float:
    """``<Z_observed>`` from a dense simulation of the backward light cone's window
    (``observed ± layers`` holds it: each layer widens the cone by at most one qubit per side)."""
    low, high = max(0, spec.observed - spec.layers), min(spec.n - 1, spec.observed + spec.layers)
    state = simulate(window(spec.gates, low, high), spec.params, high - low + 1)
    probabilities = np.abs(state) ** 2
    bits = (np.arange(probabilities.size) >> (high - spec.observed)) & 1
    return float(np.sum(probabilities * (1 - 2 * bits)))


def mps_amplitude(gates: Sequence[Gate], params: np.ndarray, n: int) -> complex:
    """``<0...0|psi>`` from an exact matrix-product state (nearest-neighbour gates only; a
    two-qubit gate is applied to the pair and split by an SVD that drops only singular values
    below 1e-15 of the largest, so bond dimensions stay at 2^(layers/2) for a brickwork)."""
    sites = [np.array([1.0, 0.0], dtype=complex).reshape(1, 2, 1) for _ in range(n)]
    for gate in gates:
        matrix = gate_matrix(gate, params)
        if len(gate.qubits) == 1:
            q = gate.qubits[0]
            sites[q] = np.einsum("ij,ajb->aib", matrix, sites[q])
            continue
        a, b = gate.qubits
        if abs(a - b) != 1:
            raise ValueError(f"mps_amplitude needs nearest-neighbour gates; got {gate}")
        if a > b:  # the matrix acts on (a, b): reorder it to (b, a) = (left, right)
            matrix = matrix.reshape(2, 2, 2, 2).transpose(1, 0, 3, 2).reshape(4, 4)
        left, right = min(a, b), max(a, b)
        pair = np.einsum("aib,bjc->aijc", sites[left], sites[right])
        pair = np.einsum("klij,aijc->aklc", matrix.reshape(2, 2, 2, 2), pair)
        rows, cols = pair.shape[0] * 2, pair.shape[3] * 2
        u, s, vh = np.linalg.svd(pair.reshape(rows, cols), full_matrices=False)
        keep = max(1, int(np.sum(s > 1e-15 * s[0])))
        sites[left] = u[:, :keep].reshape(pair.shape[0], 2, keep)
        sites[right] = (s[:keep, None] * vh[:keep]).reshape(keep, 2, pair.shape[3])
    amplitude = np.ones((1, 1), dtype=complex)
    for site in sites:
        amplitude = amplitude @ site[:, 0, :]
    return complex(amplitude[0, 0])


def compute(spec: Spec) -> tuple[Any, ...]:
    """The expected result of ``spec`` in canonical form (NaN: not checked)."""
    if spec.workload == "statevector":
        return (simulate(spec.gates, spec.params, spec.n),)
    if spec.workload in ("energy_gradient", "qaoa_gradient"):
        return energy_and_gradient(spec.gates, spec.params, spec.hamiltonian, spec.n)
    if spec.workload == "adam_vqe_100":
        return adam_run(spec)
    if spec.workload == "batched_energies_64":
        return (np.array([energy(spec.gates, row, spec.hamiltonian, spec.n) for row in spec.params]),)
    if spec.workload == "brickwork_local":
        return mps_amplitude(spec.gates, spec.params, spec.n), local_z(spec)
    if spec.workload == "shallow_amplitude":
        return (mps_amplitude(spec.gates, spec.params, spec.n),)
    raise ValueError(f"no reference for workload {spec.workload!r}")


def expected(spec: Spec) -> tuple[Any, ...]:
    """:func:`compute`, cached as ``.npz`` in ``$BENCH_REFERENCE_DIR`` when that is set (the suite
    sets it for one run, so each reference is computed once, not once per engine)."""
    folder = os.environ.get("BENCH_REFERENCE_DIR")
    if not folder:
        return compute(spec)
    path = pathlib.Path(folder) / f"{spec.workload}-{spec.n}.npz"
    if path.exists():
        with np.load(path) as stored:
            return tuple(stored[f"part{i}"] for i in range(len(stored.files)))
    result = compute(spec)
    np.savez(path.with_suffix(".tmp.npz"), **{f"part{i}": np.asarray(p) for i, p in enumerate(result)})
    path.with_suffix(".tmp.npz").replace(path)
    return result


#: parts of a result compared relative to the reference's magnitude: the amplitude of a wide
#: circuit is tiny (about 3e-9 at 50 qubits), so an absolute 1e-8 would accept anything
RELATIVE_PARTS = {"brickwork_local": (0,), "shallow_amplitude": (0,)}


def deviation(workload: str, result: Any, reference: tuple[Any, ...]) -> float:
    """Largest difference between a canonical result and the reference: absolute, or relative to
    the reference's largest magnitude for the parts in :data:`RELATIVE_PARTS`. A NaN, a missing
    part or a wrong shape counts as infinite."""
    parts = result if isinstance(result, tuple) else (result,)
    if len(parts) != len(reference):
        return float("inf")
    worst = 0.0
    for index, (got, want) in enumerate(zip(parts, reference)):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            return float("inf")
        difference = np.max(np.abs(got - want), initial=0.0)
        if index in RELATIVE_PARTS.get(workload, ()):
            difference /= max(float(np.max(np.abs(want), initial=0.0)), np.finfo(float).tiny)
        worst = max(worst, float(difference) if not np.isnan(difference) else float("inf"))
    return worst
