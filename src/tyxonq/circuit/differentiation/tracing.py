"""How circuits differentiate: the active gradient method, and which circuits a traced objective
measures.

``tq.value_and_grad(objective, method="adjoint" | "parameter-shift")`` calls the objective with
its parameters replaced by traced numbers (:class:`~tyxonq.numerics.dual.Dual`); a circuit whose
angles are Duals returns each expectation value as a Dual whose gradient the active method
(:func:`gradient_method`) computes exactly and chains into the parameters.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

from ...numerics.arguments import checked_choice

__all__ = ["gradient_method", "active_gradient_method", "capturing_traced_circuits",
           "announce_traced_circuit", "CircuitFound", "EXACT_METHODS", "EXPECTATION_METHODS"]

EXACT_METHODS = ("adjoint", "parameter-shift")
#: how expectation values differentiate: an exact method, or plain autograd through the simulator
#: (on backends with autograd; see :mod:`tyxonq.circuit.differentiation.node`)
EXPECTATION_METHODS = (*EXACT_METHODS, "autograd")


_METHOD: contextvars.ContextVar[str] = contextvars.ContextVar("tyxonq_gradient_method",
                                                             default="adjoint")


@contextlib.contextmanager
def gradient_method(method: str) -> Iterator[str]:
    """Within the block, expectation values differentiate with ``method``: traced ones (and
    gradient nodes on PyTorch) by ``"adjoint"`` or ``"parameter-shift"``; ``"autograd"`` makes
    autograd backends differentiate through the simulator instead.

    Examples
    --------
    >>> import tyxonq as tq
    >>> with tq.gradient_method("parameter-shift"):
    ...     g = tq.grad(lambda t: tq.Circuit(1).rx(0, t).expectation_ps(z=[0]))(0.4)
    >>> round(float(g), 6)
    -0.389418
    """
    checked_choice(method, EXPECTATION_METHODS, "method")
    token = _METHOD.set(method)
    try:
        yield method
    finally:
        _METHOD.reset(token)


def active_gradient_method() -> str:
    return _METHOD.get()


_CAPTURE: contextvars.ContextVar[tuple[list, bool] | None] = contextvars.ContextVar(
    "tyxonq_traced_circuits", default=None)


class CircuitFound(Exception):
    """Raised by :func:`announce_traced_circuit` to stop a traced function at its first circuit."""

    def __init__(self, circuit: Any) -> None:
        super().__init__("a traced circuit was found")
        self.circuit = circuit


@contextlib.contextmanager
def capturing_traced_circuits(stop_at_first: bool = False) -> Iterator[list]:
    """Collect every circuit whose result is computed with traced angles inside the block (in
    order; the same circuit once per result); with ``stop_at_first`` the first one raises
    :class:`CircuitFound` instead, so nothing is computed for it."""
    found: list = []
    token = _CAPTURE.set((found, stop_at_first))
    try:
        yield found
    finally:
        _CAPTURE.reset(token)


def announce_traced_circuit(circuit: Any) -> None:
    """Called by a circuit about to compute a result with traced angles."""
    capture = _CAPTURE.get()
    if capture is None:
        return
    found, stop = capture
    if stop:
        raise CircuitFound(circuit)
    found.append(circuit)
