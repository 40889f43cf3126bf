"""Fuzzing the public constructors and methods with arguments of every type and value: each call
succeeds or fails with one of the project's documented exception types (ValueError, TypeError,
MemoryError and their subclasses) whose message names the argument -- never an internal
AttributeError, IndexError, KeyError or a library's own error."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tyxonq as tq

DOCUMENTED = (ValueError, TypeError, MemoryError)

anything = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 5), st.integers(-2 ** 70, 2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True), st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.text(max_size=6), st.lists(st.integers(-2, 5), max_size=4), st.tuples(st.integers(-1, 4)),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2), st.just(object()),
    st.builds(lambda shape, kind: np.ones(shape, dtype=kind),
              st.lists(st.integers(0, 3), max_size=3).map(tuple),
              st.sampled_from(["float64", "complex128", "int64", "bool", "float32"])),
    st.just(np.float64("nan")), st.just(np.array(0.3)), st.just(slice(1)),
)


def small_circuit(kind):
    simulator = {"Circuit": tq.Circuit, "DMCircuit": tq.DMCircuit, "MPSCircuit": tq.MPSCircuit}[kind]
    return simulator(3).h(0).cx(0, 1)


# name -> (call(value), fragments one of which the message names)
CALLS = {
    "Circuit(n)": (lambda v: tq.Circuit(v), ("num_qubits",)),
    "Circuit(inputs)": (lambda v: tq.Circuit(2, inputs=v), ("inputs",)),
    "DMCircuit(inputs)": (lambda v: tq.DMCircuit(2, inputs=v), ("inputs",)),
    "MPSCircuit(inputs)": (lambda v: tq.MPSCircuit(2, inputs=v), ("inputs",)),
    "MPSCircuit(max_bond)": (lambda v: tq.MPSCircuit(2, max_bond=v), ("max_bond",)),
    "MPSCircuit(cutoff)": (lambda v: tq.MPSCircuit(2, cutoff=v), ("cutoff",)),
    "rx(qubit)": (lambda v: tq.Circuit(2).rx(v, theta=0.1), ("qubit",)),
    "rx(theta)": (lambda v: tq.Circuit(2).rx(0, theta=v), ("theta",)),
    "cx(qubits)": (lambda v: tq.Circuit(3).cx(0, v), ("qubit",)),
    "u(params)": (lambda v: tq.Circuit(1).u(0, 0.1, v, 0.2), ("phi",)),
    "unitary(matrix)": (lambda v: tq.Circuit(1).unitary(0, matrix=v), ("matrix", "unitary")),
    "depolarizing(p)": (lambda v: tq.DMCircuit(1).depolarizing(0, p=v), ("p=", "p ")),
    "expectation_ps(z)": (lambda v: small_circuit("Circuit").expectation_ps(z=v), ("qubit", "z")),
    "expectation(operator)": (lambda v: small_circuit("Circuit").expectation(v), ("operator", "qubit")),
    "pauli_expectations(strings)": (lambda v: small_circuit("Circuit").pauli_expectations(v),
                                    ("string", "strings")),
    "amplitude(bitstring)": (lambda v: small_circuit("Circuit").amplitude(v), ("bitstring",)),
    "marginal_probability(qubits)": (lambda v: small_circuit("Circuit").marginal_probability(v),
                                     ("qubit",)),
    "sample(shots)": (lambda v: small_circuit("Circuit").sample(v, seed=1), ("shots",)),
    "sample(seed)": (lambda v: small_circuit("Circuit").sample(4, seed=v), ("seed",)),
    "sample(format)": (lambda v: small_circuit("Circuit").sample(4, seed=1, format=v), ("format",)),
    "DM sample(shots)": (lambda v: small_circuit("DMCircuit").sample(v, seed=1), ("shots",)),
    "MPS sample(seed)": (lambda v: small_circuit("MPSCircuit").sample(4, seed=v), ("seed",)),
    "state(method)": (lambda v: small_circuit("Circuit").state(method=v), ("method",)),
    "PauliSum(terms)": (lambda v: tq.PauliSum(v), ("term", "PauliSum")),
    "set_backend(name)": (lambda v: tq.set_backend(v), ("backend",)),
    "from_openqasm(text)": (lambda v: tq.Circuit.from_openqasm(v), ("text", "OpenQASM")),
    "minimize(method)": (lambda v: tq.optimize.minimize(lambda p: small_circuit("Circuit").rx(2, p[0])
                                                        .expectation_ps(z=[2]), [0.1], method=v,
                                                        maxiter=2, progress=False), ("method",)),
    "minimize(maxiter)": (lambda v: tq.optimize.minimize(lambda p: p[0] ** 2, [0.1], maxiter=v,
                                                         progress=False), ("maxiter",)),
    "set_persistent_cache(directory)": (lambda v: tq.set_persistent_cache(sandboxed(v)), ("directory",)),
}
SANDBOX = Path(tempfile.mkdtemp(prefix="tyxonq-fuzz-"))


def sandboxed(value):
    """A fuzzed directory kept inside a temporary directory (text only: other types go as they
    are), and True (the user's default cache directory) as None."""
    if value is True:
        return None
    if isinstance(value, str):
        return SANDBOX / value.replace("/", "_").replace(".", "_")
    return value


@pytest.fixture(autouse=True)
def _no_persistent_cache():
    yield
    tq.set_persistent_cache(None)


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=anything)
def test_every_failure_is_documented_and_names_its_argument(name, value):
    call, fragments = CALLS[name]
    with tq.use_backend("numpy"):
        try:
            call(value)
        except DOCUMENTED as error:
            message = str(error)
            assert any(fragment in message for fragment in fragments), \
                f"{name}({value!r}) raised {type(error).__name__}: {message!r}, naming none of {fragments}"
