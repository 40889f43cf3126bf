"""Rates measured on this machine, and the route each result takes by them.

Where a result has more than one exact route (a Pauli sum's terms on their light cones, or read
from the one state), the simulators estimate each route's work from the circuit's structure
(:mod:`tyxonq.circuit.contraction.route_costs`) and take the one these rates make cheapest.

The rates are measured once per process, backend and precision, the first time a choice needs
them: one that the reference machine's rates (:data:`REFERENCE_RATES`) leave within
:data:`CLEAR_MARGIN`. Measuring takes 0.1-0.15 s, and half a second more on JAX the first time a
compiled program chooses (two compilations are timed). On a large state it times a fused
4-qubit block as a sweep applies it (multiply-adds per second), a two-qubit gate as a
contraction's pairwise step applies it (cost units per second) and one Pauli string read from it
(element-wise passes per second), and light-cone expectations of two probe circuits, eagerly
and, on JAX, compiled (seconds per network tensor: the slope between the probes). It runs in an
empty context and, inside a JAX trace, on a helper thread: outside anything the caller is in.

With the persistent cache on (:func:`tyxonq.set_persistent_cache`) the measured rates are kept
there (:mod:`~tyxonq.circuit.rates_store`), and later processes on the same machine, backend and
thread settings read them instead of measuring.

Every route is exact, so the choice changes only speed (and rounding, at 1e-15). To make it the
same in every process, pin the rates: ``tq.set_machine_rates("reference")`` (the project's
reference machine, what the test suite uses) or ``tq.set_machine_rates(tq.MachineRates(...))``.
:func:`tyxonq.rehearse` reports each choice with the estimates behind it.
"""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..numerics import get_backend, use_backend
from ..numerics.cache_registry import register_cache
from ..numerics.distributed import communicator
from ..numerics.protocol import ArrayBackend
from ..operators.state_expectation import apply_pauli_string
from .contraction.network import expectation_network
from .contraction.paths import WRITE_WEIGHT
from .contraction.rehearsal import record
from .contraction.route_costs import MachineRates, RouteChoice, RouteCost, network_cost, readout_passes
from .operations.fusion import MAX_BLOCK_QUBITS
from .rates_store import load_rates, store_rates

__all__ = ["machine_rates", "set_machine_rates", "cheapest_route", "provisional_rates", "REFERENCE_RATES",
           "register_probe"]

#: Measured on the project's reference machine (2 cores, AMD EPYC, complex128) by
#: :func:`machine_rates` (three runs each, rounded); other backends use NumPy's.
REFERENCE_RATES = {
    "numpy": MachineRates(tensor_seconds=6.3e-6, madds_per_second=6.5e9, units_per_second=6e9,
                          passes_per_second=4.5e8, source="reference"),
    "pytorch": MachineRates(tensor_seconds=6.6e-6, madds_per_second=2.5e9, units_per_second=1e10,
                            passes_per_second=4e8, source="reference"),
    "jax": MachineRates(tensor_seconds=6.5e-6, madds_per_second=2.0e9, units_per_second=1e10,
                        compile_seconds_per_tensor=1e-2, compiled_tensor_seconds=2e-6,
                        passes_per_second=8e8, source="reference"),
}
_DEFAULT_REFERENCE = REFERENCE_RATES["numpy"]

#: the probes: brickworks of PROBE_QUBITS qubits and of each of PROBE_LAYERS layers, whose ``<Z>`` on
#: PROBE_QUBIT is timed; the time per tensor is the slope between them (a call's fixed cost cancels)
PROBE_QUBITS, PROBE_LAYERS, PROBE_QUBIT = 12, (2, 8), 6
#: the layers of the two probes compiled on JAX (fewer: compiling costs milliseconds per tensor)
COMPILED_PROBE_LAYERS = (1, 3)
#: multiply-adds are timed as a fused block of MAX_BLOCK_QUBITS qubits (a sweep's largest and
#: usual block: small matrices over many amplitudes) applied to a state of this many qubits,
#: element-wise passes as one Pauli X read from it, and a contraction's cost units as a two-qubit
#: gate contracted into two legs of the state held as STEP_SHAPE (five dimensions: within every
#: backend's limit), legs STEP_AXES: a pairwise step, the state transposed, then multiplied. 2^20
#: amplitudes (16 MiB) are past the caches, where arithmetic decides between routes (at 2^18
#: PyTorch's steps ran 1.8 times faster per unit).
GATE_QUBITS = 20
#: each of those three is timed this many times after a warm-up (the median counts): a step takes
#: 10-13 ms on the reference machine, and three of each keep the probe near 0.15 s
ARRAY_REPEATS = 3
STEP_SHAPE, STEP_AXES = (2 ** 7, 2, 2 ** 6, 2, 2 ** 5), (1, 3)

