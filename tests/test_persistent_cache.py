"""The persistent cache: contraction paths kept on disk across processes, versioned, written
atomically, checked on load; JAX's compilation cache pointed there. Damaged entries and unusable
directories cost a search and one warning, never a result or ``import tyxonq``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.circuit.contraction import plan_store
from tyxonq.numerics import persistent_cache
from tyxonq.numerics.persistent_cache import PersistentCacheWarning


@pytest.fixture
def cache(tmp_path):
    persistent_cache._reported.clear()
    where = tq.set_persistent_cache(tmp_path)
    tq.clear_plan_cache()
    yield where
    tq.set_persistent_cache(None)
    tq.clear_plan_cache()
    persistent_cache._reported.clear()


def circuit():
    params = np.linspace(0.1, 1.2, 18)
    return tq.templates.rotation_ladder(9, params, 1)


def test_paths_are_kept_and_loaded_instead_of_searched(cache):
    expected = circuit().state(method="contraction")
    first = tq.plan_cache_info()
    assert (first.path_searches, first.loaded) == (1, 0)
    files = list((cache / "plans").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["path"]
    tq.clear_plan_cache()  # the memory cache only: a new process
    np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
    again = tq.plan_cache_info()
    assert (again.path_searches, again.loaded) == (0, 1)


def test_unreadable_or_foreign_entries_are_searched_again(cache):
    expected = circuit().state(method="contraction")
    (entry,) = (cache / "plans").glob("*.json")
    for content in ("{not json", json.dumps({**json.loads(entry.read_text()), "key": "other"})):
        entry.write_text(content)
        tq.clear_plan_cache()
        np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
        assert (tq.plan_cache_info().path_searches, tq.plan_cache_info().loaded) == (1, 0)
    assert json.loads(entry.read_text())["key"] != "other"  # rewritten


def entry_of(cache):
    (file,) = (cache / "plans").glob("*.json")
    return file, json.loads(file.read_text())


def with_checksum(entry):
    return {**entry, "checksum": plan_store._checksum(entry)}


def evaluate_with(cache, expected, content):
    """Replace the one entry's content, evaluate as a new process would, and return the warnings."""
    file, _ = entry_of(cache)
    if callable(content):  # puts something else in the entry's place
        content(file)
    else:
        file.write_bytes(content if isinstance(content, bytes) else content.encode())
    tq.clear_plan_cache()
    persistent_cache._reported.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
    info = tq.plan_cache_info()
    assert (info.path_searches, info.loaded) == (1, 0)
    assert entry_of(cache)[1]["checksum"] == plan_store._checksum(entry_of(cache)[1])  # rewritten
    return [w for w in caught if issubclass(w.category, PersistentCacheWarning)]


