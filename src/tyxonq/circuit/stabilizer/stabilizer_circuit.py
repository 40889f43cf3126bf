"""The :class:`StabilizerCircuit`: Clifford circuits of thousands of qubits, with Pauli noise,
mid-circuit measurement and error-correction annotations, simulated by stim.

The circuit keeps the same operation list as every simulator, checked as it grows: Clifford
gates (rotations at multiples of ``pi/2``), Pauli channels, measurements, resets, Pauli gates
conditioned on a bit or a parity of bits, detectors and logical observables. Its results run on
stim (Gidney, Quantum 5, 497 (2021)): samples from stim's compiled frame sampler, exact Pauli
expectations from a tableau (or, for noisy and dynamic circuits, by carrying each string backwards
through the circuit, :mod:`~tyxonq.circuit.stabilizer.propagation`), detector samples and the
detector error model for decoders. The stim program is made once per circuit and kept until the
circuit changes.
"""

from __future__ import annotations

import itertools
import numbers
from typing import Any, Sequence

import numpy as np

from ...numerics import get_backend
from ...numerics.arguments import checked_count, checked_seed
from ...numerics.memory import require_memory, require_sample_memory
from ...numerics.progress import takes_progress
from ...numerics.protocol import ArrayBackend
from ...operators.pauli import PAULI_LETTERS, PauliSum, pauli_coefficients, pauli_matrix
from ..contraction.rehearsal import ContractionReport, route_report
from ..dynamic import DynamicResults, formatted_rows
from ..operations.clifford import (
    CLIFFORD_GATES,
    NonCliffordError,
    check_clifford,
    is_quarter_turn,
    pauli_rotations,
)
from ..operations.operation import ANNOTATION_KINDS, Operation
from ..refusals import UnsupportedResult
from ..simulator import SimulatorBase, dynamic_route, simulator_class, weighted_sum
from .program import (
    ProgramBuilder,
    StimProgram,
    require_stim,
    require_tableau_memory,
    tableau_bytes,
    tableau_fits,
)
from .propagation import backward_program, propagated_expectations, propagation_counts

__all__ = ["StabilizerCircuit", "StabilizerDynamicResults", "STATE_QUBITS", "EXPECTATION_QUBITS",
           "MARGINAL_QUBITS", "DENSITY_QUBITS"]

#: ``state``, ``probability`` and ``amplitude`` build the ``2^n`` vector: at most this many qubits
STATE_QUBITS = 24
#: ``marginal_probability`` (and the shot estimates drawn from it) of at most this many qubits
MARGINAL_QUBITS = 12
#: ``reduced_density_matrix`` of at most this many qubits (``4^k`` exact Pauli expectations)
DENSITY_QUBITS = 6
#: what to do when the reference sample of stim's sampler (made on an ``n^2`` tableau) does not fit
_REFERENCE_HINT = ("stim's sampler starts from a noiseless reference sample made on a tableau of the qubits "
                   "the circuit acts on: use sample_detectors() (no tableau) when detector outcomes are "
                   "what is needed, a circuit on fewer qubits, or a higher tq.set_memory_limit.")
#: an ``expectation`` of ``(matrix, qubits)`` operators is expanded in Pauli strings: at most this
#: many qubits in all (``expectation_ps`` and ``pauli_expectations`` take any width)
EXPECTATION_QUBITS = 8


