"""Checks of the arguments every simulator takes: seeds, counts, real scalars and state vectors.

One place, so that every backend and simulator refuses the same bad input with the same
exception type and a message that names the argument. Values held by a backend are read back to
be checked where they can be (a scalar costs well under a microsecond on a CPU); a value being
traced (inside ``jax.jit``, ``torch.func.vmap``) has no value to read, and only its shape and
dtype are checked.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np

from .protocol import ArrayBackend

__all__ = ["checked_seed", "random_generator", "checked_count", "checked_state_vector",
           "readable_scalar", "checked_choice", "checked_sequence", "checked_flag", "NORM_TOLERANCE"]

#: how far from 1 a given state's norm may be (states typed in with a few digits pass)
NORM_TOLERANCE = 1e-6
_SEED_LIMIT = 2 ** 64


def checked_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int in ``[0, 2**64)``, or ``None`` (fresh entropy).

    Examples
    --------
    >>> checked_seed(7), checked_seed(None)
    (7, None)
    >>> checked_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed=-1 must be a non-negative int below 2**64, or None for fresh entropy
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name}={seed!r} must be an int (or None for fresh entropy); got "
                        f"{type(seed).__name__}")
    if not 0 <= int(seed) < _SEED_LIMIT:
        raise ValueError(f"{name}={seed!r} must be a non-negative int below 2**64, or None for fresh "
                         "entropy")
    return int(seed)


def random_generator(seed: Any, name: str = "seed") -> np.random.Generator:
    """A NumPy generator seeded by the checked ``seed``.

    Examples
    --------
    >>> int(random_generator(3).integers(10)) == int(random_generator(3).integers(10))
    True
    """
    return np.random.default_rng(checked_seed(seed, name))


def checked_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum``: a positive int by default (a number of shots,
    samples, trajectories), a non-negative one with ``minimum=0`` (an allowance, an index).

    Examples
    --------
    >>> checked_count(100, "shots")
    100
    >>> checked_count(0, "shots")
    Traceback (most recent call last):
    ...
    ValueError: shots=0 must be a positive int
    >>> checked_count(0, "index", minimum=0)
    0
    """
    kind = {1: "a positive int", 0: "a non-negative int"}.get(minimum, f"an int >= {minimum}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} must be {kind}; got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} must be {kind}")
    return int(value)


def readable_scalar(K: ArrayBackend, value: Any) -> Any:
    """The Python number a scalar array holds, or ``None`` where it cannot be read here (a traced
    value). Host numbers are returned as they are."""
    if isinstance(value, numbers.Number):
        return value
    return K.readable_scalar(value)


def checked_state_vector(K: ArrayBackend, state: Any, num_qubits: int, name: str = "inputs") -> Any:
    """``state`` checked as a normalised state vector of ``num_qubits`` qubits: its shape, its
    dtype (float or complex) and, where its values can be read, its norm (NaN and infinities
    fail it). Returns ``state`` unchanged.

    Examples
    --------
    >>> import numpy as np, tyxonq as tq
    >>> K = tq.get_backend("numpy")
    >>> checked_state_vector(K, np.ones(4) / 2, 2).shape
    (4,)
    >>> checked_state_vector(K, np.ones(4), 2)
    Traceback (most recent call last):
    ...
    ValueError: inputs must be a normalised state; its norm is 2
    """
    on_backend = K.is_array(state) and not isinstance(state, np.ndarray)
    if not on_backend:
        try:
            state = np.asarray(state)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be an array of amplitudes; got {type(state).__name__}") from None
        if state.dtype == object:
            raise TypeError(f"{name} must be an array of numbers; got {type(state).__name__}")
    shape = tuple(K.shape(state)) if on_backend else state.shape
    expected = (2 ** num_qubits,)
    if shape != expected:
        raise ValueError(f"{name} has shape {shape}; {num_qubits} qubits need {expected}")
    kind = np.dtype(K.dtype_name_of(state)).kind if on_backend else state.dtype.kind
    if kind not in "fc":
        raise TypeError(f"{name} dtype {K.dtype_of(state) if on_backend else state.dtype} is not float "
                        "or complex")
    if on_backend:
        norm = readable_scalar(K, K.sqrt(K.sum(K.abs(K.detach(state)) ** 2)))
    else:
        norm = float(np.linalg.norm(state))
    if norm is not None and not abs(float(np.real(norm)) - 1.0) <= NORM_TOLERANCE:
        raise ValueError(f"{name} must be a normalised state; its norm is {float(np.real(norm)):.6g}")
    return state



def checked_choice(value: Any, choices: tuple, name: str) -> Any:
    """``value`` if it is one of ``choices`` (strings compared as strings, anything else by
    identity: an array is never "in" them), else a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> checked_choice("counts", ("counts", "bitstrings"), "format")
    'counts'
    >>> checked_choice(3, ("counts", "bitstrings"), "format")
    Traceback (most recent call last):
    ...
    ValueError: format=3 must be one of ('counts', 'bitstrings')
    """
    if not any(value is choice or (isinstance(value, str) and value == choice) for choice in choices):
        raise ValueError(f"{name}={value!r} must be one of {choices}")
    return value


def checked_sequence(value: Any, name: str, of: str) -> tuple:
    """``value`` as a tuple, if it is a sequence (not a string), else a ``TypeError`` naming
    ``name`` and what it should hold.

    Examples
    --------
    >>> checked_sequence([0, 1], "qubits", "qubit indices")
    (0, 1)
    >>> checked_sequence(None, "qubits", "qubit indices")
    Traceback (most recent call last):
    ...
    TypeError: qubits must be a sequence of qubit indices; got NoneType
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or \
            (isinstance(value, np.ndarray) and value.ndim != 1):
        raise TypeError(f"{name} must be a sequence of {of}; got {type(value).__name__}")
    return tuple(value)


def checked_flag(value: Any, name: str) -> bool:
    """``value`` as a bool, if it is one (``True``, ``False`` or a NumPy bool), else a
    ``TypeError`` naming ``name``: a flag is never read as truthy, so ``"no"``, ``"false"``, ``0``
    or ``None`` are refused rather than taken for an answer.

    Examples
    --------
    >>> import numpy as np
    >>> checked_flag(True, "negate"), checked_flag(np.bool_(False), "negate")
    (True, False)
    >>> checked_flag("no", "final")
    Traceback (most recent call last):
    ...
    TypeError: final='no' must be True or False; got str
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={value!r} must be True or False; got {type(value).__name__}")
    return bool(value)
