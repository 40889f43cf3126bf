"""``tq.evolve``: the states ``exp(-i H t)|psi>`` (or ``exp(-H tau)|psi>`` normalised) at a list of
times, by Krylov projection, Taylor series or, for matrix-product states, TEBD.

``H`` is applied as a Pauli sum (:mod:`tyxonq.operators.pauli_action`): never a ``2^n x 2^n``
matrix. Everything runs on the active backend; with PyTorch or JAX, gradients reach the times,
the coefficients (``coefficients=``) and the parameters of an initial circuit.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from ..circuit import DMCircuit, MPSCircuit
from ..circuit.simulator import SimulatorBase
from ..numerics import get_backend
from ..numerics.arguments import checked_state_vector
from ..numerics.dual import TracingError
from ..numerics.host import host_values
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.pauli_action import PauliStructure
from ..operators.state_expectation import pauli_sum_expectation
from .adjoint import is_traced_input, traced_evolution
from .krylov import krylov_propagate
from .outputs import collected
from .taylor import taylor_propagate
from .tebd import tebd_propagate
from .time_dependent import TimeDependentHamiltonian, magnus_propagate

__all__ = ["evolve", "METHODS"]

METHODS = ("krylov", "expm", "taylor", "tebd")


def evolve(hamiltonian: Any, initial: Any, times: Any, method: str = "krylov", *,
           imaginary: bool = False, observables: Any = None, callback: Callable[[Any], Any] | None = None,
           coefficients: Any = None, tol: float | None = None, krylov_dim: int | None = None,
           steps: int | None = None, order: int | None = None, dt: float | None = None,
           max_bond: int | None = None, cutoff: float | None = None) -> Any:
    """The state ``exp(-i H t)|psi_0>`` at each time ``t`` of ``times``.

    Parameters
    ----------
    hamiltonian : PauliSum or TimeDependentHamiltonian
        ``H``; a :class:`~tyxonq.evolution.TimeDependentHamiltonian` ``sum_k f_k(t) P_k`` is
        integrated by the fourth-order commutator-free Magnus scheme in steps of at most ``dt``.
    initial : Circuit, MPSCircuit or state vector
        ``|psi_0>``: a circuit's state (its parameters differentiable), or ``2^n`` amplitudes;
        an :class:`~tyxonq.MPSCircuit` with ``method="tebd"``.
    times : sequence of float, or a 1-d real backend array
        Non-decreasing, from 0 (``times[0] > 0`` is fine: nothing is emitted at 0 then).
    method : {"krylov", "expm", "taylor", "tebd"}
        ``"krylov"``: restarted Krylov projection (Lanczos for a Hermitian ``H``, Arnoldi
        otherwise) with error control (``tol`` on the final state's 2-norm; ``krylov_dim``
        basis vectors, by default :data:`KRYLOV_DIM`, fewer where the basis would take more
        than a quarter of the backend's free memory); ``"expm"``: Al-Mohy and Higham's
        truncated Taylor ``expm_multiply``; ``"taylor"``: a Taylor scheme fixed in advance
        (``steps`` per output interval and ``order``, by default from the norm of ``H`` and
        ``tol``), whose reverse mode is exact and which runs under ``jit`` when both are given;
        ``"tebd"``: Trotter splitting on a matrix-product state
        (:func:`~tyxonq.evolution.tebd.tebd_propagate`: ``dt``, ``order`` 2 or 4,
        ``max_bond``, ``cutoff``).
    imaginary : bool
        ``exp(-H tau)|psi_0>``, normalised: relaxes towards the ground state.
    observables : PauliSum or sequence of them, optional
        Return their real expectation values at each time, shape ``(times, observables)``.
    callback : callable, optional
        Return ``callback(state)`` at each time (stacked) instead; ``state`` is the backend
        vector, or for TEBD an :class:`~tyxonq.MPSCircuit` view of the current state, valid
        during the call (return values from it, or ``view.copy()``).
    coefficients : backend array, optional
        The coefficients of ``H`` (in the order of ``list(hamiltonian)``) instead of its own,
        so gradients reach them: by autograd on PyTorch and JAX, and on NumPy (traced times and
        coefficients, with ``observables=``) by the adjoint identities of
        :mod:`tyxonq.evolution.adjoint`.

    Returns
    -------
    The states ``(len(times), 2^n)`` (a list of :class:`~tyxonq.MPSCircuit` for TEBD), or the
    observables' values ``(len(times), len(observables))``, or the callback's values (stacked
    when they are arrays or numbers, else a list).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> h = tq.hamiltonians.heisenberg(6)
    >>> neel = tq.Circuit(6).x(0).x(2).x(4)
    >>> states = tq.evolve(h, neel, [0.5, 1.0])
    >>> reference = tq.evolve(h, neel, [0.5, 1.0], method="expm")
    >>> states.shape, bool(np.allclose(states, reference, atol=1e-10))
    ((2, 64), True)
    >>> ground = tq.evolve(h, neel, [20.0], imaginary=True, observables=h)
    >>> round(float(ground[0, 0]), 6) == round(h.ground_energy(), 6)
    True
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} must be one of {METHODS}")
    K = get_backend()
    observables = _checked_observables(observables, _qubits(hamiltonian))
    if method == "tebd":
        return tebd_propagate(K, hamiltonian, initial, times, observables=observables, callback=callback,
                              imaginary=imaginary, dt=dt, order=order or 2, max_bond=max_bond,
                              cutoff=cutoff, coefficients=coefficients)
    if isinstance(initial, MPSCircuit):
        raise ValueError("an MPSCircuit evolves by method='tebd'; for the other methods give a "
                         "tq.Circuit or a state vector")
    n = _qubits(hamiltonian)
    state = _initial_state(K, initial, n)
    tol = _tolerance(K, tol)
    if is_traced_input(times) or is_traced_input(coefficients):  # tq.value_and_grad on NumPy
        if imaginary or not isinstance(hamiltonian, PauliSum):
            raise TracingError("exact gradients without autograd follow real-time evolution by a "
                               "PauliSum; use the pytorch or jax backend here")
        run = _exponentiator(K, method, krylov_dim, tol, steps, order)
        return traced_evolution(
            K, hamiltonian, state, times, coefficients, observables,
            lambda apply, psi, at, scale, norm, emit: run(apply, psi, at, at, scale, norm, False, emit))
    times_host, time_values = _checked_times(K, times, method, steps, order)
    outputs: list[Any] = []

    def emit(vector: Any) -> None:
        if callback is not None:
            outputs.append(callback(vector))
        elif observables is not None:
            outputs.append(K.stack([K.real(pauli_sum_expectation(K, vector, o)) for o in observables]))
        else:
            outputs.append(vector)

    scale = -1.0 if imaginary else -1j
    if isinstance(hamiltonian, TimeDependentHamiltonian):
        if coefficients is not None:
            raise ValueError("coefficients= applies to a PauliSum; a TimeDependentHamiltonian's "
                             "coefficient functions carry their own parameters")
        magnus_propagate(K, hamiltonian, state, times_host, scale, tol, dt, imaginary,
                         _exponentiator(K, method, krylov_dim, tol, steps, order), emit)
    else:
        structure, own = PauliStructure.of(hamiltonian)
        values = own if coefficients is None else coefficients
        bound = structure.bind(K, values, K.dtype_name_of(state))
        norm = structure.one_norm(K, values)
        hermitian = hamiltonian.is_hermitian() and (coefficients is None or not K.is_complex(coefficients))
        _exponentiator(K, method, krylov_dim, tol, steps, order)(
            bound.apply, state, times_host, time_values, scale, norm, imaginary, emit, hermitian)
    return collected(K, outputs)


