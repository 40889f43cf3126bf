"""The contraction core: tensor forms, the light cone, rank simplification, hyperindices, and
simplified networks against the dense reference on every backend."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from conftest import BACKEND_IDS, make_backend
from reference import (
    PARAMETRISED,
    random_hermitian,
    reference_expectation,
    reference_state,
    reference_unitary,
)
from test_circuit import build
from tyxonq.circuit.contraction.executor import compile_path
from tyxonq.circuit.contraction.lightcone import light_cone
from tyxonq.circuit.contraction.simplify import rank_simplify
from tyxonq.circuit.contraction.tensor_forms import tensor_form
from tyxonq.circuit.operations.gates import GATES, gate_matrix
from tyxonq.circuit.operations.operation import Operation

PAULIS = {"x": np.array([[0, 1], [1, 0]]), "y": np.array([[0, -1j], [1j, 0]]), "z": np.diag([1, -1])}


def rebuilt_matrix(gate: str, matrix: np.ndarray) -> np.ndarray:
    """The gate's matrix rebuilt entry by entry from its tensor form: wires that pass through
    (``outputs[p] == ("in", j)``) carry input bit ``j``; bonds are summed."""
    k = GATES[gate].num_qubits
    form = tensor_form(gate, k)
    values = [piece.constant if piece.constant is not None else
              matrix.reshape(-1) if piece.extraction is None else matrix.reshape(-1) @ piece.extraction
              for piece in form.pieces]
    bonds = {leg for piece in form.pieces for leg in piece.legs if leg[0] == "bond"}
    rebuilt = np.zeros((2 ** k, 2 ** k), dtype=complex)
    for rows in itertools.product((0, 1), repeat=k):
        for columns in itertools.product((0, 1), repeat=k):
            if any(kind == "in" and rows[p] != columns[j] for p, (kind, j) in enumerate(form.outputs)):
                continue
            for bond_values in itertools.product((0, 1), repeat=len(bonds)):
                bits = dict(zip(sorted(bonds), bond_values))
                bits.update({("in", p): columns[p] for p in range(k)})
                bits.update({("out", p): rows[p] for p in range(k)})
                entry = 1.0 + 0j
                for piece, piece_values in zip(form.pieces, values):
                    flat = int("".join(str(bits[leg]) for leg in piece.legs) or "0", 2)
                    entry *= piece_values[flat]
                rebuilt[int("".join(map(str, rows)), 2), int("".join(map(str, columns)), 2)] += entry
    return rebuilt


@settings(max_examples=60, deadline=None)
@given(gate=st.sampled_from(sorted(set(GATES) - {"unitary"})), dagger=st.booleans(),
       angles=st.lists(st.floats(-2 * np.pi, 2 * np.pi), min_size=3, max_size=3))
def test_tensor_forms_rebuild_every_gate(gate, dagger, angles):
    K = tq.get_backend("numpy")
    params = tuple(angles[: len(GATES[gate].param_names)])
    matrix = np.asarray(gate_matrix(K, gate, params, dagger))
    np.testing.assert_allclose(rebuilt_matrix(gate, matrix), matrix, atol=1e-13)


def test_tensor_forms_are_smaller_where_the_gate_allows():
    legs = {gate: [len(piece.legs) for piece in tensor_form(gate, GATES[gate].num_qubits).pieces]
            for gate in ("rz", "rzz", "cz", "cx", "crx", "ccx", "swap", "iswap", "rxx", "h", "i")}
    assert legs == {"rz": [1], "rzz": [2], "cz": [2], "cx": [3], "crx": [3], "ccx": [4],
                    "swap": [], "iswap": [2], "rxx": [3, 3], "h": [2], "i": []}


def test_light_cone_drops_diagonal_gates_that_commute_with_the_evolved_observable():
    # a QAOA-like layer where RZZ(2, 3) precedes RZZ(1, 2): the usual light cone of qubits 0, 1
    # would take it (and H on 3) in, but it commutes with everything after it that touches 2
    ops = [Operation("h", (q,)) for q in range(4)]
    ops += [Operation("rzz", pair, (0.3,)) for pair in ((0, 1), (2, 3), (1, 2))]
    ops += [Operation("rx", (q,), (0.2,)) for q in range(4)]
    for diagonal in ([0, 1], []):
        kept = light_cone(ops, [0, 1], diagonal=diagonal)
        assert [ops[i].qubits for i in kept] == [(0,), (1,), (2,), (0, 1), (1, 2), (0,), (1,)]
    # a diagonal observable also lets the last diagonal gates on its qubits go
    assert light_cone([Operation("rx", (0,), (0.1,)), Operation("rz", (0,), (0.2,))], [0], [0]) == [0]
    # controls pass the block-diagonal state on: CX(0 -> 2) commutes with Z_0 when 2 is outside
    assert light_cone([Operation("h", (0,)), Operation("cx", (0, 2))], [0], diagonal=[0]) == [0]


@st.composite
def random_networks(draw, max_tensors=8, max_legs=4):
    """Tensors on legs of size 2 where every leg is on two or more tensors or open."""
    count = draw(st.integers(1, max_tensors))
    legs = draw(st.lists(st.lists(st.integers(0, 7), min_size=0, max_size=max_legs, unique=True),
                         min_size=count, max_size=count))
    holders = {}
    for i, term in enumerate(legs):
        for leg in term:
            holders.setdefault(leg, []).append(i)
    output = sorted(leg for leg, where in holders.items() if len(where) == 1 or draw(st.booleans()))
    return [tuple(term) for term in legs], tuple(output)


def einsum_reference(tensors, legs, output):
    letters = {leg: chr(ord("a") + leg) for leg in range(8)}
    spec = ",".join("".join(letters[leg] for leg in term) for term in legs)
    return np.einsum(spec + "->" + "".join(letters[leg] for leg in output), *tensors)


@settings(max_examples=80, deadline=None)
@given(network=random_networks(), seed=st.integers(0, 2 ** 16))
def test_rank_simplification_and_hyperindices_contract_exactly(network, seed):
    legs, output = network
    rng = np.random.default_rng(seed)
    tensors = [rng.normal(size=(2,) * len(term)) + 1j * rng.normal(size=(2,) * len(term)) for term in legs]
    inputs = [set(term) for term in legs]
    sizes = {leg: 2 for leg in range(8)}
    before = [2 ** len(term) for term in inputs]
    path = rank_simplify(inputs, set(output), sizes)
    assert max((2 ** len(term) for term in inputs), default=1) <= max(before, default=1)
    import opt_einsum

    path += [tuple(step) for step in opt_einsum.paths.greedy(inputs, set(output), sizes)]
    contraction = compile_path(legs, path, sizes, max_ndim=6, output=output)
    result = contraction.run(tq.get_backend("numpy"), [t.reshape(-1) for t in tensors])
    expected = einsum_reference(tensors, legs, output)
    got = np.transpose(np.asarray(result).reshape((2,) * len(contraction.result_legs)),
                       [contraction.result_legs.index(leg) for leg in output])
    np.testing.assert_allclose(got, expected, atol=1e-10)


@settings(max_examples=120, deadline=None)
@given(network=random_networks(max_tensors=10, max_legs=6), max_ndim=st.sampled_from([3, 4, 6]),
       size=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_a_batched_contraction_is_the_one_compiled_with_a_leading_batch_leg(network, max_ndim, size, seed):
    """The batch of ``size`` networks is derived from the compiled plain contraction step by step;
    it must be exactly what compiling the path with one more leading leg makes (or refused, for
    compile_path to make it, where a move would pass ``max_ndim``), and contract every member."""
    legs, output = network
    inputs = [set(term) for term in legs]
    sizes = {leg: 2 for leg in range(8)}
    path = rank_simplify(inputs, set(output), sizes)
    import opt_einsum

    path += [tuple(step) for step in opt_einsum.paths.greedy(inputs, set(output), sizes)]
    plain = compile_path(legs, path, sizes, max_ndim=max_ndim, output=output)
    batched = compile_path([(8,) + term for term in legs], path, sizes | {8: size}, max_ndim=max_ndim,
                           output=(8,) + output)
    derived = plain.batched(8, size, max_ndim)
    if derived is None:  # a permutation of the batch needs one dimension more than allowed
        assert any(len(shape) >= max_ndim for step in plain.steps
                   for layout in (step.first_layout, step.second_layout) for shape, _ in layout.moves)
        return
    assert derived == batched
    rng = np.random.default_rng(seed)
    members = [[rng.normal(size=(2,) * len(term)) for term in legs] for _ in range(size)]
    stacked = [np.stack([member[i] for member in members]).reshape(size, -1) for i in range(len(legs))]
    result = np.asarray(derived.run(tq.get_backend("numpy"), stacked)).reshape(size, -1)
    for member, row in zip(members, result):
        expected = np.asarray(plain.run(tq.get_backend("numpy"), [t.reshape(-1) for t in member]))
        np.testing.assert_allclose(row, expected.reshape(-1), atol=1e-12)


# -- simplified networks against the dense reference --------------------------------------------
DIAGONAL_HEAVY = ("rz", "rzz", "cz", "cphase", "crz", "phase", "z", "s", "t", "cx", "ccx", "swap",
                  "iswap", "rxx", "ryy", "h", "rx", "ry", "cswap", "u")


@st.composite
def diagonal_heavy_circuits(draw, max_qubits=6, max_gates=24):
    """Random graphs' edges carry two-qubit diagonal gates; mixers and every other gate between."""
    n = draw(st.integers(2, max_qubits))
    pairs = list(itertools.combinations(range(n), 2))
    edges = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs), unique=True))
    operations = []
    for _ in range(draw(st.integers(1, max_gates))):
        gate = draw(st.sampled_from(DIAGONAL_HEAVY))
        k = GATES[gate].num_qubits
        if k > n:
            continue
        if k == 2 and draw(st.booleans()):
            qubits = draw(st.sampled_from(edges))
        else:
            qubits = tuple(draw(st.permutations(range(n)))[:k])
        count = PARAMETRISED[gate][1] if gate in PARAMETRISED else 0
        params = tuple(draw(st.floats(-2 * np.pi, 2 * np.pi)) for _ in range(count))
        operations.append((gate, qubits, params))
    return n, operations


