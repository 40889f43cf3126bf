"""The measured floors behind the goals `benchmarks/` still misses (issue 47): each section times
what a row cannot go below with the method it uses, on this machine, in one process.

    PYTHONPATH=src python benchmarks/floors.py [--sections xla_products jax_states first_states
        first_call_parts first_call_gc plan_trade first_touch jax_programs per_call host_callback
        twin_rows permutations autograd_floor mps_splits]
        [--output benchmarks/results/floors.json]

Sections:

- ``xla_products``: one complex128 matrix product compiled by XLA (``jax.jit``, CPU) against
  NumPy's (OpenBLAS) at the shapes a 20- to 22-qubit contraction multiplies: the compiled
  contraction of a state cannot run faster than its products.
- ``jax_states``: the ``statevector`` row's state of 16, 20, 22 qubits three ways, interleaved:
  NumPy's eager call; under ``jax.jit``, XLA's compiled contraction (never hosted here); and the
  host route (the state computed by NumPy inside the program and copied in): the JAX row's best
  is the faster of the two.
- ``first_states``: a first call of the 20/22/24-qubit state in a fresh process, in parts: planning
  alone (``tq.rehearse``: path search), the first contraction with the plan made (and the
  process's peak resident memory after it), a steady call.
- ``first_call_parts``: the first calls still more than 0.5 s over steady (the QAOA p3 energy, the
  noisy energy and its gradient), each in a fresh process, in parts: light cones, canonical forms,
  the machine-rate probe, plans (simplification, min-fill elimination, hyper search, compiling).
- ``first_call_gc``: the light-cone QAOA rows' first call on NumPy and PyTorch, each in a fresh
  process: the time Python's cyclic garbage collector takes during it (young generations, full
  collections), the objects it tracks before and after, and one full collection timed after it.
  A full collection walks every tracked object, the backend library's included (PyTorch's import
  leaves about three times NumPy's).
- ``plan_trade``: the QAOA p = 3 energy's first call and steady call in fresh processes with the
  default planner and with opt_einsum's greedy paths alone (no min-fill elimination or
  simplification search): what a cheaper plan saves on the first call against what it costs
  every call after.
- ``first_touch``: filling 256 MiB and 1 GiB of fresh memory in a fresh process, three times
  (freed in between) and once more in place: what a first call that needs that much memory pays
  for its pages, against later calls.
- ``jax_programs``: the JAX rows still above 0.5x the fastest peer: the timed call against its
  compiled XLA executable alone, and the executable's fused kernels.
- ``per_call``: the 8-qubit TFIM energy and gradient on NumPy (``energy_gradient`` 8): the call
  against building its circuit alone (108 gates, Python per gate).
- ``host_callback``: a ``jax.jit`` program whose only work is a host callback handing back a
  ready 2^22- or 2^24-entry array (a 22-qubit state, a 12-qubit density matrix): what a JAX row
  taken from NumPy pays over NumPy's own call, against a plain NumPy copy of the array.
- ``twin_rows``: rows another backend computes mostly with NumPy on its host twin (JAX: the 22-
  and 24-qubit states, called back from the compiled program, 10^5 samples of the 20-qubit state,
  wide sampling, the MPS quench, the lattice sampling; PyTorch: the 12-qubit energy gradient, the
  batched energies, Adam), alternated with NumPy's own call in one process (five rounds, the
  lattice two; each engine's fastest and slowest call), and NumPy's result handed back as that
  backend's arrays: what the row adds to NumPy's.
- ``permutations``: the 12-qubit noisy density matrix's output permutation (24 legs, 256 MiB): one
  NumPy transpose, the two passes of ``tyxonq.numerics.moves``, PyTorch's and XLA's.
- ``autograd_floor``: PyTorch's TFIM energy and gradient (``energy_gradient`` 8 and 12) alternated
  with NumPy's in one process, and what autograd alone costs on top of NumPy's sweep: the user's
  parameter tensor indexed as the template indexes it (a slice and a split per rotation layer), the
  angles stacked into one gradient node whose value and Jacobian are ready, and the backward pass
  to the parameters, in bare PyTorch. NumPy's call plus that graph is what any exact method that
  keeps the user's autograd graph costs on PyTorch's CPU.
- ``mps_splits``: the 100-qubit MPS quench (``mps_quench``, max bond 32) on NumPy -- the work the
  JAX row runs on its host twin, its ranks read from values, so no compiled program -- against
  its two-site splits replayed with nothing but NumPy around them: each split's matrix recorded,
  then the gate's product, LAPACK's SVD, the rank count and the truncation, one split after the
  other; and qiskit-aer's quench on this machine.

Writes ``.json`` and ``.txt`` (one line per measurement); the rows of sections not run are kept.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SECTIONS = ("xla_products", "jax_states", "first_states", "first_call_parts", "first_call_gc", "plan_trade",
            "first_touch", "jax_programs", "per_call", "host_callback", "twin_rows", "permutations",
            "autograd_floor", "mps_splits")


def best(call: Callable[[], Any], repeat: int = 5) -> float:
    """The fastest of ``repeat`` calls after one warm-up, in seconds."""
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def fresh_process(script: str) -> dict:
    """The JSON object ``script`` prints last, run by this Python in a fresh process with no
    persistent cache (a first process: nothing planned or measured on disk); its errors are
    raised with what it wrote to stderr."""
    done = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, TYXONQ_PERSISTENT_CACHE=""),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"a floors script failed (exit status {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def xla_products() -> list[dict]:
    import jax

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    rows = []
    product = jax.jit(lambda a, b: a @ b)
    for m, k, n in ((2 ** 18, 16, 16), (2 ** 16, 64, 64), (4096, 256, 1024), (1024, 1024, 1024)):
        a = rng.normal(size=(m, k)) + 1j * rng.normal(size=(m, k))
        b = rng.normal(size=(k, n)) + 1j * rng.normal(size=(k, n))
        ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
        numpy_s = best(lambda a=a, b=b: a @ b)
        xla_s = best(lambda ja=ja, jb=jb: product(ja, jb).block_until_ready())
        rows.append({"section": "xla_products", "what": f"({m} x {k}) @ ({k} x {n}) complex128",
                     "numpy_s": numpy_s, "xla_s": xla_s, "ratio": xla_s / numpy_s})
    return rows


def jax_states() -> list[dict]:
    return [_jax_state_row(n) for n in (16, 20, 22)]


def _jax_state_row(n: int) -> dict:
    import jax
    from specs import make_spec

    import tyxonq as tq

    spec = make_spec("statevector", n)

    def state(angles: Any, method: str = "auto") -> Any:
        return tq.templates.rotation_ladder(n, angles, spec.layers).state(method=method)

    with tq.use_backend("numpy"):
        fixed = tq.templates.rotation_ladder(n, spec.params, spec.layers)
        fixed.state()
    with tq.use_backend("jax") as K:
        angles = K.asarray(spec.params)
        K.host_program_entries = lambda: float("inf")  # XLA's own contraction, at every size
        contraction = jax.jit(lambda a: state(a, "contraction"))
        contraction(angles).block_until_ready()
        K.host_program_entries = lambda: 1.0  # the host route, at every size
        host = jax.jit(state)
        host(angles).block_until_ready()
        del K.host_program_entries
    times: dict[str, list[float]] = {"numpy": [], "jax_contraction": [], "jax_host": []}
    for _ in range(2):  # interleaved
        with tq.use_backend("numpy"):
            times["numpy"].append(best(fixed.state, 3))
        times["jax_contraction"].append(best(lambda: contraction(angles).block_until_ready(), 3))
        times["jax_host"].append(best(lambda: host(angles).block_until_ready(), 3))
    row = {"section": "jax_states", "what": f"statevector {n} qubits",
           **{f"{name}_s": min(values) for name, values in times.items()}}
    row["jax_best_over_numpy"] = min(row["jax_contraction_s"], row["jax_host_s"]) / row["numpy_s"]
    return row


_FIRST_STATE = """
import json, sys, time
sys.path.insert(0, {here!r})
start = time.perf_counter()
import tyxonq as tq
from specs import make_spec
imported = time.perf_counter() - start
tq.set_backend("numpy")
n = {n}
spec = make_spec("statevector", n)
circuit = tq.templates.rotation_ladder(n, spec.params, spec.layers)
start = time.perf_counter(); tq.rehearse(circuit.state); planning = time.perf_counter() - start
start = time.perf_counter(); circuit.state(); first = time.perf_counter() - start
import resource
peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
times = []
for _ in range(3):
    start = time.perf_counter(); circuit.state(); times.append(time.perf_counter() - start)
