"""A ``stim.Circuit`` read into a stabilizer circuit, instruction by instruction.

``REPEAT`` blocks are unrolled (and ``SHIFT_COORDS`` applied) by stim's ``flattened``; each
measurement writes the next classical bit (stim's record ``k`` is bit ``k``). Gates with a name
in the gate table keep it, stim's other unitary gates (every one it has: ``SQRT_Y``, ``C_XYZ``,
``SQRT_XX``, ``XCY``, ...) become a ``unitary`` of their exact matrix (stim's own is single
precision, :func:`exact_clifford_matrix`); noise
becomes Pauli channels; ``M``/``MR``/``R`` in any basis become measurements and resets with basis
changes (``MR(p)``'s flip probability a ``bit_flip`` before the measurement, an inverted target
``!q`` an ``x`` around it); ``CX rec[-k] q`` and its kin conditioned Paulis; ``DETECTOR`` and
``OBSERVABLE_INCLUDE`` detectors and observables; ``TICK`` and ``QUBIT_COORDS`` are dropped.
Anything else (``MPP``, heralded or correlated errors, sweep bits) raises a ``ValueError``
naming it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ...operators import channels
from .program import require_stim

__all__ = ["from_stim", "exact_clifford_matrix"]

_NAMES = {"I": "i", "H": "h", "X": "x", "Y": "y", "Z": "z", "S": "s", "S_DAG": "sdg", "SQRT_X": "sx",
          "SQRT_X_DAG": "sxdg", "CX": "cx", "CY": "cy", "CZ": "cz", "SWAP": "swap", "ISWAP": "iswap"}
#: gates before a Z measurement that measure in another basis, and after it, back
_TO_Z = {"X": ("h",), "Y": ("sdg", "h"), "Z": ()}
_FROM_Z = {"X": ("h",), "Y": ("h", "s"), "Z": ()}
_FEEDBACK = {"CX": "x", "CY": "y", "CZ": "z", "XCZ": "x", "YCZ": "y"}
_IGNORED = {"TICK", "QUBIT_COORDS", "SHIFT_COORDS"}


def _noise(name: str, args: list[float]) -> Any:
    if name == "X_ERROR":
        return channels.bit_flip(args[0])
    if name == "Z_ERROR":
        return channels.phase_flip(args[0])
    if name == "Y_ERROR":
        return channels.pauli(0.0, args[0], 0.0)
    if name in ("DEPOLARIZE1", "DEPOLARIZE2"):
        return channels.depolarizing(args[0], num_qubits=int(name[-1]))
    if name == "PAULI_CHANNEL_1":
        return channels.pauli(*args)
    if name == "PAULI_CHANNEL_2":
        from ...operators.pauli import pauli_matrix

        strings = [a + b for a in "IXYZ" for b in "IXYZ"]
        weights = [1.0 - sum(args)] + list(args)
        return channels.kraus([np.sqrt(max(w, 0.0)) * pauli_matrix(s) for w, s in zip(weights, strings)])
    return None


def from_stim(cls: type, circuit: Any) -> Any:
    """The circuit of class ``cls`` (a stabilizer circuit) with the operations of a ``stim.Circuit``
    (or its text)."""
    stim = require_stim()
    if isinstance(circuit, str):
        circuit = stim.Circuit(circuit)
    if not isinstance(circuit, stim.Circuit):
        raise TypeError(f"circuit must be a stim.Circuit or its text; got {type(circuit).__name__}")
    result = cls(max(circuit.num_qubits, 1))
    for instruction in circuit.flattened():
        _read(result, instruction, stim)
    return result


def _read(c: Any, instruction: Any, stim: Any) -> None:
    name, args = instruction.name, instruction.gate_args_copy()
    targets = instruction.targets_copy()
    data = stim.gate_data(name)
    if name in _IGNORED:
        return
    if name in ("DETECTOR", "OBSERVABLE_INCLUDE"):
        bits = [c.num_clbits + t.value for t in targets]  # rec[-k]: the k-th measurement back
        if name == "DETECTOR":
            c.detector(bits, coords=args)
        else:
            c.observable_include(bits, int(args[0]))
        return
    if name in ("SPP", "SPP_DAG"):  # exp(-+ i pi/4 P) for each product P (exp(+- i pi/4 P) for -P)
        for letters, qubits, negated in _products(targets):
            clockwise = (name == "SPP") != negated
            c.exp_pauli(letters, qubits, np.pi / 2 if clockwise else -np.pi / 2)
        return
    if any(t.is_sweep_bit_target for t in targets) or any(t.is_combiner for t in targets):
        raise ValueError(f"from_stim: {name} with sweep bits or Pauli products is not supported")
    if data.is_noisy_gate and not data.produces_measurements:
        channel = _noise(name, args)
        if channel is None:
            raise ValueError(f"from_stim: stim's {name} is not supported (a Pauli channel on one or two "
                             "qubits is)")
        width = channel.num_qubits
        for i in range(0, len(targets), width):
            c.channel(channel, *[t.value for t in targets[i:i + width]])
        return
    if data.produces_measurements or data.is_reset:
        _measure_or_reset(c, name, args, targets)
        return
    if not data.is_unitary:
        raise ValueError(f"from_stim: stim's {name} is not supported by the stabilizer circuit")
    width = 2 if data.is_two_qubit_gate else 1
    for i in range(0, len(targets), width):
        pair = targets[i:i + width]
        if any(t.is_measurement_record_target for t in pair):
            _feedback(c, name, pair)
        elif name in _NAMES:
            getattr(c, _NAMES[name])(*[t.value for t in pair])
        else:
            c.unitary(*[t.value for t in pair], matrix=_gate_matrix(name).copy())


@register_function_cache
@functools.lru_cache(maxsize=None)
def _gate_matrix(name: str) -> np.ndarray:
    """The exact matrix (read-only; qubit 0 the most significant) of stim's unitary gate ``name``."""
    stim = require_stim()
    matrix = exact_clifford_matrix(stim.Tableau.from_named_gate(name).to_unitary_matrix(endian="big"))
    matrix.setflags(write=False)
    return matrix


