"""Molecular VQE with tq.chem: H2's dissociation curve, LiH and water, UCCSD against FCI/CASCI.

For every geometry: PySCF's RHF, the qubit Hamiltonian (Jordan-Wigner), UCCSD from MP2 amplitudes
optimised with exact gradients (L-BFGS-B), and PySCF's FCI (CASCI in an active space) to compare.
The H2 curve is plotted to ``--plot`` (a PNG) when matplotlib is installed.

Run:  python examples-ng/molecular_vqe.py [--quick] [--plot h2_curve.png]
      (needs: pip install "tyxonq[chem]")
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq

CHEMICAL_ACCURACY = 1.6e-3  # Hartree


def h2_curve(distances: np.ndarray) -> list[tuple[float, float, float, float]]:
    """``(distance, HF, UCCSD, FCI)`` along H2's bond."""
    rows = []
    for distance in distances:
        molecule = tq.chem.Molecule(f"H 0 0 0; H 0 0 {distance}")
        ucc = tq.chem.UCCSD(molecule)
        rows.append((float(distance), molecule.hf_energy, ucc.kernel(), molecule.fci_energy))
    return rows


def report(name: str, molecule: "tq.chem.Molecule", active_space: tuple[int, int] | None) -> float:
    """UCCSD in ``active_space`` against CASCI (FCI for the whole space); the error returned."""
    start = time.perf_counter()
    ucc = tq.chem.UCCSD(molecule, active_space=active_space)
    energy = ucc.kernel()
    reference = molecule.casci_energy(active_space)
    error = energy - reference
    space = "all orbitals" if active_space is None else f"active space {active_space}"
    print(f"{name:6s} {space:22s} {ucc.n_qubits:2d} qubits {ucc.n_params:3d} amplitudes  "
          f"HF {molecule.hf_energy:.8f}  "
          f"UCCSD {energy:.8f}  {'FCI' if active_space is None else 'CASCI'} {reference:.8f}  "
          f"error {error:.1e} Ha  ({time.perf_counter() - start:.1f} s)")
    return error


def plot(rows: list[tuple[float, float, float, float]], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    distances, hf, ucc, fci = (np.array(column) for column in zip(*rows))
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(distances, hf, "o--", label="Hartree-Fock")
    axis.plot(distances, fci, "-", label="FCI (PySCF)")
    axis.plot(distances, ucc, "x", label="UCCSD (tyxonq)")
    axis.set_xlabel("H-H distance (angstrom)")
    axis.set_ylabel("energy (Hartree)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    print(f"plotted the curve to {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three H2 points and LiH in a small space")
    parser.add_argument("--plot", default=None, help="write the H2 curve to this PNG")
    args = parser.parse_args()
    distances = np.linspace(0.5, 2.5, 3 if args.quick else 12)
    rows = h2_curve(distances)
    print("H2 (sto-3g) distance  HF            UCCSD         FCI           UCCSD - FCI")
    for distance, hf, ucc, fci in rows:
        print(f"           {distance:5.2f}     {hf:.8f}   {ucc:.8f}   {fci:.8f}   {ucc - fci:.1e}")
    worst = max(abs(ucc - fci) for _, _, ucc, fci in rows)
    lih = tq.chem.Molecule("Li 0 0 0; H 0 0 1.6")
    errors = [report("LiH", lih, (2, 3) if args.quick else None)]
    if not args.quick:
        water = tq.chem.Molecule("O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692")
        errors.append(report("H2O", water, (4, 4)))
    if args.plot:
        plot(rows, args.plot)
    ok = worst < 1e-6 and all(abs(e) < CHEMICAL_ACCURACY for e in errors)
    print("all within chemical accuracy" if ok else "NOT within chemical accuracy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
