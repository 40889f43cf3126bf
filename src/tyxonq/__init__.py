"""tyxonq: a quantum-simulation numerics engine over NumPy, PyTorch and cuPyNumeric.

Examples
--------
>>> import tyxonq as tq
>>> K = tq.set_backend("numpy")
>>> K.name
'numpy'
"""

from __future__ import annotations

from . import (
    chem,
    circuit,
    evolution,
    geometry,
    gradients,
    mitigation,
    noise,
    numerics,
    operators,
    optimize,
    plot,
    templates,
)
from .caches import CacheInfo, cache_info, clear_caches
from .circuit import (
    Circuit,
    ContractionReport,
    DensityMatrixCircuit,
    DMCircuit,
    MachineRates,
    MixedStateError,
    MPSCircuit,
    NonCliffordError,
    StabilizerCircuit,
    UnsupportedResult,
    clear_plan_cache,
    get_contractor,
    machine_rates,
    plan_cache_info,
    rehearse,
    set_contractor,
    set_machine_rates,
    set_plan_cache,
    use_contractor,
)
from .evolution import evolve
from .geometry import fubini_study_metric, quantum_geometric_tensor
from .gradients import grad, gradient_method, hessian, jacobian, value_and_grad
from .noise import NoiseModel
from .numerics import (
    ArrayBackend,
    PersistentCacheWarning,
    backend_names,
    distributed,
    get_backend,
    memory_limit,
    persistent_cache_directory,
    set_backend,
    set_memory_limit,
    set_persistent_cache,
    use_backend,
    use_memory_limit,
    vectorize_or_fallback,
    vmap,
)
from .numerics.progress import set_progress
from .operators import PauliSum, channels, hamiltonians

__version__ = "0.1.0"

__all__ = [
    "numerics",
    "distributed",
    "circuit",
    "operators",
    "gradients",
    "optimize",
    "templates",
    "chem",
    "evolution",
    "evolve",
    "Circuit",
    "DMCircuit",
    "MPSCircuit",
    "StabilizerCircuit",
    "NonCliffordError",
    "UnsupportedResult",
    "MixedStateError",
    "ContractionReport",
    "DensityMatrixCircuit",
    "noise",
    "channels",
    "NoiseModel",
    "mitigation",
    "PauliSum",
    "hamiltonians",
    "set_contractor",
    "get_contractor",
    "use_contractor",
    "plan_cache_info",
    "clear_plan_cache",
    "set_plan_cache",
    "set_persistent_cache",
    "persistent_cache_directory",
    "PersistentCacheWarning",
    "set_memory_limit",
    "set_progress",
    "plot",
    "use_memory_limit",
    "memory_limit",
    "rehearse",
    "MachineRates",
    "machine_rates",
    "set_machine_rates",
    "cache_info",
    "clear_caches",
    "CacheInfo",
    "ArrayBackend",
    "backend_names",
    "get_backend",
    "set_backend",
    "use_backend",
    "value_and_grad",
    "grad",
    "jacobian",
    "hessian",
    "quantum_geometric_tensor",
    "fubini_study_metric",
    "geometry",
    "gradient_method",
    "vmap",
    "vectorize_or_fallback",
    "__version__",
]
