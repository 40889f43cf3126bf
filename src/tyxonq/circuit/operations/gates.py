"""The gate set: each gate's qubit count, parameters, and how its matrix is built.

Matrices are built through the :class:`~tyxonq.numerics.ArrayBackend` protocol from the angles,
so gradients and ``vmap`` flow through them. Parametrised gates are linear combinations of
constant matrices with ``cos``/``sin``/``exp`` coefficients, e.g.
``RX(θ) = cos(θ/2)·I - i·sin(θ/2)·X``. Constant matrices are converted once per backend.

Conventions: a k-qubit matrix acts on its qubits in the order given, the first qubit being the most
significant bit of the matrix index; rotations are ``exp(-i θ P / 2)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...numerics import get_backend
from ...numerics.constants import backend_constant
from ...numerics.protocol import ArrayBackend
from ...operators.pauli import pauli_matrix

__all__ = ["GateSpec", "GATES", "ALIASES", "DIAGONAL_GATES", "gate_matrix", "gate_matrices",
           "gate_derivative", "gate_derivatives", "controlled_gate", "controlled_matrix",
           "pauli_rotation_gate", "pauli_ladder", "PAULI_ROTATION_PREFIX", "MAX_PAULI_ROTATION_QUBITS",
           "canonical_gate_name"]

_I = np.eye(2, dtype=complex)
_X = np.array([[0, 1], [1, 0]], dtype=complex)
_Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
_Z = np.diag([1.0, -1.0]).astype(complex)
_P0 = np.diag([1.0, 0.0]).astype(complex)
_P1 = np.diag([0.0, 1.0]).astype(complex)
_E01 = np.array([[0, 1], [0, 0]], dtype=complex)
_E10 = np.array([[0, 0], [1, 0]], dtype=complex)
_SX = 0.5 * np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]])


def _controlled(u: np.ndarray) -> np.ndarray:
    return np.kron(_P0, np.eye(u.shape[0])) + np.kron(_P1, u)


_SWAP = np.eye(4, dtype=complex)[[0, 2, 1, 3]]
CONSTANT_MATRICES: dict[str, np.ndarray] = {
    "i": _I,
    "h": np.array([[1, 1], [1, -1]], dtype=complex) / np.sqrt(2),
    "x": _X,
    "y": _Y,
    "z": _Z,
    "s": np.diag([1, 1j]),
    "sdg": np.diag([1, -1j]),
    "t": np.diag([1, np.exp(1j * np.pi / 4)]),
    "tdg": np.diag([1, np.exp(-1j * np.pi / 4)]),
    "sx": _SX,
    "sxdg": _SX.conj().T,
    "cx": _controlled(_X),
    "cy": _controlled(_Y),
    "cz": _controlled(_Z),
    "swap": _SWAP,
    "iswap": np.array([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]]),
    # echoed cross-resonance (IBM's native two-qubit gate): (I X - X Y) / sqrt 2 on (first, second)
    "ecr": np.array([[0, 0, 1, 1j], [0, 0, 1j, 1], [1, -1j, 0, 0], [-1j, 1, 0, 0]]) / np.sqrt(2),
    "ccx": _controlled(_controlled(_X)),
    "cswap": _controlled(_SWAP),
    # basis vectors and building blocks of the parametrised gates
    "_ket0": np.array([1.0, 0.0], dtype=complex),
    "_ket1": np.array([0.0, 1.0], dtype=complex),
    "_p0": _P0,
    "_p1": _P1,
    "_e01": _E01,
    "_e10": _E10,
    "_xx": np.kron(_X, _X),
    "_yy": np.kron(_Y, _Y),
    "_zz": np.kron(_Z, _Z),
    "_i4": np.eye(4, dtype=complex),
    "_p0_i": np.kron(_P0, _I),
    "_p1_i": np.kron(_P1, _I),
    "_p1_x": np.kron(_P1, _X),
    "_p1_y": np.kron(_P1, _Y),
    "_p1_z": np.kron(_P1, _Z),
    "_i4_minus_p11": np.diag([1.0, 1.0, 1.0, 0.0]).astype(complex),
    "_p11": np.diag([0.0, 0.0, 0.0, 1.0]).astype(complex),
}

def constant(K: ArrayBackend, name: str) -> Any:
    """Constant matrix ``name`` as an array of backend ``K`` in its working dtype (cached)."""
    return backend_constant(K, ("gate", name), lambda: CONSTANT_MATRICES[name])


def _angle(K: ArrayBackend, value: Any) -> Any:
    return K.asarray(value)


def _phase(K: ArrayBackend, angle: Any) -> Any:
    """exp(i·angle) for a real angle, as cos + i sin (differentiable everywhere)."""
    return K.cos(angle) + 1j * K.sin(angle)


def _pauli_rotation(pauli: str, identity: str) -> Callable[[Any, tuple], Any]:
    def build(K: ArrayBackend, params: tuple) -> Any:
        half = _angle(K, params[0]) / 2
        return K.cos(half) * constant(K, identity) - 1j * K.sin(half) * constant(K, pauli)

    return build


def _controlled_rotation(pauli: str) -> Callable[[Any, tuple], Any]:
    def build(K: ArrayBackend, params: tuple) -> Any:
        half = _angle(K, params[0]) / 2
        return (constant(K, "_p0_i") + K.cos(half) * constant(K, "_p1_i")
                - 1j * K.sin(half) * constant(K, pauli))

    return build


def _phase_gate(K: ArrayBackend, params: tuple) -> Any:
    return constant(K, "_p0") + _phase(K, _angle(K, params[0])) * constant(K, "_p1")


def _global_phase(K: ArrayBackend, params: tuple) -> Any:
    return _phase(K, _angle(K, params[0])) * constant(K, "i")


def _controlled_phase(K: ArrayBackend, params: tuple) -> Any:
    return constant(K, "_i4_minus_p11") + _phase(K, _angle(K, params[0])) * constant(K, "_p11")


def _u3(K: ArrayBackend, params: tuple) -> Any:
    theta, phi, lam = (_angle(K, p) for p in params)
    c, s = K.cos(theta / 2), K.sin(theta / 2)
    return (c * constant(K, "_p0") - _phase(K, lam) * s * constant(K, "_e01")
            + _phase(K, phi) * s * constant(K, "_e10") + _phase(K, phi + lam) * c * constant(K, "_p1"))


def _custom_unitary(K: ArrayBackend, params: tuple) -> Any:
    matrix = K.asarray(params[0])
    if not K.is_complex(matrix):  # ints and reals: the working complex dtype
        matrix = K.cast(matrix, K.dtype)
    dimension = int(np.prod(K.shape(matrix)) ** 0.5)
    return K.reshape(matrix, (dimension, dimension))


def _constant_gate(name: str) -> Callable[[Any, tuple], Any]:
    return lambda K, params: constant(K, name)


@dataclass(frozen=True)
class GateSpec:
    """A gate kind.

    Attributes
    ----------
    name : str
        Canonical name (the :class:`Circuit` method).
    num_qubits : int
        Qubits it acts on (``0`` for ``unitary``, whose size comes from its matrix).
    param_names : tuple of str
        Names of its real parameters, in order (``("matrix",)`` for ``unitary``).
    build : callable
        ``build(K, params)`` -> the gate's ``2^k x 2^k`` matrix on backend ``K``.
    num_controls : int
        Leading qubits drawn as controls.
    diagonal_on : tuple of int
        Positions of the qubits on which the matrix is (block-)diagonal for every parameter
        value: the gate is ``sum_d |d><d| ⊗ U_d`` over their basis states ``d`` (controls, and
        every qubit of a diagonal gate). A tensor network lets these wires pass through the
        gate unchanged; a light cone lets such a gate commute with diagonal observables.
    """

    name: str
    num_qubits: int
    param_names: tuple[str, ...]
    build: Callable[[Any, tuple], Any]
    num_controls: int = 0
    diagonal_on: tuple[int, ...] = ()
    #: ``(base gate, added controls)`` of a gate made by :func:`controlled_gate`
    controlled_from: tuple[str, int] | None = None

    @property
    def is_parametrised(self) -> bool:
        return bool(self.param_names)


def _spec(name: str, k: int, params: tuple[str, ...] = (), build: Callable | None = None,
          controls: int = 0, diagonal: bool = False) -> GateSpec:
    diagonal_on = tuple(range(k)) if diagonal else tuple(range(controls))
    return GateSpec(name, k, params, build or _constant_gate(name), controls, diagonal_on)


class GateTable(dict):
    """The gate set by name. Gates made on demand (controlled gates for conditioned gates,
    :func:`controlled_gate`; Pauli rotations, :func:`pauli_rotation_gate`, made from their name
    alone, so a stored plan naming one finds it) are found by name too, but are not listed:
    iterating gives the gates users name."""

    def __missing__(self, name: str) -> GateSpec:
        if name not in _MADE and isinstance(name, str) and name.startswith(PAULI_ROTATION_PREFIX):
            pauli_rotation_gate(name[len(PAULI_ROTATION_PREFIX):])
        return _MADE[name]

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default


#: the gates made on demand so far, by name
_MADE: dict[str, GateSpec] = {}

GATES: dict[str, GateSpec] = GateTable({
    spec.name: spec
    for spec in [
        *(_spec(n, 1) for n in ("h", "x", "y", "sx", "sxdg")),
        *(_spec(n, 1, diagonal=True) for n in ("i", "z", "s", "sdg", "t", "tdg")),
        _spec("rx", 1, ("theta",), _pauli_rotation("x", "i")),
        _spec("ry", 1, ("theta",), _pauli_rotation("y", "i")),
        _spec("rz", 1, ("theta",), _pauli_rotation("z", "i"), diagonal=True),
        _spec("phase", 1, ("theta",), _phase_gate, diagonal=True),
        _spec("gphase", 1, ("theta",), _global_phase, diagonal=True),
        _spec("u", 1, ("theta", "phi", "lam"), _u3),
        _spec("cx", 2, controls=1),
        _spec("cy", 2, controls=1),
        _spec("cz", 2, controls=1, diagonal=True),
        _spec("swap", 2),
        _spec("iswap", 2),
        _spec("ecr", 2),
        _spec("rxx", 2, ("theta",), _pauli_rotation("_xx", "_i4")),
        _spec("ryy", 2, ("theta",), _pauli_rotation("_yy", "_i4")),
        _spec("rzz", 2, ("theta",), _pauli_rotation("_zz", "_i4"), diagonal=True),
        _spec("crx", 2, ("theta",), _controlled_rotation("_p1_x"), controls=1),
        _spec("cry", 2, ("theta",), _controlled_rotation("_p1_y"), controls=1),
        _spec("crz", 2, ("theta",), _controlled_rotation("_p1_z"), controls=1, diagonal=True),
        _spec("cphase", 2, ("theta",), _controlled_phase, controls=1, diagonal=True),
        _spec("ccx", 3, controls=2),
        _spec("cswap", 3, controls=1),
        _spec("unitary", 0, ("matrix",), _custom_unitary),
    ]
})

#: Gates whose matrix is diagonal for every parameter value (controlled gates join as made).
DIAGONAL_GATES = {name for name, spec in GATES.items()
                  if spec.num_qubits and len(spec.diagonal_on) == spec.num_qubits}

ALIASES = {"cnot": "cx", "toffoli": "ccx", "u3": "u", "cp": "cphase", "p": "phase",
           "fredkin": "cswap", "any": "unitary"}


def canonical_gate_name(name: str) -> str:
    """The canonical name of a gate or alias, or a ``ValueError`` listing the gates."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in GATES:
        raise ValueError(f"unknown gate {name!r}; known gates: {', '.join(sorted(GATES))}")
    return key


