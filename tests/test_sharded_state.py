"""State vectors sharded across ranks (ranks as threads here; under the real launchers in
``test_sharded_launchers.py``): the sharded sweep, its Pauli values, sums, marginals, amplitudes,
seeded samples and adjoint gradients against one process's dense references, on 1, 2, 4 and 8
ranks."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from thread_ranks import run_ranks

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import reference_state
from test_circuit import build, random_circuits
from tyxonq.circuit.statevector.adjoint import adjoint_sweep
from tyxonq.circuit.statevector.shard_plan import Swap, global_count_of, shard_plan
from tyxonq.circuit.statevector.sharded import sharded_sweep
from tyxonq.circuit.statevector.sharded_adjoint import sharded_adjoint
from tyxonq.circuit.statevector.sweep import sweep_program
from tyxonq.numerics import chunks
from tyxonq.numerics.distributed import SingleProcess
from tyxonq.operators.pauli_action import apply_pauli_sum
from tyxonq.operators.state_expectation import state_pauli_values

SIZES = [1, 2, 4, 8]
#: chunks as the library cuts them (one per shard here), and of four amplitudes: every chunked
#: path (blocks, swaps in pieces, Pauli strings across chunks, transitions) on many chunks
CHUNKINGS = [None, 2]


@contextlib.contextmanager
def chunks_of(qubits):
    """Chunks of ``2^qubits`` amplitudes in the sharded state's in-place work (None: unchanged)."""
    previous = chunks.CHUNK_QUBITS
    chunks.CHUNK_QUBITS = previous if qubits is None else qubits
    try:
        yield
    finally:
        chunks.CHUNK_QUBITS = previous


@st.composite
def sharded_cases(draw):
    """A random circuit on enough qubits for ``size`` ranks (4 local qubits at least: a block
    spans up to 4), random Pauli strings, qubits to marginalise and a seed."""
    size = draw(st.sampled_from(SIZES))
    k = global_count_of(size)
    n, operations = draw(random_circuits(max_qubits=8, max_gates=14).filter(lambda c: c[0] >= 4 + k))
    count = draw(st.integers(1, 6))
    strings = ["".join(draw(st.sampled_from("IXYZ")) for _ in range(n)) for _ in range(count)]
    marginal = tuple(draw(st.permutations(range(n)))[:draw(st.integers(1, 3))])
    return size, n, operations, strings, marginal, draw(st.integers(0, 2 ** 16))


def check_results(K, size, n, operations, strings, marginal, seed, inputs=None):
    ops = build(n, operations).operations
    expected = reference_state(n, operations, inputs)
    probabilities = np.abs(expected) ** 2

    def work(comm):
        state = sharded_sweep(K, comm, n, ops, None if inputs is None else K.asarray(inputs))
        values = state.pauli_values(strings)
        hamiltonian = tq.PauliSum([(0.5 + i, s) for i, s in enumerate(strings)], n_qubits=n)
        energy = state.expectation(hamiltonian)
        bits = [int(b) for b in np.binary_repr(seed % 2 ** n, n)]
        return (values, energy, state.marginal(marginal), state.amplitude(bits),
                state.sample_indices(40, seed), K.to_numpy(state.gather()), state.exchanges)

    results = run_ranks(size, work)
    values, energy, found_marginal, amplitude, samples, gathered, exchanges = results[0]
    tolerance = 1e-10 if K.precision == "complex128" else 1e-5
    np.testing.assert_allclose(gathered, expected, atol=tolerance)
    host = tq.get_backend("numpy")
    dense = np.real(state_pauli_values(host, expected, strings))
    np.testing.assert_allclose(values, dense, atol=tolerance)
    weights = np.array([0.5 + i for i in range(len(strings))])
    np.testing.assert_allclose(energy, weights @ dense, atol=tolerance * len(strings) * 4)
    axes = list(marginal) + [q for q in range(n) if q not in marginal]
    reduced = probabilities.reshape((2,) * n).transpose(axes).reshape(2 ** len(marginal), -1).sum(axis=1)
    np.testing.assert_allclose(found_marginal, reduced, atol=tolerance)
    np.testing.assert_allclose(amplitude, expected[seed % 2 ** n], atol=tolerance)
    for other in results[1:]:  # every rank: the same numbers
        np.testing.assert_array_equal(other[0], values)
        np.testing.assert_array_equal(other[4], samples)
    if size == 1:
        assert exchanges == 0
    return samples


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
@settings(max_examples=15, deadline=None)
@given(case=sharded_cases())
def test_sharded_results_equal_the_dense_reference(backend_name, chunk_qubits, case):
    K = make_backend(backend_name)
    with tq.use_backend(K), chunks_of(chunk_qubits):
        samples = check_results(K, *case)
        # the samples one process draws with the same seed
        size, n, operations, *_, seed = case
        single = check_results(K, 1, n, operations, *case[3:5], seed)
    np.testing.assert_array_equal(samples, single)


