"""Exact gradients of noisy Pauli sums through the one density matrix: reverse mode through the
doubled network's contraction, its result read against the sum's readout matrix. Checked against
the dense reference (values, finite differences), against reverse mode through the strings' light
cones, on every route choice, as PyTorch's gradient node, and through slices."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_noise import build, noisy_circuits, reference_density
from test_route_choice import ARITHMETIC_DEAR, HAMILTONIAN, TENSORS_DEAR, noisy_ansatz

import tyxonq as tq
from conftest import make_backend
from reference import PARAMETRISED, pauli_matrix, random_hermitian
from tyxonq.circuit.contraction.evaluation import Request, value_and_angle_gradients
from tyxonq.circuit.contraction.network import density_network
from tyxonq.circuit.contraction.slicing import find_slicing
from tyxonq.circuit.density import dm_circuit
from tyxonq.operators.state_expectation import density_pauli_readout


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2 ** 16), count=st.integers(1, 5))
def test_the_readout_reads_the_weighted_strings_from_any_density_matrix(n, seed, count):
    rng = np.random.default_rng(seed)
    strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(count)]
    weights = rng.normal(size=count)
    rho = random_hermitian(rng, n) + 1j * random_hermitian(rng, n)  # any matrix: the reading is linear
    expected = sum(w * np.trace(pauli_matrix(s) @ rho) for w, s in zip(weights, strings))
    np.testing.assert_allclose(np.sum(density_pauli_readout(strings, weights) * rho), expected, atol=1e-12)


def with_angles(operations: list[tuple], angles) -> list[tuple]:
    """The operations with their gate angles taken from ``angles``, in order."""
    out, k = [], 0
    for kind, name, qubits, params in operations:
        if kind == "gate" and name in PARAMETRISED:
            count = len(params)
            params, k = tuple(angles[k:k + count]), k + count
        out.append((kind, name, qubits, params))
    return out


def reference_energy(n: int, operations: list[tuple], hamiltonian: tq.PauliSum) -> float:
    rho = reference_density(n, operations)
    return float(sum(w * np.trace(pauli_matrix(s) @ rho) for w, s in hamiltonian).real)


@settings(max_examples=25, deadline=None)
@given(circuit=noisy_circuits(max_qubits=3, max_operations=10), seed=st.integers(0, 2 ** 16))
def test_gradients_through_the_density_matrix_equal_the_light_cones_and_the_reference(circuit, seed):
    """``method="state"`` (reverse mode through the density matrix), ``"lightcone"`` and ``"auto"``
    give one value and gradient: the dense reference's, and its finite differences."""
    n, operations = circuit
    angles = np.asarray([a for kind, name, _, params in operations if kind == "gate" and name in PARAMETRISED
                         for a in params])
    assume(len(angles) > 0)
    rng = np.random.default_rng(seed)
    hamiltonian = tq.PauliSum([(float(rng.normal()), "".join(rng.choice(list("IXYZ"), n)))
                               for _ in range(rng.integers(1, 5))])
    expected = reference_energy(n, with_angles(operations, angles), hamiltonian)
    step = 1e-6
    numeric = [(reference_energy(n, with_angles(operations, angles + step * e), hamiltonian)
                - reference_energy(n, with_angles(operations, angles - step * e), hamiltonian)) / (2 * step)
               for e in np.eye(len(angles))]
    with tq.use_backend("numpy"):
        found = {}
        for method in ("state", "lightcone", "auto"):
            def energy(x, m=method):
                return build(n, with_angles(operations, x)).expectation(hamiltonian, method=m)

            value, gradient = tq.value_and_grad(energy)(angles)
            assert abs(value - expected) < 1e-10
            found[method] = gradient
    np.testing.assert_allclose(found["state"], found["lightcone"], atol=1e-10)
    np.testing.assert_allclose(found["auto"], found["lightcone"], atol=1e-10)
    np.testing.assert_allclose(found["state"], numeric, atol=1e-6)


class Readouts:
    """Counts the reverse passes run with a readout (through a whole state) and without."""

    def __init__(self, monkeypatch):
        self.through_state = self.scalar = 0
        original = value_and_angle_gradients

        def counted(*args, readouts=None, **kwargs):
            if readouts is None:
                self.scalar += 1
            else:
                self.through_state += 1
            return original(*args, readouts=readouts, **kwargs)

        monkeypatch.setattr("tyxonq.circuit.differentiation.traced.value_and_angle_gradients", counted)


@pytest.mark.parametrize("rates,through_state", [(TENSORS_DEAR, True), (ARITHMETIC_DEAR, False)])
def test_a_traced_weighted_sum_takes_the_route_its_values_take(monkeypatch, rates, through_state):
    """Where the density matrix is the cheaper route for the values, the exact gradient runs
    reverse mode through it (one pass); where the light cones are, through them."""
    n, angles = 4, np.linspace(-1, 1, 16)
    def energy(x, method="auto"):
        return noisy_ansatz(n, x).expectation(HAMILTONIAN, method=method)

    with tq.use_backend("numpy"):
        expected = tq.value_and_grad(lambda x: energy(x, "lightcone"))(angles)
        readouts = Readouts(monkeypatch)
        tq.set_machine_rates(rates)
        try:
            value, gradient = tq.value_and_grad(energy)(angles)
        finally:
            tq.set_machine_rates("reference")
    assert (readouts.through_state, readouts.scalar) == ((1, 0) if through_state else (0, 1))
    assert abs(value - expected[0]) < 1e-10
    np.testing.assert_allclose(gradient, expected[1], atol=1e-10)


THREE_QUBITS = tq.PauliSum([(0.7, "ZZI"), (-0.4, "XIX"), (0.3, "IYY"), (0.2, "III")])


