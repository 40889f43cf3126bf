"""How a gate becomes tensors of a network: diagonal legs, wire permutations and low-rank splits.

A gate on ``k`` qubits is a ``2^k x 2^k`` matrix, but its tensor in a network can be much smaller
when the structure of the gate allows it (what quimb calls diagonal reduction and split
simplification, here decided once per gate kind, from the gate table, never from values):

* **diagonal legs**: on a qubit where the gate is (block-)diagonal (a control, or any qubit of
  RZ, RZZ, CZ, CPHASE, ...) the wire passes through unchanged and the tensor carries a single leg
  for it, shared with every other tensor on that wire segment (a hyperindex). RZZ becomes a
  ``2 x 2`` tensor, CX a three-leg tensor, RZ a vector;
* **wire permutations**: SWAP is a relabelling of two wires (no tensor at all); iSWAP is that
  relabelling and a diagonal ``2 x 2`` tensor;
* **splits**: ``RXX(θ) = cos(θ/2) I⊗I - i sin(θ/2) X⊗X`` (and RYY) is two three-leg tensors joined
  by a bond of dimension 2: a constant ``[I, X]`` and ``[cos I, -i sin X]``.

A :class:`TensorForm` says how the wires continue and lists the :class:`Piece` s; a piece's
values are a fixed linear function of the gate's matrix (``piece = matrix.flatten() @
extraction``), or a constant, so binding new angles costs one small matrix product per gate kind
and the network's structure never depends on them.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from ...numerics.cache_registry import register_function_cache
from ..operations.gates import CONSTANT_MATRICES, GATES

__all__ = ["Leg", "Piece", "TensorForm", "tensor_form", "dense_form", "diagonal_form", "channel_form",
           "piece_entries", "kraus_legs"]

Leg = tuple[str, int]  # ("in", position) | ("out", position) | ("bond", index) | ("kraus", index)

#: Gates that are a permutation of their wires times a diagonal: wire ``i`` leaves carrying the
#: input wire ``permutation[i]``.
WIRE_PERMUTATIONS = {"swap": (1, 0), "iswap": (1, 0)}

#: Gates that split into two three-leg tensors with a bond of dimension 2: ``U = sum_k A_k ⊗ B_k``
#: with the constant factors ``A = [I, P]`` (orthogonal: ``Tr(A_j^† A_k) = 2 δ_jk``).
SPLITS = {"rxx": "x", "ryy": "y"}


@dataclass(frozen=True, eq=False)
class Piece:
    """One tensor of a gate's form: its legs, and how its values follow from the gate's matrix.

    ``extraction`` is a ``(4^k, size)`` matrix with ``piece = matrix.reshape(-1) @ extraction``
    (``None``: the piece is the matrix itself, legs outputs then inputs); ``constant`` holds the
    values of a piece that does not depend on the matrix (a split's constant factor).
    """

    legs: tuple[Leg, ...]
    extraction: np.ndarray | None = None
    constant: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class TensorForm:
    """A gate's tensors: where each of its wires continues after it, and its pieces.

    ``outputs[p]`` is ``("in", j)`` when qubit position ``p`` leaves carrying the wire that came
    in at position ``j`` (diagonal legs: ``j == p``; permutations), else ``("out", p)``: a new leg.
    """

    outputs: tuple[Leg, ...]
    pieces: tuple[Piece, ...]


def piece_entries(legs: tuple[Leg, ...], num_qubits: int,
                  outputs: tuple[Leg, ...]) -> np.ndarray:
    """For every entry of a piece (C order over ``legs``), the flat index of the matrix entry it
    reads: rows are the output wires' bits, columns the input wires' bits.

    Examples
    --------
    >>> piece_entries((("in", 0), ("in", 1)), 2, (("in", 0), ("in", 1))).tolist()  # a diagonal
    [0, 5, 10, 15]
    """
    k = num_qubits
    entries = []
    for values in itertools.product((0, 1), repeat=len(legs)):
        bits = dict(zip(legs, values))
        column = [bits[("in", p)] for p in range(k)]
        row = [column[j] if kind == "in" else bits[("out", p)]
               for p, (kind, j) in enumerate(outputs)]
        entries.append(int("".join(map(str, row)), 2) * 2 ** k + int("".join(map(str, column)), 2))
    return np.asarray(entries)


def _selection(entries: np.ndarray, k: int) -> np.ndarray:
    extraction = np.zeros((4 ** k, len(entries)), dtype=complex)
    extraction[entries, np.arange(len(entries))] = 1.0
    return extraction


@register_function_cache
@functools.lru_cache(maxsize=None)
def dense_form(num_qubits: int) -> TensorForm:
    """The form of any ``k``-qubit matrix: one piece, the matrix itself (outputs, then inputs)."""
    k = num_qubits
    legs = tuple(("out", p) for p in range(k)) + tuple(("in", p) for p in range(k))
    return TensorForm(tuple(("out", p) for p in range(k)), (Piece(legs),))


@register_function_cache
@functools.lru_cache(maxsize=None)
def diagonal_form(num_qubits: int) -> TensorForm:
    """The form of a diagonal ``k``-qubit matrix: one piece, its diagonal (one leg per qubit)."""
    return _diagonal_form(num_qubits, tuple(range(num_qubits)))


def _diagonal_form(k: int, diagonal_on: tuple[int, ...]) -> TensorForm:
    dense = tuple(p for p in range(k) if p not in diagonal_on)
    outputs = tuple(("in", p) if p in diagonal_on else ("out", p) for p in range(k))
    legs = (tuple(("in", p) for p in diagonal_on) + tuple(("out", p) for p in dense)
            + tuple(("in", p) for p in dense))
    return TensorForm(outputs, (Piece(legs, _selection(piece_entries(legs, k, outputs), k)),))


def _permutation_form(k: int, permutation: tuple[int, ...]) -> TensorForm:
    outputs = tuple(("in", j) for j in permutation)
    legs = tuple(("in", p) for p in range(k))
    return TensorForm(outputs, (Piece(legs, _selection(piece_entries(legs, k, outputs), k)),))


def _split_form(pauli: str) -> TensorForm:
    factors = np.stack([CONSTANT_MATRICES["i"], CONSTANT_MATRICES[pauli]])  # A_k, (2, 2, 2)
    # B_k[o1, i1] = 1/2 sum_{o0, i0} conj(A_k[o0, i0]) U[(o0, o1), (i0, i1)]
    extraction = np.zeros((16, 8), dtype=complex)
    for k, o0, i0, o1, i1 in itertools.product((0, 1), repeat=5):
        row, column = 2 * o0 + o1, 2 * i0 + i1
        extraction[4 * row + column, 4 * k + 2 * o1 + i1] += 0.5 * np.conj(factors[k, o0, i0])
    left = Piece((("bond", 0), ("out", 0), ("in", 0)), constant=factors.reshape(-1))
    right = Piece((("bond", 0), ("out", 1), ("in", 1)), extraction)
    return TensorForm((("out", 0), ("out", 1)), (left, right))


def _drop_trivial(form: TensorForm, gate: str) -> TensorForm:
    """Without pieces that are all ones for a constant gate (SWAP's, the identity's)."""
    matrix = CONSTANT_MATRICES.get(gate)
    if matrix is None:
        return form
    kept = tuple(piece for piece in form.pieces
                 if piece.extraction is None
                 or not np.allclose(matrix.reshape(-1) @ piece.extraction, 1.0)
                 or not np.allclose(matrix.conj().T.reshape(-1) @ piece.extraction, 1.0))
    return TensorForm(form.outputs, kept)


@register_function_cache
@functools.lru_cache(maxsize=None)
def tensor_form(gate: str, num_qubits: int) -> TensorForm:
    """The :class:`TensorForm` of a gate kind on ``num_qubits`` qubits (the same for its adjoint).

    Examples
    --------
    >>> [piece.legs for piece in tensor_form("cx", 2).pieces]
    [(('in', 0), ('out', 1), ('in', 1))]
    >>> tensor_form("rzz", 2).outputs, tensor_form("swap", 2).pieces
    ((('in', 0), ('in', 1)), ())
    """
    spec = GATES[gate]
    if gate in WIRE_PERMUTATIONS:
        form = _permutation_form(num_qubits, WIRE_PERMUTATIONS[gate])
    elif gate in SPLITS:
        form = _split_form(SPLITS[gate])
    elif spec.diagonal_on:
        form = _diagonal_form(num_qubits, spec.diagonal_on)
    else:
        form = dense_form(num_qubits)
    return _drop_trivial(form, gate)


def kraus_legs(num_kraus: int) -> int:
    """Legs of size 2 that index ``num_kraus`` Kraus operators (the set padded with zero operators
    to a power of two)."""
    return (num_kraus - 1).bit_length()


@register_function_cache
@functools.lru_cache(maxsize=None)
def channel_form(num_qubits: int, num_kraus: int, diagonal: bool) -> TensorForm:
    """The form of a channel on one side (ket or bra) of a density-matrix network.

    One piece: the stacked Kraus operators, legs ``("kraus", b)`` (the Kraus index, shared with
    the other side's piece: ``sum_a K_a rho K_a^dagger``) then the operator's legs, diagonal legs
    when every Kraus operator is diagonal. Its values are the padded stack ``(2^m, 2^k, 2^k)``
    flattened, times ``extraction``.

    Examples
    --------
    >>> [piece.legs for piece in channel_form(1, 4, False).pieces]
    [(('kraus', 0), ('kraus', 1), ('out', 0), ('in', 0))]
    >>> channel_form(1, 2, True).outputs
    (('in', 0),)
    """
    k, m = num_qubits, kraus_legs(num_kraus)
    base = diagonal_form(k) if diagonal else dense_form(k)
    legs = tuple(("kraus", b) for b in range(m)) + base.pieces[0].legs
    extraction = None
    if base.pieces[0].extraction is not None:
        extraction = np.kron(np.eye(2 ** m), base.pieces[0].extraction)
    return TensorForm(base.outputs, (Piece(legs, extraction),))