def damaged_contents(entry):
    """Every kind of damage a file can suffer: (name, content)."""
    text = json.dumps(entry)
    path = entry["path"]
    yield "truncated", text[: len(text) // 2]
    yield "random bytes", bytes(np.random.default_rng(5).integers(0, 256, 300, dtype=np.uint8))
    yield "empty", ""
    yield "null", "null"
    yield "a list", "[]"
    yield "wrong types", json.dumps({**entry, "path": 3})
    yield "a bool for an int", json.dumps(with_checksum({**entry, "simplification_steps": True}))
    yield "missing field", json.dumps({k: v for k, v in entry.items() if k != "largest_size"})
    yield "stale format", json.dumps({"format": 1, "key": entry["key"], "path": path,
                                      "simplification_steps": 0, "finder": "greedy"})
    yield "wrong checksum", json.dumps({**entry, "path": path[:-1]})
    yield "shortened path", json.dumps(with_checksum({**entry, "path": path[:-1]}))
    yield "index out of range", json.dumps(with_checksum({**entry, "path": [[0, 99]] + path[1:]}))
    yield "repeated index", json.dumps(with_checksum({**entry, "path": [[0, 0]] + path[1:]}))
    yield "too many steps", json.dumps(with_checksum({**entry, "path": path + [[0, 1]]}))
    yield "deeply nested", "[" * 100000 + "]" * 100000
    yield "deeply nested path", json.dumps({**entry, "path": "X"}).replace('"X"', "[" * 5000 + "]" * 5000)
    yield "an unhashable index", json.dumps(with_checksum({**entry, "path": [[[0], [1]]] + path[1:]}))
    yield "a huge number", json.dumps({**entry, "largest_size": "X"}).replace('"X"', "9" * 100000)
    yield "not UTF-8", json.dumps(entry).encode("utf-16")


def test_every_damaged_entry_is_ignored_searched_again_and_rewritten(cache):
    expected = circuit().state(method="contraction")
    _, entry = entry_of(cache)
    for name, content in damaged_contents(entry):
        reported = evaluate_with(cache, expected, content)
        assert len(reported) == 1, name
        assert "damaged" in str(reported[0].message), name


class Hung(BaseException):
    """Reading the cache blocked (not an Exception: no handler of the code under test takes it)."""


@contextlib.contextmanager
def failing_if_blocked(seconds: int = 30):
    """Turn a block that hangs (a read from a FIFO no one writes) into a :class:`Hung` failure."""
    def hung(*_):
        raise Hung(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def replaced_by_fifo(file):
    file.unlink()
    os.mkfifo(file)


def padded_beyond_the_size_cap(file):
    """A sound entry followed by whitespace: valid JSON, larger than any entry the cache writes."""
    file.write_text(file.read_text() + " " * (persistent_cache.MAX_ENTRY_BYTES + 1))


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "SIGALRM"), reason="POSIX only")
@pytest.mark.parametrize("replace", [replaced_by_fifo, padded_beyond_the_size_cap], ids=["fifo", "oversized"])
def test_only_regular_files_within_the_size_cap_are_read(cache, replace, monkeypatch):
    """A FIFO in an entry's place is not opened for a blocking read (nobody writes to it: the read
    would wait forever), an oversized file is not read; each is damage: ignored, reported once,
    searched again and replaced by a sound entry."""
    expected = circuit().state(method="contraction")
    monkeypatch.setattr(persistent_cache, "MAX_ENTRY_BYTES", 64 * 1024)
    with failing_if_blocked():
        reported = evaluate_with(cache, expected, replace)
    assert len(reported) == 1 and "damaged" in str(reported[0].message)
    assert stat.S_ISREG(entry_of(cache)[0].stat().st_mode)


def test_a_directory_in_an_entrys_place_costs_a_search(cache):
    expected = circuit().state(method="contraction")
    file, _ = entry_of(cache)
    file.unlink()
    file.mkdir()
    tq.clear_plan_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
    assert (tq.plan_cache_info().path_searches, tq.plan_cache_info().loaded) == (1, 0)
    messages = [str(w.message) for w in caught if issubclass(w.category, PersistentCacheWarning)]
    assert len(messages) == 2 and "damaged" in messages[0] and "could not write" in messages[1]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX only")
def test_read_entry_refuses_what_is_not_a_regular_file_within_the_cap(tmp_path):
    regular, fifo = tmp_path / "entry.json", tmp_path / "fifo.json"
    regular.write_bytes(b"{}")
    os.mkfifo(fifo)
    assert persistent_cache.read_entry(regular) == b"{}"
    with failing_if_blocked():
        for what, limit in ((fifo, None), (tmp_path, None), (regular, 1)):
            with pytest.raises(persistent_cache.DamagedEntry, match="regular file|larger than"):
                persistent_cache.read_entry(what, limit)
    with pytest.raises(FileNotFoundError):
        persistent_cache.read_entry(tmp_path / "missing.json")


def test_a_sound_path_for_another_contraction_order_is_not_trusted(cache):
    """A checksummed, well-formed path that contracts the network in another order than the one
    searched (its largest tensor differs from the recorded one) is searched again."""
    expected = circuit().state(method="contraction")
    _, entry = entry_of(cache)
    sequential = [[0, 1]] * (len(entry["path"]))
    assert sequential != entry["path"]
    reported = evaluate_with(cache, expected, json.dumps(with_checksum({**entry, "path": sequential,
                                                                        "simplification_steps": 0})))
    assert len(reported) == 1


