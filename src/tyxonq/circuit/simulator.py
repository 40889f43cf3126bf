"""The base of every simulator: qubits, a checked list of operations, and the result contract.

:class:`SimulatorBase` holds a circuit's gates and channels (one
:class:`~tyxonq.circuit.operations.operation.Operation` type), added through one method that
checks before it changes anything (:meth:`SimulatorBase._append`), and declares the results every
simulator answers (:data:`RESULTS`): it validates what is asked (observables, Pauli strings,
bitstrings, qubits, sample formats) once for all of them, and each simulator computes the answer
its own way or refuses it with :class:`~tyxonq.circuit.refusals.UnsupportedResult` naming what
gives it (what a simulator refuses for every circuit is data: ``unsupported_results``). A dynamic
circuit's results come from one interface, :class:`~tyxonq.circuit.dynamic.DynamicResults`,
chosen by the :meth:`SimulatorBase._dynamic_results` hook (:func:`dynamic_route`). It mixes in
the gate and channel methods, composition, interchange and shot-based estimates. The simulators
are its subclasses (:class:`~tyxonq.circuit.base.CircuitBase` for ``Circuit`` and ``DMCircuit``,
``MPSCircuit`` and ``StabilizerCircuit``): they differ only in how they compute results.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import (
    checked_choice,
    checked_count,
    checked_flag,
    checked_seed,
    checked_sequence,
    random_generator,
)
from ..numerics.cache_registry import register_function_cache
from ..numerics.dual import Dual
from ..numerics.memory import require_memory
from ..numerics.progress import takes_progress
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.readout import confusion_matrices
from .compiled import CompiledResult
from .contraction.rehearsal import ContractionReport, rehearse, rehearsing
from .interchange.methods import InterchangeMethods
from .operations.channel_methods import ChannelMethods
from .operations.clifford import clifford_reason
from .operations.composition import CompositionMethods
from .operations.drawing import draw as draw_circuit
from .operations.dynamic_methods import DynamicMethods
from .operations.figure import circuit_figure
from .operations.gate_methods import GateMethods
from .operations.gates import GATES, constant
from .operations.latex import circuit_latex
from .operations.layer_methods import LayerMethods, checked_angle_rows
from .operations.operation import (
    DYNAMIC_KINDS,
    Operation,
    clbits_used,
    matrix_values,
    validate_angle,
    validate_qubits,
    validate_unitary_matrix,
)
from .refusals import NoisyCircuitError, UnsupportedResult
from .result_forms import format_index, format_samples, readout_seed, weighted_sum
from .shots import shot_expectation
from .statevector.lanes import operation_lanes

__all__ = ["SimulatorBase", "simulator_class", "simulator_classes", "dynamic_route", "RESULTS",
           "format_index", "format_samples", "pauli_factors", "readout_seed", "weighted_sum",
           "SAMPLE_FORMATS", "HERMITIAN_TOLERANCE"]

#: what :meth:`SimulatorBase.draw` draws: a text diagram, a matplotlib figure, quantikz source
DRAW_OUTPUTS = ("text", "mpl", "latex")

#: the results every simulator answers (or refuses with :class:`UnsupportedResult`)
RESULTS = ("state", "probability", "amplitude", "marginal_probability", "reduced_density_matrix",
           "expectation", "expectation_ps", "pauli_expectations", "sample", "matrix", "rehearse")
SAMPLE_FORMATS = ("counts", "bitstrings", "indices", "bits")
#: how an exact Pauli-sum expectation is computed (see :meth:`SimulatorBase.pauli_sum_expectation`)
PAULI_SUM_METHODS = ("auto", "state", "lightcone")
HERMITIAN_TOLERANCE = 1e-8
#: the types of parameters that are plain host numbers (:meth:`SimulatorBase.holds_only_numbers`)
_PLAIN_NUMBERS = frozenset({float, int, np.float64})


#: the largest matrix (entries) whose facts are cached: an 8 x 8 operator
_FACTS_CACHED_UP_TO = 64


def _matrix_facts(host: np.ndarray) -> tuple[bool, bool]:
    """Whether a host matrix is Hermitian (within :data:`HERMITIAN_TOLERANCE`) and whether it is
    diagonal; a small one's answers cached by value (the letters of a Pauli string are asked
    about on every call: ~30 us of ``np.allclose`` a letter)."""
    if host.size <= _FACTS_CACHED_UP_TO:
        return _small_matrix_facts(host.shape, host.dtype.str, host.tobytes())
    return _computed_matrix_facts(host)


@register_function_cache
@functools.lru_cache(maxsize=1024)
def _small_matrix_facts(shape: tuple[int, ...], dtype: str, data: bytes) -> tuple[bool, bool]:
    return _computed_matrix_facts(np.frombuffer(data, dtype=dtype).reshape(shape))


def _computed_matrix_facts(host: np.ndarray) -> tuple[bool, bool]:
    hermitian = bool(np.allclose(host, host.conj().T, atol=HERMITIAN_TOLERANCE))
    return hermitian, not bool(np.any(host - np.diag(np.diag(host))))


def _holding_objects(operations: Sequence[Operation]) -> int:
    """How many of ``operations`` hold more than plain host numbers: a matrix, a channel, or a
    parameter of another type (a backend array, a traced value, lanes)."""
    holding = 0
    for op in operations:
        if op.channel is not None or op.gate == "unitary" \
                or not all(type(value) in _PLAIN_NUMBERS for value in op.params):
            holding += 1
    return holding

#: every simulator class by name, so siblings convert into each other without importing each other
_SIMULATORS: dict[str, type] = {}


_ABSTRACT: set[type] = set()
F = TypeVar("F", bound=Callable[..., Any])


def simulator_class(name: str) -> type:
    """The simulator class called ``name`` (``"Circuit"``, ``"DMCircuit"``, ``"StabilizerCircuit"``,
    ...), registered when it was defined.

    Examples
    --------
    >>> import tyxonq as tq
    >>> simulator_class("MPSCircuit") is tq.MPSCircuit
    True
    """
    return _SIMULATORS[name]


def simulator_classes() -> tuple[type, ...]:
    """Every simulator class defined so far (not the shared bases), in the order of definition:
    what the contract test runs over.

    Examples
    --------
    >>> import tyxonq as tq
    >>> [kind.__name__ for kind in simulator_classes()]
    ['Circuit', 'DMCircuit', 'MPSCircuit', 'StabilizerCircuit']
    """
    return tuple(kind for kind in _SIMULATORS.values() if kind not in _ABSTRACT)


def dynamic_route(compute: F | None = None, *, answer: str | None = None) -> Any:
    """Mark a simulator's computation of a result (from validated arguments) as one a dynamic
    circuit answers differently: when the circuit holds mid-circuit measurements, resets,
    post-selections or conditioned gates, its :class:`~tyxonq.circuit.dynamic.DynamicResults`
    (:meth:`SimulatorBase._dynamic_results`, each simulator's hook) answers instead, by the
    method ``answer`` (default: the computation's name without its leading underscore).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(1).h(0)
    >>> _ = c.measure(0)
    >>> round(float(c.acceptance()), 12)   # SimulatorBase._acceptance is a dynamic route
    1.0
    """
    if compute is None:
        return functools.partial(dynamic_route, answer=answer)
    name = answer or compute.__name__.lstrip("_")

    @functools.wraps(compute)
    def routed(self: SimulatorBase, *args: Any, **kwargs: Any) -> Any:
        if self._dynamic_count:
            return getattr(self._dynamic_results(), name)(*args, **kwargs)
        return compute(self, *args, **kwargs)

    return routed


class SimulatorBase(GateMethods, LayerMethods, ChannelMethods, DynamicMethods, CompositionMethods,
                    InterchangeMethods):
    """Operations on ``num_qubits`` qubits, checked as they are added, and the results every
    simulator answers (:data:`RESULTS`)."""

    _inputs: Any = None
    #: per-qubit readout confusion matrices (``None`` entries: exact) applied to samples; set by
    #: a noise model (``with_noise``)
    _readout: list | None = None
    #: the results (names in :data:`RESULTS`) this simulator refuses for every circuit, each with
    #: what gives it instead (the refusal's message)
    unsupported_results: Mapping[str, str] = {}
    #: what a result refused for its memory may do instead (the refusal's advice)
    memory_hint = "Use fewer qubits"

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _SIMULATORS.setdefault(cls.__name__, cls)
        if abstract:
            _ABSTRACT.add(cls)

    def __init__(self, num_qubits: int) -> None:
        if isinstance(num_qubits, bool) or not isinstance(num_qubits, numbers.Integral) \
                or num_qubits < 1:
            raise ValueError(f"num_qubits={num_qubits!r} must be a positive int")
        self._num_qubits = int(num_qubits)
        self._operations: list[Operation] = []
        self._channel_count = 0  # kept as operations are added: results check it on every call
        self._dynamic_count = 0  # measurements, resets, post-selections and conditioned gates
        self._holding_objects = 0  # operations holding more than plain numbers (holds_only_numbers)
        self._num_clbits = 0
        self._condition = None  # the condition on gates being added (cond), if any
        self._barriers: list[tuple[int, tuple[int, ...]]] = []  # (operations before it, qubits)

    def is_noisy(self) -> bool:
        """Whether the circuit holds channels (its state is then mixed)."""
        return self._channel_count > 0

    def is_clifford(self) -> bool:
        """Whether a :class:`~tyxonq.StabilizerCircuit` can run this circuit: Clifford gates (angles
        at multiples of ``pi/2``), Pauli channels, measurements, resets, Pauli gates conditioned on
        a parity of bits, and no ``inputs=``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).h(0).cx(0, 1).rz(1, theta=3.141592653589793).is_clifford()
        True
        >>> tq.Circuit(1).t(0).is_clifford()
        False
        """
        return self._inputs is None and all(clifford_reason(op) is None for op in self._operations)

    def to_stabilizer(self, max_non_clifford: int = 0) -> Any:
        """This circuit as a :class:`~tyxonq.StabilizerCircuit` (stim): every operation must be
        Clifford (:meth:`is_clifford`), the first that is not named in the error, or, up to
        ``max_non_clifford`` of them, Pauli rotations at other angles (``t``, ``rz``, ``exp_pauli``,
        ...: exact Pauli expectations by propagation, nothing else).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(500).h(0)
        >>> for q in range(499):
        ...     _ = c.cx(q, q + 1)
        >>> float(c.to_stabilizer().expectation_ps(z=[0, 499]))
        1.0
        """
        return simulator_class("StabilizerCircuit").from_circuit(self, max_non_clifford)

    # -- structure ---------------------------------------------------------------------------
    @property
    def num_qubits(self) -> int:
        return self._num_qubits

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The circuit's operations, in order."""
        return tuple(self._operations)

    @property
    def barriers(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The barrier markers: ``(operations before it, its qubits)`` each, in order."""
        return tuple(self._barriers)

    @property
    def readout(self) -> tuple | None:
        """Per-qubit readout confusion matrices applied to samples (``None`` entries: exact), or
        ``None``: set by a noise model (:meth:`with_readout`, ``with_noise``)."""
        return None if self._readout is None else tuple(self._readout)

    def with_readout(self, confusions: Sequence[Any] | None) -> SimulatorBase:
        """This circuit reading its samples through ``confusions`` (one confusion matrix or
        ``None`` per qubit; ``None``: exact readout), as a copy.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.Circuit(1).with_readout([np.array([[0.0, 1.0], [1.0, 0.0]])])
        >>> c.sample(5, seed=1)
        {'1': 5}
        """
        duplicate = self.copy()
        if confusions is not None:
            if len(confusions) != self._num_qubits:
                raise ValueError(f"with_readout got {len(confusions)} entries for {self._num_qubits} "
                                 "qubit(s): give one confusion matrix or None per qubit")
            confusions = [None if m is None else confusion_matrices(m, 1, f"confusions[{q}]")[0]
                          for q, m in enumerate(confusions)]
        duplicate._readout = None if confusions is None or all(m is None for m in confusions) else \
            confusions  # noqa: SLF001 - a copy of its own class
        return duplicate

    def with_inputs_of(self, other: SimulatorBase) -> SimulatorBase:
        """This circuit starting from ``other``'s initial state (its validated ``inputs``)."""
        duplicate = self.copy()
        duplicate._inputs = other._inputs  # noqa: SLF001 - the same class: a simulator's own state
        return duplicate

    # -- adding operations: one door ------------------------------------------------------------
    def _append(self, operations: Sequence[Operation], at_start: bool = False, counted: bool = True,
                holding: int | None = None) -> None:
        """Add checked ``operations`` after this circuit's (``at_start``: before them): the one way
        operations enter a circuit. The simulator's :meth:`_accept` sees them first and may refuse
        them while nothing has changed; then they are added, the counts of channels, dynamic
        operations and classical bits kept (``counted=False``: they hold already), and
        :meth:`_accepted` told. ``holding``: how many of them hold more than plain numbers
        (:meth:`holds_only_numbers`), where the caller knows it; else they are looked at."""
        self._accept(operations)
        if at_start:
            self._operations[:0] = operations
        else:
            self._operations.extend(operations)
        if counted:
            for op in operations:
                if op.channel is not None:
                    self._channel_count += 1
                elif op.condition is not None or op.gate in DYNAMIC_KINDS:
                    self._dynamic_count += 1
                if op.clbits or op.condition is not None:
                    self._num_clbits = max(self._num_clbits, clbits_used((op,)))
        # counted even where the kinds hold: with_operations(same_kinds=True) brings other angles
        self._holding_objects += _holding_objects(operations) if holding is None else holding
        self._accepted(operations, at_start)

    def _accept(self, operations: Sequence[Operation]) -> None:
        """Raise if this simulator cannot hold ``operations`` after the ones it has (a hook: called
        before anything changes; every operation is accepted here)."""

    def _accepted(self, operations: Sequence[Operation], at_start: bool) -> None:
        """``operations`` were added (a hook for what a simulator derives from them)."""

    def _restarted(self) -> None:
        """The operations are about to be replaced (:meth:`with_operations`): forget what was
        derived from the old ones (a hook)."""

    def _add(self, gate: str, qubits: tuple, params: tuple = ()) -> SimulatorBase:
        spec = GATES[gate]
        qubits = validate_qubits(qubits, self._num_qubits, gate)
        if spec.num_qubits and len(qubits) != spec.num_qubits:
            raise ValueError(f"{gate} acts on {spec.num_qubits} qubit(s); got {len(qubits)}: {qubits}")
        if not qubits:
            raise ValueError(f"{gate} needs at least one qubit")
        if gate == "unitary":
            params = (validate_unitary_matrix(params[0], len(qubits), get_backend()),)
        elif params:  # the backend is looked up only for an angle that is not a plain number
            params = tuple(validate_angle(value, gate, name) for value, name in zip(params, spec.param_names))
        if self._condition is None:
            self._append((Operation(gate, qubits, params),))
        else:
            self._append((Operation(gate, qubits, params, condition=self._condition),))
        return self

    def _extend(self, operations: list[Operation], plain: bool) -> None:
        """Append checked gate operations (a :meth:`layer`; ``plain``: every angle a float).
        Gates of the table change no count (channels, dynamic operations, bits) unless a
        condition is on."""
        self._append(operations, counted=self._condition is not None, holding=0 if plain else None)

    def _add_channel(self, channel: Any, qubits: tuple) -> SimulatorBase:
        from ..operators.channels import Channel

        if not isinstance(channel, Channel):
            raise TypeError(f"channel={channel!r} must be a tq.channels.Channel (e.g. "
                            "tq.channels.depolarizing(0.01)); build any other with tq.channels.kraus")
        if self._condition is not None:
            raise ValueError(f"a {channel.name} channel cannot be conditioned on classical bits; "
                             "condition gates only")
        qubits = validate_qubits(qubits, self._num_qubits, channel.name)
        if len(qubits) != channel.num_qubits:
            raise ValueError(f"{channel.name} acts on {channel.num_qubits} qubit(s); got "
                             f"{len(qubits)}: {qubits}")
        self._append((Operation("channel", qubits, channel=channel),))
        return self

    def with_operations(self, operations: Sequence[Operation], same_kinds: bool = False) -> SimulatorBase:
        """A circuit with the same qubits, inputs and readout and the given operations (barriers
        are not kept: they belong to the operations they stood between), checked by the simulator
        as any added operation is. ``same_kinds``: the operations are this circuit's with other
        angles, so its counts (channels, dynamic operations, classical bits) hold as they are.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> len(c.with_operations(c.operations[:1]).operations)
        1
        """
        return self._with_operations(operations, same_kinds)

    def _with_operations(self, operations: Sequence[Operation], same_kinds: bool,
                         holding: int | None = None) -> SimulatorBase:
        """:meth:`with_operations`; ``holding``: as :meth:`_append`'s."""
        duplicate = object.__new__(type(self))
        duplicate.__dict__.update(self.__dict__)
        duplicate._operations = []
        duplicate._barriers = []  # markers belong to the operations they stood between
        duplicate._holding_objects = 0
        if not same_kinds:
            duplicate._channel_count = duplicate._dynamic_count = 0
        duplicate._restarted()
        duplicate._append(list(operations), counted=not same_kinds, holding=holding)
        return duplicate

    def parameters(self) -> list[Any]:
        """The real gate angles in operation order (what :meth:`with_parameters` takes; a
        ``unitary``'s matrix is not one): ``num_parameters`` entries.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).rx(0, 0.1).cx(0, 1).u(1, 0.2, 0.3, 0.4).parameters()
        [0.1, 0.2, 0.3, 0.4]
        """
        return [value for op in self._operations if op.has_angles for value in op.params]

    def with_parameters(self, values: Any) -> SimulatorBase:
        """The same circuit with new angles: ``values`` holds :attr:`num_parameters` of them in
        operation order (:meth:`parameters`), as numbers, a NumPy array or one backend array (a
        gradient-tracked tensor: the gradient reaches it).

        Plan once, call many: the new circuit shares this one's structure key, so its results
        reuse every plan without hashing the structure again, and no gate is validated again but
        for the angles themselves (checked at once). What a loop over parameter values (an
        optimiser, a scan) should call instead of rebuilding the circuit.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.Circuit(2).ry(0, 0.0).cx(0, 1).ry(1, 0.0)
        >>> moved = c.with_parameters(np.array([0.5, 0.25]))
        >>> moved.parameters(), len(c.operations) == len(moved.operations)
        ([0.5, 0.25], True)
        """
        count = sum(len(op.params) for op in self._operations if op.has_angles)
        rows, plain = checked_angle_rows("with_parameters", values, count, ("angle",))  # 1-tuples
        rows = iter(rows)
        operations = []
        append = operations.append
        for op in self._operations:
            if not op.has_angles:
                append(op)
            elif len(op.params) == 1:
                append(op.with_params(next(rows)))
            else:
                append(op.with_params(tuple(next(rows)[0] for _ in op.params)))
        # plain new angles in place of plain ones: nothing held (else looked at)
        moved = self._with_operations(operations, same_kinds=True,
                                      holding=0 if plain and not self._holding_objects else None)
        moved._barriers = list(self._barriers)  # noqa: SLF001 - a copy of its own class
        self._same_structure(moved)
        return moved

    def _same_structure(self, other: SimulatorBase) -> None:
        """Hand what plans depend on to ``other``, a circuit of the same structure (a hook)."""

    def holds_only_numbers(self) -> bool:
        """Whether every operation's parameters are plain host numbers (Python ``float`` and
        ``int``, NumPy ``float64``): no backend array, traced value, batch of lanes, matrix or
        channel. Kept as operations are added, so a result learns at once that there is nothing to
        look for in its operations (traced or recorded angles, lanes, arrays for the host twin).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> tq.Circuit(2).rx(0, 0.3).cx(0, 1).holds_only_numbers()
        True
        >>> tq.Circuit(1).unitary(0, matrix=np.eye(2)).holds_only_numbers()
        False
        """
        return self._holding_objects == 0

    def _is_traced(self) -> bool:
        return self._holding_objects > 0 and any(isinstance(p, Dual) for op in self._operations
                                                 for p in op.params)

    def _lanes(self) -> int | None:
        """The batch size of angles given as lanes (:mod:`tyxonq.numerics.lanes`), else ``None``."""
        return operation_lanes(self._operations) if self._holding_objects else None

    # -- what results are asked for ------------------------------------------------------------
    def _validated_strings(self, strings: Sequence[str]) -> list[str]:
        if isinstance(strings, str):
            raise TypeError("strings must be a sequence of Pauli strings, e.g. ['ZZI', 'IXX']")
        strings = checked_sequence(strings, "strings", "Pauli strings")
        for string in strings:
            if not isinstance(string, str):
                _check_pauli_string(string, self._num_qubits)
        return list(_checked_pauli_strings(strings, self._num_qubits))

    def validated_operator(self, operator: Any, hermitian: bool,
                            K: ArrayBackend) -> tuple[Any, tuple[int, ...], bool]:
        """The operator's matrix on the backend, its qubits, and whether it is diagonal (known
        only from values that can be read here: a traced matrix counts as dense)."""
        if not (isinstance(operator, (tuple, list)) and len(operator) == 2):
            raise TypeError(f"each operator must be a (matrix, qubits) pair; got {operator!r}")
        matrix, qubits = operator
        qubits = (qubits,) if isinstance(qubits, numbers.Integral) else tuple(qubits)
        qubits = validate_qubits(qubits, self._num_qubits, "expectation")
        dimension = 2 ** len(qubits)
        host = matrix_values(K, matrix, len(qubits), f"operator on qubits {qubits}")
        is_hermitian, diagonal = _matrix_facts(host) if host is not None else (True, False)
        if hermitian and not is_hermitian:
            raise ValueError(
                f"operator on qubits {qubits} is not Hermitian; pass hermitian=False for the "
                "complex value <psi|O|psi>"
            )
        array = K.asarray(matrix)
        if not K.is_complex(array):
            array = K.cast(array, K.dtype)
        return K.reshape(array, (dimension, dimension)), qubits, diagonal

    def _validated_operators(self, operators: tuple, hermitian: bool,
                             K: ArrayBackend) -> tuple[list, list, list]:
        """Matrices, qubit groups and diagonal flags of ``(matrix, qubits)`` operators that must
        not overlap."""
        matrices, groups, diagonal = [], [], []
        used: set[int] = set()
        for operator in operators:
            matrix, qubits, is_diagonal = self.validated_operator(operator, hermitian, K)
            overlap = used.intersection(qubits)
            if overlap:
                raise ValueError(
                    f"operators overlap on qubit(s) {sorted(overlap)}; multiply them into one matrix"
                )
            used.update(qubits)
            matrices.append(matrix)
            groups.append(qubits)
            diagonal.append(is_diagonal)
        return matrices, groups, diagonal

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

    # -- the result contract: what is asked, validated once for every simulator -------------------
    def _refusal(self, result: str, why: str | None = None) -> UnsupportedResult:
        """The refusal of ``result`` (``why``: for this circuit; else the simulator's declared
        :attr:`unsupported_results` entry)."""
        reason = why if why is not None else self.unsupported_results.get(
            result, f"{type(self).__name__} does not compute it")
        return UnsupportedResult(f"{type(self).__name__}.{result}(): {reason}")

    def _noisy_refusal(self, what: str) -> NoisyCircuitError:
        """The refusal of ``what``, a pure-state result, of a circuit that holds channels."""
        noisy = sorted({op.channel.name for op in self._operations if op.channel is not None})
        return NoisyCircuitError(
            f"{type(self).__name__}.{what}: this circuit holds channels ({', '.join(noisy)}), so its state "
            "is mixed and a pure-state result would be wrong. Use c.to_density_matrix() (a tq.DMCircuit) "
            "for exact results, or tq.noise.trajectory_expectation(c, observable, trajectories, seed) to "
            "sample them")

    def _dynamic_results(self) -> Any:
        """The hook that answers a dynamic circuit's results (:func:`dynamic_route`): by default
        the deferred-measurement lowering (:class:`~tyxonq.circuit.dynamic.DeferredResults`)."""
        from .dynamic import DeferredResults

        return DeferredResults(self)

    @dynamic_route
    def _require_pure(self, what: str) -> None:
        """Refuse ``what``, a pure-state result, when mid-circuit measurements or resets mix the
        state (a circuit without them: nothing to refuse here)."""

    def state(self) -> Any:
        """The final state: its ``2**n`` amplitudes (qubit 0 most significant) on a pure-state
        simulator, the ``2**n x 2**n`` density matrix on a mixed-state one. A pure-state result of
        a circuit whose state is mixed (channels, mid-circuit measurements or resets) raises
        :class:`~tyxonq.UnsupportedResult` naming the density-matrix route."""
        raise self._refusal("state")

    def probability(self) -> Any:
        """Probabilities of all ``2**n`` basis states (a real array; qubit 0 most significant).

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (K.to_numpy(tq.MPSCircuit(2).x(1).probability()).round(6) + 0.0).tolist()
        [0.0, 1.0, 0.0, 0.0]
        """
        return self._probability()

    @dynamic_route
    def _probability(self) -> Any:
        return self.marginal_probability(range(self._num_qubits))

    def amplitude(self, bitstring: str | int) -> Any:
        """``<bitstring|psi>`` (qubit 0 is the leftmost character; an int: the basis index).

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(abs(complex(tq.Circuit(2).h(0).cx(0, 1).amplitude("11"))) ** 2, 6)
        0.5
        """
        return self._amplitude(self._parse_bitstring(bitstring))

    def _amplitude(self, bits: tuple[int, ...]) -> Any:
        raise self._refusal("amplitude")

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        """Probabilities of the ``2**k`` outcomes of measuring ``qubits`` (in the order given; the
        first is the most significant bit), the others ignored.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (K.to_numpy(tq.Circuit(40).h(0).cx(0, 39).marginal_probability([39, 0])).round(6) + 0.0).tolist()
        [0.5, 0.0, 0.0, 0.5]
        """
        qubits = self._checked_qubits(qubits, "marginal_probability")
        if not rehearsing():
            require_memory(get_backend(), 2 ** len(qubits), f"the probabilities of {len(qubits)} qubit(s)",
                           self.memory_hint)
        return self._marginal_probability(qubits)

    def _marginal_probability(self, qubits: tuple[int, ...]) -> Any:
        raise self._refusal("marginal_probability")

    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        """The density matrix of ``qubits`` (in the order given), every other qubit traced out.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> rho = tq.Circuit(3).h(0).cx(0, 1).reduced_density_matrix([1])
        >>> (K.to_numpy(rho).real.round(6) + 0.0).tolist()
        [[0.5, 0.0], [0.0, 0.5]]
        """
        qubits = self._checked_qubits(qubits, "reduced_density_matrix")
        if not rehearsing():
            require_memory(get_backend(), 4 ** len(qubits), f"the density matrix of {len(qubits)} qubit(s)",
                           self.memory_hint)
        return self._reduced_density_matrix(qubits)

    def _reduced_density_matrix(self, qubits: tuple[int, ...]) -> Any:
        raise self._refusal("reduced_density_matrix")

    def expectation(self, *operators: Any, hermitian: bool = True, **options: Any) -> Any:
        """``<psi| O_1 ⊗ ... ⊗ O_m |psi>`` for local operators given as ``(matrix, qubits)``.

        A single :class:`~tyxonq.PauliSum` is evaluated by :meth:`pauli_sum_expectation`
        (``options`` such as ``method=`` or ``shots=`` go to it).

        Each simulator contracts only what the operators need (a light cone; an MPS's sites
        between cached environments). The result is real; a non-Hermitian matrix raises unless
        ``hermitian=False``, which returns the complex value.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> z = np.diag([1.0, -1.0])
        >>> float(tq.Circuit(2).x(1).expectation((z, [0]), (z, [1])))
        -1.0
        >>> float(tq.MPSCircuit(3).x(2).expectation((z, [0]), (z, [2])))
        -1.0
        """
        hermitian = checked_flag(hermitian, "hermitian")
        if not operators:
            raise ValueError("expectation needs at least one (matrix, qubits) operator")
        if len(operators) == 1 and isinstance(operators[0], PauliSum):
            return self.pauli_sum_expectation(operators[0], hermitian=hermitian, **options)
        if options:
            raise TypeError(f"unexpected options {sorted(options)} for (matrix, qubits) operators")
        K = get_backend()
        matrices, groups, diagonal = self._validated_operators(operators, hermitian, K)
        return self._local_expectation(operators, matrices, groups, diagonal, hermitian, K)

    def acceptance(self) -> Any:
        """The probability that every :meth:`post_select` of the circuit succeeds (1 without
        any); results are conditioned on it.

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.Circuit(1).ry(0, 1.0).post_select(0, 1).acceptance()), 6)
        0.229849
        """
        return self._acceptance()

    @dynamic_route
    def _acceptance(self) -> Any:
        K = get_backend()
        return K.asarray(1.0, K.real_dtype)

    def _local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                           hermitian: bool, K: ArrayBackend) -> Any:
        raise self._refusal("expectation")

    def pauli_expectations(self, strings: Sequence[str], coefficients: Sequence[Any] | None = None) -> Any:
        """``<psi|P|psi>`` for many Pauli strings at once, or ``sum_i c_i <psi|P_i|psi>``.

        Each string has one character per qubit (``I``, ``X``, ``Y``, ``Z``; character ``q`` on
        qubit ``q``). Each simulator computes them its own way: a ``Circuit`` or ``DMCircuit``
        contracts every term's light cone (terms whose networks are equal up to relabelling share
        one plan, contracted together) or reads every term from the one state, whichever is
        estimated faster here; an MPS sweeps between cached environments; a stabilizer circuit
        reads its tableau or carries each string backwards. Gradients: autograd where the backend
        has it, else exact reverse mode (``tq.value_and_grad``).

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
        return self._pauli_expectations(strings, coefficients)

    @dynamic_route
    def _pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        """:meth:`pauli_expectations` of validated strings (each simulator its own; ``method``:
        the route where a simulator has more than one)."""
        raise self._refusal("pauli_expectations")

    def pauli_sum_expectation(self, hamiltonian: PauliSum, method: str = "auto", hermitian: bool = True,
                              shots: int | None = None, seed: int | None = None, readout_error: Any = None,
                              return_std: bool = False) -> Any:
        """``<psi|H|psi>`` of a :class:`~tyxonq.PauliSum` (``c.expectation(h)`` and
        ``h.expectation(c)`` come here); the options are :meth:`tyxonq.PauliSum.expectation`'s.

        Each simulator computes the exact value its own way (:meth:`_pauli_sum_value`: an MPS's
        environments; a ``Circuit`` or ``DMCircuit``: terms on their light cones, or every term
        read from the one state, whichever :mod:`~tyxonq.circuit.calibration` estimates faster
        on this machine); ``shots`` estimates it from measurements instead, the same way
        everywhere.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> round(float(c.pauli_sum_expectation(tq.PauliSum([(0.5, "ZZ"), (1.0, "XX")]))), 12)
        1.5
        """
        if not isinstance(hamiltonian, PauliSum):
            raise TypeError(f"hamiltonian must be a tq.PauliSum; got {type(hamiltonian).__name__}")
        hermitian, return_std = checked_flag(hermitian, "hermitian"), checked_flag(return_std, "return_std")
        if hamiltonian.n_qubits != self._num_qubits:
            raise ValueError(f"the circuit has {self._num_qubits} qubits; this PauliSum acts on "
                             f"{hamiltonian.n_qubits}")
        if hermitian and not hamiltonian.is_hermitian():
            raise ValueError("this PauliSum has complex coefficients: pass hermitian=False for "
                             "the complex value")
        strings = [string for _, string in hamiltonian]
        coefficients = [coefficient for coefficient, _ in hamiltonian]
        if shots is not None:
            if not hamiltonian.is_hermitian():
                raise ValueError("shot estimates measure Hermitian operators: this PauliSum has "
                                 "complex coefficients")
            shots, rng = checked_count(shots, "shots"), random_generator(seed)
            value, error = shot_expectation(self, strings, coefficients, shots, rng, readout_error)
            return (value, error) if return_std else value
        checked_choice(method, PAULI_SUM_METHODS, "method")
        return self._pauli_sum_value(hamiltonian, method, hermitian)

    @dynamic_route
    def _pauli_sum_value(self, hamiltonian: PauliSum, method: str, hermitian: bool) -> Any:
        """The exact value by ``method`` (a simulator with more than one route takes it into
        account; here there is one: :meth:`_pauli_expectations`)."""
        value = self._pauli_expectations([string for _, string in hamiltonian],
                                         [coefficient for coefficient, _ in hamiltonian], method)
        if not hermitian:
            return value
        return value.real if isinstance(value, Dual) else get_backend().real(value)

    @takes_progress
    def sample(self, shots: int, seed: int | None = None, format: str = "counts",
               readout_error: Any = None, final: bool = True) -> Any:
        """Measure every qubit ``shots`` times (each simulator: exactly, its own way); the
        options are :meth:`tyxonq.Circuit.sample`'s."""
        raise self._refusal("sample")

    def matrix(self) -> Any:
        """The circuit's unitary, ``2**n x 2**n`` (row: output basis index; qubit 0 most
        significant). A circuit with channels, mid-circuit measurements, resets, post-selections
        or conditions has none: :class:`~tyxonq.UnsupportedResult`.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (K.to_numpy(tq.MPSCircuit(1).x(0).matrix()).real + 0.0).tolist()
        [[0.0, 1.0], [1.0, 0.0]]
        """
        if self.is_noisy():
            raise self._noisy_refusal("matrix()")
        return self._matrix()

    @dynamic_route
    def _matrix(self) -> Any:
        raise self._refusal("matrix")

    def rehearse(self, result: str, *args: Any, **kwargs: Any) -> ContractionReport:
        """Plan a result without computing it: the routes it takes, its width, flops, memory and
        planning time (one report type, :class:`~tyxonq.ContractionReport`, on every simulator).

        ``result`` names a result method (:data:`RESULTS`, but ``rehearse``); the other arguments
        are that method's. Plans are made (and cached, so the real call reuses them) but nothing is
        bound or contracted, and what would not fit in memory is reported (``fits``) instead of
        refused.

        Examples
        --------
        >>> import networkx as nx, tyxonq as tq
        >>> graph = nx.random_regular_graph(3, 100, seed=5)
        >>> c = tq.templates.qaoa(graph, [0.3, 0.2], [0.5, 0.1])
        >>> report = c.rehearse("expectation", tq.hamiltonians.maxcut(graph))
        >>> report.contractions, report.width <= 10, report.distinct_plans < report.contractions
        (150, True, True)
        """
        checked_choice(result, RESULTS[:-1], "result")
        if "rehearse" in self.unsupported_results:
            raise self._refusal("rehearse")
        return self._rehearsed(result, args, kwargs)

    def compile(self, result: str, *args: Any, **kwargs: Any) -> CompiledResult:
        """A result of this circuit's structure as a function of its angles: planned now, then
        called with :meth:`parameters`-ordered angles at the cost of binding and contracting.

        ``result`` names a result method (:data:`RESULTS`, but ``rehearse``); the other arguments
        are that method's. Where the result is one contraction of the gates (a local
        expectation, an amplitude, a marginal: :data:`~tyxonq.circuit.compiled.COMPILABLE`) a
        call binds the new angles straight into its plan; anything else is the plain call on
        :meth:`with_parameters` (``compiled.direct`` says which). Plan once, call many: what an
        optimiser's objective should be.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.templates.brickwork(8, np.zeros(32), 4)
        >>> z4 = c.compile("expectation_ps", z=[4])
        >>> angles = np.full(32, 0.3)
        >>> bool(np.isclose(z4(angles), c.with_parameters(angles).expectation_ps(z=[4])))
        True
        """
        checked_choice(result, RESULTS[:-1], "result")
        return CompiledResult(self.copy(), result, args, kwargs)

    def _rehearsed(self, result: str, args: tuple, kwargs: dict) -> ContractionReport:
        """The report of ``result`` (a hook): by default its contractions, planned not run."""
        return rehearse(getattr(self, result), *args, **kwargs)

    def _checked_qubits(self, qubits: Sequence[int], what: str) -> tuple[int, ...]:
        """A result's qubits, validated; at least one."""
        qubits = validate_qubits(checked_sequence(qubits, "qubits", "qubit indices"), self._num_qubits, what)
        if not qubits:
            raise ValueError(f"{what} needs at least one qubit")
        return qubits

    def _sampling(self, shots: int, format: str, readout_error: Any, seed: Any,
                  final: bool = True) -> tuple[int, list | None]:
        """``sample``'s checked shots (and seed), and the confusion matrices to read through
        (given, or the noise model's)."""
        final = checked_flag(final, "final")
        if not final and self._num_clbits == 0:
            raise ValueError("sample(final=False) reports the classical bits, and this circuit measures none")
        shots = checked_count(shots, "shots")
        checked_seed(seed)
        checked_choice(format, SAMPLE_FORMATS, "format")
        if readout_error is not None:
            return shots, confusion_matrices(readout_error, self._num_qubits)
        return shots, self._readout

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
            qubits = _qubit_list(qubits, name)
            operators.extend((constant(K, name), [q]) for q in qubits)
        if not operators:
            raise ValueError("expectation_ps needs at least one qubit in x, y or z")
        return self.expectation(*operators)

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
        return_std = checked_flag(return_std, "return_std")
        letters: dict[int, str] = {}
        for name, qubits in (("X", x), ("Y", y), ("Z", z)):
            qubits = _qubit_list(qubits, name)
            for q in validate_qubits(tuple(qubits), self._num_qubits, "sample_expectation_ps"):
                if q in letters:
                    raise ValueError(f"qubit {q} appears in more than one of x, y, z")
                letters[q] = name
        if not letters:
            raise ValueError("sample_expectation_ps needs at least one qubit in x, y or z")
        string = "".join(letters.get(q, "I") for q in range(self._num_qubits))
        value, error = shot_expectation(self, [string], [1.0], checked_count(shots, "shots"),
                                        random_generator(seed), readout_error)
        return (value, error) if return_std else value

    # -- transformations -----------------------------------------------------------------------
    def copy(self) -> SimulatorBase:
        """An independent copy (operations are immutable; parameters are shared)."""
        duplicate = self.with_operations(self._operations)
        duplicate._barriers = list(self._barriers)  # noqa: SLF001 - a copy of its own class
        return duplicate

    def draw(self, output: str = "text", *, width: int = 100, fold: int | None = None, ax: Any = None,
             title: str | None = None) -> Any:
        """The circuit drawn, qubit 0 on top, operations in the same columns in every output.

        Parameters
        ----------
        output : {"text", "mpl", "latex"}
            ``"text"``: a text diagram folded into blocks of at most ``width`` characters per
            line (what ``print(circuit)`` prints); ``"mpl"``: a matplotlib ``Figure`` (gates with
            their angles, controls, measurements and their classical bits, conditions, channels
            dashed, barriers, Pauli rotations, detectors and observables on a classical row), folded
            every ``fold`` columns (``None``: about
            :data:`~tyxonq.circuit.operations.figure.FOLD_WIDTH` gate boxes; ``0``: never), drawn
            into ``ax`` when given; ``"latex"``: quantikz source (``\\usepackage{quantikz}``).
        width : int
            Characters per line of the text diagram.
        fold, ax, title
            The figure's folding, the matplotlib axes to draw into, and its title.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> print(c.draw())
        q0: ─H─●─
        q1: ───X─
        >>> figure = c.draw("mpl")  # a matplotlib Figure: figure.savefig("bell.png")
        >>> type(figure).__name__
        'Figure'
        >>> c.draw("latex").splitlines()[1].split(" & ")[1:3]  # quantikz cells of qubit 0
        ['\\\\gate{\\\\mathrm{H}}', '\\\\ctrl{1}']
        """
        output = checked_choice(output, DRAW_OUTPUTS, "output")
        operations = self._drawn_operations(output)
        if output == "text":
            return draw_circuit(self._num_qubits, operations, checked_count(width, "width"), self._barriers)
        if output == "latex":
            return circuit_latex(self._num_qubits, operations, self._barriers)
        if fold is not None:
            fold = checked_count(fold, "fold", minimum=0)
        return circuit_figure(self._num_qubits, operations, self._barriers, fold=fold, ax=ax, title=title)

    def _drawn_operations(self, output: str) -> list[Operation]:
        """The operations a drawing shows (a hook: a simulator may leave some out of some outputs)."""
        return list(self._operations)

    def __str__(self) -> str:
        return self.draw()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_qubits={self._num_qubits}, operations={len(self._operations)})"


