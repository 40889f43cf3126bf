"""Gradients, vmap, sampling, the plan cache, the light cone, memory checks and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend
from reference import reference_state

torch = pytest.importorskip("torch")


def layered_circuit(n, thetas, K=None):
    c = tq.Circuit(n)
    index = 0
    for _ in range(2):
        for q in range(n):
            c.rx(q, thetas[index])
            c.rz(q, theta=thetas[index + 1])
            index += 2
        for q in range(n - 1):
            c.cx(q, q + 1)
        c.rzz(0, n - 1, thetas[index])
        index += 1
    return c


N_QUBITS, N_PARAMS = 4, 2 * (2 * 4 + 1)


def energy(thetas):
    c = layered_circuit(N_QUBITS, thetas)
    return c.expectation_ps(z=[0, 1]) + 0.5 * c.expectation_ps(x=[2]) - 0.3 * c.expectation_ps(y=[3], z=[0])


def parameter_shift_gradient(f, thetas):
    """Each parameter enters one rotation exp(-i θ P / 2): shift by ±π/2."""
    grad = np.zeros_like(thetas)
    for i in range(len(thetas)):
        plus, minus = thetas.copy(), thetas.copy()
        plus[i] += np.pi / 2
        minus[i] -= np.pi / 2
        grad[i] = (float(f(plus)) - float(f(minus))) / 2
    return grad


def test_pytorch_gradients_match_the_parameter_shift_rule():
    thetas = np.random.default_rng(0).uniform(-np.pi, np.pi, N_PARAMS)
    with tq.use_backend("numpy"):
        shift = parameter_shift_gradient(energy, thetas)
    with tq.use_backend("pytorch") as K:
        value, grad = K.value_and_grad(lambda t: energy([t[i] for i in range(N_PARAMS)]))(thetas)
    np.testing.assert_allclose(K.to_numpy(grad), shift, atol=1e-10)


def test_gradients_flow_to_every_angle_of_every_result():
    with tq.use_backend("pytorch") as K:
        thetas = K.requires_grad(K.asarray(np.linspace(0.1, 1.0, N_PARAMS)))
        c = layered_circuit(N_QUBITS, [thetas[i] for i in range(N_PARAMS)])
        for result in (K.real(K.sum(c.state())), K.sum(c.probability()[:3]), K.real(c.amplitude(3)),
                       c.expectation_ps(x=[1])):
            (grad,) = torch.autograd.grad(result, thetas)
            assert grad.shape == (N_PARAMS,) and bool(torch.isfinite(grad).all())


def test_vmap_over_a_function_that_builds_and_evaluates_a_circuit():
    thetas = np.random.default_rng(1).uniform(-np.pi, np.pi, (5, N_PARAMS))
    with tq.use_backend("pytorch") as K:
        batched = K.vmap(lambda t: energy([t[i] for i in range(N_PARAMS)]))
        values = K.to_numpy(batched(K.asarray(thetas)))
        per_row_grads = K.vmap(K.grad(lambda t: energy([t[i] for i in range(N_PARAMS)])))(K.asarray(thetas))
    with tq.use_backend("numpy"):
        expected = [float(energy(row)) for row in thetas]
        expected_grad = parameter_shift_gradient(energy, thetas[2])
    np.testing.assert_allclose(values, expected, atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(per_row_grads)[2], expected_grad, atol=1e-10)


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "cupynumeric"])
def test_sampling_follows_the_probabilities(backend_name):
    K = tq.set_backend(make_backend(backend_name))
    c = tq.Circuit(3).h(0).ry(1, 0.7).cx(0, 2).rx(2, 0.4)
    probabilities = K.to_numpy(c.probability())
    counts = c.sample(20000, seed=3)
    observed = np.array([counts.get(format(i, "03b"), 0) for i in range(8)])
    expected = 20000 * probabilities
    mask = expected > 0
    statistic = float((((observed - expected) ** 2)[mask] / expected[mask]).sum())
    assert statistic < 30.0  # chi-square, 7 degrees of freedom: p < 2e-5 beyond 30
    assert observed[~mask].sum() == 0


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "cupynumeric-logic", "cupynumeric"])
def test_same_seed_same_samples_and_formats(backend_name):
    with tq.use_backend(make_backend(backend_name)) as K:
        c = tq.Circuit(3).h(0).h(1).cx(1, 2)
        first = c.sample(50, seed=11, format="bitstrings")
        assert first == c.sample(50, seed=11, format="bitstrings")
        assert len(first) == 50 and all(len(b) == 3 and b[2] == b[1] for b in first)
        indices = c.sample(50, seed=11, format="indices")
        assert K.is_array(indices)
        assert [format(int(i), "03b") for i in K.to_numpy(indices)] == first
        counts = c.sample(50, seed=11)
        assert sum(counts.values()) == 50


def test_one_structure_one_path_search_for_a_hundred_parameter_sets():
    tq.clear_plan_cache()
    rng = np.random.default_rng(2)
    for _ in range(100):
        energy(rng.uniform(-np.pi, np.pi, N_PARAMS))
    info = tq.plan_cache_info()
    # energy() asks three differently placed expectations: three structures, three searches
    assert info.path_searches == 3 and info.misses == 3 and info.hits == 297


def test_plan_cache_can_be_bounded_and_turned_off():
    tq.clear_plan_cache()
    try:
        tq.set_plan_cache(enabled=False)
        c = tq.Circuit(3).h(0).cx(0, 1).cx(1, 2)
        c.state(method="contraction")
        c.state(method="contraction")
        assert tq.plan_cache_info().path_searches == 2 and tq.plan_cache_info().size == 0
        tq.set_plan_cache(maxsize=1, enabled=True)
        c.state(method="contraction")
        c.probability()
        c.expectation_ps(z=[0])
        assert tq.plan_cache_info().size == 1
    finally:
        tq.set_plan_cache(maxsize=256, enabled=True)


def brickwork(n, depth, seed=0):
    rng = np.random.default_rng(seed)
    c = tq.Circuit(n)
    for layer in range(depth):
        for q in range(n):
            c.ry(q, rng.uniform(0, np.pi))
        for q in range(layer % 2, n - 1, 2):
            c.cz(q, q + 1)
    return c


def test_fifty_qubit_amplitude_and_local_expectation_use_no_dense_state():
    c = brickwork(50, 10)
    K = tq.get_backend("numpy")
    amplitude = complex(c.amplitude("0" * 50))
    z_middle = float(c.expectation_ps(z=[25]))
    assert 0 < abs(amplitude) < 1 and -1 <= z_middle <= 1
    # the light cone of qubit 25 after depth 10 spans qubits 15..35: a 21-qubit reference
    with pytest.raises(MemoryError):
        c.state(method="contraction")
    small = brickwork(12, 4, seed=3)
    reference = reference_state(12, [(op.gate, op.qubits, op.params) for op in small.operations])
    z = np.diag([1, -1])
    from reference import reference_expectation

    np.testing.assert_allclose(float(small.expectation_ps(z=[6])),
                               reference_expectation(reference, [(z, (6,))], 12).real, atol=1e-12)
    assert K.shape(c.amplitude(0)) == ()


def test_memory_is_checked_before_allocating():
    with pytest.raises(MemoryError, match="16 TiB"):
        tq.Circuit(40).h(0).state()
    with pytest.raises(MemoryError, match="matrix"):
        tq.Circuit(20).matrix()
    with pytest.raises(MemoryError):
        tq.Circuit(40).sample(10, method="state")
    assert tq.Circuit(40).sample(10) == {"0" * 40: 10}  # past the state vector: another method


@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda c: c.h(3), ValueError, "out of range"),
        (lambda c: c.h(-1), ValueError, "out of range"),
        (lambda c: c.cx(1, 1), ValueError, "repeat"),
        (lambda c: c.h(1.5), TypeError, "must be an int"),
        (lambda c: c.rx(0, float("nan")), ValueError, "not finite"),
        (lambda c: c.rx(0, theta=float("inf")), ValueError, "not finite"),
        (lambda c: c.rx(0, 1j), TypeError, "must be real"),
        (lambda c: c.rx(0, "0.3"), TypeError, "real number"),
        (lambda c: c.unitary(0, matrix=np.ones((2, 2))), ValueError, "not unitary"),
        (lambda c: c.unitary(0, 1, matrix=np.eye(2)), ValueError, "shape"),
        (lambda c: c.unitary(0, matrix=np.eye(2, dtype=bool)), TypeError, "not numeric"),
        (lambda c: c.unitary(0, matrix=np.array([["1", "0"], ["0", "1"]])), TypeError, "not numeric"),
        (lambda c: c.unitary(0), TypeError, "exactly once"),
        (lambda c: c.amplitude("01"), ValueError, "exactly 3"),
        (lambda c: c.amplitude("0a1"), ValueError, "0 or 1"),
        (lambda c: c.amplitude(8), ValueError, "out of range"),
        (lambda c: c.sample(0), ValueError, "shots"),
        (lambda c: c.sample(10, format="histogram"), ValueError, "format"),
        (lambda c: c.expectation((np.array([[0, 1], [0, 0]]), [0])), ValueError, "Hermitian"),
        (lambda c: c.expectation((np.eye(4), [0])), ValueError, "shape"),
        (lambda c: c.expectation((np.eye(2), [0]), (np.eye(2), [0])), ValueError, "overlap"),
        (lambda c: c.expectation_ps(), ValueError, "at least one"),
    ],
)
def test_bad_input_is_rejected_early_with_a_clear_message(build, error, words):
    c = tq.Circuit(3)
    with pytest.raises(error, match=words):
        build(c)
    assert len(c.operations) == 0


def test_bad_circuit_arguments():
    with pytest.raises(ValueError, match="positive"):
        tq.Circuit(0)
    with pytest.raises(ValueError, match="shape"):
        tq.Circuit(2, inputs=np.ones(3))
    with pytest.raises(ValueError, match="normalised"):
        tq.Circuit(1, inputs=[1.0, 1.0])
    with pytest.raises(ValueError, match="unknown contractor"):
        tq.set_contractor("fastest")


def test_tensor_angles_are_checked_for_shape_and_dtype():
    with tq.use_backend("pytorch") as K:
        with pytest.raises(ValueError, match="scalar"):
            tq.Circuit(1).rx(0, K.asarray([0.1, 0.2]))
        with pytest.raises(TypeError, match="must be real"):
            tq.Circuit(1).rx(0, K.asarray([1j]))


def test_chaining_copy_inverse_and_draw():
    c = tq.Circuit(3).h(0).cx(0, 1).rx(2, theta=0.3).ccx(0, 1, 2).cnot(2, 0).toffoli(0, 1, 2)
    assert len(c.operations) == 6
    duplicate = c.copy().x(1)
    assert len(c.operations) == 6 and len(duplicate.operations) == 7
    K = tq.get_backend("numpy")
    identity = K.to_numpy(c.copy().unitary(0, 1, 2, matrix=K.to_numpy(c.inverse().matrix())).matrix())
    np.testing.assert_allclose(identity, np.eye(8), atol=1e-12)
    drawing = c.draw()
    assert drawing.splitlines()[0].startswith("q0:") and "RX(0.3)" in drawing and "●" in drawing
    assert len(drawing.splitlines()) == 3


def test_results_are_arrays_of_the_active_backend():
    c = tq.Circuit(2).h(0).cx(0, 1)
    with tq.use_backend("pytorch") as K:
        for result in (c.state(), c.probability(), c.amplitude(0), c.expectation_ps(z=[0]), c.matrix()):
            assert K.is_array(result)
    with tq.use_backend("numpy") as K:
        assert isinstance(c.state(), np.ndarray)


def test_cotengra_missing_gives_the_install_command(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cotengra", None)
    with pytest.raises(ImportError, match="pip install 'tyxonq\\[contract\\]'"):
        tq.set_contractor("cotengra")


def _count_cotengra_searches(monkeypatch) -> list[tuple[int, float]]:
    """The trials and contraction rate asked of each cotengra search, recorded while the real
    search runs."""
    from tyxonq.circuit.contraction import paths

    calls: list[tuple[int, float]] = []
    real = paths.cotengra_path

    def counted(*args, repeats=paths.HYPER_REPEATS, rate=None, **kwargs):
        calls.append((repeats, rate))
        return real(*args, repeats=repeats, rate=rate, **kwargs)

    monkeypatch.setattr(paths, "cotengra_path", counted)
    return calls


def test_expensive_networks_also_try_a_hyper_optimised_path(monkeypatch):
    """When the cheap paths would take longer than SEARCH_ABOVE_SECONDS the circuit finder adds
    cotengra's combo path as a candidate, its search timed by the contraction rate (an eager plan
    stops after EAGER_SEARCH_FRACTION of the best path's estimated contraction time)."""
    pytest.importorskip("cotengra")
    from tyxonq.circuit.contraction import paths

    calls = _count_cotengra_searches(monkeypatch)
    monkeypatch.setattr(paths, "SEARCH_ABOVE_SECONDS", 0.0)
    monkeypatch.setattr(paths, "OUTPUT_BOUND_FACTOR", 0)
    params = np.random.default_rng(0).uniform(0, 1, 2 * 5 * 3)
    circuit = tq.templates.rotation_ladder(5, params, 3)
    tq.clear_plan_cache()
    with tq.use_backend("numpy"):
        state = circuit.state(method="contraction")
    assert calls == [(paths.HYPER_REPEATS, paths.CONTRACTION_RATE / paths.EAGER_SEARCH_FRACTION)]
    expected = reference_state(5, [(op.gate, op.qubits, op.params) for op in circuit.operations])
    np.testing.assert_allclose(state, expected, atol=1e-12)