def gate_matrix(K: ArrayBackend, name: str, params: tuple, dagger: bool = False) -> Any:
    """The matrix of gate ``name`` with ``params`` on backend ``K`` (its adjoint if ``dagger``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> bool(np.allclose(gate_matrix(K, "rx", (np.pi,)), -1j * CONSTANT_MATRICES["x"]))
    True
    """
    matrix = GATES[name].build(K, params)
    return K.conj(K.transpose(matrix)) if dagger else matrix


def gate_matrices(K: ArrayBackend, name: str, params: Any, dagger: bool = False) -> Any:
    """The matrices of ``G`` gates of one kind in one vectorised call: shape ``(G, 2^k, 2^k)``.

    ``params`` is a real array of shape ``(G, number of parameters)``; the builders broadcast, so
    this costs a handful of backend calls however many gates there are.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> many = gate_matrices(K, "ry", np.array([[0.1], [0.2]]))
    >>> many.shape, bool(np.allclose(many[1], gate_matrix(K, "ry", (0.2,))))
    ((2, 2, 2), True)
    """
    spec = GATES[name]
    if name == "unitary" or not spec.is_parametrised:
        raise ValueError(f"gate_matrices builds parametrised gates of fixed size; got {name!r}")
    columns = K.asarray(params, K.real_dtype)
    count = K.shape(columns)[0]
    matrices = spec.build(K, tuple(K.reshape(columns[:, j], (count, 1, 1))
                                   for j in range(len(spec.param_names))))
    return K.conj(K.transpose(matrices, (0, 2, 1))) if dagger else matrices


