"""Quantum channels as data: named sets of Kraus operators, with their other forms.

A channel on ``k`` qubits is ``E(rho) = sum_a K_a rho K_a^dagger`` with ``sum_a K_a^dagger K_a = I``
(trace preserving). A :class:`Channel` holds the stacked Kraus operators, its name and parameters;
:meth:`Channel.superoperator` and :meth:`Channel.choi` give the other two standard forms.
Conventions (qubit 0 is the most significant bit everywhere in tyxonq):

* superoperator ``S = sum_a K_a ⊗ conj(K_a)``, acting on the row-major vectorisation of ``rho``:
  ``vec(E(rho)) = S vec(rho)`` with ``vec(rho)[i * d + j] = rho[i, j]``;
* Choi matrix ``J = sum_ij |i><j| ⊗ E(|i><j|)`` (input first, then output; ``Tr_out J = I``).

Parameters may be backend arrays (a PyTorch tensor, a JAX tracer): the Kraus operators are then
built through the backend, so results are differentiable with respect to ``p``, ``gamma``, ....

Examples
--------
>>> import numpy as np, tyxonq as tq
>>> channel = tq.channels.depolarizing(0.1)
>>> channel.num_kraus, channel.num_qubits
(4, 1)
>>> rho = np.diag([1.0, 0.0])
>>> out = channel.superoperator() @ rho.reshape(-1)
>>> (np.round(out.reshape(2, 2).real, 4) + 0.0).tolist()
[[0.9333, 0.0], [0.0, 0.0667]]
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.protocol import ArrayBackend
from .pauli import PAULI_MATRICES, pauli_coefficients, pauli_matrix

__all__ = ["Channel", "depolarizing", "pauli", "bit_flip", "phase_flip", "amplitude_damping",
           "phase_damping", "thermal_relaxation", "reset", "kraus", "from_choi",
           "TRACE_TOLERANCE"]

#: Largest ``max |sum_a K_a^dagger K_a - I|`` accepted as trace preserving.
TRACE_TOLERANCE = 1e-8



@dataclass(frozen=True, eq=False)
class Channel:
    """A trace-preserving quantum channel: its stacked Kraus operators and where they came from.

    Attributes
    ----------
    name : str
        The constructor's name (``"depolarizing"``, ..., ``"kraus"``).
    operators : array
        The Kraus operators stacked, shape ``(num_kraus, 2^k, 2^k)``: a NumPy array, or a backend
        array when a parameter was one.
    parameters : dict
        The constructor's arguments.
    diagonal : bool
        Every Kraus operator is diagonal (a dephasing channel): it commutes with ``Z`` observables
        and passes through a network as a shared leg.
    """

    name: str
    operators: Any
    parameters: dict = field(default_factory=dict)
    diagonal: bool = False

    @property
    def num_kraus(self) -> int:
        return int(_shape(self.operators)[0])

    @property
    def num_qubits(self) -> int:
        return int(_shape(self.operators)[1]).bit_length() - 1

    @property
    def structure(self) -> tuple:
        """What a contraction plan depends on: everything but the values."""
        return (self.num_qubits, self.num_kraus, self.diagonal)

    def kraus(self) -> list[Any]:
        """The Kraus operators ``K_a`` (``2^k x 2^k`` each), on the active backend."""
        stack = self.stacked()
        return [stack[a] for a in range(self.num_kraus)]

    def stacked(self, K: ArrayBackend = None) -> Any:
        """The Kraus operators as one backend array ``(num_kraus, 2^k, 2^k)``, in the backend's
        working complex dtype (a parameter's own dtype when it is a backend array)."""
        K = K or get_backend()
        if isinstance(self.operators, np.ndarray):
            return K.constant(self.operators, K.precision)
        operators = K.asarray(self.operators)
        return operators if K.is_complex(operators) else K.cast(operators, K.dtype)

    def superoperator(self) -> Any:
        """``S = sum_a K_a ⊗ conj(K_a)`` (``4^k x 4^k``): ``vec(E(rho)) = S vec(rho)``, row-major
        ``vec``.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> s = tq.channels.bit_flip(0.25).superoperator()
        >>> float(np.real(s @ np.array([1, 0, 0, 0]))[3])  # |0><0| -> 0.75 |0><0| + 0.25 |1><1|
        0.25
        """
        K = get_backend()
        stack = self.stacked(K)
        d = 2 ** self.num_qubits
        products = K.einsum("aij,akl->ikjl", stack, K.conj(stack))
        return K.reshape(products, (d * d, d * d))

    def choi(self) -> Any:
        """``J = sum_ij |i><j| ⊗ E(|i><j|)`` (``4^k x 4^k``, input first): ``Tr_out J = I``.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> j = tq.channels.reset().choi()
        >>> np.allclose(np.trace(j.reshape(2, 2, 2, 2), axis1=1, axis2=3), np.eye(2))
        True
        """
        K = get_backend()
        stack = self.stacked(K)
        d = 2 ** self.num_qubits
        # J[(i, o), (j, p)] = sum_a K_a[o, i] conj(K_a[p, j])
        products = K.einsum("aoi,apj->iojp", stack, K.conj(stack))
        return K.reshape(products, (d * d, d * d))

    def pauli_probabilities(self, tolerance: float = 1e-10) -> np.ndarray | None:
        """The channel as ``rho -> sum_P p_P P rho P`` (a Pauli channel): the probabilities ``p_P``
        over the Pauli strings of ``"IXYZ"`` in order (first letter on the first qubit, slowest),
        or ``None`` when it is not a Pauli channel (its process matrix in the Pauli basis has
        off-diagonal entries above ``tolerance``, e.g. amplitude damping). Values are read on the
        host (a traced parameter raises).

        Examples
        --------
        >>> import tyxonq as tq
        >>> (tq.channels.depolarizing(0.3).pauli_probabilities().round(12) + 0.0).tolist()
        [0.7, 0.1, 0.1, 0.1]
        >>> tq.channels.amplitude_damping(0.1).pauli_probabilities() is None
        True
        """
        K = get_backend()
        operators = self.operators if isinstance(self.operators, np.ndarray) else \
            K.to_numpy(K.detach(K.asarray(self.operators)))
        # chi[P, Q] = sum_a c_aP conj(c_aQ) with K_a = sum_P c_aP P
        coefficients = np.stack([pauli_coefficients(kraus) for kraus in np.asarray(operators)])
        chi = coefficients.T @ coefficients.conj()
        diagonal = np.real(np.diag(chi))
        if np.max(np.abs(chi - np.diag(np.diag(chi)))) > tolerance:
            return None
        return np.clip(diagonal, 0.0, None)

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={_show(value)}" for key, value in self.parameters.items()
                              if key != "operators")
        return f"{self.name}({arguments})"


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, numbers.Number) else type(value).__name__


