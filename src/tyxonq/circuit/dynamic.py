"""Exact results of dynamic circuits (mid-circuit measurements, resets, conditioned gates,
post-selection), computed on the plain circuit that deferred measurement lowers them to
(:mod:`tyxonq.circuit.operations.deferred`).

The lowered circuit is a circuit of the same kind on more wires, so its results come from the
same light cones, plans, gradients and memory checks as any other; this module only maps the
question onto its wires (qubit ``q`` on its final wire, the post-selected wires fixed to their
outcomes) and conditions on the post-selection (divides by its acceptance probability).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import random_generator
from ..numerics.memory import require_memory
from ..numerics.protocol import ArrayBackend
from ..numerics.sharing import shared_rows
from ..operators.pauli import PauliSum
from ..operators.readout import apply_readout_error
from .branch_sampling import BRANCH_QUBITS, branch_samples
from .operations.deferred import Deferred, deferred
from .operations.gates import constant
from .result_forms import format_samples, readout_seed, weighted_sum

__all__ = ["DeferredResults", "MixedStateError", "dynamic_samples", "formatted_rows"]


class MixedStateError(ValueError):
    """A pure-state result of a circuit whose mid-circuit measurements or resets mix its state."""


class DeferredResults:
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
        self.circuit = circuit
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

    def require_pure(self, what: str) -> None:
        if self.plan.mixed:
            raise MixedStateError(
                f"{what}: this circuit's mid-circuit measurements or resets leave its qubits in a mixed "
                "state, which no state vector describes. Use c.to_density_matrix() for the density "
                "matrix, or probability(), expectation() and sample(), which average over the outcomes")

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
        return value / self.acceptance() if self.plan.selected else value

    def pauli_expectations(self, strings: list[str], coefficients: Any) -> Any:
        if not self.plan.selected:
            return self.lowered.pauli_expectations([self.mapped_string(s) for s in strings], coefficients)
        K = get_backend()
        acceptance = self.acceptance()
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
            value = self.pauli_expectations([s for _, s in hamiltonian], [c for c, _ in hamiltonian])
            return get_backend().real(value) if hermitian else value
        mapped = PauliSum([(c, self.mapped_string(s)) for c, s in hamiltonian], self.plan.num_wires)
        return self.lowered.pauli_sum_expectation(mapped, method=method, hermitian=hermitian)

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        K = get_backend()
        selected = [wire for wire, _ in self.plan.selected]
        joint = self.lowered.marginal_probability(self.wires(qubits) + selected)
        if not selected:
            return joint
        kept = self._kept(K, joint)
        return kept / K.sum(kept)

    def state(self) -> Any:
        """The state vector (no measurement or reset: at most post-selections, renormalised)."""
        self.require_pure("state()")
        state = self.lowered.state()
        if not self.plan.selected:
            return state
        K = get_backend()
        kept = self._kept(K, state)
        return kept / K.sqrt(K.sum(K.real(K.conj(kept) * kept)))

    def amplitude(self, bits: Sequence[int]) -> Any:
        self.require_pure("amplitude()")
        outcomes = "".join(str(o) for _, o in self.plan.selected)
        value = self.lowered.amplitude("".join(map(str, bits)) + outcomes)
        return value / get_backend().sqrt(self.acceptance()) if self.plan.selected else value

    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        K = get_backend()
        selected = [wire for wire, _ in self.plan.selected]
        rho = self.lowered.reduced_density_matrix(self.wires(qubits) + selected)
        if not selected:
            return rho
        size, chosen = 2 ** len(qubits), self._selected_index()
        kept = K.reshape(rho, (size, 2 ** len(selected), size, 2 ** len(selected)))[:, chosen, :, chosen]
        return kept / K.sum(K.real(K.diag(kept)))


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


def dynamic_samples(results: DeferredResults, shots: int, seed: Any, format: str,
                    confusions: list | None, final: bool) -> Any:
    """``sample`` of a dynamic circuit: every classical bit, then (``final``) every qubit
    measured at the end; in the counts and bitstrings formats the two parts are separated by a
    space (``"<c0 c1 ...> <q0 q1 ...>"``, bit 0 and qubit 0 leftmost); ``"indices"`` number the
    concatenated bits (bit 0 most significant)."""
    circuit = results.circuit
    n, m = circuit.num_qubits, circuit.num_clbits
    K = get_backend()
    width = m + (n if final else 0)
    if results.plan.selected:
        acceptance = float(K.to_numpy(K.detach(results.acceptance())))
        if not acceptance > 1e-12:
            raise ValueError(f"the post-selections succeed with probability {acceptance:.3g}: no shot "
                             "passes them")
    else:
        acceptance = 1.0
    branched = n <= BRANCH_QUBITS and circuit.inputs_kind() != "density"

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

    rows = shared_rows(draw, shots, seed, width, "the samples", structure=circuit.structure())
    return formatted_rows(K, rows, m, n, format, confusions, final, seed)


def formatted_rows(K: ArrayBackend, rows: np.ndarray, m: int, n: int, format: str, confusions: list | None,
                   final: bool, seed: Any) -> Any:
    """Rows of classical bits (then final qubits) in ``sample``'s format, the final qubits read
    through ``confusions``."""
    if final and confusions is not None:
        rows = rows.copy()
        rows[:, m:] = apply_readout_error(rows[:, m:], confusions, np.random.default_rng(readout_seed(seed)))
    formatted = format_samples(K, m + (n if final else 0), format, None, seed, bits=rows)
    if format in ("indices", "bits") or not (final and m):
        return formatted
    if format == "bitstrings":
        return [f"{s[:m]} {s[m:]}" for s in formatted]
    return {f"{s[:m]} {s[m:]}": c for s, c in formatted.items()}


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
