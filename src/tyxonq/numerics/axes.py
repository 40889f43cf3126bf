"""The batch axis of each argument (``in_axes``) or result (``out_axes``) of a vectorised function."""

from __future__ import annotations

from typing import Any

__all__ = ["per_argument_axes"]


def per_argument_axes(in_axes: Any, n_args: int) -> tuple[int | None, ...]:
    """One axis (or ``None``: broadcast) per argument, from an int, ``None`` or a sequence.

    Examples
    --------
    >>> per_argument_axes(0, 2), per_argument_axes((0, None), 2)
    ((0, 0), (0, None))
    """
    if in_axes is None or isinstance(in_axes, int):
        return (in_axes,) * n_args
    if isinstance(in_axes, (tuple, list)) and len(in_axes) == n_args:
        return tuple(in_axes)
    raise ValueError(
        f"in_axes={in_axes!r} must be an int, None, or a tuple with one entry per positional "
        f"argument ({n_args} given)"
    )
