"""Dynamic circuits on matrix-product states: one MPS per branch of outcomes.

A mid-circuit measurement splits every branch in two (each outcome with non-zero probability):
the measured site is projected, with the orthogonality centre on it, and renormalised, so each
branch stays a canonical, normalised MPS; its weight is the probability of its outcomes so far.
A reset is a measurement whose outcome is forgotten, followed by a flip on outcome 1; a
post-selection keeps one outcome and multiplies the weight by its probability; a conditioned gate
acts on the branches whose classical register satisfies it.

Exact results are the weighted averages over the branches (divided by the total weight, the
acceptance of the post-selections); samples allocate the shots between the final branches by
their weights (multinomially: exact, post-selection included) and draw each branch's shots from
its MPS. The number of branches is at most ``2^(measurements + resets)``; a circuit that would
need more than :data:`MAX_BRANCHES` is refused with what to use instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.arguments import random_generator
from ...numerics.progress import progress
from ...numerics.protocol import ArrayBackend
from ...numerics.sharing import shared_rows
from ..dynamic import BranchLimitError, DynamicResults, require_acceptance
from ..operations.gates import constant, gate_matrix
from ..operations.operation import Operation
from ..result_forms import weighted_sum
from . import measure
from .schedule import apply_operations
from .state import MPSState

__all__ = ["MPSBranches", "MAX_BRANCHES"]

#: the most branches an MPS simulation of a dynamic circuit keeps
MAX_BRANCHES = 4096
#: branches less likely than this (relative) are dropped: they carry no weight at double precision
NEGLIGIBLE = 1e-14


@dataclass
class Branch:
    state: MPSState
    weight: Any  # backend scalar: the probability of this branch's outcomes
    register: tuple[int, ...]


class MPSBranches(DynamicResults):
    """The branches of a dynamic :class:`~tyxonq.MPSCircuit` and their results."""

    def __init__(self, circuit: Any, initial: Any, matrices: Any) -> None:
        super().__init__(circuit)
        self._mixed = any(op.gate in ("measure", "reset") for op in circuit.operations)
        self._initial, self._matrices = initial, matrices
        self._branches: list[Branch] | None = None

    @property
    def branches(self) -> list[Branch]:
        """The final branches (simulated on first use; ``initial()`` gives the starting MPS)."""
        if self._branches is None:
            self._branches = self._simulate(self._initial(), self._matrices)
        return self._branches

    @property
    def total(self) -> Any:
        """The summed weight of the branches: the acceptance of the post-selections (0 when no
        branch passes them)."""
        if not self.branches:
            K = get_backend()
            return K.asarray(0.0, K.real_dtype)
        total = self.branches[0].weight
        for branch in self.branches[1:]:
            total = total + branch.weight
        return total

    def _simulate(self, initial: MPSState, matrices: Any) -> list[Branch]:
        circuit = self.circuit
        K = get_backend()
        one = K.asarray(1.0, K.real_dtype)
        branches = [Branch(initial, one, (0,) * circuit.num_clbits)]
        pending: list[Operation] = []
        dynamic = sum(op.is_dynamic for op in circuit.operations)
        with progress(dynamic + 1, "MPS branches: measurements", unit="step") as report:
            for op in circuit.operations:
                if not op.is_dynamic:
                    pending.append(op)
                    continue
                for branch in branches:
                    apply_operations(branch.state, pending, matrices)
                pending = []
                branches = self._step(K, branches, op, matrices)
                report.advance(branches=len(branches))
                if not branches:  # no branch passes the post-selections
                    return []
            for branch in branches:
                apply_operations(branch.state, pending, matrices)
            report.advance(branches=len(branches))
        return branches

    def _step(self, K: ArrayBackend, branches: list[Branch], op: Operation, matrices: Any) -> list[Branch]:
        if op.condition is not None:  # a conditioned gate
            for branch in branches:
                if op.condition.holds(branch.register):
                    branch.state.apply(gate_matrix(K, op.gate, op.params, op.dagger), op.qubits)
            return branches
        q = op.qubits[0]
        found = []
        for branch in branches:
            probabilities = measure.marginal_probability(branch.state, [q])
            outcomes = (int(op.params[0]),) if op.gate == "post_select" else (0, 1)
            for outcome in outcomes:
                p = probabilities[outcome]
                readable = K.readable_scalar(K.detach(p))
                if readable is not None and readable <= NEGLIGIBLE:
                    continue
                state = branch.state.copy()
                state.move_centre(q)
                projector = constant(K, "_p1" if outcome else "_p0") / K.sqrt(K.cast(p, K.dtype))
                state.sites[q] = K.matmul(projector, state.sites[q])
                if op.gate == "reset" and outcome:
                    state.sites[q] = K.matmul(constant(K, "x"), state.sites[q])
                state.environments = {}
                register = list(branch.register)
                if op.gate == "measure":
                    register[op.clbits[0]] = outcome
                found.append(Branch(state, branch.weight * p, tuple(register)))
        if len(found) > MAX_BRANCHES:
            raise BranchLimitError(
                f"this dynamic MPSCircuit needs more than {MAX_BRANCHES} branches of outcomes (one MPS "
                "each); use tq.Circuit (deferred measurement: exact at the cost of one wire per "
                "measurement) or sample it")
        return found

    # -- results ---------------------------------------------------------------------------------
    @property
    def mixed(self) -> bool:
        return self._mixed

    def averaged(self, result: Any) -> Any:
        """``sum_b w_b result(state_b) / sum_b w_b``."""
        require_acceptance(get_backend(), self.total)
        total = None
        for branch in self.branches:
            term = branch.weight * result(branch.state)
            total = term if total is None else total + term
        return self.conditioned(total, self.total)

    def truncation_error(self) -> Any:
        """The largest discarded weight of any branch (the sum over its truncations)."""
        return max((sum(branch.state.truncation.discarded) if branch.state.truncation.discarded else 0.0
                    for branch in self.branches), default=0.0)

    def acceptance(self) -> Any:
        return self.total

    def expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        K = get_backend()
        if self.circuit._is_traced():  # noqa: SLF001 - parameter shift through the branches
            from ..differentiation.traced import parameter_shift_dual
            from .adjoint import refuse_gradient_in_place

            refuse_gradient_in_place()
            operators = list(zip(matrices, groups))
            return parameter_shift_dual(self.circuit, lambda c: c.expectation(*operators))
        value = self.averaged(lambda state: measure.operator_expectation(state, matrices, groups))
        return K.real(value) if hermitian else value

    def pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        K = get_backend()

        def values(state: MPSState) -> Any:
            found = []
            for string in strings:
                factors = {q: constant(K, letter.lower()) for q, letter in enumerate(string) if letter != "I"}
                found.append(K.real(measure.pauli_string_value(state, factors)) if factors
                             else K.asarray(1.0, K.real_dtype))
            return K.stack(found)

        return weighted_sum(K, self.averaged(values), coefficients)

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        return self.averaged(lambda state: measure.marginal_probability(state, qubits))

    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        return self.averaged(lambda state: measure.reduced_density_matrix(state, qubits))

    def pure_state(self) -> Any:
        require_acceptance(get_backend(), self.total)
        return measure.dense_state(self.branches[0].state)

    def pure_amplitude(self, bits: Sequence[int]) -> Any:
        require_acceptance(get_backend(), self.total)
        return measure.amplitude(self.branches[0].state, bits)

    def branch_rows(self, shots: int, seed: Any, final: bool) -> np.ndarray:
        """Rows drawn from the branches (:meth:`sample_rows`), shared between the ranks of a
        distributed run."""
        n, m = self.circuit.num_qubits, self.circuit.num_clbits

        def draw(count: int, rank_seed: Any) -> np.ndarray:
            return self.sample_rows(count, random_generator(rank_seed), final)

        return shared_rows(draw, shots, seed, m + (n if final else 0), "the samples",
                           structure=tuple(op.structure for op in self.circuit.operations))

    def sample_rows(self, shots: int, rng: np.random.Generator, final: bool) -> np.ndarray:
        """``(shots, m [+ n])`` rows: shots allocated to the branches by weight, each branch's
        drawn from its MPS; in a random order."""
        from .sampling import perfect_samples

        K = get_backend()
        require_acceptance(K, self.total)
        weights = np.array([float(K.to_numpy(K.detach(b.weight))) for b in self.branches])
        counts = rng.multinomial(shots, weights / weights.sum())
        rows = []
        for branch, count in zip(self.branches, counts):
            if not count:
                continue
            register = np.tile(np.asarray(branch.register, dtype=np.int8), (count, 1))
            if final:
                drawn = perfect_samples(branch.state.copy(), int(count), rng)
                register = np.concatenate([register, drawn], axis=1)
            rows.append(register)
        drawn = np.concatenate(rows)
        return drawn[rng.permutation(len(drawn))]
