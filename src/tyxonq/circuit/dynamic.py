"""Exact results of dynamic circuits (mid-circuit measurements, resets, conditioned gates,
post-selection): one interface, :class:`DynamicResults`, and its deferred-measurement answer.

Every simulator answers a dynamic circuit's results through a :class:`DynamicResults` (the
:meth:`~tyxonq.circuit.simulator.SimulatorBase._dynamic_results` hook chooses which; the
simulator's methods marked :func:`~tyxonq.circuit.simulator.dynamic_route` go to it): the
interface declares the questions and holds the answers every kind shares (a pure-state result of
a mixed state refused by one :class:`MixedStateError`, a Pauli sum from its strings, the
probabilities from the marginal of every qubit, no unitary).

:class:`DeferredResults` answers on the plain circuit that deferred measurement lowers a dynamic
one to (:mod:`tyxonq.circuit.operations.deferred`): a circuit of the same kind on more wires, so
its results come from the same light cones, plans, gradients and memory checks as any other;
this module only maps the question onto its wires (qubit ``q`` on its final wire, the
post-selected wires fixed to their outcomes) and conditions on the post-selection (divides by
its acceptance probability). The MPS branches (:class:`~tyxonq.circuit.mps.branches.MPSBranches`)
are the other kind.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import random_generator, readable_scalar
from ..numerics.dual import Dual
from ..numerics.memory import require_memory
from ..numerics.protocol import ArrayBackend
from ..numerics.sharing import shared_rows
from ..operators.pauli import PauliSum
from ..operators.readout import apply_readout_error
from .branch_sampling import BRANCH_QUBITS, branch_samples
from .contraction.rehearsal import record, rehearsing
from .operations.deferred import Deferred, deferred
from .operations.gates import constant
from .operations.operation import Operation
from .refusals import MixedStateError, UnsupportedResult
from .result_forms import format_samples, readout_seed, weighted_sum

__all__ = ["DynamicResults", "DeferredResults", "MixedStateError", "BranchLimitError", "formatted_rows",
           "terminal_measurements", "require_acceptance", "ACCEPTANCE_FLOOR", "MAX_POST_SELECTION_TRIALS"]

#: post-selections that succeed with at most this probability are refused (results undefined)
ACCEPTANCE_FLOOR = 1e-12
#: sampling a post-selected circuit draws at most this many shots in all (shots / acceptance)
MAX_POST_SELECTION_TRIALS = 10 ** 7
#: the widest bonds of the untruncated MPS branches a wide dynamic circuit is sampled from
EXACT_MPS_MAX_BOND = 64
EXACT_MPS_TOLERANCE = 1e-12


class BranchLimitError(ValueError):
    """A dynamic circuit needs more branches of outcomes than a branching simulator keeps."""


class DynamicResults(abc.ABC):
    """The exact results of a dynamic circuit (``circuit``), one way per simulator.

    Subclasses answer the questions marked abstract; the rest are shared. Arguments arrive
    validated (:class:`~tyxonq.circuit.simulator.SimulatorBase` checks them once for all).
    """

    def __init__(self, circuit: Any) -> None:
        self.circuit = circuit

    @property
    @abc.abstractmethod
    def mixed(self) -> bool:
        """Whether measurements or resets leave the qubits in a mixed state."""

    @abc.abstractmethod
    def acceptance(self) -> Any:
        """The probability that every post-selection succeeds."""

    @abc.abstractmethod
    def expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        """``<O_1 ... O_m>`` of validated ``(matrix, qubits)`` operators, conditioned on the
        post-selections."""

    @abc.abstractmethod
    def pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        """Each validated string's value, or their weighted sum."""

    @abc.abstractmethod
    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        """The final qubits' outcome probabilities."""

    @abc.abstractmethod
    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        """The final qubits' density matrix."""

    @abc.abstractmethod
    def pure_state(self) -> Any:
        """The state vector of a circuit that is not :attr:`mixed`."""

    @abc.abstractmethod
    def pure_amplitude(self, bits: Sequence[int]) -> Any:
        """An amplitude of a circuit that is not :attr:`mixed`."""

    @abc.abstractmethod
    def branch_rows(self, shots: int, seed: Any, final: bool) -> np.ndarray:
        """``(shots, m [+ n])`` host rows of the classical bits (then, ``final``, the final qubits),
        drawn shot by shot through the circuit's outcomes (shared between the ranks of a
        distributed run)."""

    # -- what every kind shares ------------------------------------------------------------------
    def require_pure(self, what: str) -> None:
        """Refuse ``what`` (a pure-state result) when the state is :attr:`mixed`."""
        if self.mixed:
            raise MixedStateError(
                f"{type(self.circuit).__name__}.{what}: this circuit's mid-circuit measurements or resets "
                "leave its qubits in a mixed state, which no state vector describes. Use "
                "c.to_density_matrix() (tq.DMCircuit) for the density matrix, or probability(), "
                "expectation() and sample(), which average over the outcomes")

    def state(self, *options: Any) -> Any:
        """The state vector (no measurement or reset: at most post-selections, renormalised)."""
        self.require_pure("state()")
        return self.pure_state()

    def amplitude(self, bits: Sequence[int]) -> Any:
        self.require_pure("amplitude()")
        return self.pure_amplitude(bits)

    def probability(self) -> Any:
        return self.marginal_probability(tuple(range(self.circuit.num_qubits)))

    def local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                          hermitian: bool, K: ArrayBackend) -> Any:
        """:meth:`~tyxonq.circuit.simulator.SimulatorBase.expectation`'s question, as
        :meth:`expectation` asks it."""
        return self.expectation(matrices, groups, hermitian)

    def pauli_sum_value(self, hamiltonian: PauliSum, method: str, hermitian: bool) -> Any:
        """``<H>`` from its strings' weighted sum (real unless ``hermitian=False``)."""
        value = self.pauli_expectations([s for _, s in hamiltonian], [c for c, _ in hamiltonian], method)
        return get_backend().real(value) if hermitian else value

    def samples(self, shots: int, seed: Any, format: str, confusions: list | None, final: bool) -> Any:
        """``sample``'s shots: every classical bit, then (``final``) every qubit at the end, in
        ``format`` (:func:`formatted_rows`), the final qubits read through ``confusions``.

        A measurement that nothing follows on its qubit, whose bit no later condition reads and no
        later measurement writes (:func:`terminal_measurements`: the measurements at the end of
        most programs) reads the qubit's final value: it is drawn with the final qubits, in one
        joint draw, rather than split into a branch per outcome."""
        circuit = self.circuit
        n, m = circuit.num_qubits, circuit.num_clbits
        K = get_backend()
        core, terminal = terminal_measurements(circuit.operations)
        if not terminal:
            rows = self.branch_rows(shots, seed, final)
        else:
            trimmed = circuit.with_operations(core).with_readout(None)
            drawn = np.asarray(K.to_numpy(trimmed.sample(shots, seed=seed, format="bits")), dtype=np.int8)
            if not trimmed.is_dynamic():  # no classical bit left: the final qubits only
                drawn = np.concatenate([np.zeros((shots, m), dtype=np.int8), drawn], axis=1)
            for qubit, bit in terminal:
                drawn[:, bit] = drawn[:, m + qubit]
            rows = drawn if final else drawn[:, :m]
        return formatted_rows(K, rows, m, n, format, confusions, final, seed, circuit.operations)

    def conditioned(self, value: Any, acceptance: Any) -> Any:
        """``value / acceptance`` (a result conditioned on the post-selections), refused where the
        acceptance reads as zero (every result conditioned on an impossible outcome is undefined;
        a traced acceptance is not read)."""
        require_acceptance(get_backend(), acceptance)
        return value / acceptance

    def matrix(self) -> Any:
        raise UnsupportedResult(
            f"{type(self.circuit).__name__}.matrix(): a circuit with mid-circuit measurements, resets, "
            "post-selections or conditions is not a unitary; its action on a state is c.state() or, "
            "mixed, c.to_density_matrix().state()")


