"""Dynamic circuits (mid-circuit measurement, reset, conditioned gates, post-selection) against a
dense reference written here: a density matrix per value of the classical register."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from reference import X, reference_matrix

P = [np.diag([1.0 + 0j, 0.0]), np.diag([0.0 + 0j, 1.0])]
BACKENDS = ("numpy", "pytorch", "jax", "cupynumeric", "cupynumeric-logic")


# -- the reference: {register: unnormalised density matrix} ------------------------------------
def _both_sides(rho: np.ndarray, matrix: np.ndarray, qubits: tuple[int, ...], n: int) -> np.ndarray:
    """``M rho M^dagger`` for ``M`` on ``qubits`` (the first most significant)."""
    order = list(qubits) + [q for q in range(n) if q not in qubits]
    full = np.kron(matrix, np.eye(2 ** (n - len(qubits)))).reshape((2,) * (2 * n))
    back = [order.index(q) for q in range(n)]
    m = np.transpose(full, back + [n + b for b in back]).reshape(2 ** n, 2 ** n)
    return m @ rho @ m.conj().T


def reference(n: int, m: int, operations) -> dict[tuple, np.ndarray]:
    """The classical register's values, each with its (unnormalised) density matrix."""
    rho = np.zeros((2 ** n, 2 ** n), dtype=complex)
    rho[0, 0] = 1.0
    branches = {(0,) * m: rho}
    for op in operations:
        new: dict[tuple, np.ndarray] = {}

        def add(register, value, new=new):
            new[register] = new.get(register, 0) + value

        for register, rho in branches.items():
            q = op.qubits[0]
            if op.gate == "measure":
                for outcome in (0, 1):
                    changed = list(register)
                    changed[op.clbits[0]] = outcome
                    add(tuple(changed), _both_sides(rho, P[outcome], (q,), n))
            elif op.gate == "reset":
                add(register, _both_sides(rho, P[0], (q,), n) + _both_sides(rho, X @ P[1], (q,), n))
            elif op.gate == "post_select":
                add(register, _both_sides(rho, P[op.params[0]], (q,), n))
            elif op.channel is not None:
                kraus = np.asarray(op.channel.operators)
                add(register, sum(_both_sides(rho, k, op.qubits, n) for k in kraus))
            elif op.condition is None or op.condition.holds(register):
                add(register, _both_sides(rho, reference_matrix(op.gate, op.params), op.qubits, n))
            else:
                add(register, rho)
        branches = new
    return branches


def reference_state(n, m, operations) -> tuple[np.ndarray, float]:
    """The (normalised) density matrix and the acceptance probability."""
    branches = reference(n, m, operations)
    total = sum(branches.values())
    acceptance = float(np.trace(total).real)
    return total / max(acceptance, 1e-300), acceptance


def reference_distribution(n, m, operations) -> dict[str, float]:
    """Probabilities of ``"<bits> <qubits>"`` as ``sample`` reports them."""
    branches = reference(n, m, operations)
    acceptance = sum(float(np.trace(rho).real) for rho in branches.values())
    found: dict[str, float] = {}
    if acceptance < 1e-12:
        return found
    for register, rho in branches.items():
        for index, p in enumerate(np.diag(rho).real / acceptance):
            if p > 1e-14:
                bits = "".join(map(str, register))
                key = f"{bits} {index:0{n}b}" if m else f"{index:0{n}b}"
                found[key] = found.get(key, 0.0) + p
    return found


# -- random dynamic circuits --------------------------------------------------------------------
ONE = ["h", "x", "s", "rx", "ry", "rz", "u"]
TWO = ["cx", "cz", "rzz", "crx", "swap"]


