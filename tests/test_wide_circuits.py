"""Wide circuits: values and exact gradients of 40-100-qubit local expectations through light-cone
contractions, against parameter shift and a dense reference on the light cone; Pauli terms
evaluated together; plans shared between terms of the same shape; memory checks on gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import reference_expectation, reference_state
from tyxonq.circuit.contraction.lightcone import light_cone

nx = pytest.importorskip("networkx")
PAULIS = {"X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]), "Z": np.diag([1, -1])}


def dense_on_light_cone(circuit: tq.Circuit, string: str) -> float:
    """``<P>`` from a dense simulation of the qubits in the usual light cone of ``P``: the
    operations on those qubits only (any other cancels exactly), qubits renumbered."""
    operations = circuit.operations
    measured = [q for q, letter in enumerate(string) if letter != "I"]
    cone = sorted(set(measured).union(*(operations[i].qubits for i in light_cone(operations, measured))))
    number = {q: i for i, q in enumerate(cone)}
    kept = [(op.gate, tuple(number[q] for q in op.qubits), tuple(float(p) for p in op.params))
            for op in operations if set(op.qubits) <= set(cone)]
    state = reference_state(len(cone), kept)
    factors = [(PAULIS[string[q]], (number[q],)) for q in measured]
    return reference_expectation(state, factors, len(cone)).real


def qaoa_energy(graph, strings, coefficients):
    p = 1

    def energy(params):
        circuit = tq.templates.qaoa(graph, params[:p], params[p:])
        return circuit.pauli_expectations(strings, coefficients)

    return energy


def shifted_dense_gradient(graph, strings, coefficients, params):
    """The QAOA energy's gradient by the shift rule on dense light-cone simulations: every gate
    angle is ``γ w`` or ``2β`` (two-term rule per gate, chained)."""
    p = 1

    def dense(gammas_per_edge, betas_per_qubit):
        circuit = tq.Circuit(graph.number_of_nodes())
        for q in graph.nodes:
            circuit.h(q)
        for (a, b), angle in zip(graph.edges, gammas_per_edge):
            circuit.rzz(a, b, angle)
        for q, angle in zip(graph.nodes, betas_per_qubit):
            circuit.rx(q, angle)
        return sum(c * dense_on_light_cone(circuit, s) for c, s in zip(coefficients, strings))

    edges = [params[0]] * graph.number_of_edges()
    mixers = [2 * params[p]] * graph.number_of_nodes()
    gradient = np.zeros(2)
    for i in range(len(edges)):
        plus, minus = list(edges), list(edges)
        plus[i] += np.pi / 2
        minus[i] -= np.pi / 2
        gradient[0] += (dense(plus, mixers) - dense(minus, mixers)) / 2
    for i in range(len(mixers)):
        plus, minus = list(mixers), list(mixers)
        plus[i] += np.pi / 2
        minus[i] -= np.pi / 2
        gradient[1] += 2 * (dense(edges, plus) - dense(edges, minus)) / 2
    return dense(edges, mixers), gradient


@pytest.fixture(scope="module")
def wide_qaoa():
    """The 60-qubit QAOA case and its dense reference value and gradient, computed once for
    every backend (301 dense light-cone simulations)."""
    graph = nx.random_regular_graph(3, 60, seed=7)
    rng = np.random.default_rng(3)
    chosen = [list(graph.edges)[i] for i in rng.choice(graph.number_of_edges(), 4, replace=False)]
    strings = ["".join("Z" if q in edge else "I" for q in range(60)) for edge in chosen]
    strings.append("".join("X" if q == chosen[0][0] else "I" for q in range(60)))
    coefficients = [0.5, -0.25, 1.0, 0.75, 0.3]
    params = np.array([0.37, 0.61])
    return graph, strings, coefficients, params, shifted_dense_gradient(graph, strings, coefficients, params)


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
def test_wide_qaoa_energy_and_gradient_against_the_dense_light_cone(backend_name, wide_qaoa):
    """60 qubits (a 3-regular graph, p = 1): the adjoint state would need 2^60 entries."""
    K = make_backend(backend_name)
    graph, strings, coefficients, params, (value, gradient) = wide_qaoa
    with tq.use_backend(K):
        energy = qaoa_energy(graph, strings, coefficients)
        got_value, got_gradient = tq.value_and_grad(energy)(K.asarray(params))
        np.testing.assert_allclose(float(K.to_numpy(got_value)), value, atol=1e-10)
        np.testing.assert_allclose(K.to_numpy(got_gradient), gradient, atol=1e-10)
        # parameter shift where gradients are finite differences: on the cuPyNumeric logic (its
        # ~600 shifted light-cone contractions took past 15 minutes of Legate task launches on the
        # real cuPyNumeric on one CPU, which the finite differences above already exercise)
        if K.capabilities.autodiff == "finite-difference" and backend_name != "cupynumeric":
            shifted = tq.value_and_grad(energy, method="parameter-shift")(params)[1]
            np.testing.assert_allclose(K.to_numpy(shifted), gradient, atol=1e-10)


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
def test_wide_brickwork_gradient_against_parameter_shift(backend_name):
    """A 100-qubit, depth-4 RY + CZ brickwork: <Z_50> and <X_10 X_11>, every angle its own
    parameter (400); reverse mode through the contraction equals parameter shift."""
    n, depth = 100, 4
    strings = ["Z".join(["I" * 50, "I" * 49]), "I" * 10 + "XX" + "I" * 88]

    def energy(params):
        return tq.templates.brickwork(n, params, depth).pauli_expectations(strings, [1.0, 0.5])

    params = np.random.default_rng(5).uniform(-np.pi, np.pi, n * depth)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        value, gradient = tq.value_and_grad(energy)(K.asarray(params))
    with tq.use_backend("numpy"):
        shifted_value, shifted = tq.value_and_grad(energy, method="parameter-shift")(params)
    circuit = tq.templates.brickwork(n, params, depth)
    dense = dense_on_light_cone(circuit, strings[0]) + 0.5 * dense_on_light_cone(circuit, strings[1])
    np.testing.assert_allclose(float(K.to_numpy(value)), dense, atol=1e-10)
    np.testing.assert_allclose(float(shifted_value), dense, atol=1e-10)
    np.testing.assert_allclose(K.to_numpy(gradient), shifted, atol=1e-10)
    assert np.count_nonzero(np.abs(shifted) > 1e-12) > 10  # the light cones' angles, and only those


def test_pauli_expectations_match_the_dense_reference_and_each_term():
    @settings(max_examples=20, deadline=None)
    @given(n=st.integers(2, 6), seed=st.integers(0, 2 ** 16))
    def check(n, seed):
        rng = np.random.default_rng(seed)
        circuit = tq.templates.hardware_efficient(n, rng.uniform(-3, 3, 2 * n * 3), 2, ("ry", "rz"))
        strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(rng.integers(1, 7))]
        state = reference_state(n, [(op.gate, op.qubits, op.params) for op in circuit.operations])
        expected = [reference_expectation(state, [(PAULIS[s[q]], (q,)) for q in range(n) if s[q] != "I"],
                                          n).real for s in strings]
        K = tq.get_backend("numpy")
        np.testing.assert_allclose(K.to_numpy(circuit.pauli_expectations(strings)), expected, atol=1e-12)
        weights = rng.normal(size=len(strings))
        np.testing.assert_allclose(float(circuit.pauli_expectations(strings, weights)),
                                   weights @ expected, atol=1e-12)

    check()


@pytest.fixture(scope="module")
def batched_terms():
    """A 30-qubit brickwork's terms, weights and angles, each term's value contracted alone and
    the weighted sum's parameter-shift gradient on NumPy: computed once for every backend."""
    n, depth = 30, 3
    strings = ["I" * q + letter + "I" * (n - q - 1) for q in range(n) for letter in "XYZ"]
    strings += ["I" * q + "ZZ" + "I" * (n - q - 2) for q in range(0, n - 1, 3)]
    weights = np.random.default_rng(11).normal(size=len(strings))
    params = np.random.default_rng(12).uniform(-np.pi, np.pi, n * depth)
    with tq.use_backend("numpy"):
        circuit = tq.templates.brickwork(n, params, depth)
        alone = [float(circuit.pauli_expectations([s])[0]) for s in strings]
        _, shifted = tq.value_and_grad(lambda a: tq.templates.brickwork(n, a, depth).pauli_expectations(
            strings, weights), method="parameter-shift")(params)
    return n, depth, strings, weights, params, alone, shifted


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
def test_batched_terms_with_constant_and_mixed_observable_positions(backend_name, batched_terms):
    """A 30-qubit RY + CZ brickwork's X, Y and Z terms: terms of one shape are contracted together,
    their constant CZ pieces stacked once per backend (also inside ``jit``: a cached stack must
    hold no tracer), an observable bound once only where every term holds the same one. Each
    value against its term contracted alone, the weighted sum's gradient against parameter
    shift."""
    K = make_backend(backend_name)
    n, depth, strings, weights, params, alone, shifted = batched_terms
    with tq.use_backend(K):
        def energy(angles):
            return tq.templates.brickwork(n, angles, depth).pauli_expectations(strings, weights)

        values = tq.templates.brickwork(n, K.asarray(params), depth).pauli_expectations(strings)
        np.testing.assert_allclose(K.to_numpy(values), alone, atol=1e-10)
        value_and_grad = tq.value_and_grad(energy)
        if backend_name == "jax":
            value_and_grad = K.jit(value_and_grad)
        for angles in (params, params + 0.1):
            value, gradient = value_and_grad(K.asarray(angles))
        np.testing.assert_allclose(float(K.to_numpy(value)), float(energy(K.asarray(params + 0.1))),
                                   atol=1e-10)
        value, gradient = value_and_grad(K.asarray(params))
        np.testing.assert_allclose(float(K.to_numpy(value)), weights @ alone, atol=1e-10)
        np.testing.assert_allclose(K.to_numpy(gradient), shifted, atol=1e-9)


