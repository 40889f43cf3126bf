"""Noise: quantum channels (:mod:`tyxonq.channels`), noise models, and Monte-Carlo trajectories."""

from __future__ import annotations

from . import channels
from .model import NoiseModel
from .trajectories import trajectory_expectation

__all__ = ["channels", "NoiseModel", "trajectory_expectation"]