def exact_clifford_matrix(matrix: Any) -> np.ndarray:
    """A Clifford unitary given in low precision (stim's are ``complex64``), exactly: in stim's
    choice of global phase, the real and imaginary parts of its entries are 0 or
    ``+-2^(-j/2)``, each set to the nearest such value in double precision.

    Examples
    --------
    >>> import stim
    >>> single = stim.Tableau.from_named_gate("C_XYZ").to_unitary_matrix(endian="big")
    >>> exact = exact_clifford_matrix(single)
    >>> single.dtype.name, exact.tolist() == (np.array([[1, -1j], [1, 1j]]) * 2 ** -0.5).tolist()
    ('complex64', True)
    """
    given = np.asarray(matrix)
    parts = np.stack([given.real, given.imag]).astype(np.float64)
    qubits = given.shape[0].bit_length() - 1
    smallest = 2.0 ** (-(qubits + 1) / 2)  # of a nonzero part: |entry| >= 2^(-k/2), times cos(pi/4)
    nonzero = np.abs(parts) > smallest / 2
    exponents = np.round(-2 * np.log2(np.where(nonzero, np.abs(parts), 1.0)))
    exact_parts = np.where(nonzero, np.sign(parts) * 2.0 ** (-exponents / 2), 0.0)
    exact = exact_parts[0] + 1j * exact_parts[1]
    unitary = np.max(np.abs(exact.conj().T @ exact - np.eye(exact.shape[0]))) <= 1e-12
    if not unitary or np.max(np.abs(exact_parts - parts)) > 1e-5:
        raise ValueError("from_stim: a gate matrix is not a Clifford unitary in stim's phase convention "
                         "(entries' parts 0 or +-2^(-j/2))")
    return exact


def _products(targets: list) -> list[tuple[str, tuple[int, ...], bool]]:
    """Pauli products ``!X0*Z3 Y1`` as ``[("XZ", (0, 3), True), ("Y", (1,), False)]``: letters,
    qubits, and whether the product is negated (an odd number of inverted targets ``!``)."""
    products: list[tuple[str, list[int], bool]] = []
    joined = False
    for target in targets:
        if target.is_combiner:
            joined = True
            continue
        letter = "X" if target.is_x_target else "Y" if target.is_y_target else "Z"
        inverted = bool(target.is_inverted_result_target)
        if joined:
            letters, qubits, negated = products[-1]
            products[-1] = (letters + letter, qubits + [target.value], negated != inverted)
        else:
            products.append((letter, [target.value], inverted))
        joined = False
    return [(letters, tuple(qubits), negated) for letters, qubits, negated in products]


def _feedback(c: Any, name: str, pair: list) -> None:
    record = [t for t in pair if t.is_measurement_record_target]
    qubit = [t for t in pair if not t.is_measurement_record_target]
    if name not in _FEEDBACK or len(record) != 1 or len(qubit) != 1 or \
            (name in ("XCZ", "YCZ") and not pair[1].is_measurement_record_target) or \
            (name in ("CX", "CY") and not pair[0].is_measurement_record_target):
        raise ValueError(f"from_stim: {name} on a measurement record is supported as a controlled Pauli "
                         "(CX rec[-k] q, CY rec[-k] q, CZ rec[-k] q)")
    getattr(c.cond(c.num_clbits + record[0].value), _FEEDBACK[name])(qubit[0].value)


def _measure_or_reset(c: Any, name: str, args: list[float], targets: list) -> None:
    basis = name[-1] if name[-1] in "XYZ" and name not in ("R", "M", "MR") else "Z"
    core = name[:-1] if basis != "Z" or name[-1] == "Z" else name
    if core not in ("M", "R", "MR"):
        raise ValueError(f"from_stim: stim's {name} is not supported (M, MR, R in the X, Y or Z basis are)")
    for target in targets:
        qubit = target.value
        if core == "R":
            c.reset(qubit)
            for gate in _FROM_Z[basis]:
                getattr(c, gate)(qubit)
            continue
        for gate in _TO_Z[basis]:
            getattr(c, gate)(qubit)
        if args and args[0]:
            if core != "MR":
                raise ValueError(f"from_stim: {name}({args[0]}) flips the record only, which a channel "
                                 "cannot do without flipping the qubit too; "
                                 "MR(p) (reset after) is read exactly")
            c.bit_flip(qubit, p=args[0])
        if target.is_inverted_result_target:
            c.x(qubit)
        c.measure(qubit)
        if target.is_inverted_result_target:
            c.x(qubit)
        if core == "MR":
            c.reset(qubit)
        for gate in _FROM_Z[basis]:
            getattr(c, gate)(qubit)
