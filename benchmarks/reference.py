"""The NumPy reference every engine's result is checked against.

Independent of tyxonq and of every peer: gate matrices are written out here, states are dense
vectors (qubit 0 = most significant bit), gradients come from an adjoint sweep, Adam is the
textbook update (:mod:`adam`). Wide shallow circuits (brickwork) are checked without a 2^n vector:
``<Z>`` and the TFIM energy and gradient term by term by dense simulations of light-cone windows,
``<0...0|psi>`` by an exact (untruncated) matrix-product state. The 100-node QAOA energies contract
each term's light cone as one plain einsum of the gate matrices (opt_einsum), their gradients are
fourth-order central differences. The noisy rows are dense density matrices (``rho`` as a
``2n``-qubit vector, a gate ``U`` on the row qubits and ``conj(U)`` on the column qubits, each
depolarising channel its superoperator), their gradients central differences too, and the noisy
brickwork's ``<Z>`` a light-cone window. :func:`expected` gives each workload's result in the canonical
form the engines' results are converted to; :func:`deviation` compares the two.
"""

from __future__ import annotations

import itertools
import os
import pathlib
from typing import Any, Sequence

import numpy as np
from adam import Adam
from specs import (
    ENERGY_ONLY,
    LIGHT_CONE_QAOA,
    MPS,
    NOISY,
    SAMPLING,
    SHOTS,
    STATE_SHOTS,
    TOLERANCE,
    Gate,
    Spec,
)

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


def windowed_energy_and_gradient(spec: Spec) -> tuple[float, np.ndarray]:
    """Energy and exact gradient of a nearest-neighbour brickwork, term by term: each term's
    backward light cone lies in its qubits ± ``spec.layers``, so the adjoint sweep of
    :func:`energy_and_gradient` on that window (the term's Pauli string cut to it; the gates keep
    their parameter indices) gives the term's share of both."""
    value, gradient = 0.0, np.zeros(spec.num_params)
    for coefficient, pauli in spec.hamiltonian:
        acted = [q for q, letter in enumerate(pauli) if letter != "I"]
        low, high = max(0, min(acted) - spec.layers), min(spec.n - 1, max(acted) + spec.layers)
        term = energy_and_gradient(window(spec.gates, low, high), spec.params,
                                   [(coefficient, pauli[low:high + 1])], high - low + 1)
        value, gradient = value + term[0], gradient + term[1]
    return value, gradient


#: gates applied as their diagonal on the wires' current indices (hyperedges: no new indices)
_DIAGONAL = ("rzz", "cz", "rz")


def light_cone(gates: Sequence[Gate], qubits: Sequence[int]) -> list[Gate]:
    """The gates of the backward light cone of ``qubits``, in circuit order: walking back from the
    end, a gate is kept when it touches the cone, which then grows by the gate's qubits. A run of
    consecutive diagonal gates commutes, so its gates are tested against the cone as it was after
    the run (otherwise one layer of QAOA's RZZ would spread the cone along chains of edges)."""
    cone, after_run, kept = set(qubits), set(qubits), []
    for gate in reversed(gates):
        diagonal = gate.name in _DIAGONAL
        if (after_run if diagonal else cone).intersection(gate.qubits):
            cone.update(gate.qubits)
            kept.append(gate)
        if not diagonal:
            after_run = set(cone)
    return kept[::-1]


