"""OpenQASM 2 and 3 in and out.

**Reading** uses Qiskit's parsers, not one of our own: ``qiskit.qasm2`` (Rust, the reference
implementation of OpenQASM 2 with ``qelib1.inc``) and ``qiskit.qasm3`` (through the
``qiskit-qasm3-import`` package, on the ``openqasm3`` reference parser), then converts the
resulting ``QuantumCircuit`` gate by gate (:mod:`.qiskit_convert`: its qubit-order, parameter and
global-phase conventions hold here too). Include files, user-defined gates (replaced by their
bodies), several registers (numbered in declaration order), ``barrier`` (kept as a marker, no
effect on the state) and parameter expressions are handled; a ``measure`` at the end stands for
sampling; mid-circuit measurement, ``reset`` and classically controlled instructions raise a
``ValueError`` naming the instruction and its line.

**Writing** is done here (no Qiskit needed except for ``unitary`` gates, which Qiskit synthesises
into ``u`` and ``cx``): every gate of tyxonq's gate set has an exact OpenQASM form, its global
phase included (OpenQASM 3's ``gphase``; in OpenQASM 2, which has none, ``p(a) q; x q; p(a) q;
x q;`` on the qubit it is recorded on), so ``from_openqasm(c.to_openqasm())`` prepares the same
state. Angles are written with 17 significant digits.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import numpy as np

from ...numerics import get_backend
from ...numerics.protocol import ArrayBackend
from .qiskit_convert import barriers_by_position, from_qiskit, numeric_angle, require_qiskit

__all__ = ["from_openqasm", "to_openqasm", "openqasm_version"]

Statement = tuple[str, tuple[int, ...], list[float]]  # (gate, qubits, angles)

#: gates each version's standard include file lacks, with exact definitions
_DEFINITIONS = {
    2: {
        "ryy": "gate ryy(theta) a, b { sdg a; sdg b; rxx(theta) a, b; s a; s b; }",
        "iswap": "gate iswap a, b { rxx(-pi/2) a, b; ryy(-pi/2) a, b; }",
    },
    3: {
        "sxdg": "gate sxdg a { rx(-pi/2) a; gphase(-pi/4); }",
        "rxx": "gate rxx(theta) a, b { h a; h b; cx a, b; rz(theta) b; cx a, b; h a; h b; }",
        "rzz": "gate rzz(theta) a, b { cx a, b; rz(theta) b; cx a, b; }",
        "ryy": "gate ryy(theta) a, b { sdg a; sdg b; rxx(theta) a, b; s a; s b; }",
        "iswap": "gate iswap a, b { rxx(-pi/2) a, b; ryy(-pi/2) a, b; }",
    },
}
#: what a definition uses that another definition gives
_NEEDS = {"ryy": ("rxx",), "iswap": ("rxx", "ryy")}
#: tyxonq gate -> OpenQASM name (the rest are spelled alike)
_NAMES = {2: {"i": "id", "phase": "p", "cphase": "cp"},
          3: {"i": "id", "phase": "p", "cphase": "cp", "u": "U"}}
_SELF_INVERSE = {"i", "h", "x", "y", "z", "cx", "cy", "cz", "swap", "ccx", "cswap"}
_INVERSE_NAMES = {"s": "sdg", "sdg": "s", "t": "tdg", "tdg": "t", "sx": "sxdg", "sxdg": "sx"}
_NEGATED = {"rx", "ry", "rz", "phase", "rxx", "ryy", "rzz", "crx", "cry", "crz", "cphase", "gphase"}


#: statements only OpenQASM 2 programs are made of (version 3 declares ``qubit``/``bit``)
_VERSION_2_MARKS = re.compile(r'^\s*(include\s+"qelib1\.inc"|[qc]reg\s)', re.MULTILINE)
_VERSION_3_MARKS = re.compile(r'^\s*(include\s+"stdgates\.inc"|qubit\b|bit\b|input\s|output\s)', re.MULTILINE)


def openqasm_version(text: str) -> int:
    """2 or 3, from the ``OPENQASM`` header; without one, 2 for a program written as version 2
    (``include "qelib1.inc"``, ``qreg``/``creg`` declarations, nothing only version 3 has), else 3
    (as the OpenQASM 3 spec allows).

    Examples
    --------
    >>> openqasm_version('include "qelib1.inc";\\nqreg q[1];\\nh q[0];')
    2
    >>> openqasm_version("qubit[1] q;\\nh q[0];")
    3
    """
    text = _without_comments(text)
    match = re.search(r"^\s*OPENQASM\s+(\d+)(?:\.\d+)?\s*;", text, re.MULTILINE)
    if match is None:
        return 2 if _VERSION_2_MARKS.search(text) and not _VERSION_3_MARKS.search(text) else 3
    version = int(match.group(1))
    if version not in (2, 3):
        raise ValueError(f"OpenQASM {match.group(1)} is not supported; versions 2 and 3 are")
    return version


def _without_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def _offending_token(error: BaseException) -> str:
    """Where the OpenQASM 3 parser gave up, from the ANTLR exception beneath its error (which
    carries no message of its own when it bails out), or ``""``."""
    seen = 0
    while error is not None and seen < 8:
        for candidate in (error, *getattr(error, "args", ())):
            token = getattr(candidate, "offendingToken", None)
            if token is not None:
                return f"line {token.line}:{token.column}: unexpected {token.text!r}"
        error, seen = error.__cause__ or error.__context__, seen + 1
    return ""


def _line_of(text: str, keyword: str) -> int | None:
    """The line (1-based) of the first statement that starts with ``keyword``."""
    pattern = re.compile(rf"(^|[;{{}}])\s*{re.escape(keyword)}\b")
    for number, line in enumerate(_without_comments(text).splitlines(), start=1):
        if pattern.search(line):
            return number
    return None


def from_openqasm(cls: type, text: str, binding: Any = None, **options: Any) -> Any:
    """Parse OpenQASM 2 or 3 ``text`` into ``cls`` (see the module's conventions)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be OpenQASM source as a str; got {type(text).__name__}")
    if not _without_comments(text).strip():
        raise ValueError("text holds no OpenQASM statements: pass a program's source")
    require_qiskit()
    version = openqasm_version(text)
    diagnostics = io.StringIO()  # the OpenQASM 3 parser (ANTLR) prints what it found there
    try:
        with contextlib.redirect_stderr(diagnostics):
            if version == 2:
                from qiskit import qasm2

                qc = qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
            else:
                from qiskit import qasm3

                qc = qasm3.loads(text)
    except ImportError as error:
        raise ImportError("reading OpenQASM 3 needs qiskit-qasm3-import: pip install "
                          "'tyxonq[qiskit]'") from error
    except Exception as error:  # the parsers' own errors say what and where
        detail = "; ".join(filter(None, [str(error).strip(), *diagnostics.getvalue().strip().splitlines(),
                                         _offending_token(error)]))
        raise ValueError(f"OpenQASM {version} could not be parsed: "
                         f"{detail or type(error).__name__}") from error
    try:
        return from_qiskit(cls, qc, binding, **options)
    except ValueError as error:
        match = re.search(r"\((\w+) on qubits", str(error))
        name = match.group(1) if match else None
        keyword = {"if_else": "if", "while_loop": "while", "for_loop": "for", "switch_case": "switch"}.get(
            name, name)
        line = _line_of(text, keyword) if keyword else None
        raise ValueError(f"{error}{'' if line is None else f' (OpenQASM line {line})'}") from error


def to_openqasm(circuit: Any, version: int = 2) -> str:
    """OpenQASM ``version`` (2 or 3) source of ``circuit`` (see the module's conventions)."""
    if version not in (2, 3):
        raise ValueError(f"version={version!r}: OpenQASM 2 or 3")
    K = get_backend()
    body: list[str] = []
    used: set[str] = set()
    barriers = barriers_by_position(circuit)
    for position, op in enumerate(list(circuit.operations) + [None]):
        for qubits in barriers.get(position, ()):
            body.append(f"barrier {', '.join(f'q[{q}]' for q in qubits)};")
        if op is None:
            break
        if op.channel is not None:
            raise ValueError(f"a {op.channel.name} channel has no OpenQASM form: to_openqasm "
                             "writes noiseless circuits")
        for name, qubits, params in _statements(K, op):
            if name == "gphase":
                body += _global_phase(params[0], version, qubits[0])
                used.update({"p", "x"} if version == 2 else set())
                continue
            used.add(name)
            arguments = f"({', '.join(_angle_text(p) for p in params)})" if params else ""
            spelled = _NAMES[version].get(name, name)
            body.append(f"{spelled}{arguments} {', '.join(f'q[{q}]' for q in qubits)};")
    header = ["OPENQASM 2.0;", 'include "qelib1.inc";'] if version == 2 else \
        ["OPENQASM 3.0;", 'include "stdgates.inc";']
    definitions = _DEFINITIONS[version]
    wanted = set(used)
    for name in used:
        wanted.update(_NEEDS.get(name, ()))
    header += [definition for name, definition in definitions.items() if name in wanted]
    register = [f"qreg q[{circuit.num_qubits}];"] if version == 2 else [f"qubit[{circuit.num_qubits}] q;"]
    return "\n".join(header + register + body) + "\n"


def _angle_text(value: float) -> str:
    return repr(float(value))


def _global_phase(angle: float, version: int, qubit: int) -> list[str]:
    if version == 3:
        return [f"gphase({_angle_text(angle)});"]
    text = _angle_text(angle)  # p(a) x p(a) x = diag(e^{ia}, 1) diag(1, e^{ia}) = e^{ia} I
    return [f"p({text}) q[{qubit}];", f"x q[{qubit}];", f"p({text}) q[{qubit}];", f"x q[{qubit}];"]


def _statements(K: ArrayBackend, op: Any) -> list[Statement]:
    """``(name, qubits, angles)`` statements of one operation (its adjoint when daggered)."""
    if op.gate == "unitary":
        matrix = np.asarray(K.to_numpy(op.params[0]))
        matrix = matrix.conj().T if op.dagger else matrix
        return _synthesised(matrix, op.qubits)
    params = [numeric_angle(K, p, op.gate) for p in op.params]
    if not op.dagger or op.gate in _SELF_INVERSE:
        return [(op.gate, op.qubits, params)]
    if op.gate in _INVERSE_NAMES:
        return [(_INVERSE_NAMES[op.gate], op.qubits, params)]
    if op.gate in _NEGATED:
        return [(op.gate, op.qubits, [-params[0]])]
    if op.gate == "u":
        theta, phi, lam = params
        return [("u", op.qubits, [-theta, -lam, -phi])]
    if op.gate == "iswap":  # iswap^4 = 1
        return [("iswap", op.qubits, [])] * 3
    raise ValueError(f"no OpenQASM form of the adjoint of {op.gate}")  # pragma: no cover


def _synthesised(matrix: np.ndarray, qubits: tuple[int, ...]) -> list[Statement]:
    """A ``unitary`` as ``u`` and ``cx`` gates and a global phase (Qiskit's synthesis)."""
    require_qiskit()
    from qiskit import QuantumCircuit, transpile
    from qiskit.circuit.library import UnitaryGate

    k = len(qubits)
    qc = QuantumCircuit(k)
    qc.append(UnitaryGate(matrix, check_input=False), list(reversed(range(k))))
    decomposed = transpile(qc, basis_gates=["u", "cx"], optimization_level=0)
    statements = []
    for instruction in decomposed.data:
        local = tuple(qubits[decomposed.find_bit(q).index] for q in instruction.qubits)
        statements.append((instruction.operation.name, local,
                           [float(p) for p in instruction.operation.params]))
    if float(decomposed.global_phase) != 0.0:
        statements.append(("gphase", (qubits[0],), [float(decomposed.global_phase)]))
    return statements
