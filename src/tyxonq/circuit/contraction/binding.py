"""Binding: the arrays of a network's leaves for given parameter values, on the active backend.

This is the evaluation path: every call goes through the backend protocol (no host round-trips,
no ``.item()``), so gradients and ``vmap`` flow from the results back to the angles. Gates of one
kind are built in one vectorised call; the pieces of their tensor forms are one matrix product
per kind and piece (:func:`piece_values`); constants are converted once per backend.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Sequence

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ...numerics.constants import backend_constant
from ...numerics.protocol import ArrayBackend
from ..operations.gates import CONSTANT_MATRICES, gate_matrices, gate_matrix
from ..operations.operation import Operation
from .network import Leaf, Network, operation_form
from .tensor_forms import Piece, TensorForm, dense_form, diagonal_form, kraus_legs

__all__ = ["Binder", "LeafRecipes", "gate_kinds", "bind_leaves", "gate_leaves", "selected_entries",
           "slice_legs", "resolved", "piece_extraction"]


@register_function_cache
@functools.lru_cache(maxsize=4096)
def selected_entries(num_legs: int, fixed: tuple[tuple[int, int], ...]) -> np.ndarray | None:
    """Flat indices (C order over ``num_legs`` legs of size 2) of the entries whose legs at the
    ``fixed`` positions have the given values; ``None`` when nothing is fixed.

    Examples
    --------
    >>> selected_entries(2, ((0, 1),)).tolist()
    [2, 3]
    """
    if not fixed:
        return None
    wanted = dict(fixed)
    return np.asarray([i for i, values in enumerate(itertools.product((0, 1), repeat=num_legs))
                       if all(values[p] == v for p, v in wanted.items())])


def slice_legs(K: ArrayBackend, array: Any, num_legs: int, fixed: Sequence[tuple[int, int]]) -> Any:
    """``array`` (``2^num_legs`` entries, C order over its legs) with the ``fixed`` legs sliced
    out; one three-dimensional view per fixed leg, so any number of legs stays within
    ``max_ndim``."""
    remaining = num_legs
    for position, value in sorted(fixed, reverse=True):
        left, right = 2 ** position, 2 ** (remaining - position - 1)
        array = K.reshape(K.reshape(array, (left, 2, right))[:, value, :], (left * right,))
        remaining -= 1
    return array


def resolved(fixed: tuple[tuple[int, Any], ...], bits: Sequence[int]) -> tuple[tuple[int, int], ...]:
    return tuple((position, bits[value[1]] if isinstance(value, tuple) else value)
                 for position, value in fixed)


@register_function_cache
@functools.lru_cache(maxsize=4096)
def piece_extraction(piece: Piece, num_qubits: int, fixed: tuple[tuple[int, int], ...]) -> np.ndarray | None:
    """The matrix taking a gate's flattened matrix to the piece's remaining entries (``None``:
    the piece is the matrix itself)."""
    entries = selected_entries(len(piece.legs), fixed)
    if piece.extraction is None:
        return None if entries is None else np.eye(4 ** num_qubits, dtype=complex)[:, entries]
    return piece.extraction if entries is None else piece.extraction[:, entries]


def _extraction_constant(K: ArrayBackend, piece: Piece, num_qubits: int,
                         fixed: tuple[tuple[int, int], ...]) -> Any:
    return backend_constant(K, ("extraction", piece, num_qubits, fixed),
                            lambda: piece_extraction(piece, num_qubits, fixed))


def gate_kinds(operations: Sequence[Operation]) -> tuple[dict[tuple[str, bool], list[int]], dict[int, int]]:
    """The parametrised gates (not ``unitary``) by kind ``(gate, dagger)``, in circuit order, and
    each one's row in its kind's batch (its rank among them): how :class:`Binder` batches them.

    Examples
    --------
    >>> ops = [Operation("rx", (0,), (0.1,)), Operation("h", (1,)), Operation("rx", (1,), (0.2,))]
    >>> gate_kinds(ops)
    ({('rx', False): [0, 2]}, {0: 0, 2: 1})
    """
    kinds: dict[tuple[str, bool], list[int]] = {}
    rows: dict[int, int] = {}
    for index, op in enumerate(operations):
        if op.params and op.gate != "unitary":
            members = kinds.setdefault((op.gate, op.dagger), [])
            rows[index] = len(members)
            members.append(index)
    return kinds, rows


class Binder:
    """Leaf arrays of networks of one circuit: the matrices of every parametrised gate of a kind are
    built in one call (when a network first needs that kind), pieces extracted once per kind and
    form, and shared by every network bound through it (the terms of a Hamiltonian). A gate's row
    in its kind's batch is its rank among the circuit's gates of that kind: structural.
    ``columns`` gives every kind's angles (``(G, p)``, host or backend) in place of the
    operations' own (a compiled result's new angles); ``numbers_only``: the operations' angles
    are known to be plain host numbers (nothing to look for among them)."""

    def __init__(self, K: ArrayBackend, operations: Sequence[Operation], inputs: Any = None,
                 columns: dict[tuple[str, bool], Any] | None = None, numbers_only: bool = False) -> None:
        self.K = K
        self.operations = operations
        self.inputs = inputs
        self.columns = columns  # per kind, its gates' angles (G, p): instead of the operations' own
        self.numbers_only = numbers_only
        self._kinds: dict[tuple[str, bool], list[int]] | None = None
        self._rows: dict[int, int] = {}
        self._matrices: dict[tuple[str, bool], Any] = {}
        self._values: dict[tuple, Any] = {}

    def row(self, index: int) -> int:
        """Operation ``index``'s row in its kind's batch."""
        self.kinds()
        return self._rows[index]

    def kinds(self) -> dict[tuple[str, bool], list[int]]:
        """Parametrised gates (not ``unitary``) by ``(gate, dagger)``, in circuit order."""
        if self._kinds is None:
            self._kinds, self._rows = gate_kinds(self.operations)
        return self._kinds

    def matrices(self, gate: str, dagger: bool) -> Any:
        """Every gate of a kind's matrix, shape ``(G, 2^k, 2^k)``, in one vectorised call."""
        key = (gate, dagger)
        if key not in self._matrices:
            K, operations = self.K, self.operations
            if self.columns is not None:
                self._matrices[key] = gate_matrices(K, gate, self.columns[key], dagger)
                return self._matrices[key]
            params = [operations[i].params for i in self.kinds()[key]]
            if self.numbers_only or all(isinstance(p, (int, float, np.number)) for ps in params for p in ps):
                # one flat list: NumPy reads 500 floats ~3x faster than 500 one-tuples
                flat = [p for ps in params for p in ps]
                columns = np.asarray(flat, dtype=np.float64).reshape(len(params), -1)
            else:
                columns = K.stack([K.stack([K.asarray(p, K.real_dtype) for p in ps]) for ps in params])
            self._matrices[key] = gate_matrices(K, gate, columns, dagger)
        return self._matrices[key]

    def piece_values(self, gate: str, dagger: bool, k: int, piece: Piece, piece_number: int,
                     fixed: tuple[tuple[int, int], ...]) -> Any:
        """A piece of every gate of a kind: ``(G, entries)``, or the matrices themselves."""
        key = (gate, dagger, piece_number, fixed)
        if key not in self._values:
            K, matrices = self.K, self.matrices(gate, dagger)
            extraction = piece_extraction(piece, k, fixed)
            self._values[key] = matrices if extraction is None else K.matmul(
                K.reshape(matrices, (K.shape(matrices)[0], 4 ** k)), _extraction_constant(K, piece, k, fixed))
        return self._values[key]

    def gate(self, index: int, piece_number: int, fixed: tuple[tuple[int, int], ...]) -> Any:
        """Piece ``piece_number`` of operation ``index``'s form, with legs ``fixed``."""
        K, op = self.K, self.operations[index]
        k = len(op.qubits)
        piece = operation_form(op).pieces[piece_number]
        if op.params and op.gate != "unitary":
            return self.piece_values(op.gate, op.dagger, k, piece, piece_number, fixed)[self.row(index)]
        extraction = piece_extraction(piece, k, fixed)
        if not op.params:  # a constant gate: its pieces are constants too
            return backend_constant(K, ("piece", op.gate, op.dagger, k, piece_number, fixed), lambda: (
                _host_matrix(op).reshape(-1) @ extraction if extraction is not None
                else _host_matrix(op)))
        matrix = gate_matrix(K, op.gate, op.params, op.dagger)  # a unitary: dense
        if extraction is None:
            return matrix
        return K.reshape(K.matmul(K.reshape(matrix, (1, 4 ** k)), _extraction_constant(K, piece, k, fixed)),
                         (extraction.shape[1],))

    def channel(self, index: int, fixed: tuple[tuple[int, int], ...]) -> Any:
        """Channel ``index``'s piece: its Kraus operators, padded with zero operators to ``2^m``,
        flattened (C order over the Kraus legs then the operator's legs), legs ``fixed`` sliced."""
        K, op = self.K, self.operations[index]
        key = ("channel", index)
        if key not in self._values:
            channel = op.channel
            stack = channel.stacked(K)
            padded = 2 ** kraus_legs(channel.num_kraus)
            if padded > channel.num_kraus:
                d = 2 ** len(op.qubits)
                stack = K.concatenate([stack, K.zeros((padded - channel.num_kraus, d, d),
                                                      K.dtype_of(stack))])
            values = K.reshape(stack, (-1,))
            form = operation_form(op)
            extraction = form.pieces[0].extraction
            if extraction is not None:
                values = K.reshape(K.matmul(K.reshape(values, (1, -1)), backend_constant(
                    K, ("channel-extraction", form), lambda: extraction)), (-1,))
            self._values[key] = values
        values = self._values[key]
        if not fixed:
            return values
        return slice_legs(K, values, len(operation_form(op).pieces[0].legs), fixed)

    def leaf(self, leaf: Leaf, operators: Sequence[Any] = (), operator_sizes: Sequence[int] = (),
             bits: Sequence[int] = ()) -> Any:
        """One leaf's array (C order over its legs)."""
        K = self.K
        fixed = resolved(leaf.fixed, bits) if leaf.fixed else ()
        if leaf.source == "gate":
            tensor = self.gate(leaf.index, leaf.piece, fixed)
        elif leaf.source == "operator":
            tensor = _operator(K, operators[leaf.index], operator_sizes[leaf.index], bool(leaf.value), fixed)
        elif leaf.source == "channel":
            tensor = self.channel(leaf.index, fixed)
        elif leaf.source == "input":
            tensor = slice_legs(K, self.inputs, len(leaf.legs) + len(fixed), fixed) if fixed else self.inputs
        else:
            tensor = _constant_piece(K, leaf, self.operations, fixed)
        return K.conj(tensor) if leaf.conj else tensor

    def bind(self, network: Network, operators: Sequence[Any] = (), operator_sizes: Sequence[int] = (),
             bits: Sequence[int] = ()) -> list[Any]:
        """One array per leaf of ``network``, in leaf order (C order over the leaf's legs).

        ``operators`` are the observables' matrices, ``operator_sizes`` their qubit counts, and
        ``bits`` the requested bits of an amplitude (what ``("bit", q)`` fixed legs take). Follows
        the network's :class:`LeafRecipes` (made once per network: the network belongs to one
        circuit structure): a parametrised gate's piece is a row of its kind's batch (conjugated
        once per batch for the bra side), a constant one a backend constant.
        """
        recipes = network.cache.get("recipes")
        if recipes is None:
            recipes = network.cache["recipes"] = LeafRecipes(network, self.operations)
        if self._kinds is None:
            self._kinds, self._rows = recipes.kinds, recipes.rows
        K = self.K
        batches: list[Any] = [None] * len(recipes.batches)
        arrays = []
        for recipe in recipes.recipes:
            if recipe[0] == "row":
                _, slot, row = recipe
                batch = batches[slot]
                if batch is None:
                    key, conj = recipes.batches[slot]
                    batch = self.piece_values(*key)
                    batch = batches[slot] = K.conj(batch) if conj else batch
                arrays.append(batch[row])
            elif recipe[0] == "constant":
                _, key, make = recipe
                arrays.append(backend_constant(K, key, make))
            else:
                arrays.append(self.leaf(recipe[1], operators, operator_sizes, bits))
        return arrays


