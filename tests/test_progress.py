"""Progress bars (tyxonq.numerics.progress): off in non-interactive runs unless asked, on when
asked (globally or per call, the call first), shown past the threshold in interactive sessions,
on rank 0 only, silent without tqdm (warning once when asked for), flags checked; and every
long computation that reports through them (its bar counts all of its steps, and the results
are those computed without a bar)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.numerics import progress as progress_module


@pytest.fixture(autouse=True)
def automatic_progress():
    previous = tq.set_progress(None)
    yield
    tq.set_progress(previous)


class RecordedBar:
    """tqdm's constructor and the calls a computation makes, recorded."""

    made: list[RecordedBar] = []

    def __init__(self, total=None, desc="", unit="it", delay=0.0, **_):
        self.total, self.desc, self.unit, self.delay = total, desc, unit, delay
        self.count, self.postfix, self.closed = 0, {}, False
        RecordedBar.made.append(self)

    def update(self, steps):
        self.count += steps

    def set_postfix(self, postfix, refresh=True):
        self.postfix = dict(postfix)

    def close(self):
        self.closed = True

    def refresh(self):
        pass


@pytest.fixture
def bars(monkeypatch):
    """The bars drawn meanwhile (tqdm replaced by :class:`RecordedBar`)."""
    module = type(sys)("tqdm.auto")
    module.tqdm = RecordedBar
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    RecordedBar.made = []
    return RecordedBar.made


def quadratic(x):
    return tq.get_backend().sum((x - 0.3) ** 2)


def noisy_circuit():
    return tq.Circuit(3).h(0).cx(0, 1).cx(1, 2).depolarizing(1, p=0.1).amplitude_damping(2, gamma=0.2)


def run_minimize(**options):
    with tq.use_backend("numpy"):
        return tq.optimize.minimize(quadratic, np.zeros(2), method="adam", maxiter=60, tol=0.0, **options)


def test_a_non_interactive_run_draws_nothing_by_default(capsys):
    run_minimize()
    tq.noise.trajectory_expectation(noisy_circuit(), tq.PauliSum([(1.0, "ZZI")]), 40, seed=2)
    assert capsys.readouterr().err == ""


def test_a_call_asks_for_its_bar(capsys):
    run_minimize(progress=True)  # the real tqdm, on standard error
    assert "adam:" in capsys.readouterr().err


def test_a_bar_counts_every_step_with_the_energy(bars):
    result = run_minimize(progress=True)
    (bar,) = bars
    assert (bar.total, bar.desc, bar.unit, bar.delay) == (60, "adam", "iteration", 0.0)
    assert bar.count == result.nit == 60 and bar.closed
    assert float(bar.postfix["energy"]) == pytest.approx(result.history_fun[-1], rel=1e-5)


def test_the_global_switch_and_the_call_that_overrides_it(bars):
    tq.set_progress(True)
    circuit, observable = noisy_circuit(), tq.PauliSum([(1.0, "ZZI")])
    shown = tq.noise.trajectory_expectation(circuit, observable, 40, seed=2)
    (bar,) = bars
    assert (bar.total, bar.desc, bar.count, bar.closed) == (40, "noisy trajectories", 40, True)
    hidden = tq.noise.trajectory_expectation(circuit, observable, 40, seed=2, progress=False)
    assert len(bars) == 1
    assert shown == hidden  # drawing a bar changes nothing computed
    tq.set_progress(False)
    run_minimize()
    assert len(bars) == 1


def test_interactive_sessions_see_a_bar_past_the_threshold(bars, monkeypatch):
    monkeypatch.setattr(progress_module, "_interactive", lambda: True)
    run_minimize()
    (bar,) = bars
    assert bar.delay == progress_module.THRESHOLD_SECONDS == 1.0  # tqdm shows it only after that
    tq.set_progress(False)
    run_minimize()
    assert len(bars) == 1


def test_only_rank_0_draws(bars, monkeypatch):
    monkeypatch.setattr(progress_module, "_rank", lambda: 1)
    run_minimize(progress=True)
    assert bars == []