#: a choice whose cheapest route is this many times cheaper than the next under the reference rates
#: is made without measuring this machine's (their ratios differ by less between machines)
CLEAR_MARGIN = 4

_measured: dict[tuple, MachineRates] = {}
_lock = threading.Lock()
_pinned: list[Any] = [None]  # None (measure), "reference" or a MachineRates
_probe: list[Callable[[Any], Any] | None] = [None]
register_cache(f"{__name__}._measured", lambda: len(_measured), _measured.clear)


def register_probe(circuit_class: type) -> None:
    """The circuit class whose light cones the calibration times (the simulators register
    :class:`~tyxonq.Circuit` when they load)."""
    def probe(angles: Any, layers: int) -> Any:
        circuit = circuit_class(PROBE_QUBITS)
        for layer in range(layers):
            circuit.layer("ry", range(PROBE_QUBITS), angles[layer * PROBE_QUBITS:(layer + 1) * PROBE_QUBITS])
            circuit.layer("cz", [(q, q + 1) for q in range(layer % 2, PROBE_QUBITS - 1, 2)])
        return circuit

    _probe[0] = probe


def set_machine_rates(rates: MachineRates | str | None = None) -> None:
    """Pin the rates route choices use: a :class:`~tyxonq.MachineRates` (every backend),
    ``"reference"`` (:data:`REFERENCE_RATES`) or ``None`` / ``"measured"`` (measure on this
    machine, the default).

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.set_machine_rates("reference")
    >>> tq.machine_rates().source
    'reference'
    >>> tq.set_machine_rates(None)
    """
    if rates == "measured":
        rates = None
    if rates is not None and rates != "reference" and not isinstance(rates, MachineRates):
        raise ValueError(f"rates must be a tq.MachineRates, 'reference', 'measured' or None; got {rates!r}")
    _pinned[0] = rates


def machine_rates(backend: ArrayBackend | None = None) -> MachineRates:
    """The rates of ``backend`` (the active one by default) on this machine: pinned, or measured
    once per process (per backend kind, precision and device; with the persistent cache on, once
    per machine and thread settings: :mod:`~tyxonq.circuit.rates_store`). The ranks of a
    distributed run use the reference rates unless pinned otherwise, so every rank takes the same
    routes (their shares of a result meet in the same collectives).

    Examples
    --------
    >>> import tyxonq as tq
    >>> rates = tq.machine_rates()
    >>> rates.madds_per_second > 0 and rates.tensor_seconds > 0
    True
    """
    K = get_backend() if backend is None else backend
    rates = _known_rates(K)
    if rates is not None:
        return rates
    timing_compiles = K.capabilities.jit == "jax.jit" and K.compiling()
    with _lock:
        rates = _measured[_rates_key(K)] = _stored_or_measured(K, timing_compiles)
    return rates


def _stored_or_measured(K: ArrayBackend, timing_compiles: bool) -> MachineRates:
    """The rates the persistent cache keeps for ``K`` on this machine (with compiled rates, when
    ``timing_compiles``), else measured now and kept there."""
    stored = load_rates(K)
    if stored is not None and (stored.compile_seconds_per_tensor or not timing_compiles):
        return stored
    rates = _measure_aside(K, timing_compiles=timing_compiles)
    if rates.source == "measured":
        store_rates(K, rates)
    return rates


def _rates_key(K: ArrayBackend) -> tuple:
    return (K.name, K.precision, K.capabilities.device)


