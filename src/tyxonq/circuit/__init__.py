"""The tensor-network circuit simulator.

It speaks only the :class:`~tyxonq.numerics.ArrayBackend` protocol: a :class:`Circuit` is a list
of operations; a plan (network, fused gates, contraction path) is made once per structure and
cached; evaluation binds parameters and contracts through the active backend.
"""

from __future__ import annotations

from .calibration import machine_rates, set_machine_rates
from .circuit import Circuit
from .contraction.contractor import Contractor, get_contractor, set_contractor, use_contractor
from .contraction.paths import PathSearchWarning
from .contraction.plan import PlanCacheInfo, clear_plan_cache, plan_cache_info, set_plan_cache
from .contraction.rehearsal import ContractionReport, rehearse
from .contraction.route_costs import MachineRates, RouteChoice
from .density import DensityMatrixCircuit, DMCircuit
from .mps import MPSCircuit
from .operations.clifford import NonCliffordError
from .operations.gates import GATES
from .refusals import MixedStateError, NoisyCircuitError, UnsupportedResult
from .stabilizer import StabilizerCircuit

__all__ = [
    "Circuit",
    "DMCircuit",
    "MPSCircuit",
    "StabilizerCircuit",
    "NonCliffordError",
    "DensityMatrixCircuit",
    "NoisyCircuitError",
    "MixedStateError",
    "UnsupportedResult",
    "GATES",
    "Contractor",
    "set_contractor",
    "get_contractor",
    "use_contractor",
    "plan_cache_info",
    "clear_plan_cache",
    "set_plan_cache",
    "PlanCacheInfo",
    "PathSearchWarning",
    "ContractionReport",
    "rehearse",
    "MachineRates",
    "RouteChoice",
    "machine_rates",
    "set_machine_rates",
]
