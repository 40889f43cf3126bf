"""The :class:`Circuit`: a pure state, whose results come from contracting its network or from
sweeping its state vector.

Qubit 0 is the most significant bit of a basis-state index and the leftmost character of a
bitstring: in ``c.amplitude("01")`` qubit 0 is ``0`` and qubit 1 is ``1``, the state's index 1.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import checked_choice, checked_flag, checked_state_vector
from ..numerics.distributed import communicator
from ..numerics.dual import TracingError
from ..numerics.host_twin import reads_on_host
from ..numerics.lanes import Lanes, LanesError
from ..numerics.memory import fits_in_memory, require_memory
from ..numerics.protocol import ArrayBackend
from ..operators.pauli_action import apply_pauli_sum, pauli_sum_expectation
from ..operators.state_expectation import state_pauli_values
from .base import LIGHT_CONE_HINT, CircuitBase
from .calibration import register_probe
from .contraction.network import amplitude_network, state_network
from .contraction.rehearsal import placeholder, record, rehearsing
from .contraction.route_costs import RouteCost, network_cost, readout_passes, sweep_cost
from .differentiation.node import expectation_node, recorded_angles
from .host_state import host_state
from .operations.fusion import MAX_BLOCK_QUBITS
from .refusals import NoisyCircuitError
from .simulator import dynamic_route
from .statevector.lanes import lane_state, stacks_states
from .statevector.placement import apply_matrix, apply_placed, place
from .statevector.sharded import sharded_sweep
from .statevector.sharded_adjoint import sharded_adjoint
from .statevector.sharding_report import record_sharding, sharded_sweep_cost
from .statevector.sweep import sweep_program, sweep_state

__all__ = ["Circuit", "NoisyCircuitError"]  # the refusal lives in .refusals; kept importable from here

#: ``state()`` of at most this many qubits is computed by a block state-vector sweep
#: (:mod:`tyxonq.circuit.statevector.sweep`: a few matmuls over the state, nothing to plan); larger states by
#: contracting the tensor network, whose path needs fewer passes over the large arrays. On a
#: backend that compiles whole functions (JAX) every size is contracted: compiled, the per-call
#: overhead the sweep saves is gone, and XLA runs the contraction faster (a 12-qubit energy and
#: gradient under ``jax.jit``: 2.1 ms contracted, 5.4 ms swept).
SWEEP_MAX_QUBITS = 14
#: a local result whose contraction does not fit is computed from an MPS of the circuit with bonds
#: of at most this dimension, when nothing beyond rounding (EXACT_MPS_TOLERANCE of the norm) had
#: to be cut for it (each gate then costs an SVD of at most 2 x 64 columns)
EXACT_MPS_MAX_BOND = 64
EXACT_MPS_TOLERANCE = 1e-12
STATE_METHODS = ("auto", "sweep", "contraction")


class Circuit(CircuitBase):
    """A quantum circuit on ``num_qubits`` qubits.

    Parameters
    ----------
    num_qubits : int
        Number of qubits; they start in ``|0...0>``.
    inputs : array, optional
        Initial state vector of length ``2**num_qubits`` instead (qubit 0 most significant).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0).cx(0, 1)
    >>> K = tq.get_backend()
    >>> (K.to_numpy(c.probability()).round(3) + 0.0).tolist()
    [0.5, 0.0, 0.0, 0.5]
    >>> round(float(c.expectation_ps(z=[0, 1])), 12)
    1.0
    """

    def __init__(self, num_qubits: int, inputs: Any = None) -> None:
        super().__init__(num_qubits)
        self._inputs = None if inputs is None else self._validated_inputs(inputs)

    def check_exact(self, what: str) -> None:
        """Refuse ``what`` (a pure-state result) when the circuit holds channels."""
        if self.is_noisy():
            raise self._noisy_refusal(what)

    def to_density_matrix(self) -> Any:
        """The same operations (gates and channels) on a :class:`~tyxonq.DMCircuit`.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(1).h(0).depolarizing(0, p=0.3)
        >>> round(float(c.to_density_matrix().purity()), 6)
        0.68
        """
        from .density import DMCircuit

        return DMCircuit.from_circuit(self)

    def _validated_inputs(self, inputs: Any) -> Any:
        return checked_state_vector(get_backend(), inputs, self._num_qubits)

    # -- results -----------------------------------------------------------------------------
    def state(self, method: str = "auto") -> Any:
        """The output state vector, of length ``2**num_qubits`` (qubit 0 most significant).

        ``method``: ``"sweep"`` applies fused blocks of gates to a state vector
        (:mod:`tyxonq.circuit.statevector.sweep`), ``"contraction"`` contracts the circuit's tensor network
        along its cached path; ``"auto"`` sweeps up to :data:`SWEEP_MAX_QUBITS` qubits, and in a
        program JAX compiles on the CPU takes a state of ``K.host_program_entries()`` amplitudes or
        more (2^22) from NumPy, which contracts it faster than XLA (:mod:`tyxonq.circuit.host_state`).
        All are exact; they differ only in speed.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.Circuit(2).h(0).cx(0, 1)
        >>> bool(np.allclose(c.state(method="sweep"), c.state(method="contraction")))
        True
        """
        checked_choice(method, STATE_METHODS, "method")
        self.check_exact("state()")
        return self._state(method)

    @dynamic_route
    def _state(self, method: str) -> Any:
        K = get_backend()
        n, ops, given = self._num_qubits, list(self._operations), self._inputs is not None
        if not rehearsing():
            require_memory(K, 2 ** n, f"state() of {n} qubits", LIGHT_CONE_HINT)
        if self._lanes() is not None:  # a batch of circuits: one stacked sweep (any method's values)
            return Lanes(self._lane_state(K))
        automatic = method == "auto"
        if automatic:
            swept = n <= SWEEP_MAX_QUBITS and ops and not K.compiling()
            method = "sweep" if swept else "contraction"
        if method == "sweep" and not self._is_traced():
            if rehearsing():
                record("sweep", qubits=n)
                return placeholder(K, (2 ** n,))
            return sweep_state(K, n, ops, self.input_state(K))
        if automatic and ops and (state := host_state(self, K)) is not None:
            return state
        return self._evaluate(("state",), lambda: state_network(n, ops, given), (2 ** n,),
                              "state()")

    wavefunction = state

    @dynamic_route
    def _amplitude(self, bits: tuple[int, ...]) -> Any:
        """``<bitstring|psi>`` without building the state: the amplitude's network contracted."""
        if self._lanes() is not None:
            return self.state()[int("".join(map(str, bits)), 2)]
        if (basis := self._basis_route()) is not None:
            K = get_backend()
            return K.asarray(basis.phase if tuple(bits) == basis.bits else 0j, K.dtype)
        if self._sharded_route((), "amplitude"):
            K = get_backend()
            return K.asarray(self._sharded_result(lambda state: state.amplitude(bits), 0j), K.dtype)
        n, ops, given = self._num_qubits, list(self._operations), self._inputs is not None
        return self._routed(lambda: self._evaluate(("amplitude",), lambda: amplitude_network(n, ops, given),
                                                   (), "amplitude()", bits=bits),
                            lambda mps: mps.amplitude("".join(map(str, bits))))

    @dynamic_route
    def _pauli_sum_value(self, hamiltonian: Any, method: str, hermitian: bool) -> Any:
        """``method="state"``: every term applied to the one computed state (a stack of states
        when the angles are lanes), ``"lightcone"``: each term's light cone, ``"auto"``: the one
        estimated cheaper on this machine (:meth:`_state_route_chosen`; the state only where it
        fits in memory)."""
        strings = [string for _, string in hamiltonian]
        if method in ("auto", "state") and communicator().size > 1:  # a sharded state? (no walk otherwise)
            copies = 3 if self._is_traced() or recorded_angles(self, hamiltonian) is not None else 1
            if self._sharded_route(strings, "expectation(PauliSum)", method == "state", copies):
                return self._sharded_pauli_sum(hamiltonian, hermitian)
        if method == "state" or (method == "auto" and self._state_fits(traced=True)
                                 and self._state_route_chosen(strings, "expectation(PauliSum)")):
            observable = stacks_states(lambda K, state: apply_pauli_sum(K, state, hamiltonian),
                                       lambda K, stack: pauli_sum_expectation(K, stack, hamiltonian))
            observable.reads = (hamiltonian,)  # all it reads: a gradient node may compute on the host twin
            return self.dense_expectation(observable, hermitian=hermitian)
        return super()._pauli_sum_value(hamiltonian, "lightcone" if method == "auto" else method, hermitian)

    # -- a state sharded across the ranks of a distributed run ------------------------------
    def _state_shards(self, copies: int = 1, trajectories: bool = False) -> Any:
        """The communicator whose ranks share this circuit's state
        (:mod:`~tyxonq.circuit.statevector.sharded`): in a distributed run of ``2^k`` ranks, a
        noiseless (``trajectories``: noisy allowed), non-dynamic circuit without lanes whose
        ``copies`` state vectors (one for values, three for an exact gradient, four for a
        trajectory's branch: what one process would need) exceed one rank's
        memory budget (:func:`~tyxonq.numerics.memory.memory_budget`) while a shard and an exchange
        buffer (half a shard) fit, with at least
        :data:`~tyxonq.circuit.operations.fusion.MAX_BLOCK_QUBITS` local
        qubits; else ``None``. No array the sharded route makes is larger than a shard; a rank
        holds ``copies`` of them at once (``tq.rehearse`` reports it)."""
        comm = communicator()
        size, n = comm.size, self._num_qubits
        if size == 1 or size & (size - 1) or (self.is_noisy() and not trajectories) or self.is_dynamic() \
                or self._lanes() is not None:
            return None
        K = get_backend()
        local = n - (size.bit_length() - 1)
        if local < MAX_BLOCK_QUBITS or fits_in_memory(K, copies * 2 ** n) \
                or not fits_in_memory(K, 3 * 2 ** local // 2):
            return None
        return comm

    def _sharded_result(self, read: Any, rehearsed: Any, strings: Sequence[str] = (), copies: int = 1) -> Any:
        """``read(state)`` of this circuit's state sharded over the run's ranks (the same on every
        rank); in a rehearsal the plan is recorded (``strings``: the Pauli strings read) and
        ``rehearsed`` returned."""
        K, comm = get_backend(), self._state_shards(copies)
        n, ops = self._num_qubits, list(self._operations)
        if rehearsing():
            record_sharding(K, comm.size, n, ops, self._inputs is not None, copies, strings)
            return rehearsed
        comm.agree((self.structure_key(), n, comm.size), "the sharded circuit")
        return read(sharded_sweep(K, comm, n, ops, self.input_state(K)))

    def _sharded_pauli_sum(self, hamiltonian: Any, hermitian: bool) -> Any:
        """A Pauli sum's expectation on the sharded state; with traced angles its exact gradient
        by the sharded adjoint sweep."""
        K = get_backend()
        if self._is_traced():
            if not hermitian:
                raise TracingError("exact gradients need a real objective: use hermitian=True")
            from .differentiation.traced import traced_expectation

            comm = self._state_shards(3)

            def sweep(K: ArrayBackend, plain: Any, wanted: dict, count: int) -> tuple[float, Any]:
                if rehearsing():  # planned, not run: a zero value and gradient
                    record_sharding(K, comm.size, plain.num_qubits, plain.operations,
                                    plain.input_state(K) is not None, 3,
                                    [string for _, string in hamiltonian], gradient=True)
                    return 0.0, np.zeros(count)
                comm.agree((plain.structure_key(), plain.num_qubits, comm.size), "the sharded circuit")
                return sharded_adjoint(K, comm, plain.operations, plain.num_qubits, plain.input_state(K),
                                       hamiltonian, wanted, count)[:2]
            return traced_expectation(self, lambda c: c.expectation(hamiltonian), None, sweep=sweep)
        if hermitian and (slots := recorded_angles(self, hamiltonian)) is not None:
            return expectation_node(self, slots, lambda c: c.expectation(hamiltonian), others=(hamiltonian,))
        value = self._sharded_result(lambda state: state.expectation(hamiltonian), 0.0,
                                     [string for _, string in hamiltonian])
        return K.asarray(value, K.real_dtype if hermitian else K.dtype)

    def _state_fits(self, traced: bool) -> bool:
        """Whether the state route applies: a noiseless circuit whose state fits in memory
        (``traced``: also while exact gradients trace it)."""
        return not self.is_noisy() and (traced or not self._is_traced()) \
            and fits_in_memory(get_backend(), 2 ** self._num_qubits)

    def _state_route_cost(self, strings: Sequence[str]) -> RouteCost:
        """The state as :meth:`state` computes it -- swept in fused blocks up to
        :data:`SWEEP_MAX_QUBITS` qubits (not while compiling), else its network contracted -- then
        the strings read from it."""
        K, n = get_backend(), self._num_qubits
        if (comm := self._state_shards()) is not None:
            program = sweep_program(n, self._operations, K.capabilities.max_ndim)
            return sharded_sweep_cost(program, comm.size, strings, self._inputs is not None)
        if n <= SWEEP_MAX_QUBITS and not K.compiling():
            program = sweep_program(n, self._operations, K.capabilities.max_ndim)
            blocks = [(len(block.qubits), block.diagonal) for block in program.blocks]
            return sweep_cost(n, blocks, strings)
        network = state_network(n, list(self._operations), self._inputs is not None)
        return network_cost("state", [network], readout_passes(n, strings, density=False))

    def _strings_from_state(self, K: ArrayBackend, state: Any, strings: list[str]) -> Any:
        """Every string read from the state vector, one flip per group of strings flipping the
        same qubits (:func:`~tyxonq.operators.state_expectation.state_pauli_values`; a 16-qubit
        depth-12 circuit of non-local CNOTs: 100 full-width cones took 89 s, the state and the
        strings 0.06 s)."""
        return state_pauli_values(K, state, strings)

    def to_mps(self, max_bond: int | None = None, cutoff: float = 1e-12) -> Any:
        """The same gates and input on a :class:`~tyxonq.MPSCircuit` (``max_bond``/``cutoff``:
        its truncation; ``max_bond=None, cutoff=0.0`` is exact).

        Examples
        --------
        >>> import tyxonq as tq
        >>> mps = tq.Circuit(3).h(0).cx(0, 1).cx(1, 2).to_mps(max_bond=4)
        >>> mps.bond_dimensions()
        [2, 2]
        """
        from .mps import MPSCircuit

        self.check_exact("to_mps()")
        mps = MPSCircuit(self._num_qubits, max_bond=max_bond, cutoff=cutoff, inputs=self._inputs)
        return mps.add_clbits(self.num_clbits).append(self)

    def _exact_mps_allowed(self) -> bool:
        return not self.is_noisy() and not self._is_traced() and self._lanes() is None

    def _exact_mps(self) -> Any:
        """An MPS of this circuit with bonds of at most :data:`EXACT_MPS_MAX_BOND` and nothing
        cut but rounding, or ``None`` when its bonds need more, or when its sites (three times
        over: a gate's split holds two of them) do not fit the memory budget -- the route is held
        to the budget as every other is, on every backend."""
        mps = self.to_mps(max_bond=EXACT_MPS_MAX_BOND, cutoff=0.0)
        if float(mps.truncation_error()) > EXACT_MPS_TOLERANCE:
            return None
        entries = sum(2 * left * right for left, right in zip([1] + mps.bond_dimensions(),
                                                              mps.bond_dimensions() + [1]))
        return mps if fits_in_memory(get_backend(), 3 * entries) else None

    @dynamic_route
    def _probability(self) -> Any:
        """``|psi|^2`` of :meth:`state`: on the host twin where nothing traces or tracks the state
        (JAX's eager arrays: two eager XLA operations on fresh 2^20-entry buffers took 45 ms on the
        2-core reference machine, NumPy's squares 3 ms), else on the backend. The same values."""
        state = self.state()
        K = get_backend()
        if reads_on_host(K, [state]):
            host = K.to_numpy(state)
            return K.asarray(host.real * host.real + host.imag * host.imag)
        return K.real(K.conj(state) * state)

    # -- batches of circuits (angles given as lanes) ----------------------------------------
    def _lane_state(self, K: ArrayBackend) -> Any:
        """The ``(lanes, 2^n)`` stack of states of a circuit whose angles are lanes."""
        n, lanes = self._num_qubits, self._lanes()
        self.check_exact("a batch of states")
        if rehearsing():
            raise LanesError("a rehearsal of a batched circuit")
        try:
            require_memory(K, 3 * lanes * 2 ** n, f"a batch of {lanes} states of {n} qubits", "")
        except MemoryError as error:
            raise LanesError(f"{error} (the batch is evaluated one element at a time)") from error
        return lane_state(K, n, self._operations, lanes, self.input_state(K))

    def _lane_local_expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        K = get_backend()
        stack = self._lane_state(K)
        lanes, n = K.shape(stack)[0], self._num_qubits
        applied = stack
        for matrix, qubits in zip(matrices, groups):
            placement = place(tuple(qubits), n, lead=lanes, max_ndim=K.capabilities.max_ndim)
            applied = apply_placed(K, applied, matrix, placement)
        value = K.sum(K.conj(stack) * applied, axis=1)
        return Lanes(K.real(value) if hermitian else value)

    def _lane_pauli(self, strings: list[str]) -> Lanes:
        K = get_backend()
        return Lanes(state_pauli_values(K, self._lane_state(K), strings))

    def _apply_local(self, K: ArrayBackend, state: Any, matrices: list, groups: list) -> Any:
        for matrix, qubits in zip(matrices, groups):
            state = apply_matrix(K, state, matrix, qubits, self._num_qubits)
        return state

    def dense_expectation(self, apply_observable: Any, hermitian: bool = True) -> Any:
        """``<psi|O|psi>`` from the state vector, for ``O`` given by its action on a state.

        ``apply_observable(K, state)`` returns ``O|state>`` through backend operations; this is
        how a :class:`~tyxonq.PauliSum` applies all its terms to one computed state.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit(1).x(0)
        >>> round(float(c.dense_expectation(lambda K, s: -s)), 12)
        -1.0
        """
        hermitian = checked_flag(hermitian, "hermitian")
        self._require_pure("dense_expectation()")
        if self._is_traced():
            return self._traced(hermitian, lambda c: c.dense_expectation(apply_observable),
                                apply_observable)
        if self._lanes() is not None:
            K = get_backend()
            stack = self._lane_state(K)
            if getattr(apply_observable, "stack_expectation", None) is not None:
                value = apply_observable.stack_expectation(K, stack)
            else:
                if getattr(apply_observable, "stacks_states", False):
                    applied = apply_observable(K, stack)
                else:
                    applied = K.stack([apply_observable(K, stack[i]) for i in range(K.shape(stack)[0])])
                value = K.sum(K.conj(stack) * applied, axis=1)
            return Lanes(K.real(value) if hermitian else value)
        if hermitian and (slots := recorded_angles(self)) is not None:
            return expectation_node(self, slots, lambda c: c.dense_expectation(apply_observable),
                                    others=getattr(apply_observable, "reads", None))
        K = get_backend()
        state = self.state()
        if hermitian:
            return K.hermitian_expectation(state, lambda vector: apply_observable(K, vector))
        return K.sum(K.conj(state) * apply_observable(K, state))

    def inverse(self) -> Circuit:
        """The adjoint circuit (gates reversed and inverted), starting from ``|0...0>``."""
        self.check_exact("inverse()")
        inverted = Circuit(self._num_qubits)
        inverted._append([op.adjoint() for op in reversed(self._operations)])
        return inverted


register_probe(Circuit)
