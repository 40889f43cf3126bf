"""Where small work on a CUDA device should leave it for the host twin: rows timed on PyTorch's CUDA
backend with ``host_twin_entries`` (the largest intermediate a contraction, or the state a gradient
node sweeps, may have to run on NumPy instead) set to each of several limits, each pair in a fresh
process. A limit of 0 keeps everything on the device (tyxonq before the CUDA host twin); the
limit where the rows stop getting faster is the one ``PyTorchBackend.host_twin_entries`` should
declare on CUDA.

Run on a machine with an NVIDIA GPU, from ``benchmarks/`` with ``PYTHONPATH=../src`` (elsewhere it
is a dry run on the CPU)::

    python host_twin_sweep.py --rows brickwork_local:50 energy_gradient:12 --limits 0 12 14 16 18
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

DEFAULT_ROWS = ("brickwork_local:50", "qaoa_energy_p2:100", "qaoa_gradient_p2:100", "energy_gradient:12",
                "energy_gradient:16", "tfim_brickwork_gradient:50")
DEFAULT_LIMITS = (0, 12, 14, 16, 18)  # 0: never; else log2 of the entries


def time_row(row: str, log2_limit: int, repeat: int) -> float:
    """The minimum over ``repeat`` calls (after a warm-up) of ``row`` with the limit in place."""
    import torch
    from floors import best
    from specs import make_spec
    from tyxonq_engine import build

    from tyxonq.numerics import PyTorchBackend

    limit = 0.0 if log2_limit == 0 else float(2 ** log2_limit)
    PyTorchBackend.host_twin_entries = lambda self: limit
    device = "cuda" if torch.cuda.is_available() else "cpu"
    workload, n = row.split(":")
    run, _ = build(make_spec(workload, int(n)), f"pytorch:{device}")
    return best(run, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=list(DEFAULT_ROWS), help="workload:qubits")
    parser.add_argument("--limits", nargs="+", type=int, default=list(DEFAULT_LIMITS),
                        help="log2 of host_twin_entries; 0 keeps everything on the device")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", help="JSON of every (row, limit, seconds)")
    parser.add_argument("--one", nargs=2, metavar=("ROW", "LIMIT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(time_row(args.one[0], int(args.one[1]), args.repeat)))
        return
    records = []
    print("row".ljust(28) + "".join(("device" if limit == 0 else f"2^{limit}").rjust(11)
                                     for limit in args.limits), flush=True)
    for row in args.rows:
        cells = []
        for limit in args.limits:
            done = subprocess.run([sys.executable, __file__, "--one", row, str(limit),
                                   "--repeat", str(args.repeat)], capture_output=True, text=True)
            seconds = json.loads(done.stdout.splitlines()[-1]) if done.returncode == 0 else None
            records.append({"row": row, "log2_limit": limit, "seconds": seconds,
                            "error": None if seconds is not None else done.stderr[-400:]})
            cells.append("failed" if seconds is None else f"{seconds * 1e3:.2f} ms")
        print(row.ljust(28) + "".join(cell.rjust(11) for cell in cells), flush=True)
    for record in records:
        if record["error"] is not None:
            print(f"{record['row']} at 2^{record['log2_limit']} failed: {record['error'].strip()[-300:]}")
    if args.output:
        with open(args.output, "w") as handle:
            json.dump(records, handle, indent=1)


if __name__ == "__main__":
    main()