steady = min(times)
print(json.dumps(dict(import_s=imported, planning_s=planning, first_contraction_s=first, steady_s=steady,
                      peak_rss_mib=peak_mib)))
"""


def first_states() -> list[dict]:
    rows = []
    for n in (20, 22, 24):
        parts = fresh_process(_FIRST_STATE.format(here=str(HERE), n=n))
        rows.append({"section": "first_states", "what": f"statevector {n} qubits, first process", **parts,
                     "first_over_steady_s": parts["planning_s"] + parts["first_contraction_s"]
                     - parts["steady_s"]})
    return rows


_FIRST_CALL_PARTS = """
import json, sys, time
sys.path.insert(0, {here!r})
import tyxonq as tq
import tyxonq_engine
from measure import first_and_steady
from specs import make_spec
from tyxonq.circuit import base, circuit, calibration
from tyxonq.circuit.contraction import network, paths, plan
from tyxonq.circuit.density import dm_circuit

spent, counts = {{}}, {{}}

def timed(module, name, label):
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
            counts[label] = counts.get(label, 0) + 1

    setattr(module, name, wrapper)

timed(network, "light_cone", "light cones")
timed(plan, "network_form", "canonical forms (plans)")
for costed in (base, circuit, dm_circuit):  # each imports network_cost by name
    timed(costed, "network_cost", "route costs (networks costed)")
