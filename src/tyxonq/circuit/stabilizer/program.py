"""A circuit's operations as a stim program: one stim instruction (or a few) per operation.

Gates become stim's named Clifford gates, found by comparing tableaus (a gate with no single
named equal, such as ``crz(pi)``, becomes its tableau's decomposition); global phases are
dropped. Pauli channels become ``PAULI_CHANNEL_1``/``_2`` (``DEPOLARIZE1``/``2``, ``X_ERROR``,
``Z_ERROR`` where the channel is one), measurements ``M``, resets ``R``, a Pauli conditioned on a
parity of classical bits ``CX rec[-k] q`` per bit (stim's feedback), detectors and logical
observables ``DETECTOR`` and ``OBSERVABLE_INCLUDE``. Classical bit ``b`` is the record of the
last measurement written into it, so rec offsets are counted at each instruction.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.cache_registry import register_function_cache
from ...numerics.memory import ALWAYS_FITS_BYTES, format_bytes, memory_budget, memory_limit
from ..operations.clifford import (
    exact_params,
    feedback_of,
    pauli_of_gate,
    quarter_turns,
    unitary_values,
)
from ..operations.gates import GATES, gate_matrix
from ..operations.operation import Operation

__all__ = ["StimProgram", "ProgramBuilder", "stim_program", "require_stim", "gate_instructions",
           "channel_instruction", "step_text", "tableau_bytes", "tableau_fits", "require_tableau_memory"]

#: stim's names tried first when a gate's tableau has several (aliases come after)
_PREFERRED = ("I", "H", "X", "Y", "Z", "S", "S_DAG", "SQRT_X", "SQRT_X_DAG", "SQRT_Y", "SQRT_Y_DAG", "CX",
              "CY", "CZ", "SWAP", "ISWAP", "ISWAP_DAG", "SQRT_XX", "SQRT_XX_DAG", "SQRT_YY", "SQRT_YY_DAG",
              "SQRT_ZZ", "SQRT_ZZ_DAG")


def require_stim() -> Any:
    """The ``stim`` module, or an ``ImportError`` saying how to install it."""
    try:
        import stim
    except ImportError as error:  # pragma: no cover - stim is in the test extra
        raise ImportError("the stabilizer simulator runs on stim: pip install stim") from error
    return stim


#: stim's tableaus pad each row of qubits to a multiple of this many bits (its SIMD word)
_TABLEAU_WORD = 256
#: host bytes per (padded qubit)^2 of stim's tableau simulator at its peak: a tableau is four
#: n x n bit tables (the X and Z parts of the images of each X_j and Z_j), n^2 / 2 bytes, and the
#: simulator's working copy peaks a little above; measured with stim 1.16 (peak RSS growth of
#: ``TableauSimulator`` of n qubits running a circuit, and of ``Circuit.reference_sample``, at
#: n = 4000 and 16000: 0.61 n^2 and 0.50 n^2 bytes)
_TABLEAU_BYTES_PER_QUBIT_SQUARED = 0.625


def tableau_bytes(num_qubits: int) -> int:
    """Host bytes stim's tableau of ``num_qubits`` qubits takes at its peak (the tableau simulator
    and the reference sample of a compiled sampler make one; it grows as ``n^2``).

    Examples
    --------
    >>> format_bytes(tableau_bytes(10 ** 6))
    '582 GiB'
    """
    padded = -(-num_qubits // _TABLEAU_WORD) * _TABLEAU_WORD
    return math.ceil(_TABLEAU_BYTES_PER_QUBIT_SQUARED * padded ** 2)


def _tableau_budget(needed: int) -> float | None:
    """``None`` when ``needed`` bytes fit in host memory (and under :func:`tyxonq.set_memory_limit`),
    else the bytes available."""
    if needed <= min(ALWAYS_FITS_BYTES, memory_limit()):  # not worth reading the host's free memory
        return None
    available = memory_budget(get_backend("numpy"))  # stim runs in host memory, whatever the backend
    return None if needed <= available else available


def tableau_fits(num_qubits: int) -> bool:
    """Whether stim's tableau of ``num_qubits`` qubits fits in host memory (and the memory limit)."""
    return _tableau_budget(tableau_bytes(num_qubits)) is None


def require_tableau_memory(num_qubits: int, what: str, hint: str) -> None:
    """Raise ``MemoryError`` naming ``what`` and the sizes, before stim makes a tableau of
    ``num_qubits`` qubits that does not fit in host memory (or under the memory limit); ``hint``
    says what to do instead.

    Examples
    --------
    >>> import tyxonq as tq
    >>> with tq.use_memory_limit("1 GiB"):
    ...     require_tableau_memory(10 ** 6, "sample()", "Use fewer qubits.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    MemoryError: sample() needs 582 GiB of host memory for stim's tableau of 1,000,000 qubits ...
    """
    needed = tableau_bytes(num_qubits)
    available = _tableau_budget(needed)
    if available is not None:
        where = "under tq.set_memory_limit" if available >= memory_limit() else "on this host"
        raise MemoryError(f"{what} needs {format_bytes(needed)} of host memory for stim's tableau of "
                          f"{num_qubits:,} qubits (it grows as n^2) but {format_bytes(available)} is "
                          f"available {where}. {hint}")


