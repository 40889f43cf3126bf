"""What every circuit simulator shares: the operation list, validation, plans and the results
that come from contracting a doubled (ket and bra) network.

:class:`CircuitBase` holds a circuit's operations (gates and channels, one
:class:`~tyxonq.circuit.operations.operation.Operation` type), validates them as they are added,
makes and caches the plan of each result, and computes expectation values, Pauli-string
expectations and samples through those plans. :class:`~tyxonq.Circuit` (pure states) and
:class:`~tyxonq.DMCircuit` (density matrices) are siblings built on it: they differ in what they
start from, and in the results that need the whole state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import random_generator
from ..numerics.cache_registry import register_cache
from ..numerics.dual import TracingError
from ..numerics.host_twin import reads_on_host
from ..numerics.lanes import LanesError
from ..numerics.memory import (
    ContractionTooLarge,
    fits_in_memory,
    memory_budget,
    require_memory,
    require_sample_memory,
)
from ..numerics.progress import takes_progress
from ..numerics.protocol import ArrayBackend
from ..numerics.sharing import shared_rows, sharing
from .basis_state import BasisState, basis_state, one_hot, operator_product, pauli_values
from .calibration import cheapest_route, provisional_rates
from .contraction.evaluation import Request, evaluate_requests, evaluate_scalars
from .contraction.network import density_network, expectation_network, matrix_network
from .contraction.paths import THOROUGH_SLOWDOWN
from .contraction.plan import NetworkPlan, get_plan, get_plans, structure_token
from .contraction.rehearsal import placeholder, record, rehearsing
from .contraction.route_costs import RouteCost, cone_groups, lightcone_floor, network_cost
from .contraction.slicing import SLICED_COST_FACTOR, find_slicing, plan_cost
from .differentiation.node import expectation_node, recorded_angles, recorded_coefficients
from .differentiation.tracing import announce_traced_circuit
from .operations.gates import constant
from .simulator import SimulatorBase, dynamic_route, format_samples, pauli_factors, weighted_sum
from .wide_sampling import marginal_samples, mps_samples, sampling_method

__all__ = ["CircuitBase", "LIGHT_CONE_HINT"]
LIGHT_CONE_HINT = ("Local results (expectation, expectation_ps, amplitude) contract only what they "
                   "need; use those, or fewer qubits")
#: what a refused local result can do instead (its cheaper exact routes were tried first)
LOCAL_RESULT_HINT = ("No cheaper exact route applies: the circuit does not keep a basis state one, and "
                     "an untruncated MPS of it needs larger bonds (tq.rehearse(...) lists the routes). "
                     "Approximate it with c.to_mps(max_bond=...), or run it where more memory is available")
#: requests whose result is the whole state (their refusal points to local results)
WHOLE_STATE_REQUESTS = ("state", "matrix", "density")

#: per (structure, strings, density, compiling): the estimated work of the state and light-cone
#: routes (at most _ROUTE_COSTS_ENTRIES, then emptied; cleared with the other caches)
_ROUTE_COSTS: dict[tuple, tuple] = {}
_ROUTE_COSTS_ENTRIES = 4096
#: The light cones' bookkeeping counted from their operations can overstate what their batched
#: contraction pays (cones equal under renamings the grouping does not try share a plan too); the
#: state wins without building the cones' networks only by this factor.
FLOOR_MARGIN = 4

#: Seconds that finding one string's light cone takes per operation of the circuit (measured, 2
#: cores: 5-7 us from 41 to 15 000 operations).
CONE_SECONDS_PER_OPERATION = 5e-6
#: Finding the cones is paid once per structure and strings; where it would cost more than this
#: many evaluations of the state route, the state is taken without looking for them (a
#: molecule's UCCSD energy, 630 strings on 15 000 operations, 12 qubits: 60 s of search for a
#: 0.3 s state).
CONE_SEARCH_EVALUATIONS = 100
register_cache(f"{__name__}._ROUTE_COSTS", lambda: len(_ROUTE_COSTS), _ROUTE_COSTS.clear)


class CircuitBase(SimulatorBase, abstract=True):
    """Operations on ``num_qubits`` qubits and the results of the contraction simulators.

    Subclasses set :attr:`_inputs` (``None`` or their validated initial state) and say how the
    networks start (:meth:`inputs_kind`) and whether a channel may be simulated exactly
    (:meth:`check_exact`).
    """

    memory_hint = LIGHT_CONE_HINT

    def inputs_kind(self) -> bool | str:
        """How the networks start: ``False`` (``|0...0>``), ``True`` (an input state vector) or
        ``"density"`` (an input density matrix)."""
        return self._inputs is not None

    def check_exact(self, what: str) -> None:
        """Raise when ``what`` cannot be computed exactly for this circuit (a hook)."""

    def has_state_vector(self) -> bool:
        """Whether the state is a vector (gradients may sweep it) rather than a density matrix."""
        return True

    def structure(self) -> tuple:
        """What the circuit's plans depend on: qubits, the kind of input, every operation's
        structure (not its parameter values)."""
        return (self._num_qubits, self.inputs_kind(),
                tuple(op.structure for op in self._operations))

    def structure_key(self) -> int:
        """The :func:`~tyxonq.circuit.contraction.plan.structure_token` of :meth:`structure`,
        kept while the operations are the same list of the same length (gates are only ever
        added; :meth:`with_operations` makes a new list) and handed on by
        :meth:`with_parameters`, so a circuit re-run with new angles skips hashing its structure."""
        kept = self.__dict__.get("_structure_key")
        if kept is not None and kept[0] is self._operations and kept[1] == len(self._operations):
            return kept[2]
        token = structure_token(self.structure())
        self._structure_key = (self._operations, len(self._operations), token)
        return token

    def _same_structure(self, other: CircuitBase) -> None:
        """Hand this circuit's structure key to ``other`` (the same structure)."""
        other._structure_key = (other._operations, len(other._operations), self.structure_key())

    # -- evaluation --------------------------------------------------------------------------
    def _basis_route(self) -> BasisState | None:
        """The final basis state when every gate keeps the input basis state one
        (:mod:`~tyxonq.circuit.basis_state`): results then come by propagation, not contraction
        (reported by a rehearsal as the ``basis-state`` route)."""
        if self.inputs_kind() == "density":
            return None
        state = basis_state(self._num_qubits, self._operations, self._inputs)
        if state is not None:
            record("route", name="basis-state")
        return state

    def input_state(self, K: ArrayBackend) -> Any:
        """The initial state given as ``inputs``, as an array of backend ``K`` in a complex
        dtype, or ``None`` for ``|0...0>``.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> K = tq.get_backend("numpy")
        >>> tq.Circuit(1, inputs=np.array([0.0, 1.0])).input_state(K).tolist()
        [0j, (1+0j)]
        """
        if self._inputs is None:
            return None
        inputs = K.asarray(self._inputs)
        return inputs if K.is_complex(inputs) else K.cast(inputs, K.dtype)

    def result_plan(self, request: tuple, make_network: Any, output_shape: tuple[int, ...],
              what: str, token: int | None = None, repeats: int = 1) -> NetworkPlan:
        """The cached plan of one result of this circuit's structure, memory checked (``token``:
        this structure's :func:`~tyxonq.circuit.contraction.plan.structure_token`, if known;
        ``repeats``: how many contractions of it the caller is about to run, such as a batch of
        conditioned prefixes)."""
        self.check_exact(what)
        if self._lanes() is not None:
            raise LanesError(f"{what} of a batch of circuits (only state-vector results are batched)")
        K = get_backend()
        token = self.structure_key() if token is None else token
        # a compiled program reuses the plan and already spends seconds compiling, and a plan
        # contracted THOROUGH_SLOWDOWN times or more at once repays a search that much longer: there
        # the thorough search runs (a 36-qubit lattice's 1000 samples: 47 -> 19 s a call, 3.6 s
        # of planning); single eager calls, even on JAX, get the quick one
        thorough = K.compiling() or repeats >= THOROUGH_SLOWDOWN
        plan = get_plan(request + (token,), make_network, K.capabilities.max_ndim,
                        output_shape, thorough=thorough)
        return self._within_memory(K, plan, what, request[0] in WHOLE_STATE_REQUESTS)

    def _within_memory(self, K: ArrayBackend, network_plan: NetworkPlan, what: str,
                       whole_state: bool) -> NetworkPlan:
        """``network_plan`` if its largest intermediate fits the memory budget; else the same
        network sliced to fit (:mod:`~tyxonq.circuit.contraction.slicing`) where the slices cost at
        most ``SLICED_COST_FACTOR`` times the whole; else a refusal (:class:`ContractionTooLarge`,
        which :meth:`_routed` answers by another exact route where there is one). A rehearsal
        records the route that would be taken instead of refusing."""
        if network_plan.slicing is not None or fits_in_memory(K, network_plan.largest_tensor_size):
            return network_plan
        sliced, why = self._sliced(K, network_plan)
        if sliced is not None:
            return sliced
        if rehearsing():
            if not whole_state and self._exact_mps_allowed():
                record("route", name="exact-mps")
            return network_plan
        require_memory(K, network_plan.largest_tensor_size, f"{what} (its largest intermediate tensor)",
                       f"{why} {LIGHT_CONE_HINT if whole_state else LOCAL_RESULT_HINT}", ContractionTooLarge)
        return network_plan  # pragma: no cover - require_memory raised

    def _sliced(self, K: ArrayBackend, network_plan: NetworkPlan) -> tuple[NetworkPlan | None, str]:
        """The network plan sliced to the budget, or ``None`` and why not."""
        target = int(memory_budget(K) // (3 * (16 if K.precision == "complex128" else 8)))
        fewest = -(-network_plan.largest_tensor_size // max(target, 1))  # each sliced leg halves it at most
        least = fewest * len(network_plan.plan.path) * 65  # every step of every slice writes an entry
        if least > SLICED_COST_FACTOR * max(plan_cost(network_plan), 1.0):  # decided without a search
            return None, (f"Slicing it would take at least {fewest} slices, costing more than "
                          f"{SLICED_COST_FACTOR:g} times the whole contraction.")
        if target not in network_plan.slicings:
            network_plan.slicings[target] = find_slicing(network_plan, target)
        slicing = network_plan.slicings[target]
        if slicing is None:
            return None, "No slicing of it fits (its output alone is too large, or cotengra is missing)."
        ratio = slicing.count * plan_cost(slicing.network_plan) / max(plan_cost(network_plan), 1.0)
        if ratio > SLICED_COST_FACTOR:
            return None, (f"Slicing it into {slicing.count} slices would fit but cost {ratio:.3g} times the "
                          f"whole contraction (more than {SLICED_COST_FACTOR:g}x).")
        record("route", name="sliced")
        return replace(network_plan, slicing=slicing), ""

    def _exact_mps_allowed(self) -> bool:
        """Whether a refused local result may be tried as an untruncated MPS (pure circuits)."""
        return False

    def _routed(self, compute: Any, on_mps: Any) -> Any:
        """``compute()``; where its contraction does not fit, ``on_mps(mps)`` of an untruncated
        MPS of this circuit when one exists with small bonds (:meth:`_exact_mps`), else the
        refusal."""
        try:
            return compute()
        except ContractionTooLarge:
            mps = self._exact_mps() if self._exact_mps_allowed() else None
            if mps is None:
                raise
            return on_mps(mps)

    def _exact_mps(self) -> Any:
        return None

    def _evaluate(self, request: tuple, make_network: Any, output_shape: tuple[int, ...],
                  what: str, **binding: Any) -> Any:
        if self._is_traced():
            raise TracingError(
                f"{what} of a circuit with traced angles: exact gradients without autograd "
                "(method='adjoint' or 'parameter-shift') differentiate expectation values only; "
                "use the pytorch backend (autograd) or method='finite-difference'"
            )
        K = get_backend()
        plan = self.result_plan(request, make_network, output_shape, what)
        return evaluate_requests(K, self._operations, self.input_state(K), [Request(plan, **binding)],
                                 numbers_only=self.holds_only_numbers())[0]

    @dynamic_route
    def _marginal_probability(self, qubits: tuple[int, ...]) -> Any:
        """Only the light cone of ``qubits`` is contracted, so this works on circuits far too wide
        for a state."""
        K = get_backend()
        what = f"the probabilities of {len(qubits)} qubit(s)"
        if (basis := self._basis_route()) is not None:
            return K.asarray(one_hot(2 ** len(qubits), basis.index(qubits)), K.real_dtype)
        if self._sharded_route((), "marginal_probability"):
            return K.asarray(self._sharded_result(lambda state: state.marginal(qubits),
                                                  np.zeros(2 ** len(qubits))), K.real_dtype)
        n, ops, kind = self._num_qubits, list(self._operations), self.inputs_kind()
        network = lambda: density_network(n, ops, kind, qubits, diagonal=True)  # noqa: E731
        value = self._routed(lambda: self._evaluate(("marginal", qubits), network, (2 ** len(qubits),), what),
                             lambda mps: mps.marginal_probability(qubits))
        return K.real(value)

    @dynamic_route
    def _reduced_density_matrix(self, qubits: tuple[int, ...]) -> Any:
        """Only the light cone of ``qubits`` is contracted (the doubled network: the circuit on a
        ket side and, conjugated, on a bra side)."""
        size = 2 ** len(qubits)
        n, ops, kind = self._num_qubits, list(self._operations), self.inputs_kind()
        return self._evaluate(("density", qubits), lambda: density_network(n, ops, kind, qubits),
                              (size, size), f"the density matrix of {len(qubits)} qubit(s)")

    @dynamic_route
    def _matrix(self) -> Any:
        """The unitary's network contracted (the circuit's inputs play no part)."""
        K = get_backend()
        n, ops = self._num_qubits, list(self._operations)
        if not rehearsing():
            require_memory(K, 4 ** n, f"matrix() of {n} qubits", "Use fewer qubits")
        return self._evaluate(("matrix",), lambda: matrix_network(n, ops), (2 ** n, 2 ** n), "matrix()")

    @dynamic_route
    def _local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                           hermitian: bool, K: ArrayBackend) -> Any:
        """Only gates in the backward light cone of the measured qubits are contracted."""
        if self._lanes() is not None:
            return self._lane_local_expectation(matrices, groups, hermitian)
        if (basis := self._basis_route()) is not None:
            value = operator_product(K, basis, matrices, groups)
            return K.real(value) if hermitian else value
        return self._routed(
            lambda: self._contracted_expectation(operators, matrices, groups, diagonal, hermitian, K),
            lambda mps: mps.expectation(*operators, hermitian=hermitian))

    def _contracted_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                                hermitian: bool, K: ArrayBackend) -> Any:
        if self._is_traced():
            return self._traced(hermitian, lambda c: c.expectation(*operators, hermitian=True),
                                lambda K, state: self._apply_local(K, state, matrices, groups),
                                lambda c: [c.expectation_request(matrices, groups, diagonal)])
        if hermitian and (slots := recorded_angles(self, matrices)) is not None:
            return expectation_node(self, slots, lambda c: c.expectation(*operators, hermitian=True),
                                    others=(matrices,))
        value = evaluate_requests(K, self._operations, self.input_state(K),
                                  [self.expectation_request(matrices, groups, diagonal)],
                                  numbers_only=self.holds_only_numbers())[0]
        return K.real(value) if hermitian else value

    def expectation_request(self, matrices: list, groups: list, diagonal: list,
                             token: int | None = None) -> Request:
        """The contraction of ``<psi| O_1 ... O_m |psi>`` (observables already validated)."""
        n, ops, given = self._num_qubits, self._operations, self.inputs_kind()
        groups_key, diagonal_key = tuple(groups), tuple(diagonal)
        plan = self.result_plan(("expectation", groups_key, diagonal_key),
                          lambda: expectation_network(n, list(ops), given, groups_key, diagonal_key), (),
                          "expectation()", token)
        return Request(plan, matrices, [len(qubits) for qubits in groups])

    def pauli_requests(self, strings: Sequence[str]) -> list[Request]:
        """One contraction per Pauli string (none for an identity string); the plans of a list of
        strings are looked up at once after the first call."""
        K = get_backend()
        token = self.structure_key()
        factors = [term for term in pauli_factors(tuple(strings)) if term]

        def plan_each() -> tuple[NetworkPlan, ...]:
            return tuple(self.expectation_request([constant(K, letter) for _, letter in term],
                                                   [(q,) for q, _ in term],
                                                   [letter == "z" for _, letter in term], token).network_plan
                         for term in factors)

        self.check_exact("expectation()")
        plans = get_plans(("pauli", tuple(strings), token), plan_each, K.capabilities.max_ndim,
                          K.compiling())
        plans = tuple(self._within_memory(K, plan, "expectation()", whole_state=False) for plan in plans)
        operators = {letter: constant(K, letter) for letter in "xyz"}
        return [Request(plan, [operators[letter] for _, letter in term], [1] * len(term))
                for plan, term in zip(plans, factors)]

    @dynamic_route
    def _pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        """:meth:`pauli_expectations` of validated strings, by ``method`` (``"auto"``: the
        cheaper of the state and the light cones, :meth:`_state_route_chosen`; ``"state"``;
        ``"lightcone"``): every term contracts only its light cone, and terms whose light-cone
        networks are equal up to relabelling share one plan and are contracted together."""
        active = [i for i, string in enumerate(strings) if set(string) != {"I"}]
        if self._lanes() is not None:
            return weighted_sum(get_backend(), self._lane_pauli(strings), coefficients)
        if (basis := self._basis_route()) is not None:
            K = get_backend()
            return weighted_sum(K, K.asarray(pauli_values(basis, strings), K.real_dtype), coefficients)
        if method != "lightcone" and active and not self._is_traced():
            if (slots := self._state_gradient_slots(strings, coefficients, method == "state")) is not None:
                def through_state(c: CircuitBase) -> Any:  # the node's exact method: this very route
                    return c._pauli_expectations(strings, coefficients, "state")  # noqa: SLF001

                return expectation_node(self, slots, through_state, others=(coefficients,))
            if (values := self._state_pauli_values(strings, forced=method == "state")) is not None:
                return weighted_sum(get_backend(), values, coefficients)
        return self._routed(lambda: self._contracted_pauli(strings, active, coefficients, method),
                            lambda mps: mps.pauli_expectations(strings, coefficients))

    def _state_pauli_values(self, strings: list[str], forced: bool = False) -> Any:
        """Every string's value read from the one state (:meth:`state`, then
        :meth:`_strings_from_state`) where that is estimated cheaper on this machine than their
        light cones (:meth:`_state_route_chosen`; only where :meth:`_state_fits`, and not while
        exact gradients trace the circuit), or ``forced``; else ``None``."""
        K = get_backend()
        if not self._is_traced() and self._sharded_route(strings, "pauli_expectations", forced):
            return K.asarray(self._sharded_result(lambda state: state.pauli_values(strings),
                                                  np.zeros(len(strings)), strings), K.real_dtype)
        if not forced and not (self._state_fits(traced=False)
                               and self._state_route_chosen(strings, "pauli_expectations")):
            return None
        state = self.state()  # a rehearsal records its route here
        if rehearsing():
            return placeholder(K, (len(strings),))
        return self._strings_from_state(K, state, strings)

    def _state_fits(self, traced: bool) -> bool:
        """Whether the state route applies (in memory; ``traced``: also while exact gradients
        trace the circuit)."""
        raise NotImplementedError  # pragma: no cover - Circuit and DMCircuit have their own

    # -- a state sharded across the ranks of a distributed run (a hook: Circuit has one) ------
    def state_shards(self, copies: int = 1, trajectories: bool = False) -> Any:
        """The communicator whose ranks share this circuit's state vector in a distributed run
        (:mod:`~tyxonq.circuit.statevector.sharded`), or ``None`` where its results do not shard
        it: ``copies`` state vectors are what one process would hold at once; ``trajectories``:
        the pure states of noisy trajectories (channels allowed).

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(3).h(0).state_shards() is None  # one process, a state that fits
        True
        """
        return self._state_shards(copies, trajectories)

    def _state_shards(self, copies: int = 1, trajectories: bool = False) -> Any:
        """The hook behind :meth:`state_shards`: ``None`` (simulators without sharded states)."""
        return None

    def _sharded_route(self, strings: Sequence[str], what: str, forced: bool = False,
                       copies: int = 1) -> bool:
        """Whether ``what`` takes the sharded state: it is sharded (:meth:`_state_shards`) and
        either estimated cheaper than the strings' light cones or those do not fit one rank's
        budget, even sliced (``forced``: the state route asked for; no ``strings``: a result
        without light cones to compare, marginals, amplitudes and samples of a state too large
        for one rank)."""
        if self._state_shards(copies) is None:
            return False
        if forced or not strings or self._state_route_chosen(strings, what):
            return True
        try:
            # planned (and kept) as the cones would be: refused where they do not fit
            self.pauli_requests([s for s in strings if set(s) != {"I"}])
        except ContractionTooLarge:
            return True
        return False

    def _sharded_result(self, read: Any, rehearsed: Any, strings: Sequence[str] = ()) -> Any:
        """``read(state)`` of the sharded state (Circuit's); ``rehearsed`` in a rehearsal."""
        raise NotImplementedError  # pragma: no cover - only simulators with _state_shards

    def _strings_from_state(self, K: ArrayBackend, state: Any, strings: list[str]) -> Any:
        """The strings' real values read from :meth:`state`'s result."""
        raise NotImplementedError  # pragma: no cover - Circuit and DMCircuit have their own

    def _state_route_chosen(self, strings: Sequence[str], what: str) -> bool:
        """Whether the ``"state"`` route (the whole state computed, every string read from it)
        is estimated cheaper on this machine than the strings' light cones
        (:func:`~tyxonq.circuit.calibration.cheapest_route`). The state's work comes from
        :meth:`_state_route_cost`; a state that costs less than finding the strings' light cones
        (:data:`CONE_SECONDS_PER_OPERATION`) over :data:`CONE_SEARCH_EVALUATIONS` evaluations is
        chosen at once; otherwise the cones' bookkeeping comes from their light cones
        (:func:`~tyxonq.circuit.contraction.route_costs.lightcone_floor`, once per group of cones
        of one structure), and unless the state costs :data:`FLOOR_MARGIN` times less than that
        one network per group is built and costed too. The counts are kept per structure and
        strings; the rates are this machine's."""
        density = not self.has_state_vector()
        key = (self.structure_key(), tuple(strings), density, get_backend().compiling(),
               self._state_shards() is not None)
        costs = _ROUTE_COSTS.get(key)
        if costs is None:
            if len(_ROUTE_COSTS) >= _ROUTE_COSTS_ENTRIES:
                _ROUTE_COSTS.clear()
            state = self._state_route_cost(strings)
            K = get_backend()
            searching = len(strings) * len(self._operations) * CONE_SECONDS_PER_OPERATION
            if CONE_SEARCH_EVALUATIONS * state.seconds(provisional_rates(K), K.compiling()) <= searching:
                costs = _ROUTE_COSTS[key] = [state, None, None]  # the search would cost more
            else:
                groups = cone_groups(self._operations, strings, density)
                costs = _ROUTE_COSTS[key] = [state, lightcone_floor(groups), groups]
        state, cones, groups = costs
        if cones is None:
            return cheapest_route(what, (state,)) == "state"
        if cones.floor:
            K = get_backend()
            rates, compiling = provisional_rates(K), K.compiling()
            if FLOOR_MARGIN * state.seconds(rates, compiling) <= cones.seconds(rates, compiling):
                return cheapest_route(what, (state, cones)) == "state"
            representatives = self._cone_networks([strings[group.members[0]] for group in groups])
            cones = costs[1] = network_cost("lightcone", representatives,
                                            multiplicities=[len(group.members) for group in groups])
        return cheapest_route(what, (state, cones)) == "state"

    def _state_route_cost(self, strings: Sequence[str]) -> RouteCost:
        """The work of the ``"state"`` route for ``strings`` (each simulator its own)."""
        raise NotImplementedError  # pragma: no cover - Circuit and DMCircuit have their own

    def _cone_networks(self, strings: Sequence[str]) -> list:
        """The light-cone networks :meth:`pauli_requests` would plan for ``strings``."""
        n, ops, given = self._num_qubits, list(self._operations), self.inputs_kind()
        return [expectation_network(n, ops, given, tuple((q,) for q, _ in term),
                                    tuple(letter == "z" for _, letter in term))
                for term in pauli_factors(tuple(strings)) if term]

    def _contracted_pauli(self, strings: list[str], active: list[int], coefficients: Any,
                          method: str = "auto") -> Any:
        if self._is_traced():
            return self._traced_pauli(strings, active, coefficients, method)
        K = get_backend()
        if (slots := recorded_angles(self)) is not None:
            if recorded_coefficients(K, coefficients):  # weighted in autograd
                return weighted_sum(K, self.pauli_expectations(strings), coefficients)
            shape = () if coefficients is not None else (len(strings),)
            return expectation_node(self, slots, lambda c: c.pauli_expectations(strings, coefficients),
                                    shape, others=(coefficients,))
        values = K.ones((len(strings),), K.real_dtype)
        if active:
            found = K.real(evaluate_scalars(K, self._operations, self.input_state(K),
                                            self.pauli_requests([strings[i] for i in active]),
                                            self.holds_only_numbers()))
            # identity strings take the value 1: the appended one, gathered into place
            position = {i: p for p, i in enumerate(active)}
            values = found if len(active) == len(strings) else K.take(
                K.concatenate([found, K.ones((1,), K.dtype_of(found))]),
                [position.get(i, len(active)) for i in range(len(strings))])
        return weighted_sum(K, values, coefficients)

    def _traced_pauli(self, strings: list[str], active: list[int], coefficients: Any, method: str) -> Any:
        """:meth:`pauli_expectations` of a circuit with traced angles: Duals, by reverse mode through
        the strings' light cones, or for a weighted sum through the whole state
        (:meth:`_traced_state_request`) where that route is chosen or ``method`` is ``"state"``."""
        from .differentiation.traced import traced_terms

        weights = None if coefficients is None else np.asarray(coefficients)
        if weights is not None and np.iscomplexobj(weights):
            raise TracingError("exact gradients need a real objective: real coefficients")
        if not active:
            return np.ones(len(strings)) if weights is None else float(weights.sum())
        identity = 0.0 if weights is None else float(np.delete(weights, active).sum())
        evaluate = lambda c: c.pauli_expectations(strings, coefficients)  # noqa: E731 - parameter shift's
        if weights is not None and (request := self._traced_state_request(strings, method == "state")):
            readout = self._state_readout([strings[i] for i in active], weights[active])
            return traced_terms(self, lambda c: [request], evaluate, np.ones(1), [readout]) + identity
        result = traced_terms(self, lambda c: c.pauli_requests([strings[i] for i in active]), evaluate,
                              None if weights is None else weights[active])
        if weights is not None:
            return result + identity
        values: list[Any] = [1.0] * len(strings)
        for i, value in zip(active, result):
            values[i] = value
        return np.asarray(values, dtype=object)

    def _traced_state_request(self, strings: Sequence[str], forced: bool = False) -> Request | None:
        """The hook behind exact gradients of Pauli strings through the whole state: the state's
        contraction, where expectations are linear in its result (a density matrix), the state
        route is chosen over the light cones of ``strings`` (:meth:`_state_route_chosen`; or
        ``forced``: asked for) and reverse mode's retained operands fit in memory (``forced``: a
        ``MemoryError`` naming the size otherwise); its result is then read against
        :meth:`_state_readout` and reverse mode runs through that one contraction. ``None``, the
        light cones, by default (a state vector's expectation is quadratic in it: Circuit sweeps)."""
        return None

    def _state_readout(self, strings: list[str], weights: np.ndarray) -> np.ndarray:
        """The host array ``R`` whose ``sum(R * result)`` with :meth:`_traced_state_request`'s
        result is the weighted sum of ``strings`` (non-identity)."""
        raise NotImplementedError  # pragma: no cover - only simulators with a traced state request

    def _state_gradient_slots(self, strings: Sequence[str], coefficients: Any, forced: bool) -> list | None:
        """The slots of the gate angles autograd records (:func:`recorded_angles`) where a weighted
        Pauli sum of them is one gradient node whose exact method reads the whole state
        (:meth:`_traced_state_request`, chosen here or ``forced``) rather than autograd through
        the state's contraction: its backward pass is one vector-Jacobian product of that
        contraction, on the host twin (PyTorch, the noisy 10-qubit TFIM energy and gradient of
        ``benchmarks/``: 85-87 against 103-109 ms). ``None`` otherwise."""
        if coefficients is None or (slots := recorded_angles(self)) is None \
                or recorded_coefficients(get_backend(), coefficients) \
                or self._traced_state_request(strings, forced) is None:
            return None
        return slots

    # -- batches of circuits (angles given as lanes): simulators with batched evaluation override
    def _lane_local_expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        raise LanesError(f"expectation() of a batch of {type(self).__name__}s")

    def _lane_pauli(self, strings: list[str]) -> Any:
        raise LanesError(f"pauli_expectations() of a batch of {type(self).__name__}s")

    def _traced(self, hermitian: bool, evaluate: Any, apply_observable: Any, requests: Any = None) -> Any:
        if not hermitian:
            raise TracingError("exact gradients need a real objective: use hermitian=True")
        from .differentiation.traced import traced_expectation

        announce_traced_circuit(self)  # tq.optimize's QNG finds an objective's circuit this way
        return traced_expectation(self, evaluate, apply_observable, requests)

    @takes_progress
    def sample(self, shots: int, seed: int | None = None, format: str = "counts",
               readout_error: Any = None, method: str = "auto", final: bool = True) -> Any:
        """Measure all qubits ``shots`` times, exactly, at any width.

        Parameters
        ----------
        shots : int
            Number of samples (> 0).
        seed : int, optional
            Seed: the same seed gives the same samples.
        format : {"counts", "bitstrings", "indices", "bits"}
            A dict bitstring -> count, a list of bitstrings, a backend array of basis indices
            (at most 62 qubits), or the bits as a backend ``int8`` array ``(shots, width)``
            (qubit 0, or classical bit 0, in column 0; any width).
        readout_error : array or list of arrays, optional
            Confusion matrix ``confusion[read, true]`` (columns sum to 1) for every qubit, or one
            per qubit, applied to the sampled bits; by default the noise model's, if any.
        method : {"auto", "state", "mps", "contraction"}
            ``"state"``: from the ``2^n`` probabilities; ``"mps"``: perfect sampling from an
            untruncated matrix-product state (pure circuits); ``"contraction"``: sequential
            conditional marginals, each group of qubits drawn from its light cone's contraction
            with the bits drawn so far fixed, shots that share those bits together. ``"auto"``:
            the one basis state of a circuit that keeps a basis state one
            (:mod:`tyxonq.circuit.basis_state`), else the state up to
            :data:`~tyxonq.circuit.wide_sampling.STATE_QUBITS` qubits, then the MPS while a count of
            the gates crossing each cut bounds its bonds by 256, else the contraction
            (:mod:`tyxonq.circuit.wide_sampling`). All are exact. In a distributed run each rank
            draws its share of the shots with its own seed derived from ``seed``
            (:func:`~tyxonq.numerics.sharing.shared_rows`) and every rank returns all of them.
        final : bool
            Measure every qubit at the end (default). A dynamic circuit (mid-circuit
            :meth:`measure`, ``reset``, ``cond``, ``post_select``) reports its classical bits
            first: keys ``"<c0 c1 ...> <q0 q1 ...>"`` (bit 0 and qubit 0 leftmost; only the bits
            with ``final=False``), drawn shot by shot from branches of the state
            (:mod:`tyxonq.circuit.branch_sampling`; shots that share outcomes share work), or from
            the deferred-measurement circuit above
            :data:`~tyxonq.circuit.branch_sampling.BRANCH_QUBITS` qubits; ``method`` is then not
            used, and readout errors apply to the final qubits.
        progress : bool, optional
            A progress bar for this call (a dynamic circuit's branch steps, the contraction
            sampler's groups of qubits): ``None`` follows :func:`tyxonq.set_progress`.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).x(0).sample(5, seed=1)
        {'10': 5}
        >>> c = tq.Circuit(2).h(0)
        >>> _ = c.cond(c.measure(0)).x(1)
        >>> sorted(c.sample(100, seed=1))
        ['0 00', '1 11']
        >>> tq.Circuit(1).sample(1000, seed=1, readout_error=[[0.9, 0.2], [0.1, 0.8]])["1"] / 1000
        0.103
        >>> c = tq.Circuit(60).h(0)
        >>> for q in range(59):
        ...     _ = c.cx(q, q + 1)
        >>> [bits.count("1") for bits in sorted(c.sample(100, seed=2))]  # 60 qubits: no state vector
        [0, 60]
        """
        shots, confusions = self._sampling(shots, format, readout_error, seed, final)
        n = self._num_qubits
        K = get_backend()
        if self.is_dynamic() or not final:
            require_sample_memory(shots, n + self.num_clbits, format, bits=True)
            return self._dynamic_results().samples(shots, seed, format, confusions, final)
        if method in ("auto", "state") and self._sharded_route((), "sample") \
                and (method == "state" or self._basis_route() is None):
            require_sample_memory(shots, n, format, bits=confusions is not None)
            indices = self._sharded_result(lambda state: state.sample_indices(shots, seed),
                                           np.zeros(0, dtype=np.int64))
            return format_samples(K, n, format, confusions, seed, indices=K.asarray(indices, "int64"))
        chosen = sampling_method(self, method)
        require_sample_memory(shots, n, format, bits=chosen != "state" or confusions is not None)
        if rehearsing():  # planned, not run: nothing to sample from
            if chosen == "state":
                self.probability()
            empty = {"indices": K.zeros((0,), "int64"), "bits": K.zeros((0, n), "int8"), "bitstrings": []}
            return empty.get(format, {})
        if method == "auto" and (basis := self._basis_route()) is not None:  # one basis state
            bits = np.tile(np.asarray(basis.bits, dtype=np.int64), (shots, 1))
            return format_samples(K, n, format, confusions, seed, bits=bits)
        if chosen in ("mps", "contraction"):  # shots shared between the ranks of a distributed run
            sampler = mps_samples if chosen == "mps" else marginal_samples
            bits = shared_rows(lambda count, s: sampler(self, count, random_generator(s)), shots, seed, n,
                               "the samples")
            return format_samples(K, n, format, confusions, seed, bits=bits)
        probabilities, generator = self.probability(), K.rng(seed)
        drawer = _drawing_backend(K, probabilities, generator)  # the host: nothing to detach there
        probabilities = K.to_numpy(probabilities) if drawer is not K else K.detach(probabilities)
        probabilities = drawer.cast(probabilities, "float64")
        # a density matrix's diagonal may hold rounding-level negatives (-1e-35): none is drawn
        probabilities = (probabilities + drawer.abs(probabilities)) / 2
        probabilities = probabilities / drawer.sum(probabilities)
        if sharing() is None:
            indices = K.asarray(drawer.choice(2 ** n, size=shots, p=probabilities, rng=generator), "int64")
        else:
            def draw(count: int, rank_seed: int | None) -> Any:
                draws = drawer.choice(2 ** n, size=count, p=probabilities, rng=K.rng(rank_seed))
                return drawer.to_numpy(draws)
            indices = K.asarray(shared_rows(draw, shots, seed, 1, "the samples")[:, 0], "int64")
        return format_samples(K, n, format, confusions, seed, indices=indices)

    def with_noise(self, model: Any) -> Any:
        """This circuit with a :class:`~tyxonq.NoiseModel` applied: a :class:`~tyxonq.DMCircuit`
        with the model's channels after every matching gate and its readout errors on samples.

        Examples
        --------
        >>> import tyxonq as tq
        >>> model = tq.NoiseModel().add(tq.channels.depolarizing(0.1), gates="1q")
        >>> noisy = tq.Circuit(1).h(0).with_noise(model)
        >>> type(noisy).__name__, len(noisy.operations)
        ('DMCircuit', 2)
        """
        return model.apply(self)


def _drawing_backend(K: ArrayBackend, probabilities: Any, generator: Any) -> ArrayBackend:
    """Where samples from ``probabilities`` are drawn: ``K``'s host twin when ``K``'s ``generator``
    is a NumPy one anyway (JAX's ``K.rng``) and the probabilities are readable there, so that they
    are normalised and searched on the host without a round trip per step (10^5 samples of a
    20-qubit state on eager JAX: 93 ms before, NumPy's own 72 ms); else ``K``. The same draws
    either way."""
    on_host = isinstance(generator, np.random.Generator) and reads_on_host(K, [probabilities])
    return K.host_twin() if on_host else K
