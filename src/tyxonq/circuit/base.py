"""What every circuit simulator shares: the operation list, validation, plans and the results
that come from contracting a doubled (ket and bra) network.

:class:`CircuitBase` holds a circuit's operations (gates and channels, one
:class:`~tyxonq.circuit.operations.operation.Operation` type), validates them as they are added,
makes and caches the plan of each result, and computes expectation values, Pauli-string
expectations and samples through those plans. :class:`~tyxonq.Circuit` (pure states) and
:class:`~tyxonq.DMCircuit` (density matrices) are siblings built on it: they differ in what they
start from, and in the results that need the whole state.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..noise.readout import apply_readout_error, confusion_matrices
from ..numerics import get_backend
from ..operators.shots import shot_expectation, validated_shots
from .contraction.gradient import Request, evaluate_requests, evaluate_scalars
from .contraction.network import density_network, expectation_network
from .contraction.plan import NetworkPlan, get_plan, structure_token
from .contraction.rehearsal import ContractionReport, rehearse, rehearsing
from .differentiation.tracing import Dual, TracingError
from .memory import require_memory
from .operations.channel_methods import ChannelMethods
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

__all__ = ["CircuitBase", "format_index", "SAMPLE_FORMATS", "HERMITIAN_TOLERANCE", "LIGHT_CONE_HINT"]

SAMPLE_FORMATS = ("counts", "bitstrings", "indices")
HERMITIAN_TOLERANCE = 1e-8
REHEARSABLE = ("state", "amplitude", "expectation", "expectation_ps", "pauli_expectations",
               "probability", "marginal_probability", "sample", "matrix", "reduced_density_matrix")
LIGHT_CONE_HINT = ("Local results (expectation, expectation_ps, amplitude) contract only what they "
                   "need; use those, or fewer qubits")


class CircuitBase(GateMethods, ChannelMethods):
    """Operations on ``num_qubits`` qubits and the results shared by every simulator.

    Subclasses set :attr:`_inputs` (``None`` or their validated initial state) and say how the
    networks start (:meth:`_inputs_kind`) and whether a channel may be simulated exactly
    (:meth:`_check_exact`).
    """

    _inputs: Any = None
    #: per-qubit readout confusion matrices (``None`` entries: exact) applied to samples; set by
    #: a noise model (:meth:`with_noise`)
    _readout: list | None = None

    def __init__(self, num_qubits: int) -> None:
        if isinstance(num_qubits, bool) or not isinstance(num_qubits, numbers.Integral) \
                or num_qubits < 1:
            raise ValueError(f"num_qubits={num_qubits!r} must be a positive int")
        self._num_qubits = int(num_qubits)
        self._operations: list[Operation] = []
        self._channel_count = 0  # kept as operations are added: results check it on every call

    def _inputs_kind(self) -> bool | str:
        """How the networks start: ``False`` (``|0...0>``), ``True`` (an input state vector) or
        ``"density"`` (an input density matrix)."""
        return self._inputs is not None

    def _check_exact(self, what: str) -> None:
        """Raise when ``what`` cannot be computed exactly for this circuit (a hook)."""

    def _has_state_vector(self) -> bool:
        """Whether the state is a vector (gradients may sweep it) rather than a density matrix."""
        return True

    def _is_noisy(self) -> bool:
        return self._channel_count > 0

    # -- structure ---------------------------------------------------------------------------
    @property
    def num_qubits(self) -> int:
        return self._num_qubits

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The circuit's operations, in order."""
        return tuple(self._operations)

    def _add(self, gate: str, qubits: tuple, params: tuple = ()) -> CircuitBase:
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

    def _add_channel(self, channel: Any, qubits: tuple) -> CircuitBase:
        from ..noise.channels import Channel

        if not isinstance(channel, Channel):
            raise TypeError(f"channel={channel!r} must be a tq.channels.Channel (e.g. "
                            "tq.channels.depolarizing(0.01)); build any other with tq.channels.kraus")
        qubits = validate_qubits(qubits, self._num_qubits, channel.name)
        if len(qubits) != channel.num_qubits:
            raise ValueError(f"{channel.name} acts on {channel.num_qubits} qubit(s); got "
                             f"{len(qubits)}: {qubits}")
        self._operations.append(Operation("channel", qubits, channel=channel))
        self._channel_count += 1
        return self

    def _with_operations(self, operations: list[Operation]) -> CircuitBase:
        """A circuit with the same qubits and inputs and the given operations."""
        duplicate = object.__new__(type(self))
        duplicate.__dict__.update(self.__dict__)
        duplicate._operations = list(operations)
        duplicate._channel_count = sum(op.channel is not None for op in duplicate._operations)
        return duplicate

    def _is_traced(self) -> bool:
        return any(isinstance(p, Dual) for op in self._operations for p in op.params)

    def _structure(self) -> tuple:
        return (self._num_qubits, self._inputs_kind(),
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
        self._check_exact(what)
        K = get_backend()
        token = structure_token(self._structure()) if token is None else token
        # a backend that compiles whole functions reuses the plan inside compiled programs and
        # already spends seconds compiling: there a longer path search pays off
        plan = get_plan(request + (token,), make_network, K.capabilities.max_ndim,
                        output_shape, thorough=K.capabilities.compiles_whole_functions)
        if not rehearsing():  # a rehearsal reports what does not fit instead
            require_memory(K, plan.largest_tensor_size, f"{what} (its largest intermediate tensor)",
                           LIGHT_CONE_HINT)
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

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        """Probabilities of the ``2**k`` outcomes of measuring ``qubits`` (in the order given; the
        first is the most significant bit), the others ignored. Only their light cone is
        contracted, so this works on circuits far too wide for a state.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> K.to_numpy(tq.Circuit(40).h(0).cx(0, 39).marginal_probability([39, 0])).round(6).tolist()
        [0.5, 0.0, 0.0, 0.5]
        """
        qubits = validate_qubits(tuple(qubits), self._num_qubits, "marginal_probability")
        if not qubits:
            raise ValueError("marginal_probability needs at least one qubit")
        K = get_backend()
        what = f"the probabilities of {len(qubits)} qubit(s)"
        if not rehearsing():
            require_memory(K, 2 ** len(qubits), what, LIGHT_CONE_HINT)
        n, ops, kind = self._num_qubits, list(self._operations), self._inputs_kind()
        value = self._evaluate(("marginal", qubits),
                               lambda: density_network(n, ops, kind, qubits, diagonal=True),
                               (2 ** len(qubits),), what)
        return K.real(value)

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
        n, ops, given = self._num_qubits, self._operations, self._inputs_kind()
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

    def _traced(self, hermitian: bool, evaluate: Any, apply_observable: Any, requests: Any = None) -> Any:
        if not hermitian:
            raise TracingError("exact gradients need a real objective: use hermitian=True")
        from .differentiation.traced import traced_expectation

        return traced_expectation(self, evaluate, apply_observable, requests)

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

    def sample(self, shots: int, seed: int | None = None, format: str = "counts",
               readout_error: Any = None) -> Any:
        """Measure all qubits ``shots`` times.

        Parameters
        ----------
        shots : int
            Number of samples (> 0).
        seed : int, optional
            Seed: the same seed gives the same samples.
        format : {"counts", "bitstrings", "indices"}
            A dict bitstring -> count, a list of bitstrings, or a backend array of basis indices.
        readout_error : array or list of arrays, optional
            Confusion matrix ``confusion[read, true]`` (columns sum to 1) for every qubit, or one
            per qubit, applied to the sampled bits; by default the noise model's, if any.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).x(0).sample(5, seed=1)
        {'10': 5}
        >>> tq.Circuit(1).sample(1000, seed=1, readout_error=[[0.9, 0.2], [0.1, 0.8]])["1"] / 1000
        0.103
        """
        shots = validated_shots(shots)
        if format not in SAMPLE_FORMATS:
            raise ValueError(f"format={format!r} must be one of {SAMPLE_FORMATS}")
        n = self._num_qubits
        confusions = (confusion_matrices(readout_error, n) if readout_error is not None
                      else self._readout)
        K = get_backend()
        probabilities = K.cast(K.detach(self.probability()), "float64")
        if rehearsing():  # planned, not run: nothing to sample from
            return K.zeros((0,), "int64") if format == "indices" else ([] if format == "bitstrings" else {})
        probabilities = probabilities / K.sum(probabilities)
        indices = K.choice(2 ** n, size=shots, p=probabilities, rng=K.rng(seed))
        if confusions is not None:  # read through the confusion matrices (a separate stream)
            bits = (K.to_numpy(indices)[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
            bits = apply_readout_error(bits, confusions, np.random.default_rng(_readout_seed(seed)))
            indices = K.asarray(bits @ (1 << np.arange(n - 1, -1, -1)), "int64")
        if format == "indices":
            return indices
        host = K.to_numpy(indices)
        if format == "bitstrings":
            return [format_index(i, n) for i in host.tolist()]
        values, counts = np.unique(host, return_counts=True)
        return {format_index(v, n): int(c) for v, c in zip(values.tolist(), counts.tolist())}

    def sample_expectation_ps(self, x: Sequence[int] = (), y: Sequence[int] = (), z: Sequence[int] = (),
                              shots: int = 1024, seed: int | None = None, readout_error: Any = None,
                              return_std: bool = False) -> Any:
        """A Pauli string's expectation estimated from ``shots`` measurements in its basis.

        The measured qubits are rotated (X: H, Y: S^dagger H) and sampled from their marginal
        distribution (only their light cone is contracted); readout error, if given or set by a
        noise model, is applied to the sampled bits.

        Returns
        -------
        float, or (float, float) with ``return_std``
            The estimate (and its standard error).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> c.sample_expectation_ps(x=[0, 1], shots=100, seed=3)
        1.0
        """
        letters: dict[int, str] = {}
        for name, qubits in (("X", x), ("Y", y), ("Z", z)):
            qubits = [qubits] if isinstance(qubits, numbers.Integral) else list(qubits or ())
            for q in validate_qubits(tuple(qubits), self._num_qubits, "sample_expectation_ps"):
                if q in letters:
                    raise ValueError(f"qubit {q} appears in more than one of x, y, z")
                letters[q] = name
        if not letters:
            raise ValueError("sample_expectation_ps needs at least one qubit in x, y or z")
        string = "".join(letters.get(q, "I") for q in range(self._num_qubits))
        value, error = shot_expectation(self, [string], [1.0], validated_shots(shots),
                                        np.random.default_rng(seed), readout_error)
        return (value, error) if return_std else value

    def with_noise(self, model: Any) -> Any:
        """This circuit with a :class:`~tyxonq.NoiseModel` applied: a :class:`~tyxonq.DMCircuit`
        with the model's channels after every matching gate and its readout errors on samples.

        Examples
        --------
        >>> import tyxonq as tq
        >>> model = tq.NoiseModel().add(tq.channels.depolarizing(0.1), gates="1q")
        >>> noisy = tq.Circuit(1).h(0).with_noise(model)
        >>> type(noisy).__name__, len(noisy.operations)
        ('DMCircuit', 2)
        """
        return model.apply(self)

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
    def copy(self) -> CircuitBase:
        """An independent copy (operations are immutable; parameters are shared)."""
        return self._with_operations(self._operations)

    def draw(self) -> str:
        """A text diagram (qubit 0 on top)."""
        return draw_circuit(self._num_qubits, self._operations)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_qubits={self._num_qubits}, operations={len(self._operations)})"


def _readout_seed(seed: int | None) -> Any:
    """The readout stream's seed: derived from ``seed``, independent of the sampling stream."""
    return None if seed is None else np.random.SeedSequence([int(seed), 0x5EAD])


def format_index(index: int, width: int) -> str:
    """Basis index as a bitstring, qubit 0 leftmost."""
    return format(int(index), f"0{width}b")