@dataclass(frozen=True)
class StimProgram:
    """A circuit as a stim circuit, and where its classical bits are in stim's measurement record.

    Attributes
    ----------
    stim_circuit : stim.Circuit
        The stim instructions of the operations (no final measurement); not to be changed (a
        copy is what :meth:`circuit` gives out).
    num_measurements : int
        Records the circuit writes.
    clbit_records : tuple
        Per classical bit, the record index of its last write (``None``: never written, reads 0).
    num_detectors, num_observables : int
        ``DETECTOR`` instructions, and one past the highest logical observable index.
    """

    stim_circuit: Any
    num_measurements: int
    clbit_records: tuple[int | None, ...]
    num_detectors: int
    num_observables: int

    def circuit(self, final_measurement: int = 0) -> Any:
        """A copy of the ``stim.Circuit``, measuring qubits ``0 .. final_measurement - 1`` at the
        end."""
        stim = require_stim()
        copy = self.stim_circuit.copy()
        if final_measurement:
            copy += stim.Circuit("M " + " ".join(map(str, range(final_measurement))))
        return copy


@register_function_cache
@functools.lru_cache(maxsize=None)
def _named_tableaus(num_qubits: int) -> dict[str, str]:
    stim = require_stim()
    found: dict[str, str] = {}
    names = list(_PREFERRED) + sorted(stim.gate_data())
    for name in names:
        data = stim.gate_data(name)
        if data.is_unitary and not data.takes_pauli_targets and data.is_two_qubit_gate == (num_qubits == 2) \
                and data.is_single_qubit_gate == (num_qubits == 1):
            found.setdefault(str(data.tableau), data.name)
    return found