class LeafRecipes:
    """How each leaf of a network is bound, decided once per network. Each recipe is one of

    - ``("row", slot, row)``: row ``row`` of batch ``slot``, where ``batches[slot]`` is
      ``(key, conj)``: :meth:`Binder.piece_values` ``(*key)``, conjugated or not;
    - ``("constant", key, make)``: a backend constant, conjugation included;
    - ``("leaf", leaf)``: :meth:`Binder.leaf` (observables, channels, inputs, ``unitary`` gates,
      amplitude bits).

    ``kinds`` and ``rows`` are :meth:`Binder.kinds`'s, for the circuit structure."""

    def __init__(self, network: Network, operations: Sequence[Operation]) -> None:
        self.kinds, self.rows = gate_kinds(operations)
        self.batches: list[tuple[tuple, bool]] = []
        self._slots: dict[tuple, int] = {}
        self.recipes = [self._recipe(leaf, operations) for leaf in network.leaves]

    def _recipe(self, leaf: Leaf, operations: Sequence[Operation]) -> tuple:
        if leaf.source != "gate" or any(isinstance(value, tuple) for _, value in leaf.fixed):
            return ("leaf", leaf)
        op = operations[leaf.index]
        if op.gate == "unitary":
            return ("leaf", leaf)
        k, fixed = len(op.qubits), tuple(leaf.fixed)
        piece = operation_form(op).pieces[leaf.piece]
        if op.params:
            batch = ((op.gate, op.dagger, k, piece, leaf.piece, fixed), leaf.conj)
            if batch not in self._slots:
                self._slots[batch] = len(self.batches)
                self.batches.append(batch)
            return ("row", self._slots[batch], self.rows[leaf.index])
        host = _host_matrix(op)
        extraction = piece_extraction(piece, k, fixed)
        values = host.reshape(-1) @ extraction if extraction is not None else host
        return ("constant", ("piece", op.gate, op.dagger, k, leaf.piece, fixed, leaf.conj),
                (lambda: values.conj()) if leaf.conj else (lambda: values))


