"""The gate methods of :class:`~tyxonq.circuit.Circuit`: each appends one gate and returns the circuit.

Angles may be Python numbers or real scalar arrays of the active backend (tensors that carry
gradients, or batched tensors under ``vmap``); they are positional or given by name
(``c.rx(0, theta=0.3)``).
"""

from __future__ import annotations

from typing import Any, Sequence, TypeVar

from ...numerics.arguments import checked_flag
from .gates import pauli_ladder, pauli_rotation_gate

__all__ = ["GateMethods", "Angle"]

Angle = Any  # a real number or a real scalar backend array
C = TypeVar("C", bound="GateMethods")


class GateMethods:
    """Mixin: one method per gate; ``_add(gate, qubits, params)`` is supplied by the circuit."""

    def _add(self: C, gate: str, qubits: tuple, params: tuple = ()) -> C:  # pragma: no cover
        raise NotImplementedError

    # -- one-qubit gates without parameters ---------------------------------------------------
    def i(self: C, qubit: int) -> C:
        """Identity."""
        return self._add("i", (qubit,))

    def h(self: C, qubit: int) -> C:
        """Hadamard."""
        return self._add("h", (qubit,))

    def x(self: C, qubit: int) -> C:
        """Pauli X."""
        return self._add("x", (qubit,))

    def y(self: C, qubit: int) -> C:
        """Pauli Y."""
        return self._add("y", (qubit,))

    def z(self: C, qubit: int) -> C:
        """Pauli Z."""
        return self._add("z", (qubit,))

    def s(self: C, qubit: int) -> C:
        """S = diag(1, i)."""
        return self._add("s", (qubit,))

    def sdg(self: C, qubit: int) -> C:
        """S dagger = diag(1, -i)."""
        return self._add("sdg", (qubit,))

    def t(self: C, qubit: int) -> C:
        """T = diag(1, e^{i pi/4})."""
        return self._add("t", (qubit,))

    def tdg(self: C, qubit: int) -> C:
        """T dagger."""
        return self._add("tdg", (qubit,))

    def sx(self: C, qubit: int) -> C:
        """Square root of X."""
        return self._add("sx", (qubit,))

    def sxdg(self: C, qubit: int) -> C:
        """Inverse square root of X."""
        return self._add("sxdg", (qubit,))

    # -- one-qubit rotations ------------------------------------------------------------------
    def rx(self: C, qubit: int, theta: Angle) -> C:
        """RX(theta) = exp(-i theta X / 2)."""
        return self._add("rx", (qubit,), (theta,))

    def ry(self: C, qubit: int, theta: Angle) -> C:
        """RY(theta) = exp(-i theta Y / 2)."""
        return self._add("ry", (qubit,), (theta,))

    def rz(self: C, qubit: int, theta: Angle) -> C:
        """RZ(theta) = exp(-i theta Z / 2)."""
        return self._add("rz", (qubit,), (theta,))

    def phase(self: C, qubit: int, theta: Angle) -> C:
        """Phase gate diag(1, e^{i theta})."""
        return self._add("phase", (qubit,), (theta,))

    def gphase(self: C, qubit: int, theta: Angle) -> C:
        """Global phase ``exp(i theta)``: every amplitude is multiplied by it, no probability or
        expectation value changes (what Qiskit's ``global_phase`` and OpenQASM 3's ``gphase``
        hold). It acts on no qubit in particular; ``qubit`` is where it is recorded and drawn."""
        return self._add("gphase", (qubit,), (theta,))

    def u(self: C, qubit: int, theta: Angle, phi: Angle, lam: Angle) -> C:
        """OpenQASM's U3(theta, phi, lam)."""
        return self._add("u", (qubit,), (theta, phi, lam))

    u3 = u

    # -- two-qubit gates ----------------------------------------------------------------------
    def cx(self: C, control: int, target: int) -> C:
        """Controlled X (CNOT)."""
        return self._add("cx", (control, target))

    cnot = cx

    def cy(self: C, control: int, target: int) -> C:
        """Controlled Y."""
        return self._add("cy", (control, target))

    def cz(self: C, control: int, target: int) -> C:
        """Controlled Z."""
        return self._add("cz", (control, target))

    def swap(self: C, qubit1: int, qubit2: int) -> C:
        """SWAP."""
        return self._add("swap", (qubit1, qubit2))

    def iswap(self: C, qubit1: int, qubit2: int) -> C:
        """iSWAP: swaps |01> and |10> with a phase i."""
        return self._add("iswap", (qubit1, qubit2))

    def ecr(self: C, qubit1: int, qubit2: int) -> C:
        """Echoed cross-resonance, ``(I X - X Y) / sqrt(2)`` with ``qubit1`` the left factor
        (Qiskit's ``ECRGate`` on ``(qubit1, qubit2)``); Clifford and its own inverse."""
        return self._add("ecr", (qubit1, qubit2))

    def rxx(self: C, qubit1: int, qubit2: int, theta: Angle) -> C:
        """RXX(theta) = exp(-i theta X⊗X / 2)."""
        return self._add("rxx", (qubit1, qubit2), (theta,))

    def ryy(self: C, qubit1: int, qubit2: int, theta: Angle) -> C:
        """RYY(theta) = exp(-i theta Y⊗Y / 2)."""
        return self._add("ryy", (qubit1, qubit2), (theta,))

    def rzz(self: C, qubit1: int, qubit2: int, theta: Angle) -> C:
        """RZZ(theta) = exp(-i theta Z⊗Z / 2)."""
        return self._add("rzz", (qubit1, qubit2), (theta,))

    def crx(self: C, control: int, target: int, theta: Angle) -> C:
        """Controlled RX."""
        return self._add("crx", (control, target), (theta,))

    def cry(self: C, control: int, target: int, theta: Angle) -> C:
        """Controlled RY."""
        return self._add("cry", (control, target), (theta,))

    def crz(self: C, control: int, target: int, theta: Angle) -> C:
        """Controlled RZ."""
        return self._add("crz", (control, target), (theta,))

    def cphase(self: C, control: int, target: int, theta: Angle) -> C:
        """Controlled phase diag(1, 1, 1, e^{i theta})."""
        return self._add("cphase", (control, target), (theta,))

    # -- three-qubit gates --------------------------------------------------------------------
    def ccx(self: C, control1: int, control2: int, target: int) -> C:
        """Toffoli (doubly controlled X)."""
        return self._add("ccx", (control1, control2, target))

    toffoli = ccx

    def cswap(self: C, control: int, target1: int, target2: int) -> C:
        """Fredkin (controlled SWAP)."""
        return self._add("cswap", (control, target1, target2))

    # -- Pauli rotations ----------------------------------------------------------------------
    def exp_pauli(self: C, pauli: str, qubits: Sequence[int] | None = None, theta: Angle = None,
                  decompose: bool = False) -> C:
        """``exp(-i theta P / 2)`` for a Pauli string ``P`` on ``qubits`` (letter ``j`` on
        ``qubits[j]``; ``None``: one letter per qubit of the circuit).

        One gate of the gate table (``exp:XZY``): every simulator, light cone, fusion and
        gradient method handles it as it does ``rzz``. Identity letters are left out (an
        all-identity string is the global phase ``exp(-i theta / 2)``); ``decompose=True``
        appends the same unitary as a basis change, a CNOT ladder and one ``rz`` instead (needed
        beyond :data:`~tyxonq.circuit.operations.gates.MAX_PAULI_ROTATION_QUBITS` letters).

        Examples
        --------
        >>> import numpy as np, tyxonq as tq
        >>> a = tq.Circuit(3).h(0).exp_pauli("XIZ", theta=0.4)
        >>> b = tq.Circuit(3).h(0).exp_pauli("XIZ", theta=0.4, decompose=True)
        >>> bool(np.allclose(a.state(), b.state())), a.operations[-1].gate
        (True, 'exp:XZ')
        """
        if not isinstance(pauli, str) or not pauli or set(pauli.upper()) - set("IXYZ"):
            raise ValueError(f"pauli={pauli!r} must be a non-empty str of I, X, Y, Z")
        if theta is None:
            raise TypeError("exp_pauli(pauli, qubits, theta): give the angle theta")
        decompose = checked_flag(decompose, "decompose")
        pauli = pauli.upper()
        if qubits is None:
            qubits = tuple(range(self.num_qubits))
        qubits = tuple(qubits)
        if len(qubits) != len(pauli):
            raise ValueError(f"pauli={pauli!r} has {len(pauli)} letters for {len(qubits)} qubits "
                             f"{qubits}: give one letter per qubit")
        acted = [(q, letter) for q, letter in zip(qubits, pauli) if letter != "I"]
        if not acted:
            return self.gphase(qubits[0], -theta / 2)
        targets = tuple(q for q, _ in acted)
        letters = "".join(letter for _, letter in acted)
        if not decompose:
            return self._add(pauli_rotation_gate(letters), targets, (theta,))
        for gate, on, params in pauli_ladder(targets, letters, theta):
            self._add(gate, on, params)
        return self

    # -- any unitary --------------------------------------------------------------------------
    def unitary(self: C, *qubits: int, matrix: Any = None, unitary: Any = None) -> C:
        """A ``2^k x 2^k`` unitary on ``k`` qubits (first qubit = most significant index bit).

        ``unitary=`` is accepted as an alias of ``matrix=`` (tensorcircuit's spelling).
        """
        if (matrix is None) == (unitary is None):
            raise TypeError("unitary(*qubits, matrix=U): give the matrix exactly once")
        return self._add("unitary", qubits, (matrix if matrix is not None else unitary,))

    any = unitary

