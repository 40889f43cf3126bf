"""Route choices by estimated cost (:mod:`tyxonq.circuit.calibration`): every route is exact (both
agree with the dense reference, values and gradients), the choice follows the machine's rates
(bookkeeping against arithmetic, compile time on JAX), a rehearsal reports it, and the rates are
measured on this machine, falling back to the reference machine's with a warning."""

from __future__ import annotations

import numpy as np
import pytest
from test_noise import reference_density

import tyxonq as tq
from conftest import jax_in_matrix, make_backend
from tyxonq.circuit import calibration
from tyxonq.circuit.contraction.route_costs import RouteCost, readout_passes
from tyxonq.operators.pauli import pauli_matrix
from tyxonq.operators.pauli_action import GROUPED_QUBITS

#: bookkeeping costs everything, or arithmetic does
TENSORS_DEAR = tq.MachineRates(tensor_seconds=1.0, madds_per_second=1e30)
ARITHMETIC_DEAR = tq.MachineRates(tensor_seconds=0.0, madds_per_second=1.0)
#: cheap calls, dear compilations
COMPILING_DEAR = tq.MachineRates(tensor_seconds=0.0, madds_per_second=1e9, compile_seconds_per_tensor=1.0)


def noisy_ansatz(n: int, angles, p: float = 0.05) -> tq.DMCircuit:
    """RY·RZ layers and a CNOT chain, a depolarising channel after every gate."""
    c = tq.DMCircuit(n)
    for layer in range(2):
        for q in range(n):
            c.ry(q, angles[2 * layer * n + q]).depolarizing(q, p=p)
            c.rz(q, angles[(2 * layer + 1) * n + q]).depolarizing(q, p=p)
        for q in range(n - 1):
            c.cx(q, q + 1).depolarizing(q, p=p).depolarizing(q + 1, p=p)
    return c


def ansatz_reference(n: int, angles, p: float = 0.05) -> np.ndarray:
    operations = []
    for layer in range(2):
        for q in range(n):
            operations += [("gate", "ry", (q,), (angles[2 * layer * n + q],)),
                           ("channel", "depolarizing", (q,), {"p": p}),
                           ("gate", "rz", (q,), (angles[(2 * layer + 1) * n + q],)),
                           ("channel", "depolarizing", (q,), {"p": p})]
        for q in range(n - 1):
            operations += [("gate", "cx", (q, q + 1), ()), ("channel", "depolarizing", (q,), {"p": p}),
                           ("channel", "depolarizing", (q + 1,), {"p": p})]
    return reference_density(n, operations)


def chosen(function, *args, **kwargs) -> list[str]:
    return [choice.chosen for choice in tq.rehearse(function, *args, **kwargs).choices]


HAMILTONIAN = tq.PauliSum([(0.7, "ZZII"), (-0.4, "XIXI"), (0.3, "IYYI"), (1.1, "IIIX"), (0.25, "YZXI"),
                           (0.5, "IIII")])


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax"]))
def test_density_matrix_routes_agree_with_the_dense_reference(backend_name):
    """The state route (the whole doubled network, each string read from it) and the light cones
    give the reference's values; autograd through either gives the same gradient, that of finite
    differences."""
    n, rng = 4, np.random.default_rng(3)
    angles = rng.uniform(-np.pi, np.pi, 4 * n)
    rho = ansatz_reference(n, angles)
    strings = [string for _, string in HAMILTONIAN]
    expected = [np.trace(pauli_matrix(string) @ rho).real for string in strings]
    energy = sum(c * e for (c, _), e in zip(HAMILTONIAN, expected)).real
    K = make_backend(backend_name)
    with tq.use_backend(K):
        c = noisy_ansatz(n, K.asarray(angles))
        np.testing.assert_allclose(K.to_numpy(c.pauli_expectations(strings)), expected, atol=1e-10)
        gradients = []
        for method in ("state", "lightcone", "auto"):
            assert abs(float(c.expectation(HAMILTONIAN, method=method)) - energy) < 1e-10
            if K.capabilities.autodiff == "autograd" and method != "auto":
                def energy_of(a, m=method):
                    return noisy_ansatz(n, a).expectation(HAMILTONIAN, method=m)

                value_and_grad = K.value_and_grad(energy_of)
                if K.capabilities.jit == "jax.jit":  # eager JAX differentiates op by op: slow
                    value_and_grad = K.jit(value_and_grad)
                value, gradient = value_and_grad(K.asarray(angles))
                assert abs(float(value) - energy) < 1e-10
                gradients.append(K.to_numpy(gradient))
    if gradients:
        np.testing.assert_allclose(gradients[0], gradients[1], atol=1e-10)
        step = 1e-6
        with tq.use_backend("numpy"):
            numeric = [(float(noisy_ansatz(n, angles + step * e).expectation(HAMILTONIAN))
                        - float(noisy_ansatz(n, angles - step * e).expectation(HAMILTONIAN))) / (2 * step)
                       for e in np.eye(len(angles))]
        np.testing.assert_allclose(gradients[0], numeric, atol=1e-7)