# -- derivatives, for exact gradients without autograd --------------------------------------
# For a gate U(θ) = exp(θ A) with a constant A, dU/dθ = A·U: A is -i/2 times the rotation's
# Pauli, or +i times the phase gates' projector.
_GENERATORS = {
    "rx": (-0.5j, "x"), "ry": (-0.5j, "y"), "rz": (-0.5j, "z"),
    "rxx": (-0.5j, "_xx"), "ryy": (-0.5j, "_yy"), "rzz": (-0.5j, "_zz"),
    "crx": (-0.5j, "_p1_x"), "cry": (-0.5j, "_p1_y"), "crz": (-0.5j, "_p1_z"),
    "phase": (1j, "_p1"), "cphase": (1j, "_p11"), "gphase": (1j, "i"),
}

#: Gates whose parameters obey the two-term shift rule df/dθ = [f(θ+π/2) - f(θ-π/2)] / 2 (their
#: generator has two eigenvalues a unit apart); crx/cry/crz need the four-term rule.
TWO_TERM_SHIFT = {"rx", "ry", "rz", "rxx", "ryy", "rzz", "phase", "cphase", "u", "gphase"}  # + exp:P
FOUR_TERM_SHIFT = {"crx", "cry", "crz"}  # controlled gates join as made (controlled_gate)