def test_traced_terms_give_one_dual_per_term():
    graph = nx.cycle_graph(8)
    strings = ["ZZ" + "I" * 6, "I" * 3 + "XY" + "I" * 3]

    def per_term(params):
        values = tq.templates.qaoa(graph, params[:1], params[1:]).pauli_expectations(strings)
        return values[0] * values[1] + values[0]

    params = np.array([0.4, 0.9])
    with tq.use_backend("numpy"):
        exact = tq.value_and_grad(per_term)(params)[1]
        numeric = tq.value_and_grad(per_term, method="finite-difference")(params)[1]
    np.testing.assert_allclose(exact, numeric, atol=1e-7)


def test_terms_of_the_same_shape_share_one_plan():
    """On a ring every <Z_i Z_{i+1}> light cone has the same shape: one plan for all of them."""
    n = 40
    graph = nx.cycle_graph(n)
    hamiltonian = tq.hamiltonians.maxcut(graph)
    circuit = tq.templates.qaoa(graph, [0.3, 0.2], [0.5, 0.1])
    tq.clear_plan_cache()
    with tq.use_backend("numpy"):
        value = circuit.expectation(hamiltonian, method="lightcone")
    info = tq.plan_cache_info()
    assert info.misses == n and info.path_searches == 1
    small = tq.templates.qaoa(nx.cycle_graph(12), [0.3, 0.2], [0.5, 0.1])
    with tq.use_backend("numpy"):  # the same per edge, so the energy is n / 12 of the small ring's
        reference = small.expectation(tq.hamiltonians.maxcut(nx.cycle_graph(12)), method="state")
    np.testing.assert_allclose(float(value), float(reference) * n / 12, atol=1e-10)


