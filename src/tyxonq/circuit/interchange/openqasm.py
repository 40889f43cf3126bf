"""OpenQASM 2 and 3 in and out.

**Reading** uses Qiskit's parsers, not one of our own: ``qiskit.qasm2`` (Rust, the reference
implementation of OpenQASM 2 with ``qelib1.inc``) and ``qiskit.qasm3`` (through the
``qiskit-qasm3-import`` package, on the ``openqasm3`` reference parser), then converts the
resulting ``QuantumCircuit`` gate by gate (:mod:`.qiskit_convert`: its qubit-order, parameter and
global-phase conventions hold here too). Include files, user-defined gates (replaced by their
bodies), several registers (numbered in declaration order), ``barrier`` (kept as a marker, no
effect on the state) and parameter expressions are handled. ``measure``, ``reset`` and ``if``
statements (OpenQASM 2's ``if (c == k) gate;``, OpenQASM 3's ``if (c[0]) { ... } else { ... }``
and ``if (c == k)``) are read as :mod:`.qiskit_convert` reads them: classical bits numbered across
registers in declaration order, and the measurements of a program that is otherwise not dynamic
(``measure q -> c;`` at the end) standing for sampling unless ``measurements="keep"``. What
cannot be read (``while``, ``for``, a ``measure``/``reset``/``if`` inside an ``if``) raises a
``ValueError`` naming the instruction and the line of the statement that made it: the statement
is found by parsing ever shorter prefixes of the program (:func:`line_of_instruction`), so a
statement written twice is told apart.

**Writing** is done here (no Qiskit needed except for ``unitary`` gates, which Qiskit synthesises
into ``u`` and ``cx``): every gate of tyxonq's gate set has an exact OpenQASM form, its global
phase included (OpenQASM 3's ``gphase``; in OpenQASM 2, which has none, ``p(a) q; x q; p(a) q;
x q;`` on the qubit it is recorded on), so ``from_openqasm(c.to_openqasm())`` prepares the same
state. Angles are written with 17 significant digits.

Classical bits are declared in registers in bit order (``creg c[m];`` / ``bit[m] c;``, or
``c0, c1, ...`` when conditions want registers of their own: :mod:`.classical`), so bit ``j`` reads
back as bit ``j``. ``measure`` and ``reset`` are written as such; conditioned gates as
``if(c==k) gate;`` (version 2, which compares whole registers only: a condition on other bits,
``!=`` or an else branch raises a ``ValueError`` suggesting ``version=3``) or one ``if (c[j]) {
... }`` / ``if (!c[j])`` / ``if (c == k)`` block per run of gates under one condition (version 3;
a ``!=`` is written as the ``else`` of ``==``, which Qiskit's importer reads). Parity conditions
and ``post_select`` have no form that Qiskit's importers read: ``ValueError`` (use ``to_qiskit``
for parities).
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import numpy as np

from ...numerics import get_backend
from ...numerics.protocol import ArrayBackend
from ..operations.gates import PAULI_ROTATION_PREFIX, pauli_ladder
from ..operations.operation import Condition
from .classical import (
    Block,
    Register,
    canonical,
    describe_condition,
    negated,
    register_layout,
    register_of,
    runs,
)
from .qiskit_convert import ConversionError, from_qiskit, numeric_angle, require_qiskit

__all__ = ["from_openqasm", "to_openqasm", "openqasm_version", "statements", "line_of_instruction"]

Statement = tuple[str, tuple[int, ...], list[float]]  # (gate, qubits, angles)

#: gates each version's standard include file lacks, with exact definitions
_DEFINITIONS = {
    2: {
        "ryy": "gate ryy(theta) a, b { sdg a; sdg b; rxx(theta) a, b; s a; s b; }",
        "iswap": "gate iswap a, b { rxx(-pi/2) a, b; ryy(-pi/2) a, b; }",
        "ecr": ("gate ecr a, b { h b; cx a, b; rz(pi/4) b; cx a, b; h b; x a; h b; cx a, b; rz(-pi/4) b; "
                "cx a, b; h b; }"),
    },
    3: {
        "sxdg": "gate sxdg a { rx(-pi/2) a; gphase(-pi/4); }",
        "rxx": "gate rxx(theta) a, b { h a; h b; cx a, b; rz(theta) b; cx a, b; h a; h b; }",
        "rzz": "gate rzz(theta) a, b { cx a, b; rz(theta) b; cx a, b; }",
        "ryy": "gate ryy(theta) a, b { sdg a; sdg b; rxx(theta) a, b; s a; s b; }",
        "iswap": "gate iswap a, b { rxx(-pi/2) a, b; ryy(-pi/2) a, b; }",
        "ecr": ("gate ecr a, b { h b; cx a, b; rz(pi/4) b; cx a, b; h b; x a; h b; cx a, b; rz(-pi/4) b; "
                "cx a, b; h b; }"),
    },
}
#: what a definition uses that another definition gives
_NEEDS = {"ryy": ("rxx",), "iswap": ("rxx", "ryy")}
#: tyxonq gate -> OpenQASM name (the rest are spelled alike)
_NAMES = {2: {"i": "id", "phase": "p", "cphase": "cp"},
          3: {"i": "id", "phase": "p", "cphase": "cp", "u": "U"}}
_SELF_INVERSE = {"i", "h", "x", "y", "z", "cx", "cy", "cz", "swap", "ccx", "cswap", "ecr"}
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


def from_openqasm(cls: type, text: str, binding: Any = None, measurements: str = "auto",
                  **options: Any) -> Any:
    """Parse OpenQASM 2 or 3 ``text`` into ``cls`` (see the module's conventions).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = from_openqasm(tq.Circuit, 'OPENQASM 3.0; include "stdgates.inc"; qubit[2] q; bit[1] c;'
    ...                   'h q[0]; c[0] = measure q[0]; if (c[0]) { x q[1]; }')
    >>> [op.gate for op in c.operations], c.num_clbits
    (['h', 'measure', 'x'], 1)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be OpenQASM source as a str; got {type(text).__name__}")
    if not _without_comments(text).strip():
        raise ValueError("text holds no OpenQASM statements: pass a program's source")
    require_qiskit()
    version = openqasm_version(text)
    diagnostics = io.StringIO()  # the OpenQASM 3 parser (ANTLR) prints what it found there
    try:
        with contextlib.redirect_stderr(diagnostics):
            qc = _parsed(text, version)
    except ImportError as error:
        raise ImportError("reading OpenQASM 3 needs qiskit-qasm3-import: pip install "
                          "'tyxonq[qiskit]'") from error
    except Exception as error:  # the parsers' own errors say what and where
        detail = "; ".join(filter(None, [str(error).strip(), *diagnostics.getvalue().strip().splitlines(),
                                         _offending_token(error)]))
        raise ValueError(f"OpenQASM {version} could not be parsed: "
                         f"{detail or type(error).__name__}{_hint(text, version)}") from error
    try:
        return from_qiskit(cls, qc, binding, measurements, **options)
    except ConversionError as error:
        line = line_of_instruction(text, error.position)
        where = "" if line is None else f" (OpenQASM line {line})"
        raise ConversionError(f"{error}{where}", error.position) from error


