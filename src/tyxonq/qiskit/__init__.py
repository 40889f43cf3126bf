"""Qiskit on tyxonq: the V2 primitives and a ``BackendV2``.

Change one import and a Qiskit program runs on tyxonq::

    from tyxonq.qiskit import EstimatorV2      # was: from qiskit.primitives import StatevectorEstimator
    from tyxonq.qiskit import SamplerV2        # was: from qiskit.primitives import StatevectorSampler
    from tyxonq.qiskit import Backend          # for transpile(qc, backend), BackendEstimatorV2, ...

Needs Qiskit (``pip install "tyxonq[qiskit]"``); ``import tyxonq`` does not import this package.
"""

from __future__ import annotations

from .circuits import require_qiskit

require_qiskit()

from .backend import Backend  # noqa: E402 - after the check that says how to install Qiskit
from .estimator import EstimatorV2  # noqa: E402
from .sampler import SamplerV2  # noqa: E402

__all__ = ["Backend", "EstimatorV2", "SamplerV2"]