def light_cone_network(gates: Sequence[Gate], params: np.ndarray,
                       observed: Sequence[int]) -> list[tuple[np.ndarray, list[int]]]:
    """The ket and bra networks of the light cone of ``observed`` joined into ``<Z...Z>``: a list of
    ``(array, indices)``.

    Every wire starts as ``[1, 0]``; a diagonal gate is its diagonal on the wires' current indices,
    any other gate its matrix from new indices to the current ones; the bra is the conjugate on its
    own indices. Each wire's last bra index is its last ket index (the trace), where ``Z`` is the
    vector ``[1, -1]`` on the observed wires."""
    cone = light_cone(gates, observed)
    wires = sorted({q for gate in cone for q in gate.qubits} | set(observed))
    counter = itertools.count()
    ket = {q: next(counter) for q in wires}
    bra = {q: next(counter) for q in wires}
    zero = np.array([1.0, 0.0], dtype=complex)
    operands = [(zero, [side[q]]) for side in (ket, bra) for q in wires]
    for gate in cone:
        matrix, k = gate_matrix(gate, params), len(gate.qubits)
        for side, values in ((ket, matrix), (bra, matrix.conj())):
            old = [side[q] for q in gate.qubits]
            if gate.name in _DIAGONAL:
                operands.append((np.diag(values).reshape((2,) * k), old))
                continue
            new = [next(counter) for _ in gate.qubits]
            operands.append((values.reshape((2,) * (2 * k)), new + old))
            side.update(zip(gate.qubits, new))
    operands += [(np.array([1.0, -1.0], dtype=complex), [ket[q]]) for q in observed]
    joined = {bra[q]: ket[q] for q in wires}
    return [(array, [joined.get(i, i) for i in indices]) for array, indices in operands]


def z_expectation(gates: Sequence[Gate], params: np.ndarray, observed: Sequence[int],
                  optimize: Any = "greedy") -> float:
    """``<Z...Z>`` on ``observed``: :func:`light_cone_network` as one einsum. ``optimize``:
    opt_einsum's path optimizer (its greedy path keeps every term of the 100-node p = 3 energy
    within 2^14 entries and is found in milliseconds; cotengra's hyper-optimised search saves 1-2 of
    width for seconds per term)."""
    import opt_einsum

    operands = light_cone_network(gates, params, observed)
    equation = ",".join("".join(map(opt_einsum.get_symbol, indices)) for _, indices in operands) + "->"
    return float(opt_einsum.contract(equation, *(array for array, _ in operands), optimize=optimize).real)


def light_cone_energy(gates: Sequence[Gate], params: np.ndarray,
                      hamiltonian: Sequence[tuple[float, str]]) -> float:
    """``Σ c <P>`` over Z-string terms, each from :func:`z_expectation` on its light cone."""
    value = 0.0
    for coefficient, pauli in hamiltonian:
        if set(pauli) - {"I", "Z"}:
            raise ValueError(f"light_cone_energy takes Z strings only; got {pauli}")
        value += coefficient * z_expectation(gates, params, [q for q, c in enumerate(pauli) if c == "Z"])
    return value


def central_differences(function: Any, params: np.ndarray, step: float = 5e-4) -> np.ndarray:
    """The gradient of ``function`` by the fourth-order central stencil
    ``(f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / 12h`` in each parameter (error O(h^4))."""
    gradient = np.zeros(params.size)
    for index in range(params.size):
        shift = np.zeros(params.size)
        shift[index] = step
        values = [function(params + k * shift) for k in (-2, -1, 1, 2)]
        gradient[index] = (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * step)
    return gradient


def light_cone_qaoa(spec: Spec) -> tuple[Any, ...]:
    """The light-cone QAOA rows: the energy, and for the gradient rows its central differences."""

    def energy(params: np.ndarray) -> float:
        return light_cone_energy(spec.gates, params, spec.hamiltonian)

    if spec.workload in ENERGY_ONLY:
        return (energy(spec.params),)
    return energy(spec.params), central_differences(energy, spec.params)


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


# -- density matrices ------------------------------------------------------------------------
def superoperator(kraus: Sequence[np.ndarray]) -> np.ndarray:
    """``Σ_a K_a ⊗ conj(K_a)``: the channel on the pair (row qubit, column qubit) of a vectorised
    ``rho`` (``rho[i, j]`` at index ``i * 2^n + j``)."""
    return sum(np.kron(k, k.conj()) for k in kraus)