def _u3_derivative(K: ArrayBackend, params: tuple, index: int) -> Any:
    theta, phi, lam = (_angle(K, p) for p in params)
    c, s = K.cos(theta / 2), K.sin(theta / 2)
    e_phi, e_lam, e_both = _phase(K, phi), _phase(K, lam), _phase(K, phi + lam)
    p0, e01, e10, p1 = (constant(K, name) for name in ("_p0", "_e01", "_e10", "_p1"))
    if index == 0:
        return (-s / 2) * p0 - e_lam * (c / 2) * e01 + e_phi * (c / 2) * e10 - e_both * (s / 2) * p1
    if index == 1:
        return 1j * e_phi * s * e10 + 1j * e_both * c * p1
    return -1j * e_lam * s * e01 + 1j * e_both * c * p1


def _all_ones_projector(count: int) -> np.ndarray:
    """``|1...1><1...1|`` on ``count`` qubits."""
    projector = np.zeros((2 ** count, 2 ** count), dtype=complex)
    projector[-1, -1] = 1.0
    return projector


def _embed_controlled(K: ArrayBackend, count: int, matrix: Any) -> Any:
    """``|1...1><1...1| ⊗ matrix`` (``matrix`` may carry leading batch axes)."""
    CONSTANT_MATRICES.setdefault(f"_ones{count}", _all_ones_projector(count))
    shape = tuple(K.shape(matrix))
    size = 2 ** count * shape[-1]
    block = K.einsum("ab,...ij->...aibj", constant(K, f"_ones{count}"), matrix)
    return K.reshape(block, shape[:-2] + (size, size))


def controlled_matrix(K: ArrayBackend, matrix: Any, count: int) -> Any:
    """``(I - P) ⊗ I + P ⊗ matrix`` with ``P = |1...1><1...1|`` on ``count`` control qubits, for
    a ``(..., d, d)`` backend matrix (leading axes: a batch): the matrix of every controlled gate
    (:func:`controlled_gate`), and of a custom ``unitary`` under a condition (its matrix is a
    parameter, so its controlled matrix is built from it rather than entered in the table).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> bool(np.allclose(controlled_matrix(K, CONSTANT_MATRICES["x"], 1), CONSTANT_MATRICES["cx"]))
    True
    """
    size = tuple(K.shape(matrix))[-1]
    rest = f"_rest{count}_{size}"
    CONSTANT_MATRICES.setdefault(rest, np.kron(np.eye(2 ** count) - _all_ones_projector(count), np.eye(size)))
    return constant(K, rest) + _embed_controlled(K, count, matrix)


