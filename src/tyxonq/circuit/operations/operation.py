"""One gate applied to qubits, and the checks that run when it is added to a circuit."""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.dual import Dual
from ...numerics.lanes import Lanes
from ...numerics.protocol import ArrayBackend
from .gates import GATES

__all__ = ["Operation", "Condition", "DYNAMIC_KINDS", "ANNOTATION_KINDS", "clbits_used", "with_angles_at",
           "validate_qubits",
           "validate_angle",
           "validate_unitary_matrix",
           "matrix_values"]

#: ``|U^dagger U - I|`` may reach this many machine epsilons of the matrix's dtype per unit of its
#: dimension (a unitary computed in that precision carries about ``dimension * eps`` of rounding)
UNITARITY_EPSILONS = 8
#: and never less than this (exact and double-precision input)
UNITARITY_TOLERANCE = 1e-8
#: operations that are not gates or channels: a mid-circuit measurement into a classical bit, a
#: reset to ``|0>`` and a post-selection on an outcome (:mod:`~tyxonq.circuit.operations.deferred`)
DYNAMIC_KINDS = ("measure", "reset", "post_select")
_DYNAMIC = frozenset(DYNAMIC_KINDS)
#: operations that mark classical bits and change no state: an error-correction detector (the
#: parity of ``clbits`` is deterministic without noise; ``params``: its coordinates) and a logical
#: observable's share (``clbits`` join observable ``params[0]``); the stabilizer simulator's
_ANNOTATIONS = frozenset({"detector", "observable"})
ANNOTATION_KINDS = tuple(sorted(_ANNOTATIONS))
_NOT_GATES = _DYNAMIC | _ANNOTATIONS
#: the kinds whose parameters are part of their structure (an outcome, an annotation's data)
_OUTCOMES = frozenset({"post_select"}) | _ANNOTATIONS


@dataclass(frozen=True)
class Condition:
    """When a conditioned gate applies, as a function of classical bits.

    ``kind="equals"``: the register ``bits`` (``bits[0]`` its least significant bit, as in
    OpenQASM's ``if (c == k)``) holds ``value``; ``kind="differs"``: it does not (the ``else``
    of an equality); ``kind="parity"``: the XOR of ``bits`` is ``value``. A bit never written
    reads ``0``.

    Examples
    --------
    >>> Condition((0, 1), 2).holds([0, 1])
    True
    >>> Condition((0, 1, 2), 1, "parity").holds([1, 1, 1])
    True
    """

    bits: tuple[int, ...]
    value: int
    kind: str = "equals"

    def holds(self, register: Sequence[int]) -> bool:
        """Whether the condition holds for the bit values ``register`` (one per classical bit)."""
        return bool(self.holds_for(np.asarray(register)[None, :])[0])

    def holds_for(self, registers: np.ndarray) -> np.ndarray:
        """Whether the condition holds for each row of ``registers`` (``(rows, bits)`` values),
        as a boolean array.

        Examples
        --------
        >>> Condition((0,), 1).holds_for(np.array([[0], [1]])).tolist()
        [False, True]
        """
        values = np.asarray(registers)[:, list(self.bits)].astype(np.int64)
        if self.kind == "parity":
            return values.sum(axis=1) % 2 == self.value
        equal = np.all(values == np.asarray(self.required()), axis=1)
        return equal if self.kind == "equals" else ~equal

    def required(self) -> tuple[int, ...]:
        """The value each bit must have (an equality condition)."""
        return tuple((self.value >> i) & 1 for i in range(len(self.bits)))


_new = object.__new__


