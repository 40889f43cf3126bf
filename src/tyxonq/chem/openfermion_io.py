"""OpenFermion in and out: ``FermionOperator``, ``QubitOperator`` and ``InteractionOperator``.

OpenFermion's qubit ``j`` is tyxonq's qubit ``j`` (the first letter of a Pauli string); its
fermionic terms use the same ``(mode, action)`` pairs, so terms convert one to one.
"""

from __future__ import annotations

from typing import Any

from ..operators.pauli import PauliSum
from .fermion import FermionOperator

__all__ = ["to_openfermion", "from_openfermion"]


def _openfermion() -> Any:
    try:
        import openfermion
    except ImportError as error:
        raise ImportError("OpenFermion is not installed: pip install openfermion") from error
    return openfermion


def to_openfermion(operator: FermionOperator | PauliSum) -> Any:
    """A tyxonq :class:`FermionOperator` as OpenFermion's ``FermionOperator``, a
    :class:`~tyxonq.PauliSum` as its ``QubitOperator``.

    Examples
    --------
    >>> to_openfermion(FermionOperator("1^ 0", 0.5)).terms
    {((1, 1), (0, 0)): 0.5}
    """
    of = _openfermion()
    if isinstance(operator, FermionOperator):
        result = of.FermionOperator()
        for term, coefficient in operator.terms.items():
            result += of.FermionOperator(term, coefficient)
        return result
    if isinstance(operator, PauliSum):
        result = of.QubitOperator()
        for coefficient, string in operator:
            result += of.QubitOperator(tuple((q, letter) for q, letter in enumerate(string) if letter != "I"),
                                       coefficient)
        return result
    raise TypeError(f"expected a tq.chem.FermionOperator or tq.PauliSum; got {type(operator).__name__}")


def from_openfermion(operator: Any, n_qubits: int | None = None) -> FermionOperator | PauliSum:
    """OpenFermion's ``FermionOperator`` or ``InteractionOperator`` as a tyxonq
    :class:`FermionOperator`; its ``QubitOperator`` as a :class:`~tyxonq.PauliSum` on
    ``n_qubits`` (default: one more than the largest qubit it acts on).

    Examples
    --------
    >>> import openfermion as of
    >>> from_openfermion(of.QubitOperator("X0 Z2", 0.5)).terms
    {'XIZ': 0.5}
    """
    of = _openfermion()
    if isinstance(operator, of.InteractionOperator):
        operator = of.get_fermion_operator(operator)
    if isinstance(operator, of.FermionOperator):
        return FermionOperator.from_terms(dict(operator.terms))
    if isinstance(operator, of.QubitOperator):
        width = 1 + max((q for term in operator.terms for q, _ in term), default=0)
        n_qubits = width if n_qubits is None else n_qubits
        if n_qubits < width:
            raise ValueError(f"the operator acts on qubit {width - 1}; n_qubits={n_qubits} is too few")
        terms = []
        for term, coefficient in operator.terms.items():
            letters = ["I"] * n_qubits
            for qubit, letter in term:
                letters[qubit] = letter
            terms.append((coefficient, "".join(letters)))
        return PauliSum(terms or [(0.0, "I" * n_qubits)], n_qubits)
    raise TypeError(f"expected an OpenFermion FermionOperator, InteractionOperator or QubitOperator; "
                    f"got {type(operator).__name__}")
