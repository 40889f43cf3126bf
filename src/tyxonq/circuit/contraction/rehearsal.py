"""Rehearsals: what a result would cost, planned but not run (quimb's ``*_rehearse``).

Inside :func:`rehearsal` every contraction a computation asks for is planned (and cached) as usual
but not bound or contracted: it returns zeros of its result's shape and is recorded instead, and
the memory pre-check records what it would refuse rather than raising. The
:class:`ContractionReport` of the records says how many contractions and distinct plans there
are, the largest intermediate (its width, log2 of its entries), flops, bytes, the planning time
and the estimated contraction time, so a user can see why a call is cheap or refused before
making it. :meth:`tyxonq.Circuit.rehearse` and :func:`tyxonq.rehearse` are the public doors.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...numerics.memory import format_bytes, memory_budget
from ...numerics.protocol import ArrayBackend
from .paths import estimated_seconds
from .route_costs import RouteChoice

__all__ = ["ContractionReport", "rehearsal", "rehearsing", "record", "rehearse", "placeholder",
           "route_report"]

#: routes in the order a result tries them (an exact MPS where the contraction does not fit); a
#: dynamic circuit's shots (branches of its state vector, of an untruncated MPS, or its deferred-
#: measurement circuit's samplers); then the routes of the simulators that contract no network (an
#: MPS; stim's tableau and frames; Pauli strings carried backwards through a Clifford circuit)
ROUTE_ORDER = ("basis-state", "sharded-state", "sweep", "contraction", "sliced", "exact-mps", "branches",
               "mps-branches", "deferred", "mps", "stabilizer", "pauli-propagation")

_LOG: contextvars.ContextVar[list | None] = contextvars.ContextVar("tyxonq_rehearsal", default=None)


def rehearsing() -> bool:
    """Whether a rehearsal is recording (then contractions are planned, not run)."""
    return _LOG.get() is not None


def record(kind: str, **details: Any) -> None:
    """Add one planned computation to the active rehearsal: ``kind`` is ``"contraction"``
    (``network_plan=``, ``batch=``), ``"sweep"`` (``qubits=``), ``"route"`` (``name=``: a way
    other than contraction that the result takes, e.g. ``"basis-state"`` or ``"exact-mps"``) or
    ``"choice"`` (``choice=``: a :class:`~tyxonq.circuit.contraction.route_costs.RouteChoice`)."""
    log = _LOG.get()
    if log is not None:
        log.append((kind, details))


def placeholder(K: ArrayBackend, shape: tuple[int, ...]) -> Any:
    """What a rehearsed result returns: zeros of its shape, or one zero for a large one (a
    rehearsal never allocates what it plans)."""
    return K.zeros(shape if math.prod(shape) <= 2 ** 16 else (), K.dtype)


@contextlib.contextmanager
def rehearsal() -> Iterator[list]:
    """Within the block contractions are planned and recorded, not run; yields the record list."""
    token = _LOG.set([])
    try:
        yield _LOG.get()
    finally:
        _LOG.reset(token)


@dataclass(frozen=True)
class ContractionReport:
    """What a computation costs, from its plans.

    Attributes
    ----------
    contractions : int
        Networks contracted (one per term of a light-cone sum).
    distinct_plans : int
        Plans among them (networks equal up to relabelling share one, and run batched).
    tensors, simplified_tensors : int
        Tensors of the networks as built, and after rank simplification (summed).
    width : float
        log2 of the entries of the largest intermediate tensor of any contraction.
    flops : float
        Multiply-adds of all contractions; ``writes``: entries written.
    cost : float
        ``flops + 64 x writes``, the cost model plans minimise.
    memory_bytes : int
        Peak bytes of the largest intermediate (times the batch it runs in).
    available_bytes : int
        What the backend's device has free; ``fits`` says whether ``memory_bytes`` does.
    planning_seconds : float
        Time it took to build the plans used (once per plan; later calls reuse them).
    estimated_seconds : float
        The contraction time the planner assumed (cost over the calibrated rate).
    sweeps : int
        State vectors computed by a block sweep instead of a contraction (small ``state()``).
    routes : tuple of str
        How the result is computed, in order of first use: ``"contraction"``, ``"sweep"``,
        ``"basis-state"`` (a circuit that keeps a basis state one: propagated, nothing contracted),
        ``"sliced"`` (a contraction over the memory budget, contracted slice by slice) and
        ``"exact-mps"`` (a contraction that does not fit, tried as an untruncated MPS first).
    steps : tuple of (float, int)
        Every pairwise step of every distinct plan, in order (the plans one after the other, the
        most expensive first): the width of its result (log2 of its entries) and its
        multiply-adds (what :func:`tyxonq.plot.plan` draws).
    slices : int
        Slices of the sliced contractions (0: none sliced); ``contractions``, ``width`` and
        ``flops`` then count every slice, at its own width.
    choices : tuple of RouteChoice
        Each choice between exact routes made by estimated cost on this machine
        (:func:`~tyxonq.circuit.calibration.cheapest_route`): what, the route taken, and every
        candidate's estimated seconds per call.
    sharding : ShardingReport, optional
        For a state vector sharded across the ranks of a distributed run (route
        ``"sharded-state"``): the ranks, the global qubits, the swaps, the exchanges and bytes each
        rank sends, and the shards' size
        (:class:`~tyxonq.circuit.statevector.sharding_report.ShardingReport`).
    propagation : PropagationReport, optional
        For Pauli strings carried backwards through a stabilizer circuit (route
        ``"pauli-propagation"``): how many strings they become
        (:class:`~tyxonq.circuit.stabilizer.propagation.PropagationReport`).
    """

    contractions: int
    distinct_plans: int
    tensors: int
    simplified_tensors: int
    width: float
    flops: float
    writes: float
    cost: float
    memory_bytes: int
    available_bytes: int
    fits: bool
    planning_seconds: float
    estimated_seconds: float
    sweeps: int = 0
    routes: tuple[str, ...] = ()
    slices: int = 0
    choices: tuple[RouteChoice, ...] = ()
    propagation: Any = None
    sharding: Any = None
    steps: tuple[tuple[float, int], ...] = ()

    @property
    def log10_flops(self) -> float:
        return math.log10(self.flops) if self.flops > 0 else 0.0

    def __str__(self) -> str:
        return (f"{self.contractions} contraction(s), {self.distinct_plans} plan(s); "
                f"{self.tensors} -> {self.simplified_tensors} tensors after simplification; "
                f"width {self.width:.0f} (largest intermediate 2^{self.width:.0f} entries), "
                f"log10 flops {self.log10_flops:.2f}; memory {format_bytes(self.memory_bytes)} of "
                f"{format_bytes(self.available_bytes)}{'' if self.fits else ' (does not fit)'}; "
                f"planned in {self.planning_seconds:.3g} s, estimated {self.estimated_seconds:.3g} s"
                + (f"; {self.sweeps} state-vector sweep(s)" if self.sweeps else "")
                + (f"; {self.slices} slices" if self.slices else "")
                + (f"; route: {' then '.join(self.routes)}" if self.routes else "")
                + "".join(f"; chose {choice}" for choice in dict.fromkeys(self.choices))
                + (f"; {self.propagation}" if self.propagation is not None else "")
                + (f"; {self.sharding}" if self.sharding is not None else ""))


def _report(log: list, K: ArrayBackend) -> ContractionReport:
    itemsize = 16 if K.precision == "complex128" else 8
    plans: dict[Any, int] = {}
    tensors = simplified = 0
    flops = writes = 0.0
    width, memory, sweeps = 0.0, 0, 0
    routes: dict[str, None] = {}
    slices = 0
    choices = []
    sharding = None
    for kind, details in log:
        if kind == "sharding":
            sharding = details["report"]
            memory = max(memory, sharding.shard_bytes * 3 // 2)  # the largest arrays: a shard, half of one
            continue
        if kind == "slices":
            slices += details["count"]
            continue
        if kind == "choice":
            choices.append(details["choice"])
            continue
        routes[details["name"] if kind == "route" else kind] = None
        if kind == "route":
            continue
        if kind == "sweep":
            sweeps += 1
            memory = max(memory, 2 ** details["qubits"] * itemsize)
            continue
        network_plan, batch = details["network_plan"], details.get("batch", 1)
        plan = network_plan.plan
        plans[plan] = max(plans.get(plan, 0), batch)
        tensors += len(network_plan.network.leaves)
        simplified += len(plan.legs) - plan.simplification_steps
        flops += plan.contraction.flops
        writes += plan.contraction.writes
        width = max(width, math.log2(plan.largest_tensor_size))
    for plan, batch in plans.items():
        memory = max(memory, plan.largest_tensor_size * batch * itemsize)
    available = int(min(memory_budget(K), 2 ** 62))
    cost = flops + 64 * writes
    costliest = sorted(plans, key=lambda plan: -(plan.contraction.flops + 64 * plan.contraction.writes))
    steps = tuple(step for plan in costliest for step in plan.contraction.step_costs())
    return ContractionReport(
        contractions=sum(kind == "contraction" for kind, _ in log), distinct_plans=len(plans),
        tensors=tensors, simplified_tensors=simplified, width=width, flops=flops, writes=writes,
        cost=cost, memory_bytes=memory, available_bytes=available, fits=memory <= available,
        planning_seconds=sum(plan.planning_seconds for plan in plans),
        estimated_seconds=estimated_seconds(cost), sweeps=sweeps,
        routes=tuple(sorted(routes, key=ROUTE_ORDER.index)), slices=slices, choices=tuple(choices),
        sharding=sharding, steps=steps)


def rehearse(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> ContractionReport:
    """Plan everything ``fn(*args, **kwargs)`` would contract, run none of it, and report.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.templates.brickwork(60, [0.1] * 240, 4)
    >>> report = tq.rehearse(c.expectation_ps, z=[30])
    >>> report.contractions, report.width <= 6, report.fits
    (1, True, True)
    """
    from ...numerics import get_backend

    with rehearsal() as log:
        fn(*args, **kwargs)
    return _report(log, get_backend())


def route_report(K: ArrayBackend, routes: tuple[str, ...], memory_bytes: int,
                 propagation: Any = None) -> ContractionReport:
    """The report of a result that contracts no network (an MPS, a stabilizer simulation): its
    routes, the memory it holds at most, and (``propagation``) its Pauli propagation's counts.

    Examples
    --------
    >>> import tyxonq as tq
    >>> report = route_report(tq.get_backend(), ("mps",), 1024)
    >>> report.routes, report.contractions, report.fits
    (('mps',), 0, True)
    """
    available = int(min(memory_budget(K), 2 ** 62))
    return ContractionReport(
        contractions=0, distinct_plans=0, tensors=0, simplified_tensors=0, width=0.0, flops=0.0, writes=0.0,
        cost=0.0, memory_bytes=int(memory_bytes), available_bytes=available, fits=memory_bytes <= available,
        planning_seconds=0.0, estimated_seconds=0.0, routes=tuple(sorted(routes, key=ROUTE_ORDER.index)),
        propagation=propagation)
