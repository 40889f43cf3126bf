"""MPSCircuit against the dense reference simulator, on every backend: states, amplitudes,
expectations, reduced density matrices, marginals and samples; truncation bookkeeping against
the exact state; wide chains against the contraction simulator; gradients against parameter
shift and finite differences; every bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import (
    PARAMETRISED,
    X,
    Y,
    Z,
    pauli_matrix,
    random_hermitian,
    random_unitary,
    reference_expectation,
    reference_state,
    reference_unitary,
)
from test_circuit import add_operations, build, random_circuits
from tyxonq.circuit.mps import mps_circuit as mps_circuit_module

PAULI = {"X": X, "Y": Y, "Z": Z}


def build_mps(n: int, operations: list[tuple], **options) -> tq.MPSCircuit:
    return add_operations(tq.MPSCircuit(n, **options), operations)


def close(K, got, expected, atol=1e-10):
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=atol)


def reduced(psi: np.ndarray, keep: tuple, n: int) -> np.ndarray:
    tensor = psi.reshape((2,) * n)
    rest = [q for q in range(n) if q not in keep]
    matrix = np.transpose(tensor, list(keep) + rest).reshape(2 ** len(keep), -1)
    return matrix @ matrix.conj().T


def brickwork(n: int, depth: int, seed: int) -> list[tuple]:
    """Random SU(4)-free brickwork: RY/RZ layers and CZ bricks."""
    rng = np.random.default_rng(seed)
    operations = []
    for layer in range(depth):
        for q in range(n):
            operations.append(("ry", (q,), (float(rng.uniform(0, np.pi)),)))
            operations.append(("rz", (q,), (float(rng.uniform(0, np.pi)),)))
        for q in range(layer % 2, n - 1, 2):
            operations.append(("cz", (q, q + 1), ()))
    return operations


# -- exact simulation against the dense reference ------------------------------------------------
@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
def test_random_circuits_match_the_dense_reference(backend_name):
    K = make_backend(backend_name)

    @settings(max_examples=25, deadline=None)
    @given(circuit=random_circuits(max_qubits=6, max_gates=14), seed=st.integers(0, 2 ** 16))
    def check(circuit, seed):
        n, operations = circuit
        psi = reference_state(n, operations)
        rng = np.random.default_rng(seed)
        with tq.use_backend(K):
            c = build_mps(n, operations, cutoff=0.0)
            close(K, c.state(), psi)
            bits = "".join(str(b) for b in rng.integers(0, 2, n))
            close(K, c.amplitude(bits), psi[int(bits, 2)])
            qubits = tuple(int(q) for q in rng.permutation(n)[: rng.integers(1, n + 1)])
            close(K, c.reduced_density_matrix(qubits), reduced(psi, qubits, n))
            close(K, c.marginal_probability(qubits), np.real(np.diag(reduced(psi, qubits, n))))
            letters = {q: "XYZ"[rng.integers(0, 3)] for q in qubits}
            factors = [(PAULI[letter], (q,)) for q, letter in letters.items()]
            value = reference_expectation(psi, factors, n).real
            pauli = {k.lower(): [q for q, letter in letters.items() if letter == k] for k in "XYZ"}
            close(K, c.expectation_ps(**pauli), value)
            string = "".join(letters.get(q, "I") for q in range(n))
            close(K, c.pauli_expectations([string, "I" * n]), [value, 1.0])
            if n >= 2:  # a two-qubit operator on any two qubits, in either order
                pair = tuple(int(q) for q in rng.permutation(n)[:2])
                matrix = random_hermitian(rng, 2)
                expected = reference_expectation(psi, [(matrix, pair)], n).real
                close(K, c.expectation((matrix, pair)), expected)
            assert all(d <= 2 ** min(i + 1, n - i - 1) for i, d in enumerate(c.bond_dimensions()))

    check()


def test_inverted_operations_apply_their_adjoints():
    """Operations carry a dagger flag (``Circuit.inverse``): the MPS applies U^dagger, as the state
    vector does (it applied U before)."""
    circuit = tq.Circuit(3).h(0).rx(1, 0.3).s(0).cx(0, 1).rzz(1, 2, 0.7).t(2).u(0, 0.2, 0.4, 0.9)
    inverted = circuit.inverse()
    mps = tq.MPSCircuit(3, cutoff=0.0)
    mps.append(circuit)
    mps.append(inverted)
    np.testing.assert_allclose(mps.state(), np.eye(8)[0], atol=1e-12)
    alone = tq.MPSCircuit(3, cutoff=0.0)
    alone.append(inverted)
    np.testing.assert_allclose(alone.state(), inverted.state(), atol=1e-12)


def test_operators_interleaved_across_the_chain():
    rng = np.random.default_rng(5)
    n = 6
    operations = brickwork(n, 3, seed=1)
    psi = reference_state(n, operations)
    c = build_mps(n, operations, cutoff=0.0)
    a, b, single = random_hermitian(rng, 2), random_hermitian(rng, 2), random_hermitian(rng, 1)
    operators = [(a, (4, 0)), (b, (1, 5)), (single, (3,))]
    expected = reference_expectation(psi, operators, n)
    np.testing.assert_allclose(c.expectation(*operators), expected.real, atol=1e-10)
    three = random_hermitian(rng, 3)
    expected = reference_expectation(psi, [(three, (5, 1, 3))], n)
    np.testing.assert_allclose(c.expectation((three, (5, 1, 3))), expected.real, atol=1e-10)


def test_inputs_product_dense_and_site_tensors():
    rng = np.random.default_rng(2)
    n = 5
    operations = brickwork(n, 2, seed=4)
    vectors = rng.normal(size=(n, 2)) + 1j * rng.normal(size=(n, 2))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    product = vectors[0]
    for v in vectors[1:]:
        product = np.kron(product, v)
    dense = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    dense /= np.linalg.norm(dense)
    sites = tq.MPSCircuit(n, inputs=dense).simulated_state("test").sites
    for inputs, psi in ((vectors, product), (dense, dense), ([np.asarray(s) for s in sites], dense)):
        c = build_mps(n, operations, cutoff=0.0, inputs=inputs)
        np.testing.assert_allclose(c.state(), reference_state(n, operations, psi), atol=1e-10)


def test_complex64_within_single_precision():
    K = make_backend("numpy", dtype="complex64")
    n, operations = 5, brickwork(5, 3, seed=3)
    with tq.use_backend(K):
        state = build_mps(n, operations, cutoff=0.0).state()
    assert K.to_numpy(state).dtype == np.complex64
    np.testing.assert_allclose(K.to_numpy(state), reference_state(n, operations), atol=1e-5)


# -- truncation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("max_bond, cutoff", [(4, 0.0), (8, 1e-3), (None, 1e-2)])
def test_truncation_error_bounds_the_infidelity(max_bond, cutoff):
    n = 12
    operations = brickwork(n, 8, seed=7)
    exact = reference_state(n, operations)
    c = build_mps(n, operations, max_bond=max_bond, cutoff=cutoff)
    approximate = c.state()
    infidelity = 1 - abs(np.vdot(exact, approximate)) ** 2
    errors = c.simulated_state("test").truncation.discarded
    assert errors and c.truncation_error() == pytest.approx(sum(errors))
    assert c.fidelity_estimate() == pytest.approx(np.prod([1 - e for e in errors]))
    angle = min(np.pi / 2, sum(np.arcsin(np.sqrt(e)) for e in errors))
    assert -1e-12 <= infidelity <= np.sin(angle) ** 2 + 1e-12
    assert infidelity <= 1.5 * c.truncation_error()  # and close to the sum, in practice
    assert abs(np.linalg.norm(approximate) - 1) < 1e-12
    if max_bond is not None:
        assert max(c.bond_dimensions()) <= max_bond


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "jax"]))
def test_truncation_reports_of_a_host_simulation_stay_on_the_host(backend_name, monkeypatch):
    """A simulation run on the backend's host twin reports its truncation as NumPy does (host
    numbers, the same values) without moving its sites to the backend."""
    from tyxonq.circuit.mps.state import MPSState

    n, operations = 12, brickwork(12, 8, seed=7)
    with tq.use_backend("numpy"):
        c = build_mps(n, operations, max_bond=4)
        expected = (c.truncation_error(), c.fidelity_estimate())
    moves = []
    original = MPSState.on
    monkeypatch.setattr(MPSState, "on", lambda self, K: moves.append(K) or original(self, K))
    with tq.use_backend(make_backend(backend_name)) as K:
        c = build_mps(n, operations, max_bond=4)
        found = (c.truncation_error(), c.fidelity_estimate())
        assert [backend for backend in moves if backend is K] == []  # simulated on the twin, kept there
    assert found == pytest.approx(expected, abs=1e-14) and expected[0] > 0
    assert all(isinstance(value, float) for value in found)


def test_nothing_truncated_reports_zero_error():
    c = build_mps(8, brickwork(8, 3, seed=2), cutoff=0.0)
    assert c.truncation_error() == 0.0 and c.fidelity_estimate() == 1.0
    ghz = tq.MPSCircuit(6, max_bond=8).h(0)  # zero singular values dropped: not a truncation
    for q in range(5):
        ghz.cx(q, q + 1)
    assert ghz.truncation_error() == 0.0 and max(ghz.bond_dimensions()) == 2


def test_entanglement_entropy_against_the_reduced_state():
    n = 8
    operations = brickwork(n, 4, seed=9)
    psi = reference_state(n, operations)
    c = build_mps(n, operations, cutoff=0.0)
    for cut in range(1, n):
        rho = reduced(psi, tuple(range(cut)), n)
        p = np.clip(np.linalg.eigvalsh(rho), 1e-300, None)
        assert float(c.entanglement_entropy(cut)) == pytest.approx(float(-(p * np.log(p)).sum()), abs=1e-9)


# -- wide chains ---------------------------------------------------------------------------------
def test_100_qubit_ghz_amplitudes():
    c = tq.MPSCircuit(100).h(0)
    for q in range(99):
        c.cx(q, q + 1)
    assert abs(complex(c.amplitude("0" * 100))) ** 2 == pytest.approx(0.5, abs=1e-12)
    assert abs(complex(c.amplitude("1" * 100))) ** 2 == pytest.approx(0.5, abs=1e-12)
    assert abs(complex(c.amplitude("1" * 50 + "0" * 50))) < 1e-12
    assert max(c.bond_dimensions()) == 2
    assert c.sample(200, seed=3, format="counts").keys() <= {"0" * 100, "1" * 100}


def test_64_qubit_brickwork_against_the_contraction_simulator():
    n = 64
    operations = brickwork(n, 4, seed=11)
    mps = build_mps(n, operations, cutoff=0.0)
    network = build(n, operations)
    for q in (0, 17, 40, 63):
        expected = float(network.expectation_ps(z=[q]))
        assert float(mps.expectation_ps(z=[q])) == pytest.approx(expected, abs=1e-10)
    assert float(mps.expectation_ps(x=[20], z=[21])) == pytest.approx(
        float(network.expectation_ps(x=[20], z=[21])), abs=1e-10)
    h = tq.hamiltonians.tfim(n)
    assert float(mps.expectation(h)) == pytest.approx(float(network.expectation(h)), abs=1e-9)


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
def test_trotter_layers_fuse_into_three_site_blocks(backend_name, monkeypatch):
    """Even and odd Trotter bricks (with reversed-qubit bricks and one-qubit gates between) are
    applied as fused three-site blocks in a sweep (outside jit): the state equals the dense one,
    and the centre moves a few sites per step instead of one per brick."""
    from tyxonq.circuit.mps.state import MPSState

    n, steps = 10, 3
    rng = np.random.default_rng(21)
    operations = []
    for _ in range(steps):
        for start in (0, 1):
            for q in range(start, n - 1, 2):
                pair = (q, q + 1) if rng.random() < 0.5 else (q + 1, q)
                gate = "rzz" if rng.random() < 0.5 else "rxx"
                operations.append((gate, pair, (float(rng.uniform(-2, 2)),)))
        operations += [("rx", (q,), (float(rng.uniform(-2, 2)),)) for q in range(n)]
    moves = []
    original = MPSState.move_centre

    def counted(self, target):
        moves.append(abs(target - self.centre))
        original(self, target)

    monkeypatch.setattr(MPSState, "move_centre", counted)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        state = build_mps(n, operations).state()
    close(K, state, reference_state(n, operations))
    assert sum(moves) <= 3 * steps  # per step: at most a few sites (one per brick before fusion)


@pytest.mark.parametrize("backend_name", ["pytorch", "jax"])
def test_untraced_gates_are_applied_on_the_host_twin(backend_name, monkeypatch):
    """Angles nothing differentiates: the gates run on the NumPy twin and the sites come back as
    the backend's arrays (the same values as the dense reference) where the backend's arrays lie in
    host memory (on a GPU they stay there); angles autograd tracks: on the backend itself, and the
    gradient flows."""
    from tyxonq.circuit.mps import mps_circuit

    used = []
    original = mps_circuit.apply_operations

    def recorded(state, operations, matrix_of):
        used.append(state.K.name)
        return original(state, operations, matrix_of)

    monkeypatch.setattr(mps_circuit, "apply_operations", recorded)
    K = make_backend(backend_name)
    n, operations = 6, brickwork(6, 3, seed=2)
    with tq.use_backend(K):
        c = build_mps(n, operations)
        state = c.state()
        assert K.is_array(state) and all(K.is_array(site) for site in c.simulated_state("test").sites)
        close(K, state, reference_state(n, operations))
        psi = reference_state(n, operations)
        results = {"amplitude": (c.amplitude("010110"), psi[0b010110]),
                   "<Z2>": (c.expectation_ps(z=[2]), reference_expectation(psi, [(Z, (2,))], n).real),
                   "<X1 X2>": (c.expectation((np.kron(X, X), (1, 2))),
                               reference_expectation(psi, [(np.kron(X, X), (1, 2))], n).real),
                   "Paulis": (c.pauli_expectations(["ZIIIII", "IIXIIY"]),
                              [reference_expectation(psi, [(Z, (0,))], n).real,
                               reference_expectation(psi, [(X, (2,)), (Y, (5,))], n).real]),
                   "rdm": (c.reduced_density_matrix((4, 1)), reduced(psi, (4, 1), n)),
                   "marginal": (c.marginal_probability((3,)), np.real(np.diag(reduced(psi, (3,), n))))}
        for name, (got, expected) in results.items():
            assert K.is_array(got), name
            close(K, got, expected)
        assert used == ["numpy" if K.host_readable(K.zeros((1,))) else K.name]
        theta = K.requires_grad(K.asarray(0.3))
        value, grad = K.value_and_grad(lambda t: tq.MPSCircuit(2).rx(0, theta=t).cx(0, 1)
                                       .expectation_ps(z=[1]))(theta)
    assert used[-1] == backend_name
    assert float(K.to_numpy(value)) == pytest.approx(np.cos(0.3), abs=1e-12)
    assert float(K.to_numpy(grad)) == pytest.approx(-np.sin(0.3), abs=1e-12)


# -- sampling ------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "jax"])
def test_samples_follow_the_exact_distribution(backend_name):
    K = make_backend(backend_name)
    n = 5
    operations = brickwork(n, 3, seed=5)
    p = np.abs(reference_state(n, operations)) ** 2
    with tq.use_backend(K):
        c = build_mps(n, operations)
        indices = K.to_numpy(c.sample(20000, seed=8, format="indices"))
        again = K.to_numpy(c.sample(20000, seed=8, format="indices"))
    np.testing.assert_array_equal(indices, again)  # seeded
    counts = np.bincount(indices, minlength=2 ** n)
    kept = p > 1e-3
    observed = counts[kept]
    statistic, pvalue = stats.chisquare(observed, observed.sum() * p[kept] / p[kept].sum())
    assert pvalue > 1e-6, statistic
    assert np.all(counts[~kept] <= 20000 * 5e-3)


def test_sample_formats_and_readout():
    c = tq.MPSCircuit(3).x(0).cx(0, 2)
    assert c.sample(4, seed=1, format="bitstrings") == ["101"] * 4
    flipped = c.sample(2000, seed=1, readout_error=[[0.9, 0.1], [0.1, 0.9]])
    assert 0.6 < flipped["101"] / 2000 < 0.8
    with pytest.raises(ValueError, match="at most 62 qubits"):
        tq.MPSCircuit(70).sample(2, format="indices")
    assert tq.MPSCircuit(70).x(69).sample(3, format="counts") == {"0" * 69 + "1": 3}


def test_shot_estimates_on_mps():
    c = tq.MPSCircuit(4).h(0).cx(0, 1).ry(3, 0.4)
    value, error = c.sample_expectation_ps(x=[0, 1], shots=4000, seed=2, return_std=True)
    assert value == pytest.approx(1.0) and error == pytest.approx(0.0)
    h = tq.PauliSum([(0.5, "ZZII"), (1.0, "IIIZ")])
    estimate, error = h.expectation(c, shots=4000, seed=3, return_std=True)
    assert abs(estimate - float(h.expectation(c))) < 5 * error + 1e-12


# -- gradients -----------------------------------------------------------------------------------
def ansatz_energy(K, params, n=5, **options):
    c = tq.MPSCircuit(n, **options)
    for q in range(n):  # a GHZ-like start: degenerate singular values on every bond
        c.h(q) if q == 0 else c.cx(q - 1, q)
    k = 0
    for _ in range(2):
        for q in range(n):
            c.ry(q, theta=params[k])
            k += 1
        for q in range(n - 1):
            c.rzz(q, q + 1, theta=params[k])
            k += 1
        c.cx(0, n - 1)
    h = tq.hamiltonians.tfim(n)
    return c.expectation(h)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "jax"]))
def test_autograd_matches_parameter_shift_and_finite_differences(backend_name):
    params = np.random.default_rng(4).uniform(-1, 1, 18)
    with tq.use_backend("numpy") as K:
        value, shifted = tq.value_and_grad(lambda p: ansatz_energy(K, p, cutoff=0.0))(params)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        got_value, got = tq.value_and_grad(lambda p: ansatz_energy(K, p, cutoff=0.0))(K.asarray(params))
    assert float(got_value) == pytest.approx(float(value), abs=1e-10)
    np.testing.assert_allclose(K.to_numpy(got), shifted, atol=1e-8)
    step = 1e-6
    with tq.use_backend("numpy") as N:
        for j in (0, 7, 17):
            e = np.zeros_like(params)
            e[j] = step
            fd = (float(ansatz_energy(N, params + e, cutoff=0.0))
                  - float(ansatz_energy(N, params - e, cutoff=0.0))) / (2 * step)
            assert float(K.to_numpy(got)[j]) == pytest.approx(fd, abs=1e-7)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "jax"]))
def test_gradient_of_the_truncated_simulation(backend_name):
    """With truncation the gradient is that of the truncated simulation: finite differences of
    the same truncated simulation agree."""
    params = np.random.default_rng(6).uniform(-1, 1, 24)
    K = make_backend(backend_name)
    options = {"max_bond": 2, "cutoff": 0.0}
    with tq.use_backend(K):
        _, got = tq.value_and_grad(lambda p: ansatz_energy(K, p, n=6, **options))(K.asarray(params))
    step = 1e-6
    with tq.use_backend("numpy") as N:
        for j in (0, 9, 23):
            e = np.zeros_like(params)
            e[j] = step
            fd = (float(ansatz_energy(N, params + e, n=6, **options))
                  - float(ansatz_energy(N, params - e, n=6, **options))) / (2 * step)
            assert float(K.to_numpy(got)[j]) == pytest.approx(fd, abs=1e-6)


def _traced_random_circuit(n, operations):
    """The random circuit's angles as a parameter vector: ``(values, build(params))``, the MPS
    with every angle ``params[i]`` (traced under ``tq.value_and_grad``), and the same operations
    with numeric angles for the dense reference."""
    values, shapes = [], []
    for gate, _, params in operations:
        angled = gate in PARAMETRISED or gate.startswith("exp:")
        shapes.append(len(params) if angled else 0)
        values += list(params) if angled else []

    def operations_at(p):
        placed, start = [], 0
        for (gate, qubits, params), count in zip(operations, shapes):
            placed.append((gate, qubits, tuple(p[start + j] for j in range(count)) if count else params))
            start += count
        return placed

    return np.asarray(values, dtype=float), operations_at


def _dense_energy(n, operations, strings, coefficients, inverted=False):
    psi = reference_unitary(n, operations).conj().T[:, 0] if inverted else reference_state(n, operations)
    return sum(c * np.vdot(psi, pauli_matrix(s) @ psi).real for s, c in zip(strings, coefficients))


@settings(max_examples=30, deadline=None)
@given(circuit=random_circuits(max_qubits=5, max_gates=10), seed=st.integers(0, 2 ** 16))
def test_numpy_adjoint_gradients_match_the_dense_reference_and_parameter_shift(circuit, seed):
    """NumPy's default gradient method through an MPS is the adjoint method (mps/adjoint.py):
    every gate kind, any qubits, random Pauli sums, the circuit or its inverse (daggered
    operations); against central differences of the dense state and against parameter shift
    (both exact)."""
    n, operations = circuit
    values, operations_at = _traced_random_circuit(n, operations)
    rng = np.random.default_rng(seed)
    strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(3)]
    coefficients = rng.uniform(-1, 1, 3).tolist()
    inverted = bool(seed % 2)

    def energy(p):
        if inverted:
            mps = tq.MPSCircuit(n, cutoff=0.0)
            mps.append(build(n, operations_at(p)).inverse())
        else:
            mps = build_mps(n, operations_at(p), cutoff=0.0)
        return mps.pauli_expectations(strings, coefficients)

    with tq.use_backend("numpy"):
        value, gradient = tq.value_and_grad(energy)(values)
        _, shifted = tq.value_and_grad(energy, method="parameter-shift")(values)
        if n >= 2:  # a local Hermitian operator on two qubits (expectation's route)
            pair = tuple(int(q) for q in rng.permutation(n)[:2])
            matrix = random_hermitian(rng, 2)
            local = lambda p: build_mps(n, operations_at(p), cutoff=0.0).expectation((matrix, pair))  # noqa: E731
            _, by_adjoint = tq.value_and_grad(local)(values)
            _, by_shift = tq.value_and_grad(local, method="parameter-shift")(values)
            np.testing.assert_allclose(by_adjoint, by_shift, atol=1e-10)
    expected = _dense_energy(n, operations, strings, coefficients, inverted)
    assert float(value) == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(gradient, shifted, atol=1e-10)
    step = 1e-6
    for j in range(len(values)):
        e = np.zeros_like(values)
        e[j] = step
        fd = (_dense_energy(n, operations_at(values + e), strings, coefficients, inverted)
              - _dense_energy(n, operations_at(values - e), strings, coefficients, inverted)) / (2 * step)
        assert gradient[j] == pytest.approx(fd, abs=1e-7)


def test_adjoint_path_and_its_fallback_for_a_truncated_simulation(monkeypatch):
    """The adjoint method runs where nothing was truncated (its gradient and Hessian equal parameter
    shift's); a truncating simulation's gradient is parameter shift's, as before."""
    from tyxonq.circuit.mps import adjoint

    params = np.random.default_rng(8).uniform(-1, 1, 24)
    calls = []
    original = adjoint.mps_adjoint

    def counted(*args):
        result = original(*args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(mps_circuit_module, "mps_adjoint", counted)
    with tq.use_backend("numpy") as K:
        for options, adjoint_ran in (({"cutoff": 0.0}, True), ({"max_bond": 2, "cutoff": 0.0}, False)):
            calls.clear()
            energy = lambda p, options=options: ansatz_energy(K, p, n=6, **options)  # noqa: E731
            _, gradient = tq.value_and_grad(energy)(params)
            _, shifted = tq.value_and_grad(energy, method="parameter-shift")(params)
            assert calls[0] is adjoint_ran
            np.testing.assert_allclose(gradient, shifted, atol=1e-10)
        calls.clear()
        local = lambda p: tq.MPSCircuit(3).ry(0, p[0]).cx(0, 1).rx(2, p[1]).expectation_ps(z=[1], y=[2])  # noqa: E731
        _, gradient = tq.value_and_grad(local)(params[:2])
        assert calls == [True]
        np.testing.assert_allclose(gradient, [-np.sin(params[0]) * -np.sin(params[1]),
                                              np.cos(params[0]) * -np.cos(params[1])], atol=1e-12)
        exact = lambda p: ansatz_energy(K, p, n=4, cutoff=0.0)  # noqa: E731
        few = params[:14]
        np.testing.assert_allclose(tq.hessian(exact)(few), tq.hessian(exact, method="parameter-shift")(few),
                                   atol=1e-9)


def test_pauli_sum_operator_is_compressed_and_exact():
    from tyxonq.circuit.mps.adjoint import _times_mpo, _Transition, pauli_sum_mpo
    from tyxonq.circuit.mps.state import MPSState

    rng = np.random.default_rng(3)
    n = 5
    strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(40)] + ["ZZIII", "IZZII"]
    coefficients = rng.uniform(-1, 1, len(strings)).tolist()
    K = tq.get_backend("numpy")
    mpo = pauli_sum_mpo(K, strings, coefficients, n)
    dense = sum(c * pauli_matrix(s) for s, c in zip(strings, coefficients))
    assert max(site.shape[3] for site in mpo[:-1]) <= 16  # at most the operator-space rank
    operations = brickwork(n, 3, seed=2)
    state = build_mps(n, operations, cutoff=0.0).simulated_state("test", host=True)
    psi = reference_state(n, operations)
    applied = _times_mpo(K, mpo, state.sites)
    overlap = _Transition(K, state, MPSState(K, applied, 0, state.truncation)).with_ket(applied)
    np.testing.assert_allclose(overlap, np.vdot(psi, dense @ psi), atol=1e-12)


def test_jit_compiles_the_mps_energy():
    K = make_backend("jax")
    params = np.random.default_rng(1).uniform(-1, 1, 18)
    with tq.use_backend(K):
        eager = float(ansatz_energy(K, K.asarray(params), max_bond=4))
        compiled = K.jit(lambda p: ansatz_energy(K, p, max_bond=4))
        assert float(compiled(K.asarray(params))) == pytest.approx(eager, abs=1e-10)


def test_parameter_shift_needs_coefficients_for_several_terms():
    def values(p):
        c = tq.MPSCircuit(2).ry(0, theta=p[0])
        return tq.get_backend().sum(c.pauli_expectations(["ZI", "XI"]))

    with tq.use_backend("numpy"), pytest.raises(Exception, match="coefficients"):
        tq.value_and_grad(values)(np.array([0.3]))


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("options, message", [
    ({"max_bond": 0}, "max_bond=0"), ({"max_bond": 2.5}, "max_bond=2.5"),
    ({"cutoff": 1.0}, "cutoff=1.0"), ({"cutoff": -0.1}, "cutoff=-0.1"),
    ({"inputs": np.ones(8)}, "normalised"), ({"inputs": np.ones(5)}, "shape"),
    ({"inputs": [[1.0, 0.0], [2.0, 0.0], [1.0, 0.0]]}, "normalised"),
    ({"inputs": [np.ones((1, 2, 2)), np.ones((3, 2, 1)), np.ones((1, 2, 1))]}, "site 1"),
    ({"inputs": [np.ones((1, 2, 1))] * 2}, "2 site tensors"),
])
def test_bad_arguments_name_what_is_wrong(options, message):
    with pytest.raises(ValueError, match=message):
        tq.MPSCircuit(3, **options)


def test_bad_calls_raise_early():
    c = tq.MPSCircuit(60).h(0)
    with pytest.raises(MemoryError, match="never build"):
        c.state()
    with pytest.raises(MemoryError):
        c.probability()
    with pytest.raises(ValueError, match="pure states"):
        tq.MPSCircuit(2).depolarizing(0, p=0.1)
    with pytest.raises(ValueError, match="cut=0"):
        c.entanglement_entropy(0)
    with pytest.raises(ValueError, match="bitstring"):
        c.amplitude("01")
    with pytest.raises(ValueError, match="not Hermitian"):
        tq.MPSCircuit(2).expectation((np.array([[0, 1], [0, 0]]), [0]))
    with pytest.raises(ValueError, match="overlap"):
        tq.MPSCircuit(2).expectation((Z, [0]), (Z, [0]))


def test_unitary_gates_of_any_size():
    rng = np.random.default_rng(8)
    u = random_unitary(rng, 4)
    c = tq.MPSCircuit(6).h(0).h(3).unitary(5, 0, 3, 1, matrix=u)
    expected = reference_state(6, [("h", (0,), ()), ("h", (3,), ()), ("unitary", (5, 0, 3, 1), (u,))])
    np.testing.assert_allclose(c.state(), expected, atol=1e-10)