def test_thorough_plans_search_longer(monkeypatch):
    """Plans made while a function is being compiled (under ``jax.jit``) are thorough: cotengra's
    search runs as if contractions were THOROUGH_SLOWDOWN times slower, with more trials. Eager
    calls, on JAX too, get the quick search (their first result comes fast)."""
    pytest.importorskip("cotengra")
    from tyxonq.circuit.contraction import paths

    calls = _count_cotengra_searches(monkeypatch)
    monkeypatch.setattr(paths, "SEARCH_ABOVE_SECONDS", 0.0)
    monkeypatch.setattr(paths, "OUTPUT_BOUND_FACTOR", 0)
    params = np.random.default_rng(1).uniform(0, 1, 2 * 5 * 3)
    circuit = tq.templates.rotation_ladder(5, params, 3)
    expected = reference_state(5, [(op.gate, op.qubits, op.params) for op in circuit.operations])
    tq.clear_plan_cache()
    with tq.use_backend("numpy"):
        np.testing.assert_allclose(circuit.state(method="contraction"), expected, atol=1e-12)
    assert calls == [(paths.HYPER_REPEATS, paths.CONTRACTION_RATE / paths.EAGER_SEARCH_FRACTION)]
    pytest.importorskip("jax")
    with tq.use_backend("jax") as K:
        eager = circuit.state(method="contraction")
        assert calls[1:] == []  # the quick plan is already cached
        # "auto" may take the state from NumPy (tyxonq.circuit.host_state): the contraction asked for
        compiled = K.jit(lambda a: tq.templates.rotation_ladder(5, a, 3).state(method="contraction"))(params)
        np.testing.assert_allclose(K.to_numpy(eager), expected, atol=1e-12)
        np.testing.assert_allclose(K.to_numpy(compiled), expected, atol=1e-12)
    assert calls[1:] == [(paths.THOROUGH_REPEATS, paths.CONTRACTION_RATE / paths.THOROUGH_SLOWDOWN)]


