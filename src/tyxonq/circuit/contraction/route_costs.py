"""What each route to a result costs, estimated before either is planned.

A Pauli sum's expectation has several exact routes: every term's backward light cone contracted
on its own (``"lightcone"``), or the one state (a state vector, or for a density matrix the one
doubled network) computed and every term read from it (``"state"``). Which is fastest depends on
the circuit (how wide and deep the cones are, how many terms) and on the machine (what a backend
operation costs next to a multiply-add, and on JAX how long compiling takes). A
:class:`RouteCost` counts what a route does:

- ``tensors``: the tensors of its networks (a state-vector sweep: its operations), each of which
  costs fixed bookkeeping per call (binding, a pairwise step) and, on a compiling backend, some
  compile time once;
- ``madds``: complex multiply-adds: a sweep's, counted from the operations
  (:func:`state_cost`), or a network's along opt_einsum's greedy path (:func:`network_cost`:
  milliseconds for hundreds of tensors, where planning searches for seconds; the planned path
  costs at most this).

:func:`lightcone_floor` is the light cones' bookkeeping alone, counted from the light cones
without building a network: when the state costs less than that, the cones need no closer look.
:class:`MachineRates` turn the counts into seconds (:meth:`RouteCost.seconds`); the simulators
measure the rates on the machine (:mod:`tyxonq.circuit.calibration`) and take the cheaper route.

Examples
--------
>>> from tyxonq.circuit.operations.operation import Operation
>>> ops = [Operation("h", (0,)), Operation("cx", (0, 1)), Operation("rx", (2,), (0.3,))]
>>> lightcone_floor(ops, ["ZII", "IIZ"], density=False).tensors
10
>>> state_cost(3, ops, 2, density=False).madds
112.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import opt_einsum

from ..operations.operation import Operation
from .lightcone import light_cone
from .network import Network
from .paths import path_cost

__all__ = ["MachineRates", "RouteCost", "RouteChoice", "CALLS_PER_COMPILE", "lightcone_floor", "state_cost",
           "network_cost", "readout_madds"]

#: A compiled program's compile time is counted once per this many calls of it (a variational loop
#: runs a compiled energy or gradient hundreds of times; a program run once is better left eager).
CALLS_PER_COMPILE = 100


@dataclass(frozen=True)
class MachineRates:
    """What computing costs on this machine, for one backend and precision.

    Attributes
    ----------
    tensor_seconds : float
        Per network tensor of an eager call: binding its values, its pairwise step, the Python
        around them.
    madds_per_second : float
        Complex multiply-adds per second applying a small matrix to many amplitudes (a gate to a
        state: as fast as memory allows).
    compile_seconds_per_tensor : float
        On a compiling backend (JAX): tracing, planning and compiling per tensor, once per
        program; ``0.0`` where nothing compiles.
    compiled_tensor_seconds : float
        Per tensor of a call of a compiled program (``0.0`` where nothing compiles).
    source : str
        ``"measured"`` on this machine, or ``"reference"`` (the project's reference machine).
    """

    tensor_seconds: float
    madds_per_second: float
    compile_seconds_per_tensor: float = 0.0
    compiled_tensor_seconds: float = 0.0
    source: str = "measured"

    def __post_init__(self) -> None:
        for name in ("tensor_seconds", "madds_per_second", "compile_seconds_per_tensor",
                     "compiled_tensor_seconds"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or value != value:
                raise ValueError(f"MachineRates.{name} must be a non-negative number; got {value!r}")
        if self.madds_per_second <= 0:
            raise ValueError(f"MachineRates.madds_per_second must be positive; got {self.madds_per_second!r}")


@dataclass(frozen=True)
class RouteCost:
    """The work one route to a result does: ``tensors`` (per-call bookkeeping and, compiled,
    compile time each) and ``madds`` (complex multiply-adds); ``floor``: a lower bound (the
    light cones' bookkeeping, their arithmetic not yet counted)."""

    route: str
    tensors: int
    madds: float
    floor: bool = False

    def seconds(self, rates: MachineRates, compiling: bool = False) -> float:
        """The estimated time of one call; ``compiling``: a call of a compiled program, its
        compile time shared between :data:`CALLS_PER_COMPILE` calls.

        Examples
        --------
        >>> rates = MachineRates(tensor_seconds=1e-5, madds_per_second=1e9)
        >>> round(RouteCost("lightcone", tensors=100, madds=1e6).seconds(rates), 6)
        0.002
        """
        arithmetic = self.madds / rates.madds_per_second
        if compiling:
            per_tensor = rates.compile_seconds_per_tensor / CALLS_PER_COMPILE + rates.compiled_tensor_seconds
            return self.tensors * per_tensor + arithmetic
        return self.tensors * rates.tensor_seconds + arithmetic


@dataclass(frozen=True)
class RouteChoice:
    """A route chosen by estimated cost: ``what`` was computed, ``chosen`` how, ``estimates``:
    every candidate route with its estimated seconds per call; ``lower_bounds``: the routes whose
    estimate is a lower bound (it already exceeded the chosen one's).

    Examples
    --------
    >>> estimates = (("state", 0.002), ("lightcone", 0.03))
    >>> print(RouteChoice("pauli_expectations", "state", estimates, lower_bounds=("lightcone",)))
    pauli_expectations: state (estimated 0.002 s; lightcone at least 0.03 s)
    """

    what: str
    chosen: str
    estimates: tuple[tuple[str, float], ...]
    lower_bounds: tuple[str, ...] = ()

    def __str__(self) -> str:
        others = ", ".join(f"{route} {'at least ' * (route in self.lower_bounds)}{seconds:.3g} s"
                           for route, seconds in self.estimates if route != self.chosen)
        mine = dict(self.estimates)[self.chosen]
        return f"{self.what}: {self.chosen} (estimated {mine:.3g} s; {others})"


def _applied(operation: Operation, amplitudes: float, density: bool) -> tuple[int, float]:
    """Tensors and multiply-adds of one operation applied to ``amplitudes`` amplitudes (of a state
    vector, or of a density matrix: a gate on both sides, a channel as one superoperator)."""
    size = 2 ** len(operation.qubits)
    if not density:
        return 1, amplitudes * size
    if operation.channel is not None:
        return 1, amplitudes * size * size
    return 2, 2 * amplitudes * size


def state_cost(num_qubits: int, operations: Sequence[Operation], num_strings: int,
               density: bool) -> RouteCost:
    """The ``"state"`` route swept: every operation applied to the whole state (a density
    matrix's ``4^n`` entries when ``density``), then each of ``num_strings`` Pauli strings read
    from it (a state vector: one pass per qubit; a density matrix: ``2^n`` entries)."""
    amplitudes = float(4 ** num_qubits if density else 2 ** num_qubits)
    tensors, madds = 0, 0.0
    for operation in operations:
        t, m = _applied(operation, amplitudes, density)
        tensors, madds = tensors + t, madds + m
    readout = readout_madds(num_qubits, num_strings, density)
    return RouteCost("state", tensors + 2 * num_strings, madds + readout)


def readout_madds(num_qubits: int, num_strings: int, density: bool) -> float:
    """Multiply-adds of reading ``num_strings`` Pauli strings from a computed state: a state
    vector's ``2^n`` amplitudes once per qubit of each string, a density matrix's ``2^n`` entries."""
    return float(2 ** num_qubits) * num_strings * (1 if density else num_qubits)


def lightcone_floor(operations: Sequence[Operation], strings: Sequence[str], density: bool) -> RouteCost:
    """The ``"lightcone"`` route's bookkeeping, no arithmetic: per string, its backward light
    cone's operations in a ket and a bra copy (a density matrix: gates on both sides, a channel
    once), the cone's inputs and the string's factors. The cones' networks hold at least these
    tensors."""
    tensors = 0
    for string in strings:
        measured = [q for q, letter in enumerate(string) if letter != "I"]
        if not measured:
            continue
        cone = light_cone(operations, measured, [q for q in measured if string[q] == "Z"])
        width = len({q for index in cone for q in operations[index].qubits} | set(measured))
        tensors += 2 * width + len(measured)
        for index in cone:
            tensors += 2 if not density or operations[index].channel is None else 1
    return RouteCost("lightcone", tensors, 0.0, floor=True)


def network_cost(route: str, networks: Sequence[Network], extra_madds: float = 0.0) -> RouteCost:
    """The work of contracting ``networks``: their tensors, and the multiply-adds of a greedy
    path for each (cotengrust's where installed, else opt_einsum's), plus ``extra_madds``."""
    tensors, madds = 0, float(extra_madds)
    for network in networks:
        symbol = {leg: opt_einsum.get_symbol(i) for i, leg in
                  enumerate(dict.fromkeys([leg for leaf in network.leaves for leg in leaf.legs]
                                          + list(network.output)))}
        inputs = [tuple(symbol[leg] for leg in leaf.legs) for leaf in network.leaves]
        output = tuple(symbol[leg] for leg in network.output)
        sizes = {letter: 2 for letter in symbol.values()}
        tensors += len(inputs)
        if len(inputs) > 1:
            madds += path_cost([set(term) for term in inputs], set(output), sizes,
                               _greedy_path(inputs, output, sizes), write_weight=0)
    return RouteCost(route, tensors, madds)


def _greedy_path(inputs: list[tuple[str, ...]], output: tuple[str, ...], sizes: dict) -> list:
    try:
        from cotengrust import optimize_greedy
    except ImportError:
        return opt_einsum.paths.greedy([set(term) for term in inputs], set(output), sizes)
    return optimize_greedy(inputs, output, sizes, use_ssa=False)