#: the default Krylov basis size: larger bases take longer steps (fewer products per unit time
#: for Lanczos, whose steps cost the same at any size), up to this
KRYLOV_DIM = 150


def _krylov_dimension(K: ArrayBackend, state: Any) -> int:
    """:data:`KRYLOV_DIM`, or fewer (at least 8) where the basis and its conjugates (kept for the
    inner products) would take more than a quarter of the backend's free memory."""
    vector = 2 * int(np.prod(K.shape(state))) * np.dtype(K.dtype_name_of(state)).itemsize
    try:
        fits = int(K.available_memory() // 4 // vector)
    except Exception:  # a backend that cannot tell: the default
        return KRYLOV_DIM
    return max(8, min(KRYLOV_DIM, fits))


def _exponentiator(K: ArrayBackend, method: str, dimension: int, tol: float, steps: int | None,
                   order: int | None) -> Callable[..., None]:
    """``run(apply, state, times, time_values, scale, norm, normalise, emit)`` for ``method``."""
    if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, numbers.Integral)
                                  or dimension < 2):
        raise ValueError(f"krylov_dim={dimension!r} must be an int >= 2 (or None: chosen from memory)")

    def run(apply: Callable, state: Any, times: list[float] | None, values: list[Any], scale: complex,
            norm: float, normalise: bool, emit: Callable, hermitian: bool = True) -> None:
        if method == "krylov":
            size = dimension or _krylov_dimension(K, state)
            krylov_propagate(K, apply, state, times, values, scale, tol, int(size), norm,
                             normalise, emit, hermitian)
        else:
            taylor_propagate(K, apply, state, times, values, scale, norm, tol, steps, order,
                             adaptive=method == "expm", normalise=normalise, emit=emit)

    return run


