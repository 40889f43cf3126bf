"""Contraction paths kept on disk, in the persistent cache (:func:`tyxonq.set_persistent_cache`).

A plan's costly part is its path search; the path depends only on the canonical network
(legs and output), the contractor, the dimension limit and the thoroughness, which together are
the key. One JSON file per key, named by the key's digest, holds the key itself (compared on
load, so a digest collision cannot pick a wrong path), the path, the size of the largest tensor
it makes and a checksum of all of these. Files are written to a temporary name and renamed, so
concurrent processes see a whole entry or none.

An entry is read only if it is a regular file within the size cap
(:func:`~tyxonq.numerics.persistent_cache.read_entry`: a FIFO in its place never blocks), and
trusted only after :func:`load_path` has checked it (that it parses, its fields and their types,
the checksum, and the path as a contraction of the network's tensors to one) and the planner has
compiled it and found the largest tensor it recorded. Anything else is damage: ignored, searched
again and rewritten; a file that cannot be read or written costs a search. Each kind of problem is
reported once per process (:class:`~tyxonq.numerics.persistent_cache.PersistentCacheWarning`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...numerics.persistent_cache import (
    load_json_entry,
    persistent_cache_directory,
    report_damaged,
    write_entry,
)

__all__ = ["StoredPath", "load_path", "store_path", "report_wrong_path"]

FORMAT = 2
#: what a damaged or unreadable entry costs
REDONE = "its path is searched again"
_FIELDS = {"format": int, "key": str, "path": list, "simplification_steps": int, "finder": str,
           "largest_size": int, "checksum": str}


@dataclass(frozen=True)
class StoredPath:
    """A path read from the persistent cache, checked against the network's tensor count;
    ``largest_size`` is what its compiled contraction must report for the entry to be used."""

    path: list[tuple[int, ...]]
    simplification_steps: int
    finder: str
    largest_size: int


def _file(key: tuple) -> Path | None:
    directory = persistent_cache_directory()
    if directory is None or not _storable(key):
        return None
    return directory / "plans" / f"{hashlib.sha256(repr(key).encode()).hexdigest()[:40]}.json"


def load_path(key: tuple, num_tensors: int) -> StoredPath | None:
    """The checked entry stored for ``key`` (a network of ``num_tensors`` tensors), or ``None``
    (no persistent cache, no entry, or an entry that cannot be trusted: reported once)."""
    return load_json_entry(_file(key), repr(key), _well_formed,
                           lambda entry: _trusted(entry, key, num_tensors), REDONE)


def store_path(key: tuple, path: Any, simplification_steps: int, finder: str, largest_size: int) -> None:
    """Keep ``path`` for ``key`` (nothing without a persistent cache, or for a custom finder); a
    directory that cannot be written is reported once and costs later processes a search."""
    file = _file(key)
    if file is None:
        return
    entry = {"format": FORMAT, "key": repr(key), "path": [[int(i) for i in step] for step in path],
             "simplification_steps": int(simplification_steps), "finder": finder,
             "largest_size": int(largest_size)}
    entry["checksum"] = _checksum(entry)
    write_entry(file, json.dumps(entry), "new paths are not kept")


def report_wrong_path(key: tuple) -> None:
    """Report the entry of ``key`` as damaged: its path compiled to another largest tensor than
    it recorded (the caller searches again, and its store rewrites the entry)."""
    report_damaged(_file(key), REDONE)


def _checksum(entry: dict) -> str:
    fields = {name: entry[name] for name in _FIELDS if name != "checksum"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _well_formed(entry: dict) -> bool:
    return set(entry) == set(_FIELDS) and all(
        isinstance(entry[name], kind) and not isinstance(entry[name], bool) for name, kind in _FIELDS.items())


def _trusted(entry: Any, key: tuple, num_tensors: int) -> StoredPath | None:
    """The entry as a :class:`StoredPath` if every check passes, else ``None``."""
    if not isinstance(entry, dict) or not _well_formed(entry):
        return None
    if entry["format"] != FORMAT or entry["key"] != repr(key) or entry["checksum"] != _checksum(entry):
        return None
    path = _contraction_of(entry["path"], num_tensors)
    steps = entry["simplification_steps"]
    if path is None or not 0 <= steps <= len(path) or entry["largest_size"] < 1:
        return None
    return StoredPath(path, steps, entry["finder"], entry["largest_size"])


def _contraction_of(path: list, num_tensors: int) -> list[tuple[int, ...]] | None:
    """``path`` as tuples if it is a linear-format contraction of ``num_tensors`` tensors to one
    (each step names distinct positions among the tensors then present), else ``None``."""
    present, steps = num_tensors, []
    for step in path:
        if not isinstance(step, list) or not step or len(set(step)) != len(step) or not all(
                type(i) is int and 0 <= i < present for i in step):
            return None
        present -= len(step) - 1
        steps.append(tuple(step))
    return steps if present == 1 else None


def _storable(key: tuple) -> bool:
    """Keys of named contractors only (a custom finder's key holds its id)."""
    return all(isinstance(item, (int, str, bool, type(None), tuple)) for item in key) and \
        "<" not in repr(key)
