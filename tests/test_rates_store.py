"""Measured machine rates kept in the persistent cache: read by later processes instead of
measured, keyed by backend, machine and thread settings, and never trusted when damaged."""

from __future__ import annotations

import json
import math
import os
import warnings

import pytest

import tyxonq as tq
from tyxonq.circuit import calibration, rates_store
from tyxonq.circuit.contraction.route_costs import MachineRates
from tyxonq.numerics import persistent_cache
from tyxonq.numerics.persistent_cache import PersistentCacheWarning

FAKE = MachineRates(tensor_seconds=1.25e-5, madds_per_second=3.5e9, units_per_second=7.0e9,
                    passes_per_second=4.0e8)
COMPILED = MachineRates(tensor_seconds=1.25e-5, madds_per_second=3.5e9, units_per_second=7.0e9,
                        compile_seconds_per_tensor=2e-2, compiled_tensor_seconds=3e-6,
                        passes_per_second=4.0e8)


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """A persistent cache in ``tmp_path``, measured rates, and the backends each measurement was
    asked for (the probe replaced by :data:`FAKE`, or :data:`COMPILED` when compiles are timed)."""
    asked = []

    def probe(K, timing_compiles):
        asked.append((K.name, timing_compiles))
        return COMPILED if timing_compiles else FAKE

    monkeypatch.setattr(calibration, "_measure_aside", probe)
    monkeypatch.setattr(calibration, "_measured", {})
    persistent_cache._reported.clear()
    tq.set_persistent_cache(tmp_path)
    tq.set_machine_rates(None)
    yield asked
    tq.set_machine_rates("reference")
    tq.set_persistent_cache(None)
    persistent_cache._reported.clear()


def a_new_process() -> None:
    calibration._measured.clear()


def entry_file() -> object:
    (file,) = (tq.persistent_cache_directory() / "rates").glob("*.json")
    return file


def test_rates_measured_once_are_read_by_later_processes(measured):
    K = tq.get_backend("numpy")
    assert tq.machine_rates(K) is FAKE and measured == [("numpy", False)]
    a_new_process()
    again = tq.machine_rates(K)
    assert measured == [("numpy", False)]  # read, not measured
    assert again == FAKE and again.source == "measured"
    tq.machine_rates(tq.get_backend("pytorch"))  # another backend: its own entry
    assert measured == [("numpy", False), ("pytorch", False)]
    assert len(list((tq.persistent_cache_directory() / "rates").glob("*.json"))) == 2


def test_compiled_rates_are_measured_when_first_needed_then_kept(measured):
    K = tq.get_backend("numpy")
    assert calibration._stored_or_measured(K, timing_compiles=False) is FAKE
    assert calibration._stored_or_measured(K, timing_compiles=True) is COMPILED  # the entry had none
    assert calibration._stored_or_measured(K, timing_compiles=True) == COMPILED
    assert calibration._stored_or_measured(K, timing_compiles=False) == COMPILED  # serves eager calls too
    assert measured == [("numpy", False), ("numpy", True)]


@pytest.mark.parametrize("setting", [("OMP_NUM_THREADS", "7"), ("OPENBLAS_NUM_THREADS", "13"),
                                     ("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")])
def test_other_thread_settings_measure_again(measured, monkeypatch, setting):
    K = tq.get_backend("numpy")
    name, value = setting
    original = os.environ.get(name)
    tq.machine_rates(K)
    a_new_process()
    monkeypatch.setenv(name, value)
    tq.machine_rates(K)
    assert len(measured) == 2
    a_new_process()
    if original is None:
        monkeypatch.delenv(name)
    else:
        monkeypatch.setenv(name, original)
    tq.machine_rates(K)
    assert len(measured) == 2  # the first setting's entry is still there