@dataclass(frozen=True, init=False)
class Operation:
    """A gate on qubits with its parameters; ``dagger`` marks the adjoint (from ``inverse``).

    A channel is one more kind of operation: ``gate`` is ``"channel"`` and ``channel`` holds the
    :class:`~tyxonq.operators.channels.Channel` (its Kraus operators); it has no angles.

    The dynamic kinds (:data:`DYNAMIC_KINDS`) are more of the same: ``"measure"`` writes the
    outcome of measuring its qubit into classical bit ``clbits[0]``, ``"reset"`` returns its qubit
    to ``|0>``, ``"post_select"`` keeps only the outcome ``params[0]``; a gate with a
    ``condition`` applies only when the :class:`Condition` on classical bits holds.

    ``structure`` is what a contraction plan depends on: everything but the parameter values.
    """

    gate: str
    qubits: tuple[int, ...]
    params: tuple[Any, ...] = ()
    dagger: bool = False
    channel: Any = None
    clbits: tuple[int, ...] = ()
    condition: Condition | None = None

    def __init__(self, gate: str, qubits: tuple[int, ...], params: tuple[Any, ...] = (),
                 dagger: bool = False, channel: Any = None, clbits: tuple[int, ...] = (),
                 condition: Condition | None = None) -> None:
        # circuits are built gate by gate: ``clbits``, read only for measurements, is set only when
        # given (its default is the class's); the fields every result reads always are
        set_field = object.__setattr__
        set_field(self, "gate", gate)
        set_field(self, "qubits", qubits)
        set_field(self, "params", params)
        set_field(self, "dagger", dagger)
        set_field(self, "channel", channel)
        set_field(self, "condition", condition)
        if clbits:
            set_field(self, "clbits", clbits)

    @staticmethod
    def gate_operation(gate: str, qubits: tuple[int, ...], params: tuple[Any, ...],
                       condition: Condition | None = None) -> Operation:
        """A gate operation from checked values, without ``__init__``'s call overhead (what
        :meth:`~tyxonq.circuit.operations.layer_methods.LayerMethods.layer` makes by the
        hundred); the same fields ``__init__`` sets."""
        op = _new(Operation)
        fields = op.__dict__
        fields["gate"] = gate
        fields["qubits"] = qubits
        fields["params"] = params
        fields["dagger"] = False
        fields["channel"] = None
        fields["condition"] = condition
        if condition is None:  # the cached :attr:`structure`, made here at once (a layer's hundreds)
            fields["structure"] = (gate, qubits, False)
        return op

    def with_params(self, params: tuple[Any, ...]) -> Operation:
        """This operation with other parameter values (the same structure), made without
        ``dataclasses.replace``'s field walk: traced and host angles swap values on every call.

        Examples
        --------
        >>> Operation("ry", (0,), (0.1,)).with_params((0.2,)).params
        (0.2,)
        """
        op = _new(Operation)
        fields = op.__dict__
        fields.update(self.__dict__)  # the cached structure too: the same but for an outcome's
        fields["params"] = params
        if self.gate in _OUTCOMES:
            fields.pop("structure", None)
        return op

    @property
    def has_angles(self) -> bool:
        """Whether ``params`` are real gate angles (not a ``unitary``'s matrix, a post-selected
        outcome or an annotation's data): what ``parameters()`` lists."""
        return bool(self.params) and self.gate != "unitary" and self.gate not in _NOT_GATES

    @property
    def is_channel(self) -> bool:
        return self.channel is not None

    @property
    def is_dynamic(self) -> bool:
        """A measurement, reset, post-selection or conditioned gate (not a plain gate or channel)."""
        return self.condition is not None or self.gate in _DYNAMIC

    @functools.cached_property
    def structure(self) -> tuple:
        """Everything but the parameter values (an outcome's kept): what plans depend on. Cached
        in the operation, which is immutable: a circuit's structure is read on every call."""
        if self.channel is not None:
            return (self.gate, self.qubits, self.channel.structure)
        if self.condition is None and self.gate not in _NOT_GATES:
            return (self.gate, self.qubits, self.dagger)
        outcome = self.params if self.gate in _OUTCOMES else ()
        return (self.gate, self.qubits, self.dagger, self.clbits, self.condition, outcome)

    @property
    def diagonal_on(self) -> tuple[int, ...]:
        """Positions of the qubits on which the operation is (block-)diagonal for every parameter
        value (see :class:`~tyxonq.circuit.operations.gates.GateSpec`); every qubit of a channel
        whose Kraus operators are all diagonal, none of a ``unitary``."""
        if self.channel is not None:
            return tuple(range(len(self.qubits))) if self.channel.diagonal else ()
        if self.gate == "unitary" or self.gate in _NOT_GATES:
            return ()
        return GATES[self.gate].diagonal_on

    def adjoint(self) -> Operation:
        if self.channel is not None:
            raise ValueError(f"a {self.channel.name} channel has no inverse: a noisy circuit cannot "
                             "be inverted")
        if self.is_dynamic or self.gate in _ANNOTATIONS:
            what = "conditioned gate" if self.gate not in _NOT_GATES else self.gate
            raise ValueError(f"a {what} has no inverse: a circuit with mid-circuit measurements, "
                             "resets or conditions cannot be inverted")
        return Operation(self.gate, self.qubits, self.params, not self.dagger)