def random_circuit(rng: np.random.Generator, noisy: bool):
    """A random dynamic circuit of 1-3 qubits: gates (some conditioned on bits: equality of one
    bit or a two-bit register, or parity), measurements, resets, post-selections and (``noisy``,
    on a DMCircuit) channels."""
    n = int(rng.integers(1, 4))
    c = tq.DMCircuit(n) if noisy else tq.Circuit(n)
    for step in rng.integers(0, 8, size=int(rng.integers(1, 10))):
        q = int(rng.integers(n))
        if step in (0, 1) or (step == 2 and n == 1):
            gate = str(rng.choice(ONE))
            angles = rng.uniform(-3, 3, {"rx": 1, "ry": 1, "rz": 1, "u": 3}.get(gate, 0))
            target = c.cond(int(rng.integers(c.num_clbits)), int(rng.integers(2))) \
                if c.num_clbits and rng.random() < 0.5 else c
            getattr(target, gate)(q, *angles)
        elif step == 2:
            gate = str(rng.choice(TWO))
            r = int(rng.choice([k for k in range(n) if k != q]))
            params = list(rng.uniform(-3, 3, 1)) if gate in ("rzz", "crx") else []
            if c.num_clbits >= 2 and rng.random() < 0.5:
                bits = [int(b) for b in rng.permutation(c.num_clbits)[:2]]
                parity, negate = bool(rng.random() < 0.4), bool(rng.random() < 0.3)
                with c.cond(bits, value=int(rng.integers(2 if parity else 4)), parity=parity,
                            negate=negate and not parity):
                    getattr(c, gate)(q, r, *params)
            else:
                getattr(c, gate)(q, r, *params)
        elif step in (3, 4):
            c.measure(q)
        elif step == 5:
            c.reset(q)
        elif step == 6:
            c.post_select(q, int(rng.integers(2)))
        elif noisy:
            p = float(rng.uniform(0.05, 0.5))
            kind = int(rng.integers(3))
            if kind == 0:
                c.depolarizing(q, p=p)
            elif kind == 1:
                c.amplitude_damping(q, p)
            else:
                c.bit_flip(q, p)
        else:
            c.ry(q, float(rng.uniform(-3, 3)))
    return c


def dynamic_circuits(noisy: bool):
    return st.integers(0, 2 ** 32 - 1).map(lambda seed: random_circuit(np.random.default_rng(seed), noisy))


def _check_exact(c, K):
    """Every exact result of ``c`` (and, for a pure circuit, of the same operations on an
    MPSCircuit) against the reference."""
    n, m = c.num_qubits, c.num_clbits
    rho, acceptance = reference_state(n, m, c.operations)
    if acceptance < 1e-6:
        return
    _check_results(c, K, rho, acceptance)
    if not isinstance(c, tq.DMCircuit):
        _check_results(tq.MPSCircuit(n).with_operations(list(c.operations)), K, rho, acceptance)


def _check_results(c, K, rho, acceptance):
    n, m = c.num_qubits, c.num_clbits
    with tq.use_backend(K):
        assert abs(float(c.acceptance()) - acceptance) < 1e-10
        np.testing.assert_allclose(K.to_numpy(c.probability()), np.diag(rho).real, atol=1e-10)
        for q in range(n):
            for letter, pauli in (("z", np.diag([1.0, -1.0])), ("x", X)):
                observable = np.kron(np.kron(np.eye(2 ** q), pauli), np.eye(2 ** (n - q - 1)))
                expected = np.trace(observable @ rho).real
                assert abs(float(c.expectation_ps(**{letter: [q]})) - expected) < 1e-10
        string = "".join("XYZI"[(q * 7 + m) % 4] for q in range(n))
        letters = {"X": X, "Y": np.array([[0, -1j], [1j, 0]]), "Z": np.diag([1.0, -1.0]), "I": np.eye(2)}
        observable = np.eye(1)
        for letter in string:
            observable = np.kron(observable, letters[letter])
        got = K.to_numpy(c.pauli_expectations([string, "Z" * n], [0.5, -1.0]))
        expected = 0.5 * np.trace(observable @ rho).real - 1.0 * np.trace(
            np.diag([(-1) ** bin(i).count("1") for i in range(2 ** n)]) @ rho).real
        assert abs(float(got) - expected) < 1e-10
        if isinstance(c, tq.DMCircuit):
            np.testing.assert_allclose(K.to_numpy(c.state()), rho, atol=1e-10)
        elif not any(op.gate in ("measure", "reset") for op in c.operations):
            psi = np.asarray(K.to_numpy(c.state()))
            np.testing.assert_allclose(np.outer(psi, psi.conj()), rho, atol=1e-10)


@pytest.mark.parametrize("backend_id", jax_in_matrix(BACKENDS))
@settings(max_examples=25, deadline=None)
@given(c=dynamic_circuits(noisy=False))
def test_pure_dynamic_circuits_match_the_branching_reference(backend_id, c):
    _check_exact(c, make_backend(backend_id))


@pytest.mark.parametrize("backend_id", BACKENDS)
@settings(max_examples=25, deadline=None)
@given(c=dynamic_circuits(noisy=True))
def test_noisy_dynamic_circuits_match_the_branching_reference(backend_id, c):
    _check_exact(c, make_backend(backend_id))