def test_samples_equal_one_process_sampler_for_the_same_seed():
    K = tq.get_backend("numpy")
    c = tq.templates.brickwork(8, list(np.linspace(0.1, 2.0, 40)), 5)
    expected = tq.Circuit.sample(c, 300, seed=5, format="indices", method="state")
    found = run_ranks(4, lambda comm: sharded_sweep(K, comm, 8, c.operations).sample_indices(300, 5))
    np.testing.assert_array_equal(found[0], expected)


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
@pytest.mark.parametrize("size", [2, 4])
def test_an_input_state_is_sharded_in_qubit_order(backend_name, size, chunk_qubits):
    K = make_backend(backend_name)
    rng = np.random.default_rng(3)
    inputs = rng.normal(size=64) + 1j * rng.normal(size=64)
    inputs /= np.linalg.norm(inputs)
    operations = [("h", (0,), ()), ("cx", (0, 5), ()), ("rx", (1,), (0.4,)), ("rzz", (0, 1), (0.7,))]
    given = inputs.copy()
    with tq.use_backend(K), chunks_of(chunk_qubits):
        check_results(K, size, 6, operations, ["XZIIYZ", "ZIIIIX"], (1, 0), 9, inputs=inputs)
    np.testing.assert_array_equal(inputs, given)  # the caller's state is never written


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
def test_an_8_rank_gradient_equals_one_process(chunk_qubits):
    n, depth = 9, 4
    rng = np.random.default_rng(2)
    c = tq.Circuit(n)
    for layer in range(depth):
        for q in range(n):
            c.rx(q, theta=float(rng.uniform(-3, 3))).rz(q, theta=float(rng.uniform(-3, 3)))
        for a, b in rng.permutation(n)[:8].reshape(-1, 2):
            c.cx(int(a), int(b))
        c.rzz(0, n - 1, theta=0.3 * layer + 0.1)
    h = tq.PauliSum([(float(rng.normal()), "".join(rng.choice(list("IXYZ"), n))) for _ in range(12)])
    with chunks_of(chunk_qubits):
        check_gradient(tq.get_backend("numpy"), c, h, [1, 2, 4, 8])


def check_gradient(K, c, h, sizes):
    ops = c.operations
    wanted = {i: [(i, 0)] for i, op in enumerate(ops) if op.params}
    value, gradient = adjoint_sweep(K, ops, c.num_qubits, None, lambda K, s: apply_pauli_sum(K, s, h),
                                    wanted, len(ops))
    for size in sizes:
        results = run_ranks(size, lambda comm: sharded_adjoint(K, comm, ops, c.num_qubits, None, h, wanted,
                                                               len(ops))[:2])
        for found_value, found_gradient in results:
            assert abs(found_value - value) < 1e-10
            np.testing.assert_allclose(found_gradient, gradient, atol=1e-10)


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
@settings(max_examples=10, deadline=None)
@given(case=sharded_cases())
def test_sharded_adjoint_gradients_equal_finite_differences(backend_name, chunk_qubits, case):
    size, n, operations, strings, *_ = case
    K = make_backend(backend_name)
    c = build(n, operations)
    ops = c.operations
    wanted = {i: [(i, j) for j in range(len(op.params))] for i, op in enumerate(ops)
              if op.params and op.gate != "unitary"}
    slots = [(i, j) for i in wanted for _, j in wanted[i]]
    wanted = {i: [(slots.index((i, j)), j) for _, j in pairs] for i, pairs in wanted.items()}
    h = tq.PauliSum([(1.0 - 0.3 * i, s) for i, s in enumerate(strings)], n_qubits=n)
    with tq.use_backend(K), chunks_of(chunk_qubits):
        value, gradient, _ = run_ranks(size, lambda comm: sharded_adjoint(K, comm, ops, n, None, h, wanted,
                                                                          len(slots)))[0]

        def energy(shifted):
            state = reference_state(n, shifted)
            return float(np.real(np.vdot(state, apply_pauli_sum(tq.get_backend("numpy"), state, h))))

    assert abs(value - energy(operations)) < 1e-10
    step = 1e-6
    for slot, (i, j) in enumerate(slots):
        moved = [list(op) for op in operations]
        shifted = []
        for sign in (1, -1):
            params = list(operations[i][2])
            params[j] += sign * step
            moved[i] = (operations[i][0], operations[i][1], tuple(params))
            shifted.append(energy([tuple(op) for op in moved]))
        assert abs(gradient[slot] - (shifted[0] - shifted[1]) / (2 * step)) < 1e-6


