"""Seeing the work, side by side: circuit figures and diagrams against Qiskit's and PennyLane's
drawers, a counts histogram against Qiskit's, and what a progress bar costs a long call.

    PYTHONPATH=src python benchmarks/visualisation_rows.py [--quick]
        [--output benchmarks/results/visualisation.json]

Rows:
(a) a 20-qubit depth-10 RY + CZ brickwork (200 rotations, 95 CZ) drawn as a matplotlib figure
    and written as a PNG (80 dpi, Agg): tyxonq ``c.draw("mpl")``, Qiskit's
    ``qc.draw("mpl")`` (needs pylatexenc), PennyLane's ``qml.draw_mpl``. Checked: a PNG of
    more than 10 kB was written.
(b) the same circuit as a text diagram: ``str(c)``, Qiskit's ``qc.draw("text")``, PennyLane's
    ``qml.draw``. Checked: 20 qubit rows in the first block.
(c) a histogram of 1024 outcomes' counts (10 qubits, 20000 shots), written as a PNG:
    ``tq.plot.counts(top=None)`` and Qiskit's ``plot_histogram``. Checked: a PNG was written.
(d) a progress bar's cost on a long call: 20000 shots of a 16-qubit repetition-code memory
    (branch steps), with ``progress=False`` and with a bar drawn (``progress=True``, into a
    discarded stream). Checked: the same counts.

Times: the minimum of ``--repeat`` runs after a warm-up; the warm-up time is reported separately.
"""

from __future__ import annotations

import argparse
import io
import pathlib
import platform
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from side_by_side import finish, table, timed  # noqa: E402 - the shared helpers, next to this script

N, DEPTH = 20, 10


def angles() -> np.ndarray:
    return np.random.default_rng(5).uniform(0, np.pi, N * DEPTH)


def qiskit_brickwork():
    from qiskit import QuantumCircuit

    qc, values, k = QuantumCircuit(N), angles(), 0
    for layer in range(DEPTH):
        for q in range(N):
            qc.ry(float(values[k]), q)
            k += 1
        for q in range(layer % 2, N - 1, 2):
            qc.cz(q, q + 1)
    return qc


def pennylane_brickwork():
    import pennylane as qml

    values = angles()

    def circuit():
        k = 0
        for layer in range(DEPTH):
            for q in range(N):
                qml.RY(float(values[k]), wires=q)
                k += 1
            for q in range(layer % 2, N - 1, 2):
                qml.CZ(wires=[q, q + 1])
        return qml.state()

    return circuit


def tyxonq_brickwork(tq):
    c, values, k = tq.Circuit(N), angles(), 0
    for layer in range(DEPTH):
        for q in range(N):
            c.ry(q, theta=float(values[k]))
            k += 1
        for q in range(layer % 2, N - 1, 2):
            c.cz(q, q + 1)
    return c


def saved(figure, folder: pathlib.Path, name: str) -> int:
    path = folder / name
    figure.savefig(path, dpi=80)
    import matplotlib.pyplot as plt

    plt.close("all")  # the peers draw through pyplot
    return path.stat().st_size


def timed_rows(row: str, engines: dict, repeat: int, records: list, checked) -> None:
    """One record per engine: ``engines[name]()`` timed, its result read by ``checked(result)``
    into ``(check, note)`` (``note`` may be ``None``)."""
    for engine, draw in engines.items():
        warm, best, result = timed(draw, repeat)
        check, note = checked(result)
        records.append({"row": row, "engine": engine, "warm_s": warm, "best_s": best, "check": check}
                       | ({"note": note} if note is not None else {}))