def test_damage_is_reported_once_per_process(cache):
    expected = circuit().state(method="contraction")
    file, _ = entry_of(cache)
    persistent_cache._reported.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            file.write_text("null")
            tq.clear_plan_cache()
            np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
    assert len([w for w in caught if issubclass(w.category, PersistentCacheWarning)]) == 1


@contextlib.contextmanager
def read_only(directory: Path):
    """``directory`` read-only to this process: its mode bits cleared, and, as root (whom mode bits
    do not stop), the effective user switched to ``nobody`` for the block."""
    modes = {}
    for path in [directory, *directory.rglob("*")]:
        modes[path] = path.stat().st_mode
        path.chmod(stat.S_IMODE(modes[path]) & ~0o222 | 0o555 if path.is_dir() else 0o444)
    root = os.geteuid() == 0
    try:
        if root:
            os.seteuid(65534)
        with pytest.raises(PermissionError):
            (directory / "probe").write_text("")
        yield
    finally:
        if root:
            os.seteuid(0)
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))


def test_a_read_only_cache_is_read_and_writes_are_reported_once():
    """As a non-root user: the cache filled by an earlier run, then made read-only."""
    base = Path(tempfile.mkdtemp(prefix="tyxonq-read-only-"))
    base.chmod(0o755)
    persistent_cache._reported.clear()
    try:
        where = tq.set_persistent_cache(base)
        tq.clear_plan_cache()
        expected = circuit().state(method="contraction")
        other = tq.templates.rotation_ladder(8, np.linspace(0.1, 1.2, 16), 1).state(method="contraction")
        tq.clear_plan_cache()
        with read_only(where), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.testing.assert_allclose(circuit().state(method="contraction"), expected, atol=1e-12)
            assert (tq.plan_cache_info().path_searches, tq.plan_cache_info().loaded) == (0, 1)
            for width in (10, 8):  # a new structure: searched, its entry cannot be written
                c = tq.templates.rotation_ladder(width, np.linspace(0.1, 1.2, 2 * width), 1)
                np.testing.assert_allclose(c.state(method="contraction"), c.state(method="sweep"), atol=1e-12)
            np.testing.assert_allclose(c.state(method="contraction"), other, atol=1e-12)
            assert (tq.plan_cache_info().path_searches, tq.plan_cache_info().loaded) == (1, 2)
        reported = [w for w in caught if issubclass(w.category, PersistentCacheWarning)]
        assert len(reported) == 1 and "could not write" in str(reported[0].message)
    finally:
        tq.set_persistent_cache(None)
        tq.clear_plan_cache()
        persistent_cache._reported.clear()


def test_a_file_in_place_of_the_directory(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory")
    with pytest.raises(ValueError, match="directory=.*cannot hold the persistent cache"):
        tq.set_persistent_cache(blocker)
    with pytest.raises(ValueError, match="cannot hold"):
        tq.set_persistent_cache(blocker / "below")
    assert tq.persistent_cache_directory() is None


def test_a_file_in_place_of_the_plans_directory_costs_searches_only(cache):
    (cache / "plans").write_text("in the way")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = circuit().state(method="contraction")
        tq.clear_plan_cache()
        np.testing.assert_allclose(circuit().state(method="contraction"), first, atol=1e-12)
    kinds = sorted(str(w.message).split(":")[1].split()[0] for w in caught
                   if issubclass(w.category, PersistentCacheWarning))
    assert kinds == ["could", "could"]  # one read problem, one write problem, each once
    np.testing.assert_allclose(first, tq.templates.rotation_ladder(9, np.linspace(0.1, 1.2, 18), 1)
                               .state(method="sweep"), atol=1e-12)


def unwritable_directory(tmp_path: Path) -> Path:
    """A directory that cannot be created, whoever runs the tests (root is not stopped by mode
    bits, but no one makes directories at the top of sysfs)."""
    if Path("/sys").is_dir() and os.geteuid() == 0:
        return Path("/sys/tyxonq-cache")
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o555)
    return parent / "cache"


