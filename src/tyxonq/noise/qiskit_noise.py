"""Qiskit Aer noise models as tyxonq :class:`~tyxonq.NoiseModel` s, exactly.

Aer's ``NoiseModel`` holds, per instruction name, an all-qubit ``QuantumError`` and local errors
for exact (ordered) qubit tuples, which replace the all-qubit one there; errors follow their
instruction, except on ``measure``, where they come just before it; readout errors misread
measured bits. Each part has a tyxonq counterpart:

* a ``QuantumError`` (any mixture of unitary, Kraus, Pauli and reset circuits) becomes one
  :class:`~tyxonq.channels.Channel`: the Kraus operators of the whole error, from its Choi
  matrix, with Qiskit's little-endian qubit order turned into tyxonq's (the channel's qubit 0,
  the most significant, is the instruction's first qubit);
* an all-qubit error: :meth:`~tyxonq.NoiseModel.add` for the gate; a local one:
  :meth:`~tyxonq.NoiseModel.add_local` on its qubit tuple; ``measure`` and ``reset`` errors:
  rules naming them (before each measure operation, after each reset);
* a ``ReadoutError`` ``probabilities[true][read]``: the confusion matrix ``confusion[read,
  true]`` (its transpose), for all qubits or one.

Instruction names are those of :func:`tyxonq.Circuit.from_qiskit`'s one-to-one gates (``id`` is
``i``; ``p`` and ``u1`` are ``phase``, ``u3`` is ``u``, ``cp`` and ``cu1`` are ``cphase``: one
gate here, so two different errors on them are refused). Refused with a ``ValueError`` naming
it: an error on an instruction that ``from_qiskit`` decomposes (``rzx``, ``u2``, a
label) or drops (``delay``, ``barrier``), since it would never apply; a correlated readout error
on several qubits; nonlocal errors; custom noise passes other than Aer's delay relaxation (which
``NoiseModel.from_backend`` adds and which acts on delays only, which ``from_qiskit`` drops).

The results equal Aer's for circuits made of the instructions ``from_qiskit`` keeps whole (a
circuit transpiled to a device's basis is). A gate it decomposes (``ch``, a
``PauliGate``, a custom gate) follows the rules of the gates it is made of here, while Aer gives it
no error unless the model names it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..operators import channels
from ..operators.channels import Channel

__all__ = ["qiskit_error_channel", "readout_confusion", "noise_model_from_qiskit",
           "noise_model_from_backend", "TYXONQ_GATE_NAMES"]

#: Qiskit instruction name -> tyxonq gate name, for the gates ``Circuit.from_qiskit`` keeps whole
TYXONQ_GATE_NAMES: dict[str, str] = {
    **{name: name for name in (
        "h", "x", "y", "z", "s", "sdg", "t", "tdg", "sx", "sxdg", "rx", "ry", "rz", "u", "cx", "cy",
        "cz", "swap", "iswap", "ecr", "rxx", "ryy", "rzz", "crx", "cry", "crz", "ccx", "cswap",
        "measure", "reset")},
    "id": "i", "p": "phase", "u1": "phase", "u3": "u", "cp": "cphase", "cu1": "cphase",
}
#: Eigenvalues of an error's Choi matrix below this are dropped (the channel moves by at most it)
_CHOI_TOLERANCE = 1e-13


def _require_aer() -> Any:
    try:
        from qiskit_aer import noise
    except ImportError as error:  # pragma: no cover - the qiskit extra installs it
        raise ImportError("converting Qiskit noise needs qiskit-aer: pip install 'tyxonq[qiskit]'") from error
    return noise


def _bit_reversal(num_qubits: int) -> np.ndarray:
    """The permutation matrix that reverses the order of ``num_qubits`` bits of an index."""
    d = 2 ** num_qubits
    order = np.arange(d).reshape((2,) * num_qubits).transpose(tuple(reversed(range(num_qubits))))
    return np.eye(d)[order.reshape(-1)]


def qiskit_error_channel(error: Any) -> Channel:
    """The tyxonq channel of a Qiskit Aer ``QuantumError`` (or any Qiskit quantum channel:
    ``Kraus``, ``SuperOp``, ``Choi``, ...), with tyxonq's qubit order.

    The error's qubit ``j`` is the instruction's ``j``-th qubit; Qiskit's matrices number them
    little-endian, tyxonq's channel big-endian over the qubits it is given, so this channel on
    ``(q0, q1, ...)`` is Aer's error on the instruction's ``[q0, q1, ...]``. Its Kraus operators
    come from the Choi matrix (eigenvalues below 1e-13 dropped).

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> from qiskit_aer.noise import amplitude_damping_error, pauli_error
    >>> error = amplitude_damping_error(0.3).tensor(pauli_error([("I", 1.0)]))  # damps qubit 1
    >>> channel = qiskit_error_channel(error)
    >>> rho = tq.DMCircuit(2).x(0).x(1).channel(channel, 0, 1).state()
    >>> (np.round(np.diag(tq.get_backend().to_numpy(rho)).real, 6) + 0.0).tolist()  # |11> -> 0.3 |10>
    [0.0, 0.0, 0.3, 0.7]
    """
    from qiskit.quantum_info import SuperOp

    operators = _mixture_kraus(error)
    if operators is not None:  # Kraus operators of the whole error (Qiskit's qubit order)
        reverse = _bit_reversal(error.num_qubits)
        # choi[i d + a, j d + b] = sum_K K[a, i] conj(K[b, j]) (from_choi's convention)
        vectors = np.array([(reverse @ K @ reverse).T.reshape(-1) for K in operators])
        return channels.from_choi(vectors.T @ vectors.conj(), tolerance=_CHOI_TOLERANCE)
    try:  # another kind of Qiskit channel: its superoperator
        superop = SuperOp(error.to_quantumchannel() if hasattr(error, "to_quantumchannel") else error)
    except Exception as failure:
        raise TypeError(f"{type(error).__name__} is not a Qiskit QuantumError or quantum channel") \
            from failure
    k = superop.num_qubits
    if k is None or superop.dim[0] != superop.dim[1]:
        raise ValueError(f"the error maps dimension {superop.dim[0]} to {superop.dim[1]}; "
                         "only errors from qubits to the same qubits convert")
    d = 2 ** k
    matrix = np.asarray(superop.data)
    reverse = _bit_reversal(k)
    choi = np.zeros((d * d, d * d), dtype=complex)
    for i in range(d):
        for j in range(d):
            unit = np.zeros((d, d), dtype=complex)
            unit[i, j] = 1.0
            # Qiskit's SuperOp acts on column-stacked little-endian density matrices
            little = (matrix @ (reverse @ unit @ reverse).reshape(-1, order="F")).reshape(d, d, order="F")
            choi[i * d:(i + 1) * d, j * d:(j + 1) * d] = reverse @ little @ reverse
    return channels.from_choi(choi, tolerance=_CHOI_TOLERANCE)


#: Kraus operators of reset to |0>
_RESET_KRAUS = (np.array([[1, 0], [0, 0]], dtype=complex), np.array([[0, 1], [0, 0]], dtype=complex))


def _instruction_kraus(operation: Any) -> Sequence[np.ndarray] | None:
    """The Kraus operators of one instruction of an Aer error's circuit (Qiskit's little-endian
    matrices), or ``None`` for one this does not know."""
    if operation.name == "kraus":
        return [np.asarray(k, dtype=complex) for k in operation.params]
    if operation.name == "reset":
        return _RESET_KRAUS
    try:
        return [np.asarray(operation.to_matrix(), dtype=complex)]
    except Exception:  # noqa: BLE001 - an instruction without a matrix: Qiskit's own conversion
        return None


def _embedded(operator: np.ndarray, qubits: Sequence[int], k: int) -> np.ndarray:
    """``operator`` (on ``qubits``) as a matrix on ``k`` qubits, Qiskit's little-endian numbering."""
    m, d = len(qubits), 2 ** k
    if list(qubits) == list(range(k)):
        return operator
    # axis i of the operator's output is its qubit qubits[m - 1 - i]; a qubit q is axis k - 1 - q
    positions = [k - 1 - qubits[m - 1 - i] for i in range(m)]
    identity = np.eye(d, dtype=complex).reshape((2,) * (2 * k))
    applied = np.tensordot(operator.reshape((2,) * (2 * m)), identity,
                           axes=(list(range(m, 2 * m)), positions))
    return np.moveaxis(applied, list(range(m)), positions).reshape(d, d)