class DeferredResults(DynamicResults):
    """A dynamic circuit's results, from its deferred-measurement lowering.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> _ = c.cond(c.measure(0)).x(1)
    >>> results = DeferredResults(c)
    >>> results.lowered.num_qubits, [op.gate for op in results.lowered.operations]
    (3, ['h', 'cx', 'c1:x'])
    """

    def __init__(self, circuit: Any) -> None:
        super().__init__(circuit)
        n = circuit.num_qubits
        self.plan: Deferred = deferred(n, circuit.num_clbits, circuit.operations)
        K = get_backend()
        inputs = circuit.input_state(K)
        extra = self.plan.num_wires - n
        if inputs is not None:  # the fresh wires start in |0>
            require_memory(K, 2 ** (self.plan.num_wires * len(K.shape(inputs))),
                           f"the inputs on the {self.plan.num_wires} wires of the deferred circuit",
                           "Start from |0...0> (prepare the inputs with gates), or use fewer measurements")
            inputs = _with_fresh_wires(K, inputs, extra)
        lowered = type(circuit)(self.plan.num_wires, inputs=inputs)
        self.lowered = lowered.with_operations(list(self.plan.operations))

    # -- the question on the wires -------------------------------------------------------------
    def wires(self, qubits: Sequence[int]) -> list[int]:
        return [self.plan.qubit_wires[q] for q in qubits]

    def projectors(self, K: ArrayBackend) -> list[tuple[Any, list[int]]]:
        """``|o><o|`` on each post-selected wire ``(matrix, [wire])``."""
        return [(constant(K, "_p1" if outcome else "_p0"), [wire]) for wire, outcome in self.plan.selected]

    def _selected_index(self) -> int:
        """The index of the post-selected outcomes among the post-selected wires' basis states."""
        index = 0
        for _, outcome in self.plan.selected:
            index = 2 * index + outcome
        return index

    def _kept(self, K: ArrayBackend, joint: Any) -> Any:
        """The entries of ``joint`` (the post-selected wires last) where they hold their outcomes."""
        selected = 2 ** len(self.plan.selected)
        return K.reshape(joint, (-1, selected))[:, self._selected_index()]

    def mapped_string(self, string: str) -> str:
        letters = ["I"] * self.plan.num_wires
        for q, letter in enumerate(string):
            letters[self.plan.qubit_wires[q]] = letter
        return "".join(letters)

    @property
    def mixed(self) -> bool:
        return self.plan.mixed

    # -- results ---------------------------------------------------------------------------------
    def acceptance(self) -> Any:
        """The probability that every post-selection succeeds (1 without any)."""
        K = get_backend()
        if not self.plan.selected:
            return K.asarray(1.0, K.real_dtype)
        return self.lowered.expectation(*self.projectors(K))

    def expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        K = get_backend()
        operators = [(matrix, self.wires(qubits)) for matrix, qubits in zip(matrices, groups)]
        value = self.lowered.expectation(*operators, *self.projectors(K), hermitian=hermitian)
        return self.conditioned(value, self.acceptance()) if self.plan.selected else value

    def pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        if not self.plan.selected:
            return self.lowered.pauli_expectations([self.mapped_string(s) for s in strings], coefficients)
        K = get_backend()
        acceptance = self.acceptance()
        require_acceptance(K, acceptance)
        projectors = self.projectors(K)
        values = []
        for string in strings:
            factors = [(constant(K, letter.lower()), [self.plan.qubit_wires[q]])
                       for q, letter in enumerate(string) if letter != "I"]
            values.append(K.real(self.lowered.expectation(*factors, *projectors)) / acceptance
                          if factors else K.asarray(1.0, K.real_dtype))
        return weighted_sum(K, K.stack(values), coefficients)

    def pauli_sum_value(self, hamiltonian: PauliSum, method: str, hermitian: bool) -> Any:
        if self.plan.selected:
            return super().pauli_sum_value(hamiltonian, method, hermitian)
        mapped = PauliSum([(c, self.mapped_string(s)) for c, s in hamiltonian], self.plan.num_wires)
        return self.lowered.pauli_sum_expectation(mapped, method=method, hermitian=hermitian)

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        K = get_backend()
        selected = [wire for wire, _ in self.plan.selected]
        joint = self.lowered.marginal_probability(self.wires(qubits) + selected)
        if not selected:
            return joint
        kept = self._kept(K, joint)
        return self.conditioned(kept, K.sum(kept))

    def pure_state(self) -> Any:
        state = self.lowered.state()
        if not self.plan.selected:
            return state
        K = get_backend()
        kept = self._kept(K, state)
        return self.conditioned(kept, K.sqrt(K.sum(K.real(K.conj(kept) * kept))))

    def pure_amplitude(self, bits: Sequence[int]) -> Any:
        outcomes = "".join(str(o) for _, o in self.plan.selected)
        value = self.lowered.amplitude("".join(map(str, bits)) + outcomes)
        return self.conditioned(value, get_backend().sqrt(self.acceptance())) if self.plan.selected else value

    def branch_rows(self, shots: int, seed: Any, final: bool) -> np.ndarray:
        return _deferred_rows(self, shots, seed, final)

    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        K = get_backend()
        selected = [wire for wire, _ in self.plan.selected]
        rho = self.lowered.reduced_density_matrix(self.wires(qubits) + selected)
        if not selected:
            return rho
        size, chosen = 2 ** len(qubits), self._selected_index()
        kept = K.reshape(rho, (size, 2 ** len(selected), size, 2 ** len(selected)))[:, chosen, :, chosen]
        return self.conditioned(kept, K.sum(K.real(K.diag(kept))))