def controlled_gate(name: str, count: int) -> str:
    """The name of gate ``name`` with ``count`` more control qubits in front (applied when they
    are all ``1``), made and entered in the gate table on first use.

    A classically conditioned gate becomes one of these when its condition's bits are wires
    (deferred measurement, :mod:`tyxonq.circuit.operations.deferred`). Every simulator, fusion,
    light cone and gradient method then handles it as it handles ``crx``: its matrix is
    ``(I - P) ⊗ I + P ⊗ U`` with ``P = |1...1><1...1|``, its derivatives ``P ⊗ dU``, its
    parameters follow the four-term shift rule, and it is block-diagonal on its controls.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> name = controlled_gate("x", 1)
    >>> name, bool(np.allclose(gate_matrix(K, name, ()), CONSTANT_MATRICES["cx"]))
    ('c1:x', True)
    >>> GATES[controlled_gate("rz", 2)].diagonal_on
    (0, 1, 2)
    """
    base = GATES[name]
    if base.controlled_from is not None:  # controls of controls: one gate with all of them
        name, count = base.controlled_from[0], base.controlled_from[1] + count
        base = GATES[name]
    controlled = f"c{count}:{name}"
    if controlled in _MADE:
        return controlled
    def build(K: ArrayBackend, params: tuple) -> Any:
        return controlled_matrix(K, base.build(K, params), count)

    if not base.is_parametrised and name != "unitary":
        host = get_backend("numpy")
        CONSTANT_MATRICES[controlled] = np.asarray(controlled_matrix(host, CONSTANT_MATRICES[name], count))
        build = _constant_gate(controlled)
    diagonal_on = tuple(range(count)) + tuple(count + p for p in base.diagonal_on)
    size = base.num_qubits and base.num_qubits + count  # 0: a unitary's size comes from its matrix
    _MADE[controlled] = GateSpec(controlled, size, base.param_names,
                                 build, base.num_controls + count, diagonal_on, (name, count))
    if name in DIAGONAL_GATES:
        DIAGONAL_GATES.add(controlled)
    if name in _GENERATORS:
        factor, generator = _GENERATORS[name]
        CONSTANT_MATRICES[f"_{controlled}_generator"] = np.kron(_all_ones_projector(count),
                                                                CONSTANT_MATRICES[generator])
        _GENERATORS[controlled] = (factor, f"_{controlled}_generator")
    if base.is_parametrised and name != "unitary":
        FOUR_TERM_SHIFT.add(controlled)  # generator eigenvalues {0} and the base's
    return controlled


#: Name prefix of the Pauli rotations ``exp(-i θ P / 2)`` (:func:`pauli_rotation_gate`).
PAULI_ROTATION_PREFIX = "exp:"
#: The most qubits a Pauli rotation acts on as one gate (its matrix has ``4^k`` entries); longer
#: strings are applied as a basis change, a CNOT ladder and an RZ (``decompose=True``).
MAX_PAULI_ROTATION_QUBITS = 10


def pauli_rotation_gate(letters: str) -> str:
    """The name of the gate ``exp(-i θ P / 2)`` for the Pauli string ``P`` (letters X, Y, Z on
    its qubits, in order), made and entered in the gate table on first use.

    Like ``rx`` or ``rzz`` (which are ``exp:X`` and ``exp:ZZ`` by another name): one parameter
    ``theta``, the two-term shift rule, generator ``-i P / 2`` for adjoint sweeps, and
    block-diagonal on its ``Z`` qubits, so a light cone lets it commute with what it commutes
    with and a tensor network passes those wires through it.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> name = pauli_rotation_gate("XZ")
    >>> name, GATES[name].diagonal_on
    ('exp:XZ', (1,))
    >>> bool(np.allclose(gate_matrix(K, "exp:ZZ", (0.3,)), gate_matrix(K, "rzz", (0.3,))))
    True
    """
    if not isinstance(letters, str) or not letters or set(letters) - set("XYZ"):
        raise ValueError(f"a Pauli rotation's string must be letters X, Y, Z; got {letters!r}")
    if len(letters) > MAX_PAULI_ROTATION_QUBITS:
        raise ValueError(
            f"a Pauli rotation on {len(letters)} qubits would be a 4^{len(letters)}-entry matrix; "
            f"at most {MAX_PAULI_ROTATION_QUBITS} act as one gate: pass decompose=True to apply it "
            "as a basis change, a CNOT ladder and an RZ")
    name = PAULI_ROTATION_PREFIX + letters
    if name in _MADE:
        return name
    CONSTANT_MATRICES[f"_{name}"] = pauli_matrix(letters)
    CONSTANT_MATRICES.setdefault(f"_eye{len(letters)}", np.eye(2 ** len(letters), dtype=complex))
    diagonal_on = tuple(p for p, letter in enumerate(letters) if letter == "Z")
    _MADE[name] = GateSpec(name, len(letters), ("theta",),
                           _pauli_rotation(f"_{name}", f"_eye{len(letters)}"), 0, diagonal_on)
    if len(diagonal_on) == len(letters):
        DIAGONAL_GATES.add(name)
    _GENERATORS[name] = (-0.5j, f"_{name}")
    TWO_TERM_SHIFT.add(name)
    return name


