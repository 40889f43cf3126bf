"""The base of every simulator: qubits, a checked list of operations, and the checks of results.

:class:`SimulatorBase` holds a circuit's gates and channels (one
:class:`~tyxonq.circuit.operations.operation.Operation` type), validates them as they are added,
and validates what results are asked for (observables, Pauli strings, bitstrings, sample
formats); it mixes in the gate and channel methods, composition, interchange and shot-based
estimates. The simulators are its subclasses (:class:`~tyxonq.circuit.base.CircuitBase` for
``Circuit`` and ``DMCircuit``, and ``MPSCircuit``): they differ only in how they compute results.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import (
    checked_choice,
    checked_count,
    checked_seed,
    checked_sequence,
    random_generator,
)
from ..numerics.cache_registry import register_function_cache
from ..numerics.dual import Dual
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.readout import confusion_matrices
from .interchange.methods import InterchangeMethods
from .operations.channel_methods import ChannelMethods
from .operations.clifford import clifford_reason
from .operations.composition import CompositionMethods
from .operations.drawing import draw as draw_circuit
from .operations.dynamic_methods import DynamicMethods
from .operations.gate_methods import GateMethods
from .operations.gates import GATES, constant
from .operations.layer_methods import LayerMethods, checked_angles
from .operations.operation import (
    Operation,
    clbits_used,
    matrix_values,
    validate_angle,
    validate_qubits,
    validate_unitary_matrix,
)
from .result_forms import format_index, format_samples, readout_seed, weighted_sum
from .shots import shot_expectation
from .statevector.lanes import operation_lanes

__all__ = ["SimulatorBase", "simulator_class", "format_index", "format_samples", "pauli_factors",
           "readout_seed", "weighted_sum",
           "SAMPLE_FORMATS", "HERMITIAN_TOLERANCE"]

SAMPLE_FORMATS = ("counts", "bitstrings", "indices", "bits")
#: how an exact Pauli-sum expectation is computed (see :meth:`SimulatorBase.pauli_sum_expectation`)
PAULI_SUM_METHODS = ("auto", "state", "lightcone")
HERMITIAN_TOLERANCE = 1e-8
#: every simulator class by name, so siblings convert into each other without importing each other
_SIMULATORS: dict[str, type] = {}


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


class SimulatorBase(GateMethods, LayerMethods, ChannelMethods, DynamicMethods, CompositionMethods,
                    InterchangeMethods):
    """Operations on ``num_qubits`` qubits, checked as they are added."""

    _inputs: Any = None
    #: per-qubit readout confusion matrices (``None`` entries: exact) applied to samples; set by
    #: a noise model (``with_noise``)
    _readout: list | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _SIMULATORS.setdefault(cls.__name__, cls)

    def __init__(self, num_qubits: int) -> None:
        if isinstance(num_qubits, bool) or not isinstance(num_qubits, numbers.Integral) \
                or num_qubits < 1:
            raise ValueError(f"num_qubits={num_qubits!r} must be a positive int")
        self._num_qubits = int(num_qubits)
        self._operations: list[Operation] = []
        self._channel_count = 0  # kept as operations are added: results check it on every call
        self._dynamic_count = 0  # measurements, resets, post-selections and conditioned gates
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
        duplicate._readout = None if confusions is None or all(m is None for m in confusions) else \
            list(confusions)  # noqa: SLF001 - a copy of its own class
        return duplicate

    def with_inputs_of(self, other: SimulatorBase) -> SimulatorBase:
        """This circuit starting from ``other``'s initial state (its validated ``inputs``)."""
        duplicate = self.copy()
        duplicate._inputs = other._inputs  # noqa: SLF001 - the same class: a simulator's own state
        return duplicate

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
            self._operations.append(Operation(gate, qubits, params))
        else:
            self._operations.append(Operation(gate, qubits, params, condition=self._condition))
            self._dynamic_count += 1
        return self

    def _extend(self, operations: list[Operation]) -> None:
        """Append checked gate operations (a :meth:`layer`)."""
        self._operations.extend(operations)
        if self._condition is not None:
            self._dynamic_count += len(operations)

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
        self._operations.append(Operation("channel", qubits, channel=channel))
        self._channel_count += 1
        return self

    def with_operations(self, operations: list[Operation], same_kinds: bool = False) -> SimulatorBase:
        """A circuit with the same qubits, inputs and readout and the given operations (barriers
        are not kept: they belong to the operations they stood between). ``same_kinds``: the
        operations are this circuit's with other angles, so its counts (channels, dynamic
        operations, classical bits) hold as they are.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> len(c.with_operations(c.operations[:1]).operations)
        1
        """
        duplicate = object.__new__(type(self))
        duplicate.__dict__.update(self.__dict__)
        duplicate._operations = list(operations)
        if not same_kinds:
            duplicate._channel_count = sum(op.channel is not None for op in duplicate._operations)
            duplicate._dynamic_count = sum(op.is_dynamic for op in duplicate._operations)
            duplicate._num_clbits = max(self._num_clbits, clbits_used(duplicate._operations))
        duplicate._barriers = []  # markers belong to the operations they stood between
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
        rows = iter(checked_angles("with_parameters", values, count, ("angle",)))  # 1-tuples
        operations = []
        append = operations.append
        for op in self._operations:
            if not op.has_angles:
                append(op)
            elif len(op.params) == 1:
                append(op.with_params(next(rows)))
            else:
                append(op.with_params(tuple(next(rows)[0] for _ in op.params)))
        moved = self.with_operations(operations, same_kinds=True)
        moved._barriers = list(self._barriers)  # noqa: SLF001 - a copy of its own class
        self._same_structure(moved)
        return moved

    def _same_structure(self, other: SimulatorBase) -> None:
        """Hand what plans depend on to ``other``, a circuit of the same structure (a hook)."""

    def _is_traced(self) -> bool:
        return any(isinstance(p, Dual) for op in self._operations for p in op.params)

    def _lanes(self) -> int | None:
        """The batch size of angles given as lanes (:mod:`tyxonq.numerics.lanes`), else ``None``."""
        return operation_lanes(self._operations)

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
        if not operators:
            raise ValueError("expectation needs at least one (matrix, qubits) operator")
        if len(operators) == 1 and isinstance(operators[0], PauliSum):
            return self.pauli_sum_expectation(operators[0], hermitian=hermitian, **options)
        if options:
            raise TypeError(f"unexpected options {sorted(options)} for (matrix, qubits) operators")
        K = get_backend()
        matrices, groups, diagonal = self._validated_operators(operators, hermitian, K)
        if self.is_dynamic():
            return self._deferred().expectation(matrices, groups, hermitian)
        return self._local_expectation(operators, matrices, groups, diagonal, hermitian, K)

    def _deferred(self) -> Any:
        """This dynamic circuit's results by deferred measurement (:mod:`tyxonq.circuit.dynamic`)."""
        from .dynamic import DeferredResults

        return DeferredResults(self)

    def acceptance(self) -> Any:
        """The probability that every :meth:`post_select` of the circuit succeeds (1 without
        any); results are conditioned on it.

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.Circuit(1).ry(0, 1.0).post_select(0, 1).acceptance()), 6)
        0.229849
        """
        return self._deferred().acceptance()

    def _local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                           hermitian: bool, K: ArrayBackend) -> Any:
        raise NotImplementedError  # pragma: no cover - every simulator has its own

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
        if self.is_dynamic():
            return self._deferred().pauli_sum_value(hamiltonian, method, hermitian)
        return self._pauli_sum_value(hamiltonian, method, hermitian)

    def _pauli_sum_value(self, hamiltonian: PauliSum, method: str, hermitian: bool) -> Any:
        """The exact value by ``method`` (:meth:`_pauli_values`)."""
        value = self._pauli_values([string for _, string in hamiltonian],
                                   [coefficient for coefficient, _ in hamiltonian], method)
        if not hermitian:
            return value
        return value.real if isinstance(value, Dual) else get_backend().real(value)

    def _pauli_values(self, strings: list[str], coefficients: Any, method: str) -> Any:
        """The weighted sum of the strings' values (``method``: a simulator with more than one
        route takes it into account; here there is one)."""
        return self.pauli_expectations(strings, coefficients)

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

    def draw(self, width: int = 100) -> str:
        """A text diagram (qubit 0 on top), folded into blocks of at most ``width`` characters
        per line; ``print(circuit)`` prints it."""
        return draw_circuit(self._num_qubits, self._operations, width, self._barriers)

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
