"""Noise: noise models and Monte-Carlo trajectories over the quantum channels of
:mod:`tyxonq.operators.channels` (also ``tq.channels`` and ``tq.noise.channels``)."""

from __future__ import annotations

from ..operators import channels
from .model import NoiseModel
from .trajectories import trajectory_expectation

__all__ = ["channels", "NoiseModel", "trajectory_expectation"]
