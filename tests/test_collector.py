"""The garbage collector paused while plans are made (tyxonq.numerics.collector)."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.circuit.contraction import batching, plan
from tyxonq.numerics.collector import collector_paused
from tyxonq.operators.pauli import pauli_matrix


@pytest.fixture(autouse=True)
def _collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_resumes_after_the_outermost_block():
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block does not resume it
    assert gc.isenabled()


def test_the_collector_resumes_when_the_block_raises():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("planning failed")
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_blocks_in_two_threads_resume_the_collector_after_the_last_one():
    entered, leave = threading.Event(), threading.Event()
    seen = []

    def other():
        with collector_paused():
            entered.set()
            leave.wait(10)
        seen.append(gc.isenabled())

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert entered.wait(10)
    assert not gc.isenabled()  # the other thread's block is still open
    leave.set()
    thread.join(10)
    assert seen == [True] and gc.isenabled()


def test_plans_are_made_with_the_collector_paused_and_give_the_same_results(monkeypatch):
    enabled_while_planning = []
    original = plan._network_plan

    def recording(*args, **kwargs):
        enabled_while_planning.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(plan, "_network_plan", recording)
    tq.clear_caches()

    def circuit(n):  # a 4-qubit block (0-3) and, on wider circuits, gates on the other qubits
        c = tq.Circuit(n)
        for q in range(n):
            c.rx(q, theta=0.1 + 0.2 * q)
        for q in range(3):
            c.cx(q, q + 1)
        for q in range(4, n - 1):
            c.cz(q, q + 1)
        return c

    terms = [(0.5, "ZZ", {"z": [0, 1]}), (-1.0, "XY", {"x": [0], "y": [1]})]
    wide = circuit(40)
    value = sum(w * wide.expectation_ps(**letters) for w, _, letters in terms)
    assert enabled_while_planning and not any(enabled_while_planning)
    assert gc.isenabled()
    state = np.asarray(circuit(4).state())
    dense = sum(w * np.vdot(state, np.kron(pauli_matrix(s), np.eye(4)) @ state) for w, s, _ in terms)
    assert abs(complex(value) - dense) < 1e-10


def test_entry_orders_are_read_only_and_match_the_permutation():
    moves = (((2, 2, 2), (2, 0, 1)),)
    order = batching._entry_order(8, moves)
    expected = np.arange(8).reshape(2, 2, 2).transpose(2, 0, 1).reshape(-1)
    assert np.array_equal(order, expected)
    with pytest.raises(ValueError):
        order[0] = 5
    assert batching._entry_order(8, moves) is order
    assert np.array_equal(batching._entry_order(4, ()), np.arange(4))
