"""Where a tyxonq call on a CUDA device spends its time: wall time per call against the time the GPU
is busy, and how many kernels and PyTorch operations one call launches (a call whose wall time is
many times its GPU time is bound by launches and Python, not by the device).

Run on a machine with an NVIDIA GPU, from ``benchmarks/`` with ``PYTHONPATH=../src``::

    python cuda_profile.py statevector:16 statevector:22 energy_gradient:12
"""

from __future__ import annotations

import sys
import time

import torch
from specs import make_spec
from torch.profiler import ProfilerActivity, profile
from tyxonq_engine import build


def profile_row(workload: str, n: int, repeat: int = 5) -> str:
    device = "cuda" if torch.cuda.is_available() else "cpu"  # the CPU: a dry run of this script
    run, _ = build(make_spec(workload, n), f"pytorch:{device}")
    run()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    wall = (time.perf_counter() - start) / repeat
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
    events = prof.key_averages()
    gpu_us = sum(getattr(e, "self_device_time_total", 0) for e in events)
    kernels = sum(e.count for e in events if getattr(e.device_type, "name", "") == "CUDA")
    operations = sum(e.count for e in events if e.key.startswith("aten::"))
    syncs = sum(e.count for e in events if e.key in ("aten::_local_scalar_dense", "cudaDeviceSynchronize",
                                                      "cudaStreamSynchronize"))
    copies = sum(e.count for e in events if e.key in ("cudaMemcpyAsync", "Memcpy HtoD (Pageable -> Device)",
                                                       "Memcpy DtoH (Device -> Pageable)"))
    busiest = sorted((e for e in events if e.key.startswith("aten::")), key=lambda e: -e.count)[:6]
    return (f"{workload} n={n} ({device}): {wall * 1e3:.2f} ms per call, GPU busy {gpu_us / 1e3:.2f} ms; "
            f"{kernels} kernels, {operations} aten operations, {syncs} synchronisations, {copies} copies; "
            f"most frequent: {', '.join(f'{e.key} x{e.count}' for e in busiest)}")


if __name__ == "__main__":
    for row in sys.argv[1:]:
        workload, n = row.split(":")
        print(profile_row(workload, int(n)), flush=True)
