"""The :class:`Circuit`: a list of operations whose results come from contracting its network.

Qubit 0 is the most significant bit of a basis-state index and the leftmost character of a
bitstring: in ``c.amplitude("01")`` qubit 0 is ``0`` and qubit 1 is ``1``, the state's index 1.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from .contraction.gradient import Request, evaluate_requests, evaluate_scalars
from .contraction.network import amplitude_network, expectation_network, matrix_network, state_network
from .contraction.plan import NetworkPlan, get_plan, structure_token
from .contraction.rehearsal import ContractionReport, placeholder, record, rehearse, rehearsing
from .differentiation.tracing import Dual, TracingError
from .memory import require_memory
from .operations.drawing import draw as draw_circuit
from .operations.gate_methods import GateMethods
from .operations.gates import GATES, constant
from .operations.operation import (
    Operation,
    matrix_values,
    validate_angle,
    validate_qubits,
    validate_unitary_matrix,
)
from .statevector.placement import apply_matrix
from .statevector.sweep import sweep_state

__all__ = ["Circuit"]

SAMPLE_FORMATS = ("counts", "bitstrings", "indices")
HERMITIAN_TOLERANCE = 1e-8
#: ``state()`` of at most this many qubits is computed by a block state-vector sweep
#: (:mod:`tyxonq.circuit.statevector.sweep`: a few matmuls over the state, nothing to plan); larger states by
#: contracting the tensor network, whose path needs fewer passes over the large arrays. On a
#: backend that compiles whole functions (JAX) every size is contracted: compiled, the per-call
#: overhead the sweep saves is gone, and XLA runs the contraction faster (a 12-qubit energy and
#: gradient under ``jax.jit``: 2.1 ms contracted, 5.4 ms swept).
SWEEP_MAX_QUBITS = 14
STATE_METHODS = ("auto", "sweep", "contraction")
REHEARSABLE = ("state", "amplitude", "expectation", "expectation_ps", "pauli_expectations",
               "probability", "sample", "matrix")
_LIGHT_CONE_HINT = ("Local results (expectation, expectation_ps, amplitude) contract only what they "
                    "need; use those, or fewer qubits")


class Circuit(GateMethods):
    """A quantum circuit on ``num_qubits`` qubits.

    Parameters
    ----------
    num_qubits : int
        Number of qubits; they start in ``|0...0>``.
    inputs : array, optional
        Initial state vector of length ``2**num_qubits`` instead (qubit 0 most significant).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0).cx(0, 1)
    >>> K = tq.get_backend()
    >>> K.to_numpy(c.probability()).round(3).tolist()
    [0.5, 0.0, 0.0, 0.5]
    >>> round(float(c.expectation_ps(z=[0, 1])), 12)
    1.0
    """

    def __init__(self, num_qubits: int, inputs: Any = None) -> None:
        if isinstance(num_qubits, bool) or not isinstance(num_qubits, numbers.Integral) \
                or num_qubits < 1:
            raise ValueError(f"num_qubits={num_qubits!r} must be a positive int")
        self._num_qubits = int(num_qubits)
        self._operations: list[Operation] = []
        self._inputs = None if inputs is None else self._validated_inputs(inputs)

    def _validated_inputs(self, inputs: Any) -> Any:
        K = get_backend()
        shape = K.shape(inputs) if K.is_array(inputs) else np.shape(inputs)
        expected = (2 ** self._num_qubits,)
        if tuple(shape) != expected:
            raise ValueError(f"inputs has shape {tuple(shape)}; {self._num_qubits} qubits need {expected}")
        if not K.is_array(inputs):
            host = np.asarray(inputs)
            if host.dtype.kind not in "fc":
                raise TypeError(f"inputs dtype {host.dtype} is not float or complex")
            norm = float(np.linalg.norm(host))
            if not math.isclose(norm, 1.0, abs_tol=1e-6):
                raise ValueError(f"inputs must be a normalised state; its norm is {norm:.6g}")
        return inputs

    # -- structure ---------------------------------------------------------------------------
    @property
    def num_qubits(self) -> int:
        return self._num_qubits

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The circuit's operations, in order."""
        return tuple(self._operations)

    def _add(self, gate: str, qubits: tuple, params: tuple = ()) -> Circuit:
        spec = GATES[gate]
        qubits = validate_qubits(qubits, self._num_qubits, gate)
        if spec.num_qubits and len(qubits) != spec.num_qubits:
            raise ValueError(f"{gate} acts on {spec.num_qubits} qubit(s); got {len(qubits)}: {qubits}")
        if not qubits:
            raise ValueError(f"{gate} needs at least one qubit")
        K = get_backend()
        if gate == "unitary":
            params = (validate_unitary_matrix(params[0], len(qubits), K),)
        else:
            params = tuple(validate_angle(value, gate, name, K)
                           for value, name in zip(params, spec.param_names))
        self._operations.append(Operation(gate, qubits, params))
        return self

    def _with_operations(self, operations: list[Operation]) -> Circuit:
        """A circuit with the same qubits and inputs and the given operations."""
        duplicate = Circuit(self._num_qubits)
        duplicate._inputs = self._inputs
        duplicate._operations = list(operations)
        return duplicate

    def _is_traced(self) -> bool:
        return any(isinstance(p, Dual) for op in self._operations for p in op.params)

    def _structure(self) -> tuple:
        return (self._num_qubits, self._inputs is not None,
                tuple(op.structure for op in self._operations))

    # -- evaluation --------------------------------------------------------------------------
    def _input_array(self, K: Any) -> Any:
        if self._inputs is None:
            return None
        inputs = K.asarray(self._inputs)
        return inputs if K.is_complex(inputs) else K.cast(inputs, K.dtype)

    def _plan(self, request: tuple, make_network: Any, output_shape: tuple[int, ...],
              what: str, token: int | None = None) -> NetworkPlan:
        """The cached plan of one result of this circuit's structure, memory checked (``token``:
        this structure's :func:`~tyxonq.circuit.contraction.plan.structure_token`, if known)."""
        K = get_backend()
        token = structure_token(self._structure()) if token is None else token
        # a backend that compiles whole functions reuses the plan inside compiled programs and
        # already spends seconds compiling: there a longer path search pays off
        plan = get_plan(request + (token,), make_network, K.capabilities.max_ndim,
                        output_shape, thorough=K.capabilities.compiles_whole_functions)
        if not rehearsing():  # a rehearsal reports what does not fit instead
            require_memory(K, plan.largest_tensor_size, f"{what} (its largest intermediate tensor)",
                           _LIGHT_CONE_HINT)
        return plan

    def _evaluate(self, request: tuple, make_network: Any, output_shape: tuple[int, ...],
                  what: str, **binding: Any) -> Any:
        if self._is_traced():
            raise TracingError(
                f"{what} of a circuit with traced angles: exact gradients without autograd "
                "(method='adjoint' or 'parameter-shift') differentiate expectation values only; "
                "use the pytorch backend (autograd) or method='finite-difference'"
            )
        K = get_backend()
        plan = self._plan(request, make_network, output_shape, what)
        return evaluate_requests(K, self._operations, self._input_array(K), [Request(plan, **binding)])[0]

    def state(self, method: str = "auto") -> Any:
        """The output state vector, of length ``2**num_qubits`` (qubit 0 most significant).

        ``method``: ``"sweep"`` applies fused blocks of gates to a state vector
        (:mod:`tyxonq.circuit.statevector.sweep`), ``"contraction"`` contracts the circuit's tensor network
        along its cached path; ``"auto"`` sweeps up to :data:`SWEEP_MAX_QUBITS` qubits (none on
        a compiling backend, JAX). Both are exact; they differ only in speed.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> bool(np.allclose(c.state(method="sweep"), c.state(method="contraction")))
        True
        """
        if method not in STATE_METHODS:
            raise ValueError(f"method={method!r} must be one of {STATE_METHODS}")
        K = get_backend()
        n, ops, given = self._num_qubits, list(self._operations), self._inputs is not None
        if not rehearsing():
            require_memory(K, 2 ** n, f"state() of {n} qubits", _LIGHT_CONE_HINT)
        if method == "auto":
            swept = n <= SWEEP_MAX_QUBITS and ops and not K.capabilities.compiles_whole_functions
            method = "sweep" if swept else "contraction"
        if method == "sweep" and not self._is_traced():
            if rehearsing():
                record("sweep", qubits=n)
                return placeholder(K, (2 ** n,))
            return sweep_state(K, n, ops, self._input_array(K))
        return self._evaluate(("state",), lambda: state_network(n, ops, given), (2 ** n,),
                              "state()")

    wavefunction = state

    def amplitude(self, bitstring: str | int) -> Any:
        """``<bitstring|psi>``, without building the state (qubit 0 is the leftmost character).

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(abs(complex(tq.Circuit(2).h(0).cx(0, 1).amplitude("11"))) ** 2, 6)
        0.5
        """
        bits = self._parse_bitstring(bitstring)
        n, ops, given = self._num_qubits, list(self._operations), self._inputs is not None
        return self._evaluate(("amplitude",), lambda: amplitude_network(n, ops, given), (),
                              "amplitude()", bits=bits)

    def _parse_bitstring(self, bitstring: str | int) -> tuple[int, ...]:
        n = self._num_qubits
        if isinstance(bitstring, (bool, np.bool_)):
            raise TypeError(f"bitstring={bitstring!r} must be a str of 0/1 or an int")
        if isinstance(bitstring, numbers.Integral):
            if not 0 <= int(bitstring) < 2 ** n:
                raise ValueError(f"bitstring index {bitstring} is out of range [0, 2**{n})")
            return tuple(int(b) for b in format(int(bitstring), f"0{n}b"))
        if not isinstance(bitstring, str):
            raise TypeError(f"bitstring={bitstring!r} must be a str of 0/1 or an int")
        if len(bitstring) != n or set(bitstring) - {"0", "1"}:
            raise ValueError(
                f"bitstring={bitstring!r} must have exactly {n} characters, each 0 or 1"
            )
        return tuple(int(b) for b in bitstring)

    def probability(self) -> Any:
        """Probabilities of all ``2**num_qubits`` basis states (a real array)."""
        state = self.state()
        K = get_backend()
        return K.real(K.conj(state) * state)

    def expectation(self, *operators: Any, hermitian: bool = True, **options: Any) -> Any:
        """``<psi| O_1 ⊗ ... ⊗ O_m |psi>`` for local operators given as ``(matrix, qubits)``.

        A single operator object with an ``expectation(circuit, ...)`` method, such as a
        :class:`~tyxonq.PauliSum`, is evaluated by it (``options`` such as ``method=`` go to it).

        Only gates in the backward light cone of the measured qubits are contracted. The result is
        real; a non-Hermitian matrix raises unless ``hermitian=False``, which returns the complex
        value.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> z = np.diag([1.0, -1.0])
        >>> float(tq.Circuit(2).x(1).expectation((z, [0]), (z, [1])))
        -1.0
        """
        if not operators:
            raise ValueError("expectation needs at least one (matrix, qubits) operator")
        if len(operators) == 1 and callable(getattr(operators[0], "expectation", None)):
            # an operator object (e.g. a PauliSum) knows how to evaluate itself on a circuit
            return operators[0].expectation(self, hermitian=hermitian, **options)
        if options:
            raise TypeError(f"unexpected options {sorted(options)} for (matrix, qubits) operators")
        K = get_backend()
        matrices, groups, diagonal = [], [], []
        used: set[int] = set()
        for operator in operators:
            matrix, qubits, is_diagonal = self._validated_operator(operator, hermitian, K)
            overlap = used.intersection(qubits)
            if overlap:
                raise ValueError(
                    f"operators overlap on qubit(s) {sorted(overlap)}; multiply them into one matrix"
                )
            used.update(qubits)
            matrices.append(matrix)
            groups.append(qubits)
            diagonal.append(is_diagonal)
        if self._is_traced():
            return self._traced(hermitian, lambda c: c.expectation(*operators, hermitian=True),
                                lambda K, state: self._apply_local(K, state, matrices, groups),
                                lambda c: [c._expectation_request(matrices, groups, diagonal)])
        value = evaluate_requests(K, self._operations, self._input_array(K),
                                  [self._expectation_request(matrices, groups, diagonal)])[0]
        return K.real(value) if hermitian else value

    def _expectation_request(self, matrices: list, groups: list, diagonal: list,
                             token: int | None = None) -> Request:
        """The contraction of ``<psi| O_1 ... O_m |psi>`` (observables already validated)."""
        n, ops, given = self._num_qubits, self._operations, self._inputs is not None
        groups_key, diagonal_key = tuple(groups), tuple(diagonal)
        plan = self._plan(("expectation", groups_key, diagonal_key),
                          lambda: expectation_network(n, list(ops), given, groups_key, diagonal_key), (),
                          "expectation()", token)
        return Request(plan, matrices, [len(qubits) for qubits in groups])

    def _pauli_requests(self, strings: Sequence[str]) -> list[Request]:
        """One contraction per Pauli string (none for an identity string)."""
        K = get_backend()
        token = structure_token(self._structure())
        requests = []
        for string in strings:
            factors = [(q, letter.lower()) for q, letter in enumerate(string) if letter != "I"]
            if factors:
                requests.append(self._expectation_request(
                    [constant(K, letter) for _, letter in factors], [(q,) for q, _ in factors],
                    [letter == "z" for _, letter in factors], token))
        return requests

    def pauli_expectations(self, strings: Sequence[str], coefficients: Sequence[Any] | None = None) -> Any:
        """``<psi|P|psi>`` for many Pauli strings at once, or ``sum_i c_i <psi|P_i|psi>``.

        Each string has one character per qubit (``I``, ``X``, ``Y``, ``Z``; character ``q`` on
        qubit ``q``). Every term contracts only its light cone; terms whose light-cone networks are
        equal up to relabelling share one plan and are contracted together, as one batched
        contraction. Gradients: autograd where the backend has it, else exact reverse mode through
        the contractions (``tq.value_and_grad``, any width).

        Parameters
        ----------
        strings : sequence of str
            The Pauli strings.
        coefficients : sequence of numbers, optional
            Return the weighted sum instead of the values (what a Hamiltonian needs; its gradient
            costs one reverse pass for all terms).

        Returns
        -------
        array
            The real values, shape ``(len(strings),)``; or the weighted sum (complex when a
            coefficient is).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(3).h(0).cx(0, 1)
        >>> K = tq.get_backend()
        >>> K.to_numpy(c.pauli_expectations(["ZZI", "XXI", "IIZ", "III"])).round(12).tolist()
        [1.0, 1.0, 1.0, 1.0]
        >>> round(float(c.pauli_expectations(["ZZI", "XIZ"], [0.5, 2.0])), 12)
        0.5
        """
        strings = self._validated_strings(strings)
        if coefficients is not None and len(coefficients) != len(strings):
            raise ValueError(f"{len(coefficients)} coefficients for {len(strings)} strings")
        active = [i for i, string in enumerate(strings) if set(string) != {"I"}]
        if self._is_traced():
            return self._traced_pauli(strings, active, coefficients)
        K = get_backend()
        values = K.ones((len(strings),), K.real_dtype)
        if active:
            found = K.real(evaluate_scalars(K, self._operations, self._input_array(K),
                                            self._pauli_requests([strings[i] for i in active])))
            # identity strings take the value 1: the appended one, gathered into place
            position = {i: p for p, i in enumerate(active)}
            values = found if len(active) == len(strings) else K.take(
                K.concatenate([found, K.ones((1,), K.dtype_of(found))]),
                [position.get(i, len(active)) for i in range(len(strings))])
        if coefficients is None:
            return values
        if all(isinstance(c, numbers.Number) for c in coefficients):
            return K.sum(values * K.asarray(np.asarray(coefficients)))
        return K.sum(values * K.stack([K.asarray(c) for c in coefficients]))  # backend arrays: differentiable

    def _traced_pauli(self, strings: list[str], active: list[int], coefficients: Any) -> Any:
        """:meth:`pauli_expectations` of a circuit with traced angles: Duals."""
        from .differentiation.traced import traced_terms

        weights = None if coefficients is None else np.asarray(coefficients)
        if weights is not None and np.iscomplexobj(weights):
            raise TracingError("exact gradients need a real objective: real coefficients")
        if not active:
            return np.ones(len(strings)) if weights is None else float(weights.sum())
        identity = 0.0 if weights is None else float(np.delete(weights, active).sum())
        result = traced_terms(self, lambda c: c._pauli_requests([strings[i] for i in active]),
                              lambda c: c.pauli_expectations(strings, coefficients),
                              None if weights is None else weights[active])
        if weights is not None:
            return result + identity
        values: list[Any] = [1.0] * len(strings)
        for i, value in zip(active, result):
            values[i] = value
        return np.asarray(values, dtype=object)

    def _validated_strings(self, strings: Sequence[str]) -> list[str]:
        if isinstance(strings, str):
            raise TypeError("strings must be a sequence of Pauli strings, e.g. ['ZZI', 'IXX']")
        checked = []
        for string in strings:
            if not isinstance(string, str) or len(string) != self._num_qubits \
                    or set(string.upper()) - set("IXYZ"):
                raise ValueError(f"Pauli string {string!r} must have {self._num_qubits} characters, "
                                 "each I, X, Y or Z")
            checked.append(string.upper())
        return checked

    def _apply_local(self, K: Any, state: Any, matrices: list, groups: list) -> Any:
        for matrix, qubits in zip(matrices, groups):
            state = apply_matrix(K, state, matrix, qubits, self._num_qubits)
        return state

    def _traced(self, hermitian: bool, evaluate: Any, apply_observable: Any, requests: Any = None) -> Any:
        if not hermitian:
            raise TracingError("exact gradients need a real objective: use hermitian=True")
        from .differentiation.traced import traced_expectation

        return traced_expectation(self, evaluate, apply_observable, requests)

    def dense_expectation(self, apply_observable: Any, hermitian: bool = True) -> Any:
        """``<psi|O|psi>`` from the state vector, for ``O`` given by its action on a state.

        ``apply_observable(K, state)`` returns ``O|state>`` through backend operations; this is
        how a :class:`~tyxonq.PauliSum` applies all its terms to one computed state.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(1).x(0)
        >>> round(float(c.dense_expectation(lambda K, s: -s)), 12)
        -1.0
        """
        if self._is_traced():
            return self._traced(hermitian, lambda c: c.dense_expectation(apply_observable),
                                apply_observable)
        K = get_backend()
        state = self.state()
        value = K.sum(K.conj(state) * apply_observable(K, state))
        return K.real(value) if hermitian else value

    def _validated_operator(self, operator: Any, hermitian: bool,
                            K: Any) -> tuple[Any, tuple[int, ...], bool]:
        """The operator's matrix on the backend, its qubits, and whether it is diagonal (known
        only from values that can be read here: a traced matrix counts as dense)."""
        if not (isinstance(operator, (tuple, list)) and len(operator) == 2):
            raise TypeError(f"each operator must be a (matrix, qubits) pair; got {operator!r}")
        matrix, qubits = operator
        qubits = (qubits,) if isinstance(qubits, numbers.Integral) else tuple(qubits)
        qubits = validate_qubits(qubits, self._num_qubits, "expectation")
        dimension = 2 ** len(qubits)
        host = matrix_values(K, matrix, len(qubits), f"operator on qubits {qubits}")
        if hermitian and host is not None and not np.allclose(host, host.conj().T,
                                                              atol=HERMITIAN_TOLERANCE):
            raise ValueError(
                f"operator on qubits {qubits} is not Hermitian; pass hermitian=False for the "
                "complex value <psi|O|psi>"
            )
        array = K.asarray(matrix)
        if not K.is_complex(array):
            array = K.cast(array, K.dtype)
        diagonal = host is not None and not np.any(host - np.diag(np.diag(host)))
        return K.reshape(array, (dimension, dimension)), qubits, bool(diagonal)

    def expectation_ps(self, x: Sequence[int] = (), y: Sequence[int] = (),
                       z: Sequence[int] = ()) -> Any:
        """Expectation of a Pauli string, e.g. ``expectation_ps(x=[0], z=[1, 2])`` for X0 Z1 Z2.

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.Circuit(1).h(0).expectation_ps(x=[0])), 12)
        1.0
        """
        K = get_backend()
        operators = []
        for name, qubits in (("x", x), ("y", y), ("z", z)):
            qubits = [qubits] if isinstance(qubits, numbers.Integral) else list(qubits or ())
            operators.extend((constant(K, name), [q]) for q in qubits)
        if not operators:
            raise ValueError("expectation_ps needs at least one qubit in x, y or z")
        return self.expectation(*operators)

    def sample(self, shots: int, seed: int | None = None, format: str = "counts") -> Any:
        """Measure all qubits ``shots`` times.

        Parameters
        ----------
        shots : int
            Number of samples (> 0).
        seed : int, optional
            Seed: the same seed gives the same samples.
        format : {"counts", "bitstrings", "indices"}
            A dict bitstring -> count, a list of bitstrings, or a backend array of basis indices.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).x(0).sample(5, seed=1)
        {'10': 5}
        """
        if isinstance(shots, bool) or not isinstance(shots, numbers.Integral) or shots <= 0:
            raise ValueError(f"shots={shots!r} must be a positive int")
        if format not in SAMPLE_FORMATS:
            raise ValueError(f"format={format!r} must be one of {SAMPLE_FORMATS}")
        K = get_backend()
        probabilities = K.cast(K.detach(self.probability()), "float64")
        if rehearsing():  # planned, not run: nothing to sample from
            return K.zeros((0,), "int64") if format == "indices" else ([] if format == "bitstrings" else {})
        probabilities = probabilities / K.sum(probabilities)
        indices = K.choice(2 ** self._num_qubits, size=int(shots), p=probabilities, rng=K.rng(seed))
        if format == "indices":
            return indices
        width = self._num_qubits
        host = K.to_numpy(indices)
        if format == "bitstrings":
            return [format_index(i, width) for i in host.tolist()]
        values, counts = np.unique(host, return_counts=True)
        return {format_index(v, width): int(c) for v, c in zip(values.tolist(), counts.tolist())}

    def matrix(self) -> Any:
        """The circuit's unitary, ``2**n x 2**n`` (row = output basis index)."""
        K = get_backend()
        n, ops = self._num_qubits, list(self._operations)
        if not rehearsing():
            require_memory(K, 4 ** n, f"matrix() of {n} qubits", "Use fewer qubits")
        return self._evaluate(("matrix",), lambda: matrix_network(n, ops), (2 ** n, 2 ** n),
                              "matrix()")

    def rehearse(self, result: str, *args: Any, **kwargs: Any) -> ContractionReport:
        """Plan a result without computing it: its width, flops, memory and planning time.

        ``result`` names a result method (``"state"``, ``"amplitude"``, ``"expectation"``,
        ``"expectation_ps"``, ``"pauli_expectations"``, ``"probability"``, ``"sample"``,
        ``"matrix"``); the other arguments are that method's. Plans are made (and cached, so the
        real call reuses them) but nothing is bound or contracted, and what would not fit in
        memory is reported (``fits``) instead of refused.

        Examples
        --------
        >>> import networkx as nx, tyxonq as tq
        >>> graph = nx.random_regular_graph(3, 100, seed=5)
        >>> c = tq.templates.qaoa(graph, [0.3, 0.2], [0.5, 0.1])
        >>> report = c.rehearse("expectation", tq.hamiltonians.maxcut(graph))
        >>> report.contractions, report.width <= 10, report.distinct_plans < report.contractions
        (150, True, True)
        """
        if result not in REHEARSABLE:
            raise ValueError(f"result={result!r} must be one of {REHEARSABLE}")
        return rehearse(getattr(self, result), *args, **kwargs)

    # -- transformations -----------------------------------------------------------------------
    def inverse(self) -> Circuit:
        """The adjoint circuit (gates reversed and inverted), starting from ``|0...0>``."""
        inverted = Circuit(self._num_qubits)
        inverted._operations = [op.adjoint() for op in reversed(self._operations)]
        return inverted

    def copy(self) -> Circuit:
        """An independent copy (operations are immutable; parameters are shared)."""
        duplicate = Circuit(self._num_qubits)
        duplicate._inputs = self._inputs
        duplicate._operations = list(self._operations)
        return duplicate

    def draw(self) -> str:
        """A text diagram (qubit 0 on top)."""
        return draw_circuit(self._num_qubits, self._operations)

    def __repr__(self) -> str:
        return f"Circuit(num_qubits={self._num_qubits}, operations={len(self._operations)})"


def format_index(index: int, width: int) -> str:
    """Basis index as a bitstring, qubit 0 leftmost."""
    return format(int(index), f"0{width}b")
