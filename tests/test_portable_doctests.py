"""The doctests pass whatever the CPU's BLAS kernels and thread counts: none may print a signed
zero or a last digit that rounding noise decides.

Each run below is another machine in miniature: OpenBLAS (NumPy's BLAS) picks its kernels by
``OPENBLAS_CORETYPE`` and PyTorch's MKL by ``MKL_ENABLE_INSTRUCTIONS``, and the sums they form
differ in their last bits (a Bloch-sphere metric's zero entry came out as -5e-19 under the Zen
kernels and printed as ``-0.0``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "tyxonq"

KERNELS = {
    "zen-1-thread": {"OPENBLAS_CORETYPE": "Zen", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                     "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    "prescott-2-threads": {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "2",
                           "OMP_NUM_THREADS": "2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
}


def run_doctests(kernel: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, **KERNELS[kernel], "TYXONQ_BACKEND": "numpy"}
    environment.pop("TYXONQ_PERSISTENT_CACHE", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                           str(SOURCE)], env=environment, capture_output=True, text=True, timeout=600,
                          cwd=SOURCE.parents[1])


@pytest.fixture(scope="module")
def runs(request):
    """The chosen kernels' runs, started together (two processes: the test process only waits)."""
    chosen = [item.callspec.params["kernel"] for item in request.session.items
              if getattr(item, "module", None) is sys.modules[__name__] and hasattr(item, "callspec")]
    pool = ThreadPoolExecutor(max_workers=2)
    yield {kernel: pool.submit(run_doctests, kernel) for kernel in chosen}
    pool.shutdown(cancel_futures=True)


@pytest.mark.slow
@pytest.mark.portability  # deselected from the main suite (half a minute); .ci/run runs it
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_doctests_pass_under_other_blas_kernels(kernel, runs):
    run = runs[kernel].result()
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
