"""Time evolution: product formulas as circuits, exact evolution of states, TEBD.

* :func:`trotter`, :func:`qdrift`: ``exp(-i H t)`` as circuits of Pauli rotations, with their
  error bounds :func:`trotter_error`, :func:`qdrift_error`;
* :func:`evolve` (also ``tq.evolve``): the states ``exp(-i H t)|psi>`` at many times by Krylov
  projection, Taylor series (``expm_multiply``, or a fixed scheme whose reverse mode is exact),
  imaginary time, time-dependent Hamiltonians (:class:`TimeDependentHamiltonian`, fourth-order
  Magnus), and TEBD on matrix-product states.

Examples
--------
>>> import tyxonq as tq
>>> h = tq.hamiltonians.tfim(4)
>>> circuit = tq.evolution.trotter(h, 1.0, steps=10, order=2)
>>> exact = tq.evolve(h, tq.Circuit(4), [1.0])[0]
>>> bool(abs(complex((exact.conj() * circuit.state()).sum())) > 0.999)
True
"""

from __future__ import annotations

from .exact import METHODS, evolve
from .product_formulas import qdrift, qdrift_error, suzuki_factors, trotter, trotter_error
from .tebd import local_terms
from .time_dependent import TimeDependentHamiltonian

__all__ = ["evolve", "METHODS", "trotter", "qdrift", "trotter_error", "qdrift_error", "suzuki_factors",
           "TimeDependentHamiltonian", "local_terms"]
