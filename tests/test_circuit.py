"""The circuit simulator against the dense reference, on every backend and path finder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import (
    FIXED_SIZES,
    PARAMETRISED,
    random_hermitian,
    random_unitary,
    reference_expectation,
    reference_state,
    reference_unitary,
)

CONTRACTORS = ("circuit", "greedy", "auto", "optimal", "cotengra")
PRECISIONS = ("complex128", "complex64")


def tolerance(precision: str) -> float:
    return 1e-5 if precision == "complex64" else 1e-10


@st.composite
def random_circuits(draw, max_qubits=5, max_gates=12):
    """(n, [(gate, qubits, params)]) with every gate kind, random qubits and angles."""
    n = draw(st.integers(1, max_qubits))
    gates = [g for g, k in FIXED_SIZES.items() if k <= n]
    gates += [g for g, (k, _, _) in PARAMETRISED.items() if k <= n]
    gates += ["unitary", "exp_pauli"]
    operations = []
    for _ in range(draw(st.integers(0, max_gates))):
        gate = draw(st.sampled_from(gates))
        if gate == "unitary":
            k = draw(st.integers(1, min(3, n)))
            seed = draw(st.integers(0, 2 ** 16))
            params = (random_unitary(np.random.default_rng(seed), k),)
        elif gate == "exp_pauli":  # exp(-i θ P / 2) for a random Pauli string P
            k = draw(st.integers(1, min(4, n)))
            gate = "exp:" + "".join(draw(st.sampled_from("XYZ")) for _ in range(k))
            params = (draw(st.floats(-2 * np.pi, 2 * np.pi)),)
        elif gate in PARAMETRISED:
            k, count, _ = PARAMETRISED[gate]
            params = tuple(draw(st.floats(-2 * np.pi, 2 * np.pi)) for _ in range(count))
        else:
            k, params = FIXED_SIZES[gate], ()
        qubits = tuple(draw(st.permutations(range(n)))[:k])
        operations.append((gate, qubits, params))
    return n, operations


def build(n: int, operations: list[tuple], inputs=None) -> tq.Circuit:
    return add_operations(tq.Circuit(n, inputs=inputs), operations)


def add_operations(circuit, operations: list[tuple]):
    """``circuit`` (any simulator's) with the ``(gate, qubits, params)`` operations appended."""
    for gate, qubits, params in operations:
        if gate == "unitary":
            circuit.unitary(*qubits, matrix=params[0])
        elif gate.startswith("exp:"):
            circuit.exp_pauli(gate[4:], qubits, params[0])
        else:
            getattr(circuit, gate)(*qubits, *params)
    return circuit


def check(K, got, expected, precision):
    tol = tolerance(precision)
    np.testing.assert_allclose(K.to_numpy(got), expected, rtol=tol, atol=tol)


# circuit sizes and example counts per path finder: "optimal" is exponential in the number of
# tensors and a cotengra search costs about half a second, so they see smaller, fewer circuits
FINDER_LIMITS = {"circuit": (5, 12, 25), "greedy": (5, 12, 15), "auto": (5, 12, 5),
                 "optimal": (3, 5, 5), "cotengra": (4, 8, 2)}


def use_finder(name: str):
    if name == "cotengra":
        pytest.importorskip("cotengra")
    return tq.use_contractor(name)


@pytest.mark.parametrize("finder", CONTRACTORS)
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
def test_results_match_the_dense_reference(backend_name, precision, finder):
    max_qubits, max_gates, examples = FINDER_LIMITS[finder]
    K = make_backend(backend_name, dtype=precision)

    @settings(max_examples=examples, deadline=None)
    @given(circuit=random_circuits(max_qubits, max_gates), seed=st.integers(0, 2 ** 16))
    def check_circuit(circuit, seed):
        with tq.use_backend(K), use_finder(finder):
            check_results(K, precision, circuit, seed, full=finder in ("circuit", "greedy", "auto"))

    check_circuit()


def check_results(K, precision, circuit, seed, full):
    n, operations = circuit
    c = build(n, operations)
    expected = reference_state(n, operations)
    check(K, c.state(method="contraction"), expected, precision)
    check(K, c.state(method="sweep"), expected, precision)
    index = seed % 2 ** n
    check(K, c.amplitude(index), expected[index], precision)
    rng = np.random.default_rng(seed)
    qubits = tuple(rng.permutation(n)[: rng.integers(1, min(n, 2) + 1)])
    observable = random_hermitian(rng, len(qubits))
    value = reference_expectation(expected, [(observable, qubits)], n)
    check(K, c.expectation((observable, list(qubits))), value.real, precision)
    if not full:
        return
    check(K, c.probability(), np.abs(expected) ** 2, precision)
    check(K, c.amplitude(format(index, f"0{n}b")), expected[index], precision)
    pauli = {"x": [], "y": [], "z": []}
    for q in range(n):
        pauli["xyz"[rng.integers(0, 3)]].append(q)
    paulis = {"x": np.array([[0, 1], [1, 0]]), "y": np.array([[0, -1j], [1j, 0]]),
              "z": np.diag([1, -1])}
    value = reference_expectation(expected, [(paulis[k], (q,)) for k, qs in pauli.items() for q in qs], n)
    check(K, c.expectation_ps(**pauli), value.real, precision)


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@settings(max_examples=10, deadline=None)
@given(circuit=random_circuits(max_qubits=4, max_gates=8))
def test_matrix_and_inverse_match_the_reference(backend_name, circuit):
    n, operations = circuit
    with tq.use_backend(make_backend(backend_name)) as K:
        c = build(n, operations)
        expected = reference_unitary(n, operations)
        check(K, c.matrix(), expected, "complex128")
        check(K, c.inverse().matrix(), expected.conj().T, "complex128")


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@settings(max_examples=8, deadline=None)
@given(circuit=random_circuits(max_qubits=4), seed=st.integers(0, 2 ** 16))
def test_input_states_and_non_hermitian_expectations(backend_name, circuit, seed):
    n, operations = circuit
    rng = np.random.default_rng(seed)
    inputs = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    inputs /= np.linalg.norm(inputs)
    with tq.use_backend(make_backend(backend_name)) as K:
        c = build(n, operations, inputs=inputs)
        expected = reference_state(n, operations, inputs)
        check(K, c.state(method="contraction"), expected, "complex128")
        check(K, c.state(method="sweep"), expected, "complex128")
        operator = rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2))
        value = reference_expectation(expected, [(operator, (0,))], n)
        check(K, c.expectation((operator, [0]), hermitian=False), value, "complex128")
        observable = random_hermitian(rng, 1)
        value = reference_expectation(expected, [(observable, (n - 1,))], n)
        check(K, c.expectation((observable, [n - 1])), value.real, "complex128")


