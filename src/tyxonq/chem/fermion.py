"""Fermionic operators: sums of products of creation and annihilation operators.

A term is a tuple of ``(mode, action)`` pairs read left to right, ``action`` 1 for a creation
operator ``a^†_mode`` and 0 for an annihilation operator ``a_mode`` (OpenFermion's convention,
so its ``FermionOperator.terms`` convert one to one). ``"3^ 1"`` is ``a^†_3 a_1``.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Iterator

import numpy as np

__all__ = ["FermionOperator", "number_operator", "spin_z", "spin_squared", "spin_orbital"]

Term = tuple[tuple[int, int], ...]

#: spin-orbital orders: ``"blocked"`` puts every alpha orbital before every beta orbital (Qiskit
#: Nature, ffsim, TenCirChem), ``"interleaved"`` alternates them (OpenFermion, PennyLane)
ORDERS = ("blocked", "interleaved")


def spin_orbital(orbital: int, spin: int, n_orbitals: int, order: str = "blocked") -> int:
    """The mode of spatial ``orbital`` with ``spin`` (0 alpha, 1 beta).

    Examples
    --------
    >>> spin_orbital(1, 1, 3), spin_orbital(1, 1, 3, order="interleaved")
    (4, 3)
    """
    if order not in ORDERS:
        raise ValueError(f"order={order!r} is not a spin-orbital order; expected one of {ORDERS}")
    return orbital + spin * n_orbitals if order == "blocked" else 2 * orbital + spin


class FermionOperator:
    """A linear combination of products of fermionic ladder operators.

    Parameters
    ----------
    term : str, tuple or None
        ``"3^ 1"``, or ``((3, 1), (1, 0))``; ``None`` or ``""``/``()`` is the identity; omitted
        with ``coefficient`` also omitted: the zero operator.
    coefficient : number
        The term's coefficient.

    Examples
    --------
    >>> hop = FermionOperator("1^ 0", 0.5) + FermionOperator("0^ 1", 0.5)
    >>> hop.dagger() == hop
    True
    >>> FermionOperator("0 0^").normal_ordered()  # a_0 a_0^† = 1 - a_0^† a_0
    FermionOperator({(): 1.0, ((0, 1), (0, 0)): -1.0})
    """

    def __init__(self, term: str | Iterable | None = None, coefficient: Any = 1.0) -> None:
        self.terms: dict[Term, complex | float] = {}
        if term is None and coefficient == 1.0:
            return
        self.terms[_parsed_term(term)] = _checked_coefficient(coefficient)

    @classmethod
    def from_terms(cls, terms: dict) -> FermionOperator:
        """From a mapping ``{term: coefficient}`` (OpenFermion's ``.terms``)."""
        operator = cls()
        for term, coefficient in terms.items():
            key = _parsed_term(term)
            operator.terms[key] = operator.terms.get(key, 0) + _checked_coefficient(coefficient)
        return operator

    # -- shape ---------------------------------------------------------------------------
    @property
    def n_modes(self) -> int:
        """One more than the largest mode any term acts on (0 for a constant)."""
        return 1 + max((mode for term in self.terms for mode, _ in term), default=-1)

    def __iter__(self) -> Iterator[tuple[Term, complex | float]]:
        return iter(self.terms.items())

    def __len__(self) -> int:
        return len(self.terms)

    # -- algebra --------------------------------------------------------------------------
    def __add__(self, other: Any) -> FermionOperator:
        other = _as_operator(other)
        result = self.copy()
        for term, coefficient in other.terms.items():
            result.terms[term] = result.terms.get(term, 0) + coefficient
        return result

    __radd__ = __add__

    def __neg__(self) -> FermionOperator:
        return self * -1

    def __sub__(self, other: Any) -> FermionOperator:
        return self + (-_as_operator(other))

    def __rsub__(self, other: Any) -> FermionOperator:
        return _as_operator(other) - self

    def __mul__(self, other: Any) -> FermionOperator:
        if isinstance(other, FermionOperator):
            result = FermionOperator()
            for left, a in self.terms.items():
                for right, b in other.terms.items():
                    result.terms[left + right] = result.terms.get(left + right, 0) + a * b
            return result
        scalar = _checked_coefficient(other)
        return FermionOperator.from_terms({term: c * scalar for term, c in self.terms.items()})

    def __rmul__(self, other: Any) -> FermionOperator:
        return self * _checked_coefficient(other)

    def __truediv__(self, other: Any) -> FermionOperator:
        return self * (1 / _checked_coefficient(other))

    def __pow__(self, exponent: int) -> FermionOperator:
        if isinstance(exponent, bool) or not isinstance(exponent, numbers.Integral) or exponent < 0:
            raise ValueError(f"exponent={exponent!r} must be a non-negative int")
        result = FermionOperator(())
        for _ in range(exponent):
            result = result * self
        return result

    def copy(self) -> FermionOperator:
        return FermionOperator.from_terms(dict(self.terms))

    def dagger(self) -> FermionOperator:
        """The Hermitian conjugate: every term reversed, actions swapped, coefficient conjugated.

        Examples
        --------
        >>> FermionOperator("2^ 0", 1j).dagger()
        FermionOperator({((0, 1), (2, 0)): -1j})
        """
        return FermionOperator.from_terms({tuple((mode, 1 - action) for mode, action in reversed(term)):
                                           c.conjugate() for term, c in self.terms.items()})

    def normal_ordered(self) -> FermionOperator:
        """The same operator with every term normal ordered: creation operators left of
        annihilation operators, each group in descending mode order (OpenFermion's), by the
        anticommutation relations; repeated operators vanish; terms sorted by length, then modes.

        Examples
        --------
        >>> FermionOperator("0 1^").normal_ordered()
        FermionOperator({((1, 1), (0, 0)): -1.0})
        """
        result: dict[Term, Any] = {}
        for term, coefficient in self.terms.items():
            for ordered, factor in _normal_order(term):
                result[ordered] = result.get(ordered, 0) + factor * coefficient
        ordered = dict(sorted(result.items(), key=lambda item: (len(item[0]), item[0])))
        return FermionOperator.from_terms(ordered).compressed(0.0)

    def compressed(self, tolerance: float = 1e-12) -> FermionOperator:
        """Without terms whose coefficients are at most ``tolerance`` in magnitude."""
        return FermionOperator.from_terms({t: c for t, c in self.terms.items() if abs(c) > tolerance})

    def is_hermitian(self, tolerance: float = 1e-10) -> bool:
        """Whether the operator equals its Hermitian conjugate (compared normal ordered)."""
        return (self - self.dagger()).normal_ordered().compressed(tolerance).terms == {}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FermionOperator):
            return NotImplemented
        difference = (self - other).normal_ordered()
        return all(abs(c) <= 1e-10 for c in difference.terms.values())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FermionOperator({self.terms!r})"

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"{c} [{' '.join(f'{m}' + ('^' if a else '') for m, a in t)}]"
                          for t, c in self.terms.items())