def _hint(text: str, version: int) -> str:
    """Advice for a parse error of a known kind, or ``""``."""
    if version == 2 and re.search(r"\bif\s*\(\s*[A-Za-z_]\w*\s*\[", _without_comments(text)):
        return (" (OpenQASM 2 conditions compare a whole creg: if (c == k); version 3 tests a bit: "
                "if (c[0]) { ... })")
    return ""


def _parsed(text: str, version: int) -> Any:
    """Qiskit's ``QuantumCircuit`` of an OpenQASM program (the parsers' errors propagate)."""
    if version == 2:
        from qiskit import qasm2

        return qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    from qiskit import qasm3

    return qasm3.loads(text)


def statements(text: str) -> list[tuple[int, int]]:
    """``(end, line)`` of each top-level statement of a program without comments: the offset
    just past it (its ``;``, or the ``}`` closing its block) and the line (1-based) it starts on.

    Examples
    --------
    >>> statements("qreg q[1];\\ngate g a { h a; }\\nif (c == 1) x q[0];")
    [(10, 1), (28, 2), (48, 3)]
    """
    found, depth, start = [], 0, None
    for offset, character in enumerate(text):
        if start is None and not character.isspace():
            start = offset
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
        if start is not None and depth == 0 and character in ";}":
            found.append((offset + 1, text.count("\n", 0, start) + 1))
            start = None
    return found