def gate_leaves(network: Network) -> list[int]:
    """The operations whose pieces a network's leaves hold."""
    return sorted({leaf.index for leaf in network.leaves if leaf.source == "gate"})


def _host_matrix(op: Operation) -> np.ndarray:
    matrix = CONSTANT_MATRICES[op.gate]
    return matrix.conj().T if op.dagger else matrix


def _operator(K: ArrayBackend, matrix: Any, num_qubits: int, diagonal: bool,
              fixed: tuple[tuple[int, int], ...]) -> Any:
    form: TensorForm = diagonal_form(num_qubits) if diagonal else dense_form(num_qubits)
    extraction = piece_extraction(form.pieces[0], num_qubits, fixed)
    if extraction is None:
        return matrix
    flat = K.reshape(matrix, (1, 4 ** num_qubits))
    constant = _extraction_constant(K, form.pieces[0], num_qubits, fixed)
    return K.reshape(K.matmul(flat, constant), (extraction.shape[1],))


def _constant_piece(K: ArrayBackend, leaf: Leaf, operations: Sequence[Operation],
                    fixed: tuple[tuple[int, int], ...]) -> Any:
    if leaf.source == "factor":
        op = operations[leaf.index]
        piece = operation_form(op).pieces[leaf.piece]
        key = ("factor", op.gate, leaf.piece, fixed)
        values, count = piece.constant, len(piece.legs)
    elif leaf.source == "identity":
        key, values, count = ("identity", fixed), CONSTANT_MATRICES["i"].reshape(-1), 2
    else:  # a basis vector
        value = leaf.value
        key, count = ("basis", value, fixed), 1
        values = CONSTANT_MATRICES["_ket1" if value else "_ket0"]
    entries = selected_entries(count, fixed)
    return backend_constant(K, key, lambda: values if entries is None else values[entries])


def bind_leaves(K: ArrayBackend, network: Network, operations: Sequence[Operation], inputs: Any = None,
                operators: Sequence[Any] = (), operator_sizes: Sequence[int] = (),
                bits: Sequence[int] = ()) -> list[Any]:
    """One array per leaf of ``network``, in leaf order: :meth:`Binder.bind` for one network."""
    return Binder(K, operations, inputs).bind(network, operators, operator_sizes, bits)
