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
- ``madds``: a sweep's complex multiply-adds, counted from its fused blocks (:func:`sweep_cost`);
- ``passes``: element-wise passes over a state's amplitudes (diagonal blocks, reading Pauli
  strings: :func:`readout_passes`), counted in amplitudes;
- ``units``: a network's cost along a greedy path, in the planner's units (multiply-adds + 64 x
  entries written: :func:`network_cost`, milliseconds for hundreds of tensors, where planning
  searches for seconds; the planned path costs at most this).

:func:`lightcone_floor` is the light cones' bookkeeping alone, counted from the light cones
without building a network (once per group of cones of one structure, which share a plan and run
as one batch: :func:`cone_groups`): when the state costs much less than that, the cones need no
closer look; else one network per group is built and costed (:func:`network_cost`).
:class:`MachineRates` turn the counts into seconds (:meth:`RouteCost.seconds`); the simulators
measure the rates on the machine (:mod:`tyxonq.circuit.calibration`) and take the cheaper route.

Examples
--------
>>> from tyxonq.circuit.operations.operation import Operation
>>> ops = [Operation("h", (0,)), Operation("cx", (0, 1)), Operation("rx", (2,), (0.3,))]
>>> lightcone_floor(cone_groups(ops, ["ZII", "IIZ"], density=False)).tensors
10
>>> sweep_cost(3, [(2, False), (1, True)], ["ZII", "IIZ"]).passes
16.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import opt_einsum

from ...operators.pauli_action import GROUPED_QUBITS
from ...operators.state_expectation import flipped_qubits
from ..operations.operation import Operation
from .canonical import relabelled_structure
from .elimination import ELIMINATION_MAX_LEGS, elimination_path
from .lightcone import light_cone
from .network import Network
from .paths import CONTRACTION_RATE, greedy_path, path_cost
from .simplify import rank_simplify