def _chi_square_p(counts: dict[str, int], expected: dict[str, float]) -> float:
    assert set(counts) <= set(expected), set(counts) - set(expected)
    keys = sorted(expected)
    shots = sum(counts.values())
    observed = np.array([counts.get(k, 0) for k in keys], dtype=float)
    probabilities = np.array([expected[k] for k in keys])
    if len(keys) == 1:
        return 1.0
    return float(stats.chisquare(observed, shots * probabilities / probabilities.sum()).pvalue)


@pytest.mark.parametrize("backend_id", jax_in_matrix(("numpy", "pytorch", "jax")))
@pytest.mark.parametrize("kind", ("Circuit", "DMCircuit", "MPSCircuit"))
def test_samples_follow_the_reference_distribution(backend_id, kind):
    K = make_backend(backend_id)
    checked = 0
    for example in range(12):
        c = random_circuit(np.random.default_rng(example), kind == "DMCircuit")
        if kind == "MPSCircuit":
            c = tq.MPSCircuit(c.num_qubits).with_operations(list(c.operations))
        expected = reference_distribution(c.num_qubits, c.num_clbits, c.operations)
        if not expected or reference_state(c.num_qubits, c.num_clbits, c.operations)[1] < 1e-3:
            continue
        with tq.use_backend(K):
            counts = c.sample(3000, seed=example)
        assert sum(counts.values()) == 3000
        assert _chi_square_p(counts, expected) > 1e-4, (c.operations, counts, expected)
        checked += 1
    assert checked >= 8


def test_teleportation_transfers_a_random_state_exactly():
    rng = np.random.default_rng(7)
    theta, phi, lam = rng.uniform(-np.pi, np.pi, 3)
    c = tq.Circuit(3).u(0, theta, phi, lam)
    c.h(1).cx(1, 2).cx(0, 1).h(0)
    m0, m1 = c.measure(0, 1)
    c.cond(m1).x(2)
    c.cond(m0).z(2)
    psi = reference_matrix("u", (theta, phi, lam))[:, 0]
    rho = c.to_density_matrix().reduced_density_matrix([2])
    np.testing.assert_allclose(rho, np.outer(psi, psi.conj()), atol=1e-12)
    for letter, pauli in (("x", X), ("z", np.diag([1.0, -1.0]))):
        assert abs(float(c.expectation_ps(**{letter: [2]})) - (psi.conj() @ pauli @ psi).real) < 1e-12
    counts = c.sample(4000, seed=3)  # the bits are uniform; qubit 2 reads |psi>'s Z distribution
    ones = sum(v for k, v in counts.items() if k[-1] == "1") / 4000
    assert abs(ones - abs(psi[1]) ** 2) < 5 * np.sqrt(0.25 / 4000)
    bits = {k.split()[0] for k in counts}
    assert bits == {"00", "01", "10", "11"}


def repetition_code(p: float, rounds: int) -> tq.DMCircuit:
    """A distance-3 bit-flip code: data 0-2, syndrome ancillas 3-4, corrected every round."""
    c = tq.DMCircuit(5)
    for _ in range(rounds):
        for q in range(3):
            c.bit_flip(q, p)
        c.cx(0, 3).cx(1, 3).cx(1, 4).cx(2, 4)
        s1, s2 = c.measure(3, 4)
        c.cond([s1, s2], value=1).x(0)  # s1 = 1, s2 = 0: qubit 0 flipped
        c.cond([s1, s2], value=3).x(1)
        c.cond([s1, s2], value=2).x(2)
        c.reset(3).reset(4)
    return c


@pytest.mark.parametrize("backend_id", ("numpy", "pytorch"))
def test_the_repetition_code_matches_the_analytic_logical_error_rate(backend_id):
    p, rounds = 0.1, 3
    per_round = 3 * p ** 2 * (1 - p) + p ** 3
    logical = (1 - (1 - 2 * per_round) ** rounds) / 2
    c = repetition_code(p, rounds)
    with tq.use_backend(make_backend(backend_id)):
        marginal = np.asarray(c.marginal_probability([0, 1, 2]))
        wrong = sum(marginal[i] for i in range(8) if bin(i).count("1") >= 2)
        assert abs(float(wrong) - logical) < 1e-10
        counts = c.sample(20000, seed=11)
    failures = sum(v for k, v in counts.items() if k.split()[1][:3].count("1") >= 2)
    assert abs(failures / 20000 - logical) < 5 * np.sqrt(logical * (1 - logical) / 20000)


def _parametrised(kind, angles):
    c = getattr(tq, kind)(3)
    c.rx(0, angles[0]).ry(1, angles[1]).cx(0, 1)
    bit = c.measure(1)
    c.cond(bit).ry(2, angles[2])
    c.cond(bit, 0).rx(2, angles[0])
    c.crx(0, 2, angles[1]).post_select(0, 1)
    return c


