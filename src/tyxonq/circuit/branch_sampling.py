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

from ..numerics.progress import progress
from ..numerics.protocol import ArrayBackend
from .operations.gates import gate_matrix
from .operations.operation import Operation
from .statevector.placement import apply_placed, place
from .statevector.sweep import apply_block, bind_matrices, block_operators, sweep_program

__all__ = ["Branches", "branch_samples", "BATCH_ENTRIES", "BRANCH_QUBITS"]

#: amplitudes one stack of branches may hold (a larger one is finished in parts)
BATCH_ENTRIES = 2 ** 24
#: shots are drawn by branches of state vectors up to this many qubits; wider dynamic circuits
#: sample their deferred-measurement circuit (:mod:`tyxonq.circuit.dynamic`)
BRANCH_QUBITS = 24
#: a branch whose outcome has probability within this of 1 is already in it: kept unprojected
CERTAIN = 1e-13


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
    steps = _steps(K, n, operations)
    max_rows = max(1, BATCH_ENTRIES // 2 ** n)
    # depth first: a stack of (next step, branches); a stack of branches that outgrew max_rows
    # after a split is cut into parts, finished one after the other
    pending = [(0, Branches(states, np.zeros((1, num_clbits), dtype=np.int8),
                            np.array([shots], dtype=np.int64)))]
    rows = []
    with progress(len(steps), "sampling: branch steps", unit="step") as report:
        while pending:
            index, branches = pending.pop()
            while index < len(steps) and len(branches.counts):
                branches = steps[index](branches, rng)
                index += 1
                report.advance(branches=len(branches.counts))
                if len(branches.counts) > max_rows and index < len(steps):
                    parts = [_rows(K, branches, np.arange(low, min(len(branches.counts), low + max_rows)))
                             for low in range(0, len(branches.counts), max_rows)]
                    branches = parts.pop(0)
                    pending.extend((index, part) for part in reversed(parts))
                    report.grow(len(parts) * (len(steps) - index))
            report.advance(len(steps) - index)  # the steps a branch set emptied by post-selection skips
            if len(branches.counts):
                rows.append(_final_rows(K, n, branches, rng, final))
    width = num_clbits + (n if final else 0)
    drawn = np.concatenate(rows) if rows else np.zeros((0, width), dtype=np.int8)
    return drawn[rng.permutation(len(drawn))]


def _steps(K: ArrayBackend, n: int, operations: Sequence[Operation]) -> list[Any]:
    """One function ``(branches, rng) -> branches`` per step: a run of plain gates as one fused
    sweep (:mod:`tyxonq.circuit.statevector.sweep`, its matrices bound once), a conditioned gate,
    a measurement, reset or post-selection, a channel."""
    steps: list[Any] = []
    run: list[Operation] = []

    def close_run() -> None:
        if run:
            steps.append(_swept(K, n, list(run)))
            run.clear()

    for op in operations:
        if op.channel is None and not op.is_dynamic:
            run.append(op)
            continue
        close_run()
        if op.gate in ("measure", "reset", "post_select"):
            steps.append(lambda branches, rng, op=op: _measured(K, n, op, branches, rng))
        elif op.channel is not None:
            steps.append(lambda branches, rng, op=op: _unravelled(K, n, op, branches, rng))
        else:
            steps.append(lambda branches, rng, op=op: _conditioned(K, n, op, branches))
    close_run()
    return steps


def _swept(K: ArrayBackend, n: int, operations: list[Operation]) -> Any:
    """A run of gates applied to every branch by the fused blocks of one sweep program."""
    program = sweep_program(n, operations, K.capabilities.max_ndim)
    operators = block_operators(K, program, bind_matrices(K, operations))

    def apply(branches: Branches, rng: np.random.Generator) -> Branches:
        rows = len(branches.counts)
        states = branches.states
        for block, operator in zip(program.blocks, operators):
            placement = place(block.qubits, n, lead=rows, diagonal=block.diagonal,
                              max_ndim=K.capabilities.max_ndim, shape=(rows, 2 ** n))
            states = apply_block(K, states, operator, placement, block.diagonal)
        return Branches(states, branches.registers, branches.counts)

    return apply


def _rows(K: ArrayBackend, branches: Branches, rows: np.ndarray) -> Branches:
    if len(rows) == len(branches.counts):
        return branches
    return Branches(K.take(branches.states, K.asarray(rows, "int64"), axis=0), branches.registers[rows],
                    branches.counts[rows])


def _joined(K: ArrayBackend, parts: list[Branches]) -> Branches:
    """One stack of the branches of ``parts`` (at least one)."""
    if len(parts) == 1:
        return parts[0]
    return Branches(K.concatenate([part.states for part in parts], axis=0),
                    np.concatenate([part.registers for part in parts]),
                    np.concatenate([part.counts for part in parts]))


def _conditioned(K: ArrayBackend, n: int, op: Operation, branches: Branches) -> Branches:
    """A conditioned gate on the branches whose register satisfies its condition (those first,
    the others after them: the order of branches is free)."""
    mask = op.condition.holds_for(branches.registers)
    if not mask.any():
        return branches
    chosen = _rows(K, branches, np.flatnonzero(mask))
    rows = len(chosen.counts)
    placement = place(op.qubits, n, lead=rows, max_ndim=K.capabilities.max_ndim, shape=(rows, 2 ** n))
    applied = apply_placed(K, chosen.states, gate_matrix(K, op.gate, op.params, op.dagger), placement)
    done = Branches(applied, chosen.registers, chosen.counts)
    return done if mask.all() else _joined(K, [done, _rows(K, branches, np.flatnonzero(~mask))])


def _halves(K: ArrayBackend, n: int, states: Any, qubit: int) -> Any:
    """The states viewed as ``(B, left, 2, right)`` around ``qubit``."""
    return K.reshape(states, (-1, 2 ** qubit, 2, 2 ** (n - qubit - 1)))


def _probabilities_of_one(K: ArrayBackend, view: Any) -> np.ndarray:
    """Each branch's probability of reading 1 (the states are normalised)."""
    ones = view[:, :, 1, :]
    real, imaginary = K.real(ones), K.imag(ones)
    weight = K.sum(real * real + imaginary * imaginary, axis=(1, 2))
    return np.clip(np.asarray(K.to_numpy(weight), dtype=float), 0.0, 1.0)


def _projected(K: ArrayBackend, view: Any, rows: np.ndarray, outcome: int, onto: int,
               probabilities: np.ndarray) -> Any:
    """Rows ``rows`` projected on ``outcome`` (its half moved to ``onto``), renormalised; rows
    whose outcome was certain (to rounding) are kept as they are."""
    count = K.shape(view)[0]
    chosen = view if len(rows) == count else K.take(view, K.asarray(rows, "int64"), axis=0)
    kept = probabilities[rows]
    if onto == outcome and np.all(kept >= 1.0 - CERTAIN):
        return K.reshape(chosen, (len(rows), -1))
    if onto == outcome:  # one product: the other half zeroed, this one rescaled
        factors = np.zeros((len(rows), 1, 2, 1))
        factors[:, 0, outcome, 0] = 1.0 / np.sqrt(kept)
        return K.reshape(chosen * K.asarray(factors, K.real_dtype), (len(rows), -1))
    half = chosen[:, :, outcome:outcome + 1, :]
    zero = K.zeros_like(half)
    parts = [half, zero] if onto == 0 else [zero, half]
    scale = K.asarray(1.0 / np.sqrt(kept), K.real_dtype)
    return K.reshape(K.concatenate(parts, axis=2), (len(rows), -1)) * K.reshape(scale, (-1, 1))


def _measured(K: ArrayBackend, n: int, op: Operation, branches: Branches,
              rng: np.random.Generator) -> Branches:
    """A measurement, reset or post-selection of one qubit on every branch."""
    qubit = op.qubits[0]
    view = _halves(K, n, branches.states, qubit)
    p_one = _probabilities_of_one(K, view)
    if op.gate == "post_select":
        outcome = int(op.params[0])
        probability = p_one if outcome else 1.0 - p_one
        passed = rng.binomial(branches.counts, probability)
        rows = np.flatnonzero(passed)
        if not len(rows):
            return Branches(branches.states[:0], branches.registers[:0], passed[:0])
        return Branches(_projected(K, view, rows, outcome, outcome, probability),
                        branches.registers[rows], passed[rows])
    ones = rng.binomial(branches.counts, p_one)
    zeros = branches.counts - ones
    parts = []
    for outcome, split, probability in ((0, zeros, 1.0 - p_one), (1, ones, p_one)):
        rows = np.flatnonzero(split)
        if not len(rows):
            continue
        onto = 0 if op.gate == "reset" else outcome
        register = branches.registers[rows].copy()
        if op.gate == "measure":
            register[:, op.clbits[0]] = outcome
        parts.append(Branches(_projected(K, view, rows, outcome, onto, probability), register, split[rows]))
    return _joined(K, parts)


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
    parts = []
    for a, state in enumerate(applied):
        kept = np.flatnonzero(split[:, a])
        if not len(kept):
            continue
        scale = K.asarray(1.0 / np.sqrt(weights[kept, a]), K.real_dtype)
        parts.append(Branches(K.take(state, K.asarray(kept, "int64"), axis=0) * K.reshape(scale, (-1, 1)),
                              branches.registers[kept], split[kept, a]))
    return _joined(K, parts)


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
