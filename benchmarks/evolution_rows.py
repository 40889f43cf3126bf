"""Time evolution side by side: tyxonq against SciPy, quimb, tensorcircuit-ng, PennyLane and
Qiskit Aer, every result checked before it is timed.

    PYTHONPATH=src python benchmarks/evolution_rows.py [--quick] [--output benchmarks/results/evolution.json]

Rows (``--quick``: smaller sizes, nothing written):
(a) exact evolution of a 20-qubit Heisenberg chain from the Neel state to t = 5 at 50 output times
    (the states): tyxonq ``tq.evolve`` (restarted Krylov, NumPy and PyTorch), SciPy's
    ``expm_multiply`` on the sparse matrix, quimb's ``Evolution``, tensorcircuit-ng's
    ``krylov_evol`` (JAX, jit). Checked: every engine's states against SciPy's to 1e-8.
(b) a 100-site transverse-field Ising quench (g = 1) from |0...0> to t = 4 by TEBD, dt = 0.05,
    second order, bond cap 64 (reached: the middle bonds saturate by t = 4): tyxonq
    ``method="tebd"`` (NumPy, PyTorch), quimb's ``TEBD``, Aer's matrix-product-state method on a
    second-order Trotter circuit of the same H. The splittings
    differ (so do their errors, ~1e-3): each <Z_i> profile is checked against a converged
    reference (fourth order at dt / 2) within 2e-2, and its deviation is listed.
(c) a 16-qubit second-order Trotter circuit (20 steps) of H = Heisenberg + 0.5 sum X from the
    Neel state: the Ising energy sum Z_i Z_i+1 and its gradient in the time and the 61
    coefficients: tyxonq (NumPy adjoint, PyTorch autograd), PennyLane ``TrotterProduct`` on
    lightning.qubit (adjoint), Qiskit ``PauliEvolutionGate`` (``SuzukiTrotter``) on Aer (the
    gradient by central differences, 124 more evaluations). Checked: values to 1e-8, gradients
    to 1e-6.

Times: the minimum of ``--repeat`` runs after a warm-up (reported separately); a run longer
than a minute is timed once; each row runs in a fresh process. Every engine runs with glibc's
large allocations kept for reuse (``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` set
before start; the script re-executes itself with them unless ``--system-malloc``): a 16 MB
array is otherwise a fresh ``mmap`` whose pages fault in on every use, which taxes engines that
allocate temporaries (tyxonq's protocol has no in-place operations).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
#: row (b): the largest <Z_i> deviation accepted from the converged reference, about ten times a
#: second-order splitting's error at dt = 0.05 (measured at 10 sites against the exact state:
#: 3e-4 to 2e-3 depending on the splitting)
SPLITTING_TOLERANCE = 2e-2
sys.path.insert(0, str(HERE))

import evolution_peers as peers  # noqa: E402 - the peers' side, next to this script
from side_by_side import finish, table, timed  # noqa: E402

#: a run longer than this is timed once (its warm-up is its time, as the table notes)
LONG_RUN_S = 60.0


def neel_bits(n: int) -> list[int]:
    return [1 - q % 2 for q in range(n)]


def neel_vector(n: int) -> np.ndarray:
    psi = np.zeros(2 ** n, dtype=complex)
    psi[int("".join(map(str, neel_bits(n))), 2)] = 1.0
    return psi


def run_peer(records: list, row: str, engine: str, fn, repeat: int, note: str = ""):
    """Time a peer; a missing or failing peer becomes a status line, not a crash."""
    try:
        warm, best, result = timed(fn, repeat, LONG_RUN_S)
    except ImportError as error:
        records.append({"row": row, "engine": engine, "status": f"not installed ({error})"})
        return None
    except Exception as error:  # noqa: BLE001 - a peer's failure is reported, not fatal
        records.append({"row": row, "engine": engine, "status": f"failed: {error!r}"[:200]})
        return None
    record = {"row": row, "engine": engine, "warm_s": warm, "best_s": best}
    if warm > LONG_RUN_S and repeat:
        note = "; ".join(filter(None, [note, "one run (longer than a minute), warm-up included"]))
    if note:
        record["note"] = note
    records.append(record)
    return result


def check(records: list, row: str, engine: str, ok: bool, detail: str) -> None:
    for record in records:
        if record["row"] == row and record["engine"] == engine and "best_s" in record:
            record["check"] = "ok" if ok else f"WRONG {detail}"


def row_a(tq, records: list, quick: bool, repeat: int) -> None:
    n = 12 if quick else 20
    times = np.linspace(0.1, 5.0, 50)
    hamiltonian = tq.hamiltonians.heisenberg(n)
    sparse = hamiltonian.to_sparse().tocsr()
    psi0 = neel_vector(n)
    reference = run_peer(records, "a", "scipy-expm_multiply",
                         lambda: peers.scipy_expm_multiply(sparse, psi0, times), repeat)
    found = {}
    for backend in ("numpy", "pytorch"):
        def evolve(b=backend):
            with tq.use_backend(b):
                K = tq.get_backend()
                return np.asarray(K.to_numpy(tq.evolve(hamiltonian, K.asarray(psi0), times)))

        found[f"tyxonq-{backend}"] = run_peer(records, "a", f"tyxonq-{backend}", evolve, repeat)
    found["quimb-Evolution"] = run_peer(records, "a", "quimb-Evolution",
                                        lambda: peers.quimb_evolution(sparse, psi0, times), repeat)
    found["tc-ng-krylov_evol"] = run_peer(records, "a", "tc-ng-krylov_evol",
                                          lambda: peers.tensorcircuit_krylov(sparse, psi0, times), repeat)
    if reference is None:  # without SciPy's: tyxonq's expm_multiply scheme is the reference
        with tq.use_backend("numpy"):
            reference = np.asarray(tq.evolve(hamiltonian, psi0, times, method="expm"))
    else:
        found["scipy-expm_multiply"] = reference
    for engine, states in found.items():
        if states is not None:
            error = float(np.max(np.abs(np.asarray(states) - reference)))
            check(records, "a", engine, error < 1e-8, f"(max state error {error:.1e})")


def row_b(tq, records: list, quick: bool, repeat: int) -> None:
    n, total, dt, bond = (20, 0.5, 0.05, 16) if quick else (100, 4.0, 0.05, 64)
    hamiltonian = tq.hamiltonians.tfim(n, h=1.0)
    z = [tq.PauliSum([(1.0, "I" * q + "Z" + "I" * (n - q - 1))]) for q in range(n)]
    found = {}
    for backend in ("numpy", "pytorch"):
        def tebd(b=backend):
            with tq.use_backend(b):
                K = tq.get_backend()
                values = tq.evolve(hamiltonian, tq.MPSCircuit(n, max_bond=bond, cutoff=1e-12), [total],
                                   method="tebd", dt=dt, order=2, observables=z)
                return np.asarray(K.to_numpy(values))[0]

        found[f"tyxonq-{backend}"] = run_peer(records, "b", f"tyxonq-{backend}", tebd, repeat)
    found["quimb-TEBD"] = run_peer(records, "b", "quimb-TEBD",
                                   lambda: peers.quimb_tebd_tfim(n, 1.0, total, dt, bond, 1e-12), repeat)
    found["aer-mps-trotter"] = run_peer(records, "b", "aer-mps-trotter",
                                        lambda: peers.aer_mps_trotter_tfim(n, 1.0, total, dt, bond), repeat)
    # the splittings differ between engines (ours gathers each bond's terms, Aer's layers are X,
    # even ZZ, odd ZZ, quimb's its own): each is checked against a converged reference (fourth
    # order at dt / 2, the same bond cap) within the second-order splitting error at dt
    with tq.use_backend("numpy"):
        reference = np.asarray(tq.evolve(hamiltonian, tq.MPSCircuit(n, max_bond=bond, cutoff=1e-12), [total],
                                          method="tebd", dt=dt / 2, order=4, observables=z))[0]
    for engine, profile in found.items():
        if profile is not None:
            error = float(np.max(np.abs(np.asarray(profile) - reference)))
            check(records, "b", engine, error < SPLITTING_TOLERANCE,
                  f"(max <Z_i> difference {error:.1e} from the converged reference)")
            for record in records:
                if record["row"] == "b" and record["engine"] == engine and "best_s" in record:
                    record["deviation"] = error


def row_c(tq, records: list, quick: bool, repeat: int) -> None:
    n, steps, total = (8, 20, 0.5) if quick else (16, 20, 0.5)
    hamiltonian = tq.hamiltonians.heisenberg(n) + tq.PauliSum(
        [(0.5, "I" * q + "X" + "I" * (n - q - 1)) for q in range(n)])
    ising = tq.PauliSum([(1.0, "I" * q + "ZZ" + "I" * (n - q - 2)) for q in range(n - 1)])
    strings = [s for _, s in hamiltonian]
    coefficients = np.array([c for c, _ in hamiltonian])
    x0 = np.concatenate([[total], coefficients])

    def objective(x):
        start = tq.Circuit(n)
        for q, bit in enumerate(neel_bits(n)):
            if bit:
                start.x(q)
        K = tq.get_backend()
        values = K.stack(list(x[1:])) if K.name != "numpy" else x[1:]
        return tq.evolution.trotter(hamiltonian, x[0], steps, 2, coefficients=values,
                                    circuit=start).expectation(ising)

    found = {}
    for backend in ("numpy", "pytorch"):
        def energy_and_gradient(b=backend):
            with tq.use_backend(b):
                K = tq.get_backend()
                value, gradient = tq.value_and_grad(objective)(K.asarray(x0))
                return float(value), np.asarray(K.to_numpy(gradient))

        found[f"tyxonq-{backend}"] = run_peer(records, "c", f"tyxonq-{backend}", energy_and_gradient, repeat)
    found["pennylane-lightning"] = run_peer(
        records, "c", "pennylane-lightning",
        lambda: peers.pennylane_trotter(strings, coefficients, total, steps, neel_bits(n)), repeat)
    found["aer-PauliEvolutionGate"] = run_peer(
        records, "c", "aer-PauliEvolutionGate",
        lambda: peers.aer_trotter(strings, coefficients, total, steps, neel_bits(n)), repeat,
        note=f"gradient by central differences ({2 * len(x0)} more evaluations)")
    value, gradient = found["tyxonq-numpy"]
    for engine, result in found.items():
        if result is not None:
            error = abs(result[0] - value)
            gradient_error = float(np.max(np.abs(np.asarray(result[1]) - gradient)))
            check(records, "c", engine, error < 1e-8 and gradient_error < 1e-6,
                  f"(value off by {error:.1e}, gradient by {gradient_error:.1e})")


#: glibc settings that keep freed large blocks for reuse instead of returning them to the system
MALLOC_REUSE = {"MALLOC_MMAP_THRESHOLD_": str(2 ** 34), "MALLOC_TRIM_THRESHOLD_": str(2 ** 34)}


def main() -> int:
    if "--system-malloc" not in sys.argv and any(os.environ.get(k) != v for k, v in MALLOC_REUSE.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **MALLOC_REUSE})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system-malloc", action="store_true",
                        help="leave glibc's allocation settings as they are")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--rows", default="abc")
    parser.add_argument("--output", default=str(HERE / "results" / "evolution.json"))
    args = parser.parse_args()
    import tyxonq as tq

    records: list = []
    repeat = 0 if args.quick else args.repeat
    rows = {"a": row_a, "b": row_b, "c": row_c}
    if len(args.rows) == 1 or args.quick:
        for name in args.rows:
            rows[name](tq, records, args.quick, repeat)
    else:  # each row in a fresh process, so no row inherits another's memory or threads
        for name in args.rows:
            part = pathlib.Path(args.output).with_suffix(f".{name}.part.json")
            command = [sys.executable, __file__, "--rows", name, "--repeat", str(args.repeat),
                       "--output", str(part)] + (["--system-malloc"] if args.system_malloc else [])
            subprocess.run(command, check=False)
            records += json.loads(part.read_text()) if part.exists() else [
                {"row": name, "engine": "(row)", "status": "the row's process failed"}]
            part.unlink(missing_ok=True)
            part.with_suffix(".txt").unlink(missing_ok=True)

    machine = platform.processor() or platform.machine()
    allocation = "system malloc" if args.system_malloc else "large allocations reused"
    lines = table(f"time evolution ({machine}, complex128, min of {max(repeat, 1)} after a warm-up, "
                  f"{allocation})", records, 24)
    return finish(records, lines, args.output, write=not args.quick)


if __name__ == "__main__":
    sys.exit(main())