@pytest.mark.parametrize("kind", ("Circuit", "DMCircuit", "MPSCircuit"))
@pytest.mark.parametrize("backend_id,method", jax_in_matrix([
    ("numpy", "adjoint"), ("numpy", "parameter-shift"), ("pytorch", "autograd"), ("jax", "autograd")]))
def test_gradients_match_finite_differences(kind, backend_id, method):
    K = make_backend(backend_id)
    angles = np.array([0.3, -0.7, 1.1])
    if kind != "Circuit" and method == "adjoint":
        method = "parameter-shift"  # the adjoint method sweeps a pure state vector

    def energy(theta):
        c = _parametrised(kind, [theta[0], theta[1], theta[2]])
        return c.expectation_ps(z=[2]) + 0.5 * c.expectation_ps(x=[1])

    with tq.use_backend(K):
        value, gradient = tq.value_and_grad(energy, method=method)(K.asarray(angles))
        with tq.use_backend("numpy"):
            step = 1e-6
            numeric = [(float(energy(angles + step * e)) - float(energy(angles - step * e))) / (2 * step)
                       for e in np.eye(3)]
            exact = float(energy(angles))
    assert abs(float(value) - exact) < 1e-10
    np.testing.assert_allclose(np.asarray(K.to_numpy(gradient)), numeric, atol=1e-7)


def test_mixed_states_and_other_refusals_name_what_to_do():
    c = tq.Circuit(2).h(0)
    bit = c.measure(0)
    with pytest.raises(ValueError, match="mixed state.*to_density_matrix"):
        c.state()
    with pytest.raises(ValueError, match="not a unitary"):
        c.matrix()
    with pytest.raises(ValueError, match="cannot be inverted"):
        c.inverse()
    with pytest.raises(ValueError, match="bit 3 is not a classical bit"):
        c.cond(3).x(1)
    with pytest.raises(ValueError, match="give value="):
        c.measure(1)
        c.cond([0, 1]).x(1)
    with pytest.raises(ValueError, match="value=4 must be an int in"):
        c.cond([0, 1], value=4)
    with pytest.raises(ValueError, match="outcome=2 must be 0 or 1"):
        c.post_select(0, 2)
    with pytest.raises(AttributeError, match="only gate methods"):
        c.cond(bit).depolarizing(0, p=0.1)
    with pytest.raises(ValueError, match="cannot be conditioned"), c.cond(bit):
        c.depolarizing(0, p=0.1)
    with pytest.raises(ValueError, match="cannot be conditioned"), c.cond(bit):
        c.measure(1)
    with pytest.raises(AttributeError, match="only gate methods"):
        c.cond(bit).sample(10)
    with pytest.raises(ValueError, match="post-selections succeed with probability 0"):
        tq.Circuit(1).post_select(0, 1).sample(10, seed=1)
    assert tq.Circuit(1).cond is not None


@pytest.mark.parametrize("kind", ("Circuit", "DMCircuit", "MPSCircuit"))
def test_a_conditioned_custom_unitary(kind):
    u = reference_matrix("u", (0.4, 0.5, 0.6))
    c = getattr(tq, kind)(2).h(0)
    bit = c.measure(0)
    c.cond(bit).unitary(1, matrix=u)
    with c.cond(bit, 0):
        c.unitary(1, matrix=u.conj().T)
    rho, _ = reference_state(2, 1, c.operations)
    np.testing.assert_allclose(np.asarray(c.probability()), np.diag(rho).real, atol=1e-12)


def test_a_bit_read_before_it_is_written_reads_zero():
    c = tq.Circuit(2)
    c.measure(1, into=2)  # bits 0 and 1 exist but are never written
    c.cond(0, 0).x(0)
    c.cond([0, 1], value=3).x(1)
    assert float(c.expectation_ps(z=[0])) == pytest.approx(-1.0)
    assert float(c.expectation_ps(z=[1])) == pytest.approx(1.0)
    assert c.sample(10, seed=1) == {"000 10": 10}


def test_drawing_shows_measurements_conditions_and_resets():
    c = tq.Circuit(2).h(0)
    bit = c.measure(0)
    c.cond(bit).x(1)
    c.reset(0).post_select(1, 0)
    drawn = c.draw()
    for label in ("M→c0", "X[c0=1]", "|0⟩", "P=0"):
        assert label in drawn
    assert drawn.index("X[c0=1]") > drawn.index("M→c0") - drawn.index("\n")  # after the measurement