timed(calibration, "_measure_aside", "machine rates (the route probe)")
timed(plan, "rank_simplify", "plans: rank simplification")
timed(plan, "compile_path", "plans: compiling the steps")
timed(paths, "elimination_path", "plans: min-fill elimination")
timed(paths, "_hyper_path", "plans: hyper search")
timed(plan, "_build_plan", "plans (all)")
tq.set_backend("numpy")
spec = make_spec({workload!r}, {n})
run, _ = tyxonq_engine.build(spec, "numpy")
first, steady = first_and_steady(run)
print(json.dumps(dict(first=first, steady=steady, spent=spent, counts=counts)))
"""

#: the rows whose first call misses "within 0.5 s of steady", broken into parts
FIRST_CALL_ROWS = (("qaoa_energy_p3", 100), ("noisy_energy", 10), ("noisy_energy_gradient", 10))


def first_call_parts() -> list[dict]:
    """Each of :data:`FIRST_CALL_ROWS`' first call on NumPy in a fresh process (no plans from
    disk), in parts: light cones, canonical forms, the machine-rate probe, plans (simplification,
    min-fill elimination, hyper search, compiling the steps), per distinct plan."""
    rows = []
    for workload, n in FIRST_CALL_ROWS:
        parts = fresh_process(_FIRST_CALL_PARTS.format(here=str(HERE), workload=workload, n=n))
        distinct = parts["counts"].get("plans (all)", 0)
        what = f"{workload} {n}"
        rows.append({"section": "first_call_parts", "what": f"{what}: first call", "first_s": parts["first"],
                     "steady_s": parts["steady"], "distinct_plans": distinct})
        for label, seconds in parts["spent"].items():
            rows.append({"section": "first_call_parts", "what": f"{what}: {label}", "seconds_s": seconds,
                         "calls": parts["counts"][label]})
    return rows


#: the JAX rows at more than 0.5x the fastest peer, whose compiled program is measured alone
JAX_PROGRAM_ROWS = (("energy_gradient", 8), ("energy_gradient", 12), ("batched_energies_64", 10),
                    ("qaoa_gradient", 16))


def jax_programs() -> list[dict]:
    """Each of :data:`JAX_PROGRAM_ROWS` under ``jax.jit``: the row's timed call against its
    compiled XLA executable called alone (arguments on the device already: what is left is the
    program itself), the executable's fused kernels (XLA runs them one after another on the
    CPU), and the fastest peer's time from ``results/latest.json``."""
    import jax
    import tyxonq_engine
    from specs import make_spec

    import tyxonq as tq

    peers = _fastest_peers()
    rows = []
    for workload, n in JAX_PROGRAM_ROWS:
        spec = make_spec(workload, n)
        run, _ = tyxonq_engine.build(spec, "jax")
        K = tq.get_backend()
        if workload == "batched_energies_64":
            function = tq.vectorize_or_fallback(tyxonq_engine._energy(spec))
        else:
            function = tq.value_and_grad(tyxonq_engine._energy(spec))
        params = K.asarray(spec.params)
        executable = jax.jit(function).lower(params).compile()
        call = best(run, 50)
        program = best(lambda executable=executable, params=params:
                       jax.block_until_ready(executable(params)), 50)
        program_text = executable.as_text()
        kernels = program_text.count(" fusion(") + program_text.count(" fusion.")
        peer, peer_s = peers.get((workload, n), ("-", float("nan")))
        rows.append({"section": "jax_programs", "what": f"{workload} {n}", "call_s": call,
                     "program_s": program, "kernels": kernels, "fastest_peer": peer, "peer_s": peer_s,
                     "call_over_peer": call / peer_s})
    return rows