def _mixture_kraus(error: Any) -> list[np.ndarray] | None:
    """Kraus operators of an Aer ``QuantumError``, from its circuits and probabilities (products of
    ``2^k x 2^k`` matrices: Qiskit's own conversion builds a ``SuperOp`` per instruction, about
    50 ms an error), or ``None`` when it is no such error or has an instruction without Kraus
    operators here."""
    circuits = getattr(error, "circuits", None)
    probabilities = getattr(error, "probabilities", None)
    k = getattr(error, "num_qubits", None)
    if circuits is None or probabilities is None or not isinstance(k, int):
        return None
    operators = []
    for circuit, probability in zip(circuits, probabilities):
        products = [np.sqrt(float(probability)) * np.eye(2 ** k, dtype=complex)]
        for instruction in circuit.data:
            if instruction.operation.name in ("id", "barrier"):
                continue
            kraus = _instruction_kraus(instruction.operation)
            if kraus is None:
                return None
            qubits = [circuit.find_bit(q).index for q in instruction.qubits]
            embedded = [_embedded(K, qubits, k) for K in kraus]
            products = [E @ P for E in embedded for P in products]
        operators += products
    return operators


def readout_confusion(error: Any) -> np.ndarray:
    """The ``2 x 2`` confusion matrix ``confusion[read, true]`` of a one-qubit Aer
    ``ReadoutError`` (``probabilities[true][read]``: its transpose).

    Examples
    --------
    >>> from qiskit_aer.noise import ReadoutError
    >>> readout_confusion(ReadoutError([[0.9, 0.1], [0.25, 0.75]])).tolist()
    [[0.9, 0.25], [0.1, 0.75]]
    """
    probabilities = np.asarray(error.probabilities, dtype=float)
    if probabilities.shape != (2, 2):
        raise ValueError(f"a readout error on {error.number_of_qubits} qubits is correlated: tyxonq "
                         "misreads each qubit on its own (one 2 x 2 confusion matrix per qubit); give "
                         "per-qubit readout errors")
    return probabilities.T.copy()


