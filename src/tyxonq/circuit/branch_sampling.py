"""Shots of a dynamic circuit drawn exactly, with shots that share outcomes sharing work.

The shots start as one *branch*: a state vector with a shot count and the classical register.
Gates act on every branch at once (a stack of states, one backend call per gate); a gate
conditioned on classical bits acts on the branches whose register satisfies it. A mid-circuit
measurement splits each branch's shots binomially between the two outcomes (probabilities from
the branch's state), keeping the outcomes that received shots, each projected and renormalised;
a reset is an unrecorded measurement followed by a flip on outcome 1; a channel splits the shots
multinomially between its Kraus operators (the trajectory unravelling, exact per shot); a
post-selection keeps the shots that pass (binomially), and the caller draws more until enough
passed. At the end every branch's shots are drawn from its state's probabilities.

The work is proportional to the number of distinct branches alive (at most the number of shots,
and usually far fewer: a deterministic syndrome is one branch for every shot), not to the shots;
a stack larger than :data:`BATCH_ENTRIES` amplitudes is split and its parts finished one after
the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..numerics.protocol import ArrayBackend
from .operations.gates import gate_matrix
from .operations.operation import Condition, Operation
from .statevector.placement import apply_placed, place

__all__ = ["Branches", "branch_samples", "BATCH_ENTRIES", "BRANCH_QUBITS"]

#: amplitudes one stack of branches may hold (a larger one is finished in parts)
BATCH_ENTRIES = 2 ** 24
#: shots are drawn by branches of state vectors up to this many qubits; wider dynamic circuits
#: sample their deferred-measurement circuit (:mod:`tyxonq.circuit.dynamic`)
BRANCH_QUBITS = 24


@dataclass
class Branches:
    """Branches: ``states`` ``(B, 2^n)`` on the backend, ``registers`` ``(B, m)`` and ``counts``
    ``(B,)`` on the host."""

    states: Any
    registers: np.ndarray
    counts: np.ndarray


def branch_samples(K: ArrayBackend, num_qubits: int, num_clbits: int, operations: Sequence[Operation],
                   inputs: Any, shots: int, rng: np.random.Generator, final: bool = True) -> np.ndarray:
    """``(passed, m [+ n])`` host rows of ``m`` classical bits (then, if ``final``, the ``n`` final
    qubit bits, qubit 0 first) of ``shots`` shots, minus those a post-selection rejected, in a
    random order.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> _ = c.cond(c.measure(0)).x(1)
    >>> rows = branch_samples(tq.get_backend("numpy"), 2, 1, c.operations, None, 1000,
    ...                       np.random.default_rng(1))
    >>> sorted({tuple(row) for row in rows.tolist()})  # bit, then both qubits agree with it
    [(0, 0, 0), (1, 1, 1)]
    """
    n = num_qubits
    if inputs is None:
        start = np.zeros((1, 2 ** n), dtype=complex)
        start[0, 0] = 1.0
        states = K.asarray(start, K.dtype)
    else:
        states = K.reshape(inputs, (1, 2 ** n))
    branches = Branches(states, np.zeros((1, num_clbits), dtype=np.int8), np.array([shots], dtype=np.int64))
    finished: list[Branches] = []
    _run(K, n, list(operations), 0, branches, rng, finished)
    rows = [_final_rows(K, n, part, rng, final) for part in finished]
    width = num_clbits + (n if final else 0)
    drawn = np.concatenate(rows) if rows else np.zeros((0, width), dtype=np.int8)
    return drawn[rng.permutation(len(drawn))]


def _run(K: ArrayBackend, n: int, operations: list[Operation], start: int, branches: Branches,
         rng: np.random.Generator, finished: list[Branches]) -> None:
    """Apply ``operations[start:]`` to ``branches``, appending what comes out to ``finished``."""
    max_rows = max(1, BATCH_ENTRIES // 2 ** n)
    for index in range(start, len(operations)):
        op = operations[index]
        if op.gate in ("measure", "reset", "post_select"):
            branches = _measured(K, n, op, branches, rng)
        elif op.channel is not None:
            branches = _unravelled(K, n, op, branches, rng)
        else:
            branches.states = _gate(K, n, op, branches)
            continue
        if not len(branches.counts):
            return  # every shot rejected by a post-selection
        rows = len(branches.counts)
        if rows > max_rows:  # finish the stack in parts
            for low in range(0, rows, max_rows):
                part = np.arange(low, min(rows, low + max_rows))
                _run(K, n, operations, index + 1, _rows(K, branches, part), rng, finished)
            return
    finished.append(branches)


def _rows(K: ArrayBackend, branches: Branches, rows: np.ndarray) -> Branches:
    return Branches(K.take(branches.states, K.asarray(rows, "int64"), axis=0), branches.registers[rows],
                    branches.counts[rows])


def _holds(condition: Condition, registers: np.ndarray) -> np.ndarray:
    values = registers[:, list(condition.bits)].astype(np.int64)
    if condition.kind == "parity":
        return values.sum(axis=1) % 2 == condition.value
    equal = np.all(values == np.asarray(condition.required()), axis=1)
    return equal if condition.kind == "equals" else ~equal


def _gate(K: ArrayBackend, n: int, op: Operation, branches: Branches) -> Any:
    states = branches.states
    rows = len(branches.counts)
    mask = None if op.condition is None else _holds(op.condition, branches.registers)
    if mask is not None and not mask.any():
        return states
    placement = place(op.qubits, n, lead=rows, max_ndim=K.capabilities.max_ndim, shape=(rows, 2 ** n))
    applied = apply_placed(K, states, gate_matrix(K, op.gate, op.params, op.dagger), placement)
    if mask is None or mask.all():
        return applied
    return K.where(K.asarray(mask[:, None]), applied, states)


def _halves(K: ArrayBackend, n: int, states: Any, qubit: int) -> Any:
    """The states viewed as ``(B, left, 2, right)`` around ``qubit``."""
    return K.reshape(states, (-1, 2 ** qubit, 2, 2 ** (n - qubit - 1)))


def _probabilities_of_one(K: ArrayBackend, view: Any) -> np.ndarray:
    ones = view[:, :, 1, :]
    weight = K.to_numpy(K.sum(K.reshape(K.real(K.conj(ones) * ones), (K.shape(view)[0], -1)), axis=1))
    total = K.to_numpy(K.sum(K.reshape(K.real(K.conj(view) * view), (K.shape(view)[0], -1)), axis=1))
    return np.clip(np.asarray(weight, dtype=float) / np.asarray(total, dtype=float), 0.0, 1.0)


def _projected(K: ArrayBackend, view: Any, rows: np.ndarray, outcome: int, onto: int,
               probabilities: np.ndarray) -> Any:
    """Rows ``rows`` projected on ``outcome`` (its half moved to ``onto``), renormalised."""
    chosen = K.take(view, K.asarray(rows, "int64"), axis=0)
    half = chosen[:, :, outcome:outcome + 1, :]
    zero = K.zeros_like(half)
    parts = [half, zero] if onto == 0 else [zero, half]
    scale = K.asarray(1.0 / np.sqrt(probabilities[rows]), K.real_dtype)
    return K.reshape(K.concatenate(parts, axis=2), (len(rows), -1)) * K.reshape(scale, (-1, 1))


def _measured(K: ArrayBackend, n: int, op: Operation, branches: Branches,
              rng: np.random.Generator) -> Branches:
    """A measurement, reset or post-selection of one qubit on every branch."""
    qubit = op.qubits[0]
    view = _halves(K, n, branches.states, qubit)
    p_one = _probabilities_of_one(K, view)
    if op.gate == "post_select":
        outcome = int(op.params[0])
        passed = rng.binomial(branches.counts, p_one if outcome else 1.0 - p_one)
        rows = np.flatnonzero(passed)
        probability = p_one if outcome else 1.0 - p_one
        return Branches(_projected(K, view, rows, outcome, outcome, probability),
                        branches.registers[rows], passed[rows])
    ones = rng.binomial(branches.counts, p_one)
    zeros = branches.counts - ones
    parts, registers, counts = [], [], []
    for outcome, split, probability in ((0, zeros, 1.0 - p_one), (1, ones, p_one)):
        rows = np.flatnonzero(split)
        if not len(rows):
            continue
        onto = 0 if op.gate == "reset" else outcome
        parts.append(_projected(K, view, rows, outcome, onto, probability))
        register = branches.registers[rows].copy()
        if op.gate == "measure":
            register[:, op.clbits[0]] = outcome
        registers.append(register)
        counts.append(split[rows])
    return Branches(K.concatenate(parts, axis=0) if len(parts) > 1 else parts[0],
                    np.concatenate(registers), np.concatenate(counts))


def _unravelled(K: ArrayBackend, n: int, op: Operation, branches: Branches,
                rng: np.random.Generator) -> Branches:
    """A channel: each branch's shots split between its Kraus operators."""
    operators = op.channel.stacked(K)
    rows = len(branches.counts)
    placement = place(op.qubits, n, lead=rows, max_ndim=K.capabilities.max_ndim, shape=(rows, 2 ** n))
    applied = [apply_placed(K, branches.states, operators[a], placement) for a in range(op.channel.num_kraus)]
    weights = np.stack([np.asarray(K.to_numpy(K.sum(K.real(K.conj(x) * x), axis=1)), dtype=float)
                        for x in applied], axis=1)
    weights = np.clip(weights, 0.0, None)
    split = rng.multinomial(branches.counts, weights / weights.sum(axis=1, keepdims=True))
    parts, registers, counts = [], [], []
    for a, state in enumerate(applied):
        kept = np.flatnonzero(split[:, a])
        if not len(kept):
            continue
        scale = K.asarray(1.0 / np.sqrt(weights[kept, a]), K.real_dtype)
        parts.append(K.take(state, K.asarray(kept, "int64"), axis=0) * K.reshape(scale, (-1, 1)))
        registers.append(branches.registers[kept])
        counts.append(split[kept, a])
    return Branches(K.concatenate(parts, axis=0) if len(parts) > 1 else parts[0],
                    np.concatenate(registers), np.concatenate(counts))


def _final_rows(K: ArrayBackend, n: int, branches: Branches, rng: np.random.Generator,
                final: bool) -> np.ndarray:
    """Each branch's shots: its register, then (``final``) the qubits drawn from its state."""
    registers = np.repeat(branches.registers, branches.counts, axis=0)
    if not final:
        return registers
    probabilities = np.asarray(K.to_numpy(K.real(K.conj(branches.states) * branches.states)), dtype=float)
    indices = []
    for row, count in zip(probabilities, branches.counts):
        row = np.clip(row, 0.0, None)
        indices.append(rng.choice(len(row), size=int(count), p=row / row.sum()))
    index = np.concatenate(indices)
    qubits = ((index[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1).astype(np.int8)
    return np.concatenate([registers, qubits], axis=1)
