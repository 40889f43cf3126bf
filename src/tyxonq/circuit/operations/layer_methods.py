"""Appending many gates of one kind in one call, from arrays of qubits and parameters.

Building a circuit gate by gate costs a Python method call, a qubit check and an angle check per
gate (about 2 us). :meth:`LayerMethods.layer` checks a whole layer at once (the qubits as one
integer array, the angles as one float array, or a backend array checked once and split in one
call) and makes the operations directly: what a variational ansatz built from a parameter vector
needs, and what :mod:`tyxonq.templates` uses.
"""

from __future__ import annotations

from typing import Any, Sequence, TypeVar

import numpy as np

from ...numerics import get_backend
from .gates import GATES
from .operation import Operation, validate_angle

__all__ = ["LayerMethods", "checked_angle_rows"]

_NUMBERS = (int, float, np.integer, np.floating)


def _plain(entry: Any) -> bool:
    """A plain number, or a row of them (not bools, tensors or traced values)."""
    if isinstance(entry, (list, tuple)):
        return all(map(_plain, entry))
    return isinstance(entry, _NUMBERS) and not isinstance(entry, (bool, np.bool_))


C = TypeVar("C", bound="LayerMethods")


class LayerMethods:
    """Mixin: :meth:`layer`; the circuit supplies ``_num_qubits``, ``_operations``,
    ``_condition``, ``_dynamic_count`` and :meth:`_extend`."""

    def layer(self: C, gate: str, qubits: Sequence[Any], params: Any = None) -> C:
        """Append ``gate`` once per entry of ``qubits``, in order, with the matching ``params``.

        Equal to calling the gate method in a loop, at a fraction of the cost per gate (checks
        run once per layer, on arrays).

        Parameters
        ----------
        gate : str
            A gate of the gate table (``"ry"``, ``"cz"``, ``"rzz"``, ``"u"``, ``"exp:XX"``, ...;
            not ``"unitary"``).
        qubits : sequence
            One qubit per gate for a one-qubit gate (``range(n)``), else one row of ``k``
            distinct qubits per gate (``[(0, 1), (2, 3)]`` or an ``(m, k)`` integer array).
        params : array, optional
            The angles: ``m`` numbers for a gate with one parameter, an ``(m, p)`` array for
            ``p`` parameters; a NumPy array, a list, or an array of the active backend (one
            gradient-tracked tensor, split in one call: the gradient reaches it).

        Returns
        -------
        The circuit, for chaining.

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> c = tq.Circuit(4).layer("ry", range(4), np.full(4, 0.3)).layer("cz", [(0, 1), (2, 3)])
        >>> [op.gate for op in c.operations]
        ['ry', 'ry', 'ry', 'ry', 'cz', 'cz']
        >>> d = tq.Circuit(4)
        >>> for q in range(4):
        ...     d = d.ry(q, 0.3)
        >>> d = d.cz(0, 1).cz(2, 3)
        >>> bool(np.allclose(c.state(), d.state()))
        True
        """
        if gate == "unitary":
            raise ValueError("layer: append unitaries one by one with unitary(*qubits, matrix=U)")
        try:
            spec = GATES[gate]
        except (KeyError, TypeError):
            spec = None
        if spec is None or not spec.num_qubits:
            raise ValueError(f"layer: unknown gate {gate!r}; expected one of the gate methods' names "
                             "(ry, cz, rzz, ...)")
        rows = self._layer_qubits(gate, qubits, spec.num_qubits)
        values, plain = checked_angle_rows(f"layer({gate!r})", params, len(rows), spec.param_names)
        make, condition = Operation.gate_operation, self._condition
        self._extend([make(gate, on, angles, condition) for on, angles in zip(rows, values)], plain)
        return self

    def _layer_qubits(self, gate: str, qubits: Sequence[Any], k: int) -> list[tuple[int, ...]]:
        """The qubit rows of a layer, checked at once."""
        if isinstance(qubits, range) and k == 1 and qubits.step > 0 and 0 <= qubits.start \
                and qubits.stop <= self._num_qubits:
            return [(q,) for q in qubits]
        if (rows := _python_rows(gate, qubits, k, self._num_qubits)) is not None:
            return rows
        what = "qubit" if k == 1 else f"row of {k} qubits"
        try:
            array = np.asarray(qubits if not isinstance(qubits, range) else list(qubits))
        except ValueError:  # rows of different lengths
            raise ValueError(f"layer({gate!r}): {gate} acts on {k} qubit(s): give one {what} per gate; "
                             "got rows of different lengths") from None
        if array.size == 0:
            return []
        if array.dtype.kind not in "iu":
            raise TypeError(f"layer({gate!r}): qubits must be ints; got {array.dtype} values")
        if array.ndim == 1 and k == 1:
            array = array[:, None]
        if array.ndim != 2 or array.shape[1] != k:
            raise ValueError(f"layer({gate!r}): {gate} acts on {k} qubit(s): give one {what} per gate; "
                             f"got shape {array.shape}")
        n = self._num_qubits
        if array.min() < 0 or array.max() >= n:
            bad = int(array[(array < 0) | (array >= n)][0])
            raise ValueError(f"layer({gate!r}): qubit index {bad} is out of range; this circuit has "
                             f"{n} qubit(s), indices 0..{n - 1}")
        if k > 1:
            ordered = np.sort(array, axis=1)
            repeated = np.nonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))[0]
            if repeated.size:
                raise ValueError(f"layer({gate!r}): qubits {tuple(array[repeated[0]].tolist())} repeat a "
                                 "qubit; each must be distinct")
        return [tuple(row) for row in array.tolist()]

    def _extend(self, operations: list[Operation], plain: bool) -> None:  # pragma: no cover - the circuit's
        raise NotImplementedError


