"""Exceptions raised by the numerics layer.

Each says what went wrong and what to do about it.
"""

from __future__ import annotations

__all__ = [
    "BackendNotInstalledError",
    "DeviceNotAvailableError",
    "DimensionLimitError",
    "VectorizationError",
]


class BackendNotInstalledError(ImportError):
    """A known backend was requested but its array library cannot be imported.

    The message carries the pip command that installs it.
    """


class DeviceNotAvailableError(RuntimeError):
    """A device (e.g. ``"cuda"``) was requested that this machine does not have."""


class DimensionLimitError(ValueError):
    """An operation would build an array with more dimensions than the backend supports."""


class VectorizationError(RuntimeError):
    """Native vectorisation was demanded (``policy="force"``) but is unavailable or failed."""
