"""State-vector sweeps: placements, fused blocks and the adjoint sweep against dense references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, jax_in_matrix, make_backend
from reference import PARAMETRISED, apply, reference_state
from test_circuit import PRECISIONS, build, check, random_circuits
from tyxonq.circuit.operations.fusion import MAX_BLOCK_QUBITS
from tyxonq.circuit.statevector import adjoint
from tyxonq.circuit.statevector.placement import apply_placed, place
from tyxonq.circuit.statevector.sweep import (
    bind_matrices,
    block_operators,
    run_sweep,
    sweep_program,
    zero_state,
)


def check_placement(n, qubits, lead, trail, diagonal, max_ndim, seed):
    k = len(qubits)
    rng = np.random.default_rng(seed)
    array = rng.normal(size=(lead, 2 ** n, trail)) + 1j * rng.normal(size=(lead, 2 ** n, trail))
    matrix = rng.normal(size=(2 ** k, 2 ** k)) + 1j * rng.normal(size=(2 ** k, 2 ** k))
    if diagonal:
        matrix = np.diag(np.diag(matrix))
    placement = place(qubits, n, lead=lead, trail=trail, diagonal=diagonal, max_ndim=max_ndim,
                      shape=(lead, 2 ** n, trail))
    assert len(placement.view) <= max_ndim
    K = tq.get_backend("numpy")
    got = apply_placed(K, array, np.diag(matrix) if placement.kind == "diagonal" else matrix, placement)
    expected = np.stack([np.stack([apply(array[i, :, j], matrix, qubits, n) for j in range(trail)], -1)
                         for i in range(lead)])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    return placement


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 7), data=st.data())
def test_placements_apply_like_the_reference(n, data):
    """Every placement kind, qubit order, lead/trail size and dimension limit."""
    k = data.draw(st.integers(1, min(3, n)))
    qubits = tuple(data.draw(st.permutations(range(n)))[:k])
    lead, trail = data.draw(st.sampled_from([1, 2, 3])), data.draw(st.sampled_from([1, 2, 4]))
    check_placement(n, qubits, lead, trail, data.draw(st.booleans()), data.draw(st.sampled_from([6, 64])),
                    data.draw(st.integers(0, 2 ** 16)))


@pytest.mark.parametrize("qubits", [(1, 2), (2, 1), (0, 1, 2)])
@pytest.mark.parametrize("after", [1, 2, 3])
def test_views_with_few_trailing_entries_apply_like_the_reference(qubits, after):
    """A view with at most WIDENED_RIGHT trailing entries is applied as ``M ⊗ I_right`` from the
    right (qubits in and out of order, one and two registers stacked); wider ones by the batch."""
    n = max(qubits) + 1 + after
    for lead in (1, 2):
        placement = check_placement(n, qubits, lead, 1, False, 64, after)
        assert placement.kind == "view" and placement.view[2] == 2 ** after


def test_a_diagonal_past_the_dimension_limit_on_unordered_qubits():
    """Found by the test above: a diagonal that needs more than max_ndim axes is applied as a full
    matrix, so its qubit-order permutation must be the full matrix's (it was the diagonal's)."""
    assert check_placement(5, (2, 0, 4), 2, 2, True, 6, 0).kind == "moves"


@pytest.mark.parametrize("backend_name", jax_in_matrix(BACKEND_IDS))
@pytest.mark.parametrize("precision", PRECISIONS)
@settings(max_examples=25, deadline=None)
@given(circuit=random_circuits(max_qubits=7, max_gates=16))
def test_sweep_states_match_the_reference(backend_name, precision, circuit):
    K = make_backend(backend_name, dtype=precision)
    n, operations = circuit
    with tq.use_backend(K):
        ops = build(n, operations).operations
        program = sweep_program(n, ops, K.capabilities.max_ndim)
        state = run_sweep(K, program, block_operators(K, program, bind_matrices(K, ops)), zero_state(K, n))
    for block in program.blocks:
        window = block.qubits == tuple(range(block.qubits[0], block.qubits[-1] + 1))
        alone = len(block.members) == 1
        assert block.diagonal or (window and len(block.qubits) <= MAX_BLOCK_QUBITS) or alone
        assert not block.diagonal or 2 * len(block.qubits) + 1 <= K.capabilities.max_ndim or alone
    check(K, state, reference_state(n, operations), precision)


@st.composite
def parametrised_circuits(draw):
    """Parametrised gates (every kind) and fixed gates on 3-7 qubits, far-apart pairs included,
    a random Pauli observable, maybe the inverse circuit."""
    n = draw(st.integers(3, 7))
    kinds = [g for g, (k, _, _) in PARAMETRISED.items() if k <= 2] + ["h", "cx", "cz", "ccx", "swap"]
    operations = []
    for _ in range(draw(st.integers(1, 14))):
        gate = draw(st.sampled_from(kinds))
        k = {"h": 1, "cx": 2, "cz": 2, "swap": 2, "ccx": 3}.get(gate) or PARAMETRISED[gate][0]
        count = PARAMETRISED[gate][1] if gate in PARAMETRISED else 0
        operations.append((gate, tuple(draw(st.permutations(range(n)))[:k]), count))
    terms = ["".join(draw(st.sampled_from("IXYZ")) for _ in range(n)) for _ in range(draw(st.integers(1, 4)))]
    hamiltonian = tq.PauliSum([(draw(st.floats(-1, 1)), t) for t in terms], n)
    return n, operations, hamiltonian, draw(st.booleans())


def parametrised_energy(n, operations, hamiltonian, inverted):
    def energy(params):
        circuit, used = tq.Circuit(n), 0
        for gate, qubits, count in operations:
            getattr(circuit, gate)(*qubits, *params[used:used + count])
            used += count
        return (circuit.inverse() if inverted else circuit).expectation(hamiltonian, method="lightcone")

    return energy, sum(count for _, _, count in operations)


def check_adjoint_against_finite_differences(backend_name, case, seed):
    energy, size = parametrised_energy(*case)
    if size == 0:
        return
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, size)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        value, gradient = tq.value_and_grad(energy, method="adjoint")(params)
        step = 1e-5
        numeric = np.array([(float(energy(params + step * e)) - float(energy(params - step * e))) / (2 * step)
                            for e in np.eye(size)])
        plain = float(energy(params))
    assert abs(float(value) - plain) < 1e-10
    np.testing.assert_allclose(K.to_numpy(gradient), numeric, atol=1e-7)


@pytest.mark.parametrize("backend_name", ["numpy", "cupynumeric-logic"])
@settings(max_examples=30, deadline=None)
@given(case=parametrised_circuits(), seed=st.integers(0, 2 ** 16))
def test_adjoint_sweep_matches_finite_differences_of_the_plain_energy(backend_name, case, seed):
    """Adjoint gradients (fused blocks, diagonal blocks, far-apart qubits, daggers, u3) against
    central differences of the untraced energy (contracted, not swept)."""
    check_adjoint_against_finite_differences(backend_name, case, seed)


@settings(max_examples=20, deadline=None)
@given(case=parametrised_circuits(), seed=st.integers(0, 2 ** 16))
def test_adjoint_sweep_with_and_without_the_kept_forward_states(case, seed):
    """The sweep itself (not the contractions the gradient may choose instead), both backward
    passes: beside the kept forward states, and undoing psi beside lambda (taken when the kept
    states would not fit in memory), against central differences of the dense energy."""
    n, operations, hamiltonian, _ = case
    _, size = parametrised_energy(*case)
    if size == 0:
        return
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, size)
    K = tq.get_backend("numpy")
    circuit, used, wanted = tq.Circuit(n), 0, {}
    for index, (gate, qubits, count) in enumerate(operations):
        getattr(circuit, gate)(*qubits, *params[used:used + count])
        wanted[index] = [(used + j, j) for j in range(count)]
        used += count
    matrix = hamiltonian.to_sparse().toarray()
    results = []
    for kept in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(adjoint, "fits_in_memory", lambda K, elements, kept=kept: kept)
            results.append(adjoint.adjoint_sweep(K, circuit.operations, n, None,
                                                 lambda K, psi: matrix @ psi, wanted, size))

    def dense_energy(angles):
        starts = np.cumsum([0] + [count for _, _, count in operations])
        state = reference_state(n, [(gate, qubits, tuple(angles[start:start + count]))
                                    for (gate, qubits, count), start in zip(operations, starts)])
        return float(np.real(np.vdot(state, matrix @ state)))

    step = 1e-5
    numeric = [(dense_energy(params + step * e) - dense_energy(params - step * e)) / (2 * step)
               for e in np.eye(size)]
    for value, gradient in results:
        assert abs(value - dense_energy(params)) < 1e-10
        np.testing.assert_allclose(gradient, numeric, atol=1e-7)


@settings(max_examples=4, deadline=None)
@given(case=parametrised_circuits(), seed=st.integers(0, 2 ** 16))
def test_adjoint_sweep_on_the_real_cupynumeric(case, seed):
    """The same check on the real library, with fewer examples: each of its calls costs
    milliseconds on Legate's CPU processor (30 examples took 12 minutes)."""
    check_adjoint_against_finite_differences("cupynumeric", case, seed)


def test_blocks_fuse_layers_and_keep_the_gradient_of_every_angle():
    """A 10-qubit hardware-efficient ansatz sweeps in a few blocks; all 80 angles get gradients."""
    size = tq.templates.hardware_efficient_size(10, 3, ("ry", "rz"))
    params = np.random.default_rng(3).uniform(-1, 1, size)
    circuit = tq.templates.hardware_efficient(10, params, 3, ("ry", "rz"))
    program = sweep_program(10, circuit.operations)
    assert len(program.blocks) < len(circuit.operations) / 4
    hamiltonian = tq.hamiltonians.tfim(10)
    with tq.use_backend("numpy"):
        _, gradient = tq.value_and_grad(lambda p: tq.templates.hardware_efficient(
            10, p, 3, ("ry", "rz")).expectation(hamiltonian), method="adjoint")(params)
        _, shifted = tq.value_and_grad(lambda p: tq.templates.hardware_efficient(
            10, p[:], 3, ("ry", "rz")).expectation(hamiltonian), method="parameter-shift")(params)
    np.testing.assert_allclose(gradient, shifted, atol=1e-10)
