"""Sharded-state rows: a random circuit's energy (a 50-term Pauli sum) and its exact gradient with
the state vector sharded across 1, 2 and 4 ranks of each engine's launcher (``mpirun`` with NumPy,
``torchrun`` with PyTorch, JAX processes with JAX; one thread per rank, 4 ranks oversubscribed on
this machine's cores), each rank's memory limit below the whole state; one process of Aer
(EstimatorV2, statevector) and qulacs (its adjoint ``backprop``) as the reference. Every result is
checked against the 1-rank one (and qulacs's) before its time counts. Columns: seconds of one call
(no warm-up: each run is a fresh launch), the largest peak memory of a rank (resident set,
including the interpreter and the libraries) after the energy and after the gradient too, and the
bytes each rank sends (the rehearsal's count).

Run:  python benchmarks/sharded_rows.py [--qubits 26] [--depth 20] [--engines mpi torch jax]
      [--ranks 1 2 4] -> benchmarks/results/sharded.json and .txt
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import distributed_rows
import numpy as np
from report import machine_info, seconds

HERE = pathlib.Path(__file__).parent
BACKENDS = {"mpi": "numpy", "torch": "pytorch", "jax": "jax"}
TOLERANCE = 1e-10


def launch(command_tail: list[str], engine: str | None, ranks: int, timeout: float) -> dict:
    """The worker on ``ranks`` ranks of ``engine``'s launcher (one rank of NumPy or PyTorch: a
    plain process, the state whole; ``engine=None``: ``command_tail`` as it is, a peer)."""
    if engine is None:
        mode, *arguments = command_tail
    else:
        mode, arguments = ("none" if ranks == 1 and engine != "jax" else engine), command_tail[1:]
    return distributed_rows.launch(mode, ranks, 1, arguments, timeout, "sharded_worker.py")


def deviation(record: dict, reference: dict) -> float:
    """The largest relative difference of the energy and the gradient's checks."""
    both = "gradient sum" in record and "gradient sum" in reference
    found = [record["energy"]] + ([record["gradient sum"]] + record["gradient head"] if both else [])
    expected = [reference["energy"]] + ([reference["gradient sum"]] + reference["gradient head"]
                                        if len(found) > 1 else [])
    return float(np.max(np.abs(np.subtract(found, expected))) / max(np.max(np.abs(expected)), 1e-300))


def peaks(record: dict) -> str:
    """The largest peak over the ranks: after the energy / after the gradient too (MiB)."""
    energy = record.get("energy_peak_bytes")
    whole = f"{max(record['peak_bytes']) / 2 ** 20:.0f}"
    return f"{max(energy) / 2 ** 20:.0f} / {whole}" if energy else whole


def table(records: list[dict], qubits: int, depth: int) -> str:
    state = 2 ** qubits * 16 / 2 ** 30
    lines = [f"{qubits}-qubit depth-{depth} random circuit, {state:.3g} GiB state: energy "
             "of a 50-term Pauli sum and its exact gradient",
             f"{'engine':<16}{'ranks':>6}{'energy':>11}{'gradient':>11}{'speed-up':>10}  "
             f"{'peak MiB (energy / all)':<26}{'sent per rank (energy / gradient)':<36}check"]
    for r in records:
        start = f"{r['engine']:<16}{r.get('ranks', 1):>6}"
        if r["status"] not in ("ok", "WRONG"):
            lines.append(f"{start}  {r['status']}: {r.get('message', '')}")
            continue
        gradient = seconds(r["gradient_s"]) if "gradient_s" in r else "-"
        speedup = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
        sent = r.get("sent")
        sent_text = f"{sent['energy'] / 2 ** 20:.0f} / {sent['gradient'] / 2 ** 20:.0f} MiB" if sent else "-"
        lines.append(f"{start}{seconds(r['energy_s']):>11}{gradient:>11}{speedup:>10}  "
                     f"{peaks(r):<26}{sent_text:<36}{r['status']} "
                     f"({r.get('check', 'reference')})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qubits", type=int, default=26)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--engines", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    parser.add_argument("--ranks", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--peers", nargs="*", default=["qulacs", "aer"])
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--output", default=str(HERE / "results" / "sharded.json"))
    args = parser.parse_args(argv)
    size = [str(args.qubits), str(args.depth)]
    records, failed = [], False
    for peer in args.peers:
        record = launch(["--peer", peer, *size], None, 1, args.timeout)
        records.append({**record, "engine": peer})
        print(table(records[-1:], args.qubits, args.depth).splitlines()[-1], flush=True)
    reference = next((r for r in records if r["engine"] == "qulacs" and r["status"] == "ok"), None)
    for engine in args.engines:
        baseline = None
        for ranks in args.ranks:
            record = launch([engine, BACKENDS[engine], *size], engine, ranks, args.timeout)
            record.update(engine=f"{engine} ({BACKENDS[engine]})", ranks=ranks)
            if record["status"] == "ok":
                checks = [("1 rank", baseline)] if baseline is not None else []
                checks += [("qulacs", reference)] if reference is not None else []
                texts = []
                for name, against in checks:
                    found = deviation(record, against)
                    texts.append(f"{found:.0e} from {name}")
                    if found > TOLERANCE:
                        record["status"], failed = "WRONG", True
                record["check"] = ", ".join(texts) or "first"
                if baseline is not None and baseline["status"] == "ok":
                    record["speedup"] = (baseline["energy_s"] + baseline["gradient_s"]) / \
                        (record["energy_s"] + record["gradient_s"])
            else:
                failed = True
            baseline = record if baseline is None else baseline
            records.append(record)
            print(table(records[-1:], args.qubits, args.depth).splitlines()[-1], flush=True)
    text = table(records, args.qubits, args.depth)
    print(text)
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"machine": machine_info(1, []), "qubits": args.qubits, "depth": args.depth,
                                  "records": records}, indent=1))
    output.with_suffix(".txt").write_text(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