def test_wide_intermediates_stay_within_six_dimensions():
    """Nine-qubit states on the cuPyNumeric logic: every call within its 6-dimension limit."""
    rng = np.random.default_rng(5)
    n = 9
    operations = []
    for _ in range(3):
        operations += [("ry", (q,), (rng.uniform(0, 3),)) for q in range(n)]
        operations += [("cx", (q, (q + 3) % n), ()) for q in range(n)]
    operations.append(("ccx", (0, 4, 8), ()))
    with tq.use_backend(make_backend("cupynumeric-logic")) as K:
        c = build(n, operations)
        check(K, c.state(), reference_state(n, operations), "complex128")
        check(K, c.expectation_ps(z=[2, 7], x=[4]),
              reference_expectation(reference_state(n, operations),
                                    [(np.diag([1, -1]), (2,)), (np.diag([1, -1]), (7,)),
                                     (np.array([[0, 1], [1, 0]]), (4,))], n).real, "complex128")


def test_qubit_zero_is_the_most_significant_bit():
    K = tq.get_backend("numpy")
    c = tq.Circuit(3).x(0)
    state = K.to_numpy(c.state())
    assert state[0b100] == 1 and abs(complex(c.amplitude("100"))) == 1
    assert c.sample(3, seed=0) == {"100": 3}
