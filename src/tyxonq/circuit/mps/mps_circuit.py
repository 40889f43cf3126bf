"""The :class:`MPSCircuit`: gates on a matrix-product state with bounded bond dimension.

It is a sibling of :class:`~tyxonq.Circuit`: the same gate methods, operations and checks
(:class:`~tyxonq.circuit.simulator.SimulatorBase`), simulated differently. The
operations are applied to a matrix-product state when a result is first asked for, and the state
is kept: later results, and circuits that extend this one (a measurement basis rotation, more
gates), start from it.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.arguments import checked_state_vector, random_generator
from ...numerics.dual import TracingError
from ...numerics.lanes import LanesError
from ...numerics.memory import require_memory, require_sample_memory
from ...numerics.progress import takes_progress
from ...numerics.protocol import ArrayBackend
from ..contraction.host_route import host_twin_for
from ..contraction.rehearsal import ContractionReport, route_report
from ..differentiation.traced import parameter_shift_dual, traced_expectation
from ..operations.gates import constant, gate_matrix
from ..simulator import SimulatorBase, dynamic_route, format_samples, simulator_class, weighted_sum
from . import measure
from .adjoint import local_observable, mps_adjoint, pauli_sum_observable, refuse_gradient_in_place
from .branches import MPSBranches
from .sampling import perfect_samples
from .schedule import apply_operations
from .state import MPSState, truncation_of

__all__ = ["MPSCircuit", "MPS_HINT"]

MPS_HINT = ("amplitude, expectation, expectation_ps, reduced_density_matrix, marginal_probability "
            "and sample never build the 2^n amplitudes; use those")
INPUT_TOLERANCE = 1e-6


class MPSCircuit(SimulatorBase):
    """A circuit on ``num_qubits`` qubits simulated as a matrix-product state.

    Every gate method of :class:`~tyxonq.Circuit`, with the same conventions (qubit 0 most
    significant, chaining). Two-qubit gates on neighbours cost one SVD of a ``2D x 2D`` matrix;
    gates on distant qubits are brought together by swaps (each an SVD) and taken back.

    Parameters
    ----------
    num_qubits : int
        Number of qubits.
    max_bond : int, optional
        The largest bond dimension kept (``None``: no cap).
    cutoff : float
        Singular values are dropped, smallest first, while their discarded weight (sum of
        squares, relative to the total) stays at most ``cutoff``; in ``[0, 1)``. Values at
        rounding level (below ``s_max * k * eps``, as ``numpy.linalg.matrix_rank``) are always
        dropped.
    inputs : optional
        The initial state instead of ``|0...0>``: a product state (``n`` one-qubit vectors,
        shape ``(n, 2)``), a dense state vector of length ``2**n`` (split into an exact MPS), or
        a list of ``n`` site tensors of shapes ``(D_i, 2, D_{i+1})`` with ``D_0 = D_n = 1``.
        It must be normalised (to 1e-6).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.MPSCircuit(100, max_bond=8)
    >>> c = c.h(0)
    >>> for q in range(99):
    ...     c = c.cx(q, q + 1)
    >>> round(abs(complex(c.amplitude("1" * 100))) ** 2, 12), max(c.bond_dimensions())
    (0.5, 2)
    >>> round(float(c.expectation_ps(z=[0, 99])), 12), round(float(c.entanglement_entropy(50)), 6)
    (1.0, 0.693147)
    """

    memory_hint = MPS_HINT

    def __init__(self, num_qubits: int, max_bond: int | None = None, cutoff: float = 1e-12,
                 inputs: Any = None) -> None:
        super().__init__(num_qubits)
        if max_bond is not None and (isinstance(max_bond, bool) or not isinstance(
                max_bond, numbers.Integral) or max_bond < 1):
            raise ValueError(f"max_bond={max_bond!r} must be a positive int or None")
        if isinstance(cutoff, bool) or not isinstance(cutoff, numbers.Real) or not 0 <= cutoff < 1:
            raise ValueError(f"cutoff={cutoff!r} must be a number in [0, 1)")
        self._max_bond = None if max_bond is None else int(max_bond)
        self._cutoff = float(cutoff)
        self._inputs = None if inputs is None else self._validated_inputs(inputs)
        self._cache: tuple | None = None  # (backend, operations simulated, state)

    @classmethod
    def from_state(cls, state: MPSState) -> MPSCircuit:
        """A circuit on ``state`` (an :class:`~tyxonq.circuit.mps.state.MPSState`, not copied: the
        caller keeps it unchanged while the circuit is used), with its truncation settings: what
        a propagation (TEBD) hands to observables and callbacks.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.MPSCircuit(3, max_bond=4).h(0).cx(0, 1)
        >>> view = tq.MPSCircuit.from_state(c.simulated_state("example"))
        >>> round(float(view.expectation_ps(z=[0, 1])), 12), view.max_bond
        (1.0, 4)
        """
        truncation = state.truncation
        circuit = cls(state.num_sites, truncation.max_bond, truncation.cutoff)
        circuit._inputs = ("sites", list(state.sites))
        circuit._cache = (state.K, (), state)
        return circuit

    @property
    def max_bond(self) -> int | None:
        return self._max_bond

    @property
    def cutoff(self) -> float:
        return self._cutoff

    def _accept(self, operations: Sequence[Any]) -> None:
        """Refuse channels: an MPS is a pure state."""
        for op in operations:
            if op.channel is not None:
                raise ValueError(
                    f"{op.channel.name} on qubits {op.qubits}: an MPSCircuit simulates pure states; use "
                    "tq.DMCircuit for noisy circuits, or a tq.Circuit with tq.noise.trajectory_expectation")

    # -- inputs --------------------------------------------------------------------------------
    def _validated_inputs(self, inputs: Any) -> tuple[str, Any]:
        """``("product" | "dense" | "sites", data)`` after checking shapes and the norm."""
        n = self._num_qubits
        K = get_backend()
        if isinstance(inputs, (list, tuple)) and inputs and np.ndim(_host(K, inputs[0])) == 3:
            shapes = [tuple(np.shape(_host(K, site))) for site in inputs]
            if len(shapes) != n:
                raise ValueError(f"inputs has {len(shapes)} site tensors; {n} qubits need {n}")
            for i, shape in enumerate(shapes):
                left = 1 if i == 0 else shapes[i - 1][2]
                last = i == n - 1
                if len(shape) != 3 or shape[1] != 2 or shape[0] != left or (last and shape[2] != 1):
                    raise ValueError(
                        f"inputs site {i} has shape {shape}; expected ({left}, 2, "
                        f"{1 if last else 'D'}): site tensors (D_i, 2, D_i+1), D_0 = D_n = 1")
            kind = "sites"
        else:
            shape = tuple(np.shape(_host(K, inputs)))
            if shape == (n, 2):
                kind = "product"
            elif shape == (2 ** n,):
                kind, inputs = "dense", checked_state_vector(K, inputs, n)
            else:
                raise ValueError(f"inputs has shape {shape}; {n} qubits need a product state ({n}, 2), "
                                 f"a state vector ({2 ** n},) or a list of {n} site tensors")
        state = _initial_state(K, n, (kind, inputs), truncation_of(K, None, 0.0))
        norms = [_host_norm(K, site) for site in (state.sites if kind == "product" else
                                                   [state.sites[state.centre]])]
        for norm in norms:  # a product state: every factor; otherwise the centre holds the norm
            if norm is not None and abs(norm - 1.0) > INPUT_TOLERANCE:
                raise ValueError(f"inputs must be a normalised state; a norm is {norm:.6g}")
        return kind, inputs

    def _dynamic_results(self) -> MPSBranches:
        """A dynamic circuit's results: one MPS per branch of outcomes (:mod:`.branches`), kept
        while the operations are the same."""
        K = get_backend()
        if self._lanes() is not None:
            raise LanesError("MPSCircuit results of a batch of parameter sets (the batch loops)")
        kept = self.__dict__.get("_branches")
        if kept is not None and kept[0] is K and kept[1] == len(self._operations) \
                and all(a is b for a, b in zip(kept[2].circuit.operations, self._operations)):
            return kept[2]
        branches = MPSBranches(self, lambda: _initial_state(K, self._num_qubits, self._inputs,
                                                            truncation_of(K, self._max_bond, self._cutoff)),
                               _matrices(K))
        self._branches = (K, len(self._operations), branches)
        return branches

    # -- simulation ----------------------------------------------------------------------------
    def simulated_state(self, what: str, host: bool = False) -> MPSState:
        """The simulated state (cached; an extended circuit continues from its parent's).

        Where nothing is traced and every value is readable on the host, the gates are applied
        on the backend's host twin (:func:`~tyxonq.circuit.contraction.host_route.host_twin_for`:
        NumPy for CPU tensors of PyTorch and JAX): the same values at NumPy's cost per small
        product and SVD. With ``host=True`` that twin's state is returned, and results computed
        from it are host arrays that :meth:`_on_backend` hands back (a 100-qubit quench's
        magnetisation on eager JAX: 2.12 s before, 0.17 s; NumPy 0.19 s); otherwise its sites
        on the backend.
        """
        if self._is_traced():
            raise TracingError(
                f"{what} of an MPSCircuit with traced angles: exact gradients without autograd "
                "(method='adjoint' or 'parameter-shift') differentiate expectation values only; use "
                "the pytorch or jax backend (autograd) or method='finite-difference'"
            )
        K = get_backend()
        operations = self._operations
        cache = self._cache
        if cache is not None and cache[0] is K and len(cache[1]) <= len(operations) and all(
                a is b for a, b in zip(cache[1], operations)):
            done, state = len(cache[1]), cache[2]
            if done < len(operations):
                state = state.copy()
        else:
            done = 0
            state = _initial_state(K, self._num_qubits, self._inputs,
                                   truncation_of(K, self._max_bond, self._cutoff))
        if done < len(operations):
            if self._lanes() is not None:
                raise LanesError("MPSCircuit results of a batch of parameter sets (the batch loops)")
            route = host_twin_for(K, operations[done:], None, [], self.holds_only_numbers()) \
                if all(state.K.host_readable(site) for site in state.sites) else None
            if route is None:
                state = state.on(K)
                apply_operations(state, operations[done:], _matrices(K))
            else:  # thousands of small products and SVDs, on the twin
                twin, host_operations = route[0], route[1]
                state = state.on(twin)
                apply_operations(state, host_operations, _matrices(twin))
            self._cache = (K, tuple(operations), state)
        return state if host else self._on_backend_state(state)

    def _on_backend_state(self, state: MPSState) -> MPSState:
        """``state`` with its sites on the active backend (kept: asked again, the same object)."""
        K = get_backend()
        if state.K is K:
            return state
        kept = self.__dict__.get("_backend_state")
        if kept is not None and kept[0] is state:
            return kept[1]
        moved = state.on(K)
        self._backend_state = (state, moved)
        return moved

    @staticmethod
    def _on_backend(value: Any) -> Any:
        """A result computed from the host twin's state as an array of the active backend."""
        K = get_backend()
        return value if K.is_array(value) or isinstance(value, (int, float, complex)) else K.asarray(value)

    # -- bookkeeping ---------------------------------------------------------------------------
    def bond_dimensions(self) -> list[int]:
        """The ``n - 1`` bond dimensions, bond ``i`` between qubits ``i`` and ``i + 1``.

        Inside ``jax.jit`` the values cannot be read, so bonds keep ``min(max_bond, rank)``
        singular values (``cutoff`` drops none there).
        """
        return self.simulated_state("bond_dimensions()").bond_dimensions()

    def truncation_error(self) -> Any:
        """The total discarded weight: the sum over truncations of the relative weight cut.

        The infidelity ``1 - |<exact|mps>|^2`` is about this for small errors, and at most
        ``sin^2(sum_k arcsin sqrt(eps_k))`` (each truncation turns the state by an angle
        ``arcsin sqrt(eps_k)``).
        """
        if self.is_dynamic():
            return self._dynamic_results().truncation_error()
        discarded = self.simulated_state("truncation_error()", host=True).truncation.discarded
        return sum(discarded) if discarded else 0.0

    def fidelity_estimate(self) -> Any:
        """The product of the kept weights, ``prod_k (1 - eps_k)``: 1 when nothing was cut."""
        value: Any = 1.0
        for eps in self.simulated_state("fidelity_estimate()", host=True).truncation.discarded:
            value = value * (1 - eps)
        return value

    def entanglement_entropy(self, cut: int) -> Any:
        """Von Neumann entropy (natural log) of qubits ``0 .. cut - 1`` against the rest, from
        the singular values across the bond between qubits ``cut - 1`` and ``cut``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.MPSCircuit(2).h(0).cx(0, 1).entanglement_entropy(1)), 6)
        0.693147
        """
        if isinstance(cut, bool) or not isinstance(cut, numbers.Integral) \
                or not 1 <= cut <= self._num_qubits - 1:
            raise ValueError(f"cut={cut!r} must be an int in [1, {self._num_qubits - 1}] (the bond "
                             "between qubits cut - 1 and cut)")
        return self._on_backend(measure.entanglement_entropy(
            self.simulated_state("entanglement_entropy()", host=True), int(cut)))

    # -- results -------------------------------------------------------------------------------
    @dynamic_route
    def _amplitude(self, bits: tuple[int, ...]) -> Any:
        """One matrix product per site."""
        return self._on_backend(measure.amplitude(self.simulated_state("amplitude()", host=True), bits))

    def state(self) -> Any:
        """The ``2**n`` amplitudes (qubit 0 most significant), memory checked first.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (abs(K.to_numpy(tq.MPSCircuit(2).h(0).cx(0, 1).state())) ** 2).round(6).tolist()
        [0.5, 0.0, 0.0, 0.5]
        """
        K = get_backend()
        n = self._num_qubits
        require_memory(K, 2 ** n, f"state() of {n} qubits", MPS_HINT)
        return self._state()

    @dynamic_route
    def _state(self) -> Any:
        return self._on_backend(measure.dense_state(self.simulated_state("state()", host=True)))

    wavefunction = state

    @dynamic_route
    def _probability(self) -> Any:
        """``|psi|^2`` of :meth:`state`."""
        K = get_backend()
        psi = self.state()
        return K.real(K.conj(psi) * psi)

    @dynamic_route
    def _local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                           hermitian: bool, K: ArrayBackend) -> Any:
        """The sites from the first to the last qubit touched, between cached environments;
        gradients: autograd on PyTorch and JAX, the adjoint method (or parameter shift: see
        :meth:`_exact_gradient`) through the MPS for ``tq.value_and_grad`` on NumPy and
        cuPyNumeric."""
        if self._is_traced():
            if not hermitian:
                raise TracingError("exact gradients need a real objective: use hermitian=True")
            plain = all(K.is_array(m) for m in matrices)  # traced matrices: parameter shift
            return self._exact_gradient(lambda c: c.expectation(*operators),
                                        local_observable(matrices, groups) if plain else None)
        state = self.simulated_state("expectation()", host=all(K.host_readable(m) for m in matrices))
        if state.K is not K:  # on the host twin: the operators too, the value back
            matrices = [state.K.asarray(K.to_numpy(m)) for m in matrices]
        value = self._on_backend(measure.operator_expectation(state, matrices, groups))
        return K.real(value) if hermitian else value

    def _pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        """Each string costs a sweep over the sites from its first to its last non-identity
        factor; the environments outside are made once and shared by every string. Gradients of
        traced angles (NumPy, cuPyNumeric) by the adjoint method through the MPS
        (:mod:`~tyxonq.circuit.mps.adjoint`) where the forward simulation truncated nothing, else
        (or with ``method="parameter-shift"``) by parameter shift."""
        if self._is_traced():
            if coefficients is None:
                raise TracingError("parameter-shift gradients of several terms need their "
                                   "weights (coefficients=...)")
            if np.iscomplexobj(np.asarray(coefficients)):
                raise TracingError("exact gradients need a real objective: real coefficients")
            weights = _plain_weights(coefficients)
            return self._exact_gradient(lambda c: c.pauli_expectations(strings, coefficients),
                                        None if weights is None else pauli_sum_observable(strings, weights))
        return self._untraced_pauli_expectations(strings, coefficients, method)

    def _exact_gradient(self, evaluate: Any, observable: Any) -> Any:
        """A real expectation with traced angles (NumPy, cuPyNumeric) as a Dual: by the adjoint
        method through the MPS (:mod:`~tyxonq.circuit.mps.adjoint`; ``observable(state)`` is
        ``O|state>``) where the forward simulation truncated nothing, else (a truncating
        simulation, a dynamic circuit, a batch, traced coefficients, or
        ``method="parameter-shift"``) by parameter shift; ``evaluate(plain_circuit)`` is the
        value of a circuit without traced angles. Refused on a host twin in an autograd backend's
        place (:func:`~tyxonq.circuit.mps.adjoint.refuse_gradient_in_place`): that backend
        differentiates through the MPS itself."""
        refuse_gradient_in_place()
        if observable is None or self.is_dynamic() or self._lanes() is not None:
            return parameter_shift_dual(self, evaluate)

        def adjoint(K: ArrayBackend, plain: Any, wanted: dict, slot_count: int) -> tuple:
            found = mps_adjoint(plain, observable, wanted, slot_count)
            if found is None:
                raise _Truncated
            return found

        try:
            return traced_expectation(self, evaluate, None, sweep=adjoint)
        except _Truncated:  # the truncated simulation's derivative: parameter shift
            return parameter_shift_dual(self, evaluate)

    @dynamic_route(answer="pauli_expectations")
    def _untraced_pauli_expectations(self, strings: list[str], coefficients: Any,
                                     method: str = "auto") -> Any:
        K = get_backend()
        state = self.simulated_state("pauli_expectations()", host=True)
        H = state.K  # the host twin where the gates ran there
        one = H.ones((), H.dtype)
        values = []
        for string in strings:
            factors = {q: constant(H, letter.lower()) for q, letter in enumerate(string) if letter != "I"}
            values.append(H.real(measure.pauli_string_value(state, factors)) if factors else H.real(one))
        return weighted_sum(K, self._on_backend(H.stack(values)), coefficients)

    @dynamic_route
    def _reduced_density_matrix(self, qubits: tuple[int, ...]) -> Any:
        return self._on_backend(measure.reduced_density_matrix(
            self.simulated_state("reduced_density_matrix()", host=True), qubits))

    @dynamic_route
    def _marginal_probability(self, qubits: tuple[int, ...]) -> Any:
        return self._on_backend(measure.marginal_probability(
            self.simulated_state("marginal_probability()", host=True), qubits))

    @dynamic_route
    def _matrix(self) -> Any:
        """The unitary of the same gates on a :class:`~tyxonq.Circuit` (exact: no truncation)."""
        return simulator_class("Circuit")(self._num_qubits).with_operations(self._operations).matrix()

    def _rehearsed(self, result: str, args: tuple, kwargs: dict) -> ContractionReport:
        """An MPS contracts no network: its route (``"mps"``), and the memory of its sites at the
        largest bonds it may reach."""
        K = get_backend()
        itemsize = 16 if K.precision == "complex128" else 8
        n, cap = self._num_qubits, self._max_bond
        bonds = [min(2 ** min(i + 1, n - i - 1), cap or 2 ** 62) for i in range(n - 1)]
        sites = sum(2 * left * right for left, right in zip([1] + bonds, bonds + [1]))
        return route_report(K, ("mps",), sites * itemsize)

    @takes_progress
    def sample(self, shots: int, seed: int | None = None, format: str = "counts",
               readout_error: Any = None, final: bool = True) -> Any:
        """Measure all qubits ``shots`` times by exact sequential sampling from the MPS (all
        shots at once, one site at a time; nothing of size ``2**n``).

        Parameters as :meth:`tyxonq.Circuit.sample`; ``format="indices"`` needs at most 62
        qubits. A dynamic circuit reports its classical bits first, as ``Circuit.sample`` does,
        drawn from its branches (:mod:`tyxonq.circuit.mps.branches`).

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.MPSCircuit(3).x(0).cx(0, 2).sample(5, seed=1)
        {'101': 5}
        """
        shots, confusions = self._sampling(shots, format, readout_error, seed, final)
        require_sample_memory(shots, self._num_qubits + self.num_clbits, format, bits=True)
        if self.is_dynamic() or not final:
            return self._dynamic_results().samples(shots, seed, format, confusions, final)
        bits = perfect_samples(self.simulated_state("sample()", host=True), shots, random_generator(seed))
        return format_samples(get_backend(), self._num_qubits, format, confusions, seed, bits=bits)


