"""The engines the suite knows: tyxonq on each backend and every peer simulator.

An engine is an adapter module (``tyxonq_engine`` or one under ``peers/``) plus an option (a
backend name) passed to its ``build(spec, option)``. Whether an engine is installed is decided
from import specs alone (nothing heavy is imported in the parent process); versions come from
package metadata.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Engine:
    """One engine: ``module.build(spec, option)``; ``requires`` are the import names it needs,
    ``packages`` the distributions whose versions the report records."""

    name: str
    module: str
    option: str | None
    requires: tuple[str, ...]
    packages: tuple[str, ...]

    @property
    def is_tyxonq(self) -> bool:
        return self.name.startswith("tyxonq")

    @property
    def on_gpu(self) -> bool:
        """Whether the option names a device (``"pytorch:cuda"``): run only when asked by name."""
        return ":" in (self.option or "")

    def installed(self) -> bool:
        return all(importlib.util.find_spec(name) is not None for name in self.requires)

    def adapter(self) -> ModuleType:
        return importlib.import_module(self.module)

    def supports(self, workload: str) -> bool:
        return bool(self.adapter().supports(workload, self.option))

    def versions(self) -> dict[str, str]:
        found = {}
        for package in self.packages:
            try:
                found[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                found[package] = "not installed"
        return found


#: cotengra and the optional packages that speed up its path search
PATH_FINDING = ("cotengra", "cotengrust", "kahypar", "optuna")

ENGINES = {e.name: e for e in (
    Engine("tyxonq-numpy", "tyxonq_engine", "numpy", ("tyxonq",), ("tyxonq", "numpy")),
    Engine("tyxonq-pytorch", "tyxonq_engine", "pytorch", ("tyxonq", "torch"), ("tyxonq", "torch")),
    Engine("tyxonq-jax", "tyxonq_engine", "jax", ("tyxonq", "jax"), ("tyxonq", "jax", "jaxlib")),
    # GPU engines (a machine with an NVIDIA GPU; JAX's default device must be the GPU there)
    Engine("tyxonq-pytorch-cuda", "tyxonq_engine", "pytorch:cuda", ("tyxonq", "torch"), ("tyxonq", "torch")),
    Engine("tyxonq-jax-gpu", "tyxonq_engine", "jax:cuda:0", ("tyxonq", "jax"), ("tyxonq", "jax", "jaxlib")),
    Engine("qulacs", "peers.qulacs", None, ("qulacs",), ("qulacs",)),
    Engine("qiskit-aer", "peers.qiskit_aer", None, ("qiskit", "qiskit_aer"), ("qiskit", "qiskit-aer")),
    Engine("lightning", "peers.lightning", None, ("pennylane", "pennylane_lightning"),
           ("pennylane", "pennylane-lightning")),
    Engine("pennylane-mixed", "peers.pennylane_mixed", None, ("pennylane",), ("pennylane",)),
    Engine("tc-numpy", "peers.tensorcircuit", "numpy", ("tensorcircuit", "cotengra"),
           ("tensorcircuit-ng", "numpy") + PATH_FINDING),
    Engine("tc-pytorch", "peers.tensorcircuit", "pytorch", ("tensorcircuit", "cotengra", "torch"),
           ("tensorcircuit-ng", "torch") + PATH_FINDING),
    Engine("tc-jax", "peers.tensorcircuit", "jax", ("tensorcircuit", "cotengra", "jax"),
           ("tensorcircuit-ng", "jax", "jaxlib") + PATH_FINDING),
    Engine("quimb", "peers.quimb", None, ("quimb", "cotengra"), ("quimb",) + PATH_FINDING),
)}

#: short names accepted by --engines
ALIASES = {"numpy": "tyxonq-numpy", "pytorch": "tyxonq-pytorch", "torch": "tyxonq-pytorch",
           "jax": "tyxonq-jax", "tyxonq": "tyxonq-numpy", "aer": "qiskit-aer", "pennylane": "lightning",
           "mixed": "pennylane-mixed"}


def resolve(names: list[str] | None) -> list[Engine]:
    """Engines by name (or alias); ``None``: tyxonq's backends and every peer, installed or
    not (the suite reports a missing one as "not installed"), but not the GPU engines."""
    if names is None:
        return [engine for engine in ENGINES.values() if not engine.on_gpu]
    engines = []
    for name in names:
        name = ALIASES.get(name, name)
        if name not in ENGINES:
            raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
        engines.append(ENGINES[name])
    return engines
