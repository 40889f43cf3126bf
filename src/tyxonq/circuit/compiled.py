"""Compiled results: one result of a circuit structure, planned once and called with new angles at
the cost of binding its gates and running its contraction.

:meth:`~tyxonq.circuit.simulator.SimulatorBase.compile` runs the result once and watches what it
contracts (:func:`~tyxonq.circuit.contraction.evaluation.capturing_requests`). Where the result
is one contraction of the circuit's own gates (a light cone's expectation, an amplitude, a
marginal), a call binds the new angles straight into that contraction's plan: each gate kind's
angles are gathered from the vector in one indexing operation, its matrices built in one call,
and no circuit, operation, observable or plan is made or looked up again. Anything else (a
state-vector sweep, an MPS, a dynamic circuit, a batch of circuits) is compiled as the plain
call on :meth:`~tyxonq.circuit.simulator.SimulatorBase.with_parameters`: the same results, only
without the shortcut (:attr:`CompiledResult.direct` says which).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..numerics import get_backend
from ..numerics.protocol import ArrayBackend
from .contraction.binding import gate_kinds
from .contraction.evaluation import CapturedEvaluation, capturing_requests, evaluate_requests
from .contraction.host_route import host_twin_for

__all__ = ["CompiledResult", "COMPILABLE"]

#: The results whose contraction a compiled call binds directly (any other public result is
#: compiled as the plain call on new angles).
COMPILABLE = ("expectation_ps", "expectation", "amplitude", "marginal_probability", "probability")


class CompiledResult:
    """``circuit.<method>(*args, **kwargs)`` as a function of the circuit's angles.

    Call it with :attr:`num_parameters` angles in
    :meth:`~tyxonq.circuit.simulator.SimulatorBase.parameters` order (numbers, a NumPy array, or
    one backend array: a gradient-tracked tensor's gradient flows, and under ``jax.jit`` it
    traces). Results equal the plain call on ``circuit.with_parameters(values)``.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> c = tq.templates.brickwork(6, np.zeros(18), 3)
    >>> energy = c.compile("expectation_ps", z=[2])
    >>> angles = np.linspace(0.1, 0.9, 18)
    >>> bool(np.isclose(energy(angles), c.with_parameters(angles).expectation_ps(z=[2])))
    True
    >>> energy.direct
    True
    """

    def __init__(self, circuit: Any, method: str, args: tuple, kwargs: dict) -> None:
        self._circuit = circuit  # a copy: later changes to the caller's circuit do not reach it
        self._method = method
        self._call: Callable[[Any], Any] = lambda c: getattr(c, method)(*args, **kwargs)
        self.num_parameters = len(circuit.parameters())
        self._kinds: dict[tuple[str, bool], np.ndarray] = _angle_positions(circuit.operations)
        self._direct: dict[ArrayBackend, _Direct | None] = {}
        self._prepared(get_backend())  # plans made now: a call only binds and contracts

    @property
    def direct(self) -> bool:
        """Whether calls on the active backend bind the angles straight into a contraction."""
        return self._prepared(get_backend()) is not None

    def __call__(self, values: Any) -> Any:
        K = get_backend()
        prepared = self._prepared(K)
        if prepared is None:
            return self._call(self._circuit.with_parameters(values))
        values = _checked_values(K, values, self.num_parameters)
        if prepared.twin is not None and isinstance(values, np.ndarray):  # the host contracts: faster
            (value,) = _evaluated(prepared.twin, prepared.twin_evaluation, _columns(K, values, self._kinds))
            return prepared.finish(K.asarray(value))
        (value,) = _evaluated(K, prepared.evaluation, _columns(K, values, self._kinds))
        return prepared.finish(value)

    def _prepared(self, K: ArrayBackend) -> _Direct | None:
        """The captured contraction and how its result becomes the method's, for backend ``K``
        (``None``: not one contraction of the circuit's gates). Captured outside compiled
        programs only (a call inside ``jax.jit`` uses what an eager call captured)."""
        if K not in self._direct:
            if K.compiling():
                return None
            self._direct[K] = self._capture(K)
        return self._direct[K]

    def _capture(self, K: ArrayBackend) -> _Direct | None:
        circuit = self._circuit
        with capturing_requests() as captured:
            expected = self._call(circuit)
        operations = circuit.operations
        if (self._method not in COMPILABLE or len(captured) != 1 or len(captured[0].requests) != 1
                or not _same_operations(captured[0].operations, operations) or not _plain_angles(operations)):
            return None
        evaluation = CapturedEvaluation(tuple(operations), captured[0].inputs, captured[0].requests)
        columns = _columns(K, np.asarray(circuit.parameters(), dtype=np.float64), self._kinds)
        (value,) = _evaluated(K, evaluation, columns)
        wanted = np.asarray(K.to_numpy(expected))
        tolerance = 1e-12 if wanted.dtype in (np.float64, np.complex128) else 1e-5  # complex64 on request
        for finish in (lambda result: result, K.real):  # the contraction's result, or its real part
            got = np.asarray(K.to_numpy(finish(value)))
            if (got.shape == wanted.shape and got.dtype.kind == wanted.dtype.kind
                    and np.allclose(got, wanted, rtol=tolerance, atol=tolerance * 1e-2)):
                host = host_twin_for(K, evaluation.operations, evaluation.inputs, evaluation.requests)
                if host is None:
                    return _Direct(evaluation, finish)
                twin, *moved = host
                return _Direct(evaluation, finish, twin, CapturedEvaluation(tuple(moved[0]), moved[1],
                                                                            tuple(moved[2])))
        return None


@dataclass(frozen=True)
class _Direct:
    """What a direct call runs: the captured contraction, how its result becomes the method's,
    and where the contraction runs on the host twin (host angles only), the twin's copy of it."""

    evaluation: CapturedEvaluation
    finish: Callable[[Any], Any]
    twin: ArrayBackend | None = None
    twin_evaluation: CapturedEvaluation | None = None


def _evaluated(K: ArrayBackend, evaluation: CapturedEvaluation, columns: dict) -> list[Any]:
    return evaluate_requests(K, evaluation.operations, evaluation.inputs, evaluation.requests, columns)


def _angle_positions(operations: Any) -> dict[tuple[str, bool], np.ndarray]:
    """Per gate kind ``(gate, dagger)``, its gates' angles as positions in the parameter vector
    (``(G, p)``; gates in the rows :func:`~tyxonq.circuit.contraction.binding.gate_kinds` gives
    them)."""
    starts = np.cumsum([0] + [len(op.params) if op.has_angles else 0 for op in operations])
    return {key: np.asarray([range(starts[i], starts[i] + len(operations[i].params)) for i in members],
                            dtype=np.int64)
            for key, members in gate_kinds(operations)[0].items()}


def _same_operations(seen: Any, operations: Any) -> bool:
    """Whether a contraction was of these very operations (the circuit's own, not a copy's)."""
    return len(seen) == len(operations) and all(a is b for a, b in zip(seen, operations))


def _plain_angles(operations: Any) -> bool:
    """Whether every parametrised gate's parameters are angles ``parameters()`` lists (no
    post-selected outcome or annotation among them)."""
    return all(not op.params or op.gate == "unitary" or op.has_angles for op in operations)


def _checked_values(K: ArrayBackend, values: Any, count: int) -> Any:
    """``values`` as one host or backend vector of ``count`` real angles, checked."""
    if K.is_array(values) and not isinstance(values, np.ndarray):
        if tuple(K.shape(values)) != (count,):
            raise ValueError(f"compiled call: expected {count} angles, shape ({count},); got shape "
                             f"{tuple(K.shape(values))}")
        if not K.is_floating(values):
            raise TypeError(f"compiled call: angles must be a real floating array; got {K.dtype_of(values)}")
        return values
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"compiled call: angles must be real numbers; got {array.dtype} values")
    if array.shape != (count,):
        raise ValueError(f"compiled call: expected {count} angles, shape ({count},); got shape {array.shape}")
    array = array.astype(np.float64, copy=False)
    if not np.isfinite(array).all():
        raise ValueError("compiled call: an angle is not finite; expected real angles")
    return array


def _columns(K: ArrayBackend, values: Any, kinds: dict[tuple[str, bool], np.ndarray]) -> dict:
    """Every kind's angles ``(G, p)`` gathered from the vector (host values stay on the host)."""
    if isinstance(values, np.ndarray):
        return {key: values[positions] for key, positions in kinds.items()}
    return {key: K.reshape(K.take(values, positions.reshape(-1)), positions.shape)
            for key, positions in kinds.items()}