def test_planning_without_cotengra_warns_once(monkeypatch):
    import sys

    from tyxonq.circuit.contraction import paths

    for name in ["cotengra", "cotengrust"] + [name for name in sys.modules if name.startswith("cotengr")]:
        monkeypatch.setitem(sys.modules, name, None)  # neither installed, nor imported before
    monkeypatch.setattr(paths, "SEARCH_ABOVE_SECONDS", 0.0)
    monkeypatch.setattr(paths, "OUTPUT_BOUND_FACTOR", 0)
    monkeypatch.setattr(paths, "_warned_no_cotengra", False)
    tq.clear_plan_cache()
    expected_warning = pytest.warns(paths.PathSearchWarning, match="tyxonq\\[contract\\]")
    with tq.use_backend("numpy"), expected_warning as caught:
        for n in (4, 5):
            params = np.random.default_rng(n).uniform(0, 1, 2 * n * 2)
            circuit = tq.templates.rotation_ladder(n, params, 2)
            expected = reference_state(n, [(op.gate, op.qubits, op.params) for op in circuit.operations])
            np.testing.assert_allclose(circuit.state(method="contraction"), expected, atol=1e-12)
    assert sum(issubclass(w.category, paths.PathSearchWarning) for w in caught) == 1


def test_custom_path_finder_and_memory_limit():
    calls = []

    def finder(inputs, output, size_dict, memory_limit):
        calls.append(memory_limit)
        import opt_einsum

        return opt_einsum.paths.greedy(inputs, output, size_dict, memory_limit)

    tq.clear_plan_cache()
    with tq.use_contractor(finder, memory_limit=2 ** 10):
        c = tq.Circuit(3).h(0).cx(0, 1).cx(1, 2)
        state = tq.get_backend("numpy").to_numpy(c.state(method="contraction"))
    assert calls == [2 ** 10]
    np.testing.assert_allclose(np.abs(state[[0, 7]]), [2 ** -0.5] * 2)


