"""PennyLane devices on tyxonq: ``qml.device("tyxonq.qubit")`` and ``qml.device("tyxonq.mixed")``.

Registered through the ``pennylane.plugins`` entry points; the one-line change from PennyLane's
own simulator is the device name. See ``docs-ng/integrations.md``.

Examples
--------
>>> import pennylane as qml
>>> qml.device("tyxonq.qubit", wires=3).name
'tyxonq.qubit'
"""

from __future__ import annotations

from .device import MixedDevice, QubitDevice

__all__ = ["QubitDevice", "MixedDevice"]
