"""Sliced contractions: under a memory budget a contraction too large for it is computed slice by
slice; values and exact gradients equal the unsliced ones on every backend, tq.rehearse reports
the slices, and a slicing that would cost too much is refused with its cost."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from test_circuit import add_operations
from tyxonq.circuit.contraction.slicing import SLICED_COST_FACTOR

pytest.importorskip("cotengra")

ITEMSIZE = 16  # complex128


def scrambler(n: int, layers: int, seed: int = 0) -> tuple[list[tuple], np.ndarray]:
    """RY layers and CX on random pairs: light cones that spread over every qubit."""
    rng = np.random.default_rng(seed)
    operations = []
    for _ in range(layers):
        operations += [("ry", (q,), (float(rng.uniform(0, 3)),)) for q in range(n)]
        operations += [("cx", (int(a), int(b)), ()) for a, b in rng.permutation(n).reshape(n // 2, 2)]
    return operations, rng.uniform(0, 3, layers * n)


def budget_below(report: tq.circuit.ContractionReport, halvings: int) -> int:
    """Bytes that hold the forward contraction of a slice ``2**halvings`` times narrower."""
    return int(3 * ITEMSIZE * 2 ** (report.width - halvings))


ONE_QUBIT = ("rx", "ry", "rz", "h", "u")
TWO_QUBIT = ("cx", "cz", "rzz", "swap", "iswap", "crx")


@st.composite
def deep_circuits(draw):
    """Layers of random one-qubit gates and random two-qubit gates on random pairs: light cones
    that cover the circuit, wide enough to slice."""
    n = draw(st.sampled_from([8, 10, 12]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    operations = []
    for _ in range(draw(st.integers(5, 8))):
        for q in range(n):
            gate = ONE_QUBIT[rng.integers(len(ONE_QUBIT))]
            count = {"h": 0, "u": 3}.get(gate, 1)
            operations.append((gate, (q,), tuple(float(a) for a in rng.uniform(-3, 3, count))))
        for a, b in rng.permutation(n).reshape(n // 2, 2):
            gate = TWO_QUBIT[rng.integers(len(TWO_QUBIT))]
            params = (float(rng.uniform(-3, 3)),) if gate in ("rzz", "crx") else ()
            operations.append((gate, (int(a), int(b)), params))
    return n, operations


@settings(max_examples=15, deadline=None)
@given(case=deep_circuits(), halvings=st.integers(1, 2), observed=st.sampled_from(["z", "x", "y"]))
def test_sliced_results_equal_unsliced_ones(case, halvings, observed):
    """Whenever slicing is taken (hypothesis discards the cases it is not: too many discards fail
    the test), local expectations and amplitudes equal the unsliced ones."""
    n, operations = case
    c = add_operations(tq.Circuit(n), operations)
    pauli = {observed: [n // 2], "z": [0]} if observed != "z" else {"z": [0, n // 2]}
    with tq.use_backend("numpy"):
        unsliced = tq.rehearse(c.expectation_ps, **pauli)
        expected = complex(c.expectation_ps(**pauli))
        amplitude = complex(c.amplitude(3))
        with tq.use_memory_limit(budget_below(unsliced, halvings)):
            report = tq.rehearse(c.expectation_ps, **pauli)
            assume("sliced" in report.routes)
            assert report.slices >= 2 and report.width < unsliced.width
            np.testing.assert_allclose(complex(c.expectation_ps(**pauli)), expected, atol=1e-10)
            np.testing.assert_allclose(complex(c.amplitude(3)), amplitude, atol=1e-10)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax", "cupynumeric-logic"]))
def test_values_and_exact_gradients_through_slices(backend_name):
    n = 12
    operations, _ = scrambler(n, 8)
    angles = np.asarray([params[0] for gate, _, params in operations if gate == "ry"])

    def energy(t):
        c = tq.Circuit(n)
        k = 0
        for gate, qubits, _ in operations:
            if gate == "ry":
                c.ry(qubits[0], theta=t[k])
                k += 1
            else:
                c.cx(*qubits)
        return c.expectation_ps(z=[3]) + 0.5 * c.expectation_ps(x=[7], z=[2])

    with tq.use_backend(make_backend(backend_name)) as K:
        x = K.asarray(angles)
        value, gradient = tq.value_and_grad(energy)(x)
        unsliced = tq.rehearse(energy, x)
        with tq.use_memory_limit(budget_below(unsliced, 2)):
            report = tq.rehearse(energy, x)
            assert "sliced" in report.routes and report.slices >= 4
            assert report.width < unsliced.width
            sliced_value, sliced_gradient = tq.value_and_grad(energy)(x)
    np.testing.assert_allclose(float(K.to_numpy(sliced_value)), float(K.to_numpy(value)), atol=1e-10)
    np.testing.assert_allclose(K.to_numpy(sliced_gradient), K.to_numpy(gradient), atol=1e-10)


def test_a_pauli_sum_and_a_density_matrix_slice_too():
    n = 10
    operations, _ = scrambler(n, 6, seed=2)
    c = add_operations(tq.Circuit(n), operations)
    h = tq.PauliSum([(1.0, "Z" * 2 + "I" * (n - 2)), (0.5, "I" * 5 + "XX" + "I" * (n - 7))])
    half = len(operations) // 2
    dm = add_operations(add_operations(tq.DMCircuit(n), operations[:half]).depolarizing(4, p=0.1),
                        operations[half:])
    with tq.use_backend("numpy"):
        energy = float(h.expectation(c, method="lightcone"))
        noisy = float(dm.expectation_ps(z=[4]))
        width = max(tq.rehearse(h.expectation, c, method="lightcone").width,
                    tq.rehearse(dm.expectation_ps, z=[4]).width)
        with tq.use_memory_limit(budget_below(tq.rehearse(dm.expectation_ps, z=[4]), 2)):
            assert "sliced" in tq.rehearse(dm.expectation_ps, z=[4]).routes
            np.testing.assert_allclose(float(dm.expectation_ps(z=[4])), noisy, atol=1e-10)
        with tq.use_memory_limit(int(3 * ITEMSIZE * 2 ** (width - 2))):
            np.testing.assert_allclose(float(h.expectation(c, method="lightcone")), energy, atol=1e-10)


def test_a_slicing_that_costs_too_much_is_refused_with_its_cost():
    n = 14
    operations, _ = scrambler(n, 8, seed=1)
    c = add_operations(tq.Circuit(n), operations)
    with tq.use_backend("numpy"):
        width = tq.rehearse(c.expectation_ps, z=[3]).width
        with tq.use_memory_limit(int(3 * ITEMSIZE * 2 ** (width - 8))), \
                pytest.raises(MemoryError) as refused:
            c.expectation_ps(z=[3])
    message = str(refused.value)
    assert "slices would fit but cost" in message and f"more than {SLICED_COST_FACTOR:g}x" in message
