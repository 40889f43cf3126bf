"""Bad input gets the same clear error on every backend and simulator: one matrix of
backend x simulator x bad argument, each case asserting the exception type and a fragment of the
message that names the argument (tyxonq.numerics.arguments holds the shared checks)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.numerics.memory import format_bytes, sample_bytes

SIMULATORS = {"Circuit": tq.Circuit, "DMCircuit": tq.DMCircuit, "MPSCircuit": tq.MPSCircuit}


def on_backend(K, values):
    """``values`` as an array of the backend under test (NumPy's own for the NumPy backends)."""
    return K.asarray(np.asarray(values))


BAD_STATES = {
    # name: (make the state from K, exception type, message fragment)
    "unnormalised": (lambda K: np.ones(8), ValueError,
                     "inputs must be a normalised state; its norm is 2.828"),
    "unnormalised on the backend": (lambda K: on_backend(K, np.ones(8, complex)), ValueError,
                                    "inputs must be a normalised state; its norm is 2.828"),
    "zero": (lambda K: np.zeros(8), ValueError, "its norm is 0"),
    "zero on the backend": (lambda K: on_backend(K, np.zeros(8)), ValueError, "its norm is 0"),
    "nan": (lambda K: np.full(8, np.nan), ValueError, "its norm is nan"),
    "nan on the backend": (lambda K: on_backend(K, np.full(8, np.nan)), ValueError, "its norm is nan"),
    "wrong length": (lambda K: np.ones(4) / 2, ValueError, "inputs has shape (4,)"),
    "text": (lambda K: np.array(["a"] * 8), TypeError, "inputs dtype"),
}


@pytest.mark.parametrize("simulator", sorted(SIMULATORS))
@pytest.mark.parametrize("case", sorted(BAD_STATES))
def test_bad_input_states(K, simulator, case):
    make, error, fragment = BAD_STATES[case]
    with tq.use_backend(K), pytest.raises(error) as raised:
        SIMULATORS[simulator](3, inputs=make(K))
    assert fragment in str(raised.value)


BAD_ANGLES = {
    "nan": (float("nan"), ValueError, "theta=nan is not finite"),
    "inf": (math.inf, ValueError, "theta=inf is not finite"),
    "complex": (1j, TypeError, "must be real"),
    "bool": (True, TypeError, "not a bool"),
    "text": ("0.3", TypeError, "theta='0.3' must be a real number"),
    "vector": (np.ones(2), ValueError, "theta must be a scalar"),
}


@pytest.mark.parametrize("simulator", sorted(SIMULATORS))
@pytest.mark.parametrize("case", sorted(BAD_ANGLES))
@pytest.mark.parametrize("as_array", [False, True], ids=["number", "backend array"])
def test_bad_angles(K, simulator, case, as_array):
    value, error, fragment = BAD_ANGLES[case]
    if as_array:
        if case in ("text", "bool"):
            pytest.skip("no backend array of text; booleans are no floating dtype (tested below)")
        value = K.asarray(np.asarray(value, dtype=complex if case == "complex" else float))
    with tq.use_backend(K), pytest.raises(error) as raised:
        SIMULATORS[simulator](2).rx(0, theta=value)
    assert fragment in str(raised.value) and "rx" in str(raised.value)


BAD_SHOTS = {
    "zero": (0, ValueError, "shots=0 must be a positive int"),
    "negative": (-3, ValueError, "shots=-3 must be a positive int"),
    "float": (1.5, TypeError, "shots=1.5 must be a positive int"),
    "bool": (True, TypeError, "shots=True must be a positive int"),
    "text": ("10", TypeError, "shots='10' must be a positive int"),
    "too many": (10 ** 15, MemoryError, "sample(shots=1000000000000000) needs"),
}
BAD_SEEDS = {
    "text": ("a", TypeError, "seed='a' must be an int"),
    "negative": (-1, ValueError, "seed=-1 must be a non-negative int"),
    "float": (1.5, TypeError, "seed=1.5 must be an int"),
    "too large": (2 ** 64, ValueError, "below 2**64"),
    "bool": (True, TypeError, "seed=True must be an int"),
}


@pytest.mark.parametrize("simulator", sorted(SIMULATORS))
@pytest.mark.parametrize("case", sorted(BAD_SHOTS))
def test_bad_shots(K, simulator, case):
    shots, error, fragment = BAD_SHOTS[case]
    circuit = SIMULATORS[simulator](2).h(0)
    with tq.use_backend(K):
        with pytest.raises(error) as raised:
            circuit.sample(shots, seed=1)
        assert fragment in str(raised.value)
        if error is not MemoryError:  # the estimates from shots refuse them alike
            with pytest.raises(error, match="shots="):
                circuit.sample_expectation_ps(z=[0], shots=shots, seed=1)
            with pytest.raises(error, match="shots="):
                tq.PauliSum([(1.0, "ZI")]).expectation(circuit, shots=shots, seed=1)


@pytest.mark.parametrize("simulator", sorted(SIMULATORS))
@pytest.mark.parametrize("case", sorted(BAD_SEEDS))
def test_bad_seeds(K, simulator, case):
    seed, error, fragment = BAD_SEEDS[case]
    circuit = SIMULATORS[simulator](2).h(0)
    with tq.use_backend(K):
        for call in (lambda: circuit.sample(10, seed=seed),
                     lambda: circuit.sample_expectation_ps(z=[0], shots=10, seed=seed),
                     lambda: tq.PauliSum([(1.0, "ZI")]).expectation(circuit, shots=10, seed=seed),
                     lambda: K.rng(seed)):
            with pytest.raises(error) as raised:
                call()
            assert fragment in str(raised.value)


def test_bad_trajectory_arguments():
    c = tq.Circuit(2).h(0).depolarizing(0, p=0.1)
    h = tq.PauliSum([(1.0, "ZZ")])
    with pytest.raises(ValueError, match="seed=-1"):
        tq.noise.trajectory_expectation(c, h, 10, seed=-1)
    with pytest.raises(TypeError, match="trajectories=2.5"):
        tq.noise.trajectory_expectation(c, h, 2.5, seed=1)
    with pytest.raises(ValueError, match="trajectories=1"):
        tq.noise.trajectory_expectation(c, h, 1, seed=1)


def test_readable_angles_are_checked_and_traced_ones_pass_through():
    """Inside a transform an angle has no value to read: its shape and dtype are still checked,
    and the result is computed (no error, no host read)."""
    torch = pytest.importorskip("torch")
    with tq.use_backend("pytorch"):
        with pytest.raises(ValueError, match="not finite"):
            tq.Circuit(1).rx(0, theta=torch.tensor(float("nan"), dtype=torch.float64, requires_grad=True))
        energies = torch.func.vmap(lambda t: tq.Circuit(1).rx(0, theta=t).expectation_ps(z=[0]))(
            torch.tensor([0.1, 0.2], dtype=torch.float64))
        np.testing.assert_allclose(energies.numpy(), np.cos([0.1, 0.2]), atol=1e-12)


def test_the_memory_refusal_holds_at_any_width():
    for n in (64, 1100, 10 ** 6):
        with pytest.raises(MemoryError, match=f"state\\(\\) of {n} qubits needs"):
            tq.Circuit(n).state()
    assert format_bytes(2 ** 100) == "2^100 B"
    assert sample_bytes(10, 3, "bitstrings", bits=True) > sample_bytes(10, 3, "counts", bits=False)


def test_a_memory_limit_lowers_every_pre_check():
    """tq.set_memory_limit / tq.use_memory_limit cap what one intermediate may take: a state that
    fits the device is refused under the cap (and computed again without it); bad caps are
    refused by name."""
    c = tq.Circuit(16).h(0)
    with tq.use_memory_limit("512 KiB") as cap:
        assert cap == 512 * 1024 and tq.memory_limit() == cap
        with pytest.raises(MemoryError, match="1 MiB .* but 512 KiB is available under tq.set_memory_limit"):
            c.state()
    assert tq.memory_limit() == math.inf
    assert c.state().shape == (2 ** 16,)
    for bad, error in (("lots", ValueError), (-1, ValueError), (True, TypeError), ([1], TypeError)):
        with pytest.raises(error, match="limit="):
            tq.set_memory_limit(bad)