def test_a_hundred_angle_sets_of_one_structure_search_one_path():
    tq.clear_plan_cache()
    rng = np.random.default_rng(4)
    for _ in range(100):
        c = tq.Circuit(4)
        for q in range(4):
            c.ry(q, rng.uniform(-np.pi, np.pi))
        for q in range(3):
            c.cx(q, q + 1)
        c.rzz(0, 3, rng.uniform(-np.pi, np.pi))
        c.state(method="contraction")
    info = tq.plan_cache_info()
    assert (info.path_searches, info.misses, info.hits) == (1, 1, 99)


def test_eager_jax_contracts_large_networks_on_numpy_and_pytorch_only_small_ones(monkeypatch):
    """The size up to which an eager contraction runs on the host twin: any on JAX's CPU (XLA's
    products are slower than OpenBLAS's at every size measured), 2^18 entries on PyTorch (its
    threaded kernels win above); on JAX's GPU 2^18 too. A 19-qubit state (2^19 entries) runs on
    NumPy under eager JAX on the CPU, on PyTorch itself, with the reference's values on both."""
    import math

    from tyxonq.circuit.contraction import evaluation

    pytest.importorskip("jax")
    pytest.importorskip("torch")
    taken = []
    original = evaluation.host_twin_for

    def recorded(K, *args):
        found = original(K, *args)
        if found is not None:
            taken.append(K.name)
        return found

    monkeypatch.setattr(evaluation, "host_twin_for", recorded)
    n = 19
    params = np.random.default_rng(2).uniform(0, 1, 2 * n)
    expected = reference_state(n, [(g, (q,), (float(params[2 * q + k]),))
                                   for k, g in enumerate(("rx", "rz")) for q in range(n)]
                               + [("cx", (q, q + 1), ()) for q in range(n - 1)])
    jax_on_cpu = tq.get_backend("jax").capabilities.device == "cpu"
    for name, limit in (("jax", math.inf if jax_on_cpu else 2.0 ** 18), ("pytorch", 2.0 ** 18)):
        K = tq.get_backend(name)
        assert K.host_twin_entries() == limit
        with tq.use_backend(K):
            state = K.to_numpy(tq.templates.rotation_ladder(n, params, 1).state(method="contraction"))
        np.testing.assert_allclose(state, expected, atol=1e-12)
    assert taken == (["jax"] if jax_on_cpu else [])


