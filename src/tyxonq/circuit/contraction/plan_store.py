"""Contraction paths kept on disk, in the persistent cache (:func:`tyxonq.set_persistent_cache`).

A plan's costly part is its path search; the path depends only on the canonical network
(legs and output), the contractor, the dimension limit and the thoroughness, which together are
the key. One JSON file per key, named by the key's digest, holds the key itself (compared on
load, so a digest collision cannot pick a wrong path) and the path. Files are written to a
temporary name and renamed, so concurrent processes see a whole entry or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any

from ...numerics.persistent_cache import persistent_cache_directory

__all__ = ["load_path", "store_path"]

FORMAT = 1


def _file(key: tuple) -> Any:
    directory = persistent_cache_directory()
    if directory is None or not _storable(key):
        return None
    return directory / "plans" / f"{hashlib.sha256(repr(key).encode()).hexdigest()[:40]}.json"


def load_path(key: tuple) -> tuple[list[tuple[int, ...]], int, str] | None:
    """``(path, simplification steps, finder name)`` stored for ``key``, or ``None``."""
    file = _file(key)
    if file is None or not file.exists():
        return None
    try:
        entry = json.loads(file.read_text())
    except (OSError, ValueError):
        return None  # unreadable: searched again and rewritten
    if entry.get("format") != FORMAT or entry.get("key") != repr(key):
        return None
    return [tuple(step) for step in entry["path"]], int(entry["simplification_steps"]), entry["finder"]


def store_path(key: tuple, path: Any, simplification_steps: int, finder: str) -> None:
    """Keep ``path`` for ``key`` (nothing without a persistent cache, or for a custom finder)."""
    file = _file(key)
    if file is None:
        return
    file.parent.mkdir(parents=True, exist_ok=True)
    entry = {"format": FORMAT, "key": repr(key), "path": [list(step) for step in path],
             "simplification_steps": simplification_steps, "finder": finder}
    handle, temporary = tempfile.mkstemp(dir=file.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(entry, stream)
        os.replace(temporary, file)
    except OSError:  # a full or read-only disk costs a later search, never a result
        if os.path.exists(temporary):
            os.unlink(temporary)


def _storable(key: tuple) -> bool:
    """Keys of named contractors only (a custom finder's key holds its id)."""
    return all(isinstance(item, (int, str, bool, type(None), tuple)) for item in key) and \
        "<" not in repr(key)
