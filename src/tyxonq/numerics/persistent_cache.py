"""The opt-in persistent cache: a directory where work that outlives a process is kept.

Simulators keep their contraction plans there (the path searches) and the machine rates their
route choices measure, and JAX keeps its compiled programs (JAX's persistent compilation cache),
so a second process that evaluates the same circuit structures skips all three. Entries live in
a subdirectory named after the versions of tyxonq and of the libraries that shape them, so
upgrading any of them starts afresh; every entry is written to a temporary file and renamed into
place, so concurrent processes never read a partial one. Entries are read only through
:func:`read_entry`: regular files of at most :data:`MAX_ENTRY_BYTES`, opened without blocking (a
FIFO or device in an entry's place is damage, never a hang).

The cache is a convenience, never a dependency: a directory that cannot be read or written, or an
entry that is damaged, costs the work it would have saved and a :class:`PersistentCacheWarning`
(one per kind of problem per process), never a result or ``import tyxonq``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, TypeVar

__all__ = ["set_persistent_cache", "persistent_cache_directory", "default_cache_directory",
           "PersistentCacheWarning", "report_cache_problem", "read_entry", "write_entry", "load_json_entry",
           "DamagedEntry", "MAX_ENTRY_BYTES", "PARSE_ERRORS"]

#: the libraries whose versions name the cache subdirectory
VERSIONED = ("tyxonq", "numpy", "opt_einsum", "cotengra", "jax", "jaxlib")
ENVIRONMENT_VARIABLE = "TYXONQ_PERSISTENT_CACHE"
#: the largest entry file read (or written): no entry the cache writes comes near it, and a larger
#: file is damage rather than something to load into memory
MAX_ENTRY_BYTES = 64 * 2 ** 20

#: what parsing and checking a damaged entry can raise (JSON nested too deeply for the parser,
#: text that is not UTF-8, digits beyond Python's limit, a list where an index belongs)
PARSE_ERRORS = (ValueError, RecursionError, MemoryError, TypeError, KeyError, IndexError, AttributeError)
Trusted = TypeVar("Trusted")

_directory: Path | None = None
_reported: set[str] = set()
_reported_lock = threading.Lock()


class PersistentCacheWarning(RuntimeWarning):
    """The persistent cache could not be used as asked (a damaged entry, a directory that cannot be
    read or written); results are unaffected, only the work the cache saves is done again."""


def report_cache_problem(kind: str, message: str) -> None:
    """Warn with ``message`` the first time a problem of ``kind`` occurs in this process."""
    with _reported_lock:
        if kind in _reported:
            return
        _reported.add(kind)
    warnings.warn(f"persistent cache: {message} (results are unaffected; this is reported once per "
                  "process)", PersistentCacheWarning, stacklevel=3)


class DamagedEntry(ValueError):
    """A file in an entry's place that is not one: not a regular file, or larger than the cap."""


