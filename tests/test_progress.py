"""Progress bars (tyxonq.numerics.progress): off in non-interactive runs unless asked, on when
asked (globally or per call, the call first), shown past the threshold in interactive sessions,
on rank 0 only, silent without tqdm (warning once when asked for), flags checked."""

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