@pytest.mark.parametrize("backend_name", BACKEND_IDS)
def test_simplified_networks_match_the_dense_reference(backend_name):
    K = make_backend(backend_name)

    @settings(max_examples=25, deadline=None)
    @given(circuit=diagonal_heavy_circuits(), seed=st.integers(0, 2 ** 16))
    def check_circuit(circuit, seed):
        n, operations = circuit
        c = build(n, operations)
        expected = reference_state(n, operations)
        with tq.use_backend(K):
            close(K, c.state(method="contraction"), expected)
            index = seed % 2 ** n
            close(K, c.amplitude(index), expected[index])
            rng = np.random.default_rng(seed)
            letters = {q: "xyz"[rng.integers(0, 3)] for q in rng.permutation(n)[: rng.integers(1, n + 1)]}
            pauli = {k: [q for q, letter in letters.items() if letter == k] for k in "xyz"}
            value = reference_expectation(expected, [(PAULIS[k], (q,)) for q, k in letters.items()], n)
            close(K, c.expectation_ps(**pauli), value.real)
            qubits = tuple(rng.permutation(n)[:2])
            observable = random_hermitian(rng, 2)
            if seed % 2:
                observable = np.diag(np.diag(observable))  # a diagonal observable: one shared leg
            value = reference_expectation(expected, [(observable, qubits)], n)
            close(K, c.expectation((observable, list(qubits))), value.real)

    check_circuit()


