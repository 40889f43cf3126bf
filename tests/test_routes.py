"""Exact routes other than contraction: basis-state propagation for circuits that keep a basis
state one (reversible arithmetic at any width), and an untruncated MPS for a local result whose
contraction does not fit. Each against the dense reference; tq.rehearse reports the route."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import random_hermitian, reference_expectation, reference_state
from test_circuit import add_operations
from tyxonq.circuit.basis_state import basis_state
from tyxonq.numerics import memory

PERMUTING = {"x": 1, "y": 1, "cx": 2, "cy": 2, "swap": 2, "iswap": 2, "ccx": 3, "cswap": 3}
DIAGONAL = {"z": (1, 0), "s": (1, 0), "tdg": (1, 0), "cz": (2, 0), "rz": (1, 1), "phase": (1, 1),
            "cphase": (2, 1), "crz": (2, 1), "rzz": (2, 1)}


@st.composite
def classical_circuits(draw, max_qubits=6, max_gates=25):
    """Circuits of permuting and diagonal gates, and a basis input (or none)."""
    n = draw(st.integers(3, max_qubits))
    operations = []
    for _ in range(draw(st.integers(0, max_gates))):
        name = draw(st.sampled_from(sorted(PERMUTING) + sorted(DIAGONAL)))
        k, p = (PERMUTING[name], 0) if name in PERMUTING else DIAGONAL[name]
        qubits = tuple(draw(st.permutations(range(n)))[:k])
        params = tuple(draw(st.floats(-4, 4, allow_nan=False)) for _ in range(p))
        operations.append((name, qubits, params))
    start = draw(st.one_of(st.none(), st.integers(0, 2 ** n - 1)))
    phase = draw(st.sampled_from([1.0, -1.0, 1j, np.exp(0.3j)]))
    inputs = None if start is None else phase * np.eye(2 ** n)[start]
    return n, operations, inputs


@settings(max_examples=40, deadline=None)
@given(case=classical_circuits(), seed=st.integers(0, 2 ** 16))
def test_basis_state_circuits_against_the_dense_reference(case, seed):
    n, operations, inputs = case
    expected = reference_state(n, operations, inputs)
    rng = np.random.default_rng(seed)
    circuit = add_operations(tq.Circuit(n, inputs=inputs), operations)
    K = tq.get_backend("numpy")
    with tq.use_backend(K):
        assert tq.rehearse(circuit.expectation_ps, z=[0]).routes == ("basis-state",)
        strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(4)] + ["Z" * n, "I" * n]
        dense = [reference_expectation(expected, [(pauli(s[q]), (q,)) for q in range(n)], n).real
                 for s in strings]
        np.testing.assert_allclose(K.to_numpy(circuit.pauli_expectations(strings)), dense, atol=1e-12)
        zz = reference_expectation(expected, [(pauli("Z"), (0,)), (pauli("Z"), (n - 1,))], n).real
        np.testing.assert_allclose(float(circuit.expectation_ps(z=[0, n - 1])), zz, atol=1e-12)
        operator = random_hermitian(rng, 2)
        np.testing.assert_allclose(complex(circuit.expectation((operator, [1, 0]), hermitian=False)),
                                   reference_expectation(expected, [(operator, (1, 0))], n), atol=1e-12)
        for index in (int(np.argmax(np.abs(expected))), 0, 2 ** n - 1):
            np.testing.assert_allclose(complex(circuit.amplitude(index)), expected[index], atol=1e-12)
        probabilities = np.abs(expected.reshape((2,) * n)) ** 2
        marginal = probabilities.sum(axis=tuple(range(2, n))).reshape(-1)
        np.testing.assert_allclose(K.to_numpy(circuit.marginal_probability([0, 1])), marginal, atol=1e-12)
        (bits,) = circuit.sample(5, seed=1)
        assert int(bits, 2) == int(np.argmax(np.abs(expected))) and circuit.sample(5, seed=1)[bits] == 5


def pauli(letter):
    return {"I": np.eye(2), "X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]),
            "Z": np.diag([1.0, -1.0])}[letter]


def reversible_circuit(n=45, gates=689, seed=11):
    """Random X/CX/CCX gates on |0...0> (a multiplier's shape), and its bits computed here."""
    rng = np.random.default_rng(seed)
    circuit, bits = tq.Circuit(n), np.zeros(n, dtype=int)
    for _ in range(gates):
        kind, (a, b, c) = rng.integers(3), (int(q) for q in rng.choice(n, 3, replace=False))
        if kind == 0:
            circuit.x(a)
            bits[a] ^= 1
        elif kind == 1:
            circuit.cx(a, b)
            bits[b] ^= bits[a]
        else:
            circuit.ccx(a, b, c)
            bits[c] ^= bits[a] & bits[b]
    return circuit, bits


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch", "jax"])
def test_reversible_arithmetic_at_45_qubits_is_propagated_not_contracted(backend_name):
    """The reversible circuit whose <Z> was refused (1 TiB) or took 28-70 s: exact by propagation."""
    circuit, bits = reversible_circuit()
    with tq.use_backend(make_backend(backend_name)) as K:
        report = tq.rehearse(circuit.expectation_ps, z=[20])
        assert report.routes == ("basis-state",) and report.contractions == 0
        signs = 1 - 2 * bits
        assert float(circuit.expectation_ps(z=[20])) == signs[20]
        assert float(circuit.expectation_ps(z=[3, 20, 44])) == signs[3] * signs[20] * signs[44]
        assert float(circuit.expectation_ps(x=[3])) == 0.0
        assert complex(circuit.amplitude("".join(map(str, bits)))) == 1.0
        assert circuit.sample(3, seed=2) == {"".join(map(str, bits)): 3}
        h = tq.PauliSum([(0.5, "Z" + "I" * 44), (2.0, "I" * 44 + "Z")])
        assert float(h.expectation(circuit)) == pytest.approx(0.5 * signs[0] + 2.0 * signs[44])
        assert np.asarray(K.to_numpy(circuit.marginal_probability([5, 7]))).tolist() == \
            np.eye(4)[2 * bits[5] + bits[7]].tolist()


def test_the_route_is_not_taken_where_it_does_not_apply():
    with tq.use_backend("numpy"):
        assert tq.rehearse(tq.Circuit(3).h(0).cx(0, 1).expectation_ps, z=[1]).routes == ("contraction",)
        noisy = tq.DMCircuit(2).x(0).depolarizing(0, p=0.1)
        assert "basis-state" not in tq.rehearse(noisy.expectation_ps, z=[0]).routes
    assert basis_state(1, tq.Circuit(1).rx(0, np.pi).operations, None) is None  # not a permuting kind
    traced = tq.Circuit(2).x(0).rz(1, theta=0.3)
    value, gradient = tq.value_and_grad(lambda t: tq.Circuit(2).x(0).rz(1, t[0]).cx(0, 1)
                                        .expectation_ps(z=[1]))(np.array([0.3]))
    assert float(value) == pytest.approx(-1.0, abs=1e-12) and abs(float(gradient[0])) < 1e-12
    assert float(traced.expectation_ps(z=[0])) == -1.0


@pytest.fixture
def small_memory(monkeypatch):
    """A device with 512 bytes available, every size checked: light cones of 16-qubit circuits refused."""
    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", 0)
    K = make_backend("numpy")
    monkeypatch.setattr(K, "available_memory", lambda: 2 ** 9)
    return K


def chain_circuit(n, layers, seed=0, angle=0.4):
    rng = np.random.default_rng(seed)
    c = tq.Circuit(n)
    for layer in range(layers):
        for q in range(n):
            c.rx(q, theta=float(rng.uniform(0, angle))).rz(q, theta=float(rng.uniform(0, 1)))
        for q in range(layer % 2, n - 1, 2):
            c.cz(q, q + 1)
    return c


def test_a_local_result_too_large_to_contract_comes_from_an_exact_mps(monkeypatch):
    """A deep chain of weak entanglers: the light cone of Z8 is the whole 16-qubit circuit (1 MiB
    at its widest, no slicing of it within 128 KiB costs less than 4x), its untruncated MPS has
    bonds of at most 11 (37 KB). On a device with 128 KiB the MPS gives the result; with 512 bytes
    it does not fit either, and the result is refused (the MPS route holds to the budget too)."""
    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", 0)
    c = chain_circuit(16, 16, angle=0.05)
    expected = reference_state(16, [(op.gate, op.qubits, op.params) for op in c.operations])
    K = make_backend("numpy")
    monkeypatch.setattr(K, "available_memory", lambda: 2 ** 17)
    with tq.use_backend(K):
        report = tq.rehearse(c.expectation_ps, z=[8])
        assert not report.fits and report.routes == ("contraction", "exact-mps")
        z8 = reference_expectation(expected, [(pauli("Z"), (8,))], 16).real
        np.testing.assert_allclose(float(c.expectation_ps(z=[8])), z8, atol=1e-10)
        zz = reference_expectation(expected, [(pauli("Z"), (2,)), (pauli("X"), (12,))], 16).real
        np.testing.assert_allclose(float(c.pauli_expectations(["IIZIIIIIIIIIXIII"])[0]), zz, atol=1e-10)
        np.testing.assert_allclose(complex(c.amplitude(5)), expected[5], atol=1e-10)
    monkeypatch.setattr(K, "available_memory", lambda: 2 ** 9)
    with tq.use_backend(K), pytest.raises(MemoryError):
        c.expectation_ps(z=[8])


def test_a_refusal_names_what_the_user_can_do(small_memory):
    """Neither route applies (bonds above 64 for a random dense circuit): the refusal says what to
    do, and does not tell the user to call the method that was refused."""
    rng = np.random.default_rng(2)
    c = tq.Circuit(16)
    for _ in range(8):
        for q in range(16):
            c.ry(q, theta=float(rng.uniform(0, 3)))
        for q in rng.permutation(16).reshape(8, 2):
            c.cx(int(q[0]), int(q[1]))
    with tq.use_backend(small_memory), pytest.raises(MemoryError) as refused:
        c.expectation_ps(z=[3])
    message = str(refused.value)
    assert "to_mps(max_bond=" in message and "use those" not in message


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
def test_pauli_expectations_take_the_state_when_the_light_cones_cover_it(backend_name):
    """Full-width cones (non-local CNOTs at every depth): the strings are applied to the one state,
    with the same values (and gradients) as their light cones; local cones stay light cones."""
    n, rng = 8, np.random.default_rng(4)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        angles = K.asarray(rng.uniform(-1, 1, 3 * n))

        def deep(theta):
            c = tq.Circuit(n)
            for layer in range(3):
                for q in range(n):
                    c.ry(q, theta[layer * n + q])
                for q in range(0, n, 2):
                    c.cx(q, (q + 3 + layer) % n)
            return c

        strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(6)]
        c = deep(angles)
        assert [choice.chosen for choice in tq.rehearse(c.pauli_expectations, strings).choices] == ["state"]
        dense = reference_state(n, [(op.gate, op.qubits, tuple(float(K.to_numpy(p)) for p in op.params))
                                    for op in c.operations])
        whole = tuple(range(n))
        expected = [reference_expectation(dense, [(tq.operators.pauli.pauli_matrix(s), whole)], n).real
                    for s in strings]
        np.testing.assert_allclose(K.to_numpy(c.pauli_expectations(strings)), expected, atol=1e-10)
        energy = lambda theta: deep(theta).pauli_expectations(strings, [1.0] * len(strings))  # noqa: E731
        _, gradient = tq.value_and_grad(energy)(angles)
        step, host = 1e-6, K.to_numpy(angles)
        numeric = [(float(energy(K.asarray(host + step * e))) - float(energy(K.asarray(host - step * e))))
                   / (2 * step) for e in np.eye(len(host))]
        np.testing.assert_allclose(K.to_numpy(gradient), numeric, atol=1e-6)
        local = tq.Circuit(n)
        for q in range(n - 1):
            local.ry(q, 0.1 * q).cz(q, q + 1)
        report = tq.rehearse(local.pauli_expectations, ["Z" + "I" * (n - 1)])
        assert [choice.chosen for choice in report.choices] == ["lightcone"]


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "pytorch-cuda", "jax"]))
def test_small_contractions_of_host_values_run_on_the_host_twin(backend_name, monkeypatch):
    """Light cones whose bound values nothing tracks contract on NumPy (the backend's host twin),
    with the same values (on CUDA the angles and matrices copied over, the results back to the
    device); a tracked angle, a traced (jit) call or a vmapped observable keep the backend's own
    arrays, and their gradients."""
    from tyxonq.circuit.contraction import evaluation

    taken = []

    def spy(*args):
        twin = host_twin_for(*args)
        taken.append(twin is not None)
        return twin

    host_twin_for = evaluation.host_twin_for
    monkeypatch.setattr(evaluation, "host_twin_for", spy)
    n, rng = 30, np.random.default_rng(5)
    angles = rng.uniform(-1, 1, 3 * n)

    def brickwork(theta):
        c = tq.Circuit(n)
        for layer in range(3):
            for q in range(n):
                c.ry(q, theta[layer * n + q])
            for q in range(layer % 2, n - 1, 2):
                c.cz(q, q + 1)
        return c

    with tq.use_backend("numpy"):
        expected = brickwork(angles.tolist()).pauli_expectations(["I" * 14 + "XZ" + "I" * 14, "I" * 29 + "Y"])
        amplitude = brickwork(angles.tolist()).amplitude("0" * n)
        energy = lambda theta: brickwork(theta).expectation_ps(z=[14, 15])  # noqa: E731
        _, gradient = tq.value_and_grad(energy)(angles)
    K = make_backend(backend_name)
    taken.clear()
    with tq.use_backend(K):
        c = brickwork(angles.tolist())
        values = c.pauli_expectations(["I" * 14 + "XZ" + "I" * 14, "I" * 29 + "Y"])
        assert K.is_array(values) and taken[0]
        if backend_name != "jax":  # results return to the backend's device
            assert values.device == K.device and c.amplitude("0" * n).device == K.device
            z = K.asarray(np.diag([1.0, -1.0]).astype(complex))
            taken.clear()
            np.testing.assert_allclose(K.to_numpy(c.expectation((z, [14]))),
                                       K.to_numpy(c.expectation_ps(z=[14])), atol=1e-12)
            assert taken[0]  # the observable's matrix copied to the twin where it lives on a device
            flip = K.asarray(np.array([[0, 1], [1, 0]], complex))
            rotated = brickwork(angles.tolist()).unitary(3, matrix=flip)
            with tq.use_backend("numpy"):
                flipped = brickwork(angles.tolist()).x(3).expectation_ps(z=[3])
            taken.clear()
            np.testing.assert_allclose(K.to_numpy(rotated.expectation_ps(z=[3])), flipped, atol=1e-12)
            assert taken[0] == (K.device.type == "cpu")  # a gate's matrix is bound as it is: on the host
        np.testing.assert_allclose(K.to_numpy(values), expected, atol=1e-12)
        np.testing.assert_allclose(K.to_numpy(c.amplitude("0" * n)), amplitude, atol=1e-12)
        taken.clear()
        held = brickwork(list(K.asarray(angles)))  # untracked backend scalars: read in one transfer
        np.testing.assert_allclose(K.to_numpy(held.amplitude("0" * n)), amplitude, atol=1e-12)
        assert taken[0]
        taken.clear()
        numbers = brickwork([np.float64(a) for a in angles])  # NumPy scalars: host numbers as they are
        np.testing.assert_allclose(K.to_numpy(numbers.amplitude("0" * n)), amplitude, atol=1e-12)
        assert taken[0]
        taken.clear()
        _, tracked = tq.value_and_grad(energy)(K.asarray(angles))
        np.testing.assert_allclose(K.to_numpy(tracked), gradient, atol=1e-10)
        assert not any(taken)
        if backend_name != "jax":  # observables validated by value: no vmap over them on JAX
            z = K.asarray(np.diag([1.0, -1.0]).astype(complex))
            batched = K.vmap(lambda m: c.expectation((m, [14])))(K.stack([z, -z]))
            np.testing.assert_allclose(K.to_numpy(batched), [1, -1] * K.to_numpy(c.expectation_ps(z=[14])),
                                       atol=1e-12)
        else:
            taken.clear()
            K.jit(lambda: c.expectation_ps(z=[14]))()
            assert not any(taken)