def _with_fresh_wires(K: ArrayBackend, inputs: Any, extra: int) -> Any:
    """A state vector or density matrix with ``extra`` more qubits in ``|0>`` (last)."""
    if extra == 0:
        return inputs
    zero = np.zeros(2 ** extra)
    zero[0] = 1.0
    fresh = K.cast(K.asarray(zero), K.dtype_of(inputs))
    if len(K.shape(inputs)) == 1:
        return K.reshape(K.einsum("i,a->ia", inputs, fresh), (-1,))
    size = K.shape(inputs)[0] * 2 ** extra
    return K.reshape(K.einsum("ij,a,b->iajb", inputs, fresh, fresh), (size, size))


def require_acceptance(K: ArrayBackend, acceptance: Any) -> float | None:
    """The acceptance probability of the post-selections, read where it can be (``None``: a traced
    value), refused when it is zero to rounding (:data:`ACCEPTANCE_FLOOR`): every result conditioned
    on an outcome that never happens is undefined.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(1).post_select(0, 1)
    >>> try:
    ...     c.expectation_ps(z=[0])
    ... except ValueError as refusal:
    ...     print(str(refusal)[:50])
    the post-selections succeed with probability 0 (at
    """
    value = acceptance.value if isinstance(acceptance, Dual) else acceptance
    readable = readable_scalar(K, K.detach(value) if K.is_array(value) else value)
    if readable is not None and not abs(readable) > ACCEPTANCE_FLOOR:
        raise ValueError(f"the post-selections succeed with probability {abs(readable):.3g} (at most "
                         f"{ACCEPTANCE_FLOOR:g}): every result conditioned on them is undefined; post-select "
                         "outcomes that occur (c.acceptance() is their probability)")
    return None if readable is None else float(abs(readable))


