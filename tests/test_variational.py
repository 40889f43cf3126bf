"""Optimisers, templates, batched circuit objectives and the example runner."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import tyxonq as tq
from conftest import make_backend

pytest.importorskip("torch")


def tfim_energy(sites=3, layers=2):
    hamiltonian = tq.hamiltonians.tfim(sites)

    def energy(params):
        return tq.templates.hardware_efficient(sites, params, layers).expectation(hamiltonian)

    return hamiltonian, energy, tq.templates.hardware_efficient_size(sites, layers)


@pytest.mark.parametrize("backend_name, method", [
    ("numpy", "L-BFGS-B"), ("pytorch", "L-BFGS-B"), ("numpy", "BFGS"), ("numpy", "adam"),
    ("pytorch", "adam"), ("numpy", "COBYLA"), ("cupynumeric-logic", "L-BFGS-B"), ("jax", "adam"),
    ("jax", "L-BFGS-B"),
])
def test_minimize_reaches_the_ground_energy(backend_name, method):
    hamiltonian, energy, size = tfim_energy()
    exact = hamiltonian.ground_energy()
    x0 = np.random.default_rng(0).uniform(-0.2, 0.2, size)
    with tq.use_backend(make_backend(backend_name)):
        iterations = 3000 if method == "COBYLA" else 600
        result = tq.optimize.minimize(energy, x0, method=method, maxiter=iterations,
                                      learning_rate=0.05, tol=1e-12, progress=False)
    assert abs(result.fun - exact) / abs(exact) < (1e-3 if method in ("adam", "COBYLA") else 1e-6)
    assert len(result.history_fun) == len(result.history_x) >= result.nit > 0
    assert result.fun == pytest.approx(min(result.history_fun), abs=1e-9)
    assert isinstance(result.x, np.ndarray) and result.x.shape == (size,)


def test_first_order_methods_stop_on_the_tolerance():
    _, energy, size = tfim_energy(2, 1)
    with tq.use_backend("numpy"):
        result = tq.optimize.minimize(energy, np.zeros(size) + 0.1, method="sgd", maxiter=5000,
                                      learning_rate=0.1, tol=1e-6, progress=False)
    assert result.converged and result.nit < 5000 and "tol" in result.message


INTERRUPTIBLE = [("numpy", "adam"), ("numpy", "L-BFGS-B"), ("pytorch", "adam"), ("numpy", "qng"),
                 ("numpy", "newton"), ("numpy", "COBYLA"), ("jax", "sgd")]


@pytest.mark.parametrize("backend_name, method", INTERRUPTIBLE)
@pytest.mark.parametrize("error", [RuntimeError("the cluster went away"), KeyboardInterrupt()],
                         ids=["exception", "keyboard interrupt"])
def test_an_interrupted_run_keeps_its_best_point_and_history(backend_name, method, error):
    """An exception or Ctrl-C at the objective's 6th call: OptimizationInterrupted carries the best
    of the points evaluated, its value and the history, the error as its cause."""
    _, energy, size = tfim_energy(3, 1)
    calls = []

    def interrupted(params):
        calls.append(1)
        if len(calls) == 6:
            raise error
        return energy(params)

    x0 = np.random.default_rng(1).uniform(-0.3, 0.3, size)
    with tq.use_backend(make_backend(backend_name)):
        with pytest.raises(tq.optimize.OptimizationInterrupted, match=type(error).__name__) as raised:
            tq.optimize.minimize(interrupted, x0, method=method, maxiter=50, progress=False, jit=False)
        result = raised.value.result
        assert raised.value.__cause__ is error
        assert result.status == "interrupted" and not result.converged and "interrupted" in result.message
        evaluated = len(result.history_fun)  # QNG and Newton also call the objective for metrics, Hessians
        assert len(result.history_x) == evaluated and (evaluated == 5 or method in ("qng", "newton"))
        assert evaluated >= 2
        best = int(np.argmin(result.history_fun))
        assert result.fun == min(result.history_fun) and np.array_equal(result.x, result.history_x[best])
        assert float(energy(result.x)) == pytest.approx(result.fun, abs=1e-12)
        resumed = tq.optimize.minimize(energy, result.x, method=method, maxiter=3, progress=False)
        assert resumed.history_fun[0] == pytest.approx(result.fun, abs=1e-12)


def test_an_error_before_any_evaluation_is_raised_as_it_is():
    with tq.use_backend("numpy"):
        with pytest.raises(ZeroDivisionError):
            tq.optimize.minimize(lambda p: 1 / 0, np.zeros(2), progress=False)


@pytest.mark.parametrize("method", ["adam", "L-BFGS-B", "qng"])
def test_the_callback_sees_every_iteration_and_may_stop_the_run(method):
    _, energy, size = tfim_energy(3, 1)
    seen = []

    def callback(result):
        seen.append((result.nit, result.fun, len(result.history_fun)))
        return result.nit == 3

    with tq.use_backend("numpy"):
        result = tq.optimize.minimize(energy, np.full(size, 0.2), method=method, maxiter=50, tol=0,
                                      progress=False, callback=callback)
        with pytest.raises(TypeError, match="callback"):
            tq.optimize.minimize(energy, np.full(size, 0.2), callback=3)
    assert [nit for nit, _, _ in seen] == [1, 2, 3]
    assert result.status == "stopped" and result.nit == 3 and "callback" in result.message
    assert all(fun == min(result.history_fun[:count]) for _, fun, count in seen)


def test_statuses_of_finished_runs():
    _, energy, size = tfim_energy(2, 1)
    with tq.use_backend("numpy"):
        assert tq.optimize.minimize(energy, np.full(size, 0.1), method="adam", maxiter=3,
                                    progress=False).status == "maxiter"
        assert tq.optimize.minimize(energy, np.full(size, 0.1), progress=False).status == "converged"


def test_progress_bar_can_be_switched_off(capsys):
    _, energy, size = tfim_energy(2, 1)
    with tq.use_backend("numpy"):
        tq.optimize.minimize(energy, np.zeros(size) + 0.1, method="adam", maxiter=60, progress=False)
    assert "adam" not in capsys.readouterr().err


def test_batched_circuit_objectives_equal_a_loop():
    _, energy, size = tfim_energy()
    params = np.random.default_rng(1).uniform(-np.pi, np.pi, (5, size))
    with tq.use_backend("pytorch") as T:
        values, grads = tq.vectorize_or_fallback(tq.value_and_grad(energy), policy="force")(T.asarray(params))
    with tq.use_backend("numpy"):
        loop = [tq.value_and_grad(energy)(row) for row in params]
        looped = tq.vectorize_or_fallback(tq.value_and_grad(energy), policy="off")(params)
    np.testing.assert_allclose(values.numpy(), [float(v) for v, _ in loop], atol=1e-12)
    np.testing.assert_allclose(grads.numpy(), np.stack([g for _, g in loop]), atol=1e-10)
    np.testing.assert_allclose(looped[1], grads.numpy(), atol=1e-10)


def test_jax_vmap_of_gradients_equals_the_numpy_loop():
    """Batched energies and gradients under jax.jit(jax.vmap(...)) against exact NumPy gradients."""
    _, energy, size = tfim_energy()
    params = np.random.default_rng(2).uniform(-np.pi, np.pi, (4, size))
    with tq.use_backend(make_backend("jax")) as J:
        batched = J.jit(tq.vectorize_or_fallback(tq.value_and_grad(energy), policy="force"))
        values, grads = batched(J.asarray(params))
    with tq.use_backend("numpy"):
        loop = [tq.value_and_grad(energy)(row) for row in params]
    np.testing.assert_allclose(np.asarray(values), [float(v) for v, _ in loop], atol=1e-12)
    np.testing.assert_allclose(np.asarray(grads), np.stack([g for _, g in loop]), atol=1e-10)


def test_constants_first_made_inside_a_jax_trace_do_not_leak_into_later_traces():
    """Gate and operator constants are cached per backend; made for the first time inside
    jax.jit(value_and_grad), they must still be concrete arrays for the next compiled function."""
    _, energy, size = tfim_energy(2, 1)
    x = np.zeros(size) + 0.1
    with tq.use_backend(make_backend("jax")) as J:
        value, _ = J.jit(tq.value_and_grad(energy))(J.asarray(x))
        again = J.jit(energy)(J.asarray(x))
    with tq.use_backend("numpy"):
        expected = float(energy(x))
    assert float(value) == pytest.approx(expected, abs=1e-12)
    assert float(again) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("method", ["adam", "sgd"])
def test_first_order_trajectories_agree_on_every_backend(method):
    """One update rule in backend arrays: compiled whole on JAX, eager on NumPy, the cuPyNumeric
    logic and PyTorch; the iterates agree, and PyTorch's equal torch.optim's."""
    _, energy, size = tfim_energy()
    x0 = np.random.default_rng(4).uniform(-0.5, 0.5, size)
    runs = {}
    for name in ("numpy", "cupynumeric-logic", "pytorch", "jax"):
        with tq.use_backend(make_backend(name)):
            runs[name] = tq.optimize.minimize(energy, x0, method=method, maxiter=40, tol=0.0,
                                              learning_rate=0.05, progress=False).history_fun
    with tq.use_backend(make_backend("pytorch")) as T:  # torch.optim's own loop, the reference
        torch = T.torch
        params = torch.tensor(x0, dtype=torch.float64)
        optimizer = (torch.optim.Adam if method == "adam" else torch.optim.SGD)([params], lr=0.05)
        evaluate = tq.value_and_grad(energy)
        runs["torch.optim"] = []
        for _ in range(40):
            value, gradient = evaluate(params)
            params.grad = gradient.detach().clone()
            optimizer.step()
            runs["torch.optim"].append(float(value))
    for name, history in runs.items():
        np.testing.assert_allclose(history, runs["numpy"], atol=1e-10, err_msg=name)


def test_minimize_on_jax_traces_the_objective_once_across_runs():
    """Under jit the objective's Python body runs only while tracing: once for the first run
    (not once per step), and not again for a second run of the same objective."""
    _, energy, size = tfim_energy(2, 1)
    traced = []

    def counted(params):
        traced.append(1)
        return energy(params)

    with tq.use_backend(make_backend("jax")):
        run = lambda: tq.optimize.minimize(counted, np.zeros(size) + 0.1, method="adam",  # noqa: E731
                                           maxiter=10, progress=False)
        first = run()
        after_first = len(traced)
        second = run()
    assert after_first == 1 and len(traced) == 1
    assert first.history_fun == second.history_fun


def test_an_objective_jax_cannot_trace_runs_uncompiled_with_one_warning():
    """COBYLA evaluates the objective only; one that reads a value on the host runs eagerly on
    JAX but cannot be compiled: it runs uncompiled, with one warning, to the same iterates."""
    _, energy, size = tfim_energy(2, 1)

    def host_energy(params):  # float() of a traced value: fine eagerly, impossible under jit
        return energy(params) + 0.0 * float(params[0])

    with tq.use_backend(make_backend("jax")):
        with pytest.warns(tq.optimize.ObjectiveNotCompiledWarning, match="uncompiled") as caught:
            result = tq.optimize.minimize(host_energy, np.zeros(size) + 0.1, method="COBYLA",
                                          maxiter=30, progress=False)
        compiled = tq.optimize.minimize(energy, np.zeros(size) + 0.1, method="COBYLA", maxiter=30,
                                        progress=False)
    assert len(caught) == 1
    np.testing.assert_allclose(result.history_fun, compiled.history_fun, atol=1e-12)


def one_qubit_ansatz(params):
    return tq.Circuit(1).ry(0, params[0])


#: (options of minimize, the exception, a regex of its message): each bad on every backend
BAD_OPTIONS = [
    (dict(method="adam", learning_rate=-1), ValueError, r"learning_rate=-1 must be a positive, finite"),
    (dict(method="sgd", learning_rate=0), ValueError, r"learning_rate=0 must be a positive, finite number"),
    (dict(method="adam", learning_rate=float("nan")), ValueError, r"learning_rate=nan must be a positive"),
    (dict(method="sgd", learning_rate=float("inf")), ValueError, r"learning_rate=inf must be a positive"),
    (dict(method="qng", learning_rate=-0.1, circuit=one_qubit_ansatz), ValueError, r"learning_rate=-0.1"),
    (dict(method="L-BFGS-B", learning_rate=-1), ValueError, r"learning_rate=-1 must be a positive"),
    (dict(method="adam", learning_rate="0.1"), TypeError, r"learning_rate='0.1' must be a real number"),
    (dict(method="adam", learning_rate=True), TypeError, r"learning_rate=True must be a real number"),
    (dict(method="adam", learning_rate=None), TypeError, r"learning_rate=None must be a real number"),
    (dict(method="adam", tol=-1), ValueError, r"tol=-1 must be a non-negative, finite number"),
    (dict(method="adam", tol=float("nan")), ValueError, r"tol=nan must be a non-negative, finite number"),
    (dict(tol=float("inf")), ValueError, r"tol=inf must be a non-negative, finite number"),
    (dict(tol="x"), TypeError, r"tol='x' must be a real number"),
    (dict(tol=None), TypeError, r"tol=None must be a real number"),
    (dict(maxiter=0), ValueError, r"maxiter=0 must be a positive int"),
    (dict(maxiter=2.0), TypeError, r"maxiter=2.0 must be a positive int"),
    (dict(maxiter=True), TypeError, r"maxiter=True must be a positive int"),
    (dict(method="qng", lam=0.0, circuit=one_qubit_ansatz), ValueError, r"lam=0.0 must be a positive"),
    (dict(method="qng", lam=float("inf"), circuit=one_qubit_ansatz), ValueError, r"lam=inf must be a"),
    (dict(method="adam", lam=-1.0), ValueError, r"lam=-1.0 must be a positive, finite number"),
    (dict(method="qng", lam="x", circuit=one_qubit_ansatz), TypeError, r"lam='x' must be a real number"),
    (dict(method="qng", approximation="full", circuit=one_qubit_ansatz), ValueError,
     r"approximation='full' must be one of"),
    (dict(method="adam", approximation="diag"), ValueError, r"approximation='diag' is an option of method="),
    (dict(method="qng", circuit=3), TypeError, r"circuit=3 must be a function of the parameters"),
    (dict(method="adam", circuit=one_qubit_ansatz), ValueError, r"circuit=.* is an option of method='qng'"),
    (dict(options=3), TypeError, r"options=3 must be a dict of scipy.optimize.minimize's options"),
    (dict(method="adam", options={"disp": True}), ValueError,
     r"options=\{'disp': True\} are scipy.optimize.minimize's options; method='adam' takes none"),
    (dict(gradient_method="magic"), ValueError, r"gradient_method='magic' must be one of"),
    (dict(method="COBYLA", gradient_method="adjoint"), ValueError,
     r"gradient_method='adjoint' is unused by method='COBYLA'"),
    (dict(progress="no"), TypeError, r"progress='no' must be True or False; got str"),
    (dict(jit="yes"), TypeError, r"jit='yes' must be True or False; got str"),
    (dict(callback=3), TypeError, r"callback=3 must be callable"),
    (dict(method="magic"), ValueError, r"method='magic' must be one of"),
    (dict(x0=[float("nan"), 0.1]), ValueError, r"x0 must be finite; it holds nan or inf at index \[0\]"),
    (dict(x0=[0.1, float("inf")]), ValueError, r"x0 must be finite; it holds nan or inf at index \[1\]"),
    (dict(x0=[]), ValueError, r"x0 is empty: minimize needs at least one parameter"),
    (dict(x0=[1j]), TypeError, r"x0 must be an array of real numbers \(the initial parameters\); got c"),
    (dict(x0=["a"]), TypeError, r"x0 must be an array of real numbers"),
    (dict(objective=3), TypeError, r"objective=3 must be callable"),
]


def refusal(backend_name, options):
    """What minimize raises on ``backend_name`` with ``options`` (the objective never called)."""
    options, calls = dict(options), []

    def energy(params):
        calls.append(1)
        return one_qubit_ansatz(params).expectation_ps(z=[0])

    objective, x0 = options.pop("objective", energy), options.pop("x0", [0.3])
    options = {"maxiter": 3, "progress": False, **options}
    with tq.use_backend(make_backend(backend_name)):
        with pytest.raises((ValueError, TypeError)) as raised:
            tq.optimize.minimize(objective, x0, **options)
    assert not calls, backend_name
    return type(raised.value), str(raised.value)


@pytest.mark.parametrize("options, error, message", BAD_OPTIONS,
                         ids=[f"{i:02d}-{'-'.join(option)}" for i, (option, _, _) in enumerate(BAD_OPTIONS)])
def test_every_option_is_checked_up_front_the_same_on_every_backend(options, error, message):
    """The same exception with the same message on NumPy, the cuPyNumeric logic, PyTorch and
    JAX, before the objective is evaluated (learning_rate=-1 ran on NumPy, raised on PyTorch)."""
    refusals = {name: refusal(name, options) for name in ("numpy", "cupynumeric-logic", "pytorch", "jax")}
    kind, text = refusals["numpy"]
    assert kind is error and re.search(message, text), text
    assert all(found == refusals["numpy"] for found in refusals.values()), refusals


@pytest.mark.parametrize("backend_name, gradient_method", [
    ("numpy", "autograd"), ("pytorch", "finite-difference"), ("jax", "finite-difference")])
def test_a_gradient_method_the_backend_lacks_is_refused_up_front(backend_name, gradient_method):
    kind, text = refusal(backend_name, {"gradient_method": gradient_method})
    assert kind is ValueError and text.startswith(f"gradient_method={gradient_method!r} does not run on")


def test_the_options_a_method_takes_still_run():
    """Options at the edges of what is accepted: tol=0, numpy numbers, an x0 of ints."""
    energy = lambda p: one_qubit_ansatz(p).expectation_ps(z=[0])  # noqa: E731
    with tq.use_backend("numpy"):
        for method in ("adam", "sgd", "qng", "newton", "L-BFGS-B", "Nelder-Mead"):
            result = tq.optimize.minimize(energy, [1], method=method, maxiter=np.int64(2), tol=0,
                                          learning_rate=np.float32(0.1), lam=np.float64(1e-3),
                                          progress=np.bool_(False), jit=None, options=None)
            assert result.history_fun and np.isfinite(result.fun), method


def test_templates_check_their_parameter_counts():
    with pytest.raises(ValueError, match="needs 6 parameters"):
        tq.templates.hardware_efficient(3, np.zeros(5), 1)
    with pytest.raises(ValueError, match="same length"):
        nx = pytest.importorskip("networkx")
        tq.templates.qaoa(nx.cycle_graph(3), [0.1], [0.1, 0.2])


def test_example_runner_lists_and_runs():
    listing = subprocess.run([sys.executable, "-m", "tyxonq.examples", "list"], capture_output=True,
                             text=True, timeout=120)
    assert listing.returncode == 0 and "vqe_tfim" in listing.stdout
    run = subprocess.run([sys.executable, "-m", "tyxonq.examples", "run", "gradient_methods", "--quick"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "parameter-shift" in run.stdout
    unknown = subprocess.run([sys.executable, "-m", "tyxonq.examples", "run", "nope"],
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "vqe_tfim" in unknown.stderr
