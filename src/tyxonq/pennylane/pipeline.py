"""The devices' compile pipeline: what PennyLane does to a tape before tyxonq runs it.

1. mid-circuit measurements, ``qml.cond`` and post-selection: ``qml.defer_measurements``
   (PennyLane's transform; post-selection becomes ``Projector`` operations, which tyxonq runs as
   ``circuit.post_select``);
2. ``decompose`` until every operation is native (:data:`.gates.NATIVE_GATES`), a unitary of at
   most :data:`MAX_MATRIX_WIRES` wires, a leading state preparation or, on the mixed device, a
   channel; for device derivatives, until every trainable parameter is a native gate angle;
3. wires, measurements and observables are checked (``DeviceError`` / ``WireError`` naming what
   is refused);
4. finite shots: measurements whose observables do not commute qubit-wise are split
   (``split_non_commuting``); parameter broadcasting runs on tyxonq's lanes where
   :mod:`.broadcast` can, else it is expanded (``broadcast_expand``; always for device
   derivatives).
"""

from __future__ import annotations

from typing import Any

import pennylane as qml
from pennylane import math
from pennylane.devices.preprocess import (
    decompose,
    no_sampling,
    null_postprocessing,
    validate_device_wires,
    validate_measurements,
    validate_observables,
)
from pennylane.exceptions import DeviceError
from pennylane.measurements import (
    ClassicalShadowMP,
    ExpectationMP,
    SampleMeasurement,
    ShadowExpvalMP,
    StateMeasurement,
)
from pennylane.operation import Channel
from pennylane.transforms.core import CompilePipeline

from .broadcast import broadcast_where_needed
from .circuits import is_state_preparation
from .gates import ANGLE_GATES, NATIVE_GATES, SKIPPED

__all__ = ["MAX_MATRIX_WIRES", "compile_pipeline", "supported_operation", "gradient_operation",
           "supported_observable", "analytic_measurement", "sample_measurement"]

MAX_MATRIX_WIRES = 8
"""Operations without a native gate run as ``circuit.unitary`` up to this many wires."""


def supported_operation(op: Any, mixed: bool = False) -> bool:
    """Whether a device runs ``op`` as it is (else it is decomposed).

    Examples
    --------
    >>> import pennylane as qml
    >>> supported_operation(qml.RX(0.1, 0)), supported_operation(qml.BitFlip(0.1, 0))
    (True, False)
    """
    name = op.name
    if name in NATIVE_GATES or name in SKIPPED or name == "Projector":
        return True
    if isinstance(op, Channel) or name == "QubitDensityMatrix":
        return mixed
    if is_state_preparation(op) or isinstance(op, qml.measurements.MidMeasureMP):
        return False
    return op.has_matrix and len(op.wires) <= MAX_MATRIX_WIRES


def gradient_operation(op: Any, mixed: bool = False) -> bool:
    """Whether ``op`` may stay for device derivatives: no trainable parameter, or a native angle.

    Examples
    --------
    >>> import pennylane as qml
    >>> from pennylane import numpy as pnp
    >>> gradient_operation(qml.Rot(*pnp.array([0.1, 0.2, 0.3], requires_grad=True), wires=0))
    False
    """
    if op.name in ANGLE_GATES:
        return True
    if any(math.requires_grad(d) for d in op.data):
        return False
    return is_state_preparation(op) or supported_operation(op, mixed)


def supported_observable(obs: Any) -> bool:
    """Observables: any with Pauli words or a matrix (expval, var, probs; sampled if diagonalisable).

    Examples
    --------
    >>> import pennylane as qml
    >>> supported_observable(qml.X(0) @ qml.Hermitian([[1, 0], [0, -1]], wires=1))
    True
    """
    return obs.pauli_rep is not None or obs.has_matrix


def analytic_measurement(m: Any) -> bool:
    """Measurements without shots: every state measurement (expval, var, probs, state, ...).

    Examples
    --------
    >>> import pennylane as qml
    >>> analytic_measurement(qml.state()), analytic_measurement(qml.sample(wires=0))
    (True, False)
    """
    return isinstance(m, StateMeasurement)


def sample_measurement(m: Any) -> bool:
    """Measurements with shots: expval, var, probs, sample, counts (not classical shadows).

    Examples
    --------
    >>> import pennylane as qml
    >>> sample_measurement(qml.counts(wires=0)), sample_measurement(qml.state())
    (True, False)
    """
    if isinstance(m, (ClassicalShadowMP, ShadowExpvalMP)) or not isinstance(m, SampleMeasurement):
        return False
    return m.obs is None or m.obs.has_diagonalizing_gates


@qml.transform
def split_for_sampling(tape: Any) -> tuple[Any, Any]:
    """With finite shots, split measurements whose observables do not commute qubit-wise."""
    if not tape.shots or not any(m.obs is not None for m in tape.measurements):
        return (tape,), null_postprocessing
    return qml.transforms.split_non_commuting(tape, grouping_strategy="qwc")


@qml.transform
def expectations_only(tape: Any, name: str) -> tuple[Any, Any]:
    """Device derivatives differentiate expectation values: refuse other measurements."""
    for m in tape.measurements:
        if not isinstance(m, ExpectationMP) or m.obs is None:
            raise DeviceError(f"{name} computes derivatives of expectation values only, "
                                  f"not of {m}; use diff_method='parameter-shift' for it")
    return (tape,), null_postprocessing


def compile_pipeline(device: Any, config: Any, mixed: bool) -> Any:
    """The device's preprocessing for an execution configuration (see the module docstring).

    Examples
    --------
    >>> import pennylane as qml
    >>> import tyxonq.pennylane  # noqa: F401 - registers nothing, the entry points do
    >>> dev = qml.device("tyxonq.qubit", wires=2)
    >>> len(compile_pipeline(dev, qml.devices.ExecutionConfig(), mixed=False)) > 3
    True
    """
    name = device.name
    program = CompilePipeline()
    program.add_transform(qml.defer_measurements, allow_postselect=True)
    program.add_transform(decompose, stopping_condition=lambda op: supported_operation(op, mixed),
                          device_wires=device.wires, name=name)
    program.add_transform(validate_device_wires, device.wires, name=name)
    program.add_transform(validate_measurements, analytic_measurements=analytic_measurement,
                          sample_measurements=sample_measurement, name=name)
    program.add_transform(validate_observables, stopping_condition=supported_observable, name=name)
    program.add_transform(split_for_sampling)
    if config.gradient_method in {"device", "adjoint"}:
        gradient_name = f"device derivatives + {name}"
        program.add_transform(no_sampling, name=gradient_name)
        program.add_transform(decompose, stopping_condition=lambda op: gradient_operation(op, mixed),
                              device_wires=device.wires, name=gradient_name,
                              skip_initial_state_prep=False)
        program.add_transform(expectations_only, name=gradient_name)
    if config.gradient_method in {"device", "adjoint"}:
        program.add_transform(qml.transforms.broadcast_expand)  # derivatives: one set at a time
    else:
        program.add_transform(broadcast_where_needed, mixed=mixed)
    return program