def clbits_used(operations: Sequence[Operation]) -> int:
    """One past the highest classical bit the operations write or read (0 for none).

    Examples
    --------
    >>> clbits_used([Operation("measure", (0,), clbits=(2,)),
    ...              Operation("x", (1,), condition=Condition((4,), 1))])
    5
    """
    return max((b + 1 for op in operations
                for b in op.clbits + (op.condition.bits if op.condition is not None else ())), default=0)


def with_angles_at(operations: Sequence[Operation], slots: Sequence[tuple[int, int]],
                   values: Sequence[Any]) -> list[Operation]:
    """``operations`` with parameter ``j`` of operation ``k`` set to each value, for the
    ``(k, j)`` in ``slots``; the other operations are the same objects.

    Examples
    --------
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("h", (0,))]
    >>> with_angles_at(ops, [(0, 0)], [0.5])[0].params
    (0.5,)
    """
    changed = list(operations)
    for (k, j), value in zip(slots, values):
        params = changed[k].params
        changed[k] = changed[k].with_params(params[:j] + (value,) + params[j + 1:])
    return changed


def validate_qubits(qubits: Sequence[Any], num_qubits: int, gate: str) -> tuple[int, ...]:
    """Qubits as ints in ``[0, num_qubits)``, all distinct, or a ``ValueError``/``TypeError``."""
    count = len(qubits)
    if count == 1:  # the common cases, fast: one or two plain ints
        (first,) = qubits
        if type(first) is int and 0 <= first < num_qubits:
            return (first,)
    elif count == 2:
        first, second = qubits
        if type(first) is int and type(second) is int and 0 <= first < num_qubits \
                and 0 <= second < num_qubits and first != second:
            return (first, second)
    elif all(type(q) is int and 0 <= q < num_qubits for q in qubits) and len(set(qubits)) == count:
        return tuple(qubits)
    checked = []
    for qubit in qubits:
        if isinstance(qubit, (bool, np.bool_)) or not isinstance(qubit, (numbers.Integral,)):
            raise TypeError(f"{gate}: qubit {qubit!r} must be an int, got {type(qubit).__name__}")
        qubit = int(qubit)
        if not 0 <= qubit < num_qubits:
            raise ValueError(
                f"{gate}: qubit index {qubit} is out of range; this circuit has {num_qubits} "
                f"qubit(s), indices 0..{num_qubits - 1}"
            )
        checked.append(qubit)
    if len(set(checked)) != len(checked):
        raise ValueError(f"{gate}: qubits {tuple(checked)} repeat a qubit; each must be distinct")
    return tuple(checked)


def validate_angle(value: Any, gate: str, name: str, K: ArrayBackend | None = None) -> Any:
    """A real, finite angle: a Python/NumPy number, or a real scalar array of the backend ``K``
    (the active one when not given, looked up only for a value that is not a plain number).

    A backend array's value is read back to check it is finite (a device synchronisation on a
    GPU); a traced one (inside ``jax.jit`` or ``torch.func.vmap``) has no value to read, and only
    its shape and dtype are checked.
    """
    kind = type(value)
    if (kind is float or kind is np.float64) and math.isfinite(value):  # the common case, fast
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{gate}: {name}={value!r} must be a real number, not a bool")
    if isinstance(value, Dual):  # a traced parameter (exact gradients without autograd)
        validate_angle(value.value, gate, name, K)
        return value
    if isinstance(value, Lanes):  # one angle per element of a batch (vectorize_or_fallback)
        if value.shape != ():
            raise ValueError(f"{gate}: {name} must be a scalar per batch element; got shape {value.shape}")
        if (K or get_backend()).is_complex(value.value):
            raise TypeError(f"{gate}: {name} must be real; got batched values of dtype {value.dtype}")
        return value
    if isinstance(value, numbers.Number) or isinstance(value, np.ndarray):
        array = np.asarray(value)
        if array.shape != ():
            raise ValueError(f"{gate}: {name} must be a scalar; got shape {array.shape}")
        if array.dtype.kind == "c":
            raise TypeError(f"{gate}: {name}={value!r} must be real; rotation angles are real")
        if array.dtype.kind not in "iuf":
            raise TypeError(f"{gate}: {name}={value!r} must be a real number")
        if not math.isfinite(float(array)):
            raise ValueError(f"{gate}: {name}={float(array)!r} is not finite; expected a real angle")
        return value
    K = K or get_backend()
    if K.is_array(value):
        if K.shape(value) not in ((), (1,)):
            raise ValueError(f"{gate}: {name} must be a scalar; got shape {K.shape(value)}")
        if not K.is_floating(value):
            raise TypeError(
                f"{gate}: {name} must be real, a floating array; got dtype {K.dtype_of(value)}"
            )
        number = K.readable_scalar(value)
        if number is not None and not math.isfinite(number):
            raise ValueError(f"{gate}: {name}={number!r} is not finite; expected a real angle")
        return K.reshape(value, ()) if K.shape(value) == (1,) else value
    raise TypeError(f"{gate}: {name}={value!r} must be a real number or a real scalar array")