class StabilizerCircuit(SimulatorBase):
    """A Clifford circuit on ``num_qubits`` qubits (from ``|0...0>``), simulated by stim.

    The gate methods of :class:`~tyxonq.Circuit` for every Clifford gate (``h``, ``s``, ``sdg``,
    ``sx``, ``x``, ``y``, ``z``, ``cx``, ``cy``, ``cz``, ``swap``, ``iswap``, ``unitary`` of a
    Clifford matrix) and rotations at multiples of ``pi/2`` (``rx``, ``rzz``, ``exp_pauli``, ``u``,
    ...; checked to :data:`~tyxonq.circuit.operations.clifford.CLIFFORD_ANGLE_TOLERANCE`); Pauli
    channels (``depolarizing``, ``pauli``, ``bit_flip``, ``phase_flip``, any ``channel`` that is
    one); ``measure``, ``reset`` and Pauli gates under ``cond`` on one bit or a parity of bits;
    :meth:`detector` and :meth:`observable_include`. Anything else raises a
    :class:`~tyxonq.circuit.operations.clifford.NonCliffordError` naming it.

    Parameters
    ----------
    num_qubits : int
        Qubits, starting in ``|0...0>``.
    max_non_clifford : int
        How many Pauli rotations at other angles (``t``, ``rz(0.3)``, ``exp_pauli``, ...) the
        circuit may hold (default none). With some, Pauli expectations stay exact (by Pauli
        propagation, at most ``2^k`` strings per observable, :meth:`rehearse` counts them) and
        samples, states and detectors are refused.

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.StabilizerCircuit(1000).h(0)
    >>> for q in range(999):
    ...     _ = c.cx(q, q + 1)
    >>> float(c.expectation_ps(z=[0, 999])), float(c.expectation_ps(x=range(1000)))
    (1.0, 1.0)
    >>> bits = c.sample(100, seed=1, format="bits")
    >>> sorted(set(tq.get_backend().to_numpy(bits).sum(axis=1).tolist()))
    [0, 1000]
    """

    def __init__(self, num_qubits: int, max_non_clifford: int = 0) -> None:
        super().__init__(num_qubits)
        self._max_rotations = checked_count(max_non_clifford, "max_non_clifford", minimum=0)
        self._rotations = 0  # non-Clifford Pauli rotations held
        self._compiled: dict[str, Any] = {}  # what results made from the current operations
        self._builder: ProgramBuilder | None = ProgramBuilder()  # None: remade from the operations

    @classmethod
    def from_circuit(cls, circuit: SimulatorBase, max_non_clifford: int = 0) -> StabilizerCircuit:
        """The stabilizer circuit of any circuit whose operations are all Clifford (a
        :class:`~tyxonq.circuit.operations.clifford.NonCliffordError` names the first that is
        not), or hold at most ``max_non_clifford`` non-Clifford Pauli rotations;
        ``circuit.to_stabilizer()`` comes here.

        Examples
        --------
        >>> import tyxonq as tq
        >>> tq.Circuit(2).h(0).cx(0, 1).to_stabilizer().expectation_ps(z=[0, 1]).item()
        1.0
        """
        if getattr(circuit, "_inputs", None) is not None:
            raise ValueError("to_stabilizer: the circuit starts from its own inputs=; a stabilizer "
                             "simulation starts from |0...0>")
        converted = cls(circuit.num_qubits, max_non_clifford).add_clbits(circuit.num_clbits)
        return converted.with_operations(list(circuit.operations)).with_readout(circuit.readout)

    @classmethod
    def from_stim(cls, circuit: Any) -> StabilizerCircuit:
        """The operations of a ``stim.Circuit`` (or its text): what it reads and refuses is in
        :mod:`~tyxonq.circuit.stabilizer.from_stim`.

        Examples
        --------
        >>> import stim, tyxonq as tq
        >>> code = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2,
        ...                               before_measure_flip_probability=0.01)
        >>> c = tq.StabilizerCircuit.from_stim(code)
        >>> c.num_detectors == code.num_detectors, c.num_observables
        (True, 1)
        """
        from .from_stim import from_stim

        return from_stim(cls, circuit)

    def to_circuit(self) -> SimulatorBase:
        """The same operations on a :class:`~tyxonq.Circuit` (a :class:`~tyxonq.DMCircuit` when
        there are channels), detectors and observables left out (they change no state).

        Examples
        --------
        >>> import tyxonq as tq
        >>> type(tq.StabilizerCircuit(1).h(0).depolarizing(0, p=0.1).to_circuit()).__name__
        'DMCircuit'
        """
        kind = simulator_class("DMCircuit" if self.is_noisy() else "Circuit")
        converted = kind(self._num_qubits).add_clbits(self._num_clbits)
        return converted.with_operations(self._quantum_operations()).with_readout(self.readout)

    def with_noise(self, model: Any) -> StabilizerCircuit:
        """This circuit with a :class:`~tyxonq.NoiseModel` applied: the model's channels (Pauli
        channels; any other raises, naming it) after every matching gate, its readout errors on
        samples.

        Examples
        --------
        >>> import tyxonq as tq
        >>> model = tq.NoiseModel().add(tq.channels.depolarizing(0.03, num_qubits=2), gates="2q")
        >>> noisy = tq.StabilizerCircuit(2).h(0).cx(0, 1).with_noise(model)
        >>> type(noisy).__name__, round(float(noisy.expectation_ps(z=[0, 1])), 12)
        ('StabilizerCircuit', 0.968)
        """
        return model.apply(self)

    # -- building ------------------------------------------------------------------------------
    def _changed(self, rebuild: bool = False, added: int = 1) -> None:
        """Forget what results made; with ``rebuild``, the program too (operations were placed
        elsewhere than at the end), else write the last ``added`` operations into it."""
        self._compiled = {}
        if rebuild or self._rotations:  # a circuit with non-Clifford rotations has no stim program
            self._builder = None
        elif self._builder is not None:
            for op in self._operations[len(self._operations) - added:]:
                self._builder.add(op)

    def _rotations_of(self, op: Operation, held: int) -> int:
        """The non-Clifford rotations ``op`` adds (0: Clifford), within the circuit's allowance
        (``held`` already), else :class:`NonCliffordError`."""
        try:
            check_clifford(op)
            return 0
        except NonCliffordError as error:
            if not self._max_rotations:
                raise
            try:
                steps = pauli_rotations(op)
            except NonCliffordError:
                raise error from None
        count = sum(1 for letters, phi in steps if set(letters) != {"I"} and not is_quarter_turn(phi))
        if held + count > self._max_rotations:
            raise NonCliffordError(f"{op.gate}: this circuit holds at most {self._max_rotations} "
                                   f"non-Clifford rotation(s) (max_non_clifford); each one can double the "
                                   "Pauli strings an expectation carries. Allow more, or use tq.Circuit")
        return count

    def _accept(self, operations: Sequence[Operation]) -> None:
        """Refuse what stim cannot run (a :class:`NonCliffordError` naming it; non-Clifford Pauli
        rotations within ``max_non_clifford``) before anything changes."""
        held = self._rotations
        for op in operations:
            if op.gate in ANNOTATION_KINDS or (not op.params and op.condition is None and op.channel is None
                                                and op.gate in CLIFFORD_GATES):
                continue
            held += self._rotations_of(op, held)
        self._accepting = held

    def _accepted(self, operations: Sequence[Operation], at_start: bool) -> None:
        self._rotations = self._accepting
        self._changed(rebuild=at_start, added=len(operations))

    def _restarted(self) -> None:
        self._rotations, self._compiled, self._builder = 0, {}, None

    def inverse(self) -> StabilizerCircuit:
        """The adjoint circuit (gates reversed and inverted); channels, measurements and
        annotations have none (a ``ValueError`` names them).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(2).h(0).s(0).cx(0, 1)
        >>> float(c.append(c.inverse()).expectation_ps(z=[0]))
        1.0
        """
        return self.with_operations([op.adjoint() for op in reversed(self._operations)])

    def detector(self, bits: int | Sequence[int], coords: Sequence[float] = ()) -> int:
        """Declare a detector: the parity of classical ``bits`` (their values now; bits from
        :meth:`measure`) is deterministic without noise, and flips when an error is caught.
        Returns its index among the detectors. ``coords`` are stim's coordinates (for decoders and
        plots).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(2).h(0).cx(0, 1)
        >>> a, b = c.measure(0, 1)
        >>> c.detector([a, b], coords=(0.5, 0))
        0
        """
        checked = self._written_bits(bits, "detector")
        coordinates = tuple(float(c) for c in coords)
        self._append((Operation("detector", (), coordinates, clbits=checked),))
        return sum(op.gate == "detector" for op in self._operations) - 1

    def observable_include(self, bits: int | Sequence[int], index: int = 0) -> StabilizerCircuit:
        """Add classical ``bits`` to logical observable ``index`` (its value is the parity of every
        bit included), as stim's ``OBSERVABLE_INCLUDE``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(1).x(0)
        >>> c.observable_include(c.measure(0)).num_observables
        1
        """
        checked = self._written_bits(bits, "observable_include")
        index = checked_count(index, "observable_include: index", minimum=0)
        self._append((Operation("observable", (), (index,), clbits=checked),))
        return self

    def _written_bits(self, bits: int | Sequence[int], what: str) -> tuple[int, ...]:
        bits = (bits,) if isinstance(bits, numbers.Integral) and not isinstance(bits, bool) else tuple(bits)
        written = {b for op in self._operations if op.gate == "measure" for b in op.clbits}
        for bit in bits:
            if isinstance(bit, bool) or not isinstance(bit, numbers.Integral) or bit not in written:
                raise ValueError(f"{what}: bit {bit!r} has not been measured into yet; name bits that "
                                 "c.measure(q) returned")
        return tuple(int(b) for b in bits)

    @property
    def num_detectors(self) -> int:
        return sum(op.gate == "detector" for op in self._operations)

    @property
    def num_observables(self) -> int:
        return max((int(op.params[0]) + 1 for op in self._operations if op.gate == "observable"), default=0)

    def _quantum_operations(self) -> list[Operation]:
        return [op for op in self._operations if op.gate not in ANNOTATION_KINDS]

    # -- the stim program ----------------------------------------------------------------------
    def _program(self) -> StimProgram:
        if self._rotations:
            raise NonCliffordError(f"this circuit holds {self._rotations} non-Clifford rotation(s): only its "
                                   "Pauli expectations are computed (exactly, by Pauli propagation); "
                                   "samples, states, detectors and stim export need a Clifford circuit, or "
                                   "tq.Circuit (c.to_circuit())")
        if "program" not in self._compiled:
            if self._builder is None:
                self._builder = ProgramBuilder()
                for op in self._operations:
                    self._builder.add(op)
            self._compiled["program"] = self._builder.program(self._num_clbits)
        return self._compiled["program"]

    def to_stim(self) -> Any:
        """This circuit as a ``stim.Circuit`` (no final measurement; global phases dropped).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(2).h(0).cx(0, 1).depolarizing(0, 1, p=0.01)
        >>> print(c.to_stim())
        H 0
        CX 0 1
        DEPOLARIZE2(0.01) 0 1
        """
        return self._program().circuit()

    def _final_circuit(self) -> Any:
        if "final" not in self._compiled:
            self._compiled["final"] = self._program().circuit(self._num_qubits)
        return self._compiled["final"]

    # -- results -------------------------------------------------------------------------------
    @takes_progress
    def sample(self, shots: int, seed: int | None = None, format: str = "counts", readout_error: Any = None,
               final: bool = True) -> Any:
        """``shots`` runs of the circuit, every qubit measured at the end, from stim's compiled
        sampler (noise, measurements, resets and feedback included).

        Formats and keys as :meth:`tyxonq.Circuit.sample`: with mid-circuit measurements the
        classical bits come first (``"<c0 c1 ...> <q0 q1 ...>"``); ``format="bits"`` gives the
        ``(shots, width)`` array, the form for wide circuits. Readout errors apply to the final
        qubits. The same ``seed`` gives the same samples with the same stim build.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(3).h(0)
        >>> bit = c.measure(0)
        >>> _ = c.cond(bit).x(2)
        >>> sorted(c.sample(100, seed=3))
        ['0 000', '1 101']
        """
        shots, confusions = self._sampling(shots, format, readout_error, seed, final)
        n, m = self._num_qubits, self._num_clbits
        require_sample_memory(shots, n + m, format, bits=True)
        program = self._program()
        if "reference" not in self._compiled:
            self._compiled["reference"] = self._reference_sample(program)
        circuit = self._final_circuit()
        sampler = circuit.compile_sampler(seed=seed, reference_sample=self._compiled["reference"])
        records = sampler.sample(shots)
        final_columns = records[:, program.num_measurements:] if final else records[:, :0]
        if m:
            bits = np.zeros((shots, m), dtype=bool)
            for bit, record in enumerate(program.clbit_records):
                if record is not None:
                    bits[:, bit] = records[:, record]
            final_columns = np.concatenate([bits, final_columns], axis=1)
        return formatted_rows(get_backend(), final_columns.view(np.int8), m, n, format, confusions, final,
                              seed, self.operations)

    def _reference_sample(self, program: StimProgram) -> np.ndarray:
        """stim's noiseless reference sample of the final circuit (the program's records, then every
        qubit's), its tableau made on the qubits the program acts on only: the others stay ``|0>``
        and read 0."""
        touched = program.stim_circuit.num_qubits
        what = f"sample() of a circuit acting on {touched:,} qubits"
        require_tableau_memory(touched, what, _REFERENCE_HINT)
        reference = program.circuit(touched).reference_sample()
        return np.concatenate([reference, np.zeros(self._num_qubits - touched, dtype=bool)])

    def sample_detectors(self, shots: int, seed: int | None = None,
                         separate_observables: bool = True) -> Any:
        """Detector outcomes (``True``: the detector fired) and logical observable flips of
        ``shots`` runs, as NumPy ``bool`` arrays ``(shots, num_detectors)`` and ``(shots,
        num_observables)`` (one array with the observables appended when
        ``separate_observables=False``): what decoders such as pymatching take.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(2).h(0).cx(0, 1).bit_flip(1, p=0.2)
        >>> c.detector(c.measure(0, 1))
        0
        >>> detectors, observables = c.sample_detectors(10000, seed=1)
        >>> detectors.shape, bool(abs(detectors.mean() - 0.2) < 0.02)
        ((10000, 1), True)
        """
        shots = checked_count(shots, "shots")
        checked_seed(seed)
        if self.num_detectors == 0 and self.num_observables == 0:
            raise ValueError("sample_detectors: the circuit declares no detector or observable "
                             "(c.detector(bits), c.observable_include(bits))")
        sampler = self._program().circuit().compile_detector_sampler(seed=seed)
        return sampler.sample(shots, separate_observables=separate_observables)

    def detector_error_model(self, decompose_errors: bool = False, **options: Any) -> Any:
        """The circuit's ``stim.DetectorErrorModel``: every error mechanism with its probability and
        the detectors and observables it flips (``pymatching.Matching.from_detector_error_model``
        builds a decoder from it). ``decompose_errors=True`` splits errors into graphlike parts
        (what matching decoders need); ``options`` go to stim's method.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(1).bit_flip(0, p=0.125)
        >>> _ = c.detector(c.measure(0))
        >>> print(c.detector_error_model())
        error(0.125) D0
        """
        return self._program().circuit().detector_error_model(decompose_errors=decompose_errors, **options)

    def _pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        """Exact values from the final tableau for a noiseless circuit without measurements, else
        each string carried backwards through the circuit (noise averaged exactly, not sampled)."""
        K = get_backend()
        values = K.asarray(self._exact_values(strings), K.real_dtype)
        return weighted_sum(K, values, coefficients)

    def _rehearsed(self, result: str, args: tuple, kwargs: dict) -> ContractionReport:
        """What ``result`` costs, counted before asking for it: Pauli expectations of a noisy,
        dynamic or non-Clifford circuit by propagation (``report.propagation``: the a-priori bound
        ``2^k`` strings per observable for ``k`` non-Clifford rotations, the most it becomes, the
        passes through Clifford runs), everything else by stim's tableau or frame simulator (its
        memory: the tableau's).

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(2, max_non_clifford=2).h(0).t(0).cx(0, 1).t(1).h(1)
        >>> report = c.rehearse("pauli_expectations", ["XZ", "ZZ"])
        >>> report.routes, report.propagation.bound, report.propagation.widest
        (('pauli-propagation',), 4, 4)
        """
        K = get_backend()
        tableau = tableau_bytes(self._num_qubits)
        if result in ("expectation_ps", "pauli_expectations") and self._propagated():
            if result == "expectation_ps":
                strings = [self._pauli_string(*args, **kwargs)]
            else:
                strings = self._validated_strings(args[0] if args else kwargs["strings"])
            counts = propagation_counts(self._backward(), strings)
            return route_report(K, ("pauli-propagation",), 0, propagation=counts)
        return route_report(K, ("stabilizer",), tableau)

    def _propagated(self) -> bool:
        """Whether exact values come by carrying strings backwards (noise, measurements,
        non-Clifford rotations, or a tableau too large to hold) rather than from the tableau."""
        return bool(self.is_noisy() or self.is_dynamic() or self._rotations or not self._tableau_fits())

    def _backward(self) -> Any:
        if "backward" not in self._compiled:
            self._compiled["backward"] = backward_program(self._operations, self._num_qubits)
        return self._compiled["backward"]

    def _exact_values(self, strings: list[str]) -> np.ndarray:
        if not strings:
            return np.zeros(0)
        if self._propagated():
            return propagated_expectations(self._backward(), strings)
        stim = require_stim()
        simulator = self._tableau_simulator()
        return np.array([simulator.peek_observable_expectation(stim.PauliString(s)) for s in strings],
                        dtype=float)

    def _tableau_fits(self) -> bool:
        """Whether the final tableau is made (or fits): else exact values come by propagation,
        whose memory grows as ``n``, not ``n^2``."""
        return "tableau" in self._compiled or tableau_fits(self._num_qubits)

    def _tableau_simulator(self) -> Any:
        if "tableau" not in self._compiled:
            require_tableau_memory(self._num_qubits, "stim's tableau simulator",
                                   "Use expectation_ps or pauli_expectations (they propagate each string "
                                   "instead), or fewer qubits.")
            simulator = require_stim().TableauSimulator()
            simulator.set_num_qubits(self._num_qubits)
            simulator.do(self._program().circuit())
            self._compiled["tableau"] = simulator
        return self._compiled["tableau"]

    def expectation_ps(self, x: Sequence[int] = (), y: Sequence[int] = (), z: Sequence[int] = ()) -> Any:
        """Exact expectation of a Pauli string, e.g. ``expectation_ps(x=[0], z=[1, 2])`` for X0 Z1 Z2.

        Examples
        --------
        >>> import tyxonq as tq
        >>> float(tq.StabilizerCircuit(1).h(0).expectation_ps(x=[0]))
        1.0
        """
        return self.pauli_expectations([self._pauli_string(x, y, z)])[0]

    def _pauli_string(self, x: Sequence[int] = (), y: Sequence[int] = (), z: Sequence[int] = ()) -> str:
        letters = ["I"] * self._num_qubits
        for name, qubits in (("X", x), ("Y", y), ("Z", z)):
            for q in self._checked_qubits(list(qubits), "expectation_ps") if len(list(qubits)) else ():
                if letters[q] != "I":
                    raise ValueError(f"expectation_ps: qubit {q} appears in more than one of x, y, z")
                letters[q] = name
        if set(letters) == {"I"}:
            raise ValueError("expectation_ps needs at least one qubit in x, y or z")
        return "".join(letters)

    def _local_expectation(self, operators: tuple, matrices: list, groups: list, diagonal: list,
                           hermitian: bool, K: ArrayBackend) -> Any:
        """``(matrix, qubits)`` operators expanded in Pauli strings (at most
        :data:`EXPECTATION_QUBITS` qubits in all), each string's exact value summed."""
        qubits = [q for group in groups for q in group]
        if len(qubits) > EXPECTATION_QUBITS:
            raise ValueError(f"expectation of operators on {len(qubits)} qubits: a stabilizer circuit "
                             f"expands them in Pauli strings, at most {EXPECTATION_QUBITS} qubits; use "
                             "expectation_ps or pauli_expectations for Pauli strings of any width")
        product = np.ones((1, 1), dtype=complex)
        for matrix in matrices:
            product = np.kron(product, np.asarray(K.to_numpy(matrix), dtype=complex))
        coefficients = pauli_coefficients(product)
        used = np.flatnonzero(np.abs(coefficients) > 1e-14)
        strings = []
        for index in used:
            letters = ["I"] * self._num_qubits
            for position, qubit in enumerate(qubits):
                letters[qubit] = PAULI_LETTERS[(int(index) >> (2 * (len(qubits) - 1 - position))) & 3]
            strings.append("".join(letters))
        value = complex(np.dot(coefficients[used], self._exact_values(strings)))
        return K.asarray(value.real, K.real_dtype) if hermitian else K.asarray(value, K.dtype)

    def _dynamic_results(self) -> Any:
        """The stabilizer simulator runs measurements, resets and feedback itself: its dynamic
        results are its own (:class:`StabilizerDynamicResults`)."""
        return StabilizerDynamicResults(self)

    def _pauli_sum_value(self, hamiltonian: PauliSum, method: str, hermitian: bool) -> Any:
        value = self.pauli_expectations([s for _, s in hamiltonian], [c for c, _ in hamiltonian])
        return get_backend().real(value) if hermitian else value

    def _marginal_probability(self, qubits: tuple[int, ...]) -> Any:
        """Exact probabilities of the ``2**k`` outcomes of measuring ``qubits`` (in the order
        given, the first the most significant bit; at most :data:`MARGINAL_QUBITS`), noise and
        mid-circuit measurements included: the Walsh-Hadamard transform of the ``2^k`` exact
        ``<Z_S>`` over the subsets ``S`` of ``qubits``. Shot estimates (``sample_expectation_ps``,
        ``expectation(..., shots=)``) draw from it.

        Examples
        --------
        >>> import tyxonq as tq
        >>> c = tq.StabilizerCircuit(3).h(0).cx(0, 2).bit_flip(2, p=0.25)
        >>> (tq.get_backend().to_numpy(c.marginal_probability([0, 2])).round(12) + 0.0).tolist()
        [0.375, 0.125, 0.125, 0.375]
        """
        k = len(qubits)
        if k > MARGINAL_QUBITS:
            raise ValueError(f"marginal_probability of {k} qubits takes 2^{k} exact expectations; a "
                             f"stabilizer circuit computes it for at most {MARGINAL_QUBITS}: use sample()")
        strings = []
        for subset in range(1, 2 ** k):
            letters = ["I"] * self._num_qubits
            for position, qubit in enumerate(qubits):
                if (subset >> (k - 1 - position)) & 1:
                    letters[qubit] = "Z"
            strings.append("".join(letters))
        transform = np.concatenate([[1.0], self._exact_values(strings)]).reshape((2,) * k)
        for axis in range(k):  # P(b) = 2^-k sum_S (-1)^(b . S) <Z_S>
            first, second = np.take(transform, 0, axis=axis), np.take(transform, 1, axis=axis)
            transform = np.stack([first + second, first - second], axis=axis)
        K = get_backend()
        return K.asarray(np.clip(transform.reshape(-1) / 2 ** k, 0.0, None), K.real_dtype)

    def _reduced_density_matrix(self, qubits: tuple[int, ...]) -> Any:
        """The density matrix of ``qubits`` (at most :data:`DENSITY_QUBITS`), exactly, noise and
        mid-circuit measurements included: ``2^-k sum_P <P> P`` over the ``4^k`` Pauli strings
        ``P`` on them.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> rho = tq.StabilizerCircuit(3).h(0).cx(0, 2).reduced_density_matrix([0, 2])
        >>> (K.to_numpy(rho).real.round(6) + 0.0).tolist()[0]
        [0.5, 0.0, 0.0, 0.5]
        """
        k = len(qubits)
        if k > DENSITY_QUBITS:
            raise ValueError(f"reduced_density_matrix of {k} qubits takes 4^{k} exact expectations; a "
                             f"stabilizer circuit computes it for at most {DENSITY_QUBITS}: use "
                             "pauli_expectations for the Pauli strings you need")
        local = ["".join(letters) for letters in itertools.product(PAULI_LETTERS, repeat=k)]
        strings = []
        for word in local:
            letters = ["I"] * self._num_qubits
            for qubit, letter in zip(qubits, word):
                letters[qubit] = letter
            strings.append("".join(letters))
        values = self._exact_values(strings)
        rho = sum(value * pauli_matrix(word) for value, word in zip(values, local) if value) / 2 ** k
        K = get_backend()
        return K.asarray(np.asarray(rho, dtype=complex), K.dtype)

    def _pure_state(self, what: str) -> Any:
        n = self._num_qubits
        if self.is_noisy():
            raise self._noisy_refusal(what)
        self._require_pure(what)
        if self._rotations:
            raise UnsupportedResult(f"StabilizerCircuit.{what}: this circuit holds non-Clifford rotations; "
                                    "only its Pauli expectations are computed here: use c.to_circuit()")
        K = get_backend()
        if n > STATE_QUBITS:
            raise ValueError(f"{what} of {n} qubits is a 2^{n} vector; a stabilizer circuit builds it for at "
                             f"most {STATE_QUBITS} qubits: use expectation_ps, pauli_expectations or sample")
        require_memory(K, 2 ** n, what, "use expectation_ps, pauli_expectations or sample")
        return K.asarray(_exact_stabilizer_vector(self._tableau_simulator().state_vector(endian="big")),
                         K.dtype)

    def state(self) -> Any:
        """The state vector (``2**n``, at most :data:`STATE_QUBITS` qubits), up to a global phase
        (a stabilizer state forgets the gates' phase: here the first nonzero amplitude is real and
        positive). A mixed state (channels, mid-circuit measurements) is refused
        (:class:`~tyxonq.UnsupportedResult`): its density matrix is ``c.to_circuit().state()``.

        Examples
        --------
        >>> import tyxonq as tq
        >>> K = tq.get_backend()
        >>> (abs(K.to_numpy(tq.StabilizerCircuit(2).h(0).cx(0, 1).state())) ** 2).round(6).tolist()
        [0.5, 0.0, 0.0, 0.5]
        """
        return self._pure_state("state()")

    def _probability(self) -> Any:
        """``|psi|^2`` of a pure state; a mixed one's from :meth:`marginal_probability` of every
        qubit (at most :data:`MARGINAL_QUBITS`)."""
        if self.is_noisy() or self.is_dynamic() or self._rotations:
            return self.marginal_probability(range(self._num_qubits))
        K = get_backend()
        vector = self._pure_state("probability()")
        return K.real(K.conj(vector) * vector)

    def _amplitude(self, bits: tuple[int, ...]) -> Any:
        """In :meth:`state`'s phase (at most :data:`STATE_QUBITS` qubits)."""
        return self._pure_state("amplitude()")[int("".join(map(str, bits)), 2)]

    @dynamic_route
    def _matrix(self) -> Any:
        """The unitary of the same gates on a :class:`~tyxonq.Circuit` (with their phases)."""
        return self.to_circuit().matrix()

    # -- interchange and drawing without the annotations ------------------------------------------
    def _unannotated(self) -> StabilizerCircuit:
        return self.with_operations(self._quantum_operations())

    def to_qiskit(self) -> Any:
        """As :meth:`tyxonq.Circuit.to_qiskit` (detectors and observables left out)."""
        return SimulatorBase.to_qiskit(self._unannotated())

    def to_openqasm(self, version: int = 2) -> str:
        """As :meth:`tyxonq.Circuit.to_openqasm` (detectors and observables left out)."""
        return SimulatorBase.to_openqasm(self._unannotated(), version)

    def _drawn_operations(self, output: str) -> list[Operation]:
        """Detectors and observables are drawn in figures only (the text diagram has no classical
        row)."""
        return list(self.operations) if output == "mpl" else self._quantum_operations()