def test_without_tqdm_nothing_is_drawn_and_asking_warns_once(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    monkeypatch.setattr(progress_module, "_warned_missing", False)
    monkeypatch.setattr(progress_module, "_interactive", lambda: True)
    monkeypatch.setattr(progress_module, "THRESHOLD_SECONDS", 0.0)
    run_minimize()  # automatic: silent
    with pytest.warns(RuntimeWarning, match="pip install tqdm"):
        result = run_minimize(progress=True)
    assert capsys.readouterr().err == ""
    assert np.allclose(result.x, run_minimize(progress=False).x)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_flags_are_checked(bad):
    if bad is not None:
        with pytest.raises(TypeError, match="enabled"):
            tq.set_progress(bad)
    with pytest.raises(TypeError, match="progress"):
        tq.noise.trajectory_expectation(noisy_circuit(), tq.PauliSum([(1.0, "ZZI")]), 4, progress=bad or "on")


def repetition_memory(rounds=2, data=3):
    """A small repetition-code memory: measurements, conditions and resets in every round."""
    c = tq.Circuit(2 * data)
    for _ in range(rounds):
        for q in range(data):
            c.rx(q, theta=0.3)
        for i in range(data):
            c.cx(i, data + i).cx((i + 1) % data, data + i)
        bits = c.measure(*range(data, 2 * data))
        for i in range(data):
            c.cond([bits[i - 1], bits[i]], value=3).x(i)
        for a in range(data, 2 * data):
            c.reset(a)
    return c


def test_dynamic_sampling_counts_its_branch_steps(bars):
    c = repetition_memory()
    shown = c.sample(500, seed=4, progress=True)
    (bar,) = bars
    assert bar.desc == "sampling: branch steps" and bar.closed
    assert bar.count == bar.total >= len([op for op in c.operations if op.is_dynamic])
    assert int(bar.postfix["branches"]) >= 1
    assert c.sample(500, seed=4, progress=False) == shown and len(bars) == 1


def test_mps_branches_count_the_measurements(bars):
    c = tq.MPSCircuit(3).h(0).cx(0, 1)
    c.cond(c.measure(1)).x(2)
    _ = c.reset(0)
    with tq.use_backend("numpy"):
        values = c.sample(200, seed=1, progress=True)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.count) == ("MPS branches: measurements", 4, 4)
    assert int(bar.postfix["branches"]) == 2 and sum(values.values()) == 200


def test_wide_sampling_counts_its_groups_of_qubits(bars):
    from tyxonq.circuit.wide_sampling import GROUP_QUBITS

    c = tq.templates.brickwork(30, [0.2] * 60, 2)
    shown = c.sample(50, seed=3, method="contraction", progress=True)
    (bar,) = bars
    assert bar.desc == "sampling: qubit groups" and bar.count == bar.total == -(-30 // GROUP_QUBITS)
    assert int(bar.postfix["qubits"]) == 30
    assert c.sample(50, seed=3, method="contraction") == shown


def test_evolve_reports_the_time_reached(bars):
    h = tq.hamiltonians.heisenberg(5)
    start = tq.Circuit(5).x(0).x(2)
    times = [0.25, 0.5, 1.0]
    shown = tq.evolve(h, start, times, observables=h, progress=True)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.count, bar.unit) == ("evolve", 3, 3, "time")
    assert float(bar.postfix["t"]) == 1.0
    assert np.allclose(shown, tq.evolve(h, start, times, observables=h))


def test_tebd_reports_steps_bond_and_discarded_weight(bars):
    h = tq.hamiltonians.heisenberg(8)
    start = tq.MPSCircuit(8).x(0).x(2).x(4).x(6)
    shown = tq.evolve(h, start, [0.5, 1.0], method="tebd", dt=0.1, max_bond=4, observables=h, progress=True)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.count) == ("TEBD", 10, 10)
    assert int(bar.postfix["bond"]) == 4  # truncated to max_bond
    assert float(bar.postfix["discarded"]) > 0
    again = tq.evolve(h, start, [0.5, 1.0], method="tebd", dt=0.1, max_bond=4, observables=h)
    assert np.allclose(shown, again)