def _python_rows(gate: str, qubits: Any, k: int, n: int) -> list[tuple[int, ...]] | None:
    """The qubit rows of a layer given as a list or tuple of Python ints (one per gate) or of
    tuples of ``k`` distinct ones, all in range, checked in Python (25 pairs: ~3 us, against ~30
    us as one NumPy array); ``None`` for anything else, which the array checks take (and name).
    A bool is refused here (an array would take it for an int)."""
    if type(qubits) is not list and type(qubits) is not tuple:
        return None
    rows = []
    append = rows.append
    for row in qubits:
        if k == 1 and type(row) is int:
            row = (row,)
        elif type(row) is not tuple or len(row) != k:
            return _no_bools(gate, row)
        for qubit in row:
            if type(qubit) is not int or qubit < 0 or qubit >= n:
                return _no_bools(gate, qubit)
        if k > 1 and len(set(row)) != k:
            return None
        append(row)
    return rows


def _no_bools(gate: str, entry: Any) -> None:
    """``None`` (the array checks take over), or the refusal of a bool among the qubits."""
    entries = entry if isinstance(entry, (list, tuple)) else (entry,)
    if any(isinstance(value, (bool, np.bool_)) for value in entries):
        raise TypeError(f"layer({gate!r}): qubits must be ints; got a bool")
    return None


def checked_angle_rows(where: str, params: Any, count: int,
                       names: tuple[str, ...]) -> tuple[list[tuple], bool]:
    """One tuple of ``len(names)`` angles for each of ``count`` gates, checked at once (``where``
    names the call in messages): numbers, a NumPy array, or one backend array split in one call;
    and whether every angle is a Python ``float`` (what
    :meth:`~tyxonq.circuit.simulator.SimulatorBase.holds_only_numbers` counts), known from the way
    they were read rather than by looking at each."""
    p = len(names)
    if not p:
        if params is not None:
            raise ValueError(f"{where}: the gate has no parameters; got params")
        return [()] * count, True
    if params is None:
        raise TypeError(f"{where}: give params, {count} x {p} angle(s) ({', '.join(names)})")
    expected = (count,) if p == 1 else (count, p)
    if isinstance(params, (list, tuple)) and not all(map(_plain, params)):
        return _entries(where, list(params), count, p, names), False  # traced values, tensors
    if isinstance(params, (np.ndarray, list, tuple)):
        array = np.asarray(params)
        if array.dtype.kind == "O":
            return _entries(where, list(params), count, p, names), False
        if array.dtype.kind not in "iuf":
            raise TypeError(f"{where}: params must be real numbers; got {array.dtype} values")
        _check_shape(where, array.shape, expected)
        array = array.astype(np.float64, copy=False)
        if not np.isfinite(array).all():
            raise ValueError(f"{where}: params hold a value that is not finite; "
                             "expected real angles")
        return _rows(array, count, p), True
    K = get_backend()
    if not K.is_array(params):  # batched lanes, or any other sequence: entry by entry
        return _entries(where, list(params), count, p, names), False
    _check_shape(where, tuple(K.shape(params)), expected)
    if not K.is_floating(params):
        raise TypeError(f"{where}: params must be a real floating array; got dtype "
                        f"{K.dtype_of(params)}")
    untracked = K.host_readable(params)
    if untracked or K.host_readable(values := K.detach(params)):  # a traced array has no values to check
        host = np.asarray(K.to_numpy(params if untracked else values), dtype=np.float64)
        if not np.isfinite(host).all():
            raise ValueError(f"{where}: params hold a value that is not finite; "
                             "expected real angles")
        if untracked and not K.compiling():
            # nothing tracks these values: plain floats, as NumPy's, so that no route converts
            # hundreds of backend scalars again (PyTorch: ~2 us an angle)
            return _rows(host, count, p), True
    if p == 1 and len(K.shape(params)) == 2:
        params = K.reshape(params, (count,))
    entries = list(params)  # one split (torch: unbind) rather than one index per angle
    return ([(entry,) for entry in entries] if p == 1 else [tuple(entry) for entry in entries]), False


def _rows(array: np.ndarray, count: int, p: int) -> list[tuple]:
    """A float array's ``count`` rows of ``p`` angles as tuples of Python floats."""
    if p == 1:  # no inner lists made and converted
        return [(value,) for value in array.reshape(-1).tolist()]
    return [tuple(row) for row in array.reshape(count, p).tolist()]


def _entries(where: str, entries: list, count: int, p: int, names: tuple[str, ...]) -> list[tuple]:
    """Angles that are not one array (traced values, backend scalars in a list), checked one
    by one as the gate methods check them."""
    if len(entries) != count:
        raise ValueError(f"{where}: {len(entries)} parameter entries for {count} gates")
    rows = [(entry,) for entry in entries] if p == 1 else [tuple(entry) for entry in entries]
    for row in rows:
        if len(row) != p:
            raise ValueError(f"{where}: each gate takes {p} angle(s) ({', '.join(names)})")
    return [tuple(validate_angle(value, where, name) for value, name in zip(row, names)) for row in rows]


def _check_shape(where: str, shape: tuple, expected: tuple) -> None:
    if shape != expected and not (len(expected) == 1 and shape == expected + (1,)):
        raise ValueError(f"{where}: params of shape {shape} for {expected[0]} gate(s); expected "
                         f"shape {expected}")
