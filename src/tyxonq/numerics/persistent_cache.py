"""The opt-in persistent cache: a directory where work that outlives a process is kept.

Simulators keep their contraction plans there (the path searches), and JAX keeps its compiled
programs (JAX's persistent compilation cache), so a second process that evaluates the same
circuit structures skips both. Entries live in a subdirectory named after the versions of
tyxonq and of the libraries that shape them, so upgrading any of them starts afresh; every entry
is written to a temporary file and renamed into place, so concurrent processes never read a
partial one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
from pathlib import Path

__all__ = ["set_persistent_cache", "persistent_cache_directory", "default_cache_directory"]

#: the libraries whose versions name the cache subdirectory
VERSIONED = ("tyxonq", "numpy", "opt_einsum", "cotengra", "jax", "jaxlib")
ENVIRONMENT_VARIABLE = "TYXONQ_PERSISTENT_CACHE"

_directory: Path | None = None


def default_cache_directory() -> Path:
    """``$XDG_CACHE_HOME/tyxonq`` (``~/.cache/tyxonq`` without it; ``%LOCALAPPDATA%`` on
    Windows)."""
    if sys.platform == "win32":  # pragma: no cover - not tested on Windows
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "tyxonq"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tyxonq"


def set_persistent_cache(directory: str | os.PathLike | bool | None = True) -> Path | None:
    """Keep contraction plans and JAX's compiled programs in ``directory`` across processes.

    Parameters
    ----------
    directory : path, True, or None/False
        ``True``: :func:`default_cache_directory`; a path: that directory (created if needed);
        ``None`` or ``False``: no persistent cache (the default, unless the environment variable
        ``TYXONQ_PERSISTENT_CACHE`` names a directory, or is ``1``, at import).

    Returns
    -------
    Path or None
        The versioned subdirectory in use.

    Examples
    --------
    >>> import tempfile, tyxonq as tq
    >>> where = tq.set_persistent_cache(tempfile.mkdtemp())
    >>> where.name.startswith("v-")
    True
    >>> tq.set_persistent_cache(None) is None
    True
    """
    global _directory
    if directory is None or directory is False:
        _directory = None
        return None
    if directory is True:
        directory = default_cache_directory()
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory={directory!r} must be a path, True or None")
    versioned = Path(directory).expanduser() / f"v-{_versions_digest()}"
    versioned.mkdir(parents=True, exist_ok=True)
    _directory = versioned
    if "jax" in sys.modules:
        configure_jax()
    return versioned


def persistent_cache_directory() -> Path | None:
    """The versioned cache directory in use, or ``None``."""
    return _directory


def configure_jax() -> None:
    """Point JAX's persistent compilation cache at ``<cache>/xla`` (every compiled program that
    took 0.1 s or more is kept); a no-op without a persistent cache."""
    if _directory is None:
        return
    import jax

    jax.config.update("jax_compilation_cache_dir", str(_directory / "xla"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _versions_digest() -> str:
    versions = []
    for name in VERSIONED:
        try:
            versions.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name}=none")
    versions.append(f"python={sys.version_info.major}.{sys.version_info.minor}")
    return hashlib.sha256(";".join(versions).encode()).hexdigest()[:16]


def _from_environment() -> None:
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value and value.lower() not in ("0", "false", "no", "off"):
        set_persistent_cache(True if value.lower() in ("1", "true", "yes", "on") else value)


_from_environment()