def matrix_values(K: ArrayBackend, matrix: Any, num_qubits: int, what: str) -> np.ndarray | None:
    """Check a ``2^k x 2^k`` (or ``(2,)*2k``) numeric matrix; return its values on the host.

    Returns ``None`` for a backend array whose values cannot be read here (a tensor made inside
    ``torch.func.grad``/``vmap``): its shape and dtype are still checked, its values are not.
    """
    dimension = 2 ** num_qubits
    on_host = isinstance(matrix, np.ndarray) or not K.is_array(matrix)
    if on_host:
        host = np.asarray(matrix)
        shape, kind = host.shape, host.dtype.kind
    else:
        shape, kind = tuple(K.shape(matrix)), np.dtype(K.dtype_name_of(matrix)).kind
    if shape not in ((dimension, dimension), (2,) * (2 * num_qubits)):
        raise ValueError(
            f"{what}: matrix has shape {shape}; {num_qubits} qubit(s) need ({dimension}, {dimension})"
        )
    if kind not in "iufc":
        raise TypeError(f"{what}: matrix dtype kind {kind!r} is not numeric; pass an int, float "
                        "or complex array")
    if on_host:
        return host.reshape(dimension, dimension)
    try:
        return K.to_numpy(matrix).reshape(dimension, dimension)
    except RuntimeError:  # a transform's wrapped tensor: no host values to check
        return None


def validate_unitary_matrix(matrix: Any, num_qubits: int, K: ArrayBackend) -> Any:
    """A ``2^k x 2^k`` (or ``(2,)*2k``) numeric unitary, checked to the precision of its dtype
    (:func:`unitarity_tolerance`; ``U^dagger U`` formed in double precision).

    Examples
    --------
    >>> single = (np.array([[1, 1], [1, -1]]) / np.sqrt(2)).astype(np.complex64)
    >>> validate_unitary_matrix(single, 1, get_backend("numpy")).dtype.name
    'complex64'
    >>> validate_unitary_matrix(single.astype(complex), 1, get_backend("numpy"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unitary: matrix is not unitary (max |U^dagger U - I| = 3.4e-08 > 1e-08, the tolerance ...
    """
    host = matrix_values(K, matrix, num_qubits, "unitary")
    if host is None:
        return matrix
    wide = host.astype(np.complex128)
    deviation = float(np.max(np.abs(wide.conj().T @ wide - np.eye(host.shape[0]))))
    tolerance = unitarity_tolerance(host.dtype, host.shape[0])
    if not deviation <= tolerance:
        raise ValueError(
            f"unitary: matrix is not unitary (max |U^dagger U - I| = {deviation:.2g} > {tolerance:.2g}, the "
            f"tolerance of a {host.dtype.name} matrix of dimension {host.shape[0]}: pass a unitary matrix, "
            "with entries accurate to its dtype's precision)"
        )
    return matrix


def unitarity_tolerance(dtype: Any, dimension: int) -> float:
    """How far ``U^dagger U`` may be from ``I`` for a ``dimension``-square matrix of ``dtype``:
    :data:`UNITARITY_EPSILONS` ``* dimension`` machine epsilons of a floating dtype, at least
    :data:`UNITARITY_TOLERANCE`.

    Examples
    --------
    >>> unitarity_tolerance(np.complex128, 4), round(unitarity_tolerance(np.complex64, 2), 8)
    (1e-08, 1.91e-06)
    """
    kind = np.dtype(dtype)
    if kind.kind not in "fc":  # integers: exact
        return UNITARITY_TOLERANCE
    return max(UNITARITY_TOLERANCE, UNITARITY_EPSILONS * dimension * float(np.finfo(kind).eps))
