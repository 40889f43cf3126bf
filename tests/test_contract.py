"""The result contract, run over every simulator class against a plain dense reference.

:class:`~tyxonq.circuit.simulator.SimulatorBase` declares the results every simulator answers
(``RESULTS``); each simulator computes each of them, or refuses it with one documented exception,
:class:`tyxonq.UnsupportedResult`, whose message names what gives it instead. What a simulator
refuses for every circuit is data on its class (``unsupported_results``); pure-state results
(a state vector, an amplitude, a unitary) of a circuit whose state is mixed are refused the same
way on every simulator. Everything else must equal the reference: a density matrix computed here
from textbook gate matrices and Kraus operators (``reference.py``, ``test_noise.py``).

A simulator class added later joins this test by name (``CASES`` below): the first test fails
until it does.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_noise import reference_kraus

import tyxonq as tq
from conftest import make_backend
from reference import FIXED_SIZES, PARAMETRISED, apply, pauli_matrix, random_hermitian, reference_matrix
from tyxonq.circuit.simulator import RESULTS, SimulatorBase, simulator_class, simulator_classes

N = 3
CLIFFORD_FIXED = ("h", "s", "sdg", "x", "y", "z", "sx", "cx", "cz", "swap")
PURE_RESULTS = ("amplitude", "matrix")  # and a state vector (``state`` of a pure-state simulator)
PAULI_CHANNELS = (("depolarizing", {"p": 0.1}), ("bit_flip", {"p": 0.2}), ("phase_flip", {"p": 0.15}))
OTHER_CHANNELS = (("amplitude_damping", {"gamma": 0.3, "excited_population": 0.0}),
                  ("phase_damping", {"gamma": 0.4}))


# -- what each simulator holds --------------------------------------------------------------------
def _gates(clifford: bool) -> st.SearchStrategy:
    fixed = CLIFFORD_FIXED if clifford else tuple(name for name in FIXED_SIZES if FIXED_SIZES[name] <= 2)
    angle = st.sampled_from([0.5 * np.pi, np.pi, 1.5 * np.pi]) if clifford else \
        st.floats(-3.0, 3.0, allow_nan=False)
    rotations = ("rx", "ry", "rz", "rzz", "rxx") if clifford else tuple(
        name for name, (k, _, _) in PARAMETRISED.items() if k <= 2)

    @st.composite
    def gate(draw: st.DrawFn) -> tuple:
        if draw(st.booleans()):
            name = draw(st.sampled_from(fixed))
            k, params = FIXED_SIZES[name], ()
        else:
            name = draw(st.sampled_from(rotations))
            k, count, _ = PARAMETRISED[name]
            params = tuple(draw(angle) for _ in range(count))
        qubits = tuple(draw(st.permutations(range(N)))[:k])
        return ("gate", name, qubits, params)

    return gate()


def _channel(channels: tuple) -> st.SearchStrategy:
    return st.tuples(st.just("channel"), st.sampled_from(channels), st.integers(0, N - 1)).map(
        lambda t: ("channel", t[1][0], (t[2],), t[1][1]))


def _measurement() -> st.SearchStrategy:
    return st.tuples(st.sampled_from(["measure", "reset"]), st.integers(0, N - 1)).map(
        lambda t: (t[0], t[0], (t[1],), {}))


def _operations(clifford: bool, channels: tuple = (), dynamic: bool = False) -> st.SearchStrategy:
    kinds = [_gates(clifford)] * 3
    if channels:
        kinds.append(_channel(channels))
    if dynamic:
        kinds.append(_measurement())
    return st.lists(st.one_of(*kinds), min_size=1, max_size=10)


def build(kind: type, operations: list[tuple]) -> SimulatorBase:
    c = kind(N, **CASES[kind.__name__].get("options", {}))
    for what, name, qubits, params in operations:
        if what == "gate":
            getattr(c, name)(*qubits, *params)
        elif what == "channel":
            getattr(c, name)(*qubits, **params)
        elif what == "measure":
            c.measure(*qubits)
        else:
            c.reset(*qubits)
    return c


#: each simulator class: the operations it holds (clifford gates only?, channels, measurements) and
#: its options (an MPS untruncated: the contract is exactness)
CASES = {
    "Circuit": dict(clifford=False, channels=(), dynamic=True),
    "DMCircuit": dict(clifford=False, channels=PAULI_CHANNELS + OTHER_CHANNELS, dynamic=True),
    "MPSCircuit": dict(clifford=False, channels=(), dynamic=True, options=dict(cutoff=0.0)),
    "StabilizerCircuit": dict(clifford=True, channels=PAULI_CHANNELS, dynamic=True),
}


# -- the reference ---------------------------------------------------------------------------------
def _sandwich(rho: np.ndarray, kraus: list, qubits: tuple) -> np.ndarray:
    vector = rho.reshape(-1)
    bra = tuple(N + q for q in qubits)
    out = sum(apply(apply(vector, np.asarray(k, dtype=complex), qubits, 2 * N), np.conj(k), bra, 2 * N)
              for k in kraus)
    return out.reshape(2 ** N, 2 ** N)


def reference_density(operations: list[tuple]) -> np.ndarray:
    rho = np.zeros((2 ** N, 2 ** N), dtype=complex)
    rho[0, 0] = 1.0
    p0, p1 = np.diag([1.0, 0.0]), np.diag([0.0, 1.0])
    for what, name, qubits, params in operations:
        if what == "gate":
            kraus = [reference_matrix(name, params)]
        elif what == "channel":
            kraus = reference_kraus(name, params)
        elif what == "measure":  # the outcome is recorded, not read: the qubit dephases
            kraus = [p0, p1]
        else:
            kraus = reference_kraus("reset", {})
        rho = _sandwich(rho, kraus, qubits)
    return rho


def reduced(rho: np.ndarray, qubits: list[int]) -> np.ndarray:
    others = [q for q in range(N) if q not in qubits]
    tensor = rho.reshape((2,) * (2 * N))
    order = list(qubits) + others + [N + q for q in qubits] + [N + q for q in others]
    tensor = np.transpose(tensor, order).reshape(2 ** len(qubits), 2 ** len(others),
                                                2 ** len(qubits), 2 ** len(others))
    return np.einsum("ajbj->ab", tensor)


def reference_unitary(operations: list[tuple]) -> np.ndarray | None:
    if any(what != "gate" for what, *_ in operations):
        return None
    unitary = np.eye(2 ** N, dtype=complex)
    for _, name, qubits, params in operations:
        unitary = np.stack([apply(unitary[:, j], reference_matrix(name, params), qubits, N)
                            for j in range(2 ** N)], axis=1)
    return unitary


# -- the contract ----------------------------------------------------------------------------------
def test_every_simulator_class_is_under_the_contract():
    """A new simulator class must be added to CASES (and so checked below)."""
    assert {kind.__name__ for kind in simulator_classes()} == set(CASES)
    for kind in simulator_classes():
        assert set(kind.unsupported_results) <= set(RESULTS), kind
        for result in RESULTS:
            assert callable(getattr(kind, result, None)), (kind, result)


def test_the_contract_is_declared_on_the_base():
    for result in RESULTS:
        method = getattr(SimulatorBase, result)
        assert method.__doc__, result


def _host(K, value) -> np.ndarray:
    return np.asarray(K.to_numpy(value))


def _refused(kind: type, result: str, call) -> None:
    with pytest.raises(tq.UnsupportedResult) as refusal:
        call()
    assert kind.__name__ in str(refusal.value) or "tq." in str(refusal.value) or "c." in str(refusal.value)


def check_contract(kind: type, operations: list[tuple], backend_id: str, seed: int) -> None:
    K = make_backend(backend_id)
    with tq.use_backend(K):
        c = build(kind, operations)
        rho = reference_density(operations)
        unitary = reference_unitary(operations)  # None: channels or measurements
        psi = None if unitary is None else unitary[:, 0]
        rng = np.random.default_rng(seed)
        qubits = [int(q) for q in rng.permutation(N)[: rng.integers(1, N + 1)]]
        refused = kind.unsupported_results
        atol = 1e-6 if kind.__name__ == "StabilizerCircuit" else 1e-9

        def expect(result: str, call, expected, compare=None) -> None:
            if result in refused:
                _refused(kind, result, call)
            elif expected is None:
                _refused(kind, result, call)
            else:
                value = _host(K, call())
                (compare or (lambda a, b: np.testing.assert_allclose(a, b, atol=atol)))(value, expected)

        # whole-state results
        if kind.__name__ == "DMCircuit":
            expect("state", c.state, rho)
        else:
            expect("state", c.state, psi, compare=_same_up_to_phase)
        expect("probability", c.probability, np.real(np.diag(rho)))
        index = int(rng.integers(2 ** N))
        if psi is None or "amplitude" in refused:
            expect("amplitude", lambda: c.amplitude(index), None)
        else:  # in the phase of the simulator's own state()
            expect("amplitude", lambda: c.amplitude(index), _host(K, c.state())[index])
            assert abs(abs(complex(_host(K, c.amplitude(index)))) - abs(psi[index])) < atol
        expect("matrix", c.matrix, unitary)
        # local results
        expect("marginal_probability", lambda: c.marginal_probability(qubits),
               np.real(np.diag(reduced(rho, qubits))))
        expect("reduced_density_matrix", lambda: c.reduced_density_matrix(qubits), reduced(rho, qubits))
        observable = random_hermitian(rng, len(qubits[:2]))
        full = _embedded(observable, qubits[:2])
        expect("expectation", lambda: c.expectation((observable, qubits[:2])), np.real(np.trace(rho @ full)))
        strings = ["".join(rng.choice(list("IXYZ"), N)) for _ in range(4)]
        values = [np.real(np.trace(rho @ pauli_matrix(s))) for s in strings]
        expect("pauli_expectations", lambda: c.pauli_expectations(strings), values)
        letters = {"x": [q for q in range(N) if strings[0][q] == "X"],
                   "y": [q for q in range(N) if strings[0][q] == "Y"],
                   "z": [q for q in range(N) if strings[0][q] == "Z"]}
        if any(letters.values()):
            expect("expectation_ps", lambda: c.expectation_ps(**letters), values[0])
        # samples: every outcome within 5 standard errors of its probability
        shots = 4000
        probabilities = np.clip(np.real(np.diag(rho)), 0.0, 1.0)
        if "sample" in refused:
            _refused(kind, "sample", lambda: c.sample(shots, seed=seed))
        else:
            counts = c.sample(shots, seed=seed)
            frequencies = np.zeros(2 ** N)
            for key, count in counts.items():
                frequencies[int(key.split(" ")[-1], 2)] += count / shots
            bound = 5 * np.sqrt(probabilities * (1 - probabilities) / shots) + 1e-9
            assert np.all(np.abs(frequencies - probabilities) <= bound), (counts, probabilities)
        # a rehearsal: the one report type, whatever the simulator
        if "rehearse" in refused:
            _refused(kind, "rehearse", lambda: c.rehearse("expectation_ps", z=[0]))
        else:
            assert isinstance(c.rehearse("expectation_ps", z=[0]), tq.ContractionReport)


def _same_up_to_phase(value: np.ndarray, expected: np.ndarray) -> None:
    flat, reference = np.ravel(value), np.ravel(expected)
    anchor = int(np.argmax(np.abs(reference)))
    assert abs(flat[anchor]) > 1e-6
    phase = reference[anchor] / flat[anchor]
    np.testing.assert_allclose(flat * phase, reference, atol=1e-6)


def _embedded(matrix: np.ndarray, qubits: list[int]) -> np.ndarray:
    columns = [apply(np.eye(2 ** N, dtype=complex)[:, j], matrix, tuple(qubits), N) for j in range(2 ** N)]
    return np.stack(columns, axis=1)


def _contract_test(name: str):
    case = CASES[name]

    @settings(max_examples=25, deadline=None)
    @given(operations=_operations(case["clifford"], case["channels"]), seed=st.integers(0, 2 ** 16))
    def noiseless_or_noisy(operations, seed):
        check_contract(simulator_class(name), operations, "numpy", seed)

    @settings(max_examples=10, deadline=None)
    @given(operations=_operations(case["clifford"], case["channels"], case["dynamic"]),
           seed=st.integers(0, 2 ** 16))
    def dynamic(operations, seed):
        check_contract(simulator_class(name), operations, "numpy", seed)

    return noiseless_or_noisy, dynamic


@pytest.mark.parametrize("name", sorted(CASES))
def test_contract_against_the_dense_reference(name):
    noiseless_or_noisy, _ = _contract_test(name)
    noiseless_or_noisy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_contract_with_mid_circuit_measurements_and_resets(name):
    _, dynamic = _contract_test(name)
    dynamic()


@pytest.mark.parametrize("name, backend_id", [(name, "pytorch") for name in sorted(CASES)] + [
    pytest.param(name, "jax", marks=[pytest.mark.jax_matrix] if name in ("Circuit", "MPSCircuit") else [])
    for name in sorted(CASES)])
def test_contract_on_other_backends(name, backend_id):
    """One fixed circuit per simulator (Clifford, one Pauli channel where the simulator holds
    channels, one mid-circuit measurement) on the autodiff backends (eager JAX compiles for seconds:
    its Circuit and MPSCircuit cases run in ``nox -s jax_matrix``)."""
    operations = [("gate", "h", (0,), ()), ("gate", "cx", (0, 1), ()), ("gate", "s", (2,), ()),
                  ("gate", "rx", (2,), (0.5 * np.pi,)), ("measure", "measure", (1,), {}),
                  ("gate", "cz", (1, 2), ())]
    if CASES[name]["channels"]:
        operations.insert(3, ("channel", "depolarizing", (2,), {"p": 0.1}))
    check_contract(simulator_class(name), operations, backend_id, 7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_flags_are_never_read_as_truthy(name):
    """``negate="yes"``, ``final="no"``, ``hermitian="no"`` were read as true; ``cond(0.0)``
    leaked Python's own TypeError. Each is refused, naming the argument."""
    c = simulator_class(name)(2).h(0)
    bit = c.measure(0)
    with pytest.raises(TypeError, match="negate='yes' must be True or False"):
        c.cond(bit, negate="yes")
    with pytest.raises(TypeError, match="cond: bits=0.0 must be a classical bit"):
        c.cond(0.0)
    with pytest.raises(TypeError, match="final='no' must be True or False"):
        c.sample(10, seed=1, final="no")
    with pytest.raises(TypeError, match="hermitian='no' must be True or False"):
        c.expectation((np.diag([1.0, -1.0]), [1]), hermitian="no")
    with pytest.raises(TypeError, match="return_std=1 must be True or False"):
        c.sample_expectation_ps(z=[1], shots=10, return_std=1)