def _tyxonq_name(name: str) -> str:
    if name in TYXONQ_GATE_NAMES:
        return TYXONQ_GATE_NAMES[name]
    if name in ("delay", "barrier"):
        why = "Circuit.from_qiskit drops it"
    else:
        why = "tyxonq has no such gate: Circuit.from_qiskit replaces it by its definition"
    raise ValueError(f"an error on the instruction {name!r} cannot convert ({why}, so the error would "
                     "never apply); transpile to gates tyxonq has (e.g. basis_gates=['cx', 'rz', 'sx', "
                     "'x']) and attach the error to those. Convertible: "
                     f"{', '.join(sorted(TYXONQ_GATE_NAMES))}")


def _aer_parts(noise_model: Any) -> tuple[dict, dict, Any, dict]:
    """Aer's all-qubit errors, local errors, all-qubit readout error and local readout errors.
    Aer has no public accessor for them (``to_dict`` serialises the errors to instruction lists),
    so they are read from its attributes; what cannot convert is refused here."""
    aer = _require_aer()
    if not isinstance(noise_model, aer.NoiseModel):
        raise TypeError(f"{type(noise_model).__name__} is not a qiskit_aer.noise.NoiseModel; for a "
                        "backend's calibration use tq.NoiseModel.from_backend(backend)")
    model = vars(noise_model)
    if model.get("_nonlocal_quantum_errors"):
        raise ValueError("the noise model has nonlocal errors (an error on other qubits than its "
                         "instruction's): tyxonq's rules act on the instruction's qubits only")
    for noise_pass in model.get("_custom_noise_passes", []):
        if not _delay_relaxation(noise_pass):
            raise ValueError(f"the noise model has a custom noise pass {type(noise_pass).__name__}, which "
                             "rewrites circuits before they run: tyxonq cannot convert it (run the pass "
                             "on the circuit, then convert the circuit)")
    return (model["_default_quantum_errors"], model["_local_quantum_errors"],
            model["_default_readout_error"], model["_local_readout_errors"])


def _delay_relaxation(noise_pass: Any) -> bool:
    """Whether ``noise_pass`` is Aer's thermal relaxation on delays only (``from_backend`` adds
    it; tyxonq drops delays, so it never applies here)."""
    from qiskit.circuit import Delay
    from qiskit_aer.noise.passes import RelaxationNoisePass

    kinds = vars(noise_pass).get("_ops", ())
    return isinstance(noise_pass, RelaxationNoisePass) and bool(kinds) and \
        all(isinstance(kind, type) and issubclass(kind, Delay) for kind in kinds)