def test_swaps_are_planned_once_and_few():
    c = tq.templates.brickwork(16, list(np.linspace(0.1, 3.0, 16 * 8)), 8)
    program = sweep_program(16, c.operations)
    plan = shard_plan(program, 2)
    assert plan is shard_plan(program, 2)
    # every block runs on local qubits (or is diagonal) at the layout the swaps leave
    layout = list(plan.initial)
    for step in plan.steps:
        if isinstance(step, Swap):
            layout[step.global_position], layout[step.local_position] = \
                layout[step.local_position], layout[step.global_position]
        else:
            block = program.blocks[step.index]
            assert tuple(layout.index(q) for q in block.qubits) == step.positions
            assert block.diagonal or min(step.positions) >= 2
    assert tuple(layout) == plan.final
    # a brickwork of nearest-neighbour layers: far fewer swaps than mixing blocks
    assert plan.swaps <= 8 < sum(not b.diagonal for b in program.blocks)


def test_ranks_and_blocks_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="power-of-two number of ranks"):
        global_count_of(3)
    c = tq.Circuit(5).h(0).cx(0, 1).cx(1, 2).cx(2, 3)  # one 4-qubit window
    with pytest.raises(ValueError, match="does not fit the 3 local qubits of 4 ranks"):
        shard_plan(sweep_program(5, c.operations), 2)
    with pytest.raises(ValueError, match="partner=2 must be a rank in"):
        SingleProcess().exchange(np.zeros(2), 2)


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
def test_exchanges_are_counted(chunk_qubits):
    K = tq.get_backend("numpy")
    c = tq.Circuit(8)
    for q in range(8):
        c.h(q)
    with chunks_of(chunk_qubits):
        results = run_ranks(2, lambda comm: sharded_sweep(K, comm, 8, c.operations))
    state = results[0]
    # one swap moves half of a 2^7-amplitude shard (in pieces of one chunk: one exchange)
    assert state.exchanges == 1 and state.bytes_sent == 64 * 16


def brickwork_energy(n: int, h: tq.PauliSum):
    def energy(angles):
        c = tq.Circuit(n)
        for layer in range(4):
            for q in range(n):
                c.ry(q, theta=angles[layer * n + q])
            for q in range(layer % 2, n - 1, 2):
                c.cx(q, q + 1)
            c.rzz(0, n - 1, theta=0.1 * layer + 0.2)
        return c
    return energy


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
@pytest.mark.parametrize("size", [2, 4])
def test_circuits_take_the_sharded_state_when_one_rank_cannot_hold_it(backend_name, size):
    n = 11
    rng = np.random.default_rng(4)
    terms = [(float(rng.normal()), "".join(rng.choice(list("IXYZ"), n))) for _ in range(9)]
    h = tq.PauliSum(terms, n_qubits=n)
    strings = [string for _, string in h]
    build_circuit = brickwork_energy(n, h)
    angles = rng.uniform(-3, 3, 4 * n)
    K = make_backend(backend_name)

    def results():
        x = K.asarray(angles, K.real_dtype)
        c = build_circuit(angles)
        value, gradient = tq.value_and_grad(lambda y: build_circuit(y).expectation(h))(x)
        return {"pauli": K.to_numpy(c.pauli_expectations(strings)), "energy": K.to_numpy(c.expectation(h)),
                "marginal": K.to_numpy(c.marginal_probability([4, 0])),
                "samples": K.to_numpy(c.sample(100, seed=3, format="indices")),
                "amplitude": K.to_numpy(c.amplitude("1" * n)), "value": K.to_numpy(value),
                "gradient": K.to_numpy(gradient),
                "report": tq.rehearse(lambda y: build_circuit(y).expectation(h), angles)}

    with tq.use_backend(K):
        expected = results()
        assert "sharded-state" not in expected["report"].routes

        def rank(comm):
            # below one state (and three for the gradient), above a shard and half of one
            with tq.distributed.use_communicator(comm), tq.use_backend(K), \
                    tq.use_memory_limit(int(2 ** n * 16 * 0.9)):
                return results()
        found = run_ranks(size, rank)
    for result in found:
        for name in ("pauli", "energy", "marginal", "amplitude", "value", "gradient"):
            np.testing.assert_allclose(result[name], expected[name], atol=1e-10, err_msg=name)
        np.testing.assert_array_equal(result["samples"], expected["samples"])
        report = result["report"]
        assert report.routes == ("sharded-state",) and report.sharding.ranks == size
        assert report.sharding.shard_bytes == 2 ** n * 16 // size
        assert report.sharding.exchanges >= report.sharding.swaps


