"""The :class:`DMCircuit`: gates and channels on a density matrix, through the same engine.

Its results contract the doubled network of ``rho = E(|0...0><0...0|)``: the circuit's gates on a
ket side and, conjugated, on a bra side, each channel a piece on both sides joined by its Kraus
legs (``sum_a K_a rho K_a^dagger``). Plans are made once per structure and cached, as for
:class:`~tyxonq.Circuit`; a local result contracts only its light cone, where every channel that
cannot reach the measured qubits drops out (it is trace preserving), so a local noisy expectation
of a wide shallow circuit never builds a ``2^n`` object.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.arguments import checked_state_vector
from ...numerics.memory import fits_in_memory, require_memory
from ...numerics.protocol import ArrayBackend
from ...operators.state_expectation import density_pauli_readout, density_pauli_values
from ..base import LIGHT_CONE_HINT, CircuitBase
from ..contraction.evaluation import Request, retained_size
from ..contraction.network import density_network
from ..contraction.route_costs import RouteCost, network_cost, readout_passes

__all__ = ["DMCircuit", "DensityMatrixCircuit"]

#: Tolerance of the checks on an input density matrix (Hermitian, unit trace, eigenvalues >= -tol).
DENSITY_TOLERANCE = 1e-8


class DMCircuit(CircuitBase):
    """A noisy circuit on ``num_qubits`` qubits, simulated as a density matrix.

    Every gate method of :class:`~tyxonq.Circuit` (same conventions: qubit 0 most significant)
    and the channel methods (``depolarizing``, ``amplitude_damping``, ..., ``channel``).

    Parameters
    ----------
    num_qubits : int
        Number of qubits; they start in ``|0...0><0...0|``.
    inputs : array, optional
        The initial state instead: a state vector of length ``2**n`` or a ``2**n x 2**n``
        density matrix (Hermitian, trace 1, positive semidefinite to 1e-8).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.DMCircuit(2).h(0).cx(0, 1).depolarizing(0, p=0.2)
    >>> round(float(c.expectation_ps(z=[0, 1])), 6)
    0.733333
    >>> K = tq.get_backend()
    >>> K.to_numpy(c.probability()).round(4).tolist()
    [0.4333, 0.0667, 0.0667, 0.4333]
    """

    unsupported_results = {
        "amplitude": "a density matrix has no amplitudes; use probability() or marginal_probability(), or "
                     "tq.Circuit (a pure state) for amplitudes",
    }

    def __init__(self, num_qubits: int, inputs: Any = None) -> None:
        super().__init__(num_qubits)
        self._density_input = False
        self._readout: list[np.ndarray] | None = None
        if inputs is not None:
            self._inputs, self._density_input = self._validated_inputs(inputs)

    @classmethod
    def from_circuit(cls, circuit: Any) -> DMCircuit:
        """The density-matrix circuit of a :class:`~tyxonq.Circuit` (same operations and inputs).

        Examples
        --------
        >>> import tyxonq as tq
        >>> dm = tq.DMCircuit.from_circuit(tq.Circuit(1).x(0))
        >>> round(float(dm.expectation_ps(z=[0])), 12)
        -1.0
        """
        converted = cls(circuit.num_qubits).add_clbits(circuit.num_clbits)
        return converted.with_inputs_of(circuit).with_operations(circuit.operations)

    def _validated_inputs(self, inputs: Any) -> tuple[Any, bool]:
        K = get_backend()
        n = self._num_qubits
        shape = tuple(K.shape(inputs)) if K.is_array(inputs) else np.shape(inputs)
        dimension = 2 ** n
        if shape not in ((dimension,), (dimension, dimension)):
            raise ValueError(f"inputs has shape {shape}; {n} qubits need a state vector ({dimension},) "
                             f"or a density matrix ({dimension}, {dimension})")
        if len(shape) == 1:
            return checked_state_vector(K, inputs, n), False
        try:
            host = np.asarray(K.to_numpy(K.detach(inputs)) if K.is_array(inputs) else inputs)
        except Exception:  # a traced array: its values are the caller's
            return inputs, True
        if host.dtype.kind not in "fc":
            raise TypeError(f"inputs dtype {host.dtype} is not float or complex")
        asymmetry = float(np.max(np.abs(host - host.conj().T)))
        if asymmetry > DENSITY_TOLERANCE:
            raise ValueError(f"inputs is not Hermitian (max |rho - rho^dagger| = {asymmetry:.2e})")
        trace = complex(np.trace(host))
        if abs(trace - 1.0) > 1e-6:
            raise ValueError(f"inputs must have trace 1; its trace is {trace.real:.6g}")
        lowest = float(np.linalg.eigvalsh((host + host.conj().T) / 2).min())
        if lowest < -DENSITY_TOLERANCE:
            raise ValueError(f"inputs is not positive semidefinite (an eigenvalue is {lowest:.2e})")
        return inputs, True

    def inputs_kind(self) -> bool | str:
        """``False`` (``|0...0>``), ``True`` (a state vector) or ``"density"`` (a density matrix)."""
        if self._inputs is None:
            return False
        return "density" if self._density_input else True

    def has_state_vector(self) -> bool:
        """A density matrix, not a vector."""
        return False

    # -- results -----------------------------------------------------------------------------
    def state(self) -> Any:
        """The density matrix, ``2**n x 2**n`` (row and column indices: qubit 0 most significant).

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> rho = tq.DMCircuit(1).h(0).phase_damping(0, gamma=1.0).state()
        >>> (K.to_numpy(rho).real.round(6) + 0.0).tolist()
        [[0.5, 0.0], [0.0, 0.5]]
        """
        return self.reduced_density_matrix(range(self._num_qubits))

    density_matrix = state

    def _state_route_cost(self, strings: Sequence[str]) -> RouteCost:
        """The whole doubled network contracted once (the cheaper of its greedy path and the
        simplified min-fill elimination the planner starts from), then ``2^n`` entries read per
        string."""
        n = self._num_qubits
        network = density_network(n, list(self._operations), self.inputs_kind(), tuple(range(n)))
        return network_cost("state", [network], readout_passes(n, strings, density=True), eliminate=True)

    def _state_fits(self, traced: bool) -> bool:
        """The density matrix fits in memory (and, unless ``traced``, no exact gradient traces
        the circuit)."""
        return (traced or not self._is_traced()) and fits_in_memory(get_backend(), 4 ** self._num_qubits)

    def _traced_state_request(self, strings: Sequence[str], forced: bool = False) -> Request | None:
        """The doubled network's contraction (the density matrix), where the state route is chosen
        for ``strings`` (or ``forced``) and reverse mode's retained operands fit in memory."""
        K = get_backend()
        n = self._num_qubits
        if forced:
            require_memory(K, 4 ** n, f"the density matrix of {n} qubit(s)", LIGHT_CONE_HINT)
        elif not (self._state_fits(traced=True) and self._state_route_chosen(strings, "pauli_expectations")):
            return None
        ops, kind, qubits = list(self._operations), self.inputs_kind(), tuple(range(n))
        request = Request(self.result_plan(("density", qubits), lambda: density_network(n, ops, kind, qubits),
                                           (2 ** n, 2 ** n), "the density matrix"))
        retained = retained_size([request])
        if forced:
            require_memory(K, retained, f"reverse mode through the density matrix of {n} qubit(s)",
                           LIGHT_CONE_HINT)
        return request if forced or fits_in_memory(K, retained) else None

    def _state_readout(self, strings: list[str], weights: np.ndarray) -> np.ndarray:
        """:func:`~tyxonq.operators.state_expectation.density_pauli_readout`."""
        return density_pauli_readout(strings, weights)

    def _strings_from_state(self, K: ArrayBackend, state: Any, strings: list[str]) -> Any:
        """Each string read from ``2^n`` entries of the density matrix (the whole doubled network
        contracted once: one program on JAX, where every term's cone would be its own)."""
        return density_pauli_values(K, state, strings)

    def probability(self, qubits: Sequence[int] | None = None) -> Any:
        """Probabilities of the ``2**n`` basis states (of ``qubits`` only, marginalised, when given).

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (K.to_numpy(tq.DMCircuit(2).x(0).bit_flip(1, p=0.25).probability()).round(6) + 0.0).tolist()
        [0.0, 0.0, 0.75, 0.25]
        """
        return self.marginal_probability(range(self._num_qubits) if qubits is None else qubits)

    def purity(self) -> Any:
        """``Tr(rho^2)``: 1 for a pure state, ``2^-n`` for the maximally mixed one.

        Examples
        --------
        >>> import tyxonq as tq
        >>> round(float(tq.DMCircuit(1).depolarizing(0, p=0.75).purity()), 12)
        0.5
        """
        K = get_backend()
        rho = self.state()
        return K.sum(K.real(K.conj(rho) * rho))

    def fidelity(self, target: Any) -> Any:
        """``<psi|rho|psi>`` against a pure state: a state vector, or a noiseless
        :class:`~tyxonq.Circuit` (its state).

        Examples
        --------
        >>> import tyxonq as tq
        >>> ideal = tq.Circuit(1).h(0)
        >>> round(float(tq.DMCircuit(1).h(0).phase_flip(0, p=0.1).fidelity(ideal)), 12)
        0.9
        """
        K = get_backend()
        if hasattr(target, "state") and hasattr(target, "num_qubits"):
            if target.num_qubits != self._num_qubits:
                raise ValueError(f"target has {target.num_qubits} qubits; this circuit has "
                                 f"{self._num_qubits}")
            psi = target.state()
        else:
            psi = K.asarray(target)
            if tuple(K.shape(psi)) != (2 ** self._num_qubits,):
                raise ValueError(f"target has shape {tuple(K.shape(psi))}; expected a state vector "
                                 f"({2 ** self._num_qubits},) or a Circuit")
            if not K.is_complex(psi):
                psi = K.cast(psi, K.dtype)
        rho = self.state()
        return K.real(K.sum(K.conj(psi) * K.matmul(rho, psi)))


#: tensorcircuit's longer name.
DensityMatrixCircuit = DMCircuit
