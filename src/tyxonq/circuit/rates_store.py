"""Measured machine rates kept in the persistent cache (:func:`tyxonq.set_persistent_cache`).

Measuring a backend's rates (:func:`~tyxonq.circuit.calibration.machine_rates`) takes 0.1-0.2 s of
a first call that has a route to choose, and half a second more on JAX when a compiled program
chooses. With the persistent cache on, the rates measured once are kept and later processes on
the same machine read them: their first calls skip the probe, and every process sharing the
cache chooses routes by the same rates (a choice near a tie no longer differs between processes).

An entry is keyed by what the rates depend on: the backend, its precision and device, the version
of its array library, this machine (processor, core count, the cores this process may use) and
the thread settings (``OMP_NUM_THREADS`` and its kin; PyTorch's intra-op threads). A change in any
of them measures again. An entry is checked as the plan store checks its paths (it parses, its
fields and types, the checksum, the key, every rate finite and of its sign); anything else is
damage, reported once per process, measured again and rewritten. Every route is exact, so rates
only ever change speed; to measure afresh, remove ``<cache>/rates`` or pin the rates
(:func:`tyxonq.set_machine_rates`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import os
import platform
from pathlib import Path
from typing import Any

from ..numerics.persistent_cache import load_json_entry, persistent_cache_directory, write_entry
from ..numerics.protocol import ArrayBackend
from .contraction.route_costs import MachineRates

__all__ = ["rates_key", "load_rates", "store_rates"]

FORMAT = 1
#: the rates an entry holds, each a finite float: ``True`` where it must be positive, ``False``
#: where zero is allowed (a slope measured flat, or nothing compiled)
RATES = {"tensor_seconds": False, "madds_per_second": True, "units_per_second": True,
         "compile_seconds_per_tensor": False, "compiled_tensor_seconds": False, "passes_per_second": True}
#: the array library behind each backend (its version is part of the key)
LIBRARIES = {"numpy": "numpy", "pytorch": "torch", "jax": "jaxlib", "cupynumeric": "nvidia-cupynumeric"}
#: the environment variables that set the array libraries' threads
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")


def rates_key(K: ArrayBackend) -> tuple[str, ...]:
    """What ``K``'s measured rates depend on, as strings: backend, precision, device, library
    version, machine, threads.

    Examples
    --------
    >>> import tyxonq as tq
    >>> key = rates_key(tq.get_backend("numpy"))
    >>> key[:3]
    ('numpy', 'complex128', 'cpu')
    """
    try:
        library = importlib.metadata.version(LIBRARIES.get(K.name, K.name))
    except (importlib.metadata.PackageNotFoundError, ValueError):
        library = "unknown"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = ";".join(f"{name}={os.environ.get(name, '')}" for name in THREAD_VARIABLES)
    if K.name == "pytorch":
        import torch

        threads += f";torch={torch.get_num_threads()}"
    return (K.name, str(K.precision), str(K.capabilities.device), library, platform.machine(), _processor(),
            f"cores={os.cpu_count()}", f"usable={usable}", threads)


def _processor() -> str:
    """The processor's model name (``/proc/cpuinfo`` where there is one)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _entry(K: ArrayBackend) -> tuple[Path, tuple[str, ...]] | None:
    """``(file, key)`` of ``K``'s entry, or ``None`` without a persistent cache (the key, a few
    milliseconds of library metadata, is then never made)."""
    directory = persistent_cache_directory()
    if directory is None:
        return None
    key = rates_key(K)
    return directory / "rates" / f"{hashlib.sha256(repr(key).encode()).hexdigest()[:40]}.json", key


def load_rates(K: ArrayBackend) -> MachineRates | None:
    """The rates kept for ``K`` on this machine, or ``None`` (no persistent cache, no entry,
    another key's entry, or one that cannot be trusted: reported once)."""
    if (entry := _entry(K)) is None:
        return None
    file, key = entry
    return load_json_entry(file, repr(key), _well_formed, lambda stored: _trusted(stored, key),
                           "the rates are measured again")


def store_rates(K: ArrayBackend, rates: MachineRates) -> None:
    """Keep ``rates`` for ``K`` on this machine (nothing without a persistent cache)."""
    if (entry := _entry(K)) is None:
        return
    file, key = entry
    values = {name: float(getattr(rates, name)) for name in RATES}
    stored = {"format": FORMAT, "key": repr(key), "rates": values}
    stored["checksum"] = _checksum(stored)
    write_entry(file, json.dumps(stored), "measured rates are not kept")


def _checksum(entry: dict) -> str:
    fields = {name: entry[name] for name in ("format", "key", "rates")}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _well_formed(entry: dict) -> bool:
    rates = entry.get("rates")
    return (set(entry) == {"format", "key", "rates", "checksum"} and type(entry["format"]) is int
            and isinstance(entry["key"], str) and isinstance(entry["checksum"], str)
            and isinstance(rates, dict) and set(rates) == set(RATES)
            and all(type(value) is float for value in rates.values()))


def _trusted(entry: Any, key: tuple[str, ...]) -> MachineRates | None:
    """The entry's rates if every check passes, else ``None``."""
    if not isinstance(entry, dict) or not _well_formed(entry):
        return None
    if entry["format"] != FORMAT or entry["key"] != repr(key) or entry["checksum"] != _checksum(entry):
        return None
    rates = entry["rates"]
    for name, positive in RATES.items():
        value = rates[name]
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            return None
    return MachineRates(**rates)