def test_sliced_contractions_count_their_slices(bars):
    pytest.importorskip("cotengra")
    from test_slicing import budget_below, scrambler

    n = 12
    operations, angles = scrambler(n, 8)

    def energy(t):
        c = tq.Circuit(n)
        for k, (_, qubits, _) in enumerate(op for op in operations if op[0] == "ry"):
            c.ry(qubits[0], theta=t[k])
        for gate, qubits, _ in operations:
            if gate == "cx":
                c.cx(*qubits)
        return c.expectation_ps(z=[3])

    with tq.use_backend("numpy") as K:
        x = K.asarray(angles[: 8 * n])
        value, gradient = tq.value_and_grad(energy)(x)
        with tq.use_memory_limit(budget_below(tq.rehearse(energy, x), 2)):
            report = tq.rehearse(energy, x)
            tq.set_progress(True)
            sliced_value = energy(x)
            sliced_value_too, sliced_gradient = tq.value_and_grad(energy)(x)
    assert "sliced" in report.routes and report.slices >= 4
    forward = [bar for bar in bars if bar.desc == "contracting slices"]
    backward = [bar for bar in bars if bar.desc == "gradient: slices"]
    assert forward and all(bar.count == bar.total == report.slices for bar in forward)
    assert backward and all(bar.count == bar.total == report.slices for bar in backward)
    assert abs(float(sliced_value) - float(value)) < 1e-10
    assert abs(float(sliced_value_too) - float(value)) < 1e-10
    np.testing.assert_allclose(sliced_gradient, gradient, atol=1e-10)


def test_a_path_search_counts_its_trials_with_the_best_cost(bars):
    pytest.importorskip("cotengra")
    from tyxonq.circuit.contraction.paths import cotengra_path

    inputs = [set("ab"), set("bc"), set("cd"), set("da"), set("ac")]
    tq.set_progress(True)
    path = cotengra_path(inputs, set(), {leg: 2 for leg in "abcd"}, repeats=8)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.count, bar.unit) == ("contraction path search", 8, 8, "trial")
    assert "best_log10_cost" in bar.postfix and len(path) == len(inputs) - 1


def test_progress_is_a_keyword_of_the_long_calls():
    import inspect

    for call in (tq.Circuit.sample, tq.MPSCircuit.sample, tq.DMCircuit.sample, tq.StabilizerCircuit.sample,
                 tq.evolve, tq.noise.trajectory_expectation, tq.optimize.minimize):
        parameter = inspect.signature(call).parameters["progress"]
        assert parameter.default is None, call
    with pytest.raises(TypeError, match="progress"):
        tq.Circuit(1).sample(3, progress="yes")


def test_a_sharded_state_counts_its_blocks_swaps_and_steps_back(bars):
    from tyxonq.circuit.statevector.shard_plan import shard_plan
    from tyxonq.circuit.statevector.sharded import sharded_sweep
    from tyxonq.circuit.statevector.sharded_adjoint import sharded_adjoint
    from tyxonq.circuit.statevector.sweep import sweep_program
    from tyxonq.numerics.distributed import SingleProcess

    K = tq.get_backend("numpy")
    c = tq.templates.brickwork(6, [0.4] * 18, 3)
    steps = len(shard_plan(sweep_program(6, c.operations, K.capabilities.max_ndim), 0).steps)
    tq.set_progress(True)
    state = sharded_sweep(K, SingleProcess(), 6, c.operations)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.count) == ("sharded state: blocks and swaps", steps, steps)
    assert int(bar.postfix["swaps"]) == 0  # one rank: no global qubit
    angled = [i for i, op in enumerate(c.operations) if op.params]
    wanted = {i: [(slot, 0)] for slot, i in enumerate(angled)}
    value, _, _ = sharded_adjoint(K, SingleProcess(), c.operations, 6, None, tq.PauliSum([(1.0, "ZIIIII")]),
                                  wanted, len(wanted))
    back = [bar for bar in bars if bar.desc == "sharded gradient: steps back"]
    assert len(back) == 1 and 0 < back[0].count <= back[0].total == steps
    assert abs(value - float(c.expectation_ps(z=[0]))) < 1e-12
    assert np.allclose(K.to_numpy(state.gather()), K.to_numpy(c.state()))
