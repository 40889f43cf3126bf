"""The one way a simulator refuses a result: :class:`UnsupportedResult` and its two kinds.

Every simulator answers the results :class:`~tyxonq.circuit.simulator.SimulatorBase` declares, or
raises :class:`UnsupportedResult` naming the simulator or conversion that gives the result. It is
a ``ValueError`` (the question cannot be answered for this input) and a ``NotImplementedError``
(this simulator does not implement it), so code written against either keeps working.
"""

from __future__ import annotations

__all__ = ["UnsupportedResult", "MixedStateError", "NoisyCircuitError"]


class UnsupportedResult(ValueError, NotImplementedError):
    """A result this simulator does not give for this circuit; the message names what does.

    Examples
    --------
    >>> import tyxonq as tq
    >>> try:
    ...     tq.DMCircuit(1).amplitude("0")
    ... except tq.UnsupportedResult as refusal:
    ...     print("tq.Circuit" in str(refusal))
    True
    """


class MixedStateError(UnsupportedResult):
    """A pure-state result (a state vector, an amplitude) of a circuit whose mid-circuit
    measurements or resets mix its state."""


class NoisyCircuitError(UnsupportedResult):
    """A pure-state result of a circuit that holds channels (its state is mixed)."""
