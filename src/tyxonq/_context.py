"""A setting with a process-wide default and per-context overrides.

Used for the active backend and the active contractor: ``set(value)`` changes the process-wide
default (what new threads see) and the current context; ``override(value)`` changes only the
current context (thread or asyncio task) until the ``with`` block ends, even if it raises.

One rule for a ``set`` inside an ``override`` block: leaving the block gives the context exactly
the value it had on entering it, and the process default keeps what ``set`` gave it. (Without the
rule, what the context saw after the block would depend on whether ``set`` had ever been called
before it.)
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Generic, Iterator, TypeVar

__all__ = ["ContextualSetting"]

T = TypeVar("T")


class ContextualSetting(Generic[T]):
    """Process default + :class:`contextvars.ContextVar` override, read by :meth:`get`.

    Examples
    --------
    >>> precision = ContextualSetting("precision", fallback=lambda: "double")
    >>> precision.get()
    'double'
    >>> with precision.override("single"):
    ...     precision.get()
    'single'
    """

    def __init__(self, name: str, fallback: Callable[[], T]) -> None:
        self._override: contextvars.ContextVar[T | None] = contextvars.ContextVar(name, default=None)
        self._process_default: list[T] = []  # empty until set() is first called
        self._fallback = fallback

    def get(self) -> T:
        value = self._override.get()
        if value is not None:
            return value
        if self._process_default:
            return self._process_default[0]
        return self._fallback()

    def set(self, value: T) -> T:
        self._process_default[:] = [value]
        self._override.set(value)
        return value

    @contextlib.contextmanager
    def override(self, value: T) -> Iterator[T]:
        entered = self.get()
        token = self._override.set(value)
        try:
            yield value
        finally:
            self._override.reset(token)
            if self.get() is not entered:  # set() inside the block moved the process default
                self._override.set(entered)

    @contextlib.contextmanager
    def isolated(self) -> Iterator[None]:
        """Restore the process default and this context's value afterwards (for tests)."""
        saved = list(self._process_default)
        token = self._override.set(None)
        try:
            yield
        finally:
            self._override.reset(token)
            self._process_default[:] = saved
