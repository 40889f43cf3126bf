"""Which operations a stabilizer simulator can run: Clifford gates, Pauli channels, measurements,
resets and Pauli gates conditioned on the parity of classical bits.

A gate is Clifford when it maps every Pauli string to a Pauli string under conjugation. The
fixed gates of the table are known (``h``, ``s``, ``cx``, ...); a parametrised gate is Clifford
at angles within :data:`CLIFFORD_ANGLE_TOLERANCE` of a multiple of ``pi/2`` (an absolute distance,
at any size of angle) where its matrix,
built at the exact angles, passes the conjugation test (``rx(pi/2)`` is, ``cphase(pi/2)`` is not);
a ``unitary`` is tested on its matrix. The answers depend on the operation's structure and its
quarter turns only, so they are cached.

Examples
--------
>>> from tyxonq.circuit.operations.operation import Operation
>>> clifford_reason(Operation("rx", (0,), (3.141592653589793 / 2,))) is None
True
>>> clifford_reason(Operation("t", (0,)))
't is not a Clifford gate'
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ...numerics import get_backend
from ...numerics.cache_registry import register_function_cache
from ...numerics.dual import Dual
from ...numerics.lanes import Lanes
from ...operators.pauli import PAULI_LETTERS, pauli_coefficients
from .gates import GATES, gate_matrix
from .operation import Condition, Operation

__all__ = ["CLIFFORD_ANGLE_TOLERANCE", "CLIFFORD_GATES", "NonCliffordError", "clifford_reason",
           "quarter_turns", "exact_params", "pauli_rotations", "is_quarter_turn", "pauli_of_gate",
           "feedback_of", "is_clifford_matrix"]

#: an angle within this (an absolute distance, whatever the angle's size) of a multiple of pi/2
#: counts as that multiple
CLIFFORD_ANGLE_TOLERANCE = 1e-9
#: the fixed gates of the table that are Clifford
CLIFFORD_GATES = frozenset({"i", "h", "x", "y", "z", "s", "sdg", "sx", "sxdg", "cx", "cy", "cz", "swap",
                            "iswap", "ecr"})
_QUARTER = math.pi / 2
_HINT = "simulate it with tq.Circuit (or tq.DMCircuit with noise), which take any gate"


class NonCliffordError(ValueError):
    """An operation a stabilizer simulator cannot run (a non-Clifford gate or angle, a channel that
    is not a Pauli channel, a condition that is not a parity of bits)."""


def _host_angle(value: Any, gate: str) -> float:
    if isinstance(value, (Dual, Lanes)):
        raise NonCliffordError(f"{gate}: a stabilizer simulation needs concrete angles, not traced or "
                               "batched ones (gradients at Clifford angles need tq.Circuit)")
    if isinstance(value, (int, float, np.number, np.ndarray)):
        return float(value)
    K = get_backend()
    try:
        return float(K.to_numpy(K.detach(value)))
    except Exception as error:  # a tracer inside jit/vmap
        raise NonCliffordError(f"{gate}: a stabilizer simulation needs concrete angles; this one has no "
                               "value here (inside a traced function)") from error


def quarter_turns(op: Operation) -> tuple[int, ...]:
    """Each parameter of a parametrised gate as a count of quarter turns (``theta = k pi/2``,
    ``k`` in ``0..7``, as controlled rotations have period ``4 pi``; an adjoint's are the gate's), or
    :class:`NonCliffordError` naming the gate and angle when one is not such a multiple.

    Examples
    --------
    >>> quarter_turns(Operation("rz", (0,), (-3.141592653589793,)))
    (6,)
    >>> quarter_turns(Operation("rz", (0,), (1e9,)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tyxonq.circuit.operations.clifford.NonCliffordError: rz(theta=1e+09) is not a Clifford gate: ...
    """
    turns = []
    for value, name in zip(op.params, GATES[op.gate].param_names):
        angle = _host_angle(value, op.gate)
        steps = _quarter_steps(angle)
        if steps is None:
            raise NonCliffordError(f"{op.gate}({name}={angle:.6g}) is not a Clifford gate: its angle is "
                                   f"not a multiple of pi/2 (within {CLIFFORD_ANGLE_TOLERANCE:g}); {_HINT}")
        turns.append(steps)
    return tuple(turns)


def _quarter_steps(angle: float) -> int | None:
    """``k`` in ``0..7`` when ``angle`` is within :data:`CLIFFORD_ANGLE_TOLERANCE` of ``k pi/2``
    modulo ``4 pi`` (a controlled rotation's period), else ``None`` (a non-finite angle too).

    The half angle is reduced to ``(-pi, pi]`` by ``atan2(sin, cos)``: the sine and cosine reduce
    their argument exactly (as the dense simulators' gate matrices do), so the distance found is
    the float's own, to a few ``1e-16``, at any size (``x mod 2pi`` in floating point is off by
    ``|x| 2e-16``, far above the tolerance for large ``x``).
    """
    if not math.isfinite(angle):
        return None
    half = angle / 2  # exact
    reduced = math.atan2(math.sin(half), math.cos(half))
    eighths = round(reduced / (_QUARTER / 2))
    if not 2 * abs(reduced - eighths * (_QUARTER / 2)) <= CLIFFORD_ANGLE_TOLERANCE:
        return None
    return eighths % 8


def exact_params(turns: tuple[int, ...]) -> tuple[float, ...]:
    """The angles of ``turns`` quarter turns, exactly (cosines and sines of 0 and +-1)."""
    return tuple(k * _QUARTER for k in turns)


def is_clifford_matrix(matrix: np.ndarray, tolerance: float | None = None) -> bool:
    """Whether ``U`` maps each ``X_j`` and ``Z_j`` to a signed Pauli string (``U P U^dagger``).

    Examples
    --------
    >>> hadamard = np.array([[1, 1], [1, -1]]) / np.sqrt(2)
    >>> is_clifford_matrix(hadamard), is_clifford_matrix(np.diag([1, 1j ** 0.5]))
    (True, False)
    """
    matrix = np.asarray(matrix)
    if tolerance is None:  # single precision carries ~1e-7 of rounding
        tolerance = 1e-5 if matrix.dtype in (np.complex64, np.float32) else 1e-8
    matrix = matrix.astype(complex)
    k = matrix.shape[0].bit_length() - 1
    for j in range(k):
        for letter in ("X", "Z"):
            pauli = np.kron(np.kron(np.eye(2 ** j), _LETTER[letter]), np.eye(2 ** (k - j - 1)))
            if _single_pauli(matrix @ pauli @ matrix.conj().T, tolerance) is None:
                return False
    return True


_LETTER = {"X": np.array([[0, 1], [1, 0]], dtype=complex), "Z": np.diag([1.0, -1.0]).astype(complex)}


def _single_pauli(matrix: np.ndarray, tolerance: float) -> tuple[int, complex] | None:
    """``(index, coefficient)`` when ``matrix`` is a multiple of modulus 1 of one Pauli string."""
    coefficients = pauli_coefficients(matrix)
    index = int(np.argmax(np.abs(coefficients)))
    rest = np.delete(coefficients, index)
    if abs(abs(coefficients[index]) - 1.0) > tolerance or (rest.size and np.max(np.abs(rest)) > tolerance):
        return None
    return index, complex(coefficients[index])


@register_function_cache
@functools.lru_cache(maxsize=4096)
def _table_gate_is_clifford(gate: str, turns: tuple[int, ...]) -> bool:
    if not GATES[gate].is_parametrised:
        return gate in CLIFFORD_GATES
    if gate.startswith("exp:"):  # exp(-i k pi/4 P): 1, SPP, P, SPP^dagger
        return True
    return is_clifford_matrix(np.asarray(gate_matrix(get_backend("numpy"), gate, exact_params(turns))))


def clifford_reason(op: Operation) -> str | None:
    """Why ``op`` cannot run on a stabilizer simulator, or ``None`` when it can.

    Examples
    --------
    >>> import tyxonq as tq
    >>> clifford_reason(Operation("channel", (0,), channel=tq.channels.amplitude_damping(0.1)))[:40]
    'amplitude_damping is not a Pauli channel'
    """
    try:
        check_clifford(op)
    except NonCliffordError as error:
        return str(error).split(";")[0]
    return None


def check_clifford(op: Operation) -> None:
    """Raise :class:`NonCliffordError` (naming the operation and what to do) unless ``op`` can run
    on a stabilizer simulator."""
    if op.channel is not None:
        if op.channel.pauli_probabilities() is None:
            raise NonCliffordError(f"{op.channel.name} is not a Pauli channel; a stabilizer simulation takes "
                                   "depolarizing, pauli, bit_flip, phase_flip and other Pauli channels: "
                                   "simulate it with tq.DMCircuit")
        return
    if op.gate in ("measure", "reset", "detector", "observable", "gphase"):
        return
    if op.gate == "post_select":
        raise NonCliffordError("post_select is not run by the stabilizer simulator (its samples are "
                               "unconditioned); post-select shots from sample(), or use tq.Circuit")
    if op.condition is not None:
        pauli_of_gate(op)
        feedback_of(op.condition)
        return
    if op.gate == "unitary":
        matrix = unitary_values(op)
        if not is_clifford_matrix(matrix):
            raise NonCliffordError(f"unitary on qubits {op.qubits} is not a Clifford matrix; {_HINT}")
        return
    if not _table_gate_is_clifford(op.gate, quarter_turns(op)):
        if GATES[op.gate].is_parametrised:
            angles = ", ".join(f"{_host_angle(v, op.gate):.6g}" for v in op.params)
            raise NonCliffordError(f"{op.gate}({angles}) is not a Clifford gate at these angles; {_HINT}")
        raise NonCliffordError(f"{op.gate} is not a Clifford gate; {_HINT}")


def unitary_values(op: Operation) -> np.ndarray:
    value = op.params[0]
    host = value if isinstance(value, np.ndarray) else np.asarray(get_backend().to_numpy(value))
    host = host.reshape(2 ** len(op.qubits), -1)
    return host.conj().T if op.dagger else host


def pauli_of_gate(op: Operation) -> str:
    """The Pauli string (letters on the gate's qubits; ``""`` for a phase) a gate equals up to a
    global phase, for a gate conditioned on classical bits; else :class:`NonCliffordError`
    (a stabilizer simulation feeds back Paulis only).

    Examples
    --------
    >>> pauli_of_gate(Operation("rx", (2,), (3.141592653589793,)))
    'X'
    """
    if op.gate in ("gphase", "i"):
        return ""
    if op.gate == "unitary":
        matrix = unitary_values(op)
    elif GATES[op.gate].is_parametrised:
        matrix = gate_matrix(get_backend("numpy"), op.gate, exact_params(quarter_turns(op)), op.dagger)
    else:
        matrix = gate_matrix(get_backend("numpy"), op.gate, (), op.dagger)
    found = _single_pauli(np.asarray(matrix, dtype=complex).reshape(2 ** len(op.qubits), -1), 1e-5)
    if found is None:
        raise NonCliffordError(f"a conditioned {op.gate} is not a Pauli gate: a stabilizer simulation "
                               "conditions Pauli gates (x, y, z, ...) on classical bits only; use tq.Circuit")
    index, k = found[0], len(op.qubits)
    letters = "".join(PAULI_LETTERS[(index >> (2 * (k - 1 - j))) & 3] for j in range(k))
    return "" if set(letters) <= {"I"} else letters


def feedback_of(condition: Condition) -> tuple[tuple[int, ...], int]:
    """A condition as ``(bits, flip)``: the gate applies when the XOR of ``bits`` and ``flip`` is 1
    (a parity condition, or one bit equal or unequal to a value), else :class:`NonCliffordError`.

    Examples
    --------
    >>> feedback_of(Condition((3,), 0))  # apply when bit 3 reads 0
    ((3,), 1)
    """
    if condition.kind == "parity":
        return condition.bits, 1 - condition.value
    if len(condition.bits) == 1:
        flip = 1 - condition.value if condition.kind == "equals" else condition.value
        return condition.bits, flip
    raise NonCliffordError(f"a condition on the value of {len(condition.bits)} bits is not a parity: a "
                           "stabilizer simulation conditions gates on one bit or on the parity of "
                           "several (cond(bits, parity=True)); use tq.Circuit")


#: gates as products of Pauli rotations exp(-i phi P / 2), in the order applied: per factor, its
#: letters on the gate's qubits, the parameter it takes (None: a fixed angle) and the factor or angle
_ROTATION_FORMS = {
    "rx": (("X", 0, 1.0),), "ry": (("Y", 0, 1.0),), "rz": (("Z", 0, 1.0),), "phase": (("Z", 0, 1.0),),
    "rxx": (("XX", 0, 1.0),), "ryy": (("YY", 0, 1.0),), "rzz": (("ZZ", 0, 1.0),),
    "crx": (("IX", 0, 0.5), ("ZX", 0, -0.5)), "cry": (("IY", 0, 0.5), ("ZY", 0, -0.5)),
    "crz": (("IZ", 0, 0.5), ("ZZ", 0, -0.5)), "cphase": (("ZI", 0, 0.5), ("IZ", 0, 0.5), ("ZZ", 0, -0.5)),
    "u": (("Z", 2, 1.0), ("Y", 0, 1.0), ("Z", 1, 1.0)),  # rz(lam), ry(theta), rz(phi)
    "t": (("Z", None, math.pi / 4),), "tdg": (("Z", None, -math.pi / 4),),
}


def pauli_rotations(op: Operation) -> list[tuple[str, float]]:
    """A gate as Pauli rotations ``exp(-i phi P / 2)`` up to a global phase, in the order applied:
    ``(letters on op.qubits, phi)`` each; :class:`NonCliffordError` for a gate that is not such a
    product (``ccx``, a ``unitary``, a conditioned gate).

    Examples
    --------
    >>> pauli_rotations(Operation("crz", (0, 1), (1.0,)))
    [('IZ', 0.5), ('ZZ', -0.5)]
    """
    if op.condition is not None or op.channel is not None:
        raise NonCliffordError(f"a conditioned or noisy {op.gate} at a non-Clifford angle is not "
                               f"simulated by the stabilizer circuit; {_HINT}")
    if op.gate.startswith("exp:"):
        form = ((op.gate[4:], 0, 1.0),)
    elif op.gate in _ROTATION_FORMS:
        form = _ROTATION_FORMS[op.gate]
    else:
        raise NonCliffordError(f"{op.gate} is not a Clifford gate nor a product of Pauli rotations; {_HINT}")
    angles = [_host_angle(value, op.gate) for value in op.params]
    steps = [(letters, factor if index is None else factor * angles[index])
             for letters, index, factor in form]
    return [(letters, -phi) for letters, phi in reversed(steps)] if op.dagger else steps


def is_quarter_turn(angle: float) -> bool:
    """Whether ``angle`` is a multiple of ``pi/2`` (to :data:`CLIFFORD_ANGLE_TOLERANCE`, absolute).

    Examples
    --------
    >>> is_quarter_turn(3 * math.pi / 2), is_quarter_turn(1e9), is_quarter_turn(float("nan"))
    (True, False, False)
    """
    return _quarter_steps(angle) is not None