def test_the_adjoint_sweep_of_a_wide_state_is_refused_with_the_alternative():
    n = 50

    def energy(params):
        circuit = tq.Circuit(n)
        for q in range(n):
            circuit.ry(q, params[0])
        return circuit.dense_expectation(lambda K, state: state)

    with tq.use_backend("numpy"), pytest.raises(MemoryError, match="light-cone contractions"):
        tq.value_and_grad(energy)(np.array([0.1]))


def test_bad_pauli_strings_are_refused():
    circuit = tq.Circuit(3).h(0)
    with pytest.raises(ValueError, match="3 characters"):
        circuit.pauli_expectations(["ZZ"])
    with pytest.raises(ValueError, match="each I, X, Y or Z"):
        circuit.pauli_expectations(["ZQZ"])
    with pytest.raises(TypeError, match="sequence of Pauli strings"):
        circuit.pauli_expectations("ZZZ")
    with pytest.raises(ValueError, match="2 coefficients for 1 strings"):
        circuit.pauli_expectations(["ZZZ"], [1.0, 2.0])


def test_rehearsals_plan_without_running_and_report_what_would_not_fit():
    n = 40
    circuit = tq.templates.brickwork(n, np.linspace(0, 1, 4 * n), 4)
    tq.clear_plan_cache()
    with tq.use_backend("numpy"):
        report = circuit.rehearse("state")
        assert not report.fits and report.width == n and report.contractions == 1
        with pytest.raises(MemoryError, match="needs 16 TiB"):
            circuit.state()
        local = circuit.rehearse("expectation_ps", z=[20])
        assert local.fits and local.width <= 8 and local.planning_seconds > 0
        searches = tq.plan_cache_info().path_searches
        value = circuit.expectation_ps(z=[20])  # the rehearsal's plan is reused: no new search
        assert tq.plan_cache_info().path_searches == searches
        assert abs(float(value) - dense_on_light_cone(circuit, "I" * 20 + "Z" + "I" * 19)) < 1e-10
        hamiltonian = tq.hamiltonians.tfim(n)
        energy = tq.rehearse(lambda: circuit.expectation(hamiltonian, method="lightcone"))
    assert energy.contractions == 2 * n - 1
    assert energy.distinct_plans < energy.contractions  # bulk terms share plans
    assert "width" in str(energy) and energy.log10_flops > 0
    with pytest.raises(ValueError, match="must be one of"):
        circuit.rehearse("draw")
