"""Minimising variational objectives: Adam and SGD in backend arrays, and scipy.optimize's methods.

``tq.optimize.minimize(objective, x0, method=...)`` differentiates the objective with
:func:`tyxonq.value_and_grad` (autograd on PyTorch and JAX, exact adjoint gradients on NumPy and
cuPyNumeric; compiled with ``jax.jit`` on JAX), records every iterate and energy, shows a
progress bar on long runs (:func:`tyxonq.set_progress`; ``progress=False`` turns it off) and stops when
the energy changes by less than ``tol`` (or the method's own criterion). On PyTorch's CPU tensors
(and JAX uncompiled) the objective is evaluated on the NumPy host twin in the backend's place
where it runs there (:func:`~tyxonq.numerics.host_twin.host_first`): the same values without an
autograd graph.

Methods: ``"adam"`` and ``"sgd"`` (one update rule, the arithmetic of ``torch.optim.Adam``:
compiled together with the gradient on JAX, on the host twin's arrays elsewhere, NumPy's for CPU
tensors; ``torch.optim.Adam`` itself would import ``torch._dynamo``, 1.8 s on a first run);
``"qng"``, the quantum natural
gradient (steps ``-lr (g + lam I)^-1 grad`` with the Fubini-Study metric ``g`` of the state a
``circuit`` function prepares, :func:`tyxonq.fubini_study_metric`); ``"newton"``, a trust-region
Newton method with the exact Hessian (:func:`tyxonq.hessian`; scipy's ``trust-exact``, which
does not climb to saddles or maxima as plain Newton steps do); and any
``scipy.optimize.minimize`` method (``"L-BFGS-B"``, ``"BFGS"``, ``"CG"``, ``"COBYLA"``,
``"Nelder-Mead"`` ...), which receive exact gradients when they use them.

Interrupted work keeps what it found: ``callback(result)`` sees the best point and the history
after every iteration (and may stop the run by returning ``True``), and an exception or
KeyboardInterrupt inside the objective ends the run with :class:`OptimizationInterrupted`,
whose ``result`` holds the best point, its value and the history so far.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .circuit.differentiation.tracing import CircuitFound, capturing_traced_circuits
from .geometry import APPROXIMATIONS, fubini_study_metric
from .gradients import GRADIENT_METHODS, hessian, value_and_grad
from .numerics import get_backend
from .numerics.arguments import checked_choice, checked_count, checked_flag
from .numerics.cache_registry import register_cache
from .numerics.host_twin import host_first
from .numerics.progress import progress as progress_report
from .numerics.protocol import ArrayBackend

__all__ = ["OptimizeResult", "minimize", "FIRST_ORDER_METHODS", "SECOND_ORDER_METHODS",
           "ObjectiveNotCompiledWarning", "OptimizationInterrupted"]

FIRST_ORDER_METHODS = ("adam", "sgd")
SECOND_ORDER_METHODS = ("qng", "newton")
#: scipy.optimize.minimize's methods of unconstrained minimisation, which minimize passes on
SCIPY_METHODS = ("l-bfgs-b", "bfgs", "cg", "newton-cg", "tnc", "slsqp", "trust-constr", "trust-ncg",
                 "trust-krylov", "trust-exact", "dogleg", "cobyla", "cobyqa", "nelder-mead", "powell")
METHODS = FIRST_ORDER_METHODS + SECOND_ORDER_METHODS + SCIPY_METHODS
_GRADIENT_FREE = {"cobyla", "cobyqa", "nelder-mead", "powell"}


@dataclass
class OptimizeResult:
    """Outcome of :func:`minimize`.

    Attributes
    ----------
    x : numpy.ndarray
        Best parameters found.
    fun : float
        Objective at ``x``.
    history_x, history_fun : list
        Every point the objective was evaluated at, and its value, in order (one per iteration
        for ``"adam"``/``"sgd"``; scipy methods also record their line-search points).
    nit : int
        Iterations performed.
    converged : bool
        Whether the stopping tolerance (or the scipy method's criterion) was met.
    message : str
        Why the run stopped.
    status : str
        ``"converged"``, ``"maxiter"`` (the budget ran out), ``"failed"`` (the scipy method
        reported failure), ``"stopped"`` (the callback returned ``True``) or ``"interrupted"``
        (an exception or KeyboardInterrupt; see :class:`OptimizationInterrupted`); ``"running"``
        while the run goes on.
    """

    x: np.ndarray
    fun: float
    history_x: list[np.ndarray] = field(default_factory=list)
    history_fun: list[float] = field(default_factory=list)
    nit: int = 0
    converged: bool = False
    message: str = ""
    status: str = "running"


class OptimizationInterrupted(Exception):
    """An exception or KeyboardInterrupt ended :func:`minimize`; ``result`` holds what the run
    found (its best point ``x`` and value ``fun``, the history, ``status="interrupted"``) and the
    original error is the ``__cause__``. Resume with ``minimize(objective, error.result.x, ...)``."""

    def __init__(self, result: OptimizeResult, cause: BaseException) -> None:
        best = "no point evaluated" if not result.history_fun else \
            f"best value {result.fun:.10g} after {len(result.history_fun)} evaluations, in .result.x"
        super().__init__(f"minimize was interrupted by {type(cause).__name__}"
                         f"{': ' + str(cause) if str(cause) else ''} ({best})")
        self.result = result


class _StopRequested(Exception):
    """The callback asked the run to stop."""


def minimize(objective: Callable[[Any], Any], x0: Any, method: str = "L-BFGS-B", *,
             maxiter: int = 500, tol: float = 1e-10, learning_rate: float = 0.05,
             gradient_method: str | None = None, progress: bool | None = None,
             jit: bool | None = None, options: dict[str, Any] | None = None,
             circuit: Callable[[Any], Any] | None = None, lam: float = 1e-3,
             approximation: str | None = None,
             callback: Callable[[OptimizeResult], Any] | None = None) -> OptimizeResult:
    """Minimise a real objective of one parameter array.

    Parameters
    ----------
    objective : callable
        ``objective(params) -> real scalar`` (e.g. an energy of circuits built from ``params``).
    x0 : array_like
        Initial parameters.
    method : str
        ``"adam"``, ``"sgd"``, ``"qng"``, ``"newton"``, or a ``scipy.optimize.minimize`` method
        name.
    maxiter : int
        Iteration budget (a positive int).
    tol : float
        Stop when the objective changes by less than ``tol`` between iterations (first-order
        methods); passed as ``tol`` to scipy. Non-negative and finite.
    learning_rate : float
        Step size of ``"adam"``/``"sgd"``/``"qng"`` (positive and finite; checked for every
        method).
    gradient_method : str, optional
        Passed to :func:`tyxonq.value_and_grad` (default: autograd or adjoint); one the backend
        can run, and only with a method that uses gradients.
    progress : bool, optional
        Show a progress bar (tqdm) with the energy: ``True`` from the start, ``False`` never; by
        default as :func:`tyxonq.set_progress` says (interactive sessions, past one second).
    jit : bool, optional
        Compile the objective, its gradient and (Adam/SGD) the whole update step with the
        backend's ``jit``, once per objective function. By default only where compiling is how
        the backend gets fast (JAX). An objective that cannot be traced runs uncompiled, with one
        :class:`ObjectiveNotCompiledWarning`.
    options : dict, optional
        Extra options for ``scipy.optimize.minimize`` (``"newton"`` included; not taken by
        ``"adam"``, ``"sgd"``, ``"qng"``).
    circuit : callable, optional
        ``"qng"``: ``circuit(params) -> tq.Circuit``, the state whose metric the steps follow
        (the objective's ansatz). Without it the objective is traced once to find the one
        circuit whose expectation values it takes; an objective of several circuits needs it.
    lam : float
        ``"qng"``: the regularisation added to the metric's diagonal (positive and finite, checked
        for every method; the metric is singular wherever a parameter does not move the state).
    approximation : {None, "block-diag", "diag"}
        ``"qng"``: the metric's approximation (:func:`tyxonq.fubini_study_metric`).

    ``circuit``, ``approximation``, ``options`` and ``gradient_method`` given to a method that
    does not use them are refused rather than ignored.
    callback : callable, optional
        ``callback(result)`` after every iteration, with the :class:`OptimizeResult` so far (best
        ``x`` and ``fun``, history, ``nit``): save progress there; returning ``True`` stops the run
        (``status="stopped"``).

    Raises
    ------
    TypeError, ValueError
        Before anything is evaluated, the same on every backend: an option of the wrong type or
        outside its range, naming it (``learning_rate=-1``, ``tol=nan``, ``progress="no"``, an
        ``x0`` that is empty, complex or not finite ...).
    OptimizationInterrupted
        When the objective (or the callback) raises, KeyboardInterrupt included, after at least
        one evaluation: its ``result`` keeps the best point, its value and the history so far
        (an error before any evaluation is raised as it is).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> energy = lambda t: tq.Circuit(1).ry(0, t[0]).expectation_ps(z=[0])
    >>> with tq.use_backend("numpy"):
    ...     result = tq.optimize.minimize(energy, np.array([0.3]), progress=False)
    >>> round(result.fun, 8), result.converged
    (-1.0, True)
    """
    method_name = _checked_method(objective, method, callback)
    maxiter, tol, learning_rate, lam = _checked_numbers(maxiter, tol, learning_rate, lam)
    progress = None if progress is None else checked_flag(progress, "progress")
    jit = None if jit is None else checked_flag(jit, "jit")
    K = get_backend()
    _check_method_options(K, method, method_name, gradient_method, options, circuit, approximation)
    x0 = _checked_x0(K, x0)
    metric = _checked_metric(objective, circuit, approximation) if method_name == "qng" else None
    result = OptimizeResult(x=x0.copy(), fun=math.inf)

    def iteration_done() -> None:
        """After every iteration: the user's callback, which may stop the run."""
        if callback is not None and callback(result) is True:
            raise _StopRequested

    try:
        run = _runner(K, objective, x0, method, method_name, maxiter, tol, learning_rate, gradient_method,
                      progress, jit, options, metric, lam)
        run(result, iteration_done)
    except _StopRequested:
        result.converged, result.status = False, "stopped"
        result.message = f"stopped by the callback after {result.nit} iterations"
    except (Exception, KeyboardInterrupt) as error:
        if not result.history_fun:  # nothing found yet to keep: the error as it is
            raise
        result.converged, result.status = False, "interrupted"
        result.message = f"interrupted by {type(error).__name__} after {len(result.history_fun)} evaluations"
        raise OptimizationInterrupted(result, error) from error
    return result


def _checked_method(objective: Any, method: Any, callback: Any) -> str:
    """The method's lower-case name, once ``objective``, ``method`` and ``callback`` are checked."""
    if not callable(objective):
        raise TypeError(f"objective={objective!r} must be callable: objective(params) -> real scalar")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback={callback!r} must be callable: callback(result) after each iteration")
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(f"method={method!r} must be one of {METHODS} (case-insensitive)")
    return method.lower()


def _checked_numbers(maxiter: Any, tol: Any, learning_rate: Any, lam: Any) -> tuple[int, float, float, float]:
    """``maxiter`` a positive int, ``tol`` non-negative, ``learning_rate`` and ``lam`` positive
    (all finite), whichever method uses them."""
    return (checked_count(maxiter, "maxiter"), _checked_real(tol, "tol", "a non-negative"),
            _checked_real(learning_rate, "learning_rate", "a positive"),
            _checked_real(lam, "lam", "a positive"))


def _checked_real(value: Any, name: str, sign: str) -> float:
    """``value`` as a finite float, ``"a positive"`` (> 0) or ``"a non-negative"`` (>= 0) one."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r} must be a real number; got {type(value).__name__}")
    if not (math.isfinite(value) and (value > 0 if sign == "a positive" else value >= 0)):
        raise ValueError(f"{name}={value!r} must be {sign}, finite number")
    return float(value)


def _check_method_options(K: ArrayBackend, method: str, method_name: str, gradient_method: Any, options: Any,
                          circuit: Any, approximation: Any) -> None:
    """The options that belong to some methods only: of the right type, and given to one of those."""
    for name, value in (("circuit", circuit), ("approximation", approximation)):
        if value is not None and method_name != "qng":
            raise ValueError(f"{name}={value!r} is an option of method='qng'; method={method!r} does not "
                             "use it")
    if circuit is not None and not callable(circuit):
        raise TypeError(f"circuit={circuit!r} must be a function of the parameters returning the "
                        "tq.Circuit whose state the objective measures (its ansatz)")
    checked_choice(approximation, APPROXIMATIONS, "approximation")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options={options!r} must be a dict of scipy.optimize.minimize's options, or None")
    if options and method_name in FIRST_ORDER_METHODS + ("qng",):
        raise ValueError(f"options={options!r} are scipy.optimize.minimize's options; method={method!r} "
                         "takes none (its settings are minimize's own arguments)")
    _check_gradient_method(K, method, method_name, gradient_method)


def _check_gradient_method(K: ArrayBackend, method: str, method_name: str, gradient_method: Any) -> None:
    if gradient_method is None:
        return
    checked_choice(gradient_method, GRADIENT_METHODS, "gradient_method")
    if method_name in _GRADIENT_FREE:
        raise ValueError(f"gradient_method={gradient_method!r} is unused by method={method!r}, which "
                         "evaluates the objective only")
    if gradient_method in ("autograd", "finite-difference") and K.capabilities.autodiff != gradient_method:
        raise ValueError(f"gradient_method={gradient_method!r} does not run on the {K.name} backend, which "
                         f"differentiates with {K.capabilities.autodiff!r}, 'adjoint' or 'parameter-shift'")


def _checked_x0(K: ArrayBackend, x0: Any) -> np.ndarray:
    """``x0`` as a flat float64 array of at least one finite real number."""
    try:
        host = np.asarray(K.to_numpy(x0) if K.is_array(x0) and not isinstance(x0, np.ndarray) else x0)
    except (TypeError, ValueError, RuntimeError):
        host = None
    if host is None or host.dtype.kind not in "iuf":
        got = type(x0).__name__ if host is None else host.dtype
        raise TypeError(f"x0 must be an array of real numbers (the initial parameters); got {got}")
    host = host.astype(np.float64).reshape(-1)
    if host.size == 0:
        raise ValueError("x0 is empty: minimize needs at least one parameter")
    if not np.all(np.isfinite(host)):
        where = np.flatnonzero(~np.isfinite(host))[:5]
        raise ValueError(f"x0 must be finite; it holds nan or inf at index {where}")
    return host


def _runner(K: ArrayBackend, objective: Callable, x0: np.ndarray, method: str, method_name: str, maxiter: int,
            tol: float, learning_rate: float, gradient_method: str | None, progress: bool | None,
            jit: bool | None, options: dict[str, Any] | None, metric: Callable | None,
            lam: float) -> Callable[[OptimizeResult, Callable[[], None]], None]:
    """``run(result, iteration_done)`` for the method: it records into ``result`` and calls
    ``iteration_done()`` after every iteration."""
    compiling = K.capabilities.compiles_whole_functions if jit is None else jit
    compiled = _compiled_functions(K, objective, gradient_method) if compiling else {}

    def made(key: Any, build: Callable[[], Callable]) -> Callable:
        """``build()``, compiled once per objective when compiling."""
        if not compiling:
            return build()
        if key not in compiled:
            compiled[key] = _compiled(K, build())
        return compiled[key]

    on_twin = not compiling and gradient_method != "autograd" and K.host_twin() is not K

    def on_host(fn: Callable, role: str) -> Callable:
        """``fn`` (the objective, its value and gradient, or its metric) on the NumPy host twin
        where it runs there (:func:`~tyxonq.numerics.host_twin.host_first`, decided per
        objective and ``role``): nothing ``minimize`` returns is a backend array, and NumPy pays a
        fraction of PyTorch's cost per small operation and no autograd graph."""
        return host_first(K, fn, key=objective, role=role) if on_twin else fn

    gradient = lambda: on_host(value_and_grad(objective, method=gradient_method), "gradient")  # noqa: E731
    objective_on_host = lambda: on_host(objective, "value")  # noqa: E731
    loop = functools.partial(_first_order_loop, maxiter=maxiter, tol=tol, progress=progress)
    if method_name == "qng":
        evaluate = made("evaluate", gradient)
        natural = functools.partial(_natural_gradient, K, evaluate, on_host(metric, "metric"), x0)
        return lambda result, done: loop(natural(learning_rate, lam), result, done, name="qng")
    if method_name == "newton":
        second = hessian(objective, method=gradient_method)
        return functools.partial(
            _scipy, K, made("objective", objective_on_host), made("evaluate", gradient), x0, "trust-exact",
            maxiter, tol, progress, options or {},
            lambda x: np.asarray(K.to_numpy(second(K.asarray(x, K.real_dtype))), dtype=np.float64))
    if method_name in FIRST_ORDER_METHODS:
        host = K if compiling else K.host_twin()  # the update's arithmetic (see _first_order_step)
        step = made(("step", method_name, learning_rate),
                    lambda: _first_order_step(K, gradient(), method_name, learning_rate, host))
        return lambda result, done: loop(_stepped_first_order(host, step, x0), result, done, name=method_name)
    return functools.partial(_scipy, K, made("objective", objective_on_host), made("evaluate", gradient),
                             x0, method, maxiter, tol, progress, options or {}, None)


class ObjectiveNotCompiledWarning(RuntimeWarning):
    """The objective could not be compiled and runs uncompiled (same values, slower)."""


_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


register_cache("compiled objectives", lambda: len(_COMPILED), _COMPILED.clear)


def _compiled_functions(K: ArrayBackend, objective: Callable,
                        gradient_method: str | None) -> dict[Any, Callable]:
    """The compiled functions of an objective (itself, its value and gradient, first-order steps),
    kept per objective function, backend and gradient method: a later ``minimize`` of the same
    objective compiles nothing again."""
    try:
        per_objective = _COMPILED.setdefault(objective, {})
    except TypeError:  # not weakly referenceable: compiled for this call only
        per_objective = {}
    return per_objective.setdefault((K, gradient_method), {})


def _compiled(K: ArrayBackend, fn: Callable) -> Callable:
    """``K.jit(fn)``, or ``fn`` itself (with one warning) if compiling fails on the first call."""
    compiled = K.jit(fn)
    chosen: list[Callable] = []

    def call(*args: Any) -> Any:
        if chosen:
            return chosen[0](*args)
        try:
            result = compiled(*args)
            chosen.append(compiled)
        except Exception as error:  # noqa: BLE001 - any tracing failure falls back
            warnings.warn(f"could not compile the objective with {K.name}'s jit ({type(error).__name__}: "
                          f"{str(error).splitlines()[0] if str(error) else ''}); running it uncompiled. "
                          "Pass jit=False to silence this", ObjectiveNotCompiledWarning, stacklevel=3)
            chosen.append(fn)
            result = fn(*args)
        return result

    return call


def _record(result: OptimizeResult, x: np.ndarray, energy: float) -> None:
    result.history_x.append(np.array(x, dtype=np.float64))
    result.history_fun.append(energy)
    if energy < result.fun:
        result.fun, result.x = energy, np.array(x, dtype=np.float64)


def _first_order_loop(stepper: tuple[Callable[[], float], Callable[[], np.ndarray]], result: OptimizeResult,
                      iteration_done: Callable[[], None], *, maxiter: int, tol: float, progress: bool | None,
                      name: str) -> None:
    """Iterate ``step()`` (which returns the energy at the point ``current()`` had before it),
    recording into ``result``, until the energy changes by less than ``tol`` or ``maxiter``."""
    step, current = stepper
    previous = math.inf
    with progress_report(maxiter, name, progress, unit="iteration") as report:
        for iteration in range(1, maxiter + 1):
            x_before = current()
            energy = step()
            _record(result, x_before, energy)
            report.advance(energy=float(energy))
            result.nit = iteration
            iteration_done()
            if abs(previous - energy) < tol:
                result.converged, result.status = True, "converged"
                result.message = f"energy changed by less than tol={tol}"
                break
            previous = energy
    if not result.converged:
        result.status, result.message = "maxiter", f"reached maxiter={maxiter}"


ADAM_BETAS, ADAM_EPSILON = (0.9, 0.999), 1e-8


def _first_order_step(K: ArrayBackend, evaluate: Callable, method: str, learning_rate: float,
                      H: ArrayBackend) -> Callable:
    """``step(x, first, second, count) -> (x, first, second, value)``: one Adam or SGD update
    (textbook Adam, as ``torch.optim.Adam``) in ``H``'s arrays, ``evaluate`` called on
    ``K``'s: compiled as a whole where ``H`` is ``K`` (JAX); an eager backend's host twin
    otherwise (NumPy for CPU tensors: after ``torch.set_num_threads``, one ``torch.sqrt`` of a
    small float64 vector left PyTorch's MKL threads spinning against NumPy's, 7.8 ms a step)."""
    beta1, beta2 = ADAM_BETAS

    def step(x: Any, first: Any, second: Any, count: Any) -> tuple[Any, Any, Any, Any]:
        if H is K:
            value, gradient = evaluate(x)
        else:
            value, gradient = evaluate(K.asarray(H.to_numpy(x), K.real_dtype))
            value, gradient = (H.asarray(K.to_numpy(array), H.real_dtype) for array in (value, gradient))
        if method == "sgd":
            return x - learning_rate * gradient, first, second, value
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient * gradient
        corrected1 = first / (1 - beta1 ** count)
        corrected2 = second / (1 - beta2 ** count)
        return x - learning_rate * corrected1 / (H.sqrt(corrected2) + ADAM_EPSILON), first, second, value

    return step


def _stepped_first_order(K: ArrayBackend, step: Callable, x0: np.ndarray) -> tuple[Callable, Callable]:
    """``(advance, current)`` for :func:`_first_order_loop`: one compiled update per call."""
    x = K.asarray(x0, K.real_dtype)
    state = [x, K.zeros_like(x), K.zeros_like(x)]
    counter = [0]

    def advance() -> float:
        counter[0] += 1
        x, first, second, value = step(*state, K.asarray(float(counter[0]), K.real_dtype))
        state[:] = [x, first, second]
        return float(K.to_numpy(value))

    return advance, lambda: np.array(K.to_numpy(state[0]), dtype=np.float64)


def _checked_metric(objective: Callable, circuit: Callable | None, approximation: str | None) -> Callable:
    """``metric(x)`` for ``"qng"`` (its options checked up front); without ``circuit`` the circuit
    is found by tracing the objective (:func:`_objective_circuit`)."""
    if circuit is None:
        circuit = _objective_circuit(objective)
    return lambda x: fubini_study_metric(circuit, x, approximation=approximation)


def _objective_circuit(objective: Callable) -> Callable:
    """``circuit(params)``: the one circuit whose results ``objective(params)`` computes, found by
    running the objective with traced parameters and stopping at its first circuit result. The
    first call runs the objective to its end and refuses one that measures several circuits."""
    checked = []

    def circuit(params: Any) -> Any:
        if checked:
            with capturing_traced_circuits(stop_at_first=True):
                try:
                    objective(params)
                except CircuitFound as found:
                    return found.circuit
        else:
            with capturing_traced_circuits() as found:
                objective(params)
            distinct = list({id(c): c for c in found}.values())
            if len(distinct) == 1:
                checked.append(True)
                return distinct[0]
        raise ValueError(
            f"method='qng' without circuit= looks for the one circuit whose expectation values the "
            f"objective takes; it found {len(distinct) if not checked else 0}: pass circuit=, a function "
            "of the parameters returning the tq.Circuit whose state the steps should follow")

    return circuit


def _natural_gradient(K: ArrayBackend, evaluate: Callable, metric: Callable, x0: np.ndarray,
                      learning_rate: float, lam: float) -> tuple[Callable, Callable]:
    """Quantum natural gradient descent, ``x <- x - lr (g(x) + lam I)^-1 grad E(x)``, as
    ``(step, current)`` for :func:`_first_order_loop`."""
    x = [x0.copy()]

    def step() -> float:
        g = np.asarray(K.to_numpy(metric(K.asarray(x[0], K.real_dtype))), dtype=np.float64)
        value, gradient = evaluate(K.asarray(x[0], K.real_dtype))
        g = g.reshape(x[0].size, x[0].size) + lam * np.eye(x[0].size)
        direction = np.linalg.solve(g, np.asarray(K.to_numpy(gradient), dtype=np.float64))
        x[0] = x[0] - learning_rate * direction
        return float(K.to_numpy(value))

    return step, lambda: x[0].copy()


def _scipy(K: ArrayBackend, objective: Callable, evaluate: Callable, x0: np.ndarray, method: str,
           maxiter: int, tol: float, progress: bool | None, options: dict[str, Any],
           hessian_of: Callable | None, result: OptimizeResult, iteration_done: Callable[[], None]) -> None:
    from scipy import optimize

    uses_gradient = method.lower() not in _GRADIENT_FREE
    with progress_report(maxiter, method, progress, unit="iteration") as report:

        def with_gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
            value, gradient = evaluate(K.asarray(x, K.real_dtype))
            energy = float(K.to_numpy(value))
            _record(result, x, energy)
            return energy, np.asarray(K.to_numpy(gradient), dtype=np.float64)

        def value_only(x: np.ndarray) -> float:
            energy = float(K.to_numpy(objective(K.asarray(x, K.real_dtype))))
            _record(result, x, energy)
            return energy

        def callback(*args: Any) -> None:
            report.advance(energy=float(result.history_fun[-1]) if result.history_fun else math.nan)
            result.nit += 1
            iteration_done()

        outcome = optimize.minimize(
            with_gradient if uses_gradient else value_only, x0, method=method,
            jac=True if uses_gradient else None, hess=hessian_of, tol=tol, callback=callback,
            options={"maxiter": maxiter, **options},
        )
    result.converged = bool(outcome.success)
    result.status = "converged" if result.converged else "failed"
    result.message = str(outcome.message)
    if hessian_of is not None and not result.converged:
        # at an exact minimum the trust region's predicted and actual reductions are both
        # rounding noise, and scipy reports a failure: a vanishing gradient says otherwise
        norm = float(np.linalg.norm(np.asarray(outcome.jac, dtype=np.float64)))
        if norm < 1e-8:
            result.converged, result.status = True, "converged"
            result.message = f"gradient norm {norm:.1e}: converged to rounding ({result.message})"
    result.x, result.fun = np.asarray(outcome.x, dtype=np.float64), float(outcome.fun)