def _unique_names(errors: dict) -> dict[str, tuple[str, Any]]:
    """``{tyxonq name: (qiskit name, value)}``, refusing two different errors that land on one
    tyxonq gate (``p`` and ``u1``, ...)."""
    named: dict[str, tuple[str, Any]] = {}
    for name, value in errors.items():
        ours = _tyxonq_name(name)
        if ours in named and named[ours][1] != value:
            raise ValueError(f"the instructions {named[ours][0]!r} and {name!r} are both tyxonq's "
                             f"{ours!r} but carry different errors; give them one error")
        named.setdefault(ours, (name, value))
    return named


def noise_model_from_qiskit(noise_model: Any, model_class: type) -> Any:
    """The tyxonq :class:`~tyxonq.NoiseModel` of a Qiskit Aer ``NoiseModel`` (see the module's
    conventions): the same channels after the same gates, the same readout errors.

    Parameters
    ----------
    noise_model : qiskit_aer.noise.NoiseModel
        The model to convert.
    model_class : type
        The class to build: ``tq.NoiseModel`` (whose ``from_qiskit`` calls this) or a subclass.

    Examples
    --------
    >>> import tyxonq as tq
    >>> from qiskit_aer.noise import NoiseModel, ReadoutError, depolarizing_error
    >>> aer = NoiseModel()
    >>> aer.add_all_qubit_quantum_error(depolarizing_error(0.02, 2), ["cx"])
    >>> aer.add_readout_error(ReadoutError([[0.95, 0.05], [0.1, 0.9]]), [0])
    >>> model = noise_model_from_qiskit(aer, tq.NoiseModel)
    >>> noisy = tq.Circuit(2).h(0).cx(0, 1).with_noise(model)
    >>> [op.gate for op in noisy.operations], noisy.readout[0].tolist()
    (['h', 'cx', 'channel'], [[0.95, 0.1], [0.05, 0.9]])
    """
    defaults, locals_, default_readout, local_readouts = _aer_parts(noise_model)
    model = model_class()
    for ours, (_, error) in _unique_names(defaults).items():
        model.add(qiskit_error_channel(error), gates=[ours])
    for ours, (_, by_qubits) in _unique_names(locals_).items():
        for qubits, error in by_qubits.items():
            model.add_local(qiskit_error_channel(error), gates=[ours], qubits=qubits)
    if default_readout is not None:
        model.add_readout_error(readout_confusion(default_readout))
    for qubits, error in local_readouts.items():
        if len(qubits) != 1:
            raise ValueError(f"the readout error on qubits {list(qubits)} is correlated: tyxonq misreads "
                             "each qubit on its own (one 2 x 2 confusion matrix per qubit); give "
                             "per-qubit readout errors")
        model.add_readout_error(readout_confusion(error), qubits=qubits)
    return model


def noise_model_from_backend(backend: Any, model_class: type, **options: Any) -> Any:
    """The tyxonq :class:`~tyxonq.NoiseModel` of a Qiskit ``BackendV2``'s calibration: exactly
    ``qiskit_aer.noise.NoiseModel.from_backend(backend, **options)``, converted.

    Per gate and qubits, a depolarizing error then thermal relaxation over the gate's duration
    (from the gate error, T1, T2 and the duration), and per qubit a readout error. ``options``
    are Aer's: ``gate_error``, ``readout_error``, ``thermal_relaxation`` (bools),
    ``temperature`` (mK), ``gate_lengths``, ``gate_length_units``. Aer's relaxation during
    ``delay`` instructions does not carry over (``Circuit.from_qiskit`` drops delays).
    ``model_class`` is the class to build (``tq.NoiseModel``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> from qiskit.providers.fake_provider import GenericBackendV2
    >>> model = noise_model_from_backend(GenericBackendV2(2, seed=1), tq.NoiseModel)
    >>> noisy = tq.Circuit(2).x(0).cx(0, 1).with_noise(model)
    >>> [op.gate for op in noisy.operations]
    ['x', 'channel', 'cx', 'channel']
    """
    aer = _require_aer()
    if getattr(backend, "version", None) != 2 or not hasattr(backend, "target"):
        raise TypeError(f"{type(backend).__name__} is not a Qiskit BackendV2 (with a target holding its "
                        "calibration)")
    return noise_model_from_qiskit(aer.NoiseModel.from_backend(backend, **options), model_class)