def test_jax_knows_when_it_compiles_and_runs_eager_contractions_compiled(monkeypatch):
    """K.compiling() is true only while jax.jit traces (not under eager grad or vmap); an eager
    contraction the host twin does not take runs as one compiled program per plan (not op by op),
    with the same result."""
    jax = pytest.importorskip("jax")
    from tyxonq.circuit.contraction import plan as plans

    K = tq.get_backend("jax")
    monkeypatch.setattr(type(K), "host_twin_entries", lambda self: 0.0)
    seen = []

    def probe(x):
        seen.append(K.compiling())
        return x * 2.0

    probe(1.0)
    K.jit(probe)(1.0)
    jax.grad(probe)(1.0)
    jax.vmap(probe)(K.ones((2,), "float64"))
    K.jit(jax.grad(probe))(2.0)
    assert seen == [False, True, False, False, True]
    params = np.random.default_rng(4).uniform(0, 1, 2 * 6 * 2)
    circuit = tq.templates.rotation_ladder(6, params, 2)
    expected = reference_state(6, [(op.gate, op.qubits, op.params) for op in circuit.operations])
    tq.clear_plan_cache()
    with tq.use_backend(K):
        eager = circuit.state(method="contraction")
        compiled = K.jit(lambda a: tq.templates.rotation_ladder(6, a, 2).state(method="contraction"))(params)
    np.testing.assert_allclose(K.to_numpy(eager), expected, atol=1e-12)
    np.testing.assert_allclose(K.to_numpy(compiled), expected, atol=1e-12)
    assert any(K in entry.__dict__.get("_compiled_runs", {})
               for entry in plans._CACHE._networks.entries.values())
