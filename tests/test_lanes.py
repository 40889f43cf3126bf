"""Batching by lanes (NumPy, cuPyNumeric): traced arithmetic, lane placements, batched sweeps of
circuits, and vectorize_or_fallback on circuit objectives, against per-element references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import make_backend
from reference import PARAMETRISED, apply, random_hermitian, reference_expectation, reference_state
from test_circuit import PRECISIONS, add_operations, random_circuits, tolerance
from tyxonq.circuit.statevector.lanes import lane_state
from tyxonq.circuit.statevector.placement import apply_placed, place
from tyxonq.numerics import VectorizationFallbackWarning
from tyxonq.numerics.lanes import Lanes, LanesError, lane_arguments
from tyxonq.operators.pauli_action import pauli_sum_expectation

LANE_BACKENDS = ("numpy", "cupynumeric", "cupynumeric-logic")


def no_fallback_context():
    context = warnings.catch_warnings()

    class Strict:
        def __enter__(self):
            context.__enter__()
            warnings.simplefilter("error", VectorizationFallbackWarning)

        def __exit__(self, *exc):
            return context.__exit__(*exc)

    return Strict()


# -- the tracer ---------------------------------------------------------------------------
def test_lanes_arithmetic_acts_on_every_lane():
    a, b = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -0.7])
    x, y = Lanes(a), Lanes(b)
    got = (2 * x - y / 3 + x * y) ** 2 + np.cos(x) * np.exp(y) - abs(y) + np.sqrt(x * x + 1)
    expected = (2 * a - b / 3 + a * b) ** 2 + np.cos(a) * np.exp(b) - abs(b) + np.sqrt(a * a + 1)
    np.testing.assert_allclose(got.value, expected, rtol=1e-14)
    vector = np.array([1.0, 2.0, 3.0, 4.0])
    product = x * vector  # a scalar per lane times an array: an array per lane
    assert product.shape == (4,) and product.value.shape == (3, 4)
    np.testing.assert_allclose(product.value, a[:, None] * vector)
    np.testing.assert_allclose((vector - x).value, vector - a[:, None])
    np.testing.assert_allclose(product.sum().value, a * vector.sum())
    np.testing.assert_allclose(product.reshape(2, 2)[1, 0].value, a * 3)
    np.testing.assert_allclose(np.sum(product, axis=0).value, a * 10)
    np.testing.assert_allclose(np.real(Lanes(a * 1j)).value, 0 * a)
    np.testing.assert_allclose(np.conj(Lanes(a * 1j)).value, -1j * a)


def test_object_arrays_of_lanes_behave_like_arrays_of_numbers():
    K = tq.get_backend("numpy")
    batch = np.random.default_rng(0).normal(size=(4, 3))
    params = lane_arguments(K, batch, 0)
    assert params.shape == (3,) and isinstance(params[0], Lanes)
    total = K.sum(K.cos(params) * np.arange(1.0, 4.0)) + params[0] * params[-1]
    expected = (np.cos(batch) * np.arange(1.0, 4.0)).sum(axis=1) + batch[:, 0] * batch[:, -1]
    np.testing.assert_allclose(total.value, expected, rtol=1e-14)


@pytest.mark.parametrize("use", [float, bool, int, lambda x: x < 0, lambda x: np.asarray(x, float)])
def test_reading_a_lane_value_raises(use):
    with pytest.raises((LanesError, ValueError)):  # NumPy's conversion reports a ValueError
        use(Lanes(np.array([0.1, 0.2])))


# -- lane placements ------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), data=st.data())
def test_lane_placements_apply_one_matrix_per_lane(n, data):
    """Every kind (view, right, diagonal, moves), qubit order, trail, dimension limit, and
    matrices per lane or shared."""
    k = data.draw(st.integers(1, min(3, n)))
    qubits = tuple(data.draw(st.permutations(range(n)))[:k])
    lanes, trail = data.draw(st.sampled_from([1, 2, 3])), data.draw(st.sampled_from([1, 2, 4]))
    diagonal, shared = data.draw(st.booleans()), data.draw(st.booleans())
    max_ndim = data.draw(st.sampled_from([6, 64]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    array = rng.normal(size=(lanes, 2 ** n, trail)) + 1j * rng.normal(size=(lanes, 2 ** n, trail))
    matrices = rng.normal(size=(lanes, 2 ** k, 2 ** k)) + 1j * rng.normal(size=(lanes, 2 ** k, 2 ** k))
    if diagonal:
        matrices = matrices * np.eye(2 ** k)
    if shared:
        matrices = matrices[:1]
    placement = place(qubits, n, lead=lanes, trail=trail, diagonal=diagonal, max_ndim=max_ndim,
                      shape=(lanes, 2 ** n, trail), lanes=True)
    assert len(placement.view) <= max_ndim
    given_matrices = matrices[0] if shared else matrices
    if placement.kind == "diagonal":
        given_matrices = np.diagonal(given_matrices, axis1=-2, axis2=-1)
    got = apply_placed(tq.get_backend("numpy"), array, given_matrices, placement)
    expected = np.stack([np.stack([apply(array[i, :, j], matrices[0 if shared else i], qubits, n)
                                   for j in range(trail)], -1) for i in range(lanes)])
    np.testing.assert_allclose(got, expected, atol=1e-12)


# -- batched sweeps against the reference -------------------------------------------------
def lane_operations(operations, lanes, rng):
    """The operations with every angle replaced by lanes of random angles, and each lane's own
    operations for the reference."""
    batched, per_lane = [], [[] for _ in range(lanes)]
    for gate, qubits, params in operations:
        if gate in PARAMETRISED:
            values = rng.uniform(-2 * np.pi, 2 * np.pi, (lanes, len(params)))
            batched.append((gate, qubits, tuple(Lanes(values[:, j]) for j in range(len(params)))))
            for i in range(lanes):
                per_lane[i].append((gate, qubits, tuple(values[i])))
        else:
            batched.append((gate, qubits, params))
            for i in range(lanes):
                per_lane[i].append((gate, qubits, params))
    return batched, per_lane


@pytest.mark.parametrize("backend_id", LANE_BACKENDS)
@pytest.mark.parametrize("precision", PRECISIONS)
@settings(max_examples=25, deadline=None)
@given(circuit=random_circuits(max_qubits=7, max_gates=16), seed=st.integers(0, 2 ** 16),
       lanes=st.integers(1, 4))
def test_batched_sweeps_match_the_reference_lane_by_lane(backend_id, precision, circuit, seed, lanes):
    K = make_backend(backend_id, dtype=precision)
    n, operations = circuit
    batched, per_lane = lane_operations(operations, lanes, np.random.default_rng(seed))
    with tq.use_backend(K):
        for i in range(lanes):  # the lanes' own angles, in the backend's real dtype
            per_lane[i] = [(g, q, tuple(float(K.to_numpy(K.asarray(p, K.real_dtype))) for p in ps))
                           if g in PARAMETRISED else (g, q, ps) for g, q, ps in per_lane[i]]
        circuit = add_operations(tq.Circuit(n), [
            (g, q, tuple(Lanes(K.asarray(p.value)) if isinstance(p, Lanes) else p for p in ps))
            for g, q, ps in batched])
        has_lanes = circuit._lanes() is not None
        stack = lane_state(K, n, circuit.operations, lanes) if has_lanes else None
    if stack is None:
        return
    tol = tolerance(precision)
    for i in range(lanes):
        np.testing.assert_allclose(K.to_numpy(stack)[i], reference_state(n, per_lane[i]), rtol=tol, atol=tol)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), data=st.data())
def test_stack_expectations_of_pauli_sums_match_the_dense_operator(n, data):
    """Every kind of term group (diagonal, one flip with a constant diagonal, any other), complex
    coefficients included, for a stack of random states."""
    terms = [(data.draw(st.floats(-1, 1)) + 1j * data.draw(st.sampled_from([0.0, 0.5])),
              "".join(data.draw(st.sampled_from("IXYZ")) for _ in range(n)))
             for _ in range(data.draw(st.integers(1, 6)))]
    hamiltonian = tq.PauliSum(terms, n)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    stack = rng.normal(size=(3, 2 ** n)) + 1j * rng.normal(size=(3, 2 ** n))
    K = tq.get_backend("numpy")
    got = pauli_sum_expectation(K, stack, hamiltonian)
    matrix = hamiltonian.to_sparse().toarray()
    expected = np.einsum("bi,ij,bj->b", stack.conj(), matrix, stack)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


# -- circuit objectives batched by vectorize_or_fallback -------------------------------------
def ansatz(n, params):
    circuit = tq.Circuit(n)
    for q in range(n):
        circuit.ry(q, params[q])
    for q in range(n - 1):
        circuit.rzz(q, q + 1, theta=params[n + q] * 0.5)
    circuit.cx(n - 1, 0).crx(0, 2, theta=params[0] + params[1])
    for q in range(n):
        circuit.rx(q, params[2 * n - 1 + q])
    return circuit


N, SIZE = 4, 11


def objectives(K):
    """name -> function of the parameters: every batched circuit result."""
    hamiltonian = tq.PauliSum([(0.7, "ZZII"), (-0.4, "IXYI"), (1.1, "XIIX"), (0.2, "IIII"),
                               (0.3, "IIXI"), (-0.6, "IYII"), (0.5, "XIII"), (0.25, "XIZI")], N)
    rng = np.random.default_rng(5)
    local = random_hermitian(rng, 2)
    return {
        "pauli sum (state)": lambda p: ansatz(N, p).expectation(hamiltonian),
        "pauli sum (light cones)": lambda p: ansatz(N, p).expectation(hamiltonian, method="lightcone"),
        "expectation_ps": lambda p: ansatz(N, p).expectation_ps(x=[0], z=[3]),
        "local operators": lambda p: ansatz(N, p).expectation((local, [2, 0]), (np.diag([1.0, -1.0]), [3])),
        "pauli strings": lambda p: ansatz(N, p).pauli_expectations(["ZIII", "IIII", "XXYY"]),
        "amplitude": lambda p: ansatz(N, p).amplitude("0110"),
        "probability": lambda p: ansatz(N, p).probability(),
        "state": lambda p: ansatz(N, p).state(),
        "arithmetic on results": lambda p: (ansatz(N, p).expectation_ps(z=[1]) ** 2 + K.sin(p[0]),
                                            {"z": ansatz(N, p).expectation_ps(z=[2])}),
    }


@pytest.mark.parametrize("backend_id", LANE_BACKENDS)
@pytest.mark.parametrize("name", list(objectives(tq.get_backend("numpy"))))
def test_vectorized_objectives_equal_the_loop_without_falling_back(backend_id, name):
    K = make_backend(backend_id)
    batch = K.asarray(np.random.default_rng(2).uniform(-np.pi, np.pi, (5, SIZE)))
    with tq.use_backend(K):
        objective = objectives(K)[name]
        with no_fallback_context():
            batched = tq.vectorize_or_fallback(objective, policy="force")(batch)
        looped = tq.vectorize_or_fallback(objective, policy="off")(batch)
    flat = lambda tree: [np.asarray(K.to_numpy(leaf)) for leaf in  # noqa: E731
                         (tree if isinstance(tree, tuple) else (tree,))
                         for leaf in ((leaf["z"],) if isinstance(leaf, dict) else (leaf,))]
    for got, expected in zip(flat(batched), flat(looped)):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_the_dense_reference_of_a_batched_local_expectation():
    K = tq.get_backend("numpy")
    rng = np.random.default_rng(9)
    batch = rng.uniform(-np.pi, np.pi, (3, SIZE))
    matrix = random_hermitian(rng, 2)
    with tq.use_backend(K):
        got = tq.vmap(lambda p: ansatz(N, p).expectation((matrix, [1, 3])))(batch)
        states = [K.to_numpy(ansatz(N, p).state()) for p in batch]
    expected = [reference_expectation(s, [(matrix, (1, 3))], N).real for s in states]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_a_custom_observable_that_knows_one_state_is_applied_lane_by_lane():
    """dense_expectation's observable may assume a single state (here: reversing it), so only
    observables marked as stacking see the whole batch."""
    K = tq.get_backend("numpy")
    batch = np.random.default_rng(3).uniform(-np.pi, np.pi, (4, SIZE))
    objective = lambda p: ansatz(N, p).dense_expectation(lambda K, s: s[::-1])  # noqa: E731
    with tq.use_backend(K), no_fallback_context():
        got = tq.vectorize_or_fallback(objective, policy="force")(batch)
    np.testing.assert_allclose(got, [objective(p) for p in batch], atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda p: tq.DMCircuit(2).ry(0, p[0]).depolarizing(0, p=0.1).expectation_ps(z=[0]),
    lambda p: tq.MPSCircuit(2).ry(0, p[0]).cx(0, 1).expectation_ps(z=[1]),
    lambda p: tq.Circuit(2).ry(0, p[0]).marginal_probability([0])[1],
    lambda p: tq.value_and_grad(lambda t: tq.Circuit(1).rx(0, t[0]).expectation_ps(z=[0]))(p)[1][0],
], ids=["density matrix", "mps", "light-cone marginal", "gradient"])
def test_results_without_lanes_loop_with_one_warning_and_the_same_values(make):
    K = tq.get_backend("numpy")
    batch = np.random.default_rng(4).uniform(-np.pi, np.pi, (3, 2))
    with tq.use_backend(K):
        batched = tq.vectorize_or_fallback(make)
        with pytest.warns(VectorizationFallbackWarning, match="looping"):
            first = batched(batch)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            second = batched(batch)
        expected = [make(row) for row in batch]
        with pytest.raises(LanesError):
            tq.vectorize_or_fallback(make, policy="force")(batch)
    np.testing.assert_allclose(first, expected, atol=1e-12)
    np.testing.assert_allclose(second, expected, atol=1e-12)


def test_in_axes_out_axes_and_unbatched_outputs():
    K = tq.get_backend("numpy")
    batch = np.random.default_rng(6).uniform(-np.pi, np.pi, (SIZE, 3))  # the batch on axis 1

    def objective(p, scale):
        return ansatz(N, p).probability() * scale, 7.0

    with tq.use_backend(K), no_fallback_context():
        probabilities, constant = tq.vmap(objective, in_axes=(1, None), out_axes=(1, 0))(batch, 2.0)
    assert probabilities.shape == (2 ** N, 3) and constant.tolist() == [7.0, 7.0, 7.0]
    expected = np.stack([K.to_numpy(ansatz(N, p).probability()) * 2.0 for p in batch.T], axis=1)
    np.testing.assert_allclose(probabilities, expected, atol=1e-12)


def test_mismatched_batches_raise_without_falling_back():
    with pytest.raises(ValueError, match="equal batch sizes"), no_fallback_context():
        tq.vectorize_or_fallback(lambda a, b: a + b)(np.ones(2), np.ones(3))


def test_single_precision_stays_single():
    K = make_backend("numpy", dtype="complex64")
    batch = K.asarray(np.random.default_rng(7).uniform(-np.pi, np.pi, (3, SIZE)), "float32")
    with tq.use_backend(K), no_fallback_context():
        states = tq.vmap(lambda p: ansatz(N, p).state())(batch)
        expected = np.stack([K.to_numpy(ansatz(N, p).state()) for p in batch])
    assert states.dtype == np.complex64
    np.testing.assert_allclose(states, expected, atol=1e-5)
