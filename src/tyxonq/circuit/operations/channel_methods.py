"""The channel methods every circuit has: one per constructor of :mod:`tyxonq.channels`, and
:meth:`ChannelMethods.channel` for any channel. Each appends one channel operation and returns the
circuit, for chaining, as the gate methods do."""

from __future__ import annotations

from typing import Any, TypeVar

from ...operators import channels

__all__ = ["ChannelMethods"]

C = TypeVar("C", bound="ChannelMethods")


class ChannelMethods:
    """Mixin: the circuit implements ``_add_channel(channel, qubits)``."""

    def _add_channel(self: C, channel: Any, qubits: tuple) -> C:  # pragma: no cover - abstract
        raise NotImplementedError

    def channel(self: C, channel: channels.Channel, *qubits: int) -> C:
        """Apply any :class:`~tyxonq.channels.Channel` to ``qubits`` (first = most significant).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.DMCircuit(2).x(0).channel(tq.channels.amplitude_damping(1.0), 0)
        >>> round(float(c.expectation_ps(z=[0])), 12)
        1.0
        """
        return self._add_channel(channel, qubits)

    def depolarizing(self: C, *qubits: int, p: Any) -> C:
        """Depolarising noise on one qubit, or on two (the 15 two-qubit Paulis):
        :func:`tyxonq.channels.depolarizing`."""
        return self._add_channel(channels.depolarizing(p, num_qubits=len(qubits) or 1), qubits)

    def pauli(self: C, qubit: int, px: Any = 0.0, py: Any = 0.0, pz: Any = 0.0) -> C:
        """The Pauli channel: :func:`tyxonq.channels.pauli`."""
        return self._add_channel(channels.pauli(px, py, pz), (qubit,))

    def bit_flip(self: C, qubit: int, p: Any) -> C:
        """X with probability ``p``: :func:`tyxonq.channels.bit_flip`."""
        return self._add_channel(channels.bit_flip(p), (qubit,))

    def phase_flip(self: C, qubit: int, p: Any) -> C:
        """Z with probability ``p``: :func:`tyxonq.channels.phase_flip`."""
        return self._add_channel(channels.phase_flip(p), (qubit,))

    def amplitude_damping(self: C, qubit: int, gamma: Any, excited_population: Any = 0) -> C:
        """Energy relaxation: :func:`tyxonq.channels.amplitude_damping`."""
        return self._add_channel(channels.amplitude_damping(gamma, excited_population), (qubit,))

    def phase_damping(self: C, qubit: int, gamma: Any) -> C:
        """Pure dephasing: :func:`tyxonq.channels.phase_damping`."""
        return self._add_channel(channels.phase_damping(gamma), (qubit,))

    def thermal_relaxation(self: C, qubit: int, t1: Any, t2: Any, time: Any,
                           excited_population: Any = 0) -> C:
        """T1/T2 relaxation over ``time``: :func:`tyxonq.channels.thermal_relaxation`."""
        return self._add_channel(channels.thermal_relaxation(t1, t2, time, excited_population),
                                 (qubit,))