def _exact_stabilizer_vector(vector: np.ndarray) -> np.ndarray:
    """stim's single-precision state vector made exact: a stabilizer state is ``2^(-r/2)`` times
    powers of ``i`` on a support of ``2^r`` basis states (global phase: its first amplitude real
    and positive)."""
    vector = np.asarray(vector, dtype=complex)
    support = np.abs(vector) > 0.5 * np.max(np.abs(vector))
    first = vector[np.argmax(support)]
    quarter_turns = np.round(np.angle(vector / first) / (np.pi / 2))
    exact = np.where(support, np.exp(0.5j * np.pi * quarter_turns), 0.0)
    exact.real[np.abs(exact.real) < 0.5] = 0.0  # cos(pi/2) exactly
    exact.imag[np.abs(exact.imag) < 0.5] = 0.0
    return exact / np.sqrt(np.count_nonzero(support))


class StabilizerDynamicResults(DynamicResults):
    """A dynamic stabilizer circuit's results: stim and the backward propagation run measurements,
    resets and feedback themselves, so the circuit answers (no post-selection: every shot is
    accepted)."""

    @property
    def mixed(self) -> bool:
        return any(op.gate in ("measure", "reset") for op in self.circuit.operations)

    def acceptance(self) -> Any:
        K = get_backend()
        return K.asarray(1.0, K.real_dtype)

    def expectation(self, matrices: list, groups: list, hermitian: bool) -> Any:
        return self.circuit.expectation(*zip(matrices, groups), hermitian=hermitian)

    def pauli_expectations(self, strings: list[str], coefficients: Any, method: str = "auto") -> Any:
        return self.circuit.pauli_expectations(strings, coefficients)

    def marginal_probability(self, qubits: Sequence[int]) -> Any:
        return self.circuit.marginal_probability(qubits)

    def reduced_density_matrix(self, qubits: Sequence[int]) -> Any:
        return self.circuit.reduced_density_matrix(qubits)

    def pure_state(self) -> Any:
        return self.circuit.state()

    def pure_amplitude(self, bits: Sequence[int]) -> Any:
        return self.circuit.amplitude("".join(map(str, bits)))

    def branch_rows(self, shots: int, seed: Any, final: bool) -> np.ndarray:
        """stim's frame sampler runs measurements, resets and feedback (exact readout)."""
        drawn = self.circuit.with_readout(None).sample(shots, seed, "bits", final=final)
        return np.asarray(get_backend().to_numpy(drawn), dtype=np.int8)