def test_second_derivatives_through_the_density_matrix():
    n, angles = 3, np.linspace(-1, 1, 12)
    with tq.use_backend("numpy"):
        hessians = [tq.hessian(lambda x, m=m: noisy_ansatz(n, x).expectation(THREE_QUBITS, method=m))(angles)
                    for m in ("state", "lightcone")]
    np.testing.assert_allclose(hessians[0], hessians[1], atol=1e-9)


def test_a_state_route_that_does_not_fit_is_refused_or_passed_over():
    """Asked for, reverse mode through a density matrix beyond the memory budget is refused
    naming it; chosen automatically, the light cones are taken instead (same values)."""
    n, angles = 6, np.linspace(-1, 1, 24)
    hamiltonian = tq.hamiltonians.tfim(n)

    def energy(x, method="auto"):
        return noisy_ansatz(n, x).expectation(hamiltonian, method=method)

    with tq.use_backend("numpy"):
        expected = tq.value_and_grad(lambda x: energy(x, "lightcone"))(angles)
        tq.set_machine_rates(TENSORS_DEAR)
        try:
            with tq.use_memory_limit("16 KiB"):  # the 4^6 entries take 64 KiB
                value, gradient = tq.value_and_grad(energy)(angles)
                with pytest.raises(MemoryError, match="density matrix of 6 qubit"):
                    tq.value_and_grad(lambda x: energy(x, "state"))(angles)
        finally:
            tq.set_machine_rates("reference")
    assert abs(value - expected[0]) < 1e-10
    np.testing.assert_allclose(gradient, expected[1], atol=1e-10)


def test_pytorch_takes_one_gradient_node_through_the_density_matrix(monkeypatch):
    """On PyTorch, a noisy energy whose angles autograd records is one gradient node whose
    backward pass is reverse mode through the density matrix (on the host twin): the gradient of
    NumPy's traced route, of autograd through the simulator, and of finite differences."""
    torch = pytest.importorskip("torch")
    n, angles = 4, np.linspace(-1, 1, 16)
    with tq.use_backend("numpy"):
        energy = lambda x: noisy_ansatz(n, x).expectation(HAMILTONIAN)  # noqa: E731
        expected_value, expected = tq.value_and_grad(energy)(angles)
    readouts = Readouts(monkeypatch)
    nodes = []
    original = dm_circuit.DMCircuit._state_gradient_slots
    monkeypatch.setattr(dm_circuit.DMCircuit, "_state_gradient_slots",
                        lambda self, *a: nodes.append(original(self, *a) is not None) or original(self, *a))
    K = make_backend("pytorch")
    tq.set_machine_rates(TENSORS_DEAR)
    try:
        with tq.use_backend(K):
            x = torch.tensor(angles, requires_grad=True)
            value = noisy_ansatz(n, x).expectation(HAMILTONIAN)
            value.backward()
            with tq.gradient_method("autograd"):
                y = torch.tensor(angles, requires_grad=True)
                noisy_ansatz(n, y).expectation(HAMILTONIAN).backward()
    finally:
        tq.set_machine_rates("reference")
    assert nodes == [True, False] and readouts.through_state == 1  # autograd: through the simulator
    assert abs(float(value.detach()) - expected_value) < 1e-10
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), expected, atol=1e-10)


def test_a_sliced_contraction_is_read_slice_by_slice():
    """Reverse mode with a readout through a sliced contraction (a reduced density matrix whose
    intermediates outgrow it): every slice is read against its request's readout, and the value
    and angle gradients equal the unsliced ones and the reading of the matrix itself."""
    n, kept = 6, (1, 2)
    c = noisy_ansatz(n, np.linspace(-1, 1, 4 * n))
    plan = c.result_plan(("density", kept), lambda: density_network(n, list(c.operations), False, kept),
                         (4, 4), "the density matrix of 2 qubits")
    slicing = find_slicing(plan, plan.largest_tensor_size // 4)
    if slicing is None:
        pytest.skip("cotengra is missing")
    assert slicing.count >= 2
    readout = density_pauli_readout(["ZZ", "XY", "IZ"], [0.5, -1.25, 0.75])
    slots = [(k, 0) for k, op in enumerate(c.operations) if op.params]
    wanted = {k: [(slot, 0)] for slot, (k, _) in enumerate(slots)}
    K = tq.get_backend("numpy")
    whole, sliced = (value_and_angle_gradients(K, c.operations, c.input_state(K), [Request(p)], wanted,
                                               len(slots), readouts=[readout])
                     for p in (plan, replace(plan, slicing=slicing)))
    np.testing.assert_allclose(sliced[0], whole[0], atol=1e-12)
    np.testing.assert_allclose(sliced[1], whole[1], atol=1e-12)
    assert abs(whole[0][0] - np.sum(readout * K.to_numpy(c.reduced_density_matrix(kept)))) < 1e-12
    assert np.abs(whole[1]).max() > 1e-3  # the angles matter


def test_single_precision_through_the_density_matrix():
    """complex64: the state route's value and gradient within 1e-5 of double precision's."""
    n, angles = 4, np.linspace(-1, 1, 16)
    found = {}
    for dtype in ("complex128", "complex64"):
        with tq.use_backend(make_backend("numpy", dtype=dtype)):
            found[dtype] = tq.value_and_grad(
                lambda x: noisy_ansatz(n, x).expectation(HAMILTONIAN, method="state"))(angles)
    assert abs(found["complex64"][0] - found["complex128"][0]) < 1e-5
    np.testing.assert_allclose(found["complex64"][1], found["complex128"][1], atol=1e-5)