def terminal_measurements(operations: Sequence[Operation]) -> tuple[list[Operation], list[tuple[int, int]]]:
    """The measurements whose bit is their qubit's final value -- nothing acts on the qubit after
    them, no later condition (or annotation) reads their bit and no later measurement writes it --
    as ``(qubit, bit)`` pairs, and the operations without them.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> bit = c.measure(0)
    >>> _ = c.cond(bit).x(1)
    >>> _ = c.measure(1)
    >>> core, terminal = terminal_measurements(c.operations)
    >>> [op.gate for op in core], terminal
    (['h', 'measure', 'x'], [(1, 1)])
    """
    touched: set[int] = set()
    read: set[int] = set()
    written: set[int] = set()
    kept, terminal = [], []
    for op in reversed(operations):
        if op.gate == "measure" and op.qubits[0] not in touched and op.clbits[0] not in read | written:
            terminal.append((op.qubits[0], op.clbits[0]))
        else:
            kept.append(op)
            if op.condition is not None:
                read.update(op.condition.bits)
            if op.gate in ("detector", "observable"):
                read.update(op.clbits)
        touched.update(op.qubits)
        if op.gate == "measure":
            written.update(op.clbits)
    return kept[::-1], terminal[::-1]


def _deferred_rows(results: DeferredResults, shots: int, seed: Any, final: bool) -> np.ndarray:
    """A dynamic circuit's rows: from branches of its state vector up to
    :data:`~tyxonq.circuit.branch_sampling.BRANCH_QUBITS` qubits; wider, a pure circuit's from
    branches of an untruncated MPS where its bonds stay small (:func:`_mps_branch_rows`), else
    from the deferred-measurement circuit's samplers. Post-selections reject shots: at most
    :data:`MAX_POST_SELECTION_TRIALS` shots are drawn in all."""
    circuit = results.circuit
    n, m = circuit.num_qubits, circuit.num_clbits
    K = get_backend()
    width = m + (n if final else 0)
    acceptance = require_acceptance(K, results.acceptance()) if results.plan.selected else 1.0
    acceptance = 1.0 if acceptance is None else acceptance
    if shots / acceptance > MAX_POST_SELECTION_TRIALS:
        raise ValueError(
            f"the post-selections keep a shot with probability {acceptance:.3g}: {shots} samples would "
            f"draw about {shots / acceptance:.3g} shots (more than {MAX_POST_SELECTION_TRIALS:.0e}). Ask for "
            "fewer shots, or for exact conditioned results: expectation(), marginal_probability() and "
            "probability() divide by the acceptance instead of rejecting shots")
    branched = n <= BRANCH_QUBITS and circuit.inputs_kind() != "density"
    wide_pure = not branched and not circuit.is_noisy() and circuit.inputs_kind() != "density"
    if rehearsing():  # the route, planned: the MPS branches are tried first where they may apply
        record("route", name="branches" if branched else "mps-branches" if wide_pure else "deferred")
        if not branched and not wide_pure:
            results.lowered.sample(1, seed=0, format="bits")
        return np.zeros((0, width), dtype=np.int8)
    if wide_pure and (mps := _exact_branches(circuit)) is not None:
        return np.asarray(K.to_numpy(mps.sample(shots, seed=seed, format="bits", final=final)), dtype=np.int8)
    inputs = circuit.input_state(K) if branched else None

    def attempt(count: int, rng: np.random.Generator) -> np.ndarray:
        if branched:
            return branch_samples(K, n, m, circuit.operations, inputs, count, rng, final)
        return _lowered_rows(results, count, rng, final)

    def draw(count: int, rank_seed: int | None) -> np.ndarray:
        rng = random_generator(rank_seed)
        rows = [np.zeros((0, width), dtype=np.int8)]
        passed = 0
        while passed < count:  # post-selection: draw until enough shots passed (iid, so any subset)
            missing = count - passed
            batch = int(np.ceil(missing / acceptance * 1.1)) + 8 if acceptance < 1 else missing
            rows.append(attempt(batch, rng))
            passed += len(rows[-1])
        return np.concatenate(rows)[:count]

    return shared_rows(draw, shots, seed, width, "the samples", structure=circuit.structure())