def depolarizing_superoperator(p: float) -> np.ndarray:
    """``rho -> (1 - p) rho + p/3 (X rho X + Y rho Y + Z rho Z)`` as a 4x4 superoperator."""
    kraus = [np.sqrt(1 - p) * _PAULI["I"]] + [np.sqrt(p / 3) * _PAULI[a] for a in "XYZ"]
    return superoperator(kraus)


def simulate_density(gates: Sequence[Gate], params: np.ndarray, n: int, noise: float) -> np.ndarray:
    """The ``2^n x 2^n`` density matrix (qubit 0 most significant for rows and columns) the noisy
    circuit makes from ``|0...0><0...0|``: ``rho`` is a ``2n``-qubit vector (rows: qubits ``0..n-1``,
    columns: ``n..2n-1``); a gate ``U`` on ``Q`` is ``U`` on ``Q`` and ``conj(U)`` on ``Q + n``; after
    it, the depolarising superoperator on ``(q, q + n)`` for each of its qubits. One-qubit
    superoperators on the same pair (a rotation ``U ⊗ conj(U)`` and the channels around it) are
    multiplied into one 4x4 matrix before they are applied, as :func:`simulate` does."""
    rho = np.zeros(4 ** n, dtype=complex)
    rho[0] = 1
    channel = depolarizing_superoperator(noise)
    pending: dict[int, np.ndarray] = {}

    def push(q: int, matrix: np.ndarray) -> None:
        pending[q] = matrix @ pending[q] if q in pending else matrix

    def flush(qubits: Sequence[int]) -> None:
        nonlocal rho
        for q in qubits:
            if q in pending:
                rho = apply(rho, pending.pop(q), (q, q + n), 2 * n)

    for gate in gates:
        matrix = gate_matrix(gate, params)
        if len(gate.qubits) == 1:
            push(gate.qubits[0], np.kron(matrix, matrix.conj()))
        else:
            flush(gate.qubits)
            rho = apply(rho, matrix, gate.qubits, 2 * n)
            rho = apply(rho, matrix.conj(), [q + n for q in gate.qubits], 2 * n)
        for q in gate.qubits:
            push(q, channel)
    flush(list(pending))
    return rho.reshape(2 ** n, 2 ** n)


def pauli_trace(rho: np.ndarray, pauli: str) -> float:
    """``Re Tr(P rho)`` of a Pauli string (letter q on qubit q): ``P|j> = phase(j) |j ^ x>``, so
    ``Tr(P rho) = Σ_j phase(j) rho[j, j ^ x]``."""
    n = len(pauli)
    index = np.arange(2 ** n)
    flip, phase = 0, np.ones(2 ** n, dtype=complex)
    for q, letter in enumerate(pauli):
        bit = (index >> (n - 1 - q)) & 1
        if letter in "XY":
            flip |= 1 << (n - 1 - q)
        if letter == "Y":
            phase = phase * 1j * (1 - 2 * bit)
        elif letter == "Z":
            phase = phase * (1 - 2 * bit)
    return float(np.sum(phase * rho[index, index ^ flip]).real)


def noisy_energy(spec: Spec, params: np.ndarray) -> float:
    """``Tr(H rho(params))`` of the noisy circuit."""
    rho = simulate_density(spec.gates, params, spec.n, spec.noise)
    return sum(coefficient * pauli_trace(rho, pauli) for coefficient, pauli in spec.hamiltonian)


def noisy_window(spec: Spec) -> tuple[int, int]:
    """The qubits ``low..high`` = ``observed - layers - 1 .. observed + layers`` (cut to the
    register) that hold the backward light cone of ``Z_observed`` in a nearest-neighbour brickwork
    of ``spec.layers`` layers (each widens it by at most one qubit per side; one spare on the left).
    A gate that leaves the window touches a qubit outside the cone, so it is outside the cone too,
    and the channels after it are trace preserving: dropping both leaves ``<Z_observed>`` exact."""
    return max(0, spec.observed - spec.layers - 1), min(spec.n - 1, spec.observed + spec.layers)