def test_a_state_that_fits_one_rank_is_not_sharded():
    c = tq.templates.brickwork(10, list(np.linspace(0.1, 2.0, 40)), 4)

    def rank(comm):
        with tq.distributed.use_communicator(comm):
            return tq.rehearse(c.expectation_ps, z=[3]).routes, c._state_shards()
    for routes, shards in run_ranks(2, rank):
        assert "sharded-state" not in routes and shards is None


def noisy_circuit(n: int, seed: int) -> tq.Circuit:
    """Layers of rotations and CNOTs with channels between them: state-dependent branch weights
    (amplitude and phase damping) and fixed ones (depolarising), on every qubit in turn."""
    rng = np.random.default_rng(seed)
    c = tq.Circuit(n)
    for layer in range(3):
        for q in range(n):
            c.rx(q, theta=float(rng.uniform(-3, 3))).rz(q, theta=float(rng.uniform(-3, 3)))
        for q in range(layer % 2, n - 1, 2):
            c.cx(q, q + 1)
        c.amplitude_damping(layer % n, gamma=0.3)
        c.depolarizing((2 * layer + 1) % n, p=0.2)
        c.phase_damping(n - 1 - layer, gamma=0.4)
    c.cx(0, n - 1)
    return c


@pytest.mark.parametrize("chunk_qubits", CHUNKINGS)
@pytest.mark.parametrize("size", [1, 2, 4])
def test_sharded_trajectories_draw_what_one_process_draws(size, chunk_qubits):
    """Each trajectory's value on the sharded state equals one process's for the same generator
    (one trajectory at a time), for a Pauli sum and for local operators on qubits that start
    global; the branches differ between trajectories."""
    from tyxonq.circuit.statevector import trajectories as single
    from tyxonq.circuit.statevector.sharded_trajectories import sharded_trajectory_values
    from tyxonq.noise.trajectories import _local_operators

    n, count = 8, 12
    c = noisy_circuit(n, 5)
    h = tq.PauliSum([(0.7, "ZZIIIIIZ"), (-0.4, "XIYIIIII"), (0.25, "IIIIIZZI")], n_qubits=n)
    K = tq.get_backend("numpy")
    x = np.array([[0, 1], [1, 0]], dtype=complex)
    matrices, groups = _local_operators(c, [(x, [0]), (np.diag([1.0, -1.0]).astype(complex), [n - 1])], K)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(single, "TRAJECTORY_BATCH_ENTRIES", 2 ** n)  # one at a time
        states = [np.asarray(s)[0] for s in single.trajectory_states(K, n, c.operations, None, count,
                                                                     np.random.default_rng(3))]
    expected_h = [float(np.real(np.vdot(s, apply_pauli_sum(K, s, h)))) for s in states]
    expected_o = [float(np.real(single.local_values(K, s[None], matrices, groups, n)[0])) for s in states]
    assert len(set(np.round(expected_h, 8))) > 2  # the trajectories took different branches
    with chunks_of(chunk_qubits):
        found = run_ranks(size, lambda comm: (
            sharded_trajectory_values(K, comm, n, c.operations, None, count, 3, lambda s: s.expectation(h)),
            sharded_trajectory_values(K, comm, n, c.operations, None, count, 3,
                                      lambda s: s.operator_value(matrices, groups).real)))
    for values_h, values_o in found:
        np.testing.assert_allclose(values_h, expected_h, atol=1e-10)
        np.testing.assert_allclose(values_o, expected_o, atol=1e-10)


@pytest.mark.parametrize("size", [2, 4])
def test_trajectory_expectation_shards_a_state_one_rank_cannot_hold(size):
    """tq.noise.trajectory_expectation under a per-rank memory limit below a trajectory's state:
    the ranks share each trajectory's state and return one process's estimate (one process run
    one trajectory at a time with the same seed); with room for the state they share the
    trajectories instead."""
    from tyxonq.circuit.statevector import trajectories as single

    n = 11
    c = noisy_circuit(n, 7)
    h = tq.PauliSum([(1.0, "Z" + "I" * (n - 2) + "Z"), (0.5, "IX" + "I" * (n - 2))], n_qubits=n)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(single, "TRAJECTORY_BATCH_ENTRIES", 2 ** n)
        expected = tq.noise.trajectory_expectation(c, h, 16, seed=11)

    def rank(comm):
        with tq.distributed.use_communicator(comm), tq.use_memory_limit(int(2 ** n * 16 * 0.9)):
            assert c.state_shards(4, trajectories=True) is comm
            return tq.noise.trajectory_expectation(c, h, 16, seed=11)
    for mean, error in run_ranks(size, rank):
        assert abs(mean - expected[0]) < 1e-10 and abs(error - expected[1]) < 1e-10

    def roomy(comm):
        with tq.distributed.use_communicator(comm):
            return c.state_shards(4, trajectories=True), c.state_shards()
    assert run_ranks(size, roomy)[0] == (None, None)