def _tableau_instructions(matrix: np.ndarray) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``(stim name, positions)`` steps of a Clifford matrix (up to phase; qubit 0 its most
    significant)."""
    stim = require_stim()
    tableau = stim.Tableau.from_unitary_matrix(np.asarray(matrix, dtype=complex), endian="big")
    k = len(tableau)
    if k <= 2 and (name := _named_tableaus(k).get(str(tableau))) is not None:
        return ((name, tuple(range(k))),)
    steps = []
    for instruction in tableau.to_circuit("elimination"):
        targets = [t.value for t in instruction.targets_copy()]
        width = 2 if stim.gate_data(instruction.name).is_two_qubit_gate else 1
        steps += [(instruction.name, tuple(targets[i:i + width])) for i in range(0, len(targets), width)]
    return tuple(steps)


@register_function_cache
@functools.lru_cache(maxsize=4096)
def _table_instructions(gate: str, turns: tuple[int, ...], dagger: bool) -> tuple:
    if gate.startswith("exp:"):
        letters, k = gate[4:], (-turns[0] if dagger else turns[0]) % 4
        if k == 0:
            return ()
        if k == 2:
            return tuple((letter, (p,)) for p, letter in enumerate(letters))
        return (("SPP" if k == 1 else "SPP_DAG", tuple(range(len(letters))), letters),)
    if gate in ("gphase", "i"):
        return ()
    params = exact_params(turns) if GATES[gate].is_parametrised else ()
    matrix = gate_matrix(get_backend("numpy"), gate, params, dagger)
    return _tableau_instructions(np.asarray(matrix))


def gate_instructions(op: Operation) -> tuple:
    """The stim steps of a (Clifford, unconditioned) gate: ``(name, positions)`` or, for a Pauli
    product gate, ``(name, positions, letters)``; positions index ``op.qubits``."""
    if op.gate == "unitary":
        return _tableau_instructions(unitary_values(op))
    if op.gate == "gphase":
        return ()
    turns = quarter_turns(op) if op.params else ()
    return _table_instructions(op.gate, turns, op.dagger)


def _parameter(channel: Any, name: str) -> float | None:
    value = channel.parameters.get(name)
    return float(value) if isinstance(value, (int, float, np.floating)) else None


def channel_instruction(channel: Any, qubits: Sequence[int]) -> str:
    """A Pauli channel as one stim noise instruction on ``qubits``: by its name where stim has
    one (its parameter as given), else ``PAULI_CHANNEL_1``/``_2`` of its Pauli probabilities."""
    targets = " ".join(map(str, qubits))
    named = {"depolarizing": f"DEPOLARIZE{len(qubits)}", "bit_flip": "X_ERROR", "phase_flip": "Z_ERROR"}
    if channel.name in named and (p := _parameter(channel, "p")) is not None:
        return f"{named[channel.name]}({p!r}) {targets}"
    if len(qubits) > 2:
        raise ValueError(f"{channel.name}: a stabilizer simulation takes Pauli channels on one or two "
                         f"qubits; this one acts on {len(qubits)}")
    if channel.name == "pauli" and None not in (given := [_parameter(channel, n)
                                                          for n in ("px", "py", "pz")]):
        probabilities = given
    else:
        probabilities = [float(p) for p in channel.pauli_probabilities()[1:]]
    return f"PAULI_CHANNEL_{len(qubits)}({', '.join(repr(p) for p in probabilities)}) {targets}"


def step_text(step: tuple, qubits: tuple[int, ...]) -> str:
    if len(step) == 3:  # a Pauli product: "SPP X0*Z3"
        return f"{step[0]} " + "*".join(f"{letter}{qubits[p]}" for p, letter in zip(step[1], step[2]))
    return f"{step[0]} " + " ".join([str(qubits[p]) for p in step[1]])


class ProgramBuilder:
    """The stim program of a circuit, made as its operations are added: each operation's lines
    are written when it comes (a fixed gate's name is looked up once), and every
    :data:`PARSE_CHUNK` lines are parsed into the stim circuit, so a result finds the program
    (nearly) made."""

    #: lines parsed into the stim circuit at once
    PARSE_CHUNK = 4096

    def __init__(self) -> None:
        self._circuit = require_stim().Circuit()
        self._pending: list[str] = []
        self._records: dict[int, int] = {}
        self._measured = self._detectors = self._observables = 0
        self._fixed: dict[tuple, str] = {}  # (gate, dagger) of a fixed gate -> its stim name, or ""

    def add(self, op: Operation) -> None:
        """Write the lines of ``op`` (already checked to be runnable)."""
        lines = self._pending
        gate = op.gate
        if not op.params and op.channel is None and op.condition is None and gate in GATES:
            name = self._fixed.get((gate, op.dagger))
            if name is None:
                steps = gate_instructions(op)
                whole = len(steps) == 1 and steps[0][1] == tuple(range(len(op.qubits)))
                name = self._fixed[(gate, op.dagger)] = steps[0][0] if whole else ""
            if name:
                qubits = op.qubits
                lines.append(f"{name} {qubits[0]}" if len(qubits) == 1 else f"{name} {qubits[0]} {qubits[1]}"
                             if len(qubits) == 2 else f"{name} {' '.join(map(str, qubits))}")
            elif gate != "gphase":
                lines += [step_text(step, op.qubits) for step in gate_instructions(op)]
        elif op.channel is not None:
            lines.append(channel_instruction(op.channel, op.qubits))
        elif gate == "measure":
            lines.append(f"M {op.qubits[0]}")
            self._records[op.clbits[0]] = self._measured
            self._measured += 1
        elif gate == "reset":
            lines.append(f"R {op.qubits[0]}")
        elif gate in ("detector", "observable"):
            targets = " ".join(f"rec[{self._records[b] - self._measured}]" for b in op.clbits
                               if b in self._records)
            if gate == "detector":
                coordinates = f"({', '.join(repr(float(c)) for c in op.params)})" if op.params else ""
                lines.append(f"DETECTOR{coordinates} {targets}")
                self._detectors += 1
            else:
                lines.append(f"OBSERVABLE_INCLUDE({int(op.params[0])}) {targets}")
                self._observables = max(self._observables, int(op.params[0]) + 1)
        elif op.condition is not None:
            bits, flip = feedback_of(op.condition)
            for position, letter in enumerate(pauli_of_gate(op)):
                if letter == "I":
                    continue
                qubit = op.qubits[position]
                lines += [f"C{letter} rec[{self._records[b] - self._measured}] {qubit}" for b in bits
                          if b in self._records]
                if flip:
                    lines.append(f"{letter} {qubit}")
        else:
            lines += [step_text(step, op.qubits) for step in gate_instructions(op)]
        if len(lines) >= self.PARSE_CHUNK:
            self._parse()

    def _parse(self) -> None:
        if self._pending:
            self._circuit += require_stim().Circuit("\n".join(self._pending))
            self._pending = []

    def program(self, num_clbits: int) -> StimProgram:
        """The program of the operations added so far."""
        self._parse()
        records = tuple(self._records.get(b) for b in range(num_clbits))
        return StimProgram(self._circuit, self._measured, records, self._detectors, self._observables)


def stim_program(operations: Sequence[Operation], num_clbits: int) -> StimProgram:
    """The stim program of ``operations`` (each already checked to be runnable)."""
    builder = ProgramBuilder()
    for op in operations:
        builder.add(op)
    return builder.program(num_clbits)
