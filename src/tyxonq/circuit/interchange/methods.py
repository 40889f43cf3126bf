"""The interchange methods every circuit has: ``from_qiskit`` / ``to_qiskit`` and
``from_openqasm`` / ``from_openqasm_file`` / ``to_openqasm`` (conventions in
:mod:`~tyxonq.circuit.interchange.qiskit_convert` and :mod:`~tyxonq.circuit.interchange.openqasm`)."""

from __future__ import annotations

import os
from typing import Any, TypeVar

from . import openqasm, qiskit_convert

__all__ = ["InterchangeMethods"]

C = TypeVar("C", bound="InterchangeMethods")


class InterchangeMethods:
    @classmethod
    def from_qiskit(cls: type[C], qc: Any, binding: Any = None, measurements: str = "auto",
                    **options: Any) -> C:
        """A circuit with the gates of Qiskit's ``qc`` (Qiskit's qubit ``i`` is qubit ``i`` here,
        its clbit ``j`` classical bit ``j``).

        Mid-circuit measurements, resets and ``if_test`` blocks (with ``else``) become
        :meth:`measure`, :meth:`reset` and :meth:`cond` operations; loops and ``switch`` raise a
        ``ValueError`` naming them.

        Parameters
        ----------
        qc : qiskit.QuantumCircuit
        binding : mapping or sequence, optional
            Values of ``qc``'s free parameters: ``{Parameter or name: value}``, or a sequence in
            ``qc.parameters`` order. Backend arrays keep gradients (affine angles).
        measurements : {"auto", "keep"}
            ``"auto"``: the measurements of a circuit that is otherwise not dynamic (only final
            measurements) stand for sampling and are dropped; a dynamic circuit keeps all of
            them. ``"keep"``: every measurement becomes a :meth:`measure` into its bit (so
            ``sample(final=False)`` reports Qiskit's classical register).
        **options
            Passed to the constructor (``max_bond=`` for an MPSCircuit, ...).

        Examples
        --------
        >>> import tyxonq as tq
        >>> from qiskit import QuantumCircuit
        >>> from qiskit.circuit import Parameter
        >>> theta = Parameter("theta")
        >>> qc = QuantumCircuit(2); _ = qc.h(0); _ = qc.cx(0, 1); _ = qc.ry(2 * theta, 1)
        >>> c = tq.Circuit.from_qiskit(qc, {"theta": 0.25})
        >>> [op.gate for op in c.operations], round(float(c.operations[2].params[0]), 6)
        (['h', 'cx', 'ry'], 0.5)
        """
        return qiskit_convert.from_qiskit(cls, qc, binding, measurements, **options)

    def to_qiskit(self) -> Any:
        """This circuit as a ``qiskit.QuantumCircuit`` (``gphase`` angles in its
        ``global_phase``; ``Statevector(c.to_qiskit()).reverse_qargs()`` equals ``c.state()``).

        Measurements, resets and conditioned gates become ``measure``, ``reset`` and ``if_test``
        blocks on classical registers declared in bit order (Qiskit's clbit ``j`` is bit ``j``);
        ``post_select`` and channels raise a ``ValueError``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> dict(tq.Circuit(2).h(0).cx(0, 1).to_qiskit().count_ops())
        {'h': 1, 'cx': 1}
        """
        return qiskit_convert.to_qiskit(self)

    @classmethod
    def from_openqasm(cls: type[C], text: str, binding: Any = None, measurements: str = "auto",
                      **options: Any) -> C:
        """A circuit from OpenQASM 2 or 3 source (the version from its header).

        ``binding`` gives OpenQASM 3 ``input`` parameters their values, and ``measurements``
        says which measurements are kept, as in :meth:`from_qiskit`; ``options`` go to the
        constructor. ``measure``, ``reset`` and ``if`` (with ``else`` in version 3) are read;
        what cannot be raises a ``ValueError`` naming it and its line.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.Circuit.from_openqasm('''
        ... OPENQASM 2.0;
        ... include "qelib1.inc";
        ... qreg q[2];
        ... creg c[2];
        ... h q[0];
        ... cx q[0], q[1];
        ... measure q -> c;
        ... ''')
        >>> K = tq.get_backend()
        >>> (K.to_numpy(c.probability()).round(6) + 0.0).tolist()
        [0.5, 0.0, 0.0, 0.5]
        """
        return openqasm.from_openqasm(cls, text, binding, measurements, **options)

    @classmethod
    def from_openqasm_file(cls: type[C], path: str | os.PathLike, binding: Any = None,
                           measurements: str = "auto", **options: Any) -> C:
        """:meth:`from_openqasm` of a file's contents (includes resolve as the parser does)."""
        with open(path, encoding="utf-8") as handle:
            return cls.from_openqasm(handle.read(), binding, measurements, **options)

    def to_openqasm(self, version: int = 2) -> str:
        """OpenQASM ``version`` (2 or 3) source of this circuit: exact, global phase included.

        Measurements, resets and conditioned gates are written too (``measure``, ``reset``,
        ``if``); version 2 compares whole registers only, so conditions on other bits need
        ``version=3`` (see :mod:`~tyxonq.circuit.interchange.openqasm`).

        Examples
        --------
        >>> import tyxonq as tq
        >>> print(tq.Circuit(2).h(0).cx(0, 1).rzz(0, 1, theta=0.5).to_openqasm())
        OPENQASM 2.0;
        include "qelib1.inc";
        qreg q[2];
        h q[0];
        cx q[0], q[1];
        rzz(0.5) q[0], q[1];
        <BLANKLINE>
        """
        return openqasm.to_openqasm(self, version)