def line_of_instruction(text: str, position: int) -> int | None:
    """The line of the statement that makes instruction ``position`` of the program's circuit
    (``qc.data[position]``), or ``None``: the shortest run of whole statements whose circuit has
    more than ``position`` instructions ends with it (found by bisection, parsing prefixes).

    Examples
    --------
    >>> text = 'OPENQASM 2.0;\\ninclude "qelib1.inc";\\nqreg q[2];\\nh q;\\nh q[0];\\nh q[0];'
    >>> [line_of_instruction(text, p) for p in range(4)]  # h q makes two instructions
    [4, 4, 5, 6]
    """
    clean = _without_comments(text)  # the same statements on the same lines
    version = openqasm_version(text)
    ends = statements(clean)

    def count(k: int) -> int | None:  # instructions of the first k statements
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                return len(_parsed(clean[:ends[k - 1][0]], version).data)
        except Exception:  # a prefix the parser refuses: no line
            return None

    low, high = 1, len(ends)
    while low < high:
        middle = (low + high) // 2
        made = count(middle)
        if made is None:
            return None
        low, high = (low, middle) if made > position else (middle + 1, high)
    made = count(low) if ends else None
    return ends[low - 1][1] if made is not None and made > position else None


def to_openqasm(circuit: Any, version: int = 2) -> str:
    """OpenQASM ``version`` (2 or 3) source of ``circuit`` (see the module's conventions).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0)
    >>> _ = c.cond(c.measure(0)).x(1)
    >>> print(to_openqasm(c, 3))
    OPENQASM 3.0;
    include "stdgates.inc";
    qubit[2] q;
    bit[1] c;
    h q[0];
    c[0] = measure q[0];
    if (c[0]) {
      x q[1];
    }
    <BLANKLINE>
    """
    if version not in (2, 3):
        raise ValueError(f"version={version!r}: OpenQASM 2 or 3")
    writer = _Writer(get_backend(), version, _registers(circuit, version))
    body: list[str] = []
    for item in runs(circuit):
        if item[0] == "barrier":
            body.append(f"barrier {', '.join(f'q[{q}]' for q in item[1])};")
        elif item[0] == "op":
            body += writer.operation(item[1], item[2])
        else:
            body += writer.block(item[1])
    header = ["OPENQASM 2.0;", 'include "qelib1.inc";'] if version == 2 else \
        ["OPENQASM 3.0;", 'include "stdgates.inc";']
    wanted = set(writer.used)
    for name in writer.used:
        wanted.update(_NEEDS.get(name, ()))
    header += [definition for name, definition in _DEFINITIONS[version].items() if name in wanted]
    declarations = [f"qreg q[{circuit.num_qubits}];" if version == 2 else f"qubit[{circuit.num_qubits}] q;"]
    declarations += [f"creg {r.name}[{r.size}];" if version == 2 else f"bit[{r.size}] {r.name};"
                     for r in writer.registers]
    return "\n".join(header + declarations + body) + "\n"


def _registers(circuit: Any, version: int) -> list[Register]:
    """The classical registers to declare: version 2 compares whole registers only, so every
    condition's bits want one; version 3 tests single bits too."""
    if circuit.num_clbits == 0:
        return []
    wanted = []
    for op in circuit.operations:
        condition = canonical(op.condition) if op.condition is not None else None
        if condition is not None and condition.kind != "parity" and (version == 2 or len(condition.bits) > 1):
            wanted.append(condition.bits)
    return register_layout(circuit.num_clbits, wanted)[0]