def _known_rates(K: ArrayBackend) -> MachineRates | None:
    """The rates :func:`machine_rates` returns without measuring, or ``None`` when it would
    measure now."""
    pinned = _pinned[0]
    if isinstance(pinned, MachineRates):
        return pinned
    if pinned == "reference" or _probe[0] is None or communicator().size > 1:
        return REFERENCE_RATES.get(K.name, _DEFAULT_REFERENCE)
    rates = _measured.get(_rates_key(K))
    if rates is None:
        return None
    uncompiled = K.capabilities.jit == "jax.jit" and K.compiling() and not rates.compile_seconds_per_tensor
    return None if uncompiled else rates


def provisional_rates(K: ArrayBackend) -> MachineRates:
    """The rates known without measuring: pinned or measured already, else the reference
    machine's (what a choice that is clear by :data:`CLEAR_MARGIN` needs)."""
    return _known_rates(K) or REFERENCE_RATES.get(K.name, _DEFAULT_REFERENCE)


def cheapest_route(what: str, costs: Sequence[RouteCost], K: ArrayBackend | None = None) -> str:
    """The route of ``costs`` with the least estimated time on this machine (the first on a tie);
    a rehearsal records the choice and every estimate. This machine's rates are measured only for
    a choice they could change: one that the reference rates do not settle by
    :data:`CLEAR_MARGIN`.

    Examples
    --------
    >>> from tyxonq.circuit.contraction.route_costs import RouteCost
    >>> cheapest_route("demo", [RouteCost("state", 10, 1e9), RouteCost("lightcone", 500, 1e5)])
    'lightcone'
    """
    K = get_backend() if K is None else K
    compiling = K.compiling()
    rates = provisional_rates(K)
    estimates = tuple((cost.route, cost.seconds(rates, compiling)) for cost in costs)
    ordered = sorted(seconds for _, seconds in estimates)
    if _known_rates(K) is None and len(ordered) > 1 and CLEAR_MARGIN * ordered[0] > ordered[1]:
        rates = machine_rates(K)  # close under the reference rates: this machine's decide
        estimates = tuple((cost.route, cost.seconds(rates, compiling)) for cost in costs)
    chosen = min(estimates, key=lambda estimate: estimate[1])[0]
    floors = tuple(cost.route for cost in costs if cost.floor)
    record("choice", choice=RouteChoice(what, chosen, estimates, floors))
    return chosen


def _measure_aside(K: ArrayBackend, timing_compiles: bool) -> MachineRates:
    """:func:`_measure` in an empty context (no rehearsal, backend override or sharing of the
    caller's applies), and on a helper thread while a JAX program is being traced (JAX's trace
    state is per thread; elsewhere the caller's thread, which every backend supports)."""
    found: list[Any] = []

    def run() -> None:
        try:
            with use_backend(K):
                found.append(_measure(K, timing_compiles))
        except Exception as error:  # noqa: BLE001 - reported below, with the reference used instead
            found.append(error)

    if K.compiling():
        worker = threading.Thread(target=run, name="tyxonq-calibration")
        worker.start()
        worker.join()
    else:
        contextvars.Context().run(run)
    if isinstance(found[0], Exception):
        import warnings

        warnings.warn(f"measuring this machine's rates failed ({found[0]!r}); route choices use the "
                      "reference machine's rates (results are unaffected, only speed may be)",
                      RuntimeWarning, stacklevel=3)
        return REFERENCE_RATES.get(K.name, _DEFAULT_REFERENCE)
    return found[0]


def _timings(call: Callable[[], Any], repeats: int) -> np.ndarray:
    """The seconds of ``repeats`` calls."""
    times = np.empty(repeats)
    for repeat in range(repeats):
        start = time.perf_counter()
        call()
        times[repeat] = time.perf_counter() - start
    return times