def noisy_local_z(spec: Spec, bounds: tuple[int, int] | None = None) -> float:
    """``<Z_observed>`` of the noisy brickwork from a dense density matrix of the window
    :func:`noisy_window` (``bounds``: another window, e.g. the whole register to check it)."""
    low, high = bounds if bounds is not None else noisy_window(spec)
    size = high - low + 1
    rho = simulate_density(window(spec.gates, low, high), spec.params, size, spec.noise)
    return pauli_trace(rho, "".join("Z" if q == spec.observed else "I" for q in range(low, high + 1)))


def noisy(spec: Spec) -> tuple[Any, ...]:
    """The noisy rows: energy; energy and its central differences; density matrix; ``<Z>``."""
    if spec.workload == "noisy_energy":
        return (noisy_energy(spec, spec.params),)
    if spec.workload == "noisy_energy_gradient":
        energy = lambda params: noisy_energy(spec, params)  # noqa: E731
        return energy(spec.params), central_differences(energy, spec.params)
    if spec.workload == "noisy_density_matrix":
        return (simulate_density(spec.gates, spec.params, spec.n, spec.noise),)
    return (noisy_local_z(spec),)


def compute(spec: Spec) -> tuple[Any, ...]:
    """The expected result of ``spec`` in canonical form (NaN: not checked)."""
    if spec.workload == "statevector":
        return (simulate(spec.gates, spec.params, spec.n),)
    if spec.workload == "state_sampling":  # every qubit's exact <Z>, which the samples' means estimate
        probabilities = np.abs(simulate(spec.gates, spec.params, spec.n)) ** 2
        return (z_means_exact(probabilities, spec.n),)
    if spec.workload in ("energy_gradient", "qaoa_gradient"):
        return energy_and_gradient(spec.gates, spec.params, spec.hamiltonian, spec.n)
    if spec.workload == "adam_vqe_100":
        return adam_run(spec)
    if spec.workload == "batched_energies_64":
        return (np.array([energy(spec.gates, row, spec.hamiltonian, spec.n) for row in spec.params]),)
    if spec.workload == "brickwork_local":
        return mps_amplitude(spec.gates, spec.params, spec.n), local_z(spec)
    if spec.workload in LIGHT_CONE_QAOA:
        return light_cone_qaoa(spec)
    if spec.workload == "tfim_brickwork_gradient":
        return windowed_energy_and_gradient(spec)
    if spec.workload == "shallow_amplitude":
        return (mps_amplitude(spec.gates, spec.params, spec.n),)
    if spec.workload == "reversible_arithmetic":
        return (classical_z(spec),)
    if spec.workload in NOISY:
        return noisy(spec)
    if spec.workload in MPS:
        return mps(spec)
    raise ValueError(f"no reference for workload {spec.workload!r}")


def z_means_exact(probabilities: np.ndarray, n: int) -> np.ndarray:
    """Every qubit's ``<Z>`` under basis-state ``probabilities`` (qubit 0 the most significant)."""
    marginals = probabilities.reshape((2,) * n)
    return np.array([float(np.sum(np.moveaxis(marginals, q, 0)[0]) - np.sum(np.moveaxis(marginals, q, 0)[1]))
                     for q in range(n)])


def classical_z(spec: Spec) -> np.ndarray:
    """``<Z_q>`` of every qubit of a circuit of X/CX/CCX gates on ``|0...0>``, by running it on
    bits (the state is one basis state throughout)."""
    bits = np.zeros(spec.n, dtype=int)
    for gate in spec.gates:
        *controls, target = gate.qubits
        bits[target] ^= int(all(bits[q] for q in controls))
    return 1.0 - 2.0 * bits