class _Truncated(Exception):
    """The forward simulation truncated: the adjoint method's gradient is not the truncated
    simulation's."""


def _plain_weights(coefficients: Any) -> list[float] | None:
    """The coefficients as floats, or ``None`` where they are traced themselves."""
    try:
        return np.asarray(coefficients, dtype=float).reshape(-1).tolist()
    except (TypeError, ValueError):
        return None


def _host(K: ArrayBackend, value: Any) -> Any:
    """Host values to check shapes (a backend array's own shape where they cannot be read)."""
    if K.is_array(value):
        try:
            return K.to_numpy(K.detach(value))
        except Exception:  # a traced array
            return np.zeros(tuple(K.shape(value)))
    return value


def _host_norm(K: ArrayBackend, tensor: Any) -> float | None:
    try:
        return float(np.linalg.norm(K.to_numpy(K.detach(tensor))))
    except Exception:  # traced inputs: their norm is the caller's
        return None


def _initial_state(K: ArrayBackend, n: int, inputs: tuple | None, truncation: Any) -> MPSState:
    """The MPS of the inputs: ``|0...0>``, a product state, a split dense state or site tensors
    brought into canonical form (centre on the last site) without truncation."""
    if inputs is None:
        return MPSState.zeros(K, n, truncation)
    kind, data = inputs
    if kind == "product":
        vectors = [K.asarray(v) for v in data] if isinstance(data, (list, tuple)) else \
            [K.asarray(data)[i] for i in range(n)]
        sites = [K.reshape(_complex(K, v), (1, 2, 1)) for v in vectors]
        return MPSState(K, sites, 0, truncation)
    exact = truncation_of(K, None, 0.0)
    if kind == "dense":
        rest = K.reshape(_complex(K, K.asarray(data)), (1, 2 ** n))
        sites = []
        for _ in range(n - 1):
            left, size = K.shape(rest)
            u, w, _ = K.svd_split(K.reshape(rest, (left * 2, size // 2)), exact.rank)
            sites.append(K.reshape(u, (left, 2, K.shape(u)[1])))
            rest = w
        sites.append(K.reshape(rest, (K.shape(rest)[0], 2, 1)))
        return MPSState(K, sites, n - 1, truncation)
    sites = [_complex(K, K.asarray(site)) for site in data]
    for i in range(n - 1):
        left, _, right = K.shape(sites[i])
        u, w, _ = K.svd_split(K.reshape(sites[i], (left * 2, right)), exact.rank)
        sites[i] = K.reshape(u, (left, 2, K.shape(u)[1]))
        sites[i + 1] = K.einsum("ab,bsc->asc", w, sites[i + 1])
    return MPSState(K, sites, n - 1, truncation)


def _complex(K: ArrayBackend, x: Any) -> Any:
    return x if K.is_complex(x) and K.dtype_of(x) == K.dtype else K.cast(x, K.dtype)


def _matrices(K: ArrayBackend) -> Any:
    """``op -> its matrix``, each matrix of numeric angles built once (a Trotter circuit repeats
    its angles thousands of times)."""
    built: dict = {}

    def matrix_of(op: Any) -> Any:
        if op.gate == "unitary" or not all(type(p) in (float, int, np.float64) for p in op.params):
            return gate_matrix(K, op.gate, op.params, op.dagger)
        key = (op.gate, op.params, op.dagger)
        if key not in built:
            built[key] = gate_matrix(K, op.gate, op.params, op.dagger)
        return built[key]

    return matrix_of
