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
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "tyxonq"

KERNELS = {
    "zen-1-thread": {"OPENBLAS_CORETYPE": "Zen", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                     "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    "prescott-2-threads": {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "2",
                           "OMP_NUM_THREADS": "2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
}


@pytest.mark.slow
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_doctests_pass_under_other_blas_kernels(kernel):
    environment = {**os.environ, **KERNELS[kernel], "TYXONQ_BACKEND": "numpy"}
    environment.pop("TYXONQ_PERSISTENT_CACHE", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                          str(SOURCE)], env=environment, capture_output=True, text=True, timeout=600,
                         cwd=SOURCE.parents[1])
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
