"""``c.layer(gate, qubits, params)``: many gates of one kind in one call. The same operations as
the gate methods in a loop (hypothesis), the dense reference's state, gradients through one
tracked array on every backend, every simulator, and a clear error for every bad argument."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import reference_state
from tyxonq.circuit.operations.gates import GATES

LAYER_GATES = ["h", "x", "sx", "t", "rx", "ry", "rz", "phase", "u", "cx", "cz", "swap", "iswap", "rxx",
               "rzz", "crx", "cphase", "ccx", "cswap", "exp:XY", "exp:ZZX"]


@st.composite
def layered_circuits(draw, max_qubits=5, max_layers=5):
    n = draw(st.integers(3, max_qubits))
    layers = []
    for _ in range(draw(st.integers(1, max_layers))):
        gate = draw(st.sampled_from(LAYER_GATES))
        spec = GATES[gate]
        rows = [tuple(draw(st.permutations(range(n)))[:spec.num_qubits])
                for _ in range(draw(st.integers(0, 4)))]
        qubits = [row[0] for row in rows] if spec.num_qubits == 1 and draw(st.booleans()) else rows
        p = len(spec.param_names)
        values = np.asarray(draw(st.lists(st.floats(-4, 4, allow_nan=False), min_size=len(rows) * p,
                                          max_size=len(rows) * p)), dtype=float)
        params = None if not p else (values if p > 1 else values.tolist()) if not values.size else \
            values.reshape(len(rows), p) if p > 1 else draw(st.sampled_from([values, values.tolist()]))
        layers.append((gate, qubits, params))
    return n, layers


def looped(n: int, layers: list) -> tq.Circuit:
    c = tq.Circuit(n)
    for gate, qubits, params in layers:
        rows = [q if isinstance(q, tuple) else (q,) for q in qubits]
        angles = [()] * len(rows) if params is None else [tuple(np.atleast_1d(np.asarray(a, float)).tolist())
                                                          for a in params]
        for on, values in zip(rows, angles):
            c._add(gate, on, values)  # noqa: SLF001 - what every gate method calls
    return c


@settings(max_examples=40, deadline=None)
@given(layered_circuits())
def test_a_layer_is_the_gate_methods_in_a_loop(case):
    n, layers = case
    c = tq.Circuit(n)
    for gate, qubits, params in layers:
        assert c.layer(gate, qubits, params) is c
    expected = looped(n, layers)
    assert c.operations == expected.operations
    dense = reference_state(n, [(op.gate, op.qubits, op.params) for op in c.operations])
    np.testing.assert_allclose(tq.get_backend().to_numpy(c.state()), dense, atol=1e-10)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_gradients_reach_one_tracked_array_through_layers(backend_name):
    """An ansatz written with layers from one parameter vector: energy and gradient equal the
    gate-by-gate ansatz's (finite differences on NumPy's exact gradient)."""
    n, rng = 5, np.random.default_rng(3)
    angles = rng.uniform(-1, 1, (2, n, 3))

    def energy_layers(theta):
        c = tq.Circuit(n)
        for block in range(2):
            c.layer("u", range(n), theta[block]).layer("cz", [(q, q + 1) for q in range(n - 1)])
        return c.expectation_ps(x=[1], z=[3])

    def energy_loop(theta):
        c = tq.Circuit(n)
        for block in range(2):
            for q in range(n):
                c.u(q, *theta[block][q])
            for q in range(n - 1):
                c.cz(q, q + 1)
        return c.expectation_ps(x=[1], z=[3])

    with tq.use_backend("numpy"):
        value, gradient = tq.value_and_grad(energy_loop)(angles)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        got_value, got_gradient = tq.value_and_grad(energy_layers)(K.asarray(angles))
        if backend_name == "jax":
            got_value, got_gradient = K.jit(tq.value_and_grad(energy_layers))(K.asarray(angles))
    np.testing.assert_allclose(float(K.to_numpy(got_value)), value, atol=1e-10)
    np.testing.assert_allclose(K.to_numpy(got_gradient), gradient, atol=1e-10)


@pytest.mark.parametrize("backend_name", ["pytorch", "jax"])
def test_layer_angles_nothing_tracks_are_floats_and_tracked_ones_keep_their_gradient(backend_name):
    """A backend array in host memory that nothing tracks is read once into floats (no route
    converts hundreds of scalars again; a GPU's array stays there); a tracked one stays on the
    backend and its gradient is exact."""
    K = make_backend(backend_name)
    angles = np.array([0.3, -1.2, 2.0])
    expected_gradient = [-np.sin(a) * np.prod(np.cos(np.delete(angles, i))) for i, a in enumerate(angles)]

    def energy(theta):
        return tq.Circuit(3).layer("ry", range(3), theta).expectation_ps(z=[0, 1, 2])

    with tq.use_backend(K):
        plain = tq.Circuit(3).layer("ry", range(3), K.asarray(angles))
        assert [op.params for op in plain.operations] == [(a,) for a in angles.tolist()]
        on_host = K.host_readable(K.asarray(angles))  # JAX's GPU: not read over
        assert all((type(op.params[0]) is float) == on_host for op in plain.operations)
        value = float(K.to_numpy(energy(K.asarray(angles))))
        if backend_name == "pytorch":
            tracked = K.requires_grad(K.asarray(angles))
            assert all(K.needs_gradient(op.params[0])
                       for op in tq.Circuit(3).layer("ry", range(3), tracked).operations)
            energy(tracked).backward()
            gradient = K.to_numpy(tracked.grad)
        else:
            import jax
            gradient = K.to_numpy(jax.grad(energy)(K.asarray(angles)))
    np.testing.assert_allclose(value, np.prod(np.cos(angles)), atol=1e-12)
    np.testing.assert_allclose(gradient, expected_gradient, atol=1e-12)


def test_layers_on_every_simulator():
    bell_pairs = [(0, 1), (2, 3)]
    for kind in (tq.Circuit, tq.DMCircuit, tq.MPSCircuit):
        c = kind(4).layer("h", [0, 2]).layer("cx", bell_pairs).layer("rz", range(4), np.full(4, 0.2))
        np.testing.assert_allclose(tq.get_backend().to_numpy(c.expectation_ps(z=[0, 1])), 1.0, atol=1e-12)
    s = tq.StabilizerCircuit(4).layer("h", [0, 2]).layer("cx", bell_pairs)
    bits = s.sample(50, seed=1, format="bits")
    assert bits[:, 0].tolist() == bits[:, 1].tolist() and 0 < bits[:, 0].sum() < 50
    one_by_one = tq.StabilizerCircuit(4).h(0).h(2).cx(0, 1).cx(2, 3)
    assert str(s.to_stim()).split() == str(one_by_one.to_stim()).split()
    with pytest.raises(tq.NonCliffordError):
        s.layer("rz", [0, 1], [0.3, np.pi / 2])
    assert len(s.operations) == 4  # nothing of the refused layer was added
    d = tq.Circuit(2)
    with d.cond(d.measure(0)):
        d.layer("x", [1])
    assert d.operations[-1].condition is not None and d.is_dynamic()


@pytest.mark.parametrize("call, message", [
    (lambda c: c.layer("ry", [0, 4], [0.1, 0.2]), "qubit index 4 is out of range"),
    (lambda c: c.layer("cz", [(0, 0)]), r"qubits \(0, 0\) repeat a qubit"),
    (lambda c: c.layer("cz", [(0, 1), (2, 7)]), "qubit index 7 is out of range"),
    (lambda c: c.layer("cz", [(0, 1), (-1, 2)]), "qubit index -1 is out of range"),
    (lambda c: c.layer("cz", [(0, 1), (2,)]), "acts on 2 qubit"),
    (lambda c: c.layer("ccx", ((0, 1, 1),)), r"qubits \(0, 1, 1\) repeat a qubit"),
    (lambda c: c.layer("x", [True, 1]), "qubits must be ints"),
    (lambda c: c.layer("cz", [0, 1]), "acts on 2 qubit"),
    (lambda c: c.layer("ry", [0.5], [0.1]), "qubits must be ints"),
    (lambda c: c.layer("ry", [0, 1], [0.1]), r"params of shape \(1,\) for 2 gate"),
    (lambda c: c.layer("ry", [0, 1], [0.1, np.inf]), "not finite"),
    (lambda c: c.layer("ry", [0, 1], np.array([0.1, 1j])), "real"),
    (lambda c: c.layer("ry", [0, 1]), "give params"),
    (lambda c: c.layer("h", [0, 1], [0.1, 0.2]), "has no parameters"),
    (lambda c: c.layer("foo", [0]), "unknown gate 'foo'"),
    (lambda c: c.layer("unitary", [0]), "unitary"),
    (lambda c: c.layer("u", [0, 1], np.zeros((2, 2))), r"expected shape \(2, 3\)"),
])
def test_a_bad_layer_names_the_argument_and_adds_nothing(call, message):
    c = tq.Circuit(4).h(0)
    with pytest.raises((ValueError, TypeError), match=message):
        call(c)
    assert len(c.operations) == 1


def test_templates_are_built_from_layers_with_the_same_states():
    n, rng = 4, np.random.default_rng(2)
    params = rng.uniform(-1, 1, tq.templates.hardware_efficient_size(n, 2, ("ry", "rz")))
    c = tq.templates.hardware_efficient(n, params, 2, ("ry", "rz"))
    ops = []
    index = 0
    for layer in range(3):
        if layer:
            ops += [("cx", (q, q + 1), ()) for q in range(n - 1)]
        for q in range(n):
            for rotation in ("ry", "rz"):
                ops.append((rotation, (q,), (params[index],)))
                index += 1
    np.testing.assert_allclose(tq.get_backend().to_numpy(c.state()), reference_state(n, ops), atol=1e-12)
    ladder = tq.templates.rotation_ladder(n, params[:16], 2)
    ops = []
    for layer in range(2):
        for q in range(n):
            index = 2 * (layer * n + q)
            ops += [("rx", (q,), (params[index],)), ("rz", (q,), (params[index + 1],))]
        ops += [("cx", (q, q + 1), ()) for q in range(n - 1)]
    np.testing.assert_allclose(tq.get_backend().to_numpy(ladder.state()), reference_state(n, ops), atol=1e-12)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_with_parameters_is_the_rebuilt_circuit_and_keeps_the_plans(backend_name):
    """``c.with_parameters(values)``: the same operations as building the circuit again with
    ``values`` (values, gradients), the structure key handed on, and a key that moves on as soon
    as a gate is added (no stale plan)."""
    n, rng = 8, np.random.default_rng(6)
    first, second = rng.uniform(-1, 1, (2, n * 3))  # one rotation: angles in operation order
    base = tq.templates.hardware_efficient(n, first, 2).barrier()
    moved = base.with_parameters(second)
    rebuilt = tq.templates.hardware_efficient(n, second, 2)
    assert moved.operations == rebuilt.operations and base.parameters() == first.tolist()
    assert moved.structure_key() == base.structure_key() and moved.draw().count("░") == n  # barrier kept
    np.testing.assert_allclose(tq.get_backend().to_numpy(moved.state()), reference_state(
        n, [(op.gate, op.qubits, op.params) for op in rebuilt.operations]), atol=1e-12)
    grown = moved.with_parameters(second).cz(0, 5)
    assert grown.structure_key() != base.structure_key()
    expected = rebuilt.copy().cz(0, 5)
    np.testing.assert_allclose(float(grown.expectation_ps(x=[0], z=[5])),
                               float(expected.expectation_ps(x=[0], z=[5])), atol=1e-12)

    def energy(theta):
        return base.with_parameters(theta).expectation_ps(x=[2], z=[3])

    with tq.use_backend("numpy"):
        _, gradient = tq.value_and_grad(lambda t: tq.templates.hardware_efficient(
            n, t, 2).expectation_ps(x=[2], z=[3]))(second)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        _, got = tq.value_and_grad(energy)(K.asarray(second))
        np.testing.assert_allclose(K.to_numpy(got), gradient, atol=1e-10)
        if backend_name == "jax":
            _, jitted = K.jit(tq.value_and_grad(energy))(K.asarray(second))
            np.testing.assert_allclose(K.to_numpy(jitted), gradient, atol=1e-10)


def test_with_parameters_on_every_simulator_and_its_refusals():
    noisy = tq.DMCircuit(2).ry(0, 0.1).depolarizing(0, p=0.1).cx(0, 1)
    expected = tq.DMCircuit(2).ry(0, 0.7).depolarizing(0, p=0.1).cx(0, 1)
    np.testing.assert_allclose(tq.get_backend().to_numpy(noisy.with_parameters([0.7]).state()),
                               tq.get_backend().to_numpy(expected.state()), atol=1e-12)
    mps = tq.MPSCircuit(3).u(0, 0.1, 0.2, 0.3).rzz(0, 1, 0.4)
    assert mps.with_parameters([1.0, 2.0, 3.0, 4.0]).parameters() == [1.0, 2.0, 3.0, 4.0]
    clifford = tq.StabilizerCircuit(2).h(0).rz(0, np.pi / 2)
    assert clifford.with_parameters([np.pi]).operations[-1].params == (np.pi,)
    with pytest.raises(tq.NonCliffordError):
        clifford.with_parameters([0.3])
    dynamic = tq.Circuit(2).rx(0, 0.1).post_select(0, 1).ry(1, 0.2)  # an outcome is not an angle
    assert dynamic.parameters() == [0.1, 0.2] and dynamic.num_parameters == 2
    assert dynamic.with_parameters([0.3, 0.4]).operations[1] == dynamic.operations[1]
    c = tq.Circuit(2).rx(0, 0.1).ry(1, 0.2)
    for values, message in [([0.1], r"shape \(1,\) for 2"), ([0.1, np.nan], "not finite"),
                            (np.array([0.1, 1j]), "real"), ("ab", "must be a real number")]:
        with pytest.raises((ValueError, TypeError), match=message):
            c.with_parameters(values)