def _qubit_list(qubits: Any, name: str) -> tuple:
    """``expectation_ps``' ``x``/``y``/``z``: one qubit, a sequence of them, or ``None``."""
    if qubits is None:
        return ()
    if isinstance(qubits, numbers.Integral) and not isinstance(qubits, bool):
        return (qubits,)
    return checked_sequence(qubits, name, "qubit indices (or one qubit)")


def _check_pauli_string(string: Any, num_qubits: int) -> None:
    if not isinstance(string, str) or len(string) != num_qubits or set(string.upper()) - set("IXYZ"):
        raise ValueError(f"Pauli string {string!r} must have {num_qubits} characters, each I, X, Y or Z")


@register_function_cache
@functools.lru_cache(maxsize=256)
def _checked_pauli_strings(strings: tuple[str, ...], num_qubits: int) -> tuple[str, ...]:
    """The strings upper-cased, each checked (kept: a Hamiltonian's terms are asked repeatedly)."""
    for string in strings:
        _check_pauli_string(string, num_qubits)
    return tuple(string.upper() for string in strings)


@register_function_cache
@functools.lru_cache(maxsize=256)
def pauli_factors(strings: tuple[str, ...]) -> tuple[tuple[tuple[int, str], ...], ...]:
    """Each checked string's non-identity ``(qubit, lower-case letter)`` factors.

    Examples
    --------
    >>> pauli_factors(("ZIX", "III"))
    (((0, 'z'), (2, 'x')), ())
    """
    return tuple(tuple((q, letter.lower()) for q, letter in enumerate(string) if letter != "I")
                 for string in strings)