def figure_rows(tq, repeat: int, folder: pathlib.Path, records: list) -> None:
    """(a)"""
    import matplotlib

    matplotlib.use("Agg")
    c = tyxonq_brickwork(tq)
    engines = {"tyxonq": lambda: saved(c.draw("mpl"), folder, "tyxonq.png")}
    try:
        qc = qiskit_brickwork()
        import pylatexenc  # noqa: F401 - Qiskit's mpl drawer needs it

        engines["qiskit"] = lambda: saved(qc.draw("mpl"), folder, "qiskit.png")
    except ImportError as error:
        records.append({"row": "a", "engine": "qiskit", "status": f"not installed ({error.name})"})
    try:
        import pennylane as qml

        circuit = pennylane_brickwork()
        engines["pennylane"] = lambda: saved(qml.draw_mpl(circuit)()[0], folder, "pennylane.png")
    except ImportError:
        records.append({"row": "a", "engine": "pennylane", "status": "not installed"})
    timed_rows("a", engines, repeat, records,
               lambda size: ("ok" if size > 10_000 else f"FAIL ({size} bytes)", f"{size // 1000} kB"))


def text_rows(tq, repeat: int, records: list) -> None:
    """(b)"""
    c = tyxonq_brickwork(tq)
    engines = {"tyxonq": lambda: str(c)}
    try:
        qc = qiskit_brickwork()
        engines["qiskit"] = lambda: str(qc.draw("text", fold=100))
    except ImportError:
        pass
    try:
        import pennylane as qml

        circuit = pennylane_brickwork()
        engines["pennylane"] = lambda: qml.draw(circuit, max_length=100)()
    except ImportError:
        pass
    def checked(text: str) -> tuple[str, None]:
        rows = [line for line in text.split("\n\n")[0].splitlines() if line.strip()]
        qubit_rows = sum(1 for line in rows if "─" in line)
        return ("ok" if qubit_rows >= N else f"FAIL ({qubit_rows} rows)"), None

    timed_rows("b", engines, repeat, records, checked)


def histogram_rows(tq, repeat: int, folder: pathlib.Path, records: list) -> None:
    """(c)"""
    samples = tq.templates.brickwork(10, angles()[:40], 4).sample(20000, seed=3)
    engines = {"tyxonq": lambda: saved(tq.plot.counts(samples, top=None), folder, "counts-tyxonq.png")}
    try:
        from qiskit.visualization import plot_histogram

        engines["qiskit"] = lambda: saved(plot_histogram(samples), folder, "counts-qiskit.png")
    except ImportError:
        records.append({"row": "c", "engine": "qiskit", "status": "not installed"})
    timed_rows("c", engines, repeat, records,
               lambda size: ("ok" if size > 5_000 else f"FAIL ({size} bytes)", f"{len(samples)} outcomes"))


def progress_rows(tq, repeat: int, shots: int, records: list) -> None:
    """(d)"""
    from dynamic_rows import memory_tyxonq  # row (a) of the dynamic rows, 8 data qubits

    c = memory_tyxonq(tq, data=8)
    found = {}
    for engine, shown in (("tyxonq-no-bar", False), ("tyxonq-bar", True)):
        stream, sys.stderr = sys.stderr, io.StringIO()  # the bar drawn, then discarded
        try:
            warm, best, counts = timed(lambda s=shown: c.sample(shots, seed=9, progress=s), repeat)
        finally:
            drawn, sys.stderr = sys.stderr.getvalue(), stream
        found[engine] = counts
        records.append({"row": "d", "engine": engine, "warm_s": warm, "best_s": best,
                        "check": "ok" if counts == found["tyxonq-no-bar"] else "FAIL (other counts)",
                        "note": f"{shots} shots; {len(drawn)} characters of bar drawn"})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results" / "visualisation.json"))
    args = parser.parse_args()
    import tyxonq as tq

    repeat = 1 if args.quick else args.repeat
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        figure_rows(tq, repeat, pathlib.Path(folder), records)
        text_rows(tq, repeat, records)
        histogram_rows(tq, repeat, pathlib.Path(folder), records)
    progress_rows(tq, repeat, 2000 if args.quick else 20000, records)
    machine = platform.processor() or platform.machine()
    lines = table(f"visualisation ({machine}, min of {repeat} after a warm-up)", records, 14)
    return finish(records, lines, args.output, write=not args.quick)


if __name__ == "__main__":
    sys.exit(main())
