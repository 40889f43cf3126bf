"""Per-call overhead side by side: six small-to-medium rows on tyxonq (NumPy, PyTorch, JAX) and on
tensorcircuit-ng (NumPy, JAX), quimb, qulacs and PennyLane lightning, in one process, one engine
after another, every result checked against a NumPy reference before its time is reported.

    PYTHONPATH=src python benchmarks/overhead_rows.py [--quick] [--repeat 3] [--rows ROW ...]
        [--engines ENGINE ...] [--output benchmarks/results/overhead.json]

Rows (full size / ``--quick`` size, in qubits; workloads from :mod:`specs`):

- state20: the state vector of ``rotation_ladder(n, 10)`` (10 layers RX·RZ + CNOT ladder), angles
  uniform in [0, 2 pi) (the suite's ``statevector`` workload); n = 20 / 10.
- grad12: the TFIM energy (``tfim(n)``) and its full gradient for ``hardware_efficient(n, 4)``
  (4-layer RY·RZ + CNOT-ladder ansatz; the suite's ``energy_gradient``); n = 12 / 6.
- heis14: the same for the open Heisenberg chain ``sum X_i X_i+1 + Y_i Y_i+1 + Z_i Z_i+1``;
  n = 14 / 6.
- corr36: ``<Z_a Z_a+1>``, ``a = n // 2 - 4``, of ``lattice(n, 8)`` (depth-8 RY + CZ square
  lattice) on its light cone; n = 36 / 16.
- z50: ``<Z_n//2>`` of ``brickwork(n, 10)`` (depth-10 RY + CZ); n = 50 / 24.
- amp50: ``<0...0|psi>`` of the same brickwork; n = 50 / 24.

Engines (each where it has the capability; otherwise the table says n/a and why):

- tyxonq-numpy, tyxonq-pytorch, tyxonq-jax: ``tq.templates`` (``rotation_ladder``,
  ``hardware_efficient(n, params, 4, ("ry", "rz"))``, ``brickwork``; the lattice from the spec's
  gates by ``Circuit.layer``, one call per run of equal gates), ``state()``,
  ``expectation(tq.hamiltonians.tfim(n) / heisenberg(n))``, ``expectation_ps(z=...)``,
  ``amplitude``; gradients by ``tq.value_and_grad`` (its default method: adjoint on NumPy and
  PyTorch, autograd on JAX). On JAX the whole function of the angles (gradient included) is
  ``K.jit``-compiled. The ``hardware_efficient`` template appends each rotation as one layer (RY on
  every qubit, then RZ) where the spec goes qubit by qubit (RY, RZ); the parameter layout is the
  same and gates on different qubits commute: the same circuit (the check compares the results).
- tc-numpy, tc-jax: tensorcircuit-ng as in ``peers/tensorcircuit.py`` (complex128, cotengra
  ``ReusableHyperOptimizer`` contractor): ``state()``, energies by ``operator_expectation`` with a
  sparse Hamiltonian and ``K.value_and_grad`` (jax only: numpy has no autodiff),
  ``expectation_ps(z=..., enable_lightcone=True)``, ``amplitude``; on jax under ``K.jit``.
- quimb: ``Circuit.to_dense``, ``local_expectation`` (Z, or Z⊗Z on the pair), ``amplitude``, with
  the shared cotengra optimizer (``peers/quimb.py``).
- qulacs: state (the circuit merged into two-qubit blocks by ``QuantumCircuitOptimizer``),
  energies and gradients by ``ParametricQuantumCircuit`` + ``backprop`` (``peers/qulacs.py``).
- lightning: ``lightning.qubit`` QNodes, energies with ``diff_method="adjoint"``
  (``peers/lightning.py``).

The peers' settings are the suite's: this script imports the adapters' helpers (some private, e.g.
``peers.tensorcircuit._setup``) rather than repeating them.

Timing: the minimum of ``--repeat`` runs after one warm-up run, whose time is reported too (it
includes jit compilation and contraction-path searches). For every engine the circuit is built
inside the timed call (construction counted); under ``K.jit`` (tyxonq-jax, tc-jax) that building is
traced once during the warm-up, so the timed runs hold only the compiled program. What is made once
per engine and row, outside the timing: Hamiltonians and observables (tyxonq's PauliSum, tc's sparse
matrix, qulacs' Observable, PennyLane's Hamiltonian), the cotengra optimizers (their caches are what
a user keeps between calls), PennyLane's device and QNode (its tape is built in every call). Thread
counts are whatever the environment sets (``OMP_NUM_THREADS`` and friends). The engines run one
after another, each on every selected row, the two JAX engines last: once JAX has run in a process,
qulacs' OpenMP calls there are 10-15 times slower (measured: the 6-qubit gradient 0.5 ms before,
6-9 ms after tyxonq-jax ran); the table lists them row by row.

Checks (tolerance 1e-8, the largest absolute deviation): the state and the energies and gradients
against :mod:`reference`'s dense simulation and adjoint sweep; corr36 and z50 against its
light-cone ``z_expectation``; amp50 against its exact MPS ``mps_amplitude``, relative to the
amplitude's magnitude (about 3e-9 at 50 qubits: an absolute 1e-8 would accept anything). After the
table, per row: the fastest peer, the fastest peer without a jit (all but tc-jax), and the ratios
tyxonq's best / fastest peer and tyxonq-numpy|pytorch (the faster) / fastest non-JIT peer.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import itertools
import pathlib
import platform
import sys
import time
from functools import partial
from typing import Any, Callable, NamedTuple

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import specs  # noqa: E402 - the workloads, next to this script
from side_by_side import finish, table, timed  # noqa: E402 - the shared helpers

import reference  # noqa: E402 - the NumPy reference

#: row id -> (full size, --quick size)
SIZES = {"state20": (20, 10), "grad12": (12, 6), "heis14": (14, 6), "corr36": (36, 16), "z50": (50, 24),
         "amp50": (50, 24)}
ROWS = tuple(SIZES)
GRADIENT_ROWS = ("grad12", "heis14")
WIDE_ROWS = ("corr36", "z50", "amp50")
#: engines that compile the whole function (left out of the non-JIT comparison)
JIT = ("tyxonq-jax", "tc-jax")
ENGINE_WIDTH = 15

Run = tuple[Callable[[], Any], Callable[[Any], Any]]  # (the timed call, its result -> canonical form)


# -- the rows' workloads and references ---------------------------------------------------------------
def heisenberg(n: int) -> tuple[tuple[float, str], ...]:
    """Open Heisenberg chain, coefficient 1 (``tq.hamiltonians.heisenberg(n)``'s term order)."""
    def pair(a: int, letter: str) -> str:
        return "".join(letter if q in (a, a + 1) else "I" for q in range(n))

    return tuple((1.0, pair(a, letter)) for a in range(n - 1) for letter in "XYZ")


def correlated(spec: specs.Spec) -> list[int]:
    """The qubits of corr36's <Z Z>: ``a, a + 1`` with ``a = n // 2 - 4``."""
    return [spec.n // 2 - 4, spec.n // 2 - 3]


def make_spec(row: str, n: int) -> specs.Spec:
    """The row's workload (keeping the suite's workload names, which the peer adapters read)."""
    if row == "state20":
        return specs.make_spec("statevector", n)
    if row == "grad12":
        return specs.make_spec("energy_gradient", n)
    if row == "heis14":
        return dataclasses.replace(specs.make_spec("energy_gradient", n), hamiltonian=heisenberg(n))
    if row == "corr36":
        return specs.make_spec("lattice_sampling", n)  # lattice(n, 8), angles uniform in [0, pi)
    return specs.make_spec("brickwork_local", n)  # brickwork(n, 10), observed n // 2


def expected(row: str, spec: specs.Spec) -> Any:
    """The row's result from :mod:`reference` (dense NumPy, light cones, an exact MPS)."""
    if row == "state20":
        return reference.simulate(spec.gates, spec.params, spec.n)
    if row in GRADIENT_ROWS:
        return reference.energy_and_gradient(spec.gates, spec.params, spec.hamiltonian, spec.n)
    if row == "corr36":
        return reference.z_expectation(spec.gates, spec.params, correlated(spec))
    if row == "z50":
        return reference.z_expectation(spec.gates, spec.params, [spec.observed])
    return reference.mps_amplitude(spec.gates, spec.params, spec.n)


def deviation(row: str, result: Any, want: Any) -> float:
    """The largest absolute deviation over every part (value and gradient for the gradient rows);
    amp50's relative to the amplitude's magnitude. Infinite for a wrong shape or a NaN."""
    pairs = zip(result, want) if row in GRADIENT_ROWS else [(result, want)]
    worst = 0.0
    for got, target in pairs:
        got, target = np.asarray(got), np.asarray(target)
        if got.shape != target.shape:
            return float("inf")
        difference = float(np.max(np.abs(got - target), initial=0.0))
        worst = max(worst, difference if not np.isnan(difference) else float("inf"))
    return worst / abs(want) if row == "amp50" else worst


# -- tyxonq ----------------------------------------------------------------------------------------
def lattice_circuit(tq: Any, spec: specs.Spec, params: Any) -> Any:
    """The spec's gates on a ``tq.Circuit``: one ``layer`` call per run of equal gates (a run's
    angles are consecutive parameters here, so a slice of ``params``; every scale is 1)."""
    circuit = tq.Circuit(spec.n)
    for name, run in itertools.groupby(spec.gates, key=lambda gate: gate.name):
        run = list(run)
        qubits = [gate.qubits if len(gate.qubits) > 1 else gate.qubits[0] for gate in run]
        if run[0].param is None:
            circuit.layer(name, qubits)
            continue
        first = run[0].param
        assert [g.param for g in run] == list(range(first, first + len(run)))
        assert all(gate.scale == 1 for gate in run)
        circuit.layer(name, qubits, params[first:first + len(run)])
    return circuit


def tyxonq_build(backend: str, row: str, spec: specs.Spec) -> Run:
    """tyxonq on ``backend``: the circuit built from the angles inside the timed function."""
    from tyxonq_engine import _compiler  # K.jit plus waiting for the result on JAX

    import tyxonq as tq

    tq.set_backend(backend)
    K = tq.get_backend()
    n, numpy = spec.n, K.to_numpy
    if row in GRADIENT_ROWS:
        hamiltonian = tq.hamiltonians.tfim(n) if row == "grad12" else tq.hamiltonians.heisenberg(n)

        def energy(params: Any) -> Any:
            ansatz = tq.templates.hardware_efficient(n, params, spec.layers, specs.ANSATZ_ROTATIONS)
            return ansatz.expectation(hamiltonian)

        function, convert = tq.value_and_grad(energy), lambda r: (float(numpy(r[0])), numpy(r[1]))
    elif row == "state20":
        function, convert = (lambda p: tq.templates.rotation_ladder(n, p, spec.layers).state()), numpy
    elif row == "corr36":
        function = lambda p: lattice_circuit(tq, spec, p).expectation_ps(z=correlated(spec))  # noqa: E731
        convert = lambda r: float(numpy(r))  # noqa: E731
    elif row == "z50":
        function = lambda p: tq.templates.brickwork(n, p, spec.layers).expectation_ps(  # noqa: E731
            z=[spec.observed])
        convert = lambda r: float(numpy(r))  # noqa: E731
    else:
        function = lambda p: tq.templates.brickwork(n, p, spec.layers).amplitude("0" * n)  # noqa: E731
        convert = lambda r: complex(numpy(r))  # noqa: E731
    compiled, params = _compiler(K)(function), K.asarray(spec.params)
    return (lambda: compiled(params)), convert


# -- tensorcircuit-ng ------------------------------------------------------------------------------
def tc_build(backend: str, row: str, spec: specs.Spec) -> Run:
    """tensorcircuit-ng as the suite's adapter configures it; the circuit built inside the timed
    function (on jax: the whole function jitted)."""
    from peers import tensorcircuit as adapter
    from peers.common import repeats_for

    K = adapter._setup(backend, repeats_for(spec))
    numpy = K.numpy
    if row in GRADIENT_ROWS:
        function = K.value_and_grad(adapter._energy(spec, K))
        convert = lambda r: (float(numpy(r[0])), numpy(r[1]))  # noqa: E731
    else:
        evaluate, convert = {
            "state20": (lambda c: c.state(), numpy),
            "corr36": (lambda c: c.expectation_ps(z=correlated(spec), enable_lightcone=True),
                       lambda r: float(np.real(numpy(r)))),
            "z50": (lambda c: c.expectation_ps(z=[spec.observed], enable_lightcone=True),
                    lambda r: float(np.real(numpy(r)))),
            "amp50": (lambda c: c.amplitude("0" * spec.n), lambda r: complex(numpy(r))),
        }[row]
        function = lambda p: evaluate(adapter._circuit(spec, p))  # noqa: E731
    if backend == "jax":
        function = adapter._blocking(K.jit(function))
    params = K.convert_to_tensor(spec.params)
    return (lambda: function(params)), convert


# -- quimb, qulacs, lightning ----------------------------------------------------------------------
def quimb_build(row: str, spec: specs.Spec) -> Run:
    """quimb's ``Circuit`` built inside the timed call, contracted with the shared optimizer."""
    import quimb
    from peers.common import cotengra_optimizer
    from peers.quimb import build_circuit

    optimize, z = cotengra_optimizer(), quimb.pauli("Z")
    evaluate, convert = {
        "state20": (lambda c: c.to_dense(optimize=optimize), lambda r: np.asarray(r).reshape(-1)),
        "corr36": (lambda c: c.local_expectation(np.kron(z, z), tuple(correlated(spec)), optimize=optimize),
                   lambda r: float(np.real(r))),
        "z50": (lambda c: c.local_expectation(z, where=spec.observed, optimize=optimize),
                lambda r: float(np.real(r))),
        "amp50": (lambda c: c.amplitude("0" * spec.n, optimize=optimize), complex),
    }[row]
    return (lambda: evaluate(build_circuit(spec))), convert


def qulacs_build(row: str, spec: specs.Spec) -> Run:
    """qulacs as the suite's adapter, with the circuit built (and for the state merged) inside
    the timed call; the Observable once, outside it."""
    from peers import qulacs as adapter
    from peers.common import chain_rule
    from qulacs import QuantumState

    if row == "state20":
        from qulacs.circuit import QuantumCircuitOptimizer

        def state() -> np.ndarray:
            circuit = adapter._fixed_circuit(spec)
            QuantumCircuitOptimizer().optimize(circuit, 2)
            vector = QuantumState(spec.n)
            circuit.update_quantum_state(vector)
            return vector.get_vector()

        return state, np.asarray
    observable = adapter._observable(spec)
    parametric = [gate for gate in spec.gates if gate.param is not None]

    def value_and_grad() -> tuple[float, np.ndarray]:
        circuit = adapter._parametric_circuit(spec)
        for k, gate in enumerate(parametric):  # qulacs' parametric rotations are exp(+i angle P / 2)
            circuit.set_parameter(k, -gate.scale * spec.params[gate.param])
        vector = QuantumState(spec.n)
        circuit.update_quantum_state(vector)
        gradient = chain_rule(spec, np.asarray(circuit.backprop(observable)), angle_sign=-1.0)
        return observable.get_expectation_value(vector), gradient

    return value_and_grad, lambda r: r


def lightning_build(row: str, spec: specs.Spec) -> Run:
    """The suite's lightning adapter as it is: a QNode (made once) that queues the gates, i.e.
    builds its tape, in every call."""
    from peers import lightning

    return lightning.build(spec, None)


# -- the engines -------------------------------------------------------------------------------------
class Engine(NamedTuple):
    build: Callable[[str, specs.Spec], Run]
    rows: tuple[str, ...]
    modules: tuple[str, ...]  # what must be importable
    absent: str  # why the other rows are n/a


STATE_VECTOR_ROWS = ("state20", *GRADIENT_ROWS)
NO_GRADIENT_ROWS = ("state20", *WIDE_ROWS)
ENGINES = {
    "tyxonq-numpy": Engine(partial(tyxonq_build, "numpy"), ROWS, ("tyxonq",), ""),
    "tyxonq-pytorch": Engine(partial(tyxonq_build, "pytorch"), ROWS, ("tyxonq", "torch"), ""),
    "tyxonq-jax": Engine(partial(tyxonq_build, "jax"), ROWS, ("tyxonq", "jax"), ""),
    "tc-numpy": Engine(partial(tc_build, "numpy"), NO_GRADIENT_ROWS, ("tensorcircuit", "cotengra"),
                       "no autodiff on numpy"),
    "tc-jax": Engine(partial(tc_build, "jax"), ROWS, ("tensorcircuit", "cotengra", "jax"), ""),
    "quimb": Engine(quimb_build, NO_GRADIENT_ROWS, ("quimb", "cotengra"), "no gradients of its own"),
    "qulacs": Engine(qulacs_build, STATE_VECTOR_ROWS, ("qulacs",), "a 2^n state vector"),
    "lightning": Engine(lightning_build, STATE_VECTOR_ROWS, ("pennylane", "pennylane_lightning"),
                        "a 2^n state vector"),
}


def measure(row: str, spec: specs.Spec, want: Any, name: str, repeat: int) -> dict:
    """One engine on one row: its record (times and check, or why there are none)."""
    record: dict[str, Any] = {"row": row, "engine": name, "n": spec.n}
    engine = ENGINES[name]
    if row not in engine.rows:
        return {**record, "status": f"n/a ({engine.absent})"}
    missing = [module for module in engine.modules if importlib.util.find_spec(module) is None]
    if missing:
        return {**record, "status": f"not installed ({', '.join(missing)})"}
    try:
        run, convert = engine.build(row, spec)
        warm, best, result = timed(run, repeat)
        worst = deviation(row, convert(result), want)
    except ImportError as error:
        return {**record, "status": f"not installed ({error})"[:160]}
    except Exception as error:  # noqa: BLE001 - an engine's failure is reported, not fatal
        return {**record, "status": f"failed: {type(error).__name__}: {error}"[:160]}
    check = "ok" if worst < specs.TOLERANCE else "WRONG"
    return {**record, "warm_s": warm, "best_s": best, "check": check, "deviation": worst}


# -- the report --------------------------------------------------------------------------------------
def row_table(title: str, records: list[dict]) -> list[str]:
    """:func:`side_by_side.table` with the row column as wide as the longest row id (its own is 4),
    and the best time in milliseconds as each timed line's note (its seconds have 3 decimals)."""
    width = max(4, *(len(record["row"]) for record in records))
    shown = [{**record, "row": record["row"].ljust(width)} for record in records]
    for record in shown:
        if "best_s" in record:
            record["note"] = f"best {record['best_s'] * 1e3:.3g} ms"
    lines = table(title, shown, ENGINE_WIDTH)
    lines[1] = "row".ljust(width) + lines[1][len("row "):]
    return lines


def fastest(times: dict[str, float]) -> tuple[str, float] | None:
    return min(times.items(), key=lambda item: item[1]) if times else None


def milliseconds(entry: tuple[str, float] | None) -> str:
    return "none" if entry is None else f"{entry[0]} {entry[1] * 1e3:.3g} ms"


def ratio(ours: tuple[str, float] | None, theirs: tuple[str, float] | None) -> str:
    if ours is None or theirs is None:
        return "n/a"
    return f"{ours[1] / theirs[1]:.2f} ({milliseconds(ours)} / {milliseconds(theirs)})"


def summary(records: list[dict], rows: list[str]) -> list[str]:
    """Per row: the fastest peer, the fastest non-JIT peer, and tyxonq's ratios to them (checked
    results only)."""
    lines = ["", "per row (checked results only; non-JIT: every engine but tc-jax and tyxonq-jax):"]
    for row in rows:
        times = {r["engine"]: r["best_s"] for r in records if r["row"] == row and r.get("check") == "ok"}
        peers = {e: t for e, t in times.items() if not e.startswith("tyxonq")}
        eager_peers = {e: t for e, t in peers.items() if e not in JIT}
        ours = {e: t for e, t in times.items() if e.startswith("tyxonq")}
        eager_ours = {e: t for e, t in ours.items() if e not in JIT}
        peer, eager_peer = fastest(peers), fastest(eager_peers)
        lines += [f"{row}: fastest peer {milliseconds(peer)}; "
                  f"fastest non-JIT peer {milliseconds(eager_peer)}",
                  f"  tyxonq best / fastest peer = {ratio(fastest(ours), peer)}",
                  f"  tyxonq-numpy|pytorch / fastest non-JIT peer = {ratio(fastest(eager_ours), eager_peer)}"]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes; nothing written unless --output")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs after the warm-up (their minimum)")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--engines", nargs="+", choices=tuple(ENGINES), default=list(ENGINES))
    parser.add_argument("--output", default=None,
                        help="JSON output, a .txt table beside it (default benchmarks/results/overhead.json)")
    args = parser.parse_args()

    rows = [row for row in ROWS if row in args.rows]
    sizes = {row: SIZES[row][1 if args.quick else 0] for row in rows}
    workloads = {row: make_spec(row, n) for row, n in sizes.items()}
    wants = {row: expected(row, spec) for row, spec in workloads.items()}
    records = []
    engines = sorted((name for name in ENGINES if name in args.engines), key=lambda name: name in JIT)
    for name in engines:  # the jitted (JAX) engines last: see the docstring
        for row in rows:
            records.append(measure(row, workloads[row], wants[row], name, args.repeat))
            print(f"{row} {name}: {records[-1].get('check', records[-1].get('status'))}", file=sys.stderr)
    order = list(ENGINES)
    records.sort(key=lambda record: (ROWS.index(record["row"]), order.index(record["engine"])))

    machine = platform.processor() or platform.machine()
    shown_sizes = ", ".join(f"{row} n={n}" for row, n in sizes.items())
    title = (f"per-call overhead ({machine}; {shown_sizes}; min of {args.repeat} after a warm-up, "
             "construction inside the timing)")
    lines = row_table(title, records) + summary(records, rows)
    output = args.output or str(HERE / "results" / "overhead.json")
    return finish(records, lines, output, write=not args.quick or args.output is not None)


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(f"total {time.perf_counter() - started:.1f} s")
    sys.exit(status)