def read_entry(file: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the cache entry ``file``, read only if it is a regular file of at most
    ``limit`` bytes (default :data:`MAX_ENTRY_BYTES`); it is opened without blocking, so a FIFO or
    device put in its place between the check and the opening cannot stall the process either.

    Raises
    ------
    FileNotFoundError
        No entry.
    DamagedEntry
        Something else than an entry in its place (a directory, a FIFO, a device, a file over the
        cap): damage, to be ignored and rewritten.
    OSError
        The file cannot be read (permissions, I/O errors).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> entry = pathlib.Path(tempfile.mkdtemp()) / "entry.json"
    >>> _ = entry.write_bytes(b'{"path": []}')
    >>> read_entry(entry)
    b'{"path": []}'
    >>> read_entry(entry.parent)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tyxonq.numerics.persistent_cache.DamagedEntry: ... is not a regular file
    """
    limit = MAX_ENTRY_BYTES if limit is None else limit
    _check_entry_status(file, os.stat(file), limit)
    flags = os.O_RDONLY
    for optional in ("O_NONBLOCK", "O_CLOEXEC", "O_BINARY"):  # those the platform has
        flags |= getattr(os, optional, 0)
    with os.fdopen(os.open(file, flags), "rb") as stream:
        _check_entry_status(file, os.fstat(stream.fileno()), limit)  # what was opened, if replaced
        data = stream.read(limit + 1)
    if len(data) > limit:  # it grew after the check
        raise DamagedEntry(f"{file} is larger than {limit} bytes")
    return data


def load_json_entry(file: Path | None, key: str, well_formed: Callable[[dict], bool],
                    trusted: Callable[[Any], Trusted | None], redone: str) -> Trusted | None:
    """What ``trusted`` makes of the JSON entry ``file`` kept for ``key``, or ``None``: no cache
    (``file`` is ``None``), no entry, another key's entry (well formed, with another ``"key"``: a
    digest collision, not damage), or damage -- a file that is not an entry, text that does not
    parse, an entry ``trusted`` refuses -- reported once per process. ``redone`` says what is then
    done again (a directory that cannot be read is reported too).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> entry = pathlib.Path(tempfile.mkdtemp()) / "entry.json"
    >>> write_entry(entry, '{"key": "k", "value": 3}', "values are not kept")
    >>> load_json_entry(entry, "k", lambda e: "value" in e, lambda e: e["value"], "values are found again")
    3
    """
    if file is None:
        return None
    try:
        data = read_entry(file)
    except FileNotFoundError:
        return None
    except DamagedEntry:
        data = None
    except OSError as error:
        report_cache_problem("read", f"could not read {file.parent}: {error}; {redone}")
        return None
    try:
        entry = json.loads(data.decode("utf-8")) if data is not None else None
        if isinstance(entry, dict) and entry.get("key") != key and well_formed(entry):
            return None
        value = trusted(entry)
    except PARSE_ERRORS:
        value = None
    if value is None:
        report_damaged(file, redone)
    return value


def report_damaged(file: Any, redone: str) -> None:
    """Report the entry ``file`` as damaged or outdated, once per process."""
    report_cache_problem("damaged", f"ignored a damaged or outdated entry ({file}); {redone} and the "
                         "entry rewritten")


def write_entry(file: Path, text: str, unkept: str) -> None:
    """Write the entry ``file`` whole or not at all: ``text`` goes to a temporary file in its
    directory, renamed into place (concurrent readers see the old entry or the new one). An
    entry over :data:`MAX_ENTRY_BYTES` is not written (it would be refused on load); a directory
    that cannot be written is reported once, ``unkept`` saying what is then not kept.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> entry = pathlib.Path(tempfile.mkdtemp()) / "kind" / "entry.json"
    >>> write_entry(entry, '{"path": []}', "new paths are not kept")
    >>> read_entry(entry)
    b'{"path": []}'
    """
    if len(text) > MAX_ENTRY_BYTES:
        return
    temporary = None
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=file.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, file)
    except OSError as error:
        report_cache_problem("write", f"could not write to {file.parent}: {error}; {unkept}")
        if temporary is not None and os.path.exists(temporary):
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _check_entry_status(file: str | os.PathLike, status: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise DamagedEntry(f"{file} is not a regular file")
    if status.st_size > limit:
        raise DamagedEntry(f"{file} is larger than {limit} bytes")


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
        ``True``: :func:`default_cache_directory`; a path: that directory (created if needed; a
        read-only one is read from, and nothing new is kept); ``None`` or ``False``: no persistent
        cache (the default, unless the environment variable ``TYXONQ_PERSISTENT_CACHE`` names a
        directory, or is ``1``, at import; one that cannot be used there is reported with a
        :class:`PersistentCacheWarning` and leaves the cache off).

    Returns
    -------
    Path or None
        The versioned subdirectory in use.

    Raises
    ------
    ValueError
        If ``directory`` does not exist and cannot be created (a file stands in its place, or its
        parent is not writable).

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
        try:
            directory = default_cache_directory()
        except (RuntimeError, KeyError) as error:  # no home directory to default to
            raise ValueError(f"no default cache directory ({error}); pass a directory") from None
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory={directory!r} must be a path, True or None")
    versioned = Path(directory).expanduser() / f"v-{_versions_digest()}"
    try:
        versioned.mkdir(parents=True, exist_ok=True)
    except ValueError as error:  # a path the OS cannot hold (an embedded null byte)
        raise ValueError(f"directory={str(directory)!r} is not a usable path: {error}") from None
    except OSError as error:
        raise ValueError(f"directory={str(directory)!r} cannot hold the persistent cache: "
                         f"{error.strerror or error} ({versioned}); pass a writable directory, or "
                         "None to keep no persistent cache") from None
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
    """The setting of ``TYXONQ_PERSISTENT_CACHE``; a directory that cannot be used is reported and
    leaves the cache off (``import tyxonq`` never fails on it)."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value and value.lower() not in ("0", "false", "no", "off"):
        try:
            set_persistent_cache(True if value.lower() in ("1", "true", "yes", "on") else value)
        except ValueError as error:
            report_cache_problem("environment", f"{ENVIRONMENT_VARIABLE}={value!r} is not used: {error}")


_from_environment()
