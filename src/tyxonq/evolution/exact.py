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
from ..numerics.arguments import checked_choice, checked_state_vector
from ..numerics.dual import TracingError
from ..numerics.progress import progress, takes_progress
from ..numerics.protocol import ArrayBackend
from ..operators.pauli import PauliSum
from ..operators.pauli_action import PauliStructure, pauli_sum_expectation
from .adjoint import is_traced_input, traced_evolution
from .inputs import (
    checked_callback,
    checked_flag,
    checked_observables,
    checked_optional_count,
    checked_times,
    zero_if_empty,
)
from .krylov import krylov_propagate
from .outputs import Recorder
from .taylor import taylor_propagate
from .tebd import tebd_propagate
from .time_dependent import TimeDependentHamiltonian, magnus_propagate

__all__ = ["evolve", "METHODS"]

METHODS = ("krylov", "expm", "taylor", "tebd")


@takes_progress
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
        integrated by the fourth-order commutator-free Magnus scheme in steps of at most ``dt``
        (``ceil(interval / dt)`` steps per output interval, at least one). An empty sum
        (``tq.PauliSum([], n_qubits=n)``, or one whose terms cancelled) is ``H = 0``: every
        method returns the initial state at every time.
    initial : Circuit, MPSCircuit or state vector
        ``|psi_0>``: a circuit's state (its parameters differentiable), or ``2^n`` amplitudes;
        an :class:`~tyxonq.MPSCircuit` with ``method="tebd"``.
    times : sequence of real numbers, or a 1-d real backend array
        Finite, non-decreasing, from 0 (``times[0] > 0`` is fine: nothing is emitted at 0 then).
    method : {"krylov", "expm", "taylor", "tebd"}
        ``"krylov"``: restarted Krylov projection (Lanczos for a Hermitian ``H``, Arnoldi
        otherwise) with error control (``tol`` on the final state's 2-norm; ``krylov_dim``
        basis vectors, by default :data:`KRYLOV_DIM`, fewer where the basis would take more
        than a quarter of the backend's free memory); ``"expm"``: Al-Mohy and Higham's
        truncated Taylor ``expm_multiply``; ``"taylor"``: a Taylor scheme fixed in advance
        (``steps`` per output interval and ``order``, by default from the norm of ``H`` and
        ``tol``), whose reverse mode is exact and which runs under ``jit`` when both are given;
        ``"tebd"``: Trotter splitting on a matrix-product state
        (:func:`~tyxonq.evolution.tebd.tebd_propagate`: ``dt``, ``order`` 1, 2 or 4 (default
        2), ``max_bond``, ``cutoff``). A schedule of more than
        :data:`~tyxonq.evolution.inputs.MAX_STEPS` steps is refused (``dt`` or ``steps`` far
        too small, or times far too long for the norm of ``H``).
    steps, order, krylov_dim, max_bond : int, optional
        Counts: ``None`` (the default) lets the method choose; given, each must be a positive
        int (``krylov_dim`` at least 2); ``0``, negative or non-integer counts are refused.
        ``steps`` and ``order`` are read by ``"taylor"``, by ``"expm"`` when both are given
        (they fix its scheme) and ``order`` by ``"tebd"``; ``"krylov"`` reads neither. ``dt``
        is read by TEBD and time-dependent Hamiltonians only.
    imaginary : bool
        ``exp(-H tau)|psi_0>``, normalised: relaxes towards the ground state.
    observables : PauliSum or sequence of them, optional
        Return their real expectation values at each time, shape ``(times, observables)``
        (a sequence must hold at least one).
    callback : callable, optional
        Return ``callback(state)`` at each time (stacked) instead; ``state`` is a copy of the
        backend vector (the callback may change it: the propagation does not see it), or for
        TEBD an :class:`~tyxonq.MPSCircuit` view of the current state, valid during the call
        (return values from it, or ``view.copy()``). With ``observables=`` too, both are
        returned, as a pair.
    coefficients : backend array, optional
        The coefficients of ``H`` (in the order of ``list(hamiltonian)``) instead of its own,
        so gradients reach them: by autograd on PyTorch and JAX, and on NumPy (traced times and
        coefficients, with ``observables=``) by the adjoint identities of
        :mod:`tyxonq.evolution.adjoint`.

    Returns
    -------
    The states ``(len(times), 2^n)`` (a list of :class:`~tyxonq.MPSCircuit` for TEBD), or the
    observables' values ``(len(times), len(observables))``, or the callback's values (stacked
    when they are arrays or numbers, else a list), or with both ``observables=`` and
    ``callback=``, the pair ``(observables' values, callback's values)``.

    Raises
    ------
    TypeError, ValueError
        Before any work, for a bad argument, naming it: times that are not finite, non-negative
        and non-decreasing real numbers, counts that are not positive ints, a missing or
        non-finite ``dt`` where it is read, ``observables=[]``, a callback that is not callable.

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
    checked_choice(method, METHODS, "method")
    n = _qubits(hamiltonian)
    imaginary = checked_flag(imaginary, "imaginary")
    observables = checked_observables(observables, n)
    callback = checked_callback(callback)
    steps, order, krylov_dim, max_bond = _checked_counts(steps, order, krylov_dim, max_bond)
    K = get_backend()
    if method == "tebd":
        return tebd_propagate(K, hamiltonian, initial, times, observables=observables, callback=callback,
                              imaginary=imaginary, dt=dt, order=2 if order is None else order,
                              max_bond=max_bond, cutoff=cutoff, coefficients=coefficients)
    if isinstance(initial, MPSCircuit):
        raise ValueError("an MPSCircuit evolves by method='tebd'; for the other methods give a "
                         "tq.Circuit or a state vector")
    hamiltonian, coefficients = zero_if_empty(K, hamiltonian, coefficients)
    tol = _tolerance(K, tol)
    run = _exponentiator(K, method, krylov_dim, tol, steps, order)
    if is_traced_input(times) or is_traced_input(coefficients):  # tq.value_and_grad on NumPy
        state = _initial_state(K, initial, n)
        return _traced(K, hamiltonian, state, times, coefficients, observables, callback, imaginary, run)
    traced = None if method == "taylor" and steps is not None and order is not None else _TRACED_TIMES
    times_host, time_values = checked_times(K, times, traced)
    state = _initial_state(K, initial, n)
    recorder = Recorder(K, observables, callback)
    if isinstance(hamiltonian, TimeDependentHamiltonian) and coefficients is not None:
        raise ValueError("coefficients= applies to a PauliSum; a TimeDependentHamiltonian's "
                         "coefficient functions carry their own parameters")
    readable = times_host is not None  # times traced inside jit: no bar, nothing read
    reached = iter(times_host if readable else ())
    with progress(len(time_values), "evolve", enabled=None if readable else False, unit="time") as report:

        def emit(vector: Any) -> None:  # the callback gets a copy: the propagation goes on from vector
            recorder.record(lambda o: pauli_sum_expectation(K, vector, o), lambda: K.array(vector),
                            lambda: vector)
            report.advance(t=next(reached, None))

        if isinstance(hamiltonian, TimeDependentHamiltonian):
            magnus_propagate(K, hamiltonian, state, times_host, -1.0 if imaginary else -1j, tol, dt,
                             imaginary, run, emit)
        else:
            _propagate(K, hamiltonian, coefficients, state, times_host, time_values, imaginary, run, emit)
    return recorder.result()


_TRACED_TIMES = "times that cannot be read (inside jit) need method='taylor' with steps= and order= given"


def _propagate(K: ArrayBackend, hamiltonian: PauliSum, coefficients: Any, state: Any,
               times: list[float] | None, time_values: list[Any], imaginary: bool, run: Callable,
               emit: Callable[[Any], None]) -> None:
    """``run`` on ``H`` as a bound Pauli sum (its own coefficients, or ``coefficients``)."""
    structure, own = PauliStructure.of(hamiltonian)
    values = own if coefficients is None else coefficients
    bound = structure.bind(K, values, K.dtype_name_of(state))
    norm = structure.one_norm(K, values)
    hermitian = hamiltonian.is_hermitian() and (coefficients is None or not K.is_complex(coefficients))
    if times is not None and not imaginary:
        _check_phases(norm, times[-1])
    run(bound.apply, state, times, time_values, -1.0 if imaginary else -1j, norm, imaginary, emit, hermitian)


def _checked_counts(steps: Any, order: Any, krylov_dim: Any,
                    max_bond: Any) -> tuple[int | None, int | None, int | None, int | None]:
    """The count arguments, each ``None`` (chosen) or an int: ``krylov_dim`` at least 2, the
    others at least 1 (whichever method reads them)."""
    return (checked_optional_count(steps, "steps"), checked_optional_count(order, "order"),
            checked_optional_count(krylov_dim, "krylov_dim", minimum=2),
            checked_optional_count(max_bond, "max_bond"))


def _traced(K: ArrayBackend, hamiltonian: Any, state: Any, times: Any, coefficients: Any,
            observables: list[PauliSum] | None, callback: Any, imaginary: bool, run: Callable) -> Any:
    """Values and exact gradients of traced times and coefficients (NumPy, by the adjoint
    identities)."""
    if imaginary or not isinstance(hamiltonian, PauliSum):
        raise TracingError("exact gradients without autograd follow real-time evolution by a "
                           "PauliSum; use the pytorch or jax backend here")
    if callback is not None:
        raise TracingError("callback= cannot be differentiated without autograd (traced times or "
                           "coefficients on NumPy): use observables=, or the pytorch or jax backend")
    return traced_evolution(
        K, hamiltonian, state, times, coefficients, observables,
        lambda apply, psi, at, scale, norm, emit: run(apply, psi, at, at, scale, norm, False, emit))


#: ``||H|| t`` beyond which double precision keeps less than a tenth of a radian of the phases
#: ``exp(-i E t)``: the states would be noise
PHASE_LIMIT = 0.1 / float(np.finfo(float).eps)


def _check_phases(norm: float, time: float) -> None:
    """Refuse real times so long for ``||H|| <= norm`` that no digit of the phases survives."""
    if norm * time > PHASE_LIMIT:
        raise ValueError(f"times: t={time!r} with ||H|| <= {norm:.3g} gives phases ||H|| t = "
                         f"{norm * time:.3g}, beyond {PHASE_LIMIT:.2g}, where double precision keeps no "
                         "digit of them; the states would be noise")


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


def _tolerance(K: ArrayBackend, tol: Any) -> float:
    if tol is None:
        return 1e-12 if K.precision == "complex128" else 1e-6
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < tol < 1:
        raise ValueError(f"tol={tol!r} must be a number in (0, 1)")
    return float(tol)