def close(K, got, expected):
    np.testing.assert_allclose(K.to_numpy(got), expected, atol=1e-12)


def test_matrix_of_relabelling_and_diagonal_circuits():
    """Wires that are only relabelled or pass through diagonal gates still get distinct row and
    column legs in ``matrix()``."""
    operations = [("swap", (0, 2), ()), ("rz", (1,), (0.3,)), ("cz", (0, 1), ()), ("swap", (1, 2), ())]
    K = tq.get_backend("numpy")
    np.testing.assert_allclose(K.to_numpy(build(3, operations).matrix()),
                               reference_unitary(3, operations), atol=1e-12)


# -- planned widths against quimb ----------------------------------------------------------------
# What quimb 1.15 + cotengra 0.8 plan for the same circuits (local_expectation_rehearse /
# amplitude_rehearse, ReusableHyperOptimizer with 16 repeats, kahypar installed; the smaller of two
# rehearsals): log2 of the largest intermediate. benchmarks/widths.py compares the suite's rows.
QUIMB_WIDTHS = {("qaoa30-p3", 5, (0, 2)): 11, ("qaoa30-p3", 7, (0, 20)): 8,
                ("brickwork50-d10", "amplitude"): 5, ("brickwork50-d10", "Z25"): 8,
                ("brickwork50-d4", "Z24Z25"): 4, ("brickwork50-d4", "X25"): 3}


