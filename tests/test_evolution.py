"""Time evolution against ``scipy.linalg.expm`` of the dense Hamiltonian (written here from the
Pauli matrices): exact methods on every backend, product-formula error rates and bounds, QDrift,
gradients, time-dependent Hamiltonians, imaginary time and TEBD."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import pauli_matrix

METHODS = ("krylov", "expm", "taylor")


def dense(hamiltonian: tq.PauliSum) -> np.ndarray:
    return sum(c * pauli_matrix(s) for c, s in hamiltonian)


def random_state(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    psi = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    return psi / np.linalg.norm(psi)


@st.composite
def evolutions(draw):
    """(hamiltonian, initial state, times): random Pauli sums of up to 5 qubits."""
    n = draw(st.integers(1, 5))
    count = draw(st.integers(1, 8))
    terms = [(draw(st.floats(-2, 2)), "".join(draw(st.sampled_from("IXYZ")) for _ in range(n)))
             for _ in range(count)]
    times = sorted(draw(st.lists(st.floats(0, 3), min_size=1, max_size=4)))
    return tq.PauliSum(terms, n), random_state(n, draw(st.integers(0, 2 ** 16))), times


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch", "cupynumeric-logic", "cupynumeric"])
@pytest.mark.parametrize("method", METHODS)
def test_exact_methods_match_the_dense_exponential(backend_id, method):
    K = make_backend(backend_id)

    @settings(max_examples=12, deadline=None)
    @given(case=evolutions())
    def check(case):
        hamiltonian, psi, times = case
        matrix = dense(hamiltonian)
        expected = np.stack([expm(-1j * t * matrix) @ psi for t in times])
        with tq.use_backend(K):
            got = K.to_numpy(tq.evolve(hamiltonian, K.asarray(psi), times, method=method))
        np.testing.assert_allclose(got, expected, atol=1e-10)

    check()


@pytest.mark.parametrize("method", METHODS)
def test_jax_and_single_precision(method):
    hamiltonian = tq.hamiltonians.heisenberg(4) + 0.5 * tq.hamiltonians.tfim(4)
    psi = random_state(4, 3)
    times = [0.4, 1.3]
    expected = np.stack([expm(-1j * t * dense(hamiltonian)) @ psi for t in times])
    K = make_backend("jax")
    with tq.use_backend(K):
        np.testing.assert_allclose(K.to_numpy(tq.evolve(hamiltonian, psi, times, method=method)),
                                   expected, atol=1e-10)
    single = make_backend("numpy", dtype="complex64")
    with tq.use_backend(single):
        got = tq.evolve(hamiltonian, psi.astype(np.complex64), times, method=method)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_circuit_initial_states_observables_and_callbacks():
    hamiltonian = tq.hamiltonians.tfim(5, h=0.7)
    circuit = tq.Circuit(5).h(0).cx(0, 1).ry(3, 0.4)
    psi = np.asarray(circuit.state())
    times = [0.0, 0.5, 1.5]
    magnetisation = tq.PauliSum([(1.0, "ZIIII"), (1.0, "IIZII")])
    values = tq.evolve(hamiltonian, circuit, times, observables=[hamiltonian, magnetisation])
    states = [expm(-1j * t * dense(hamiltonian)) @ psi for t in times]
    for row, state in zip(values, states):
        for value, operator in zip(row, (hamiltonian, magnetisation)):
            assert abs(value - np.vdot(state, dense(operator) @ state).real) < 1e-10
    norms = tq.evolve(hamiltonian, circuit, times, callback=lambda s: np.vdot(s, s).real)
    np.testing.assert_allclose(norms, 1.0, atol=1e-12)


@pytest.mark.parametrize("method", ["krylov", "taylor"])
def test_imaginary_time_reaches_the_tfim_ground_energy(method):
    hamiltonian = tq.hamiltonians.tfim(6, h=0.8)
    start = tq.Circuit(6)
    for q in range(6):
        start.h(q)
    energies = tq.evolve(hamiltonian, start, [1.0, 25.0], method=method, imaginary=True,
                         observables=hamiltonian)
    assert energies[0, 0] > energies[1, 0]
    assert abs(energies[1, 0] - hamiltonian.ground_energy()) < 1e-9


# -- product formulas ----------------------------------------------------------------------------
def _trotter_error(hamiltonian, psi, time, steps, order):
    exact = expm(-1j * time * dense(hamiltonian)) @ psi
    circuit = tq.evolution.trotter(hamiltonian, time, steps, order,
                                   circuit=tq.Circuit(hamiltonian.n_qubits, inputs=psi))
    return np.linalg.norm(np.asarray(circuit.state()) - exact)


@pytest.mark.parametrize("order, steps", [(1, [8, 16, 32, 64]), (2, [4, 8, 16, 32]), (4, [2, 4, 8, 16])])
def test_trotter_errors_fall_at_the_orders_rate_within_their_bounds(order, steps):
    hamiltonian = tq.PauliSum([(0.9, "XXI"), (0.7, "IYY"), (0.5, "ZIZ"), (0.4, "XIZ"), (0.3, "IZI")])
    psi = random_state(3, 7)
    errors = [_trotter_error(hamiltonian, psi, 1.0, r, order) for r in steps]
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope + order) < 0.25, (errors, slope)
    for r, error in zip(steps, errors):
        assert error <= tq.evolution.trotter_error(hamiltonian, 1.0, r, order)


def test_trotter_orderings_circuits_and_their_gates():
    hamiltonian = tq.hamiltonians.heisenberg(4)
    psi = random_state(4, 1)
    exact = expm(-1j * 0.8 * dense(hamiltonian)) @ psi
    for ordering in ("given", "commuting"):
        c = tq.evolution.trotter(hamiltonian, 0.8, 40, 2, ordering=ordering,
                                 circuit=tq.Circuit(4, inputs=psi))
        assert np.linalg.norm(np.asarray(c.state()) - exact) < 1e-3
    # first-order steps of a sum of commuting sets: exact for one set
    ising = tq.PauliSum([(0.3, "ZZI"), (0.2, "IZZ"), (0.7, "ZIZ")])
    small = psi[:8] / np.linalg.norm(psi[:8])
    c = tq.evolution.trotter(ising, 1.7, 1, ordering="commuting", circuit=tq.Circuit(3, inputs=small))
    expected = expm(-1.7j * dense(ising)) @ small
    np.testing.assert_allclose(c.state(), expected, atol=1e-12)
    gates = tq.evolution.trotter(hamiltonian, 1.0, 3, 2).operations
    assert all(op.gate in ("exp:XX", "exp:YY", "exp:ZZ") for op in gates)
    assert len(gates) == 3 * (2 * len(hamiltonian) - 1) - 2  # the steps' touching factors merged
    mps = tq.evolution.trotter(hamiltonian, 0.5, 10, 2, circuit=tq.MPSCircuit(4))
    np.testing.assert_allclose(mps.state(), tq.evolution.trotter(hamiltonian, 0.5, 10, 2).state(), atol=1e-12)


def test_qdrift_average_is_within_its_bound():
    hamiltonian = tq.PauliSum([(0.6, "XZ"), (-0.4, "YY"), (0.3, "ZI")])
    psi = random_state(2, 5)
    observable = dense(tq.PauliSum([(1.0, "ZZ"), (1.0, "XI")]))
    time, samples, draws = 0.6, 12, 400
    exact_state = expm(-1j * time * dense(hamiltonian)) @ psi
    exact = np.vdot(exact_state, observable @ exact_state).real
    values = []
    for seed in range(draws):
        state = np.asarray(tq.evolution.qdrift(hamiltonian, time, samples, seed,
                                               circuit=tq.Circuit(2, inputs=psi)).state())
        values.append(np.vdot(state, observable @ state).real)
    bound = tq.evolution.qdrift_error(hamiltonian, time, samples) * 2.0  # ||O|| <= 2
    standard_error = np.std(values) / np.sqrt(draws)
    assert abs(np.mean(values) - exact) <= bound + 5 * standard_error
    first = tq.evolution.qdrift(hamiltonian, time, samples, 3)
    again = tq.evolution.qdrift(hamiltonian, time, samples, 3)
    assert [op.gate for op in first.operations] == [op.gate for op in again.operations]


def test_product_formulas_are_differentiable_in_time_and_coefficients():
    torch = pytest.importorskip("torch")
    hamiltonian = tq.hamiltonians.tfim(3, h=0.6)
    observable = tq.PauliSum([(1.0, "XII"), (0.5, "ZZI")])
    base = np.array([c for c, _ in hamiltonian])

    def energy(x):
        K = tq.get_backend()
        coefficients = K.asarray(base) * (1 + x[1])
        c = tq.evolution.trotter(hamiltonian, x[0], 4, 2, coefficients=coefficients,
                                 circuit=tq.Circuit(3).h(0).ry(2, 0.3))
        return c.expectation(observable)

    x0 = np.array([0.7, 0.2])
    numeric = np.array([(energy(x0 + e) - energy(x0 - e)) / 2e-6 for e in 1e-6 * np.eye(2)])
    with tq.use_backend("pytorch"):
        gradient = tq.value_and_grad(energy)(torch.tensor(x0))[1]
    np.testing.assert_allclose(gradient.numpy(), numeric, atol=1e-7)

    def in_time(t):  # NumPy: the exact methods differentiate the angles built from the time
        return tq.evolution.trotter(hamiltonian, t, 4, 2, circuit=tq.Circuit(3).h(0)).expectation(observable)

    shift = tq.value_and_grad(in_time, method="parameter-shift")(0.7)[1]
    assert abs(float(shift) - float((in_time(0.7 + 1e-6) - in_time(0.7 - 1e-6)) / 2e-6)) < 1e-7


# -- gradients of exact evolution ------------------------------------------------------------------
def _objective(method, hamiltonian, observable, base):
    def value(x):
        K = tq.get_backend()
        c = tq.Circuit(4).ry(0, x[0]).x(2).h(3)
        coefficients = K.asarray(base) * (1 + 0.1 * x[1])
        v = tq.evolve(hamiltonian, c, K.stack([x[2], 2 * x[2]]), method=method, coefficients=coefficients,
                      observables=observable)
        return v[0, 0] + v[1, 0] ** 2

    return value


@pytest.mark.parametrize("backend_id, methods", jax_in_matrix([("pytorch", METHODS), ("jax", ("taylor",))]))
def test_gradients_in_times_coefficients_and_initial_parameters(backend_id, methods):
    hamiltonian = tq.hamiltonians.heisenberg(4) + 0.3 * tq.hamiltonians.tfim(4)
    observable = tq.PauliSum([(1.0, "ZIII"), (0.5, "IXXI")])
    base = np.array([c for c, _ in hamiltonian])
    x0 = np.array([0.4, 0.2, 0.7])
    reference = _objective("expm", hamiltonian, observable, base)
    numeric = np.array([(reference(x0 + e) - reference(x0 - e)) / 2e-6 for e in 1e-6 * np.eye(3)])
    K = make_backend(backend_id)
    with tq.use_backend(K):
        for method in methods:
            gradient = tq.value_and_grad(_objective(method, hamiltonian, observable, base))(K.asarray(x0))[1]
            np.testing.assert_allclose(K.to_numpy(gradient), numeric, atol=1e-7, err_msg=method)


@pytest.mark.parametrize("method", METHODS)
def test_numpy_gradients_by_the_adjoint_identities_match_autograd(method):
    torch = pytest.importorskip("torch")
    hamiltonian = tq.hamiltonians.heisenberg(4) + 0.3 * tq.hamiltonians.tfim(4)
    observables = [tq.PauliSum([(1.0, "ZIII"), (0.5, "IXXI")]), tq.PauliSum([(1.0, "IIYZ")])]
    start = tq.Circuit(4).ry(0, 0.4).x(2).h(3)

    def value(x):  # x = (time, every coefficient)
        K = tq.get_backend()
        coefficients = K.stack(list(x[1:])) if K.name != "numpy" else list(x[1:])
        v = tq.evolve(hamiltonian, start, [0.5 * x[0], x[0]], method=method, coefficients=coefficients,
                      observables=observables)
        return v[0, 0] + v[1, 1] * v[1, 0]

    x0 = np.concatenate([[0.8], [c for c, _ in hamiltonian]])
    adjoint = tq.value_and_grad(value)(x0)
    with tq.use_backend("pytorch"):
        autograd = tq.value_and_grad(value)(torch.tensor(x0))
    assert abs(float(adjoint[0]) - float(autograd[0])) < 1e-10
    np.testing.assert_allclose(adjoint[1], autograd[1].numpy(), atol=1e-9)
    with pytest.raises(tq.numerics.dual.TracingError, match="observables"):
        tq.value_and_grad(lambda t: tq.evolve(hamiltonian, start, [t])[0, 0].real)(0.3)


def test_taylor_runs_under_jit_with_fixed_steps():
    jax = pytest.importorskip("jax")
    hamiltonian = tq.hamiltonians.tfim(4)
    psi = random_state(4, 2)
    K = make_backend("jax")
    with tq.use_backend(K):
        run = jax.jit(lambda t: tq.evolve(hamiltonian, psi, K.stack([t]), method="taylor", steps=8, order=16))
        got = K.to_numpy(run(K.asarray(1.1)))
        with pytest.raises(ValueError, match="steps= and order="):
            jax.jit(lambda t: tq.evolve(hamiltonian, psi, K.stack([t])))(K.asarray(1.1))
    np.testing.assert_allclose(got[0], expm(-1.1j * dense(hamiltonian)) @ psi, atol=1e-10)


# -- time-dependent Hamiltonians -------------------------------------------------------------------
def test_magnus_scheme_is_fourth_order_and_exact_for_constant_coefficients():
    terms = [(1.0, "ZZ"), (lambda t: 0.8 * np.cos(2.0 * t), "XI"), (lambda t: 0.5 * np.sin(t), "IY")]
    drive = tq.evolution.TimeDependentHamiltonian(terms)
    psi = random_state(2, 4)

    def rhs(t, y):
        return -1j * (dense(drive.at(t)) @ y)

    exact = solve_ivp(rhs, (0, 2.0), psi, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    errors = [np.linalg.norm(tq.evolve(drive, psi, [2.0], dt=dt)[0] - exact) for dt in (0.2, 0.1, 0.05)]
    slopes = np.diff(np.log(errors)) / np.log(0.5)
    assert np.all(np.abs(slopes - 4) < 0.5), errors
    constant = tq.evolution.TimeDependentHamiltonian([(0.7, "XZ"), (0.3, "ZI")])
    static = tq.PauliSum([(0.7, "XZ"), (0.3, "ZI")])
    np.testing.assert_allclose(tq.evolve(constant, psi, [0.5, 1.0], dt=0.3, method="expm"),
                               tq.evolve(static, psi, [0.5, 1.0]), atol=1e-10)


# -- TEBD ------------------------------------------------------------------------------------------
def test_tebd_heisenberg_quench_of_16_sites_against_the_exact_state():
    n, time = 16, 0.5
    hamiltonian = tq.hamiltonians.heisenberg(n)
    neel = tq.Circuit(n)
    mps = tq.MPSCircuit(n, cutoff=0.0)
    for q in range(0, n, 2):
        neel.x(q)
        mps.x(q)
    exact = tq.evolve(hamiltonian, neel, [time])[0]
    final = tq.evolve(hamiltonian, mps, [time], method="tebd", dt=0.05, order=4)[0]
    assert abs(np.vdot(exact, final.state())) > 1 - 1e-9
    second = tq.evolve(hamiltonian, mps, [time], method="tebd", dt=0.05, order=2)[0]
    assert 1e-8 < 1 - abs(np.vdot(exact, second.state())) < 1e-3  # second order: visibly less


def test_tebd_observables_long_range_terms_truncation_and_imaginary_time():
    hamiltonian = tq.hamiltonians.heisenberg(8, periodic=True) + 0.4 * tq.hamiltonians.tfim(8)
    circuit = tq.Circuit(8).x(0).x(3).h(5)
    mps = tq.MPSCircuit(8, cutoff=0.0).x(0).x(3).h(5)
    z = [tq.PauliSum([(1.0, "I" * q + "Z" + "I" * (7 - q))]) for q in range(8)]
    times = [0.3, 0.6]
    exact = tq.evolve(hamiltonian, circuit, times, observables=z)
    got = tq.evolve(hamiltonian, mps, times, method="tebd", dt=0.01, order=4, observables=z)
    np.testing.assert_allclose(got, exact, atol=1e-7)
    capped = tq.evolve(hamiltonian, mps, [1.0], method="tebd", dt=0.05, max_bond=4,
                       callback=lambda view: (max(view.bond_dimensions()), view.truncation_error()))
    assert capped[0][0] <= 4 and capped[0][1] > 1e-6
    tfim = tq.hamiltonians.tfim(10, h=0.9)
    start = tq.MPSCircuit(10, max_bond=16)
    for q in range(10):
        start.h(q)
    energy = tq.evolve(tfim, start, [8.0], method="tebd", dt=0.02, order=4, imaginary=True, observables=tfim)
    assert abs(float(energy[0, 0]) - tfim.ground_energy()) < 1e-5


def test_bad_input_is_named():
    h = tq.hamiltonians.tfim(3)
    c = tq.Circuit(3)
    with pytest.raises(ValueError, match="method='lanczos'"):
        tq.evolve(h, c, [1.0], method="lanczos")
    with pytest.raises(ValueError, match="non-decreasing"):
        tq.evolve(h, c, [1.0, 0.5])
    with pytest.raises(ValueError, match="non-negative"):
        tq.evolve(h, c, [-1.0])
    with pytest.raises(ValueError, match="DMCircuit"):
        tq.evolve(h, tq.DMCircuit(3), [1.0])
    with pytest.raises(ValueError, match="method='tebd'"):
        tq.evolve(h, tq.MPSCircuit(3), [1.0])
    with pytest.raises(ValueError, match="dt="):
        tq.evolve(h, tq.MPSCircuit(3), [1.0], method="tebd")
    with pytest.raises(ValueError, match="tol="):
        tq.evolve(h, c, [1.0], tol=2.0)
    with pytest.raises(ValueError, match="qubits"):
        tq.evolve(h, tq.Circuit(4), [1.0])
    with pytest.raises(ValueError, match="observables"):
        tq.evolve(h, c, [1.0], observables=[tq.hamiltonians.tfim(4)])
    with pytest.raises(ValueError, match="dt="):
        tq.evolve(tq.evolution.TimeDependentHamiltonian([(np.cos, "ZZI")]), c, [1.0])
    with pytest.raises(ValueError, match="order=3"):
        tq.evolution.trotter(h, 1.0, 2, order=3)
    with pytest.raises(ValueError, match="coefficients has shape"):
        tq.evolution.trotter(h, 1.0, coefficients=np.ones(2))
    with pytest.raises(ValueError, match="Hermitian"):
        tq.evolution.trotter(tq.PauliSum([(1j, "XZ")]), 1.0)
    with pytest.raises(TypeError, match="PauliSum"):
        tq.evolve("ZZ", c, [1.0])


# -- arguments checked before any work (issue 42) ------------------------------------------------
CHEAP_BACKENDS = ["numpy", "pytorch", "jax"]
BAD_COUNTS = [(dict(steps=-1, order=10), ValueError, "steps=-1"),
              (dict(steps=5, order=-3), ValueError, "order=-3"),
              (dict(steps=0, order=10), ValueError, "steps=0"), (dict(steps=0), ValueError, "steps=0"),
              (dict(order=0), ValueError, "order=0"), (dict(steps=2.5, order=10), TypeError, "steps=2.5"),
              (dict(order=True), TypeError, "order=True"), (dict(krylov_dim=1), ValueError, "krylov_dim=1"),
              (dict(krylov_dim=2.5), TypeError, "krylov_dim=2.5"),
              (dict(max_bond=0), ValueError, "max_bond=0")]


@pytest.mark.parametrize("backend_id", CHEAP_BACKENDS)
@pytest.mark.parametrize("method", METHODS)
def test_bad_counts_are_refused_by_every_method_and_backend(backend_id, method):
    hamiltonian = tq.hamiltonians.tfim(3)
    K = make_backend(backend_id)
    with tq.use_backend(K):
        for options, error, name in BAD_COUNTS:
            with pytest.raises(error, match=name):
                tq.evolve(hamiltonian, tq.Circuit(3).h(0), [1.0], method=method, **options)


def test_taylor_counts_are_refused_under_jit_and_none_chooses():
    jax = pytest.importorskip("jax")
    hamiltonian = tq.hamiltonians.tfim(3)
    psi = random_state(3, 8)
    K = make_backend("jax")
    with tq.use_backend(K):
        for steps, order, name in ((-1, 16, "steps=-1"), (8, -3, "order=-3"), (0, 16, "steps=0")):
            run = jax.jit(lambda t, s=steps, o=order: tq.evolve(hamiltonian, psi, K.stack([t]),
                                                              method="taylor", steps=s, order=o))
            with pytest.raises(ValueError, match=name):
                run(K.asarray(0.7))
    expected = expm(-0.7j * dense(hamiltonian)) @ psi  # None (the default): chosen from ||H|| and tol
    for options in (dict(), dict(steps=3), dict(order=30)):
        got = tq.evolve(hamiltonian, psi, [0.7], method="taylor", **options)[0]
        np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("backend_id", CHEAP_BACKENDS)
def test_bad_times_observables_and_flags_are_named_alike_on_every_backend(backend_id):
    hamiltonian = tq.hamiltonians.tfim(3)
    c = tq.Circuit(3).h(0)
    cases = [(dict(times=["1.0"]), TypeError, "times"), (dict(times=[float("nan")]), ValueError, "times"),
             (dict(times=[float("inf")]), ValueError, "times"), (dict(times=[0.5, 1j]), TypeError, "times"),
             (dict(times=[1e300]), ValueError, "times"), (dict(observables=[]), ValueError, "observables"),
             (dict(observables=3), TypeError, "observables"), (dict(callback=3), TypeError, "callback"),
             (dict(imaginary="no"), TypeError, "imaginary"), (dict(method=None), ValueError, "method")]
    K = make_backend(backend_id)
    with tq.use_backend(K):
        for method in METHODS:
            for options, error, name in cases:
                options = {"times": [1.0], "method": method, **options}
                with pytest.raises(error, match=name):
                    tq.evolve(hamiltonian, c, options.pop("times"), **options)


def test_long_real_times_are_refused_where_no_digit_of_the_phase_survives():
    hamiltonian = tq.hamiltonians.tfim(3)  # Krylov spans the whole space here: one step, fast
    with pytest.raises(ValueError, match="phases"):
        tq.evolve(hamiltonian, tq.Circuit(3), [1e17])
    state = tq.evolve(hamiltonian, tq.Circuit(3), [1e6])[0]
    np.testing.assert_allclose(state, expm(-1e6j * dense(hamiltonian))[:, 0], atol=1e-6)


@pytest.mark.parametrize("backend_id", CHEAP_BACKENDS)
def test_empty_hamiltonian_evolves_as_the_identity(backend_id):
    empty = tq.PauliSum([], n_qubits=3)
    psi = random_state(3, 11)
    z = tq.PauliSum([(1.0, "ZII")])
    expected_z = np.vdot(psi, dense(z) @ psi).real
    K = make_backend(backend_id)
    with tq.use_backend(K):
        for method in METHODS:
            for imaginary in (False, True):
                got = K.to_numpy(tq.evolve(empty, K.asarray(psi), [0.0, 0.5, 2.0], method=method,
                                           imaginary=imaginary))
                np.testing.assert_allclose(got, np.stack([psi] * 3), atol=1e-12, err_msg=method)
            values = K.to_numpy(tq.evolve(empty, K.asarray(psi), [1.0], method=method, observables=z))
            assert abs(values[0, 0] - expected_z) < 1e-12
    with pytest.raises(ValueError, match="coefficients"):
        tq.evolve(empty, psi, [1.0], coefficients=np.ones(2))
    mps = tq.MPSCircuit(3, inputs=psi)
    snapshots = tq.evolve(empty, mps, [0.5, 1.0], method="tebd", dt=0.1)
    for snapshot in snapshots:
        np.testing.assert_allclose(snapshot.state(), psi, atol=1e-12)
    drive = tq.evolution.TimeDependentHamiltonian([], n_qubits=3)
    np.testing.assert_allclose(tq.evolve(drive, psi, [1.0], dt=0.1)[0], psi, atol=1e-12)
    assert len(tq.evolution.trotter(empty, 1.0, 3, 2).operations) == 0
    assert tq.evolution.trotter_error(empty, 1.0, 3, 4) == 0.0
    with pytest.raises(ValueError, match="n_qubits"):
        tq.evolution.TimeDependentHamiltonian([])


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch"])
@pytest.mark.parametrize("method", METHODS)
def test_a_callback_that_changes_its_state_does_not_change_the_evolution(backend_id, method):
    hamiltonian = tq.hamiltonians.tfim(3, h=0.7)
    psi = random_state(3, 12)
    times = [0.0, 0.5, 1.0, 1.5]
    K = make_backend(backend_id)

    def spoil(state):  # reads, then wipes the vector in place
        value = K.to_numpy(state).copy()
        state *= 0
        return K.asarray(value)

    drive = tq.evolution.TimeDependentHamiltonian([(1.0, "ZZI"), (np.cos, "XII")])
    expected = np.stack([expm(-1j * t * dense(hamiltonian)) @ psi for t in times])
    with tq.use_backend(K):
        initial = K.asarray(psi.copy())
        got = K.to_numpy(tq.evolve(hamiltonian, initial, times, method=method, callback=spoil))
        np.testing.assert_allclose(got, expected, atol=1e-10)
        np.testing.assert_allclose(K.to_numpy(initial), psi, atol=0)  # the caller's array too
        driven = K.to_numpy(tq.evolve(drive, initial, times, dt=0.25, method=method, callback=spoil))
        reference = K.to_numpy(tq.evolve(drive, initial, times, dt=0.25, method=method))
    np.testing.assert_allclose(driven, reference, atol=1e-12)


def test_observables_and_a_callback_are_both_returned():
    hamiltonian = tq.hamiltonians.tfim(4, h=0.6)
    z = [tq.PauliSum([(1.0, "ZIII")]), hamiltonian]
    times = [0.3, 0.9]
    norm = lambda state: float(np.vdot(state, state).real)  # noqa: E731
    values, norms = tq.evolve(hamiltonian, tq.Circuit(4).h(1), times, observables=z, callback=norm)
    np.testing.assert_allclose(values, tq.evolve(hamiltonian, tq.Circuit(4).h(1), times, observables=z),
                               atol=1e-12)
    np.testing.assert_allclose(norms, 1.0, atol=1e-12)
    mps = tq.MPSCircuit(4).h(1)
    values, bonds = tq.evolve(hamiltonian, mps, times, method="tebd", dt=0.05, observables=z,
                              callback=lambda view: max(view.bond_dimensions()))
    alone = tq.evolve(hamiltonian, mps, times, method="tebd", dt=0.05, observables=z)
    np.testing.assert_allclose(values, alone, atol=1e-12)
    assert bonds.shape == (2,) and bonds[1] >= 2
    with pytest.raises(tq.numerics.dual.TracingError, match="callback"):
        tq.value_and_grad(lambda t: tq.evolve(hamiltonian, tq.Circuit(4), [t], observables=z,
                                              callback=norm)[0][0, 0])(0.3)


def test_tebd_checks_steps_times_bonds_and_terms_before_any_gate():
    hamiltonian = tq.hamiltonians.tfim(4, h=0.8)
    mps = tq.MPSCircuit(4).h(0)
    cases = [(dict(dt=float("inf")), ValueError, "dt=inf"), (dict(dt=float("nan")), ValueError, "dt=nan"),
             (dict(dt=1e-300), ValueError, "dt=1e-300"), (dict(dt="0.1"), TypeError, "dt="),
             (dict(times=[float("nan")]), ValueError, "times"),
             (dict(times=[float("inf")]), ValueError, "times"), (dict(times=["1.0"]), TypeError, "times"),
             (dict(times=[1.0, 0.5]), ValueError, "non-decreasing"),
             (dict(max_bond=0), ValueError, "max_bond=0"), (dict(max_bond=1.5), TypeError, "max_bond=1.5"),
             (dict(cutoff=2.0), ValueError, "cutoff=2.0"), (dict(order=0), ValueError, "order=0"),
             (dict(order=3), ValueError, "order=3"),
             (dict(coefficients=np.ones(2)), ValueError, "coefficients"),
             (dict(coefficients=np.ones(9)), ValueError, "coefficients")]
    for options, error, name in cases:
        options = {"times": [1.0], "dt": 0.1, **options}
        with pytest.raises(error, match=name):
            tq.evolve(hamiltonian, mps, options.pop("times"), method="tebd", **options)
    exact = tq.evolve(hamiltonian, tq.Circuit(4).h(0), [0.02])[0]
    for dt in (1e300, 0.02, 0.5):  # a step longer than the interval: one step of the interval
        state = tq.evolve(hamiltonian, mps, [0.02], method="tebd", dt=dt)[0].state()
        assert abs(np.vdot(exact, state)) > 1 - 1e-7, dt


def test_magnus_steps_are_checked_like_tebd():
    drive = tq.evolution.TimeDependentHamiltonian([(1.0, "ZZ"), (np.cos, "XI")])
    psi = random_state(2, 13)
    for dt, error in ((float("inf"), ValueError), (1e-300, ValueError), ("0.1", TypeError),
                      (0.0, ValueError)):
        with pytest.raises(error, match="dt="):
            tq.evolve(drive, psi, [1.0], dt=dt)
    one_step = tq.evolve(drive, psi, [0.01], dt=0.01)[0]
    for dt in (1e300, 1.0):  # one step of the interval, not none
        np.testing.assert_allclose(tq.evolve(drive, psi, [0.01], dt=dt)[0], one_step, atol=1e-14)
    assert np.linalg.norm(one_step - psi) > 1e-4


def test_product_formulas_name_a_bad_time():
    hamiltonian = tq.hamiltonians.tfim(3)
    for time, error in ((float("inf"), ValueError), (float("nan"), ValueError), ("1.0", TypeError)):
        for build in (lambda t: tq.evolution.trotter(hamiltonian, t, 2, 2),
                      lambda t: tq.evolution.qdrift(hamiltonian, t, 4, 1),
                      lambda t: tq.evolution.trotter_error(hamiltonian, t, 2, 2)):
            with pytest.raises(error, match="time="):
                build(time)
    with pytest.raises(ValueError, match="count=0"):
        tq.evolution.suzuki_factors(0, 2)
