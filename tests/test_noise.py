"""Channels and density-matrix circuits against a plain dense reference.

The reference applies ``rho -> U rho U^dagger`` for gates and ``rho -> sum_a K_a rho K_a^dagger``
for channels, with Kraus operators written here from their textbook formulas (not from tyxonq).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import PARAMETRISED, X, Y, Z, apply, random_hermitian, reference_matrix
from tyxonq.circuit import NoisyCircuitError

I2 = np.eye(2, dtype=complex)
PAULI = {"I": I2, "X": X, "Y": Y, "Z": Z}


# -- the reference ------------------------------------------------------------------------------
def reference_kraus(name: str, params: dict) -> list[np.ndarray]:
    """Kraus operators from the textbook formulas."""
    if name == "depolarizing":
        p, k = params["p"], params.get("num_qubits", 1)
        strings = ["".join(s) for s in itertools.product("IXYZ", repeat=k)]
        mats = [np.kron(PAULI[s[0]], PAULI[s[1]]) if k == 2 else PAULI[s] for s in strings]
        return [np.sqrt(1 - p) * mats[0]] + [np.sqrt(p / (4 ** k - 1)) * m for m in mats[1:]]
    if name == "pauli":
        px, py, pz = params["px"], params["py"], params["pz"]
        return [np.sqrt(max(1 - px - py - pz, 0.0)) * I2, np.sqrt(px) * X, np.sqrt(py) * Y, np.sqrt(pz) * Z]
    if name == "bit_flip":
        return [np.sqrt(1 - params["p"]) * I2, np.sqrt(params["p"]) * X]
    if name == "phase_flip":
        return [np.sqrt(1 - params["p"]) * I2, np.sqrt(params["p"]) * Z]
    if name == "amplitude_damping":
        g, q = params["gamma"], params["excited_population"]
        return [np.sqrt(1 - q) * np.array([[1, 0], [0, np.sqrt(1 - g)]]),
                np.sqrt(1 - q) * np.array([[0, np.sqrt(g)], [0, 0]]),
                np.sqrt(q) * np.array([[np.sqrt(1 - g), 0], [0, 1]]),
                np.sqrt(q) * np.array([[0, 0], [np.sqrt(g), 0]])]
    if name == "phase_damping":
        g = params["gamma"]
        return [np.array([[1, 0], [0, np.sqrt(1 - g)]]), np.array([[0, 0], [0, np.sqrt(g)]])]
    if name == "reset":
        return [np.array([[1, 0], [0, 0]]), np.array([[0, 1], [0, 0]])]
    raise ValueError(name)


def thermal_reference(rho: np.ndarray, t1: float, t2: float, time: float, q: float) -> np.ndarray:
    """Populations relax to ``q`` in |1> with exp(-t/T1); coherences decay with exp(-t/T2)."""
    decay = np.exp(-time / t1)
    p1 = rho[1, 1].real * decay + q * (1 - decay)
    coherence = rho[0, 1] * np.exp(-time / t2)
    return np.array([[1 - p1, coherence], [np.conj(coherence), p1]])


def apply_channel(rho: np.ndarray, kraus_ops: list[np.ndarray], qubits: tuple, n: int) -> np.ndarray:
    """``sum_a K_a rho K_a^dagger`` on ``qubits``."""
    vector = rho.reshape(-1)  # rho as a 2n-qubit vector: rows (ket) then columns (bra)
    bra = tuple(n + q for q in qubits)
    out = sum(apply(apply(vector, np.asarray(k), qubits, 2 * n), np.conj(k), bra, 2 * n) for k in kraus_ops)
    return out.reshape(2 ** n, 2 ** n)


def reference_density(n: int, operations: list[tuple], rho: np.ndarray | None = None) -> np.ndarray:
    """``operations``: ("gate", name, qubits, params) or ("channel", name, qubits, params)."""
    if rho is None:
        rho = np.zeros((2 ** n, 2 ** n), dtype=complex)
        rho[0, 0] = 1.0
    for kind, name, qubits, params in operations:
        ops = [reference_matrix(name, params)] if kind == "gate" else reference_kraus(name, params)
        rho = apply_channel(rho, ops, qubits, n)
    return rho


def build(n: int, operations: list[tuple], inputs=None) -> tq.DMCircuit:
    c = tq.DMCircuit(n, inputs=inputs)
    for kind, name, qubits, params in operations:
        if kind == "gate":
            getattr(c, name)(*qubits, *params)
        elif name == "depolarizing":
            c.depolarizing(*qubits, p=params["p"])
        else:
            getattr(c, name)(*qubits, **{k: v for k, v in params.items() if k != "num_qubits"})
    return c


GATE_NAMES = ("h", "x", "sx", "s", "t", "cx", "cz", "swap", "rx", "ry", "rz", "rzz", "rxx", "crx", "cphase")


@st.composite
def noisy_circuits(draw, max_qubits=4, max_operations=12):
    n = draw(st.integers(1, max_qubits))
    probability = st.floats(0.0, 1.0)
    operations = []
    for _ in range(draw(st.integers(1, max_operations))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(GATE_NAMES))
            k = 2 if name in ("cx", "cz", "swap", "rzz", "rxx", "crx", "cphase") else 1
            if k > n:
                continue
            count = PARAMETRISED[name][1] if name in PARAMETRISED else 0
            params = tuple(draw(st.floats(-np.pi, np.pi)) for _ in range(count))
            operations.append(("gate", name, tuple(draw(st.permutations(range(n)))[:k]), params))
            continue
        name = draw(st.sampled_from(["depolarizing", "depolarizing2", "pauli", "bit_flip", "phase_flip",
                                     "amplitude_damping", "phase_damping", "reset"]))
        if name == "depolarizing2":
            if n < 2:
                continue
            operations.append(("channel", "depolarizing", tuple(draw(st.permutations(range(n)))[:2]),
                               {"p": draw(probability), "num_qubits": 2}))
            continue
        qubit = (draw(st.integers(0, n - 1)),)
        if name in ("depolarizing", "bit_flip", "phase_flip"):
            params = {"p": draw(probability)}
        elif name == "pauli":
            weights = draw(st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4))
            total = sum(weights) or 1.0
            params = dict(zip(("px", "py", "pz"), (w / total for w in weights[:3])))
        elif name == "amplitude_damping":
            params = {"gamma": draw(probability), "excited_population": draw(probability)}
        elif name == "phase_damping":
            params = {"gamma": draw(probability)}
        else:
            params = {}
        operations.append(("channel", name, qubit, params))
    return n, operations


def close(K, got, expected, atol=1e-10):
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=atol)


# -- channels -----------------------------------------------------------------------------------
CHANNEL_CASES = [
    ("depolarizing", {"p": 0.3}), ("depolarizing", {"p": 0.2, "num_qubits": 2}),
    ("pauli", {"px": 0.1, "py": 0.2, "pz": 0.3}), ("bit_flip", {"p": 0.4}), ("phase_flip", {"p": 0.25}),
    ("amplitude_damping", {"gamma": 0.3, "excited_population": 0.0}),
    ("amplitude_damping", {"gamma": 0.3, "excited_population": 0.4}),
    ("phase_damping", {"gamma": 0.6}), ("reset", {}),
]


@pytest.mark.parametrize("name,params", CHANNEL_CASES)
def test_channel_forms_agree_with_the_formulas_and_each_other(name, params):
    channel = getattr(tq.channels, name)(**params)
    d = 2 ** channel.num_qubits
    rho = random_hermitian(np.random.default_rng(3), channel.num_qubits)
    expected = sum(k @ rho @ k.conj().T for k in reference_kraus(name, params))
    kraus = [np.asarray(k) for k in channel.kraus()]
    np.testing.assert_allclose(sum(k @ rho @ k.conj().T for k in kraus), expected, atol=1e-12)
    superoperator, choi = np.asarray(channel.superoperator()), np.asarray(channel.choi())
    np.testing.assert_allclose((superoperator @ rho.reshape(-1)).reshape(d, d), expected, atol=1e-12)
    # Choi -> superoperator by reshuffling: J[(i, o), (j, p)] = S[(o, p), (i, j)]
    reshuffled = choi.reshape(d, d, d, d).transpose(1, 3, 0, 2).reshape(d * d, d * d)
    np.testing.assert_allclose(reshuffled, superoperator, atol=1e-12)
    np.testing.assert_allclose(np.trace(choi.reshape(d, d, d, d), axis1=1, axis2=3), np.eye(d), atol=1e-12)
    rebuilt = tq.channels.from_choi(choi)
    np.testing.assert_allclose(np.asarray(rebuilt.superoperator()), superoperator, atol=1e-10)
    assert channel.diagonal == (name in ("phase_flip", "phase_damping"))


@pytest.mark.parametrize("t1,t2,time,population", [(50.0, 30.0, 10.0, 0.0), (20.0, 35.0, 7.0, 0.1),
                                                   (10.0, 20.0, 3.0, 0.0)])
def test_thermal_relaxation_relaxes_populations_and_coherences(t1, t2, time, population):
    channel = tq.channels.thermal_relaxation(t1, t2, time, excited_population=population)
    rho = np.array([[0.3, 0.2 - 0.4j], [0.2 + 0.4j, 0.7]])
    got = (np.asarray(channel.superoperator()) @ rho.reshape(-1)).reshape(2, 2)
    np.testing.assert_allclose(got, thermal_reference(rho, t1, t2, time, population), atol=1e-12)


@pytest.mark.parametrize("make,message", [
    (lambda: tq.channels.depolarizing(-0.1), "p=-0.1"),
    (lambda: tq.channels.bit_flip(1.5), "p=1.5"),
    (lambda: tq.channels.pauli(0.5, 0.4, 0.3), "at most 1"),
    (lambda: tq.channels.amplitude_damping(0.2, excited_population=2.0), "excited_population"),
    (lambda: tq.channels.thermal_relaxation(10.0, 25.0, 1.0), "t2=25.0 must be at most 2 \\* t1"),
    (lambda: tq.channels.thermal_relaxation(-1.0, 1.0, 1.0), "t1=-1.0 must be positive"),
    (lambda: tq.channels.kraus([np.eye(2), np.eye(4)]), "mismatched shapes"),
    (lambda: tq.channels.kraus([np.ones((2, 3))]), "square"),
    (lambda: tq.channels.kraus([np.eye(3)]), "2\\^k"),
    (lambda: tq.channels.kraus([np.eye(2), 0.1 * np.eye(2)]), "not trace preserving: max .* = 1.000e-02"),
    (lambda: tq.channels.depolarizing(0.1, num_qubits=3), "num_qubits=3"),
])
def test_bad_channel_arguments_name_the_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_channel_placements_raise():
    with pytest.raises(ValueError, match="depolarizing acts on 2 qubit"):
        tq.DMCircuit(3).channel(tq.channels.depolarizing(0.1, num_qubits=2), 0)
    with pytest.raises(TypeError, match="must be a tq.channels.Channel"):
        tq.DMCircuit(2).channel(np.eye(2), 0)
    with pytest.raises(ValueError, match="out of range"):
        tq.DMCircuit(2).bit_flip(2, p=0.1)


# -- density-matrix circuits against the reference ------------------------------------------------
@pytest.mark.parametrize("backend_name", BACKEND_IDS)
def test_noisy_circuits_match_the_dense_reference(backend_name):
    K = make_backend(backend_name)

    @settings(max_examples=20, deadline=None)
    @given(circuit=noisy_circuits(), seed=st.integers(0, 2 ** 16))
    def check(circuit, seed):
        n, operations = circuit
        rng = np.random.default_rng(seed)
        inputs = _random_inputs(rng, n, seed % 3)  # |0...0>, a state vector or a density matrix
        rho = inputs if inputs is None or inputs.ndim == 2 else np.outer(inputs, inputs.conj())
        expected = reference_density(n, operations, rho)
        with tq.use_backend(K):
            c = build(n, operations, inputs=inputs)
            close(K, c.state(), expected)
            close(K, c.probability(), np.real(np.diag(expected)))
            qubits = tuple(int(q) for q in rng.permutation(n)[: rng.integers(1, n + 1)])
            reduced = _partial_trace(expected, qubits, n)
            close(K, c.reduced_density_matrix(qubits), reduced)
            close(K, c.marginal_probability(qubits), np.real(np.diag(reduced)))
            letters = {int(q): "XYZ"[rng.integers(0, 3)] for q in qubits}
            observable = _pauli_matrix(letters, n)
            value = np.trace(observable @ expected).real
            pauli = {k.lower(): [q for q, letter in letters.items() if letter == k] for k in "XYZ"}
            close(K, c.expectation_ps(**pauli), value)
            string = "".join(letters.get(q, "I") for q in range(n))
            close(K, c.pauli_expectations([string, "I" * n]), [value, 1.0])
            matrix = random_hermitian(rng, 1)
            if seed % 2:
                matrix = np.diag(np.diag(matrix))
            single = _embed(matrix, qubits[0], n)
            close(K, c.expectation((matrix, [qubits[0]])), np.trace(single @ expected).real)
            close(K, c.purity(), np.trace(expected @ expected).real)

    check()


def _random_inputs(rng: np.random.Generator, n: int, kind: int) -> np.ndarray | None:
    """``None`` (kind 0), a random state vector (1) or a random full-rank density matrix (2)."""
    if kind == 0:
        return None
    dimension = 2 ** n
    if kind == 1:
        psi = rng.normal(size=dimension) + 1j * rng.normal(size=dimension)
        return psi / np.linalg.norm(psi)
    a = rng.normal(size=(dimension, dimension)) + 1j * rng.normal(size=(dimension, dimension))
    rho = a @ a.conj().T
    return rho / np.trace(rho).real


def _partial_trace(rho: np.ndarray, keep: tuple, n: int) -> np.ndarray:
    tensor = rho.reshape((2,) * (2 * n))
    traced = [q for q in range(n) if q not in keep]
    letters = list(range(2 * n))
    for q in traced:
        letters[n + q] = letters[q]
    output = list(keep) + [n + q for q in keep]
    reduced = np.einsum(tensor, letters, output)
    return reduced.reshape(2 ** len(keep), 2 ** len(keep))


def _embed(matrix: np.ndarray, qubit: int, n: int) -> np.ndarray:
    full = np.eye(1)
    for q in range(n):
        full = np.kron(full, matrix if q == qubit else I2)
    return full


def _pauli_matrix(letters: dict, n: int) -> np.ndarray:
    full = np.eye(1)
    for q in range(n):
        full = np.kron(full, PAULI[letters.get(q, "I")])
    return full


def test_inputs_state_vector_and_density_matrix():
    rng = np.random.default_rng(7)
    psi = rng.normal(size=4) + 1j * rng.normal(size=4)
    psi /= np.linalg.norm(psi)
    mixed = 0.6 * np.outer(psi, psi.conj()) + 0.4 * np.eye(4) / 4
    operations = [("gate", "h", (0,), ()), ("channel", "amplitude_damping", (1,),
                                            {"gamma": 0.3, "excited_population": 0.0}),
                  ("gate", "cx", (0, 1), ())]
    for inputs, rho in ((psi, np.outer(psi, psi.conj())), (mixed, mixed)):
        c = build(2, operations, inputs=inputs)
        expected = reference_density(2, operations, rho)
        np.testing.assert_allclose(c.state(), expected, atol=1e-12)
        z1 = _pauli_matrix({1: "Z"}, 2)
        np.testing.assert_allclose(c.expectation_ps(z=[1]), np.trace(z1 @ expected).real, atol=1e-12)
    with pytest.raises(ValueError, match="not Hermitian"):
        tq.DMCircuit(1, inputs=np.array([[1.0, 0.5], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="trace 1"):
        tq.DMCircuit(1, inputs=np.eye(2))
    with pytest.raises(ValueError, match="positive semidefinite"):
        tq.DMCircuit(1, inputs=np.array([[1.5, 0.0], [0.0, -0.5]]))
    with pytest.raises(ValueError, match="shape"):
        tq.DMCircuit(2, inputs=np.eye(2))


def test_fidelity_purity_and_conversion():
    ideal = tq.Circuit(2).h(0).cx(0, 1)
    noisy = ideal.copy().depolarizing(0, p=0.3)
    dm = noisy.to_density_matrix()
    expected = reference_density(2, [("gate", "h", (0,), ()), ("gate", "cx", (0, 1), ()),
                                     ("channel", "depolarizing", (0,), {"p": 0.3})])
    psi = np.asarray(ideal.state())
    assert abs(float(dm.fidelity(ideal)) - np.vdot(psi, expected @ psi).real) < 1e-12
    assert abs(float(dm.fidelity(psi)) - np.vdot(psi, expected @ psi).real) < 1e-12
    assert abs(float(tq.DMCircuit.from_circuit(ideal).purity()) - 1.0) < 1e-12
    assert tq.DensityMatrixCircuit is tq.DMCircuit


def test_pure_circuits_with_channels_refuse_exact_results():
    c = tq.Circuit(2).h(0).bit_flip(1, p=0.1)
    for call in (c.state, c.probability, lambda: c.expectation_ps(z=[0]), lambda: c.amplitude(0),
                 lambda: c.sample(10), lambda: c.pauli_expectations(["ZZ"]), c.matrix):
        with pytest.raises(NoisyCircuitError, match="to_density_matrix.*trajectory_expectation"):
            call()
    assert "{bit_flip}" in c.draw()


# -- the light cone -----------------------------------------------------------------------------
def brickwork(n: int, depth: int, p: float, qubits=None) -> list[tuple]:
    """A noisy brickwork: RY layers and CZ bricks, depolarising noise after every gate."""
    rng = np.random.default_rng(11)
    angles = rng.uniform(-np.pi, np.pi, size=(depth, n))
    operations = []
    for layer in range(depth):
        for q in range(n):
            operations.append(("gate", "ry", (q,), (angles[layer, q],)))
            operations.append(("channel", "depolarizing", (q,), {"p": p}))
        for q in range(layer % 2, n - 1, 2):
            operations.append(("gate", "cz", (q, q + 1), ()))
            operations.append(("channel", "depolarizing", (q, q + 1), {"p": p, "num_qubits": 2}))
    return operations


def test_light_cone_of_a_wide_noisy_circuit_matches_the_full_density_matrix():
    n, depth = 7, 3
    operations = brickwork(n, depth, 0.05)
    expected = reference_density(n, operations)
    c = build(n, operations)
    z = _pauli_matrix({3: "Z"}, n)
    assert abs(float(c.expectation_ps(z=[3])) - np.trace(z @ expected).real) < 1e-10
    np.testing.assert_allclose(c.reduced_density_matrix([3, 4]), _partial_trace(expected, (3, 4), n),
                               atol=1e-10)


def test_fifty_qubit_noisy_expectation_contracts_only_its_light_cone():
    n, depth, middle = 50, 4, 25
    operations = brickwork(n, depth, 0.02)
    wide = build(n, operations)
    report = wide.rehearse("expectation_ps", z=[middle])
    assert report.width <= 20, report
    # the same value from the gates on the light cone's qubits only, as a 9-qubit dense reference:
    # ``depth`` layers of nearest-neighbour bricks reach at most ``depth`` qubits to either side
    window = range(middle - depth, middle + depth + 1)
    local = [(kind, name, tuple(q - window[0] for q in qubits), params)
             for kind, name, qubits, params in operations if all(q in window for q in qubits)]
    rho = reference_density(len(window), local)
    z = _pauli_matrix({middle - window[0]: "Z"}, len(window))
    assert abs(float(wide.expectation_ps(z=[middle])) - np.trace(z @ rho).real) < 1e-10


# -- gradients ----------------------------------------------------------------------------------
def noisy_energy(params, p, hamiltonian):
    c = tq.DMCircuit(3)
    for q in range(3):
        c.ry(q, params[q]).depolarizing(q, p=p)
    c.cx(0, 1).amplitude_damping(1, gamma=2 * p).cx(1, 2).rz(2, params[3]).rzz(0, 2, params[4])
    c.rx(2, params[4]).phase_damping(2, gamma=0.3).depolarizing(0, 1, p=p)
    return c.expectation(hamiltonian) + 0.5 * c.expectation_ps(x=[0], z=[2])


def _finite_differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


@pytest.mark.parametrize("method", ["adjoint", "parameter-shift"])
def test_numpy_gradients_of_noisy_expectations_are_exact(method):
    hamiltonian = tq.hamiltonians.tfim(3)
    x = np.array([0.1, 0.5, -0.3, 0.7, 0.2])
    value, gradient = tq.value_and_grad(lambda t: noisy_energy(t, 0.1, hamiltonian), method=method)(x)
    expected = _finite_differences(lambda t: float(noisy_energy(t, 0.1, hamiltonian)), x)
    assert abs(value - float(noisy_energy(x, 0.1, hamiltonian))) < 1e-12
    np.testing.assert_allclose(gradient, expected, atol=1e-8)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "jax"]))
def test_autograd_through_noisy_circuits_reaches_angles_and_channel_parameters(backend_name):
    K = make_backend(backend_name)
    hamiltonian = tq.hamiltonians.tfim(3)
    x, p = np.array([0.1, 0.5, -0.3, 0.7, 0.2]), 0.1
    with tq.use_backend(K):
        value, (angles, noise) = K.value_and_grad(
            lambda t, q: noisy_energy(t, q, hamiltonian), argnums=(0, 1))(
            K.asarray(x, K.real_dtype), K.asarray(p, K.real_dtype))
    with tq.use_backend("numpy"):
        np.testing.assert_allclose(K.to_numpy(angles), _finite_differences(
            lambda t: float(noisy_energy(t, p, hamiltonian)), x), atol=1e-8)
        expected = _finite_differences(lambda q: float(noisy_energy(x, q[0], hamiltonian)), np.array([p]))
        assert abs(float(K.to_numpy(noise)) - expected[0]) < 1e-8
        assert abs(float(K.to_numpy(value)) - float(noisy_energy(x, p, hamiltonian))) < 1e-12


# -- trajectories -------------------------------------------------------------------------------
def noisy_pure_circuit(n: int, p: float) -> tq.Circuit:
    operations = brickwork(n, 3, p)
    c = tq.Circuit(n)
    for kind, name, qubits, params in operations:
        if kind == "gate":
            getattr(c, name)(*qubits, *params)
        else:
            c.depolarizing(*qubits, p=params["p"])
    return c.amplitude_damping(0, gamma=0.3).phase_damping(n - 1, gamma=0.2).reset(1).h(1)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_trajectories_agree_with_the_density_matrix_within_four_standard_errors(backend_name):
    K = make_backend(backend_name)
    n = 5
    hamiltonian = tq.hamiltonians.tfim(n)
    with tq.use_backend(K):
        c = noisy_pure_circuit(n, 0.08)
        exact = float(K.to_numpy(c.to_density_matrix().expectation(hamiltonian)))
        mean, error = tq.noise.trajectory_expectation(c, hamiltonian, 3000, seed=5)
        assert abs(mean - exact) < 4 * error, (mean, exact, error)
        assert 0 < error < 0.1
        again = tq.noise.trajectory_expectation(c, hamiltonian, 3000, seed=5)
        assert again == (mean, error)
        local = [(np.diag([1.0, -1.0]), [2]), (X, [3])]
        exact_local = float(K.to_numpy(c.to_density_matrix().expectation(*local)))
        mean, error = tq.noise.trajectory_expectation(c, local, 3000, seed=6)
        assert abs(mean - exact_local) < 4 * error


def test_trajectories_one_at_a_time_measure_local_operators():
    """States too large to batch run one trajectory at a time (past 22 qubits in complex128; the
    batch limit lowered here): local operators are read from batches of one too (they failed to
    reshape a lone state before), within four standard errors of the density matrix."""
    from tyxonq.circuit.statevector import trajectories

    n = 5
    c = noisy_pure_circuit(n, 0.08)
    local = [(np.diag([1.0, -1.0]), [2]), (X, [3])]
    exact = float(c.to_density_matrix().expectation(*local))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trajectories, "TRAJECTORY_BATCH_ENTRIES", 2 ** n)
        assert trajectories.batch_size(n, 400) == 1
        mean, error = tq.noise.trajectory_expectation(c, local, 400, seed=6)
    assert abs(mean - exact) < 4 * error and 0 < error < 0.1


def test_trajectories_reject_bad_arguments():
    c = tq.Circuit(2).h(0).bit_flip(0, p=0.1)
    with pytest.raises(ValueError, match="trajectories=1 must be an int >= 2"):
        tq.noise.trajectory_expectation(c, tq.PauliSum([(1.0, "ZI")]), 1)
    with pytest.raises(ValueError, match="acts on 3 qubits"):
        tq.noise.trajectory_expectation(c, tq.PauliSum([(1.0, "ZII")]), 10)
    with pytest.raises(ValueError, match="input is a density matrix"):
        tq.noise.trajectory_expectation(tq.DMCircuit(1, inputs=np.eye(2) / 2), [(Z, [0])], 10)


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "jax"])
def test_single_precision_density_matrices(backend_name):
    K = make_backend(backend_name, dtype="complex64")
    operations = brickwork(3, 2, 0.1) + [("channel", "amplitude_damping", (1,),
                                          {"gamma": 0.4, "excited_population": 0.2})]
    with tq.use_backend(K):
        rho = build(3, operations).state()
        assert K.to_numpy(rho).dtype == np.complex64
        close(K, rho, reference_density(3, operations), atol=1e-5)


def test_dense_density_matrices_are_refused_before_allocation():
    c = tq.DMCircuit(30).h(0).depolarizing(0, p=0.1)
    with pytest.raises(MemoryError, match="light cone|Local results"):
        c.state()
    assert abs(float(c.expectation_ps(x=[0])) - (1 - 4 * 0.1 / 3)) < 1e-12


def test_a_density_matrix_with_rounding_level_negative_diagonal_samples():
    """A diagonal entry of -7e-35 (rounding) is never drawn; before: Generator.choice refused the
    whole draw ("Probabilities are not non-negative"). The entry comes with the input (a circuit's
    own rounding depends on the processor's kernels)."""
    rho = np.zeros((8, 8), dtype=complex)
    rho[0, 0], rho[3, 3] = 1.0, -7e-35
    c = tq.DMCircuit(3, inputs=rho).rz(1, 0.3)
    with tq.use_backend("numpy"):
        assert float(np.min(np.asarray(c.probability()))) < 0  # the rounding this test is about
        assert c.sample(10, seed=1) == {"000": 10}
