"""Small contractions of values nothing differentiates, run on the backend's host twin.

A light-cone expectation or an amplitude is hundreds of small products: on PyTorch each costs
5-10 us of dispatch (on CUDA a kernel launch besides), on eager JAX more, against 1-3 us on NumPy,
which reads CPU tensors without a copy (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_twin`).
Where every value a contraction binds (angles, input state, channels' and observables' matrices)
can be read on the host (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_copyable`: not tracked
by autograd, not traced; a CUDA tensor is copied over, all of them in a few transfers), nothing is
being compiled, and no intermediate is larger than the backend's
:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_twin_entries` (PyTorch: 2^18 on the CPU, 2^14
on CUDA; eager JAX on the CPU: any size), the contraction runs on the twin and only its results
return to the backend. The values are the same (the twin has the backend's precision); only the
speed changes. Larger contractions stay where the backend's threaded kernels win. The
matrix-product-state simulator applies its gates on the twin by the same test (with no requests)
where its sites lie in host memory (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_readable`).

Inside a program the backend compiles (JAX under ``jit``), :func:`host_program_results` does the
same for contractions whose largest intermediate reaches the backend's
:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_program_entries` (JAX on the CPU: 2^22, where
XLA's contractions ran about 1.5x NumPy's): the program calls the twin back with its angles
(:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_computed`), and derivatives, where taken, are
the compiled contraction's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

import numpy as np

from ...numerics import use_backend
from ...numerics.distributed import communicator
from ...numerics.protocol import ArrayBackend
from ..operations.operation import Operation, with_angles_at

__all__ = ["host_twin_for", "host_program_results", "angle_slots", "in_host_memory",
           "matrices_in_host_memory"]


def host_twin_for(K: ArrayBackend, operations: Sequence[Operation], inputs: Any, requests: Sequence[Any],
                  numbers_only: bool = False) -> tuple[ArrayBackend, list[Operation], Any, list[Any]] | None:
    """``(twin, operations, inputs, requests)`` with every bound value moved to the host twin
    (angles held as backend scalars read in one transfer and made floats), when the contraction
    should run there; ``None`` when it runs on ``K`` itself. ``numbers_only``: the caller knows
    that the operations hold plain host numbers only (a circuit's ``holds_only_numbers()``), so
    they are not looked through."""
    twin = K.host_twin()
    if twin is K or K.compiling():
        return None
    limit = K.host_twin_entries()
    if any(request.network_plan.plan.largest_tensor_size > limit for request in requests):
        return None
    arrays = []  # (operation, parameter) positions of angles held as backend scalars
    for index, op in enumerate(operations if not numbers_only else ()):
        if op.gate == "unitary" or op.channel is not None:  # matrices, bound as they are
            if not matrices_in_host_memory(K, op):
                return None
            if op.gate == "unitary":
                continue
        for position, value in enumerate(op.params):
            if not isinstance(value, _HOST_NUMBERS):  # most angles are host numbers: nothing to ask
                if not _readable(K, value):
                    return None
                if K.is_array(value):
                    arrays.append((index, position))
    if (moved := _moved(K, twin, inputs, requests)) is None:
        return None
    return twin, _float_angles(K, operations, arrays), *moved


#: angles readable on the host as they are (a Trotter circuit's thousands of NumPy floats)
_HOST_NUMBERS = (float, int, np.floating, np.integer)


def _readable(K: ArrayBackend, value: Any) -> bool:
    """Whether ``value``, an angle or an array this module copies to the twin, can be read on the
    host (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_copyable`: a CUDA tensor by a copy)."""
    if isinstance(value, (list, tuple)):
        return all(_readable(K, item) for item in value)
    return K.host_copyable(value)


def matrices_in_host_memory(K: ArrayBackend, op: Operation) -> bool:
    """Whether the matrices of ``op`` that the twin binds as they are (a channel's Kraus
    operators, a ``unitary``'s matrix) lie in host memory (:func:`in_host_memory`).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> matrices_in_host_memory(K, Operation("unitary", (0,), (K.eye(2),)))
    True
    """
    if op.channel is not None:
        return in_host_memory(K, op.channel.operators)
    return op.gate != "unitary" or in_host_memory(K, op.params[0])


def in_host_memory(K: ArrayBackend, value: Any) -> bool:
    """Whether ``value`` (``None``, an array, a number, or lists and tuples of them: Kraus
    operators), which the twin would bind as it is, lies in host memory
    (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_readable`).

    Examples
    --------
    >>> import tyxonq as tq
    >>> in_host_memory(tq.get_backend("numpy"), [None, 0.5, [tq.get_backend("numpy").eye(2)]])
    True
    """
    if isinstance(value, (list, tuple)):
        return all(in_host_memory(K, item) for item in value)
    return value is None or K.host_readable(value)


def _moved(K: ArrayBackend, twin: ArrayBackend, inputs: Any,
           requests: Sequence[Any]) -> tuple[Any, list[Any]] | None:
    """``inputs`` and ``requests`` with their arrays (input state, observables' operators) on the
    host twin, each array moved once; ``None`` where one is not readable on the host."""
    if (inputs is not None and not _readable(K, inputs)) \
            or not all(_readable(K, operator) for request in requests for operator in request.operators):
        return None
    moved: dict[int, Any] = {}

    def host(array: Any) -> Any:
        if id(array) not in moved:
            moved[id(array)] = twin.asarray(K.to_numpy(array))
        return moved[id(array)]

    host_requests = [replace(request, operators=[host(o) for o in request.operators]) for request in requests]
    return None if inputs is None else host(inputs), host_requests


def _float_angles(K: ArrayBackend, operations: Sequence[Operation],
                  arrays: list[tuple[int, int]]) -> Sequence[Operation]:
    """``operations`` with the angles at ``arrays`` (backend scalars) as floats, read in one
    stack and one transfer instead of one conversion per angle."""
    if not arrays:
        return operations
    values = K.to_numpy(K.stack([operations[i].params[j] for i, j in arrays])).tolist()  # angles: 0-d
    return with_angles_at(operations, arrays, [float(value) for value in values])


Contract = Callable[[ArrayBackend, Sequence[Operation], Any, Sequence[Any]], list[Any]]


def host_program_results(K: ArrayBackend, operations: Sequence[Operation], inputs: Any,
                         requests: Sequence[Any], contract: Contract) -> list[Any] | None:
    """The requests' results computed by ``contract`` on the host twin, called back from the
    program being compiled with the operations' angles (derivatives: ``contract`` on ``K``, traced),
    when some request's largest intermediate reaches :meth:`ArrayBackend.host_program_entries`;
    ``None`` when ``contract(K, ...)`` should run in the program: nothing compiles, derivatives are
    being taken (they need the trace anyway), a batch is mapped (a callback would run its members
    one after another), a distributed run shares the work, or a traced value is not a real angle
    (an input state, a matrix, a channel's or an observable's operators)."""
    if not K.compiling() or K.differentiating() or K.batching() or communicator().size > 1:
        return None
    limit = K.host_program_entries()
    if all(request.network_plan.plan.largest_tensor_size < limit for request in requests):
        return None
    twin = K.host_twin()
    slots = angle_slots(K, operations)
    if twin is K or slots is None \
            or not all(in_host_memory(K, op.channel.operators)
                       for op in operations if op.channel is not None) \
            or (moved := _moved(K, twin, inputs, requests)) is None:
        return None
    host_inputs, host_requests = moved
    shapes = [tuple(request.network_plan.output_shape) for request in requests]
    sizes = [int(np.prod(shape)) for shape in shapes]

    def on_host(values: np.ndarray) -> np.ndarray:
        bound = with_angles_at(operations, slots, [float(value) for value in values])
        with use_backend(twin):
            results = contract(twin, bound, host_inputs, host_requests)
        flat = [np.asarray(twin.to_numpy(result)).reshape(-1) for result in results]
        return flat[0] if len(flat) == 1 else np.concatenate(flat)  # one result: no copy

    def traced(values: Any) -> Any:
        bound = with_angles_at(operations, slots, [values[i] for i in range(len(slots))])
        flat = [K.reshape(result, (-1,)) for result in contract(K, bound, inputs, requests)]
        return flat[0] if len(flat) == 1 else K.concatenate(flat)

    angles = K.stack([K.real(operations[k].params[j]) for k, j in slots]) if slots \
        else K.zeros((0,), K.real_dtype)
    flat = K.host_computed(on_host, traced, angles, (sum(sizes),), K.dtype)
    if len(requests) == 1:
        return [K.reshape(flat, shapes[0])]
    starts = np.cumsum([0] + sizes)
    return [K.reshape(flat[start:start + size], shape) for start, size, shape in zip(starts, sizes, shapes)]


def angle_slots(K: ArrayBackend, operations: Sequence[Operation]) -> list[tuple[int, int]] | None:
    """The ``(operation, parameter)`` positions of the angles that are arrays (traced, or
    constants of the backend); ``None`` where a gate's matrix is one, or an angle is not a real
    scalar (what a host callback cannot take as one vector of angles).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend()
    >>> angle_slots(K, tq.Circuit(1).rx(0, theta=K.asarray(0.3)).rz(0, theta=0.1).operations)
    [(0, 0)]
    """
    slots = []
    for index, op in enumerate(operations):
        for position, value in enumerate(op.params):
            if type(value) is float or isinstance(value, (int, np.floating, np.integer)):
                continue
            if op.gate == "unitary" or not K.is_array(value) or tuple(K.shape(value)) != () \
                    or K.is_complex(value):
                return None
            slots.append((index, position))
    return slots