def _fastest_peers(exclude: tuple[str, ...] = ()) -> dict[tuple[str, int], tuple[str, float]]:
    """(workload, n) -> (engine, seconds) of the fastest non-tyxonq engine in ``latest.json``
    (``exclude``: engines not counted)."""
    found: dict[tuple[str, int], tuple[str, float]] = {}
    for row in json.loads((HERE / "results" / "latest.json").read_text())["results"]:
        seconds = row.get("min_s")
        if seconds is None or row["engine"].startswith("tyxonq") or row.get("status") != "ok" \
                or row["engine"] in exclude:
            continue
        key = (row["workload"], row["qubits"])
        if key not in found or seconds < found[key][1]:
            found[key] = (row["engine"], seconds)
    return found


def per_call() -> list[dict]:
    import tyxonq_engine
    from specs import ANSATZ_ROTATIONS, make_spec

    import tyxonq as tq

    tq.set_backend("numpy")
    spec = make_spec("energy_gradient", 8)
    run, _ = tyxonq_engine.build(spec, "numpy")
    call = best(run, 20)
    build = best(lambda: tq.templates.hardware_efficient(spec.n, spec.params, spec.layers,
                                                         ANSATZ_ROTATIONS), 20)
    return [{"section": "per_call", "what": "energy_gradient 8 (NumPy, adjoint)", "call_s": call,
             "building_the_circuit_s": build, "gates": len(spec.gates)}]


_FIRST_CALL_GC = """
import gc, json, sys, time
sys.path.insert(0, {here!r})
import tyxonq as tq
import tyxonq_engine
from specs import make_spec

spent, counts = [0.0, 0.0, 0.0], [0, 0, 0]

def timed(phase, info):
    if phase == "start":
        timed.start = time.perf_counter()
    else:
        spent[info["generation"]] += time.perf_counter() - timed.start
        counts[info["generation"]] += 1

tq.set_backend({backend!r})
spec = make_spec({workload!r}, {n})
run, _ = tyxonq_engine.build(spec, {backend!r})
before = len(gc.get_objects())
gc.callbacks.append(timed)
start = time.perf_counter()
run()
first = time.perf_counter() - start
gc.callbacks.remove(timed)
after = len(gc.get_objects())
start = time.perf_counter()
gc.collect()
full = time.perf_counter() - start
print(json.dumps(dict(first=first, young=spent[0] + spent[1], full_collections=spent[2], full_count=counts[2],
                      objects_before=before, objects_after=after, one_full_collection=full)))
"""

