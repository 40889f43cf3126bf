"""TenCirChem's rows for ``chem_rows.py``, run in its own environment (TenCirChem pins NumPy 1.26 and
Qiskit 0.46): ``python chem_peer_worker.py '{"rows": [...], "quick": ..., "repeat": ...}'`` prints
one JSON line of records.

TenCirChem: ``UCCSD(M(atom), active_space, engine="civector")`` (its fastest engine),
``energy_and_grad`` at zero amplitudes (its amplitudes are spin-adapted: fewer than tyxonq's, so
only the energy is compared: RHF's to 1e-8); the LiH curve by its ``kernel()`` against PySCF's FCI.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
N2 = "N 0 0 0; N 0 0 1.098"
GEOMETRIES = {"a-water": (WATER, None), "a-N2": (N2, (10, 8))}
CHEMICAL_ACCURACY = 1.6e-3


def timed(fn, repeat):
    start = time.perf_counter()
    result = fn()
    warm = best = time.perf_counter() - start
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return warm, best, result


def tencirchem_gradient(row, repeat):
    from tencirchem import UCCSD, M

    geometry, space = GEOMETRIES[row]
    ucc = UCCSD(M(atom=geometry, basis="sto-3g"), active_space=space, engine="civector")
    zeros = np.zeros(ucc.n_params)
    warm, best, (energy, _) = timed(lambda: ucc.energy_and_grad(zeros, engine="civector"), repeat)
    deviation = abs(energy - ucc.e_hf)
    return {"row": row, "engine": "tencirchem (civector)", "warm_s": warm, "best_s": best,
            "deviation": deviation, "check": "ok" if deviation < 1e-8 else "MISMATCH",
            "note": f"{ucc.n_params} amplitudes (spin-adapted)"}


def tencirchem_curve(quick):
    from pyscf import fci, gto, scf
    from tencirchem import UCCSD, M

    distances = np.linspace(0.8, 3.0, 3 if quick else 20)

    def run():
        return [UCCSD(M(atom=f"Li 0 0 0; H 0 0 {d}", basis="sto-3g"), engine="civector").kernel()
                for d in distances]

    warm, best, energies = timed(run, 0)
    errors = []
    for d, energy in zip(distances, energies):
        mf = scf.RHF(gto.M(atom=f"Li 0 0 0; H 0 0 {d}", basis="sto-3g", verbose=0)).run()
        errors.append(energy - fci.FCI(mf).kernel()[0])
    worst = float(np.max(np.abs(errors)))
    return {"row": "b", "engine": "tencirchem (civector)", "warm_s": warm, "best_s": best, "deviation": worst,
            "check": "ok" if worst < CHEMICAL_ACCURACY else "MISMATCH",
            "note": f"{len(distances)} points, worst error to FCI"}


def main() -> int:
    options = json.loads(sys.argv[1])
    records = []
    for row in options["rows"]:
        try:
            records.append(tencirchem_gradient(row, options["repeat"]))
        except Exception as error:  # noqa: BLE001 - reported, not fatal
            records.append({"row": row, "engine": "tencirchem (civector)",
                            "status": f"failed: {error!r}"[:200]})
    try:
        if options.get("curve", True):
            records.append(tencirchem_curve(options["quick"]))
    except Exception as error:  # noqa: BLE001
        records.append({"row": "b", "engine": "tencirchem (civector)", "status": f"failed: {error!r}"[:200]})
    print(json.dumps(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