def test_planned_widths_are_within_one_of_quimbs():
    nx = pytest.importorskip("networkx")
    ours = {}
    with tq.use_backend("numpy"):
        for seed, edge in ((5, (0, 2)), (7, (0, 20))):
            graph = nx.random_regular_graph(3, 30, seed=seed)
            circuit = tq.templates.qaoa(graph, [0.3, 0.4, 0.5], [0.4, 0.3, 0.2])
            ours[("qaoa30-p3", seed, edge)] = circuit.rehearse("expectation_ps", z=list(edge)).width
        deep = tq.templates.brickwork(50, np.random.default_rng(0).uniform(0, np.pi, 500), 10)
        ours[("brickwork50-d10", "amplitude")] = deep.rehearse("amplitude", "0" * 50).width
        ours[("brickwork50-d10", "Z25")] = deep.rehearse("expectation_ps", z=[25]).width
        shallow = tq.templates.brickwork(50, np.random.default_rng(1).uniform(0, np.pi, 200), 4)
        ours[("brickwork50-d4", "Z24Z25")] = shallow.rehearse("expectation_ps", z=[24, 25]).width
        ours[("brickwork50-d4", "X25")] = shallow.rehearse("expectation_ps", x=[25]).width
    above = {key: width - QUIMB_WIDTHS[key] for key, width in ours.items() if width > QUIMB_WIDTHS[key] + 1}
    assert above == {}


def test_every_term_of_a_hundred_node_p2_energy_plans_at_most_2_to_the_14():
    nx = pytest.importorskip("networkx")
    graph = nx.random_regular_graph(3, 100, seed=5)
    circuit = tq.templates.qaoa(graph, [0.3, 0.2], [0.5, 0.1])
    with tq.use_backend("numpy"):
        report = circuit.rehearse("expectation", tq.hamiltonians.maxcut(graph))
    assert report.contractions == 150 and report.width <= 14
    assert report.distinct_plans <= 20  # most edges' light cones have the same shape


DETERMINISM_SCRIPT = """
import hashlib, numpy as np, tyxonq as tq
from tyxonq.circuit.contraction.plan import plan_cache_paths
rng = np.random.default_rng(11)
c = tq.Circuit(18)
for _ in range(50):
    q = [int(x) for x in rng.choice(18, 3, replace=False)]
    c.ccx(q[0], q[1], q[2]).h(q[0]).cx(q[1], q[2])
report = c.rehearse("expectation_ps", z=[9])
print(report.width, report.flops, hashlib.sha256(repr(plan_cache_paths()).encode()).hexdigest())
"""


def test_plans_are_the_same_in_every_process():
    """A network large enough for the hyper-optimised search gets the same path in processes with
    different string hashing (set orders) and different timing: trials are counted, not timed,
    and every random choice is seeded."""
    pytest.importorskip("cotengra")
    outputs = []
    for hash_seed in ("1", "2", "3"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
        environment.pop("TYXONQ_PERSISTENT_CACHE", None)
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=environment, capture_output=True,
                             text=True, timeout=300, check=True)
        outputs.append(run.stdout.split())
    assert outputs[0] == outputs[1] == outputs[2]
    assert float(outputs[0][1]) > 2e7  # planned by the hyper search (estimated above 2 ms)
