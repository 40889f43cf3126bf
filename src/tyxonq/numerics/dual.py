"""Traced numbers: a value with its exact gradient (and Hessian) with respect to traced parameters.

``tq.value_and_grad(objective, method="adjoint" | "parameter-shift")`` calls the objective with
its parameters replaced by :class:`Dual` numbers (forward mode). Arithmetic on them (``gamma *
w``, sums, products, ``sin``...) carries gradients by the chain rule, so angles shared by several
gates or scaled by constants are handled exactly; a circuit whose angles are Duals returns its
expectation values as Duals (see :mod:`tyxonq.circuit.differentiation`). They are numbers of the
numerics layer, beside :mod:`~tyxonq.numerics.lanes` (batched values), and know nothing of circuits.

A Dual has no ``float()``/``__array__``: converting one to a plain number would silently drop
its gradient, so it raises instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Dual", "TracingError", "traced_array", "is_traced"]


class TracingError(TypeError):
    """A traced parameter met an operation that exact circuit gradients cannot follow."""


def _value_of(other: Any) -> Any:
    """The plain value of a Dual or a number; ``NotImplemented`` for anything else."""
    if isinstance(other, Dual):
        return other.value
    if isinstance(other, (int, float, complex, np.number)):
        return other
    return NotImplemented


class Dual:
    """A number and its exact gradient (and, for Hessians, its exact second derivatives) with
    respect to the traced parameters.

    ``hessian`` is ``None`` for first-order tracing; Duals made with a Hessian (a ``(P, P)``
    array) carry second derivatives through every operation by the second-order chain rule.

    Examples
    --------
    >>> x = Dual(2.0, np.array([1.0, 0.0]))
    >>> y = Dual(3.0, np.array([0.0, 1.0]))
    >>> z = x * y + x.sin()
    >>> round(float(z.value), 6), np.round(z.gradient, 6).tolist()
    (6.909297, [2.583853, 2.0])
    >>> x2 = Dual(2.0, np.array([1.0, 0.0]), np.zeros((2, 2)))
    >>> y2 = Dual(3.0, np.array([0.0, 1.0]), np.zeros((2, 2)))
    >>> np.round((x2 * x2 * y2).hessian, 6).tolist()  # of x^2 y
    [[6.0, 4.0], [4.0, 0.0]]
    """

    __slots__ = ("value", "gradient", "hessian")
    __array_priority__ = 1000  # NumPy defers arithmetic with Duals to these methods

    def __init__(self, value: Any, gradient: np.ndarray, hessian: np.ndarray | None = None) -> None:
        self.value = value
        self.gradient = gradient
        self.hessian = hessian

    # -- arithmetic (chain rule) -----------------------------------------------------------
    def _combine(self, other: Any, value: Any, d_self: Any, d_other: Any,
                 second: tuple[Any, Any, Any] = (0, 0, 0)) -> Dual:
        """``value = F(self, other)`` with first partials ``d_self, d_other`` and second
        partials ``second = (F_ss, F_oo, F_so)`` (used only when a Hessian is traced)."""
        traced = isinstance(other, Dual)
        gradient = d_self * self.gradient
        if traced:
            gradient = gradient + d_other * other.gradient
        if self.hessian is None and not (traced and other.hessian is not None):
            return Dual(value, gradient)
        f_ss, f_oo, f_so = second
        g = self.gradient
        hessian = _scaled_hessian(d_self, self, g) + f_ss * np.multiply.outer(g, g)
        if traced:
            h = other.gradient
            hessian = (hessian + _scaled_hessian(d_other, other, h) + f_oo * np.multiply.outer(h, h)
                       + f_so * (np.multiply.outer(g, h) + np.multiply.outer(h, g)))
        return Dual(value, gradient, hessian)

    def _unary(self, value: Any, first: Any, second: Any) -> Dual:
        """``value = f(self)`` with ``f' = first`` and ``f'' = second``."""
        gradient = first * self.gradient
        if self.hessian is None:
            return Dual(value, gradient)
        return Dual(value, gradient, first * self.hessian + second * np.multiply.outer(self.gradient,
                                                                                      self.gradient))

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
        return self._combine(other, self.value * o, o, self.value, (0, 0, 1))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Dual:
        o = _value_of(other)
        if o is NotImplemented:
            return NotImplemented
        return self._combine(other, self.value / o, 1 / o, -self.value / o ** 2,
                             (0, 2 * self.value / o ** 3, -1 / o ** 2))

    def __rtruediv__(self, other: Any) -> Dual:
        return self._unary(other / self.value, -other / self.value ** 2, 2 * other / self.value ** 3)

    def __pow__(self, exponent: Any) -> Dual:
        if isinstance(exponent, Dual):
            raise TracingError("a traced number to a traced power is not supported")
        return self._unary(self.value ** exponent, exponent * self.value ** (exponent - 1),
                           exponent * (exponent - 1) * self.value ** (exponent - 2))

    def __neg__(self) -> Dual:
        return self._unary(-self.value, -1, 0)

    def __pos__(self) -> Dual:
        return self

    def __abs__(self) -> Dual:
        if isinstance(self.value, complex) or np.iscomplexobj(self.value):
            raise TracingError("abs of a traced complex number is not supported")
        return self._unary(abs(self.value), np.sign(self.value), 0)

    # -- functions NumPy calls on object arrays (np.sin(array_of_duals) -> each .sin()) --------
    def sin(self) -> Dual:
        return self._unary(np.sin(self.value), np.cos(self.value), -np.sin(self.value))

    def cos(self) -> Dual:
        return self._unary(np.cos(self.value), -np.sin(self.value), -np.cos(self.value))

    def exp(self) -> Dual:
        value = np.exp(self.value)
        return self._unary(value, value, value)

    def sqrt(self) -> Dual:
        value = np.sqrt(self.value)
        return self._unary(value, 1 / (2 * value), -1 / (4 * value ** 3))

    def log(self) -> Dual:
        return self._unary(np.log(self.value), 1 / self.value, -1 / self.value ** 2)

    def conjugate(self) -> Dual:
        return Dual(np.conj(self.value), np.conj(self.gradient),
                    None if self.hessian is None else np.conj(self.hessian))

    conj = conjugate

    @property
    def real(self) -> Dual:
        return Dual(np.real(self.value), np.real(self.gradient),
                    None if self.hessian is None else np.real(self.hessian))

    @property
    def imag(self) -> Dual:
        return Dual(np.imag(self.value), np.imag(self.gradient),
                    None if self.hessian is None else np.imag(self.hessian))

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


def _scaled_hessian(factor: Any, dual: Dual, gradient: np.ndarray) -> Any:
    """``factor`` times a Dual's Hessian (zeros for a first-order one)."""
    if dual.hessian is None:
        return np.zeros((gradient.size, gradient.size), dtype=np.result_type(gradient, float))
    return factor * dual.hessian


def is_traced(value: Any) -> bool:
    return isinstance(value, Dual)


def traced_array(values: np.ndarray, offset: int, size: int, second_order: bool = False) -> np.ndarray:
    """Object array of Duals with unit gradients ``offset .. offset + values.size`` of ``size``
    (and zero Hessians with ``second_order``)."""
    flat = np.asarray(values).reshape(-1)
    traced = np.empty(flat.shape, dtype=object)
    for i, value in enumerate(flat.tolist()):
        gradient = np.zeros(size)
        gradient[offset + i] = 1.0
        traced[i] = Dual(value, gradient, np.zeros((size, size)) if second_order else None)
    return traced.reshape(np.shape(values))