def _shape(array: Any) -> tuple[int, ...]:
    return tuple(np.shape(array)) if isinstance(array, np.ndarray) else tuple(get_backend().shape(array))


# -- parameters ---------------------------------------------------------------------------------
def _is_backend_value(value: Any) -> bool:
    return not isinstance(value, (numbers.Number, np.ndarray)) and get_backend().is_array(value)


def _host_value(value: Any, name: str) -> float | None:
    """A parameter's value on the host, checked real and finite; ``None`` for a backend array whose
    value cannot be read (a tracer)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={value!r} must be a real number, not a bool")
    if _is_backend_value(value):
        K = get_backend()
        if K.shape(value) != ():
            raise ValueError(f"{name} must be a scalar; got shape {K.shape(value)}")
        try:
            host = np.asarray(K.to_numpy(K.detach(value)))
        except Exception:  # a transform's tracer: no value to check here
            return None
    elif isinstance(value, (numbers.Number, np.ndarray)):
        host = np.asarray(value)
        if host.shape != ():
            raise ValueError(f"{name} must be a scalar; got shape {host.shape}")
    else:
        raise TypeError(f"{name}={value!r} must be a real number or a real scalar array")
    if host.dtype.kind == "c" or host.dtype.kind not in "iuf":
        raise TypeError(f"{name}={value!r} must be a real number")
    result = float(host)
    if not np.isfinite(result):
        raise ValueError(f"{name}={result!r} is not finite")
    return result


def _probability(value: Any, name: str, upper: float = 1.0) -> Any:
    host = _host_value(value, name)
    if host is not None and not 0.0 <= host <= upper:
        raise ValueError(f"{name}={host!r} must be a probability in [0, {upper:g}]")
    return value


def _combine(terms: Sequence[Sequence[tuple[Any, np.ndarray]]], coefficients: Sequence[Any]) -> Any:
    """Kraus operators ``K_a = sum_j c_aj M_aj`` stacked: on the host when every coefficient is a
    number, else through the backend (differentiable)."""
    if not any(_is_backend_value(c) for c in coefficients):
        return np.stack([sum(complex(c) * m for c, m in term) for term in terms])
    K = get_backend()
    return K.stack([sum(K.cast(K.asarray(c), K.dtype) * K.constant(m, K.precision) for c, m in term)
                    for term in terms])


def _sqrt(value: Any) -> Any:
    if _is_backend_value(value):
        return get_backend().sqrt(value)
    return float(np.sqrt(max(float(value), 0.0)))


def _one_minus(value: Any) -> Any:
    return 1 - value


# -- constructors -------------------------------------------------------------------------------
def depolarizing(p: Any, num_qubits: int = 1) -> Channel:
    """The depolarising channel.

    One qubit: ``rho -> (1 - p) rho + p/3 (X rho X + Y rho Y + Z rho Z)``. Two qubits
    (``num_qubits=2``): ``rho -> (1 - p) rho + p/15 sum_P P rho P`` over the 15 non-identity
    two-qubit Paulis. ``p`` in ``[0, 1]``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.depolarizing(0.05, num_qubits=2).num_kraus
    16
    """
    if num_qubits not in (1, 2):
        raise ValueError(f"num_qubits={num_qubits!r} must be 1 or 2")
    _probability(p, "p")
    strings = ["".join(s) for s in itertools.product("IXYZ", repeat=num_qubits)]
    others = len(strings) - 1
    coefficients = [_sqrt(_one_minus(p))] + [_sqrt(p / others)] * others
    matrices = [pauli_matrix(s) for s in strings]
    return Channel("depolarizing", _combine([[(c, m)] for c, m in zip(coefficients, matrices)],
                                            coefficients), {"p": p, "num_qubits": num_qubits})




def pauli(px: Any = 0.0, py: Any = 0.0, pz: Any = 0.0) -> Channel:
    """The Pauli channel ``rho -> (1 - px - py - pz) rho + px X rho X + py Y rho Y + pz Z rho Z``.

    Each probability in ``[0, 1]``, their sum at most 1.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.pauli(px=0.1, pz=0.2).num_kraus
    4
    """
    values = [_host_value(v, name) for v, name in ((px, "px"), (py, "py"), (pz, "pz"))]
    for value, name in zip(values, ("px", "py", "pz")):
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"{name}={value!r} must be a probability in [0, 1]")
    if all(v is not None for v in values) and sum(values) > 1.0 + 1e-12:
        raise ValueError(f"px + py + pz = {sum(values)!r} must be at most 1")
    coefficients = [_sqrt(_one_minus(px + py + pz)), _sqrt(px), _sqrt(py), _sqrt(pz)]
    terms = [[(c, PAULI_MATRICES[letter])] for c, letter in zip(coefficients, "IXYZ")]
    return Channel("pauli", _combine(terms, coefficients), {"px": px, "py": py, "pz": pz})


def bit_flip(p: Any) -> Channel:
    """``rho -> (1 - p) rho + p X rho X``, ``p`` in ``[0, 1]``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.bit_flip(0.1)
    bit_flip(p=0.1)
    """
    _probability(p, "p")
    coefficients = [_sqrt(_one_minus(p)), _sqrt(p)]
    terms = [[(coefficients[0], PAULI_MATRICES["I"])], [(coefficients[1], PAULI_MATRICES["X"])]]
    return Channel("bit_flip", _combine(terms, coefficients), {"p": p})


def phase_flip(p: Any) -> Channel:
    """``rho -> (1 - p) rho + p Z rho Z``, ``p`` in ``[0, 1]`` (diagonal Kraus operators).

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.phase_flip(0.1).diagonal
    True
    """
    _probability(p, "p")
    coefficients = [_sqrt(_one_minus(p)), _sqrt(p)]
    terms = [[(coefficients[0], PAULI_MATRICES["I"])], [(coefficients[1], PAULI_MATRICES["Z"])]]
    return Channel("phase_flip", _combine(terms, coefficients), {"p": p}, diagonal=True)


_P0 = np.diag([1.0, 0.0]).astype(complex)
_P1 = np.diag([0.0, 1.0]).astype(complex)
_LOWER = np.array([[0, 1], [0, 0]], dtype=complex)  # |0><1|
_RAISE = np.array([[0, 0], [1, 0]], dtype=complex)  # |1><0|


def _amplitude_damping_terms(gamma: Any, excited_population: Any) -> tuple[list, list]:
    keep, decay = _sqrt(_one_minus(gamma)), _sqrt(gamma)
    terms = [[(1.0, _P0), (keep, _P1)], [(decay, _LOWER)]]
    coefficients = [keep, decay]
    if not (isinstance(excited_population, numbers.Number) and excited_population == 0):
        ground, excited = _sqrt(_one_minus(excited_population)), _sqrt(excited_population)
        terms = ([[(ground * c, m) for c, m in term] for term in terms]
                 + [[(excited * keep, _P0), (excited, _P1)], [(excited * decay, _RAISE)]])
        coefficients = coefficients + [ground, excited]
    return terms, coefficients


def amplitude_damping(gamma: Any, excited_population: Any = 0) -> Channel:
    """Energy relaxation towards a thermal state.

    With ``excited_population = 0``: ``K0 = |0><0| + sqrt(1 - gamma) |1><1|``,
    ``K1 = sqrt(gamma) |0><1|`` (``|1>`` decays to ``|0>`` with probability ``gamma``). With a
    population ``q > 0`` it is the generalised amplitude damping channel: ``sqrt(1 - q)`` times
    those two, and ``K2 = sqrt(q) (sqrt(1 - gamma) |0><0| + |1><1|)``, ``K3 = sqrt(q gamma)
    |1><0|``; its fixed point has ``q`` in ``|1>``. ``gamma`` and ``q`` in ``[0, 1]``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.amplitude_damping(0.1).num_kraus, tq.channels.amplitude_damping(0.1, 0.2).num_kraus
    (2, 4)
    """
    _probability(gamma, "gamma")
    _probability(excited_population, "excited_population")
    terms, coefficients = _amplitude_damping_terms(gamma, excited_population)
    return Channel("amplitude_damping", _combine(terms, coefficients),
                   {"gamma": gamma, "excited_population": excited_population})


def phase_damping(gamma: Any) -> Channel:
    """Pure dephasing: ``K0 = |0><0| + sqrt(1 - gamma) |1><1|``, ``K1 = sqrt(gamma) |1><1|``;
    off-diagonal elements shrink by ``sqrt(1 - gamma)``. ``gamma`` in ``[0, 1]``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.phase_damping(0.3).diagonal
    True
    """
    _probability(gamma, "gamma")
    keep, decay = _sqrt(_one_minus(gamma)), _sqrt(gamma)
    terms = [[(1.0, _P0), (keep, _P1)], [(decay, _P1)]]
    return Channel("phase_damping", _combine(terms, [keep, decay]), {"gamma": gamma}, diagonal=True)


def thermal_relaxation(t1: Any, t2: Any, time: Any, excited_population: Any = 0) -> Channel:
    """Relaxation (``T1``) and dephasing (``T2``) over a duration ``time``.

    Populations relax towards ``excited_population`` in ``|1>`` as ``exp(-time / t1)``;
    coherences decay as ``exp(-time / t2)``. It is generalised amplitude damping with
    ``gamma = 1 - exp(-time / t1)`` followed by phase damping with ``1 - lambda =
    exp(-2 time / t2 + time / t1)``, which needs ``t2 <= 2 t1``. ``t1``, ``t2`` > 0,
    ``time`` >= 0 (any one unit).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> channel = tq.channels.thermal_relaxation(t1=50.0, t2=30.0, time=10.0)
    >>> rho = np.full((2, 2), 0.5)
    >>> out = (channel.superoperator() @ rho.reshape(-1)).reshape(2, 2)
    >>> bool(np.isclose(out[0, 1].real, 0.5 * np.exp(-10 / 30)))
    True
    """
    values = {name: _host_value(value, name) for name, value in
              (("t1", t1), ("t2", t2), ("time", time))}
    for name in ("t1", "t2"):
        if values[name] is not None and not values[name] > 0:
            raise ValueError(f"{name}={values[name]!r} must be positive")
    if values["time"] is not None and values["time"] < 0:
        raise ValueError(f"time={values['time']!r} must be non-negative")
    if values["t1"] is not None and values["t2"] is not None and values["t2"] > 2 * values["t1"]:
        raise ValueError(f"t2={values['t2']!r} must be at most 2 * t1 = {2 * values['t1']!r}")
    _probability(excited_population, "excited_population")
    backend = any(_is_backend_value(v) for v in (t1, t2, time))
    exp = get_backend().exp if backend else (lambda x: float(np.exp(x)))
    gamma = 1 - exp(-time / t1)
    dephasing = 1 - exp(-2 * time / t2 + time / t1)
    damping, damping_coefficients = _amplitude_damping_terms(gamma, excited_population)
    keep, decay = _sqrt(_one_minus(dephasing)), _sqrt(dephasing)
    phase = [[(1.0, _P0), (keep, _P1)], [(decay, _P1)]]
    # Kraus operators of the composition: P_j A_a for every pair
    terms = [[(c * d, p @ a) for c, p in left for d, a in right] for left in phase for right in damping]
    return Channel("thermal_relaxation", _combine(terms, damping_coefficients + [keep, decay]),
                   {"t1": t1, "t2": t2, "time": time, "excited_population": excited_population})


def reset() -> Channel:
    """Reset to ``|0>``: ``K0 = |0><0|``, ``K1 = |0><1|`` (``rho -> Tr(rho) |0><0|``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> tq.channels.reset().num_kraus
    2
    """
    return Channel("reset", np.stack([_P0, _LOWER]), {})


def kraus(operators: Sequence[Any]) -> Channel:
    """Any channel, from its Kraus operators ``[K0, K1, ...]`` (each ``2^k x 2^k``).

    The set must be trace preserving: ``max |sum_a K_a^dagger K_a - I| <= 1e-8``.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> channel = tq.channels.kraus([np.sqrt(0.9) * np.eye(2), np.sqrt(0.1) * np.diag([1, -1])])
    >>> channel.num_kraus, channel.diagonal
    (2, True)
    """
    if isinstance(operators, np.ndarray) and operators.ndim == 2:
        operators = [operators]
    operators = list(operators)
    if not operators:
        raise ValueError("operators must hold at least one Kraus operator")
    backend = any(_is_backend_value(op) for op in operators)
    K = get_backend()
    shapes = [tuple(K.shape(op)) if _is_backend_value(op) else np.shape(op) for op in operators]
    for index, shape in enumerate(shapes):
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"operators[{index}] has shape {shape}; Kraus operators must be square")
    if len(set(shapes)) != 1:
        raise ValueError(f"operators have mismatched shapes {shapes}; all must be equal")
    dimension = shapes[0][0]
    if dimension < 2 or dimension & (dimension - 1):
        raise ValueError(f"operators are {dimension} x {dimension}; a channel on k qubits needs 2^k x 2^k")
    if backend:
        stack = K.stack([K.asarray(op) for op in operators])
        try:
            host = np.asarray(K.to_numpy(K.detach(stack)))
        except Exception:
            host = None
    else:
        host = np.stack([np.asarray(op) for op in operators])
        if host.dtype.kind not in "iufc":
            raise TypeError(f"operators have dtype {host.dtype}; Kraus operators must be numeric")
        host = host.astype(complex)
        stack = host
    diagonal = False
    if host is not None:
        _check_trace_preserving(host)
        diagonal = not np.any(host - np.einsum("aii->ai", host)[:, :, None] * np.eye(dimension))
    return Channel("kraus", stack, {"operators": operators}, diagonal=bool(diagonal))


def _check_trace_preserving(stack: np.ndarray) -> None:
    total = np.einsum("aki,akj->ij", stack.conj(), stack)
    deviation = float(np.max(np.abs(total - np.eye(stack.shape[1]))))
    if not deviation <= TRACE_TOLERANCE:
        raise ValueError(f"operators are not trace preserving: max |sum K^dagger K - I| = "
                         f"{deviation:.3e} > {TRACE_TOLERANCE:g}")


def from_choi(choi: Any, tolerance: float = 1e-12) -> Channel:
    """The channel of a Choi matrix (:meth:`Channel.choi`'s convention), as Kraus operators
    ``sqrt(lambda_a) unvec(v_a)`` from its eigenvectors (eigenvalues below ``tolerance`` dropped).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> channel = tq.channels.from_choi(tq.channels.amplitude_damping(0.3).choi())
    >>> channel.num_kraus
    2
    """
    matrix = np.asarray(get_backend().to_numpy(choi) if _is_backend_value(choi) else choi, dtype=complex)
    size = matrix.shape[0]
    dimension = int(round(np.sqrt(size)))
    if matrix.shape != (size, size) or dimension * dimension != size:
        raise ValueError(f"choi has shape {matrix.shape}; a channel on k qubits needs (4^k, 4^k)")
    if not np.allclose(matrix, matrix.conj().T, atol=1e-10):
        raise ValueError("choi is not Hermitian: not the Choi matrix of a channel")
    values, vectors = np.linalg.eigh(matrix)
    if values.min() < -1e-8:
        raise ValueError(f"choi has a negative eigenvalue {values.min():.3e}: the map is not "
                         "completely positive")
    operators = [np.sqrt(value) * vectors[:, a].reshape(dimension, dimension).T
                 for a, value in enumerate(values) if value > tolerance]
    return kraus(operators)
