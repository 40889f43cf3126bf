"""What results read on every call, kept as a circuit is built. ``holds_only_numbers()``: whether
every operation holds plain host numbers only, so that results need not look through hundreds of
operations for traced angles, lanes, recorded angles or arrays to move; however a circuit is built
(gate methods, layers, matrices, channels, dynamic operations, composition, new parameters,
copies), the kept answer is the one a look at every operation gives, and the results are the
same. An operation's structure, cached: the one it computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq
from tyxonq.numerics.dual import Dual
from tyxonq.numerics.lanes import Lanes

PLAIN_TYPES = (float, int, np.float64)


def looked_at(circuit) -> bool:
    """Whether every operation holds plain numbers only, by looking at each."""
    return all(op.channel is None and op.gate != "unitary" and all(type(v) in PLAIN_TYPES for v in op.params)
               for op in circuit.operations)


def angle(kind: str, value: float):
    if kind == "float":
        return float(value)
    if kind == "float64":
        return np.float64(value)
    if kind == "float32":
        return np.float32(value)
    if kind == "int":
        return int(round(value))
    if kind == "torch":
        import torch

        return torch.tensor(value, dtype=torch.float64, requires_grad=True)
    return Dual(float(value), np.ones(1))  # a traced angle


ANGLE_KINDS = ["float", "float64", "float32", "int", "torch", "dual"]


def step(circuit, action: str, kind: str, value: float):
    """One way of adding operations (or of making a circuit from another)."""
    n = circuit.num_qubits
    if action == "gate":
        return circuit.rx(0, theta=angle(kind, value)).cx(0, n - 1)
    if action == "layer":
        values = {"float": [value] * n, "float64": np.full(n, value),
                  "float32": np.full(n, value, np.float32), "int": [1] * n, "torch": None,
                  "dual": [angle("dual", value)] * n}[kind]
        if values is None:
            import torch

            values = torch.full((n,), value, dtype=torch.float64, requires_grad=True)
        return circuit.layer("ry", range(n), values)
    if action == "unitary":
        return circuit.unitary(1, matrix=np.array([[0.0, 1.0], [1.0, 0.0]]))
    if action == "channel":
        return circuit.depolarizing(1, p=0.1)
    if action == "measure":
        circuit.measure(0)
        return circuit.cond(circuit.num_clbits - 1).x(1)
    if action == "conditioned layer":
        circuit.measure(0, into=3)
        with circuit.cond(3):
            return circuit.layer("rx", [1, 2], [value, value])
    if action == "compose":
        other = step(tq.Circuit(n), "gate", kind, value)
        return circuit.append(other)
    if action == "prepend":
        return circuit.prepend(step(tq.Circuit(n), "gate", kind, value))
    if action == "parameters":
        count = len(circuit.parameters())
        if kind == "torch":
            import torch

            return circuit.with_parameters(torch.full((count,), value, dtype=torch.float64))
        return circuit.with_parameters(np.full(count, value))
    if action == "copy":
        return circuit.copy()
    if action == "first":
        return circuit.with_operations(circuit.operations[:1])
    raise AssertionError(action)


ACTIONS = ["gate", "layer", "unitary", "channel", "measure", "conditioned layer", "compose", "prepend",
           "parameters", "copy", "first"]


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])  # torch angles: refused on NumPy
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from(ANGLE_KINDS), st.floats(-3, 3)),
                min_size=1, max_size=6))
def test_the_kept_answer_is_what_looking_at_every_operation_gives(backend_name, steps):
    pytest.importorskip("torch")
    with tq.use_backend(backend_name):
        built(steps)


def built(steps):
    circuit = tq.Circuit(3)
    assert circuit.holds_only_numbers()
    for action, kind, value in steps:
        if action in ("channel", "measure") and kind in ("dual", "torch"):
            continue  # a noisy or dynamic circuit with such angles: not what this test builds
        try:
            circuit = step(circuit, action, kind, value)
        except (ValueError, TypeError):
            continue  # refused (a refusal adds nothing): the answer must still hold
        finally:
            assert circuit.holds_only_numbers() == looked_at(circuit), (action, kind)
            ops = circuit.operations  # the counts kept beside it
            assert circuit.is_noisy() == any(op.channel is not None for op in ops)
            assert circuit.is_dynamic() == any(op.is_dynamic for op in ops)
            bits = [b for op in ops for b in op.clbits + (op.condition.bits if op.condition else ())]
            assert circuit.num_clbits >= max(bits, default=-1) + 1


def test_traced_angles_and_lanes_are_found_only_where_they_are():
    plain = tq.Circuit(2).rx(0, 0.3).cx(0, 1)
    assert plain.holds_only_numbers() and not plain._is_traced() and plain._lanes() is None  # noqa: SLF001
    traced = plain.copy().ry(1, Dual(0.2, np.ones(1)))
    assert not traced.holds_only_numbers() and traced._is_traced()  # noqa: SLF001
    batched = plain.copy().ry(1, Lanes(np.array([0.1, 0.2, 0.3])))
    assert not batched.holds_only_numbers() and batched._lanes() == 3  # noqa: SLF001
    assert plain.with_parameters([0.5]).holds_only_numbers()
    assert traced.with_parameters([0.5, 0.25]).holds_only_numbers()  # new plain angles for all


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
def test_results_and_gradients_are_the_same_whichever_way_the_angles_are_held(backend_name):
    """One angle a tracked tensor among plain floats (not numbers only: looked through, its
    gradient recorded) against the same circuit of floats; the values agree, and the gradient
    matches the parameter-shift rule."""
    if backend_name == "pytorch":
        torch = pytest.importorskip("torch")
    n, theta = 6, 0.37
    angles = np.linspace(0.1, 1.1, n)

    def circuit(first):
        c = tq.Circuit(n).layer("ry", range(n), angles).layer("cz", [(q, q + 1) for q in range(n - 1)])
        return c.rx(2, theta=first)

    with tq.use_backend(backend_name):
        K = tq.get_backend()
        plain = circuit(theta)
        assert plain.holds_only_numbers()
        value = float(K.to_numpy(plain.expectation_ps(z=[2, 3])))
        if backend_name == "pytorch":
            tracked = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
            held = circuit(tracked)
            assert not held.holds_only_numbers()
            result = held.expectation_ps(z=[2, 3])
            result.backward()
            shift = [float(K.to_numpy(circuit(theta + s).expectation_ps(z=[2, 3])))
                     for s in (np.pi / 2, -np.pi / 2)]
            assert abs(float(result.detach()) - value) < 1e-12
            assert abs(float(tracked.grad) - (shift[0] - shift[1]) / 2) < 1e-10


def test_an_operations_cached_structure_is_the_one_it_computes():
    """Operations cache their structure (made at once for a layer's gates): however made or
    changed, it is what a fresh operation of the same fields computes; an outcome's new value
    is a new structure, a gate's new angle is not."""
    from tyxonq.circuit.operations.operation import Condition, Operation

    def fresh(op):
        return Operation(op.gate, op.qubits, op.params, op.dagger, op.channel, op.clbits,
                         op.condition).structure

    made = [Operation.gate_operation("ry", (1,), (0.3,)),
            Operation.gate_operation("rx", (0,), (0.2,), Condition((0,), 1)),
            Operation("post_select", (0,), (1,)), Operation("cz", (0, 1))]
    for op in made:
        assert op.structure == fresh(op)
        for params in ((0.7,), (0,)):
            moved = op.with_params(params)
            assert moved.structure == fresh(moved)
    assert Operation("post_select", (0,), (1,)).with_params((0,)).structure != made[2].structure
    assert made[0].with_params((0.9,)).structure == made[0].structure
    layered = tq.Circuit(3).layer("ry", range(3), [0.1, 0.2, 0.3])
    assert layered.structure() == tq.Circuit(3).ry(0, 0.1).ry(1, 0.2).ry(2, 0.3).structure()


@pytest.mark.parametrize("backend_name", ["numpy", "pytorch"])
def test_operator_facts_asked_again_give_the_same_answers(backend_name):
    """A small operator's facts (Hermitian, diagonal) are cached by value: asked twice, a
    non-Hermitian matrix is refused both times, a diagonal one routed as diagonal, and a matrix
    equal in value but not in dtype or shape is asked about afresh."""
    if backend_name == "pytorch":
        pytest.importorskip("torch")
    with tq.use_backend(backend_name):
        K = tq.get_backend()
        c = tq.Circuit(2).h(0).cx(0, 1).ry(1, 0.3)
        state = K.to_numpy(c.state())
        upper = np.array([[0.0, 1.0], [0.0, 0.0]])
        for _ in range(2):
            with pytest.raises(ValueError, match="not Hermitian"):
                c.expectation((upper, [0]))
            assert abs(complex(K.to_numpy(c.expectation((upper, [0]), hermitian=False)))
                       - complex(np.vdot(state, np.kron(upper, np.eye(2)) @ state))) < 1e-12
        for matrix in (np.diag([1.0, -1.0]), np.diag([1.0, -1.0]).astype(complex),
                       np.diag([1.0, 2.0, 3.0, 4.0]).astype(np.float32)):
            qubits = [0] if len(matrix) == 2 else [0, 1]
            for _ in range(2):
                _, _, diagonal = c.validated_operator((matrix, qubits), True, K)
                assert diagonal
        dense = np.array([[0.0, 1.0], [1.0, 0.0]])
        assert not c.validated_operator((dense, [1]), True, K)[2]
        wide = np.eye(16)
        wide[0, 15] = 1.0  # above the cached size: checked each time
        with pytest.raises(ValueError, match="not Hermitian"):
            tq.Circuit(4).expectation((wide, [0, 1, 2, 3]))
