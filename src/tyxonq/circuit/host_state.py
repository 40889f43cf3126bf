"""A compiled program's state vector computed on the host, where that is faster.

Under ``jax.jit`` on a CPU device, :meth:`Circuit.state` contracts the circuit's network in XLA;
for a large state that runs slower than NumPy (2 cores, the 10-layer ladder: XLA 377 ms, NumPy
228 ms at 22 qubits; at 20 qubits and below XLA ran as fast or faster: 71 against 91 ms, and the
host's route would add a copy and the angles' binding). From
:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_program_entries` amplitudes (JAX on the CPU:
2^22) the program takes the state from the host twin's own route (its eager plan, found in a
fraction of the compiled program's plan search) through
:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_computed` (a host callback); derivatives, if
asked for, are the contraction's. Both are exact: only speed changes. Every other contraction in
a program follows the same size rule (:mod:`tyxonq.circuit.contraction.host_route`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numerics import use_backend
from ..numerics.distributed import communicator
from ..numerics.protocol import ArrayBackend
from .contraction.host_route import angle_slots
from .operations.operation import with_angles_at

__all__ = ["host_state"]

def host_state(circuit: Any, K: ArrayBackend) -> Any | None:
    """``circuit``'s state computed by the host twin inside the program being compiled (by the
    twin's own route), from :meth:`~tyxonq.numerics.protocol.ArrayBackend.host_program_entries`
    amplitudes; ``None`` otherwise (nothing is compiling, derivatives are being taken, a batch is
    mapped (``vmap``: the compiled contraction runs the batch in one program, a host callback its
    members one after another), the device is not the host's, a distributed run shares the work,
    an input state, a matrix or a complex angle is traced, or the state is smaller)."""
    if not K.compiling() or K.differentiating() or K.batching() or K.capabilities.device != "cpu" \
            or communicator().size > 1 or 2 ** circuit.num_qubits < K.host_program_entries():
        return None  # differentiated: the contraction's derivatives need its trace anyway; batched:
        # 64 energies of 10 qubits took 74 ms through the host, 3.3 ms compiled; ranks share a
        # distributed run's contractions
    twin = K.host_twin()
    if twin is K:
        return None
    operations = list(circuit.operations)
    slots = angle_slots(K, operations)
    inputs = circuit.input_state(K)
    if slots is None or (inputs is not None and not K.host_readable(inputs)):
        return None
    # the host's circuit, built once: each call binds the angles by with_parameters (its plans
    # found by structure key, nothing rebuilt or hashed again)
    positions = [(k, j) for k, op in enumerate(operations) if op.has_angles for j in range(len(op.params))]
    if not set(slots) <= set(positions):
        return None
    fixed = np.array([0.0 if (k, j) in slots else float(operations[k].params[j]) for k, j in positions])
    where = np.array([positions.index(slot) for slot in slots], dtype=np.int64)
    host_circuit = circuit.with_operations(with_angles_at(operations, slots, fixed[where].tolist()))

    def on_host(values: np.ndarray) -> np.ndarray:
        full = fixed.copy()
        full[where] = values
        with use_backend(twin):
            return twin.to_numpy(host_circuit.with_parameters(full).state())

    def contracted(values: Any) -> Any:
        bound = with_angles_at(operations, slots, [values[i] for i in range(len(slots))])
        return circuit.with_operations(bound).state(method="contraction")

    angles = K.stack([K.real(K.asarray(operations[k].params[j])) for k, j in slots]) if slots \
        else K.zeros((0,), K.real_dtype)
    return K.host_computed(on_host, contracted, angles, (2 ** circuit.num_qubits,), K.dtype)
