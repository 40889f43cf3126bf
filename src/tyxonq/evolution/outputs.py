"""What a propagation returns at its output times."""

from __future__ import annotations

import numbers
from typing import Any, Callable

from ..numerics.protocol import ArrayBackend

__all__ = ["collected", "Recorder"]


def collected(K: ArrayBackend, outputs: list[Any]) -> Any:
    """``outputs`` stacked along a new first axis when each is a backend array or a number (states,
    observables, array-valued callbacks), else the list itself (callbacks returning tuples,
    dictionaries, circuits).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> collected(K, [1.0, 2.0]).tolist(), collected(K, [(1, 2), (3, 4)])
    ([1.0, 2.0], [(1, 2), (3, 4)])
    """
    if all(K.is_array(o) or isinstance(o, numbers.Number) for o in outputs):
        return K.stack([K.asarray(o) for o in outputs])
    return outputs


class Recorder:
    """Collects, at each output time, the observables' real expectation values, the callback's
    value, or (neither asked for) the state; :meth:`result` returns them as
    :func:`tyxonq.evolve` does: the values, the callback's values, the pair ``(values, callback
    values)`` when both were asked for, or the states.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> recorder = Recorder(K, [tq.PauliSum([(1.0, "Z")])], lambda s: s * 2)
    >>> recorder.record(lambda o: 0.5, lambda: 1.0, lambda: None)
    >>> values, called = recorder.result()
    >>> values.tolist(), called.tolist()
    ([[0.5]], [2.0])
    """

    def __init__(self, K: ArrayBackend, observables: list | None, callback: Callable[[Any], Any] | None):
        self.K, self.observables, self.callback = K, observables, callback
        self.values: list[Any] = []
        self.called: list[Any] = []

    def record(self, measure: Callable[[Any], Any], handed: Callable[[], Any],
               snapshot: Callable[[], Any]) -> None:
        """One output time: ``measure(observable)`` gives a value, ``handed()`` what the callback
        receives (a copy or a view the propagation does not read again), ``snapshot()`` the state
        kept when neither observables nor a callback were asked for."""
        K = self.K
        if self.observables is not None:
            self.values.append(K.stack([K.real(measure(o)) for o in self.observables]))
        if self.callback is not None:
            self.called.append(self.callback(handed()))
        if self.observables is None and self.callback is None:
            self.values.append(snapshot())

    def result(self) -> Any:
        """The outputs, stacked where they are arrays or numbers (:func:`collected`)."""
        if self.observables is not None and self.callback is not None:
            return collected(self.K, self.values), collected(self.K, self.called)
        return collected(self.K, self.called if self.callback is not None else self.values)