class _Writer:
    """Statements of operations, with the gates they use (for the definitions to write)."""

    def __init__(self, K: ArrayBackend, version: int, registers: list[Register]) -> None:
        self.K, self.version, self.registers = K, version, registers
        self.used: set[str] = set()

    def bit(self, bit: int) -> str:
        register, index = register_of(self.registers, bit)
        return f"{register.name}[{index}]"

    def operation(self, position: int, op: Any) -> list[str]:
        """The statements of one operation (no condition)."""
        if op.channel is not None:
            raise ValueError(f"a {op.channel.name} channel has no OpenQASM form: to_openqasm "
                             "writes noiseless circuits")
        qubit = f"q[{op.qubits[0]}]"
        if op.gate == "post_select":
            raise ValueError(f"operation {position} (post_select on qubit {op.qubits[0]}): OpenQASM has no "
                             "post-selection; measure the qubit instead and keep the shots whose bit is "
                             f"{int(op.params[0])}")
        if op.gate == "measure":
            bit = self.bit(op.clbits[0])
            return [f"measure {qubit} -> {bit};" if self.version == 2 else f"{bit} = measure {qubit};"]
        if op.gate == "reset":
            return [f"reset {qubit};"]
        lines = []
        for name, qubits, params in _statements(self.K, op):
            if name == "gphase":
                lines += _global_phase(params[0], self.version, qubits[0])
                self.used.update({"p", "x"} if self.version == 2 else set())
                continue
            self.used.add(name)
            arguments = f"({', '.join(_angle_text(p) for p in params)})" if params else ""
            lines.append(f"{_NAMES[self.version].get(name, name)}{arguments} "
                         f"{', '.join(f'q[{q}]' for q in qubits)};")
        return lines

    def block(self, block: Block) -> list[str]:
        """Conditioned operations: ``if(c==k) gate;`` each (version 2), or one ``if`` statement
        (with its ``else``)."""
        branches = [(block.position, block.condition, block.operations)]
        if block.else_operations:
            branches.append((block.else_position, negated(canonical(block.condition)), block.else_operations))
        tests, lines = [], []
        for position, condition, operations in branches:
            tests.append(self.test(position, operations[0], canonical(condition)))
            lines.append([line for offset, op in enumerate(operations)
                          for line in self.operation(position + offset, op)])
        if self.version == 2:
            return [f"if({test}) {line}" for (test, _), part in zip(tests, lines) for line in part]
        (test, negate), indented = tests[0], [[f"  {line}" for line in part] for part in lines]
        if negate:  # qiskit-qasm3-import reads no !=: the else branch of == (never with an else here)
            return [f"if ({test}) {{", "} else {"] + indented[0] + ["}"]
        otherwise = ["} else {"] + indented[1] if len(indented) > 1 else []
        return [f"if ({test}) {{"] + indented[0] + otherwise + ["}"]

    def test(self, position: int, op: Any, condition: Condition) -> tuple[str, bool]:
        """The text of a condition, and whether the statements go in its ``else`` branch."""
        where = (f"operation {position} ({op.gate} on qubits {list(op.qubits)}) is conditioned on "
                 f"{describe_condition(condition)}")
        if condition.kind == "parity":
            raise ValueError(f"{where}: OpenQASM conditions that Qiskit's importers read test bits and "
                             "registers, not parities; export it with to_qiskit (an expression)")
        register = next((r for r in self.registers if r.bits == condition.bits), None)
        if self.version == 3 and len(condition.bits) == 1:
            return ("" if condition.value else "!") + self.bit(condition.bits[0]), False
        if self.version == 2 and condition.kind == "differs":
            raise ValueError(f"{where}: OpenQASM 2 has no != and no else; write version=3")
        if register is None:
            advice = ("version=3 tests single bits and whole registers" if self.version == 2 else
                      "order the bits as one register (consecutive, ascending), or use to_qiskit")
            raise ValueError(f"{where}: OpenQASM {self.version} conditions compare a whole register "
                             f"and no register holds exactly these bits ({advice})")
        relation = "==" if self.version == 2 else " == "
        return f"{register.name}{relation}{condition.value}", condition.kind == "differs"


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
    if op.gate.startswith(PAULI_ROTATION_PREFIX):  # no such gate in OpenQASM: its CNOT ladder
        theta = -params[0] if op.dagger else params[0]
        letters = op.gate[len(PAULI_ROTATION_PREFIX):]
        ladder = pauli_ladder(op.qubits, letters, theta)
        return [(gate, qubits, list(angles)) for gate, qubits, angles in ladder]
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
