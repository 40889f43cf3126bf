"""benchmarks/goals.py: issue 47's goals read from result files (synthetic results here)."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

GOALS_SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "goals.py"


@pytest.fixture(scope="module")
def goals():
    spec = importlib.util.spec_from_file_location("benchmark_goals", GOALS_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _suite(*rows):
    return {"results": [{"workload": w, "qubits": n, "engine": e, "status": "ok", "min_s": s}
                        for w, n, e, s in rows]}


def _write(directory: pathlib.Path, **files) -> pathlib.Path:
    for name, content in files.items():
        (directory / f"{name}.json").write_text(json.dumps(content))
    return directory


def test_each_goal_is_checked_against_its_limit(goals, tmp_path):
    results = _write(tmp_path, latest=_suite(
        ("row", 8, "tyxonq-numpy", 2.0), ("row", 8, "tyxonq-pytorch", 4.0), ("row", 8, "tyxonq-jax", 1.0),
        ("row", 8, "qulacs", 3.0), ("row", 8, "tc-jax", 1.5)),
        first_calls={"rows": [{"workload": "row", "qubits": 8, "engine": "tyxonq-numpy", "steady_s": 0.1,
                               "first_call_s": 0.7}]},
        compiled=[{"row": "z50", "n": 50, "backend": "numpy", "mode": "compiled", "best_s": 1.4},
                  {"row": "z50", "n": 50, "backend": "numpy", "mode": "contraction", "best_s": 1.0}])
    found = [*goals.steady_checks(results), *goals.first_call_checks(results),
             *goals.compiled_checks(results)]
    checks = {(c.goal, c.engine): c for c in found}
    assert checks["jax/numpy", "tyxonq-jax"].value == pytest.approx(0.5)
    assert checks["jax/peer", "tyxonq-jax"].value == pytest.approx(1.0 / 1.5)  # tc-jax is the fastest peer
    assert not checks["jax/peer", "tyxonq-jax"].met
    # the eager goal leaves the JIT peer out: qulacs is the fastest peer without one
    assert checks["eager/peer", "tyxonq-numpy"].value == pytest.approx(2.0 / 3.0)
    assert checks["eager/peer", "tyxonq-pytorch"].value == pytest.approx(4.0 / 3.0)
    assert checks["first call", "tyxonq-numpy"].value == pytest.approx(0.6)
    assert not checks["first call", "tyxonq-numpy"].met
    assert checks["compiled", "numpy"].met


def test_unexplained_misses_set_the_exit_status(goals, tmp_path, capsys):
    explained = _write(tmp_path, latest=_suite(("energy_gradient", 8, "tyxonq-numpy", 2.0),
                                               ("energy_gradient", 8, "qulacs", 1.0)))
    assert goals.main(["--results", str(explained), "--misses-only"]) == 0
    assert "missed: Python per gate block" in capsys.readouterr().out
    unexplained = _write(tmp_path, latest=_suite(("another_row", 8, "tyxonq-numpy", 2.0),
                                                 ("another_row", 8, "qulacs", 1.0)))
    assert goals.main(["--results", str(unexplained)]) == 1
    assert "UNEXPLAINED" in capsys.readouterr().out


def test_failed_results_are_left_out(goals, tmp_path):
    suite = _suite(("row", 8, "tyxonq-numpy", 2.0))
    suite["results"].append({"workload": "row", "qubits": 8, "engine": "qulacs", "status": "error: wrong"})
    assert list(goals.steady_checks(_write(tmp_path, latest=suite))) == []


def test_quimbs_bare_contraction_is_a_peer_and_its_figures_replace_the_overhead_rows(goals, tmp_path):
    results = _write(tmp_path, overhead=[
        {"row": "z50", "n": 50, "engine": "tyxonq-numpy", "best_s": 0.004, "check": "ok"},
        {"row": "z50", "n": 50, "engine": "quimb", "best_s": 0.2, "check": "ok"}],
        quimb_bare=[{"row": "z50", "n": 50, "engine": "tyxonq-numpy", "best_s": 0.002, "check": "ok"},
                    {"row": "z50", "n": 50, "engine": "quimb-bare", "best_s": 0.0025, "check": "ok"},
                    {"row": "z50", "n": 50, "engine": "tyxonq-pytorch", "best_s": 0.001, "check": "WRONG"}])
    checks = {(c.goal, c.engine): c for c in goals.steady_checks(results)}
    assert checks["eager/peer", "tyxonq-numpy"].value == pytest.approx(0.002 / 0.0025)
    assert ("eager/peer", "tyxonq-pytorch") not in checks  # a wrong result is left out


def test_a_floor_may_name_one_size_of_a_row(goals):
    def check(row):
        return goals.Check("jax/numpy", row, "tyxonq-jax", 1.1, 1.0, "")

    assert "256 MiB" in goals.floor_of(check("statevector 24"))
    assert "0.96x" in goals.floor_of(check("statevector 22"))
    assert goals.floor_of(check("statevector 20")) is None