def _parsed_term(term: Any) -> Term:
    """A term from ``"3^ 1"``, a sequence of ``(mode, action)`` pairs, ``None`` or ``""``."""
    if term is None:
        return ()
    if isinstance(term, str):
        pairs = []
        for token in term.split():
            creation = token.endswith("^")
            digits = token[:-1] if creation else token
            if not digits.isdigit():
                raise ValueError(f"term {term!r}: {token!r} is not a mode index with an optional ^")
            pairs.append((int(digits), int(creation)))
        return tuple(pairs)
    pairs = []
    for item in term:
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise ValueError(f"term {term!r}: each factor must be a (mode, action) pair; got {item!r}")
        mode, action = item
        if isinstance(mode, bool) or not isinstance(mode, numbers.Integral) or mode < 0:
            raise ValueError(f"term {term!r}: mode {mode!r} must be a non-negative int")
        if action not in (0, 1):
            raise ValueError(f"term {term!r}: action {action!r} must be 1 (creation) or 0 (annihilation)")
        pairs.append((int(mode), int(action)))
    return tuple(pairs)


def _checked_coefficient(value: Any) -> complex | float:
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise TypeError(f"coefficient {value!r} must be a number")
    if not np.isfinite(complex(value)):
        raise ValueError(f"coefficient {value!r} is not finite")
    return value