def test_pytorch_threads_are_part_of_the_key():
    torch = pytest.importorskip("torch")
    K = tq.get_backend("pytorch")
    threads = torch.get_num_threads()
    before = rates_store.rates_key(K)
    torch.set_num_threads(threads + 1)
    try:
        assert rates_store.rates_key(K) != before
    finally:
        torch.set_num_threads(threads)
    assert rates_store.rates_key(K) == before


def damaged_entries(entry: dict) -> list[str | bytes]:
    rates = entry["rates"]
    resealed = []
    for name, value in (("madds_per_second", 0.0), ("tensor_seconds", -1.0), ("units_per_second", math.inf)):
        changed = {**entry, "rates": {**rates, name: value}}
        changed["checksum"] = rates_store._checksum(changed)
        resealed.append(json.dumps(changed, allow_nan=True))
    missing = {**entry, "rates": {k: v for k, v in rates.items() if k != "passes_per_second"}}
    return ["{not json", "[]", "null", b"\xff\xfe", json.dumps({**entry, "checksum": "0" * 64}),
            json.dumps({**entry, "format": 99}),
            json.dumps({**entry, "rates": {**rates, "madds_per_second": True}}),
            json.dumps({**entry, "rates": {**rates, "madds_per_second": 1e10}}),  # the checksum disagrees
            json.dumps(missing), *resealed]


def test_damaged_entries_are_measured_again_rewritten_and_reported_once(measured):
    K = tq.get_backend("numpy")
    tq.machine_rates(K)
    file = entry_file()
    sound = json.loads(file.read_text())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for number, content in enumerate(damaged_entries(sound), start=2):
            file.write_bytes(content.encode() if isinstance(content, str) else content)
            a_new_process()
            assert tq.machine_rates(K) == FAKE
            assert len(measured) == number  # measured again
            assert json.loads(file.read_text()) == sound  # and rewritten
    reported = [w for w in caught if issubclass(w.category, PersistentCacheWarning)]
    assert len(reported) == 1 and "damaged" in str(reported[0].message)


def test_a_directory_in_the_entrys_place_costs_a_measurement(measured):
    K = tq.get_backend("numpy")
    tq.machine_rates(K)
    file = entry_file()
    file.unlink()
    file.mkdir()
    a_new_process()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert tq.machine_rates(K) == FAKE
    assert len(measured) == 2


def test_another_keys_entry_under_the_same_name_is_not_used(measured, monkeypatch):
    K = tq.get_backend("numpy")
    tq.machine_rates(K)
    file = entry_file()
    entry = json.loads(file.read_text())
    entry["key"] = "('another machine',)"
    entry["checksum"] = rates_store._checksum(entry)
    file.write_text(json.dumps(entry))
    a_new_process()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not damage: nothing reported
        assert tq.machine_rates(K) == FAKE
    assert len(measured) == 2


def test_without_a_persistent_cache_every_process_measures(measured):
    tq.set_persistent_cache(None)
    K = tq.get_backend("numpy")
    tq.machine_rates(K)
    a_new_process()
    tq.machine_rates(K)
    assert len(measured) == 2


def test_failed_measurements_are_not_kept(measured, monkeypatch):
    reference = calibration.REFERENCE_RATES["numpy"]
    monkeypatch.setattr(calibration, "_measure_aside", lambda K, timing_compiles: reference)
    tq.machine_rates(tq.get_backend("numpy"))
    assert not (tq.persistent_cache_directory() / "rates").exists()


def test_real_measured_rates_round_trip(tmp_path):
    """The rates this machine measures come back from the entry unchanged, to the bit."""
    calibration._measured.clear()
    tq.set_persistent_cache(tmp_path)
    tq.set_machine_rates(None)
    try:
        K = tq.get_backend("numpy")
        first = tq.machine_rates(K)
        calibration._measured.clear()
        assert rates_store.load_rates(K) == first
        assert tq.machine_rates(K) == first
    finally:
        tq.set_machine_rates("reference")
        tq.set_persistent_cache(None)
        calibration._measured.clear()
