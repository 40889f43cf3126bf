"""Every script in examples-ng/ runs in its --quick mode and exits 0.

The chosen scripts start together, two at a time (each a process of its own, mostly on one core;
the test process only waits for them), and each test reads its script's run."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[1] / "examples-ng").glob("*.py"))
AT_ONCE = 2


def run_quick(script: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), "--quick"], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(request):
    """The runs of the scripts this session's tests chose, started in their order."""
    chosen = [item.callspec.params["script"] for item in request.session.items
              if getattr(item, "module", None) is sys.modules[__name__] and hasattr(item, "callspec")]
    pool = ThreadPoolExecutor(max_workers=AT_ONCE)
    yield {script: pool.submit(run_quick, script) for script in chosen}
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_quick(script, runs):
    result = runs[script].result()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