#: the light-cone rows whose first call the collector's time is measured in
FIRST_CALL_GC_ROWS = (("qaoa_energy_p2", 100), ("qaoa_energy_p3", 100))


def first_call_gc() -> list[dict]:
    """Each of :data:`FIRST_CALL_GC_ROWS`' first call on NumPy and PyTorch in a fresh process (no
    plans from disk): the collector's time in it (young generations; full collections and how
    many), the tracked objects before and after the call, and one full collection timed after."""
    rows = []
    for workload, n in FIRST_CALL_GC_ROWS:
        for backend in ("numpy", "pytorch"):
            parts = fresh_process(_FIRST_CALL_GC.format(here=str(HERE), workload=workload, n=n,
                                                        backend=backend))
            rows.append({"section": "first_call_gc", "what": f"{workload} {n}, {backend}",
                         "first_s": parts["first"], "collector_young_s": parts["young"],
                         "collector_full_s": parts["full_collections"],
                         "full_collections": parts["full_count"],
                         "objects_before": parts["objects_before"], "objects_after": parts["objects_after"],
                         "one_full_collection_s": parts["one_full_collection"]})
    return rows


_PLAN_TRADE = """
import json, sys
sys.path.insert(0, {here!r})
import tyxonq as tq
import tyxonq_engine
from measure import first_and_steady
from specs import make_spec

tq.set_backend("numpy")
tq.set_contractor({contractor!r})
run, _ = tyxonq_engine.build(make_spec({workload!r}, {n}), "numpy")
first, steady = first_and_steady(run, repeat=5)
print(json.dumps(dict(first=first, steady=steady, distinct=tq.plan_cache_info().path_searches)))
"""

#: the row whose first call is planning, and the planners it is measured with
PLAN_TRADE_ROW, PLAN_TRADE_CONTRACTORS = ("qaoa_energy_p3", 100), ("circuit", "greedy")


def plan_trade() -> list[dict]:
    """:data:`PLAN_TRADE_ROW`'s first and steady call on NumPy in fresh processes (no plans from
    disk), planned by each of :data:`PLAN_TRADE_CONTRACTORS`."""
    rows = []
    workload, n = PLAN_TRADE_ROW
    for contractor in PLAN_TRADE_CONTRACTORS:
        parts = fresh_process(_PLAN_TRADE.format(here=str(HERE), workload=workload, n=n,
                                                 contractor=contractor))
        rows.append({"section": "plan_trade", "what": f"{workload} {n}, {contractor} paths",
                     "first_s": parts["first"], "steady_s": parts["steady"],
                     "first_over_steady_s": parts["first"] - parts["steady"],
                     "distinct_plans": parts["distinct"]})
    return rows


_FIRST_TOUCH = """
import json, sys, time
import numpy as np
times = []
for _ in range(3):  # the same size each time, freed in between
    start = time.perf_counter()
    block = np.empty({entries}, dtype=complex)
    block.fill(1.0)  # every page touched
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
    block.fill(2.0)
    refill = time.perf_counter() - start
    del block
print(json.dumps(dict(first=times[0], second=times[1], third=times[2], refill=refill)))
"""

#: the memory of the rows whose first call touches most of it fresh (peak resident, MiB, from
#: results/latest.txt): the 12-qubit noisy density matrix, the 22-qubit state on PyTorch
FIRST_TOUCH_MIB = (256, 1024)