def _measure(K: ArrayBackend, timing_compiles: bool) -> MachineRates:
    rng = np.random.default_rng(0)
    size = 2 ** MAX_BLOCK_QUBITS
    # 16 MiB of one value (the rates do not depend on the values; 1M random draws cost 15-20 ms)
    state = K.asarray(np.full((2 ** GATE_QUBITS // size, size), 0.6 + 0.8j), K.dtype)
    block = K.asarray(rng.normal(size=(size, size)) + 0j, K.dtype)
    product = lambda: K.to_numpy(K.matmul(state, block))  # noqa: E731
    product()
    madds_per_second = 2 ** GATE_QUBITS * size / float(np.median(_timings(product, ARRAY_REPEATS)))
    tensor = K.reshape(state, STEP_SHAPE)
    pair = K.asarray(rng.normal(size=(2, 2, 2, 2)) + 0j, K.dtype)  # a two-qubit gate
    step = lambda: K.to_numpy(K.tensordot(tensor, pair, axes=(STEP_AXES, (0, 1))))  # noqa: E731
    step()
    units = 2 ** GATE_QUBITS * 4 + WRITE_WEIGHT * 2 ** GATE_QUBITS  # multiply-adds + 64 x entries written
    units_per_second = units / float(np.median(_timings(step, ARRAY_REPEATS)))
    vector = K.reshape(state, (2 ** GATE_QUBITS,))
    flipped = "I" * (GATE_QUBITS // 2) + "X" + "I" * (GATE_QUBITS - GATE_QUBITS // 2 - 1)
    read = lambda v: K.sum(K.conj(v) * apply_pauli_string(K, v, flipped))  # noqa: E731
    if K.capabilities.compiles_whole_functions:  # JAX runs state routes as compiled programs
        read = K.jit(read)
    readout = lambda: K.to_numpy(read(vector))  # noqa: E731
    readout()
    passes = readout_passes(GATE_QUBITS, [flipped], density=False)  # the flip and the product
    passes_per_second = passes / float(np.median(_timings(readout, ARRAY_REPEATS)))

    probe = _probe[0]
    angles = rng.uniform(-np.pi, np.pi, PROBE_QUBITS * max(PROBE_LAYERS))

    costs: dict[int, RouteCost] = {}

    def probe_cost(layers: int) -> RouteCost:
        """The probe's light-cone network's work, counted once per probe."""
        if layers not in costs:
            operations = list(probe(angles, layers).operations)
            costs[layers] = network_cost("lightcone", [expectation_network(
                PROBE_QUBITS, operations, False, ((PROBE_QUBIT,),), (True,))])
        return costs[layers]

    def per_tensor(small: tuple[int, float], large: tuple[int, float]) -> float:
        """The slope between two probes' times (a call's fixed cost cancels), less arithmetic."""
        (few, short), (many, long) = small, large
        (cost_few, cost_many) = probe_cost(few), probe_cost(many)
        arithmetic = (cost_many.units - cost_few.units) / units_per_second
        return max(long - short - arithmetic, 0.0) / (cost_many.tensors - cost_few.tensors)

    def eager_seconds(layers: int) -> tuple[int, float]:
        expectation = lambda: K.to_numpy(probe(angles, layers).expectation_ps(z=[PROBE_QUBIT]))  # noqa: E731
        expectation()
        return layers, float(_timings(expectation, 5).min())

    def compiled_seconds(layers: int) -> tuple[tuple[int, float], tuple[int, float]]:
        """``(layers, compile seconds), (layers, seconds per compiled call)``."""
        function = K.jit(lambda theta: probe(theta, layers).expectation_ps(z=[PROBE_QUBIT]))
        theta = K.asarray(angles)
        start = time.perf_counter()
        K.to_numpy(function(theta))
        first = time.perf_counter() - start
        steady = float(_timings(lambda: K.to_numpy(function(theta)), 5).min())
        return (layers, first - steady), (layers, steady)

    eager = [eager_seconds(layers) for layers in PROBE_LAYERS]
    compile_seconds = compiled_tensor_seconds = 0.0
    if timing_compiles:
        (compile_few, run_few), (compile_many, run_many) = (compiled_seconds(layers)
                                                            for layers in COMPILED_PROBE_LAYERS)
        compile_seconds = per_tensor(compile_few, compile_many)
        compiled_tensor_seconds = per_tensor(run_few, run_many)
    return MachineRates(tensor_seconds=per_tensor(*eager), madds_per_second=madds_per_second,
                        units_per_second=units_per_second, compile_seconds_per_tensor=compile_seconds,
                        compiled_tensor_seconds=compiled_tensor_seconds, passes_per_second=passes_per_second)