#: on the 6-qubit noisy ansatz: the density matrix has fewer tensors (156 against 202) and the
#: light cones fewer multiply-adds (7.7e3 against 8.6e4)
LOCAL_STRINGS = ["ZIIIII", "IIIIIX"]


@pytest.mark.parametrize("rates,route", [(TENSORS_DEAR, "state"), (ARITHMETIC_DEAR, "lightcone")])
def test_the_route_follows_the_machine_rates(rates, route):
    c = noisy_ansatz(6, np.linspace(-1, 1, 24))
    with tq.use_backend("numpy") as K:
        expected = K.to_numpy(c.pauli_expectations(LOCAL_STRINGS))
        tq.set_machine_rates(rates)
        try:
            assert chosen(c.pauli_expectations, LOCAL_STRINGS) == [route]
            K_values = K.to_numpy(c.pauli_expectations(LOCAL_STRINGS))
        finally:
            tq.set_machine_rates("reference")
    np.testing.assert_allclose(K_values, expected, atol=1e-12)


def test_compiled_programs_weigh_their_compile_time():
    """With cheap calls and dear compilations, eager calls take the light cones (less arithmetic)
    and a jax.jit program the density matrix (fewer tensors to compile); same values."""
    pytest.importorskip("jax")
    c = noisy_ansatz(6, np.linspace(-1, 1, 24))
    found = []
    tq.set_machine_rates(COMPILING_DEAR)
    try:
        with tq.use_backend("jax") as K:
            assert chosen(c.pauli_expectations, LOCAL_STRINGS) == ["lightcone"]
            eager = K.to_numpy(c.pauli_expectations(LOCAL_STRINGS))

            def traced(a):
                found.extend(chosen(noisy_ansatz(6, a).pauli_expectations, LOCAL_STRINGS))
                return noisy_ansatz(6, a).pauli_expectations(LOCAL_STRINGS)

            compiled = K.to_numpy(K.jit(traced)(K.asarray(np.linspace(-1, 1, 24))))
    finally:
        tq.set_machine_rates("reference")
    assert found == ["state"]
    np.testing.assert_allclose(compiled, eager, atol=1e-10)


def test_pure_circuits_choose_between_the_state_and_the_light_cones():
    """Measured on the reference machine: a shallow 14-qubit brickwork's local terms from their
    light cones, a deep circuit of long-range gates' TFIM terms from the state (16 qubits:
    74 ms through the state, 3.7 s through the cones); the values agree either way."""
    n, rng = 14, np.random.default_rng(5)
    shallow = tq.templates.brickwork(n, rng.uniform(-1, 1, 2 * n), 2)
    local = tq.PauliSum([(1.0, "I" * q + "ZZ" + "I" * (n - q - 2)) for q in (3, 8, 11)])
    assert chosen(shallow.expectation, local) == ["lightcone"]
    values = [float(shallow.expectation(local, method=method)) for method in ("state", "lightcone", "auto")]
    np.testing.assert_allclose(values, values[0], atol=1e-10)
    deep = tq.Circuit(n)
    for layer in range(10):
        deep.layer("ry", range(n), rng.uniform(-1, 1, n))
        deep.layer("cx", [(q, (q + 1 + 2 * layer) % n) for q in range(0, n, 2)])
    hamiltonian = tq.hamiltonians.tfim(n)
    report = tq.rehearse(deep.expectation, hamiltonian)
    assert [choice.chosen for choice in report.choices] == ["state"] and report.routes == ("sweep",)
    assert "lightcone at least" in str(report)  # their networks were never built
    value = float(deep.expectation(hamiltonian))
    assert abs(value - float(deep.expectation(hamiltonian, method="state"))) < 1e-12


