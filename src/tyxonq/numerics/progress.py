"""Progress of long computations: one facility for every simulator and algorithm.

A computation that may run for seconds opens :func:`progress` around its loop and advances it
per step (a trajectory batch, an optimiser iteration, ...). A bar is drawn with tqdm, when it is
installed, on the standard error stream:

- by default only in an interactive session (standard error a terminal) and only once the
  computation has run :data:`THRESHOLD_SECONDS` (tqdm's ``delay``), so short calls and CI logs
  print nothing;
- always, from the start, with ``tq.set_progress(True)`` or ``progress=True`` on a call; never
  with ``tq.set_progress(False)`` or ``progress=False`` (a call's own choice comes first);
- on rank 0 only in a distributed run.

Without tqdm nothing is drawn; asking for a bar explicitly then warns once, with the command that
installs it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import sys
import warnings
from typing import Any, Callable, Iterator, TypeVar

from .arguments import checked_flag

__all__ = ["set_progress", "progress_setting", "progress", "progress_choice", "takes_progress", "Progress",
           "THRESHOLD_SECONDS"]

#: seconds a computation runs before its bar appears when progress is automatic
THRESHOLD_SECONDS = 1.0

_setting: bool | None = None  # None: automatic
_warned_missing = False
#: a public call's own ``progress=`` while it runs (:func:`progress_choice`); ``None``: not chosen
_call_choice: contextvars.ContextVar[bool | None] = contextvars.ContextVar("tyxonq_progress", default=None)


def set_progress(enabled: bool | None) -> bool | None:
    """Turn progress bars on (``True``: every long computation, from its start), off
    (``False``), or back to automatic (``None``: interactive sessions only, past
    :data:`THRESHOLD_SECONDS`); returns the previous setting. A call's ``progress=`` wins.

    Examples
    --------
    >>> import tyxonq as tq
    >>> previous = tq.set_progress(False)
    >>> tq.set_progress(previous) is False
    True
    """
    global _setting
    if enabled is not None:
        enabled = checked_flag(enabled, "enabled")
    previous, _setting = _setting, enabled
    return previous


def progress_setting() -> bool | None:
    """The setting of :func:`set_progress` (``None``: automatic)."""
    return _setting


@contextlib.contextmanager
def progress_choice(enabled: bool | None) -> Iterator[None]:
    """Within the block, every :func:`progress` that is not given ``enabled`` follows
    ``enabled`` (a public call's ``progress=`` argument, passed down to the loops it runs;
    ``None``: no choice, the block follows :func:`set_progress`).

    Examples
    --------
    >>> from tyxonq.numerics.progress import progress, progress_choice
    >>> with progress_choice(False), progress(3, "steps") as report:
    ...     report.shown
    False
    """
    if enabled is None:
        yield
        return
    token = _call_choice.set(checked_flag(enabled, "progress"))
    try:
        yield
    finally:
        _call_choice.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


def takes_progress(function: F) -> F:
    """``function`` with one more keyword-only argument, ``progress`` (``None``, ``True`` or
    ``False``), that every bar it opens follows (:func:`progress_choice`); it shows in the
    signature.

    Examples
    --------
    >>> @takes_progress
    ... def work(steps: int) -> bool:
    ...     with progress(steps, "work") as report:
    ...         return report.shown
    >>> work(3, progress=False)
    False
    >>> "progress" in inspect.signature(work).parameters
    True
    """
    @functools.wraps(function)
    def wrapped(*args: Any, progress: bool | None = None, **kwargs: Any) -> Any:
        with progress_choice(progress):
            return function(*args, **kwargs)

    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    extra = inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="bool | None")
    position = next((i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.VAR_KEYWORD),
                    len(parameters))
    wrapped.__signature__ = signature.replace(parameters=parameters[:position] + [extra]  # type: ignore[attr-defined]
                                              + parameters[position:])
    return wrapped  # type: ignore[return-value]


def _interactive() -> bool:
    stream = sys.stderr
    return bool(getattr(stream, "isatty", None)) and stream.isatty()


def _rank() -> int:
    from .distributed import communicator

    return communicator().rank


class Progress:
    """What a computation reports through: :meth:`advance` after each step (a no-op when no bar
    is drawn).

    Attributes
    ----------
    shown : bool
        Whether a bar is drawn for this computation.
    """

    def __init__(self, bar: Any) -> None:
        self._bar = bar
        self.shown = bar is not None

    def advance(self, steps: int = 1, **status: Any) -> None:
        """``steps`` more done; ``status`` (such as ``energy=-1.2``) shown after the count."""
        if self._bar is None:
            return
        if status:
            self._bar.set_postfix({key: (f"{value:.6g}" if isinstance(value, float) else value)
                                   for key, value in status.items()}, refresh=False)
        self._bar.update(steps)

    def grow(self, steps: int) -> None:
        """``steps`` more to do than the total announced (work found on the way, such as the
        branches a measurement splits off)."""
        if self._bar is None or self._bar.total is None:
            return
        self._bar.total += steps
        self._bar.refresh()


@contextlib.contextmanager
def progress(total: int | None, description: str, enabled: bool | None = None,
             unit: str = "it") -> Iterator[Progress]:
    """A :class:`Progress` for a computation of ``total`` steps (``None``: unknown), drawn as
    the module says (``enabled``: a call's ``progress=`` argument, ``None`` to follow
    :func:`set_progress`).

    Examples
    --------
    >>> from tyxonq.numerics.progress import progress
    >>> with progress(3, "steps", enabled=False) as report:
    ...     for _ in range(3):
    ...         report.advance(value=0.5)
    >>> report.shown
    False
    """
    if enabled is not None:
        enabled = checked_flag(enabled, "progress")
    if enabled is None:
        enabled = _call_choice.get()
    choice = _setting if enabled is None else enabled
    automatic = choice is None
    wanted = (_interactive() if automatic else choice) and _rank() == 0
    delay = THRESHOLD_SECONDS if automatic else 0.0
    bar = _bar(total, description, unit, delay, automatic) if wanted else None
    try:
        yield Progress(bar)
    finally:
        if bar is not None:
            bar.close()


def _bar(total: int | None, description: str, unit: str, delay: float, automatic: bool) -> Any:
    global _warned_missing
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if not automatic and not _warned_missing:
            _warned_missing = True
            warnings.warn("progress bars need tqdm: pip install tqdm (nothing is drawn without it)",
                          RuntimeWarning, stacklevel=4)
        return None
    return tqdm(total=total, desc=description, unit=unit, delay=delay, leave=False, file=sys.stderr)