def mps(spec: Spec) -> tuple[Any, ...]:
    """The MPS and sampling rows: the exact ``<Z>`` of the depth-20 brickwork and of the sampled
    circuits (twice: the expectation and the samples' mean are both compared with it) by
    tensor-network contraction of its light cone (tyxonq's ``Circuit``: beyond a dense window or
    an exact MPS, and not one of the simulators whose MPS is measured); the quench's
    magnetisation and the ansatz's energy and gradient from the NumPy MPS of
    ``reference_mps.py``."""
    import reference_mps

    if spec.workload == "mps_quench":
        return (reference_mps.magnetisation(spec),)
    if spec.workload == "mps_energy_gradient":
        return reference_mps.energy_and_gradient(spec)
    import tyxonq as tq

    with tq.use_backend("numpy"):
        circuit = tq.Circuit(spec.n)
        for gate in spec.gates:
            angles = () if gate.param is None else (gate.scale * float(spec.params[gate.param]),)
            getattr(circuit, gate.name)(*gate.qubits, *angles)
        z = float(circuit.expectation_ps(z=[spec.observed]))
    return z, z


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


#: per-part tolerances of rows that are not exact (elsewhere every part has ``TOLERANCE``): the
#: truncated MPS brickwork's ``<Z>`` against the exact value, and its sampled mean (5 standard
#: errors of ``SHOTS`` shots of a +-1 variable, plus that); the quench's magnetisation (truncated
#: at max_bond 32 against the converged reference); the wide-sampling row's ``<Z>`` (the peers'
#: MPS cut weight below 1e-12) and its exact samples' mean (5 standard errors); the 10^5 samples'
#: means of every qubit's ``<Z>`` (5 standard errors of ``STATE_SHOTS`` shots)
PART_TOLERANCES = {"mps_brickwork": (1e-2, 1e-2 + 5 / np.sqrt(SHOTS)), "mps_quench": (1e-6,),
                   "state_sampling": (5 / np.sqrt(STATE_SHOTS),),
                   **{row: (1e-6, 5 / np.sqrt(SHOTS)) for row in SAMPLING}}

#: the canonical result of the MPS rows is a dict (with the library's truncation report); its
#: compared parts, in order
MPS_PARTS = {"mps_brickwork": ("z", "sampled_z"), **{row: ("z", "sampled_z") for row in SAMPLING},
             "mps_quench": ("magnetisation",),
             "mps_energy_gradient": ("energy", "gradient")}


def split_report(workload: str, result: Any) -> tuple[Any, dict]:
    """A canonical result without its side report: the MPS rows' ``truncation_error``."""
    if workload not in MPS_PARTS or not isinstance(result, dict):
        return result, {}
    return tuple(result[key] for key in MPS_PARTS[workload]), {
        "truncation_error": result.get("truncation_error")}


def within_tolerance(workload: str, result: Any, reference: tuple[Any, ...]) -> bool:
    """Whether every part deviates by at most its tolerance."""
    limits = PART_TOLERANCES.get(workload, (TOLERANCE,) * len(reference))
    deviations = part_deviations(workload, result, reference)
    return len(deviations) == len(reference) and all(d <= limit for d, limit in zip(deviations, limits))


def deviation(workload: str, result: Any, reference: tuple[Any, ...]) -> float:
    """The largest of :func:`part_deviations` (infinite when a part is missing)."""
    parts = part_deviations(workload, result, reference)
    return max(parts) if len(parts) == len(reference) else float("inf")


def part_deviations(workload: str, result: Any, reference: tuple[Any, ...]) -> list[float]:
    """Each part's difference from the reference: absolute, or relative to the reference's
    largest magnitude for the parts in :data:`RELATIVE_PARTS`. A NaN or a wrong shape counts as
    infinite; a missing part is left out (the list is shorter)."""
    parts = result if isinstance(result, tuple) else (result,)
    if len(parts) != len(reference):
        return []
    differences = []
    for index, (got, want) in enumerate(zip(parts, reference)):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            differences.append(float("inf"))
            continue
        difference = np.max(np.abs(got - want), initial=0.0)
        if index in RELATIVE_PARTS.get(workload, ()):
            difference /= max(float(np.max(np.abs(want), initial=0.0)), np.finfo(float).tiny)
        differences.append(float(difference) if not np.isnan(difference) else float("inf"))
    return differences