@pytest.mark.parametrize("setting", ["file", "under a file", "unwritable"])
def test_an_unusable_environment_setting_never_stops_import(tmp_path, setting):
    blocker = tmp_path / "file"
    blocker.write_text("")
    value = {"file": lambda: blocker, "under a file": lambda: blocker / "cache",
             "unwritable": lambda: unwritable_directory(tmp_path)}[setting]()
    code = "import tyxonq as tq\nassert tq.persistent_cache_directory() is None\n" + SCRIPT
    run = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "TYXONQ_PERSISTENT_CACHE": str(value)})
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("PersistentCacheWarning") == 1 and "TYXONQ_PERSISTENT_CACHE" in run.stderr
    assert run.stdout.split()[:2] == ["1", "0"]


def test_directory_is_versioned_and_off_by_default(tmp_path):
    assert tq.persistent_cache_directory() is None
    where = tq.set_persistent_cache(tmp_path)
    try:
        assert where.parent == tmp_path and where.name.startswith("v-")
        assert tq.persistent_cache_directory() == where
    finally:
        assert tq.set_persistent_cache(None) is None
    with pytest.raises(TypeError, match="directory"):
        tq.set_persistent_cache(3)


SCRIPT = """
import numpy as np, tyxonq as tq
c = tq.templates.rotation_ladder(9, np.linspace(0.1, 1.2, 18), 1)
state = c.state(method="contraction")
info = tq.plan_cache_info()
print(info.path_searches, info.loaded, repr(complex(state[5])))
"""


def test_concurrent_processes_share_the_directory(tmp_path):
    """Two processes at once (set by the environment variable), then a third that loads."""
    environment = {**os.environ, "TYXONQ_PERSISTENT_CACHE": str(tmp_path)}
    run = lambda: subprocess.Popen([sys.executable, "-c", SCRIPT], env=environment,  # noqa: E731
                                   stdout=subprocess.PIPE, text=True)
    outputs = [process.communicate(timeout=300)[0].split() for process in [run(), run()]]
    third = subprocess.run([sys.executable, "-c", SCRIPT], env=environment, capture_output=True,
                           text=True, timeout=300, check=True).stdout.split()
    assert third[:2] == ["0", "1"]
    assert {output[2] for output in outputs} == {third[2]}
    assert not list(tmp_path.rglob("*.tmp"))


def test_jax_compilation_cache_follows(tmp_path):
    jax = pytest.importorskip("jax")
    where = tq.set_persistent_cache(tmp_path)
    try:
        tq.get_backend("jax")
        assert jax.config.jax_compilation_cache_dir == str(where / "xla")
    finally:
        tq.set_persistent_cache(None)
        jax.config.update("jax_compilation_cache_dir", None)


def test_one_call_reports_and_empties_every_in_process_cache():
    """tq.cache_info() / tq.clear_caches() cover plans, sweep programs, structure tokens, backend
    constants, compiled objectives and the structural helpers; results are the same afterwards."""
    tq.clear_caches()
    assert tq.cache_info().total == 0
    c = circuit()
    swept, contracted = c.state(method="sweep"), c.state(method="contraction")
    value = c.expectation_ps(z=[3])
    tq.optimize.minimize(lambda t: tq.Circuit(1).rx(0, t[0]).expectation_ps(z=[0]), [0.1], maxiter=2,
                         progress=False, jit=True)
    sizes = tq.cache_info().sizes
    for name in ("plans", "sweep programs", "structure tokens", "backend constants", "compiled objectives",
                 "tyxonq.circuit.contraction.tensor_forms.tensor_form"):
        assert sizes[name] > 0, name
    tq.clear_caches()
    info = tq.cache_info()
    assert info.total == 0 and info.plans.path_searches == 0
    np.testing.assert_allclose(c.state(method="sweep"), swept, atol=1e-12)
    np.testing.assert_allclose(c.state(method="contraction"), contracted, atol=1e-12)
    np.testing.assert_allclose(c.expectation_ps(z=[3]), value, atol=1e-12)