def first_touch() -> list[dict]:
    """Touching fresh memory in a fresh process (NumPy only, no tyxonq): a block of
    :data:`FIRST_TOUCH_MIB` allocated and filled three times (freed in between), and filled once
    more in place. A first call that needs that much memory pays the first fill, a later call the
    third (or the refill, where the allocator keeps the block): on a virtual machine whose host
    hands it pages lazily the first is far slower."""
    rows = []
    for mib in FIRST_TOUCH_MIB:
        parts = fresh_process(_FIRST_TOUCH.format(entries=mib * 2 ** 20 // 16))
        rows.append({"section": "first_touch", "what": f"{mib} MiB, fresh process", **{
            f"{key}_s": value for key, value in parts.items()}})
    return rows


def host_callback() -> list[dict]:
    """A compiled program that only calls the host back for a ready array, against copying it
    (the allocator set as tyxonq sets it: unset, glibc hands back and faults in every 256 MiB
    buffer, 185 ms a call)."""
    import jax

    from tyxonq.numerics.allocator import prime_allocator

    prime_allocator()
    jax.config.update("jax_enable_x64", True)
    return [_host_callback_row(jax, log_entries) for log_entries in (22, 24)]


def _host_callback_row(jax: Any, log_entries: int) -> dict:
    ready = np.full(2 ** log_entries, 0.5 + 0.5j)
    shape = jax.ShapeDtypeStruct(ready.shape, ready.dtype)
    program = jax.jit(lambda x: jax.pure_callback(lambda _: ready, shape, x))
    angle = jax.numpy.zeros(())
    return {"section": "host_callback", "what": f"2^{log_entries} entries ({ready.nbytes >> 20} MiB)",
            "callback_s": best(lambda: program(angle).block_until_ready()), "numpy_copy_s": best(ready.copy)}


#: the 12-qubit noisy density matrix's output permutation (its contraction's last leg order)
DENSITY_PERMUTATION = (13, 15, 17, 21, 18, 22, 10, 7, 9, 5, 3, 0, 12, 14, 16, 20, 19, 23, 11, 6, 8, 4, 2, 1)


#: rows another backend computes with NumPy on its host twin, alternated with NumPy's own call
#: (workload, qubits, backend, rounds)
TWIN_ROWS = (("statevector", 22, "jax", 5), ("statevector", 24, "jax", 3), ("state_sampling", 20, "jax", 5),
             ("wide_sampling", 50, "jax", 5), ("mps_quench", 100, "jax", 5),
             ("lattice_sampling", 36, "jax", 2), ("energy_gradient", 12, "pytorch", 5),
             ("batched_energies_64", 10, "pytorch", 5), ("adam_vqe_100", 12, "pytorch", 5))


def twin_rows() -> list[dict]:
    """Each of :data:`TWIN_ROWS` on NumPy and on its backend alternated in one process (its rounds
    after a warm-up each), and NumPy's result handed back as that backend's arrays."""
    import tyxonq_engine
    from specs import make_spec

    import tyxonq as tq

    rows = []
    for workload, n, backend, rounds in TWIN_ROWS:
        spec = make_spec(workload, n)
        runs = {}
        for name in ("numpy", backend):
            runs[name], _ = tyxonq_engine.build(spec, name)
            runs[name]()  # the warm-up: plans, and JAX's compilation
        times: dict[str, list[float]] = {"numpy": [], backend: []}
        for _ in range(rounds):
            for name, run in runs.items():
                with tq.use_backend(name):
                    times[name].append(best(run, 1))
        with tq.use_backend("numpy"):
            result = runs["numpy"]()
        handback = best(functools.partial(_handed_back, backend, result), 20)
        rows.append({"section": "twin_rows", "what": f"{workload} {n}, {backend}",
                     "numpy_s": min(times["numpy"]), "numpy_slowest_s": max(times["numpy"]),
                     "backend_s": min(times[backend]), "backend_slowest_s": max(times[backend]),
                     "backend_over_numpy": min(times[backend]) / min(times["numpy"]),
                     "handback_s": handback})
    return rows


def _handed_back(backend: str, result: Any) -> Any:
    """``result``'s arrays (any nesting) as ``backend``'s."""
    if backend == "jax":
        import jax

        return jax.block_until_ready(jax.tree.map(jax.numpy.asarray, result))
    import torch
    from torch.utils._pytree import tree_map

    return tree_map(lambda leaf: torch.as_tensor(leaf) if isinstance(leaf, np.ndarray) else leaf, result)


def permutations() -> list[dict]:
    """One 24-leg, 256 MiB permutation: NumPy in one transpose and in two passes, PyTorch (two
    passes), XLA (one transpose: it fuses two back into one)."""
    import jax
    import torch

    from tyxonq.numerics import use_backend
    from tyxonq.numerics.moves import permutation_moves, permute

    jax.config.update("jax_enable_x64", True)
    legs = tuple(range(24))
    sizes = dict.fromkeys(legs, 2)
    array = np.full((2,) * 24, 0.5 + 0.5j)
    moves = permutation_moves(legs, DENSITY_PERMUTATION, sizes, max_ndim=32)
    tensor = torch.from_numpy(array)

    def two_passes(name: str, values: Any) -> float:
        with use_backend(name) as K:
            return best(lambda: K.reshape(permute(K, values, moves), (-1,)), 3)

    staged = {"numpy": two_passes("numpy", array), "pytorch": two_passes("pytorch", tensor)}
    transposed = jax.jit(lambda x: jax.numpy.transpose(x, DENSITY_PERMUTATION).reshape(-1))
    on_device = jax.numpy.asarray(array)
    return [{"section": "permutations", "what": "24 legs, 256 MiB (12-qubit density matrix)",
             "numpy_one_pass_s": best(lambda: np.ascontiguousarray(array.transpose(DENSITY_PERMUTATION)), 3),
             "numpy_two_passes_s": staged["numpy"], "numpy_copy_s": best(array.copy, 3),
             "pytorch_one_pass_s": best(lambda: tensor.permute(DENSITY_PERMUTATION).contiguous(), 3),
             "pytorch_two_passes_s": staged["pytorch"],
             "xla_s": best(lambda: transposed(on_device).block_until_ready(), 3)}]


#: (workload, qubits) of the PyTorch rows :func:`autograd_floor` measures
AUTOGRAD_FLOOR_ROWS = (("energy_gradient", 8), ("energy_gradient", 12))


def autograd_floor() -> list[dict]:
    """Each of :data:`AUTOGRAD_FLOOR_ROWS` on NumPy and PyTorch alternated (20 rounds of 5 calls
    after a warm-up; the fastest round's mean per call), and the bare autograd graph of its
    angles (:func:`_angle_graph`)."""
    import torch
    import tyxonq_engine
    from specs import ANSATZ_ROTATIONS, make_spec

    import tyxonq as tq

    torch.set_num_threads(2)
    rows = []
    for workload, n in AUTOGRAD_FLOOR_ROWS:
        spec = make_spec(workload, n)
        runs = {}
        for name in ("numpy", "pytorch"):
            runs[name], _ = tyxonq_engine.build(spec, name)
            runs[name]()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(20):
            for name, run in runs.items():
                with tq.use_backend(name):
                    times[name].append(best(functools.partial(_five, run), 1) / 5)
        graph = _angle_graph(torch, n, spec.layers, len(ANSATZ_ROTATIONS))
        floor = best(graph, 200)
        peer = _fastest_peers(exclude=("tc-jax",)).get((workload, n), ("", float("nan")))
        rows.append({"section": "autograd_floor", "what": f"{workload} {n}, pytorch",
                     "numpy_s": min(times["numpy"]), "pytorch_s": min(times["pytorch"]),
                     "angle_graph_s": floor, "numpy_plus_graph_s": min(times["numpy"]) + floor,
                     "angles": n * len(ANSATZ_ROTATIONS) * (spec.layers + 1),
                     f"{peer[0]}_committed_s": peer[1]})
    return rows


def _five(run: Callable[[], Any]) -> None:
    for _ in range(5):
        run()


def _angle_graph(torch: Any, n: int, layers: int, rotations: int) -> Callable[[], Any]:
    """Autograd's part alone for ``tq.templates.hardware_efficient``'s angles: the parameter
    tensor sliced per layer and rotation and split into angles (as the template and
    ``Circuit.layer`` do), the angles stacked into one node whose value and Jacobian are ready,
    and the gradient with respect to the parameters."""
    size = n * rotations * (layers + 1)
    params = torch.linspace(0.1, 1.0, size, dtype=torch.float64)
    jacobian = torch.ones(size, dtype=torch.float64)

    class Ready(torch.autograd.Function):
        @staticmethod
        def forward(angles: Any) -> Any:
            return (angles.detach() * 0).sum()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, cotangent: Any) -> Any:
            return cotangent * jacobian

    def graph() -> Any:
        leaf = params.detach().requires_grad_()
        with torch.enable_grad():
            angles = []
            per_layer = n * rotations
            for layer in range(layers + 1):
                block = leaf[layer * per_layer:(layer + 1) * per_layer]
                for r in range(rotations):
                    angles += block[r::rotations].unbind()
            value = Ready.apply(torch.stack(angles))
            return torch.autograd.grad(value, leaf)

    return graph


def mps_splits() -> list[dict]:
    """The quench on NumPy, its splits replayed bare (:func:`_bare_splits`), and qiskit-aer's."""
    import peers.qiskit_aer as aer
    import tyxonq_engine
    from specs import make_spec

    import tyxonq.numerics.numpy_backend as numpy_backend

    spec = make_spec("mps_quench", 100)
    run, _ = tyxonq_engine.build(spec, "numpy")
    quench = best(run, 5)
    recorded: list[np.ndarray] = []
    original = numpy_backend.reduced_svd

    def recording(a: np.ndarray) -> Any:
        recorded.append(np.array(a))
        return original(a)

    numpy_backend.reduced_svd = recording
    try:
        run()
    finally:
        numpy_backend.reduced_svd = original
    svds = best(lambda: [original(a) for a in recorded], 5)
    bare = best(functools.partial(_bare_splits, recorded, original), 5)
    aer_run, _ = aer.build(spec, None)
    return [{"section": "mps_splits", "what": "mps_quench 100, numpy", "quench_s": quench,
             "splits": len(recorded), "svds_alone_s": svds, "bare_splits_s": bare,
             "qiskit_aer_s": best(aer_run, 5)}]


def _bare_splits(matrices: list[np.ndarray], svd: Callable) -> None:
    """Each split with nothing around it: the gate's product, the SVD, the rank, the truncation."""
    gate = np.eye(4, dtype=complex)
    for a in matrices:
        rows, columns = a.shape
        theta = (gate @ a.reshape(4, -1)).reshape(rows, columns) if rows % 2 == 0 and columns % 2 == 0 \
            else a
        u, s, vh = svd(theta)
        rank = max(1, int(np.count_nonzero(s > 1e-12)))
        u[:, :rank], s[:rank, None] * vh[:rank]


def _line(row: dict) -> str:
    def shown(key: str, value: Any) -> str:
        if key.endswith("_s"):
            return f"{key[:-2]}={value * 1e3:.2f} ms" if value < 1 else f"{key[:-2]}={value:.2f} s"
        return f"{key}={value:.2f}" if isinstance(value, float) else f"{key}={value}"

    fields = ", ".join(shown(key, value) for key, value in row.items() if key not in ("section", "what"))
    return f"{row['section']:<18} {row['what']:<44} {fields}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=SECTIONS)
    parser.add_argument("--output", default=str(HERE / "results" / "floors.json"))
    args = parser.parse_args(argv)
    rows: list[dict] = []
    for section in args.sections:
        found = globals()[section]()
        for row in found:
            print(_line(row), flush=True)
        rows += found
    output = pathlib.Path(args.output)
    if output.exists():  # keep the sections not run now
        kept = [row for row in json.loads(output.read_text())["rows"]
                if row["section"] in SECTIONS and row["section"] not in args.sections]
        rows = sorted(kept + rows, key=lambda row: SECTIONS.index(row["section"]))
    output.write_text(json.dumps({"machine": f"{os.cpu_count()} cores", "rows": rows}, indent=1) + "\n")
    output.with_suffix(".txt").write_text("\n".join(_line(row) for row in rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
