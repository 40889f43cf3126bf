"""A compiled program's state vector computed on the host, where that is estimated to be faster.

Under ``jax.jit`` on a CPU device, :meth:`Circuit.state` contracts the circuit's network in XLA;
for a large state that runs slower than NumPy (2 cores, the 10-layer ladder: 22 qubits 462 ms
against 300 ms). Where this machine's rates (:func:`~tyxonq.circuit.calibration.machine_rates`)
estimate the host twin's state (its sweep or its contraction), and copying it into the program,
cheaper per call than the compiled contraction, the program takes the state from the host through
:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_computed` (a host callback); derivatives, if
asked for, are the contraction's. Both are exact: only speed changes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..numerics import use_backend
from ..numerics.distributed import communicator
from ..numerics.protocol import ArrayBackend
from .calibration import machine_rates
from .contraction.host_route import angle_slots
from .contraction.network import state_network
from .contraction.rehearsal import record
from .contraction.route_costs import RouteChoice, RouteCost, network_cost, sweep_cost
from .operations.operation import with_angles_at
from .statevector.sweep import sweep_program

__all__ = ["host_state"]

_CHOICES: dict[tuple, RouteChoice] = {}
_CHOICES_LIMIT = 256


def host_state(circuit: Any, K: ArrayBackend, swept: bool) -> Any | None:
    """``circuit``'s state computed by the host twin inside the program being compiled (its own
    route: swept where ``swept``, else contracted), when that is estimated faster than the compiled
    contraction; ``None`` otherwise (nothing is compiling, derivatives are being taken, a batch is
    mapped (``vmap``: the compiled contraction runs the batch in one program, a host callback its
    members one after another), the device is not the host's, a distributed run shares the work,
    an input state, a matrix or a complex angle is traced, or the compiled contraction is
    estimated cheaper: below :meth:`~tyxonq.numerics.protocol.ArrayBackend.host_program_entries`
    amplitudes only, where the rates decide)."""
    if not K.compiling() or K.differentiating() or K.batching() or K.capabilities.device != "cpu" \
            or communicator().size > 1:
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
    n = circuit.num_qubits
    if 2 ** n < K.host_program_entries() and not _host_chosen(circuit, K, twin, n, operations, swept):
        return None  # from host_program_entries() the host, whatever the rates (as every contraction)
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
    return K.host_computed(on_host, contracted, angles, (2 ** n,), K.dtype)


def _host_chosen(circuit: Any, K: ArrayBackend, twin: ArrayBackend, n: int, operations: list,
                 swept: bool) -> bool:
    """Whether the twin's route to the state (and a copy of its ``2^n`` amplitudes into the
    program) is estimated faster per call than the compiled contraction by this machine's rates
    (compile time aside: the program is called many times, and each call should be at least as
    fast as NumPy's); kept per structure and rates."""
    host_rates, rates = machine_rates(twin), machine_rates(K)
    key = (circuit.structure_key(), K.precision, swept, host_rates, rates)
    choice = _CHOICES.get(key)
    if choice is None:
        contraction = network_cost("contraction", [state_network(n, operations, bool(circuit.inputs_kind()))])
        if swept:
            program = sweep_program(n, operations, twin.capabilities.max_ndim)
            work = sweep_cost(n, [(len(block.qubits), block.diagonal) for block in program.blocks], [])
        else:
            work = contraction
        host = RouteCost("host", work.tensors, work.madds, work.units, passes=work.passes + 2.0 ** n)
        per_call = replace(rates, compile_seconds_per_tensor=0.0)  # compile time aside
        estimates = (("host", host.seconds(host_rates)),
                     ("contraction", contraction.seconds(per_call, compiling=True)))
        choice = RouteChoice("state()", min(estimates, key=lambda item: item[1])[0], estimates)
        if len(_CHOICES) >= _CHOICES_LIMIT:
            _CHOICES.clear()
        _CHOICES[key] = choice
    record("choice", choice=choice)
    return choice.chosen == "host"
