"""The PennyLane devices ``tyxonq.qubit`` (state vectors) and ``tyxonq.mixed`` (density matrices)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pennylane as qml
from pennylane.devices import Device, ExecutionConfig
from pennylane.devices.modifiers import simulator_tracking, single_tape_support
from pennylane.exceptions import DeviceError
from pennylane.measurements import ExpectationMP

from .broadcast import laned, laned_results
from .circuits import build_circuit
from .derivatives import pennylane_jacobian, results_and_jacobian
from .gates import ANGLE_GATES
from .measure import exact_results, sampled_results
from .observables import PauliSums
from .pipeline import compile_pipeline

__all__ = ["QubitDevice", "MixedDevice"]

GRADIENT_METHODS = frozenset({"device", "adjoint", "best"})
MCM_METHODS = frozenset({None, "deferred", "device"})


def _differentiable(op: Any) -> bool:
    """Whether device derivatives reach ``op``'s trainable parameters: a native angle, or an
    operation that decomposes (into native angles, as the pipeline checks when it runs)."""
    if op.name in ANGLE_GATES or not any(qml.math.requires_grad(d) for d in op.data):
        return True
    return op.has_decomposition and not isinstance(op, qml.operation.Channel)


class _TyxonqDevice(Device):
    """What both devices share: configuration, preprocessing, execution and derivatives."""

    mixed = False
    _device_options = ("rng",)

    def __init__(self, wires: Any = None, shots: Any = None, seed: Any = "global") -> None:
        super().__init__(wires=wires, shots=shots)
        if seed == "global":
            seed = int(np.random.randint(0, 2**31 - 1))
        self._rng = np.random.default_rng(seed)
        self._pauli_sums = PauliSums()

    # -- configuration ------------------------------------------------------------------------
    def supports_derivatives(self, execution_config: ExecutionConfig | None = None,
                             circuit: Any = None) -> bool:
        """Device derivatives (``"device"``, ``"adjoint"``, ``"best"``) of analytic expectations."""
        if execution_config is not None and execution_config.gradient_method not in GRADIENT_METHODS:
            return False
        if circuit is None:
            return True
        if circuit.shots:
            return False
        for m in circuit.measurements:  # expectations of observables with fixed parameters
            if not isinstance(m, ExpectationMP) or m.obs is None or any(
                    qml.math.requires_grad(d) for d in m.obs.data):
                return False
        return all(_differentiable(op) for op in circuit.operations)

    supports_vjp = supports_derivatives

    def setup_execution_config(self, config: ExecutionConfig | None = None,
                               circuit: Any = None) -> ExecutionConfig:
        """Resolve ``"best"`` to device derivatives and mid-circuit measurements to ``"deferred"``."""
        config = config or ExecutionConfig()
        for option in config.device_options:
            if option not in self._device_options:
                raise DeviceError(f"device option {option} not present on {self}")
        updated: dict[str, Any] = {}
        method = config.gradient_method
        if method == "best":
            method = "device" if circuit is None or not circuit.shots else None
            updated["gradient_method"] = method
        device_gradient = method in {"device", "adjoint"}
        if config.use_device_gradient is None:
            updated["use_device_gradient"] = device_gradient
        if config.use_device_jacobian_product is None:
            updated["use_device_jacobian_product"] = False
        if config.grad_on_execution is None:
            updated["grad_on_execution"] = device_gradient
        mcm = config.mcm_config
        if mcm.mcm_method not in MCM_METHODS:
            raise DeviceError(f"mcm_method {mcm.mcm_method!r} is not supported on {self.name}: "
                              "mid-circuit measurements run deferred (mcm_method='deferred')")
        updated["mcm_config"] = replace(mcm, mcm_method="deferred")
        options = dict(config.device_options)
        options.setdefault("rng", self._rng)
        updated["device_options"] = options
        return replace(config, **updated)

    def preprocess_transforms(self, execution_config: ExecutionConfig | None = None) -> Any:
        """The compile pipeline (:mod:`tyxonq.pennylane.pipeline`)."""
        return compile_pipeline(self, execution_config or ExecutionConfig(), self.mixed)

    # -- execution ----------------------------------------------------------------------------
    def _run(self, tape: Any, config: ExecutionConfig | None) -> Any:
        tape = tape.map_to_standard_wires()

        def build(extra: list[Any]) -> Any:
            if not extra:
                return build_circuit(tape, self.mixed)
            return build_circuit(tape.copy(operations=list(tape.operations) + extra), self.mixed)

        if tape.batch_size is not None and laned(tape, self.mixed):
            return laned_results(tape, self._pauli_sums)
        if not tape.shots:
            return exact_results(build, tape, self.mixed, self._pauli_sums)
        rng = (config.device_options.get("rng") if config is not None else None) or self._rng
        mode = config.mcm_config.postselect_mode if config is not None else None
        return sampled_results(build, tape, rng, mode)

    def execute(self, circuits: Sequence[Any], execution_config: ExecutionConfig | None = None
                ) -> tuple[Any, ...]:
        """Run each tape on tyxonq: exact results, or tyxonq samples with finite shots."""
        return tuple(self._run(tape, execution_config) for tape in circuits)

    # -- derivatives --------------------------------------------------------------------------
    def _values_and_jacobian(self, tape: Any) -> tuple[Any, Any]:
        values, jac = results_and_jacobian(tape.map_to_standard_wires(), self.mixed, self._pauli_sums)
        result = values[0] if len(values) == 1 else tuple(values)
        return result, pennylane_jacobian(jac)

    def compute_derivatives(self, circuits: Sequence[Any],
                            execution_config: ExecutionConfig | None = None) -> tuple[Any, ...]:
        """Exact Jacobians of expectation values from tyxonq's adjoint gradients."""
        return tuple(self._values_and_jacobian(tape)[1] for tape in circuits)

    def execute_and_compute_derivatives(self, circuits: Sequence[Any],
                                        execution_config: ExecutionConfig | None = None
                                        ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Values and exact Jacobians, one tyxonq evaluation per tape."""
        pairs = [self._values_and_jacobian(tape) for tape in circuits]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    def compute_vjp(self, circuits: Sequence[Any], cotangents: Sequence[Any],
                    execution_config: ExecutionConfig | None = None) -> tuple[Any, ...]:
        """Vector-Jacobian products from the exact Jacobians."""
        return tuple(self._vjp(tape, dy)[1] for tape, dy in zip(circuits, cotangents))

    def execute_and_compute_vjp(self, circuits: Sequence[Any], cotangents: Sequence[Any],
                                execution_config: ExecutionConfig | None = None
                                ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Values and vector-Jacobian products."""
        pairs = [self._vjp(tape, dy) for tape, dy in zip(circuits, cotangents)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    def _vjp(self, tape: Any, dy: Any) -> tuple[Any, Any]:
        values, jac = results_and_jacobian(tape.map_to_standard_wires(), self.mixed, self._pauli_sums)
        result = values[0] if len(values) == 1 else tuple(values)
        # cotangents: one per measurement (a bare number for one measurement)
        cotangents = np.reshape(np.asarray(dy, dtype=float), (len(values),))
        vjp = cotangents @ jac
        return result, np.array(vjp[0]) if vjp.size == 1 else tuple(np.array(v) for v in vjp)


@simulator_tracking
@single_tape_support
class QubitDevice(_TyxonqDevice):
    """PennyLane device ``tyxonq.qubit``: pure states on ``tyxonq.Circuit``.

    Parameters
    ----------
    wires : int or iterable, optional
        The device's wires (as for ``default.qubit``).
    shots : int or sequence, optional
        Default shots; ``None`` for exact results.
    seed : int, numpy Generator, None or "global"
        Seeds tyxonq's sampling (``"global"``: drawn from NumPy's global generator).

    Examples
    --------
    >>> import pennylane as qml
    >>> dev = qml.device("tyxonq.qubit", wires=2)
    >>> @qml.qnode(dev)
    ... def bell():
    ...     qml.Hadamard(0)
    ...     qml.CNOT([0, 1])
    ...     return qml.expval(qml.Z(0) @ qml.Z(1))
    >>> round(float(bell()), 6)
    1.0
    """

    mixed = False

    @property
    def name(self) -> str:
        """``"tyxonq.qubit"``."""
        return "tyxonq.qubit"


@simulator_tracking
@single_tape_support
class MixedDevice(_TyxonqDevice):
    """PennyLane device ``tyxonq.mixed``: density matrices and noise channels on ``tyxonq.DMCircuit``.

    Parameters are those of :class:`QubitDevice`.

    Examples
    --------
    >>> import pennylane as qml
    >>> dev = qml.device("tyxonq.mixed", wires=1)
    >>> @qml.qnode(dev)
    ... def noisy():
    ...     qml.X(0)
    ...     qml.AmplitudeDamping(0.25, wires=0)
    ...     return qml.expval(qml.Z(0))
    >>> round(float(noisy()), 6)
    -0.5
    """

    mixed = True

    @property
    def name(self) -> str:
        """``"tyxonq.mixed"``."""
        return "tyxonq.mixed"
