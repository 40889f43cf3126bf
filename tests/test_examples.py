"""Every script in examples-ng/ runs in its --quick mode and exits 0."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[1] / "examples-ng").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_quick(script):
    result = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