def pauli_ladder(qubits: tuple[int, ...], letters: str, theta: Any) -> list[tuple[str, tuple, tuple]]:
    """``exp(-i theta P / 2)`` as ``(gate, qubits, params)`` steps: ``V^† C^† RZ(theta) C V`` with
    ``V P V^† = Z...Z`` (``H`` on X letters, ``H S^†`` on Y letters) and a CNOT ladder ``C``
    gathering the parity on the last qubit.

    Examples
    --------
    >>> [gate for gate, _, _ in pauli_ladder((0, 1), "XY", 0.3)]
    ['h', 'sdg', 'h', 'cx', 'rz', 'cx', 'h', 'h', 's']
    """
    def basis(undo: bool) -> list[tuple[str, tuple, tuple]]:
        steps: list[tuple[str, tuple, tuple]] = []
        for q, letter in zip(qubits, letters):
            names = {"X": ["h"], "Y": ["h", "s"] if undo else ["sdg", "h"]}.get(letter, [])
            steps += [(name, (q,), ()) for name in names]
        return steps

    ladder = [("cx", (a, b), ()) for a, b in zip(qubits, qubits[1:])]
    return (basis(False) + ladder + [("rz", (qubits[-1],), (theta,))] + ladder[::-1]
            + basis(True))


def gate_derivative(K: ArrayBackend, name: str, params: tuple, index: int, dagger: bool = False) -> Any:
    """``d U / d params[index]`` of gate ``name`` (of its adjoint if ``dagger``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> step = 1e-6
    >>> numeric = (gate_matrix(K, "ry", (0.3 + step,)) - gate_matrix(K, "ry", (0.3 - step,))) / (2 * step)
    >>> bool(np.allclose(gate_derivative(K, "ry", (0.3,), 0), numeric, atol=1e-9))
    True
    """
    controlled_from = GATES[name].controlled_from
    if controlled_from is not None and controlled_from[0] not in _GENERATORS:  # u with controls
        base, count = controlled_from
        derivative = _embed_controlled(K, count, gate_derivative(K, base, params, index))
    elif name == "u":
        derivative = _u3_derivative(K, params, index)
    elif name in _GENERATORS:
        factor, generator = _GENERATORS[name]
        derivative = factor * K.matmul(constant(K, generator), gate_matrix(K, name, params))
    else:
        raise ValueError(f"gate {name!r} has no parameter to differentiate")
    return K.conj(K.transpose(derivative)) if dagger else derivative


def gate_derivatives(K: ArrayBackend, name: str, params: Any, index: int, dagger: bool = False) -> Any:
    """``d U / d params[index]`` of ``G`` gates of one kind in one vectorised call, shape
    ``(G, 2^k, 2^k)``; ``params`` as for :func:`gate_matrices`.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> many = gate_derivatives(K, "rx", np.array([[0.1], [0.2]]), 0, dagger=True)
    >>> bool(np.allclose(many[1], gate_derivative(K, "rx", (0.2,), 0, dagger=True)))
    True
    """
    spec = GATES[name]
    columns = K.asarray(params, K.real_dtype)
    count = K.shape(columns)[0]
    derivative = gate_derivative(K, name, tuple(K.reshape(columns[:, j], (count, 1, 1))
                                                for j in range(len(spec.param_names))), index)
    return K.conj(K.transpose(derivative, (0, 2, 1))) if dagger else derivative
