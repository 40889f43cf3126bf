"""Exact sampling at any width: every method (dense state, untruncated MPS, sequential conditional
marginals) against the exact distribution by a seeded chi-square test, on pure and noisy
circuits and several backends; the automatic choice; 60-qubit circuits without a state vector;
formats, readout error and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from tyxonq.circuit.wide_sampling import bond_bound_bits, sampling_method

SHOTS = 20000


def chi_square_ok(counts: dict, probabilities: np.ndarray) -> None:
    """The counts against the exact probabilities (outcomes above 1e-3 pooled test; the rest rare)."""
    n = int(np.log2(len(probabilities)))
    observed = np.zeros(len(probabilities))
    for bits, count in counts.items():
        observed[int(bits, 2)] = count
    kept = probabilities > 1e-3
    statistic, pvalue = stats.chisquare(observed[kept], observed[kept].sum() * probabilities[kept]
                                        / probabilities[kept].sum())
    assert pvalue > 1e-6, (n, statistic)
    assert observed[~kept].sum() <= SHOTS * max(5e-3, 5 * probabilities[~kept].sum())


def random_circuit(n: int, seed: int, cls=tq.Circuit, noisy: bool = False):
    rng = np.random.default_rng(seed)
    circuit = cls(n)
    for layer in range(4):
        for q in range(n):
            circuit.ry(q, theta=float(rng.uniform(0, np.pi)))
            if noisy:
                circuit.depolarizing(q, p=0.05)
        for q in range(layer % 2, n - 1, 2):
            circuit.cx(q, q + 1)
        a, b = rng.choice(n, 2, replace=False)
        circuit.rzz(int(a), int(b), theta=float(rng.uniform(-2, 2)))  # a distant pair too
    return circuit


@pytest.mark.parametrize("method", ["state", "mps", "contraction"])
@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_every_method_samples_the_exact_distribution(method, backend_name):
    K = make_backend(backend_name)
    with tq.use_backend(K):
        circuit = random_circuit(9, seed=4)
        probabilities = np.asarray(K.to_numpy(circuit.probability()), dtype=float)
        counts = circuit.sample(SHOTS, seed=11, method=method)
        again = circuit.sample(SHOTS, seed=11, method=method)
    assert counts == again  # seeded
    chi_square_ok(counts, probabilities)


def test_noisy_circuits_sample_by_contraction():
    circuit = random_circuit(7, seed=2, cls=tq.DMCircuit, noisy=True)
    with tq.use_backend("numpy") as K:
        probabilities = np.asarray(K.to_numpy(circuit.probability()), dtype=float)
        chi_square_ok(circuit.sample(SHOTS, seed=3, method="contraction"), probabilities)
        with pytest.raises(ValueError, match="method='mps' samples pure circuits"):
            circuit.sample(10, method="mps")


def test_groups_of_any_size_sample_exactly():
    from tyxonq.circuit.wide_sampling import marginal_samples

    circuit = random_circuit(6, seed=9)
    with tq.use_backend("numpy") as K:
        probabilities = np.asarray(K.to_numpy(circuit.probability()), dtype=float)
        for group in (1, 4, 6):
            bits = marginal_samples(circuit, SHOTS, np.random.default_rng(group), group_qubits=group)
            counts = {}
            for row in bits.tolist():
                key = "".join(map(str, row))
                counts[key] = counts.get(key, 0) + 1
            chi_square_ok(counts, probabilities)


def test_plans_contracted_for_many_prefixes_are_searched_thoroughly(monkeypatch):
    """The first group's plan serves one empty prefix (the quick search); a later group's serves
    every distinct prefix drawn so far, at once: at THOROUGH_SLOWDOWN prefixes or more its search
    is the thorough one, as for a compiled program."""
    from tyxonq.circuit import base
    from tyxonq.circuit.contraction.paths import THOROUGH_SLOWDOWN
    from tyxonq.circuit.wide_sampling import marginal_samples

    asked = []
    original = base.get_plan

    def recorded(key, *args, thorough=False):
        asked.append((key[0], len(key[1]), thorough))
        return original(key, *args, thorough=thorough)

    monkeypatch.setattr(base, "get_plan", recorded)
    with tq.use_backend("numpy"):
        marginal_samples(random_circuit(6, seed=4), 2000, np.random.default_rng(0), group_qubits=3)
    conditionals = [(fixed, thorough) for kind, fixed, thorough in asked if kind == "conditional"]
    assert conditionals == [(0, False), (3, True)]  # 2^3 = 8 prefixes after the first group
    assert THOROUGH_SLOWDOWN <= 8


def test_sixty_qubits_without_a_state_vector():
    n = 60
    ghz = tq.Circuit(n).h(0)
    for q in range(n - 1):
        ghz.cx(q, q + 1)
    assert sampling_method(ghz, "auto") == "mps"
    for method in ("mps", "contraction"):
        counts = ghz.sample(2000, seed=5, method=method)
        assert set(counts) == {"0" * n, "1" * n}
        assert abs(counts["0" * n] - 1000) < 5 * np.sqrt(2000 * 0.25)
    # a product of Bell pairs across the chain (0 with 30, 1 with 31, ...): every pair agrees
    pairs = tq.Circuit(n)
    for q in range(n // 2):
        pairs.h(q).cx(q, q + n // 2)
    assert bond_bound_bits(n, pairs.operations) == 30
    assert sampling_method(pairs, "auto") == "contraction"
    for bits in pairs.sample(300, seed=6, format="bitstrings"):
        assert bits[: n // 2] == bits[n // 2:]


def test_the_automatic_choice():
    assert sampling_method(random_circuit(20, seed=1), "auto") == "state"
    brickwork = tq.templates.brickwork(50, np.zeros(300), 6)
    assert bond_bound_bits(50, brickwork.operations) == 3  # three CZ cross each cut
    assert sampling_method(brickwork, "auto") == "mps"
    noisy = tq.DMCircuit(30).h(0).cx(0, 29)
    assert sampling_method(noisy, "auto") == "contraction"


def test_formats_readout_and_refusals_of_wide_samples():
    n = 70
    c = tq.Circuit(n).x(0).x(n - 1)
    expected = "1" + "0" * (n - 2) + "1"
    assert c.sample(7, seed=1) == {expected: 7}
    assert c.sample(3, seed=1, format="bitstrings") == [expected] * 3
    with pytest.raises(ValueError, match="at most 62 qubits"):
        c.sample(3, format="indices")
    flipped = c.sample(4000, seed=2, readout_error=[[1.0, 0.1], [0.0, 0.9]])  # 1 reads 0 at 10%
    first_read_zero = sum(count for bits, count in flipped.items() if bits[0] == "0") / 4000
    assert abs(first_read_zero - 0.1) < 5 * np.sqrt(0.09 / 4000)
    with pytest.raises(ValueError, match="method='fast' must be one of"):
        c.sample(3, method="fast")
    small = tq.Circuit(3).h(0)
    assert small.sample(5, seed=1, method="contraction", format="indices").shape == (5,)