def test_a_state_cheaper_than_finding_the_cones_is_chosen_without_them(monkeypatch):
    """A small register with many operations and strings (a molecule's UCCSD energy: 630
    strings on 15 000 operations took 60 s of light-cone search for a 0.3 s state): the state
    route is taken without computing a single cone; the value is the state's."""
    from tyxonq.circuit import base

    n, rng = 6, np.random.default_rng(2)
    circuit = tq.Circuit(n)
    for _ in range(300):
        circuit.layer("ry", range(n), rng.uniform(-1, 1, n)).layer("cx", [(q, q + 1) for q in range(n - 1)])
    strings = ["".join(rng.choice(list("IXYZ"), n)) for _ in range(40)]
    hamiltonian = tq.PauliSum([(1.0, s) for s in strings], n)

    def refused(*args, **kwargs):
        raise AssertionError("light cones were searched")

    monkeypatch.setattr(base, "cone_groups", refused)
    assert float(circuit.expectation(hamiltonian)) == pytest.approx(
        float(circuit.expectation(hamiltonian, method="state")), abs=1e-12)


def test_rehearse_reports_each_choice_and_its_estimates():
    c = noisy_ansatz(4, np.linspace(-1, 1, 16))
    report = tq.rehearse(c.expectation, HAMILTONIAN)
    (choice,) = report.choices
    assert choice.what == "pauli_expectations" and choice.chosen in ("state", "lightcone")
    estimates = dict(choice.estimates)
    assert set(estimates) == {"state", "lightcone"} and estimates[choice.chosen] == min(estimates.values())
    assert f"chose {choice}" in str(report)


def test_a_density_matrix_that_does_not_fit_takes_the_light_cones():
    """``auto`` keeps to the light cones where the density matrix would not fit; ``method="state"``
    asks for it and is refused, naming the size."""
    c = noisy_ansatz(6, np.linspace(-1, 1, 24))
    expected = float(c.expectation(tq.hamiltonians.tfim(6), method="lightcone"))
    tq.set_machine_rates(TENSORS_DEAR)
    try:
        with tq.use_memory_limit("16 KiB"):  # the 4^6 entries take 64 KiB
            assert abs(float(c.expectation(tq.hamiltonians.tfim(6))) - expected) < 1e-10
            with pytest.raises(MemoryError, match="density matrix of 6 qubit"):
                c.expectation(tq.hamiltonians.tfim(6), method="state")
    finally:
        tq.set_machine_rates("reference")


def test_rates_are_measured_on_this_machine_once_per_backend():
    tq.set_machine_rates(None)
    try:
        with tq.use_backend("numpy") as K:
            found = []
            report = tq.rehearse(lambda: found.append(tq.machine_rates()))
            (rates,) = found
            assert report.contractions == 0  # the probes ran for real, outside the caller's rehearsal
            assert rates.source == "measured" and rates.tensor_seconds > 0 and rates.madds_per_second > 0
            assert tq.machine_rates(K) is rates
        pytest.importorskip("jax")
        with tq.use_backend("jax") as K:
            compiled = []
            K.jit(lambda x: compiled.append(tq.machine_rates()) or x)(1.0)
            assert compiled[0].compile_seconds_per_tensor > 0  # timed when a compiled program first asks
    finally:
        tq.set_machine_rates("reference")


def test_a_clear_choice_measures_nothing_and_a_close_one_measures(monkeypatch):
    """A choice the reference rates settle by CLEAR_MARGIN is made without timing this machine;
    one they leave close is made by this machine's rates."""
    measured = []

    def spy(K, timing_compiles):
        measured.append(K.name)
        return calibration.REFERENCE_RATES["numpy"]

    monkeypatch.setattr(calibration, "_measure_aside", spy)
    monkeypatch.setattr(calibration, "_measured", {})
    tq.set_machine_rates(None)
    try:
        with tq.use_backend("numpy"):
            clear = tq.templates.hardware_efficient(8, np.linspace(0, 1, 80), 4, ("ry", "rz"))
            assert chosen(clear.expectation, tq.hamiltonians.tfim(8)) == ["state"] and measured == []
            close = [RouteCost("state", 100, 0.0), RouteCost("lightcone", 120, 0.0)]
            assert calibration.cheapest_route("demo", close) == "state" and measured == ["numpy"]
    finally:
        tq.set_machine_rates("reference")


