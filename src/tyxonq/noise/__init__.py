"""Noise: quantum channels (:mod:`tyxonq.channels`), noise models, and Monte-Carlo trajectories."""

from __future__ import annotations

from . import channels

__all__ = ["channels"]