def _as_operator(value: Any) -> FermionOperator:
    if isinstance(value, FermionOperator):
        return value
    return FermionOperator((), _checked_coefficient(value))


def _normal_order(term: Term) -> list[tuple[Term, int]]:
    """``term`` as normal-ordered terms with signs (an insertion sort that anticommutes
    neighbours and adds the contraction ``delta`` when it swaps ``a_i a^†_i``)."""
    term = list(term)
    for i in range(1, len(term)):
        for j in range(i, 0, -1):
            left, right = term[j - 1], term[j]
            if _before(left, right):
                break
            if left == right:  # a_i a_i = a^†_i a^†_i = 0
                return []
            rest = term[:j - 1] + term[j + 1:]
            swapped = term[:j - 1] + [right, left] + term[j + 1:]
            found = [(t, -s) for t, s in _normal_order(tuple(swapped))]
            if left[0] == right[0] and left[1] == 0 and right[1] == 1:  # a_i a^†_i = 1 - a^†_i a_i
                found += _normal_order(tuple(rest))
            return _merged(found)
    return [(tuple(term), 1)]


def _before(left: tuple[int, int], right: tuple[int, int]) -> bool:
    """Whether ``left right`` is already in normal order."""
    if left[1] != right[1]:
        return left[1] > right[1]  # creation first
    return left[0] > right[0]  # descending modes


def _merged(pairs: list[tuple[Term, int]]) -> list[tuple[Term, int]]:
    merged: dict[Term, int] = {}
    for term, sign in pairs:
        merged[term] = merged.get(term, 0) + sign
    return [(t, s) for t, s in merged.items() if s]


def number_operator(n_modes: int, modes: Iterable[int] | None = None) -> FermionOperator:
    """``N = sum_j a^†_j a_j`` over ``modes`` (all ``n_modes`` by default).

    Examples
    --------
    >>> number_operator(2)
    FermionOperator({((0, 1), (0, 0)): 1.0, ((1, 1), (1, 0)): 1.0})
    """
    return FermionOperator.from_terms({((j, 1), (j, 0)): 1.0
                                       for j in (range(n_modes) if modes is None else modes)})


def spin_z(n_orbitals: int, order: str = "blocked") -> FermionOperator:
    """``S_z = (N_alpha - N_beta) / 2`` over ``n_orbitals`` spatial orbitals.

    Examples
    --------
    >>> len(spin_z(2).terms)
    4
    """
    return FermionOperator.from_terms({((spin_orbital(p, s, n_orbitals, order), 1),
                                        (spin_orbital(p, s, n_orbitals, order), 0)): 0.5 - s
                                       for p in range(n_orbitals) for s in (0, 1)})


def spin_squared(n_orbitals: int, order: str = "blocked") -> FermionOperator:
    """``S^2 = S_- S_+ + S_z (S_z + 1)`` over ``n_orbitals`` spatial orbitals.

    Examples
    --------
    >>> spin_squared(1).is_hermitian()
    True
    """
    def mode(p: int, s: int) -> int:
        return spin_orbital(p, s, n_orbitals, order)

    raising = FermionOperator.from_terms({((mode(p, 0), 1), (mode(p, 1), 0)): 1.0 for p in range(n_orbitals)})
    z = spin_z(n_orbitals, order)
    return (raising.dagger() * raising + z * z + z).normal_ordered()