def _exact_branches(circuit: Any) -> Any:
    """An :class:`~tyxonq.MPSCircuit` of a wide pure dynamic circuit whose branches (one MPS per
    branch of outcomes, at most :data:`~tyxonq.circuit.mps.branches.MAX_BRANCHES`) keep bonds of
    at most :data:`EXACT_MPS_MAX_BOND` with nothing cut but rounding; else ``None``. A circuit whose
    register conditions gates on many bits at once (a counterfeit-coin program of 151 qubits) is
    sampled in seconds this way, where its deferred-measurement circuit has twice the wires."""
    if not hasattr(circuit, "to_mps"):
        return None
    mps = circuit.to_mps(max_bond=EXACT_MPS_MAX_BOND, cutoff=0.0)
    try:
        exact = float(mps.truncation_error()) <= EXACT_MPS_TOLERANCE
    except BranchLimitError:
        return None
    return mps if exact else None


def formatted_rows(K: ArrayBackend, rows: np.ndarray, m: int, n: int, format: str, confusions: list | None,
                   final: bool, seed: Any, operations: Sequence[Operation] = ()) -> Any:
    """Rows of classical bits (then final qubits) in ``sample``'s format, read through
    ``confusions``: the final qubits, and each bit recorded by a measurement of ``operations``
    through its qubit's matrix (:func:`misread_records`)."""
    if confusions is not None:
        rows = misread_records(rows.copy(), m, operations, confusions, seed)
    if final and confusions is not None:
        rows[:, m:] = apply_readout_error(rows[:, m:], confusions, np.random.default_rng(readout_seed(seed)))
    formatted = format_samples(K, m + (n if final else 0), format, None, seed, bits=rows)
    if format in ("indices", "bits") or not (final and m):
        return formatted
    if format == "bitstrings":
        return [f"{s[:m]} {s[m:]}" for s in formatted]
    return {f"{s[:m]} {s[m:]}": c for s, c in formatted.items()}


