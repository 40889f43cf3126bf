"""The persistent cache: contraction paths kept on disk across processes, versioned, written
atomically; JAX's compilation cache pointed there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tyxonq as tq


@pytest.fixture
def cache(tmp_path):
    where = tq.set_persistent_cache(tmp_path)
    tq.clear_plan_cache()
    yield where
    tq.set_persistent_cache(None)
    tq.clear_plan_cache()


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
