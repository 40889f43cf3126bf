"""PauliSum, the Hamiltonian builders and Hamiltonian expectations against dense matrices."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import reference_state
from tyxonq import PauliSum, hamiltonians

PAULI = {"I": np.eye(2), "X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]),
         "Z": np.diag([1.0, -1.0])}


def dense(h: PauliSum) -> np.ndarray:
    """Independent dense matrix: sum of Kronecker products, qubit 0 leftmost."""
    total = np.zeros((2 ** h.n_qubits,) * 2, dtype=complex)
    for coefficient, string in h:
        total += coefficient * functools.reduce(np.kron, [PAULI[p] for p in string])
    return total


@st.composite
def pauli_sums(draw, n=None, complex_coefficients=False):
    n = n or draw(st.integers(1, 4))
    count = draw(st.integers(1, 5))
    terms = []
    for _ in range(count):
        string = "".join(draw(st.sampled_from("IXYZ")) for _ in range(n))
        real = draw(st.floats(-2, 2))
        imag = draw(st.floats(-2, 2)) if complex_coefficients else 0.0
        terms.append((complex(real, imag) if complex_coefficients else real, string))
    return PauliSum(terms, n)


def test_three_ways_to_build_the_same_operator():
    a = PauliSum([(1.0, "ZZI"), (0.5, "XII"), (-2e-1, "IYZ")])
    b = PauliSum.from_dict({"ZZI": 1.0, "XII": 0.5, "IYZ": -0.2})
    c = PauliSum.from_string("1.0*Z0 Z1 + 0.5*X0 - 2e-1*Y1 Z2", n_qubits=3)
    assert a == b == c
    assert PauliSum.from_string("Z0 - X1", n_qubits=2).terms == {"ZI": 1.0, "IX": -1.0}


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_algebra_matches_dense_matrices(data):
    n = data.draw(st.integers(1, 3))
    a = data.draw(pauli_sums(n, complex_coefficients=True))
    b = data.draw(pauli_sums(n, complex_coefficients=True))
    scalar = data.draw(st.floats(-3, 3))
    np.testing.assert_allclose(dense(a + b), dense(a) + dense(b), atol=1e-12)
    np.testing.assert_allclose(dense(a - b), dense(a) - dense(b), atol=1e-12)
    np.testing.assert_allclose(dense(scalar * a), scalar * dense(a), atol=1e-12)
    np.testing.assert_allclose(dense(a * scalar), scalar * dense(a), atol=1e-12)
    np.testing.assert_allclose(dense(-a), -dense(a), atol=1e-12)
    np.testing.assert_allclose(dense(a @ b), dense(a) @ dense(b), atol=1e-10)
    np.testing.assert_allclose(a.to_sparse().toarray(), dense(a), atol=1e-12)


def test_simplify_drops_cancelled_terms():
    h = PauliSum([(1.0, "XZ"), (-1.0, "XZ"), (0.5, "ZZ")])
    assert h.simplify().terms == {"ZZ": 0.5}
    assert (PauliSum([(1.0, "X")]) @ PauliSum([(1.0, "X")])).terms == {"I": 1.0}


def test_ground_energy_matches_dense_diagonalisation():
    for h in (hamiltonians.tfim(8, h=0.7), hamiltonians.heisenberg(7, jz=0.5, periodic=True)):
        expected = np.linalg.eigvalsh(dense(h))[0]
        assert h.ground_energy() == pytest.approx(expected, abs=1e-9)


def test_builders_have_the_documented_terms():
    assert hamiltonians.tfim(3, j=2.0, h=0.5).terms == {"ZZI": -2.0, "IZZ": -2.0, "XII": -0.5,
                                                         "IXI": -0.5, "IIX": -0.5}
    assert len(hamiltonians.tfim(4, periodic=True)) == 8
    assert hamiltonians.heisenberg(2, jx=1, jy=2, jz=3).terms == {"XX": 1.0, "YY": 2.0, "ZZ": 3.0}


def test_maxcut_minimum_is_the_maximum_cut():
    nx = pytest.importorskip("networkx")
    graph = nx.random_regular_graph(3, 8, seed=1)
    for a, b in graph.edges:
        graph.edges[a, b]["weight"] = 1.0 + 0.1 * a
    h = hamiltonians.maxcut(graph)
    total = sum(graph.edges[e]["weight"] for e in graph.edges)
    best = max(sum(graph.edges[a, b]["weight"] for a, b in graph.edges if (z >> a & 1) != (z >> b & 1))
               for z in range(2 ** 8))
    assert total / 2 - h.ground_energy() == pytest.approx(best)
    with pytest.raises(ValueError, match="relabel"):
        hamiltonians.maxcut(nx.relabel_nodes(graph, {0: "a"}))


@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda: PauliSum([(1.0, "XA")]), ValueError, "I, X, Y, Z"),
        (lambda: PauliSum([(1.0, "XZ"), (1.0, "X")]), ValueError, "expected 2"),
        (lambda: PauliSum([("1", "X")]), TypeError, "number"),
        (lambda: PauliSum([(float("nan"), "X")]), ValueError, "finite"),
        (lambda: PauliSum([]), ValueError, "n_qubits"),
        (lambda: PauliSum.from_string("1.0*Z5", n_qubits=2), ValueError, "qubit 5"),
        (lambda: PauliSum.from_string("Z0 Z0", n_qubits=2), ValueError, "twice"),
        (lambda: PauliSum.from_string("abc*Z0", n_qubits=2), ValueError, "coefficient"),
        (lambda: PauliSum([(1.0, "X")]) + PauliSum([(1.0, "XX")]), ValueError, "combine"),
        (lambda: PauliSum([(1.0, "X")]) * PauliSum([(1.0, "X")]), TypeError, "@"),
        (lambda: PauliSum([(1j, "X")]).ground_energy(), ValueError, "Hermitian"),
    ],
)
def test_bad_operators_are_rejected(build, error, words):
    with pytest.raises(error, match=words):
        build()


def random_circuit(n: int, rng: np.random.Generator) -> tuple[tq.Circuit, list[tuple]]:
    operations = []
    for _ in range(2):
        operations += [("ry", (q,), (rng.uniform(-3, 3),)) for q in range(n)]
        operations += [("rz", (q,), (rng.uniform(-3, 3),)) for q in range(n)]
        operations += [("cx", (q, q + 1), ()) for q in range(n - 1)]
    circuit = tq.Circuit(n)
    for gate, qubits, params in operations:
        getattr(circuit, gate)(*qubits, *params)
    return circuit, operations


@pytest.mark.parametrize("method", ["state", "lightcone"])
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_hamiltonian_expectation_matches_the_dense_reference(backend_name, precision, method, data):
    n = data.draw(st.integers(1, 5))
    h = data.draw(pauli_sums(n))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    with tq.use_backend(make_backend(backend_name, dtype=precision)) as K:
        circuit, operations = random_circuit(n, rng)
        state = reference_state(n, operations)
        expected = np.vdot(state, dense(h) @ state).real
        tol = 1e-5 if precision == "complex64" else 1e-10
        got = circuit.expectation(h, method=method)
        assert K.shape(got) == ()
        np.testing.assert_allclose(K.to_numpy(got), expected, atol=tol * max(1, len(h)))


def test_non_hermitian_sums_need_hermitian_false():
    h = PauliSum([(1j, "XY"), (2.0, "ZI")])
    circuit, operations = random_circuit(2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="hermitian=False"):
        circuit.expectation(h)
    state = reference_state(2, operations)
    K = tq.get_backend("numpy")
    np.testing.assert_allclose(K.to_numpy(circuit.expectation(h, hermitian=False)),
                               np.vdot(state, dense(h) @ state), atol=1e-12)
    with pytest.raises(ValueError, match="qubits"):
        tq.Circuit(3).expectation(h)
    with pytest.raises(ValueError, match="method"):
        circuit.expectation(hamiltonians.tfim(2), method="fastest")


def test_energy_gradients_flow_through_both_methods():
    torch = pytest.importorskip("torch")
    h = hamiltonians.heisenberg(4, jz=0.5)
    thetas = np.random.default_rng(3).uniform(-3, 3, 8)

    def energy(t, method):
        c = tq.Circuit(4)
        for q in range(4):
            c.ry(q, t[q])
        for q in range(3):
            c.cx(q, q + 1)
        for q in range(4):
            c.rx(q, t[4 + q])
        return c.expectation(h, method=method)

    with tq.use_backend("pytorch") as K:
        grads = [K.grad(lambda t, m=m: energy([t[i] for i in range(8)], m))(thetas)
                 for m in ("state", "lightcone")]
    np.testing.assert_allclose(K.to_numpy(grads[0]), K.to_numpy(grads[1]), atol=1e-12)
    shift = np.zeros(8)
    with tq.use_backend("numpy"):
        for i in range(8):
            plus, minus = thetas.copy(), thetas.copy()
            plus[i] += np.pi / 2
            minus[i] -= np.pi / 2
            shift[i] = (float(energy(plus, "state")) - float(energy(minus, "state"))) / 2
    np.testing.assert_allclose(K.to_numpy(grads[0]), shift, atol=1e-10)
    assert torch.is_tensor(grads[0])


@pytest.mark.parametrize("route", ["backend's choice", "flipped", "term by term"])
@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_applying_a_sum_matches_its_dense_matrix(backend_name, route, data):
    """H|v> for a random complex v and a stack of two: grouped by flipped qubits (one sparse
    product where the backend has them: NumPy with SciPy; else a flip per group), the groups
    flipped one by one, or term by term; no warnings (flips of the last two qubits gather by a
    cached index: PyTorch warned once when it was read-only)."""
    import warnings

    from tyxonq.operators import pauli_action

    n = data.draw(st.integers(1, 5))
    h = data.draw(pauli_sums(n))
    h = PauliSum(list(h), n)  # a sum of its own: nothing bound by another route kept on it
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    vectors = rng.normal(size=(2, 2 ** n)) + 1j * rng.normal(size=(2, 2 ** n))
    K = make_backend(backend_name)
    with pytest.MonkeyPatch.context() as patch:
        if route == "flipped":
            patch.setattr(pauli_action.BoundPauliSum, "_sparse_groups", lambda self: None)
        if route == "term by term":
            patch.setattr(pauli_action, "GROUPED_QUBITS", 0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            one = pauli_action.apply_pauli_sum(K, K.asarray(vectors[0]), h)
            stacked = pauli_action.apply_pauli_sum(K, K.asarray(vectors), h)
    np.testing.assert_allclose(K.to_numpy(one), dense(h) @ vectors[0], atol=1e-10)
    np.testing.assert_allclose(K.to_numpy(stacked), vectors @ dense(h).T, atol=1e-10)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_a_sum_read_string_by_string_in_chunks_matches_its_dense_matrix(backend_name, precision, data):
    """<v|H|v> of a large plain state, string by string and chunk by chunk (chunks of four
    amplitudes here, so strings cross chunks), equals the dense matrix's (JAX, whose arrays are
    not written in place, takes the whole-state route); so do the values of single strings."""
    from tyxonq.numerics import chunks
    from tyxonq.operators import pauli_action
    from tyxonq.operators.streamed_strings import streamed_pauli_values

    n = data.draw(st.integers(3, 6))
    h = PauliSum(list(data.draw(pauli_sums(n))), n)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    vector = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    K = make_backend(backend_name, dtype=precision)
    tolerance = 1e-10 if precision == "complex128" else 1e-4
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pauli_action, "GROUPED_QUBITS", 0)
        patch.setattr(chunks, "CHUNK_QUBITS", 2)
        streamed = []
        patch.setattr(pauli_action, "streamed_pauli_values",
                      lambda *args: streamed.append(1) or streamed_pauli_values(*args))
        value = pauli_action.pauli_sum_expectation(K, K.asarray(vector), h)
        assert bool(streamed) == (backend_name in ("numpy", "pytorch") and len(list(h)) > 0)
        strings = [string for _, string in h]
        singles = streamed_pauli_values(K, K.asarray(vector), strings)
    expected = np.vdot(vector, dense(h) @ vector)
    assert abs(complex(K.to_numpy(value)) - expected) < tolerance * max(1.0, abs(expected))
    for string, single in zip(strings, singles):
        reference = np.vdot(vector, dense(PauliSum([(1.0, string)], n)) @ vector)
        assert abs(complex(K.to_numpy(single)) - reference) < tolerance * 2 ** n


def test_a_sum_flipping_many_groups_is_one_sparse_product_on_numpy():
    """Two or more groups that flip qubits become one row-sparse product on a backend with
    compiled sparse products (SciPy installed); in complex64 too, at single precision."""
    pytest.importorskip("scipy")
    from tyxonq.operators import pauli_action

    h = PauliSum([(0.5, "XZI"), (-1.25, "IYY"), (2.0, "ZZZ"), (0.75, "YXI")], 3)
    rng = np.random.default_rng(3)
    vector = rng.normal(size=8) + 1j * rng.normal(size=8)
    for precision, tolerance in (("complex128", 1e-12), ("complex64", 1e-5)):
        K = make_backend("numpy", dtype=precision)
        assert K.capabilities.sparse_products
        bound = pauli_action._bound(K, h, precision)  # noqa: SLF001 - the route taken
        assert bound._sparse_groups() is not None  # noqa: SLF001
        got = pauli_action.apply_pauli_sum(K, K.asarray(vector, dtype=precision), h)
        assert got.dtype == np.dtype(precision)
        np.testing.assert_allclose(got, dense(h) @ vector, atol=tolerance * 10, rtol=tolerance)


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
def test_row_sparse_products_match_the_dense_matrix(backend_name, precision):
    """``K.row_sparse(columns, values)`` (a fixed number of entries per row, repeated columns
    adding up) applied to a vector and to a stack of vectors, against its dense matrix."""
    rng = np.random.default_rng(5)
    rows, width = 6, 3
    columns = rng.integers(0, rows, size=(rows, width))
    values = (rng.normal(size=(rows, width)) + 1j * rng.normal(size=(rows, width))).astype(precision)
    matrix = np.zeros((rows, rows), dtype=complex)
    for i in range(rows):
        for t in range(width):
            matrix[i, columns[i, t]] += values[i, t]
    vectors = (rng.normal(size=(2, rows)) + 1j * rng.normal(size=(2, rows))).astype(precision)
    K = make_backend(backend_name, dtype=precision)
    product = K.row_sparse(columns, values)
    tolerance = 1e-10 if precision == "complex128" else 1e-5
    np.testing.assert_allclose(K.to_numpy(product(K.asarray(vectors[0]))), matrix @ vectors[0],
                               rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(K.to_numpy(product(K.asarray(vectors))), vectors @ matrix.T,
                               rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_reading_strings_from_states_matches_dense_matrices(backend_name, data):
    """Each string's <v|P|v> for a stack of random complex vectors, strings sharing their flipped
    qubits read together, in the order given."""
    from tyxonq.operators.state_expectation import state_pauli_values

    n = data.draw(st.integers(1, 5))
    strings = data.draw(st.lists(st.text("IXYZ", min_size=n, max_size=n), min_size=1, max_size=8))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    vectors = rng.normal(size=(3, 2 ** n)) + 1j * rng.normal(size=(3, 2 ** n))
    K = make_backend(backend_name)
    expected = [[np.vdot(v, dense(PauliSum([(1.0, s)], n)) @ v).real for s in strings] for v in vectors]
    got = state_pauli_values(K, K.asarray(vectors), strings)
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=1e-10)
    single = state_pauli_values(K, K.asarray(vectors[1]), strings)
    np.testing.assert_allclose(K.to_numpy(single), expected[1], atol=1e-10)


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_reading_y_heavy_strings_from_wider_states_matches_dense_matrices(backend_name, data):
    """Y-heavy strings (the sign of i^{n_Y} and the real or imaginary half of each pair's product)
    on up to 9 qubits, masks of one bit (read from a view) and of several (gathered), one state or
    a stack."""
    from tyxonq.operators.state_expectation import state_pauli_values

    n = data.draw(st.integers(1, 9))
    letters = st.sampled_from("IXYYYZ")
    string = st.lists(letters, min_size=n, max_size=n).map("".join)
    strings = data.draw(st.lists(string, min_size=1, max_size=10))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    batch = data.draw(st.sampled_from([(), (1,), (3,)]))
    vectors = rng.normal(size=batch + (2 ** n,)) + 1j * rng.normal(size=batch + (2 ** n,))
    K = make_backend(backend_name)
    matrices = [dense(PauliSum([(1.0, s)], n)) for s in strings]
    expected = np.einsum("...i,sij,...j->...s", vectors.conj(), np.stack(matrices), vectors).real
    got = state_pauli_values(K, K.asarray(vectors), strings)
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=1e-10)


def test_state_pauli_values_differentiates_on_pytorch():
    """Autograd through the real/imaginary halves and the gathers: d<v|H|v>/dv = 2 H v (PyTorch's
    convention for a real function of a complex input)."""
    from tyxonq.operators.state_expectation import state_pauli_values

    torch = pytest.importorskip("torch")
    K = make_backend("pytorch")
    strings, weights = ["XYZYI", "YYIXZ", "ZIZII", "IXIIY", "YIIIY"], [0.3, -1.1, 0.7, 0.2, 0.5]
    rng = np.random.default_rng(3)
    vector = rng.normal(size=32) + 1j * rng.normal(size=32)
    v = torch.tensor(vector, requires_grad=True)
    value = (state_pauli_values(K, v, strings) * torch.tensor(weights, dtype=torch.float64)).sum()
    value.backward()
    h = sum(w * dense(PauliSum([(1.0, s)], 5)) for w, s in zip(weights, strings))
    np.testing.assert_allclose(v.grad.numpy(), 2 * h @ vector, atol=1e-10)