# -- inputs ---------------------------------------------------------------------------------
def _qubits(hamiltonian: Any) -> int:
    if isinstance(hamiltonian, (PauliSum, TimeDependentHamiltonian)):
        return hamiltonian.n_qubits
    raise TypeError(f"hamiltonian must be a tq.PauliSum or a tq.evolution.TimeDependentHamiltonian; "
                    f"got {type(hamiltonian).__name__}")


def _initial_state(K: ArrayBackend, initial: Any, n: int) -> Any:
    if isinstance(initial, DMCircuit):
        raise ValueError("evolve propagates pure states: give a tq.Circuit or a state vector, not a "
                         "DMCircuit")
    if isinstance(initial, SimulatorBase):
        if initial.num_qubits != n:
            raise ValueError(f"initial has {initial.num_qubits} qubits; the hamiltonian acts on {n}")
        return initial.state()
    state = checked_state_vector(K, initial, n, "initial")
    return K.asarray(state, K.precision) if not K.is_complex(K.asarray(state)) else K.asarray(state)


def _checked_times(K: ArrayBackend, times: Any, method: str, steps: Any,
                   order: Any) -> tuple[list[float] | None, list[Any]]:
    """``(host values or None under jit, values)`` of the output times, checked."""
    if isinstance(times, numbers.Real) and not isinstance(times, bool):
        times = [times]
    if K.is_array(times) and not isinstance(times, np.ndarray):
        if len(K.shape(times)) != 1:
            raise ValueError(f"times must be one-dimensional; got shape {tuple(K.shape(times))}")
        values = [times[k] for k in range(K.shape(times)[0])]
    else:
        if isinstance(times, np.ndarray) and times.ndim != 1:
            raise ValueError(f"times must be one-dimensional; got shape {times.shape}")
        try:
            values = list(times)
        except TypeError:
            raise TypeError(f"times must be a sequence of real numbers; got {times!r}") from None
    host = []
    for value in values:
        if K.is_array(value) and not isinstance(value, np.ndarray):
            try:
                host.append(float(np.real(host_values(K, value))))
            except Exception:  # traced under jit: not readable
                if method != "taylor" or steps is None or order is None:
                    raise ValueError("times that cannot be read (inside jit) need method='taylor' "
                                     "with steps= and order= given") from None
                return None, values
        else:
            try:
                host.append(float(value))
            except (TypeError, ValueError):
                raise TypeError(f"times must be a sequence of real numbers; got {times!r}") from None
    if not host:
        raise ValueError("times must hold at least one time")
    if not all(np.isfinite(host)) or host[0] < 0 or any(b < a for a, b in zip(host, host[1:])):
        raise ValueError(f"times must be finite, non-negative and non-decreasing; got {host}")
    return host, values


def _tolerance(K: ArrayBackend, tol: Any) -> float:
    if tol is None:
        return 1e-12 if K.precision == "complex128" else 1e-6
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < tol < 1:
        raise ValueError(f"tol={tol!r} must be a number in (0, 1)")
    return float(tol)


def _checked_observables(observables: Any, n: int) -> list[PauliSum] | None:
    if observables is None:
        return None
    items = [observables] if isinstance(observables, PauliSum) else list(observables)
    for item in items:
        if not isinstance(item, PauliSum) or item.n_qubits != n:
            raise ValueError(f"observables must be tq.PauliSum operators on {n} qubits; got {item!r}")
    return items