__all__ = ["MachineRates", "RouteCost", "RouteChoice", "CALLS_PER_COMPILE", "ConeGroup", "cone_groups",
           "lightcone_floor", "sweep_cost", "network_cost", "readout_passes"]

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
        Complex multiply-adds per second applying a small matrix to many amplitudes (a fused
        block to a state, as a sweep does).
    units_per_second : float
        Cost units per second of a contraction's pairwise steps, the unit the planner minimises
        (a multiply-add, or 1/64 of an entry written: steps transpose their operands, so they run
        at a fraction of a sweep's rate); ``None``: the planner's own assumption,
        :data:`~tyxonq.circuit.contraction.paths.CONTRACTION_RATE`.
    compile_seconds_per_tensor : float
        On a compiling backend (JAX): tracing, planning and compiling per tensor, once per
        program; ``0.0`` where nothing compiles.
    compiled_tensor_seconds : float
        Per tensor of a call of a compiled program (``0.0`` where nothing compiles).
    passes_per_second : float
        Amplitudes per second of element-wise passes over a state (a product with a diagonal, a
        flip of one qubit, a sum: what reading Pauli strings does); ``None``: ``madds_per_second``.
    source : str
        ``"measured"`` on this machine, or ``"reference"`` (the project's reference machine).
    """

    tensor_seconds: float
    madds_per_second: float
    units_per_second: float | None = None
    compile_seconds_per_tensor: float = 0.0
    compiled_tensor_seconds: float = 0.0
    passes_per_second: float | None = None
    source: str = "measured"

    def __post_init__(self) -> None:
        if self.units_per_second is None:
            object.__setattr__(self, "units_per_second", float(CONTRACTION_RATE))
        if self.passes_per_second is None:
            object.__setattr__(self, "passes_per_second", self.madds_per_second)
        for name in ("tensor_seconds", "madds_per_second", "units_per_second", "compile_seconds_per_tensor",
                     "compiled_tensor_seconds", "passes_per_second"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or value != value:
                raise ValueError(f"MachineRates.{name} must be a non-negative number; got {value!r}")
        for name in ("madds_per_second", "units_per_second", "passes_per_second"):
            if getattr(self, name) <= 0:
                raise ValueError(f"MachineRates.{name} must be positive; got {getattr(self, name)!r}")


@dataclass(frozen=True)
class RouteCost:
    """The work one route to a result does: ``tensors`` (per-call bookkeeping and, compiled,
    compile time each), ``madds`` (complex multiply-adds applying matrices to a state, as a sweep
    does), ``units`` (a contraction's pairwise steps: multiply-adds + 64 x entries written) and
    ``passes`` (amplitudes swept element-wise); ``floor``: a lower bound (the light cones'
    bookkeeping, their arithmetic not yet counted)."""

    route: str
    tensors: int
    madds: float
    units: float = 0.0
    floor: bool = False
    passes: float = 0.0

    def seconds(self, rates: MachineRates, compiling: bool = False) -> float:
        """The estimated time of one call; ``compiling``: a call of a compiled program, its
        compile time shared between :data:`CALLS_PER_COMPILE` calls.

        Examples
        --------
        >>> rates = MachineRates(tensor_seconds=1e-5, madds_per_second=1e9)
        >>> round(RouteCost("lightcone", tensors=100, madds=1e6).seconds(rates), 6)
        0.002
        """
        arithmetic = (self.madds / rates.madds_per_second + self.units / rates.units_per_second
                      + self.passes / rates.passes_per_second)
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


def sweep_cost(num_qubits: int, blocks: Sequence[tuple[int, bool]], strings: Sequence[str]) -> RouteCost:
    """The ``"state"`` route of a state vector swept in fused blocks, ``(qubits, diagonal)`` each
    (a dense block of ``k`` qubits: ``2^n 2^k`` multiply-adds; a diagonal one: a pass over the
    ``2^n`` amplitudes), then the strings read from it.

    Examples
    --------
    >>> cost = sweep_cost(3, [(2, False), (1, True)], ["ZII"])
    >>> cost.madds, cost.passes
    (32.0, 16.0)
    """
    amplitudes = float(2 ** num_qubits)
    madds = sum(amplitudes * 2 ** k for k, diagonal in blocks if not diagonal)
    passes = sum(amplitudes for _, diagonal in blocks if diagonal)
    return RouteCost("state", len(blocks) + 2 * len(strings), madds,
                     passes=passes + readout_passes(num_qubits, strings, density=False))


def readout_passes(num_qubits: int, strings: Sequence[str], density: bool) -> float:
    """Amplitudes swept reading Pauli strings from a computed state. A state vector's strings are
    applied grouped by the qubits they flip (X, Y: :mod:`~tyxonq.operators.pauli_action`):
    per group one product with its summed diagonal and one flip of all its flipped qubits, over
    ``2^n`` amplitudes (past :data:`~tyxonq.operators.pauli_action.GROUPED_QUBITS` qubits
    string by string: one pass per Z or Y, one flip and one product); a density matrix's strings
    are one gather of ``2^n`` entries each.

    Examples
    --------
    >>> readout_passes(3, ["ZZI", "IZZ", "XXI", "YYI"], density=False)  # groups: (), (0, 1)
    24.0
    >>> readout_passes(3, ["ZZI", "IZZ"], density=True)
    16.0
    """
    if density:
        return float(2 ** num_qubits) * len(strings)
    if num_qubits > GROUPED_QUBITS:  # string by string: signs and phases, one flip, the product
        return float(2 ** num_qubits) * sum(string.count("Z") + string.count("Y")
                                            + ("X" in string or "Y" in string) + 1 for string in strings)
    groups = {flipped_qubits(string) for string in strings}
    return float(2 ** num_qubits) * sum(1 + bool(flips) for flips in groups)


@dataclass(frozen=True)
class ConeGroup:
    """Strings (their positions) whose light cones have one structure up to a cyclic shift of
    the qubits (taking the first measured qubit to 0) and an order-preserving renaming: their
    networks share a plan and are contracted as one batch, so their bookkeeping is paid once.
    ``tensors``: one cone's, counted from its operations."""

    members: tuple[int, ...]
    tensors: int


def cone_groups(operations: Sequence[Operation], strings: Sequence[str], density: bool) -> list[ConeGroup]:
    """The strings' backward light cones grouped by structure (identity strings have none).

    Examples
    --------
    >>> from tyxonq.circuit.operations.operation import Operation
    >>> ops = [Operation("ry", (q,), (0.1 * q,)) for q in range(4)]
    >>> [group.members for group in cone_groups(ops, ["ZIII", "IZII", "IIXI", "IIII"], density=False)]
    [(0, 1), (2,)]
    """
    groups: dict[tuple, list] = {}
    for position, string in enumerate(strings):
        measured = [q for q, letter in enumerate(string) if letter != "I"]
        if not measured:
            continue
        cone = light_cone(operations, measured, [q for q in measured if string[q] == "Z"])
        width = len(string)
        qubits = sorted({q for index in cone for q in operations[index].qubits} | set(measured),
                        key=lambda q: (q - measured[0]) % width)  # a ring's translates compare equal
        rank = {q: r for r, q in enumerate(qubits)}
        signature = (tuple((rank[q], string[q]) for q in measured),) + tuple(
            (structure[0], tuple(rank[q] for q in structure[1])) + structure[2:]
            for structure in (operations[index].structure for index in cone))
        if signature not in groups:
            tensors = 2 * len(qubits) + len(measured) + sum(
                2 if not density or operations[index].channel is None else 1 for index in cone)
            groups[signature] = [[], tensors]
        groups[signature][0].append(position)
    return [ConeGroup(tuple(members), tensors) for members, tensors in groups.values()]


def lightcone_floor(groups: Sequence[ConeGroup]) -> RouteCost:
    """The ``"lightcone"`` route's bookkeeping, no arithmetic: per group of :func:`cone_groups`,
    one cone's operations in a ket and a bra copy (a density matrix: gates on both sides, a
    channel once), its inputs and the string's factors."""
    return RouteCost("lightcone", sum(group.tensors for group in groups), 0.0, floor=True)


def network_cost(route: str, networks: Sequence[Network], extra_passes: float = 0.0,
                 multiplicities: Sequence[int] | None = None, eliminate: bool = False) -> RouteCost:
    """The work of contracting ``networks``: the cost units (multiply-adds + 64 x entries
    written) of a greedy path for each (cotengrust's where installed, else opt_einsum's), and
    their tensors, counted once per structure: networks built alike (equal legs up to renaming,
    :func:`~tyxonq.circuit.contraction.canonical.relabelled_structure`) share a plan and are
    contracted as one batch. Networks equal only after reordering their tensors count apart here
    (their canonical forms cost milliseconds each, wasted where the other route wins: the noisy
    10-qubit energy's 19 cones, 85 ms of its first call) and still share a plan when planned.
    ``multiplicities``: how many networks each one stands for (already known to share its
    structure); ``extra_passes``: what reading the result adds (:func:`readout_passes`).
    ``eliminate``: also cost the path the planner starts from, rank simplification then min-fill
    elimination, and count the cheaper (tens of milliseconds for a doubled network of 600
    tensors, worth it for one state: the 10-qubit noisy density matrix's greedy path costs 4.7e8
    units, that path 2.7e8, the searched plan 2.6e8)."""
    tensors, units = 0, 0.0
    seen: dict[tuple, float] = {}
    for network, count in zip(networks, multiplicities or [1] * len(networks)):
        legs = [leaf.legs for leaf in network.leaves]
        key = relabelled_structure(legs, network.output)
        if key not in seen:
            tensors += len(legs)
            seen[key] = _greedy_units(legs, network.output)
            if eliminate:
                seen[key] = min(seen[key], _eliminated_units(legs, network.output))
        units += count * seen[key]
    return RouteCost(route, tensors, 0.0, units, passes=float(extra_passes))


def _eliminated_units(legs: Sequence[Sequence[int]], output: Sequence[int]) -> float:
    """The cost units of rank simplification then one min-fill elimination (the deterministic
    one); infinite for a network with more legs than elimination takes."""
    if len(legs) < 2:
        return 0.0
    inputs, result = [set(term) for term in legs], set(output)
    sizes = {leg: 2 for term in inputs for leg in term} | {leg: 2 for leg in result}
    simplified = [set(term) for term in inputs]
    path = rank_simplify(simplified, result, sizes)
    if len(set().union(*simplified)) > ELIMINATION_MAX_LEGS:
        return float("inf")
    if len(simplified) > 1:
        path += elimination_path(simplified, result, sizes, trials=1)
    return path_cost(inputs, result, sizes, path)


def _greedy_units(legs: Sequence[Sequence[int]], output: Sequence[int]) -> float:
    if len(legs) < 2:
        return 0.0
    symbol = {leg: opt_einsum.get_symbol(i) for i, leg in
              enumerate(dict.fromkeys([leg for term in legs for leg in term] + list(output)))}
    inputs = [tuple(symbol[leg] for leg in term) for term in legs]
    result = tuple(symbol[leg] for leg in output)
    sizes = {letter: 2 for letter in symbol.values()}
    sets, result_set = [set(term) for term in inputs], set(result)
    return path_cost(sets, result_set, sizes, greedy_path(sets, result_set, sizes))