def misread_records(rows: np.ndarray, m: int, operations: Sequence[Operation], confusions: list,
                    seed: Any) -> np.ndarray:
    """``rows`` with each classical bit read through the confusion matrix of the qubit its last
    measurement measured (a readout error misreads the record, as on hardware and in Aer; a
    stream of its own, derived from ``seed``). A bit that a condition reads after a misread
    measurement would steer the circuit by the misread value: refused, as it is not simulated.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> c = tq.Circuit(1).x(0)
    >>> _ = c.measure(0)
    >>> misread_records(np.array([[1, 1]], dtype=np.int8), 1, c.operations,
    ...                 [np.array([[0.0, 1.0], [1.0, 0.0]])], seed=1).tolist()   # always misread
    [[0, 1]]
    """
    measured: dict[int, int] = {}
    steered: set[int] = set()
    for op in operations:
        if op.condition is not None:
            steered.update(bit for bit in op.condition.bits if bit in measured)
        if op.gate == "measure":
            measured[op.clbits[0]] = op.qubits[0]
    misread = {bit: qubit for bit, qubit in measured.items() if bit < m and confusions[qubit] is not None}
    if not misread:
        return rows
    if steered & set(misread):
        bits = sorted(steered & set(misread))
        raise ValueError(f"readout errors misread the bits {bits}, which conditions read: the circuit "
                         "would be steered by misread values, which is not simulated; drop the readout "
                         "error of those qubits (c.with_readout) or model it as a bit-flip channel "
                         "before the measurement")
    stream = np.random.default_rng(None if seed is None else np.random.SeedSequence([int(seed), 0x5EAD, 1]))
    columns = sorted(misread)
    matrices = [confusions[misread[bit]] for bit in columns]
    rows[:, columns] = apply_readout_error(rows[:, columns], matrices, stream)
    return rows


def _lowered_rows(results: DeferredResults, count: int, rng: np.random.Generator, final: bool) -> np.ndarray:
    """Shots drawn from the deferred circuit's samplers (any width), minus those the
    post-selections reject: the bits' wires, then the qubits' final wires."""
    plan = results.plan
    wires = plan.num_wires
    seed = int(rng.integers(2 ** 62))
    if wires <= 62:
        drawn = results.lowered.sample(count, seed=seed, format="indices")
        indices = np.asarray(get_backend().to_numpy(drawn))
        bits = ((indices[:, None] >> np.arange(wires - 1, -1, -1)[None, :]) & 1).astype(np.int8)
    else:
        strings = results.lowered.sample(count, seed=seed, format="bitstrings")
        bits = np.array([[int(b) for b in s] for s in strings],
                        dtype=np.int8).reshape(count, wires)
    keep = np.ones(count, dtype=bool)
    for wire, outcome in plan.selected:
        keep &= bits[:, wire] == outcome
    columns = [bits[:, w] if w is not None else np.zeros(count, dtype=np.int8) for w in plan.bit_wires]
    if final:
        columns += [bits[:, w] for w in plan.qubit_wires]
    return np.stack(columns, axis=1)[keep]