def test_a_failed_measurement_warns_and_uses_the_reference(monkeypatch):
    def broken(angles, layers):
        raise RuntimeError("no probe today")

    monkeypatch.setattr(calibration, "_probe", [broken])
    monkeypatch.setattr(calibration, "_measured", {})
    tq.set_machine_rates(None)
    try:
        with tq.use_backend("numpy"), pytest.warns(RuntimeWarning, match="no probe today"):
            assert tq.machine_rates() == calibration.REFERENCE_RATES["numpy"]
    finally:
        tq.set_machine_rates("reference")


def test_bad_rates_are_refused_by_name():
    with pytest.raises(ValueError, match="rates must be a tq.MachineRates"):
        tq.set_machine_rates("fast")
    with pytest.raises(ValueError, match="tensor_seconds must be a non-negative number"):
        tq.MachineRates(tensor_seconds=-1.0, madds_per_second=1e9)
    with pytest.raises(ValueError, match="madds_per_second must be positive"):
        tq.MachineRates(tensor_seconds=1e-6, madds_per_second=0.0)
    with pytest.raises(ValueError, match="passes_per_second must be positive"):
        tq.MachineRates(tensor_seconds=1e-6, madds_per_second=1e9, passes_per_second=0.0)


def test_reading_terms_from_a_state_is_counted_as_the_state_route_reads_them():
    """Terms flipping the same qubits are read together: a MaxCut's ZZ terms are one product with
    the state, whatever their number (counted a pass per qubit each, 24 of them sent a 16-qubit
    QAOA gradient down the light cones at three times the time); each X_q of a TFIM adds a group
    of two passes (product, flip), and so does each bond's XX + YY (one flip of both qubits); past
    GROUPED_QUBITS terms are read one by one."""
    zz = ["".join("Z" if q in (a, (a + 1) % 16) else "I" for q in range(16)) for a in range(16)]
    assert readout_passes(16, zz, density=False) == 2 ** 16
    tfim = [string for _, string in tq.hamiltonians.tfim(16)]
    assert readout_passes(16, tfim, density=False) == 2 ** 16 * (1 + 2 * 16)
    heisenberg = [string for _, string in tq.hamiltonians.heisenberg(16)]  # XX and YY flip alike
    assert readout_passes(16, heisenberg, density=False) == 2 ** 16 * (1 + 2 * 15)
    wide = GROUPED_QUBITS + 1
    assert readout_passes(wide, ["X" + "I" * (wide - 1)] * 3, density=False) == 2 ** wide * 3 * 2
    assert readout_passes(wide, ["YZ" + "X" * (wide - 2)], density=False) == 2 ** wide * (2 + 1 + 1)
    assert readout_passes(4, ["ZZII"] * 5, density=True) == 2 ** 4 * 5


def test_a_density_matrix_is_costed_by_the_path_the_planner_starts_from():
    """The state route of a density matrix counts the cheaper of the doubled network's greedy path
    and its rank-simplified min-fill elimination, near what the planned path costs (the greedy
    path alone is an upper bound far above it: the 10-qubit noisy energy of benchmarks/ then tied
    with its light cones, which took 1.7x longer). The 8-qubit 4-layer ansatz of that row,
    depolarising after every gate: greedy 4.1e7 units, eliminated 2.8e7, planned 2.7e7."""
    from tyxonq.circuit.contraction.network import density_network
    from tyxonq.circuit.contraction.route_costs import network_cost

    n, layers = 8, 4
    angles = np.linspace(-1, 1, 2 * n * (layers + 1))
    circuit = tq.templates.hardware_efficient(n, angles, layers, ("ry", "rz"))
    c = tq.DMCircuit(n)
    for op in circuit.operations:
        getattr(c, op.gate)(*op.qubits, *op.params)
        for q in op.qubits:
            c.depolarizing(q, p=0.01)
    network = density_network(n, list(c.operations), False, tuple(range(n)))
    greedy = network_cost("state", [network]).units
    eliminated = network_cost("state", [network], eliminate=True).units
    with tq.use_backend("numpy"):
        planned = c.rehearse("state").cost
    assert eliminated < 0.8 * greedy
    assert eliminated <= 1.2 * planned
