"""Traced parameters: exact gradients of circuit objectives on backends without autograd.

``tq.value_and_grad(objective, method="adjoint" | "parameter-shift")`` calls the objective with
its parameters replaced by :class:`Dual` numbers: a value and the exact gradient of that value
with respect to every parameter (forward mode). Arithmetic on them (``gamma * w``, sums,
products, ``sin``...) carries gradients by the chain rule, so angles shared by several gates or
scaled by constants are handled exactly. A circuit whose angles are Duals returns each
expectation value as a Dual whose gradient the active method computes exactly (adjoint sweep or
parameter shift) and chains into the parameters.

A Dual has no ``float()``/``__array__``: converting one to a plain number would silently drop
its gradient, so it raises instead.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

import numpy as np

__all__ = ["Dual", "TracingError", "traced_array", "gradient_method", "active_gradient_method",
           "is_traced", "EXACT_METHODS", "EXPECTATION_METHODS"]

EXACT_METHODS = ("adjoint", "parameter-shift")
#: how expectation values differentiate: an exact method, or plain autograd through the simulator
#: (on backends with autograd; see :mod:`tyxonq.circuit.differentiation.node`)
EXPECTATION_METHODS = (*EXACT_METHODS, "autograd")


class TracingError(TypeError):
    """A traced parameter met an operation that exact circuit gradients cannot follow."""


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
    if method not in EXPECTATION_METHODS:
        raise ValueError(f"method={method!r} must be one of {EXPECTATION_METHODS}")
    token = _METHOD.set(method)
    try:
        yield method
    finally:
        _METHOD.reset(token)


def active_gradient_method() -> str:
    return _METHOD.get()


def _value_of(other: Any) -> Any:
    """The plain value of a Dual or a number; ``NotImplemented`` for anything else."""
    if isinstance(other, Dual):
        return other.value
    if isinstance(other, (int, float, complex, np.number)):
        return other
    return NotImplemented


class Dual:
    """A number and its exact gradient with respect to the traced parameters.

    Examples
    --------
    >>> x = Dual(2.0, np.array([1.0, 0.0]))
    >>> y = Dual(3.0, np.array([0.0, 1.0]))
    >>> z = x * y + x.sin()
    >>> round(float(z.value), 6), np.round(z.gradient, 6).tolist()
    (6.909297, [2.583853, 2.0])
    """

    __slots__ = ("value", "gradient")
    __array_priority__ = 1000  # NumPy defers arithmetic with Duals to these methods

    def __init__(self, value: Any, gradient: np.ndarray) -> None:
        self.value = value
        self.gradient = gradient

    # -- arithmetic (chain rule) -----------------------------------------------------------
    def _combine(self, other: Any, value: Any, d_self: Any, d_other: Any) -> Dual:
        gradient = d_self * self.gradient
        if isinstance(other, Dual):
            gradient = gradient + d_other * other.gradient
        return Dual(value, gradient)

    def __add__(self, other: Any) -> Dual:
        o = _value_of(other)
        if o is NotImplemented:
            return NotImplemented
        return self._combine(other, self.value + o, 1, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dual:
        o = _value_of(other)
        if o is NotImplemented:
            return NotImplemented
        return self._combine(other, self.value - o, 1, -1)

    def __rsub__(self, other: Any) -> Dual:
        return (-self) + other

    def __mul__(self, other: Any) -> Dual:
        o = _value_of(other)
        if o is NotImplemented:
            return NotImplemented
        return self._combine(other, self.value * o, o, self.value)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Dual:
        o = _value_of(other)
        if o is NotImplemented:
            return NotImplemented
        return self._combine(other, self.value / o, 1 / o, -self.value / o ** 2)

    def __rtruediv__(self, other: Any) -> Dual:
        return Dual(other / self.value, -other / self.value ** 2 * self.gradient)

    def __pow__(self, exponent: Any) -> Dual:
        if isinstance(exponent, Dual):
            raise TracingError("a traced number to a traced power is not supported")
        return Dual(self.value ** exponent, exponent * self.value ** (exponent - 1) * self.gradient)

    def __neg__(self) -> Dual:
        return Dual(-self.value, -self.gradient)

    def __pos__(self) -> Dual:
        return self

    def __abs__(self) -> Dual:
        if isinstance(self.value, complex) or np.iscomplexobj(self.value):
            raise TracingError("abs of a traced complex number is not supported")
        return Dual(abs(self.value), np.sign(self.value) * self.gradient)

    # -- functions NumPy calls on object arrays (np.sin(array_of_duals) -> each .sin()) --------
    def sin(self) -> Dual:
        return Dual(np.sin(self.value), np.cos(self.value) * self.gradient)

    def cos(self) -> Dual:
        return Dual(np.cos(self.value), -np.sin(self.value) * self.gradient)

    def exp(self) -> Dual:
        value = np.exp(self.value)
        return Dual(value, value * self.gradient)

    def sqrt(self) -> Dual:
        value = np.sqrt(self.value)
        return Dual(value, self.gradient / (2 * value))

    def log(self) -> Dual:
        return Dual(np.log(self.value), self.gradient / self.value)

    def conjugate(self) -> Dual:
        return Dual(np.conj(self.value), np.conj(self.gradient))

    conj = conjugate

    @property
    def real(self) -> Dual:
        return Dual(np.real(self.value), np.real(self.gradient))

    @property
    def imag(self) -> Dual:
        return Dual(np.imag(self.value), np.imag(self.gradient))

    # -- comparisons use the value (for control flow such as max/min) -------------------------
    def __lt__(self, other: Any) -> bool:
        return self.value < (other.value if isinstance(other, Dual) else other)

    def __gt__(self, other: Any) -> bool:
        return self.value > (other.value if isinstance(other, Dual) else other)

    def __float__(self) -> float:
        raise TracingError(
            "a traced parameter was converted to a plain number, which would drop its gradient. "
            "Exact gradients (method='adjoint' or 'parameter-shift') follow arithmetic, sin/cos/"
            "exp/sqrt/log and circuit expectations; use method='finite-difference' or the "
            "pytorch backend for other operations"
        )

    __int__ = __complex__ = __index__ = __float__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, gradient={self.gradient!r})"


def is_traced(value: Any) -> bool:
    return isinstance(value, Dual)


def traced_array(values: np.ndarray, offset: int, size: int) -> np.ndarray:
    """Object array of Duals with unit gradients ``offset .. offset + values.size`` of ``size``."""
    flat = np.asarray(values).reshape(-1)
    traced = np.empty(flat.shape, dtype=object)
    for i, value in enumerate(flat.tolist()):
        gradient = np.zeros(size)
        gradient[offset + i] = 1.0
        traced[i] = Dual(value, gradient)
    return traced.reshape(np.shape(values))
