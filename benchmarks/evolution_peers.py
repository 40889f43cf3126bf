"""Peer implementations of the time-evolution rows of ``benchmarks/evolution_rows.py``.

Each function takes plain NumPy inputs and returns NumPy outputs computed by one peer library;
the peer is imported inside the function, so a missing peer raises ``ImportError`` only when its
row is run. The results follow tyxonq's conventions:

* state vectors are big-endian: qubit 0 is the most significant bit of an index;
* a Pauli string such as ``"XZI"`` has letter ``q`` acting on qubit ``q``;
* the propagator is ``exp(-i H t)``;
* ``initial_bits[q]`` is the computational-basis value of qubit ``q`` (the Néel state of the
  rows is ``1010...``: qubit 0 is 1).

Rows:

(a) exact evolution of a state-vector under a sparse Hamiltonian (tyxonq's big-endian CSR from
    ``PauliSum.to_sparse()``) at many output times: :func:`scipy_expm_multiply`,
    :func:`quimb_evolution`, :func:`tensorcircuit_krylov`;
(b) TEBD of the transverse-field Ising chain ``H = -sum Z_i Z_{i+1} - h sum X_i`` from
    ``|0...0>``, returning ``<Z_i>``: :func:`quimb_tebd_tfim`, :func:`aer_mps_trotter_tfim`;
(c) value and gradient (time, then every coefficient) of ``<psi| sum Z_i Z_{i+1} |psi>`` for
    ``psi = S_2(t / r)^r |bits>``, the second-order Suzuki-Trotter product of a Pauli sum taken
    in its given term order: :func:`pennylane_trotter`, :func:`aer_trotter`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = [
    "TC_KRYLOV_DIMENSION",
    "scipy_expm_multiply",
    "quimb_evolution",
    "tensorcircuit_krylov",
    "quimb_tebd_tfim",
    "aer_mps_trotter_tfim",
    "pennylane_trotter",
    "aer_trotter",
]

# Krylov dimension of tensorcircuit's single-space Lanczos evolution that reaches an error
# ||psi_m(t) - psi(t)|| <= 1e-8 at t = 5 for the 20-qubit Heisenberg chain from the Néel state
# (measured with the same single-space Lanczos recurrence: m = 155 -> 1.9e-7, 160 -> 6.8e-9,
# 165 -> 1.5e-10, 170 -> 3e-12; see tensorcircuit_krylov).
TC_KRYLOV_DIMENSION = 165


# ---------------------------------------------------------------------------------------------
# helpers
def _even_grid(times: np.ndarray) -> bool:
    """True when ``times`` is ``linspace(times[0], times[-1], len(times))`` (to rounding)."""
    if times.ndim != 1 or len(times) < 2:
        return False
    grid = np.linspace(times[0], times[-1], len(times))
    return bool(np.allclose(times, grid, rtol=0.0, atol=1e-12 * max(1.0, abs(times[-1]))))


def _bits(initial_bits: Any, n: int) -> list[int]:
    """``initial_bits`` (a 0/1 sequence or a string like "1010") as a list of ``n`` ints."""
    bits = [int(b) for b in initial_bits]
    if len(bits) != n or any(b not in (0, 1) for b in bits):
        raise ValueError(f"initial_bits must be {n} values 0/1, got {initial_bits!r}")
    return bits


def _checked_terms(strings: Sequence[str], coefficients: Any) -> tuple[list[str], np.ndarray, int]:
    strings = [str(s) for s in strings]
    coefficients = np.asarray(coefficients, dtype=float).reshape(-1)
    if len(strings) != len(coefficients) or not strings:
        raise ValueError("strings and coefficients must have the same, nonzero, length")
    n = len(strings[0])
    if any(len(s) != n for s in strings):
        raise ValueError("all Pauli strings must have the same length")
    return strings, coefficients, n


# ---------------------------------------------------------------------------------------------
# (a) exact evolution at many times
def scipy_expm_multiply(h_csr: Any, psi0: np.ndarray, times: np.ndarray) -> np.ndarray:
    """States ``exp(-i H t) psi0`` for every ``t`` in ``times``, shape ``(len(times), dim)``.

    SciPy: ``scipy.sparse.linalg.expm_multiply(-1j * H, psi0, start=times[0], stop=times[-1],
    num=len(times), endpoint=True)`` (Al-Mohy & Higham's truncated Taylor series with scaling,
    double-precision tolerance, one call for the whole grid) when ``times`` is an even grid; for
    any other ``times`` one ``expm_multiply(-1j * (t_k - t_{k-1}) * H, psi)`` call per interval
    (starting from ``t = 0``). ``H`` is used as given (a SciPy sparse matrix, e.g. tyxonq's
    big-endian CSR).
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import expm_multiply

    times = np.asarray(times, dtype=float).reshape(-1)
    psi0 = np.asarray(psi0, dtype=complex).reshape(-1)
    a = -1j * sp.csr_matrix(h_csr, dtype=complex)
    if _even_grid(times):
        states = expm_multiply(a, psi0, start=float(times[0]), stop=float(times[-1]),
                               num=len(times), endpoint=True)
        return np.asarray(states).reshape(len(times), -1)
    states = np.empty((len(times), psi0.size), dtype=complex)
    psi, previous = psi0, 0.0
    for k, t in enumerate(times):
        psi = expm_multiply(a * (float(t) - previous), psi) if t != previous else psi
        states[k], previous = psi, float(t)
    return states


def quimb_evolution(h_csr: Any, psi0: np.ndarray, times: np.ndarray) -> np.ndarray:
    """States ``exp(-i H t) psi0`` for every ``t`` in ``times``, shape ``(len(times), dim)``.

    quimb: ``quimb.Evolution(psi0, H, method="expm", expm_backend="SCIPY")`` and
    ``Evolution.at_times(times)``: quimb steps from the previous output time with
    ``quimb.linalg.expm_multiply(-1j * (t_k - t_{k-1}) * H, psi)``, i.e. SciPy's
    ``expm_multiply`` (double-precision Taylor tolerance; errors ~1e-13 here). quimb's default
    ``method="integrate"`` (scipy ``complex_ode``, dop853, or dopri5 with ``int_small_step``,
    at scipy's default ``rtol=1e-6``, which quimb does not expose) is only accurate to 2e-7
    (dop853; dopri5: 1e-5) already on 12 qubits to t = 5, and ``method="solve"`` diagonalises
    the dense matrix, so neither is used. (``expm_backend="AUTO"`` would pick SLEPc when it is
    installed; it is pinned to SciPy.)
    """
    import quimb

    times = np.asarray(times, dtype=float).reshape(-1)
    psi0 = np.asarray(psi0, dtype=complex).reshape(-1, 1)
    evolution = quimb.Evolution(psi0, h_csr, method="expm", expm_backend="SCIPY")
    states = np.empty((len(times), psi0.size), dtype=complex)
    for k, state in enumerate(evolution.at_times(times)):
        states[k] = np.asarray(state).reshape(-1)
    return states


_TC_JITTED: dict[int, Any] = {}


def tensorcircuit_krylov(h_csr: Any, psi0: np.ndarray, times: np.ndarray,
                         dimension: int = TC_KRYLOV_DIMENSION) -> np.ndarray:
    """States ``exp(-i H t) psi0`` for every ``t`` in ``times``, shape ``(len(times), dim)``.

    tensorcircuit-ng: ``tc.set_backend("jax")``, ``tc.set_dtype("complex128")`` (these set
    tensorcircuit's global backend and dtype for the process), ``H`` converted to a JAX BCOO by
    ``tc.backend.coo_sparse_matrix_from_numpy(H.tocoo())`` (turned into BCSR inside by
    ``tc.quantum.aslinearoperator``), and ``tc.timeevol.krylov_evol(H, psi0, times,
    subspace_dimension=dimension)`` under ``tc.backend.jit`` (one compiled function per
    ``dimension``, cached across calls; the first call pays the compilation).

    ``krylov_evol`` (tc-ng 1.10: ``matrixfunc.exponential_action`` with
    ``KrylovConfig(max_dim=dimension, reorthogonalization="full")``) builds ONE Lanczos space of
    fixed size ``dimension`` from ``psi0`` (a ``scan`` of ``dimension`` matrix-vector products
    with full Gram-Schmidt reorthogonalisation, the basis stored as a ``dim x dimension``
    array) and evaluates ``|psi0| V exp(-i t T) e_1`` for every ``t`` from the eigenpairs of the
    projected tridiagonal ``T``; it does not step between times and has no error control, so
    ``dimension`` must be large enough for the LARGEST time. For the 20-qubit Heisenberg chain
    from the Néel state at t = 5 (spectrum of width ~54, so ``||H|| t / 2 ~ 135``) the error is
    1.9e-7 at ``dimension = 155``, 6.8e-9 at 160, 1.5e-10 at 165 and 3e-12 at 170 (16 qubits:
    1.4e-8 at 125, 2.5e-10 at 130); the default, 165, is the smallest multiple of 5 with a
    margin below 1e-8. The basis then takes 2^20 x 165 x 16 B = 2.8 GB.
    """
    import tensorcircuit as tc

    tc.set_backend("jax")
    tc.set_dtype("complex128")
    K = tc.backend
    dimension = int(dimension)
    if dimension not in _TC_JITTED:
        def evolve(hamiltonian: Any, state: Any, ts: Any) -> Any:
            return tc.timeevol.krylov_evol(hamiltonian, state, ts, subspace_dimension=dimension)

        _TC_JITTED[dimension] = K.jit(evolve)
    hamiltonian = K.coo_sparse_matrix_from_numpy(h_csr.tocoo())
    state = K.convert_to_tensor(np.asarray(psi0, dtype=np.complex128).reshape(-1))
    ts = K.convert_to_tensor(np.asarray(times, dtype=np.float64).reshape(-1))
    states = _TC_JITTED[dimension](hamiltonian, state, ts)
    return np.asarray(K.numpy(states)).reshape(len(times), -1)


# ---------------------------------------------------------------------------------------------
# (b) TEBD of the transverse-field Ising chain
def quimb_tebd_tfim(n: int, h: float, time: float, dt: float, max_bond: int,
                    cutoff: float = 1e-10) -> np.ndarray:
    """``<Z_i>`` (i = 0..n-1) at ``time`` for ``H = -sum Z_i Z_{i+1} - h sum X_i`` from ``|0...0>``.

    quimb: ``qtn.TEBD(qtn.MPS_computational_state("0" * n), H, dt=dt,
    split_opts={"max_bond": max_bond, "cutoff": cutoff}, progbar=False)`` and
    ``update_to(time, order=2)`` (Strang splitting between the even- and odd-bond layers of
    two-site gates, the one-site X terms absorbed by quimb's ``LocalHam1D`` into the bond
    terms; quimb's default ``cutoff_mode="rel"``: singular values below ``cutoff`` times the
    largest are dropped). ``H = qtn.ham_1d_ising(n, j=-4.0, bx=2.0 * h)``: quimb's Ising
    Hamiltonian is ``j sum S^Z S^Z - bx sum S^X`` in spin-1/2 operators ``S = sigma / 2``, so
    ``j = -4`` and ``bx = 2 h`` give ``-sum ZZ - h sum X`` in Pauli matrices. ``<Z_i>`` from
    ``compute_local_expectation_canonical`` (reduced density matrices, moving the
    orthogonality centre along the chain).
    """
    import quimb.tensor as qtn

    hamiltonian = qtn.ham_1d_ising(n, j=-4.0, bx=2.0 * h)
    psi0 = qtn.MPS_computational_state("0" * n)
    tebd = qtn.TEBD(psi0, hamiltonian, dt=dt, split_opts={"max_bond": max_bond, "cutoff": cutoff},
                    progbar=False)
    tebd.update_to(time, order=2, progbar=False)
    z = np.diag([1.0, -1.0]).astype(complex)
    values = tebd.pt.compute_local_expectation_canonical({(i,): z for i in range(n)},
                                                         return_all=True, inplace=True)
    return np.array([float(np.real(values[(i,)])) for i in range(n)])


def aer_mps_trotter_tfim(n: int, h: float, time: float, dt: float, max_bond: int) -> np.ndarray:
    """``<Z_i>`` (i = 0..n-1) at ``time`` for ``H = -sum Z_i Z_{i+1} - h sum X_i`` from ``|0...0>``.

    qiskit-aer: ``AerSimulator(method="matrix_product_state",
    matrix_product_state_max_bond_dimension=max_bond)`` (Aer's default truncation threshold,
    1e-16 on the squared singular values) on a second-order Trotter circuit of
    ``r = round(time / dt)`` steps of ``dt = time / r``: per step ``RX(-h dt)`` on every qubit
    (``exp(+i h dt/2 X)``), ``RZZ(-2 dt)`` (``exp(+i dt ZZ)``) on the even bonds then the odd
    bonds, ``RX(-h dt)`` on every qubit; the two half-step RX layers between consecutive steps
    are merged into one ``RX(-2 h dt)`` layer (the same product). ``<Z_i>`` from
    ``save_expectation_value(Pauli("Z"), [i])`` for each qubit (one-qubit operators on explicit
    qubits, so Qiskit's little-endian labels do not enter; tyxonq's qubit q is Qiskit's qubit q).
    The circuit is run without transpilation (``rx`` and ``rzz`` are native to Aer).
    """
    from qiskit import QuantumCircuit
    from qiskit.quantum_info import Pauli
    from qiskit_aer import AerSimulator

    steps = max(1, int(round(time / dt)))
    step = time / steps
    circuit = QuantumCircuit(n)

    def rx_layer(angle: float) -> None:
        for q in range(n):
            circuit.rx(angle, q)

    rx_layer(-h * step)
    for k in range(steps):
        for first in (0, 1):
            for q in range(first, n - 1, 2):
                circuit.rzz(-2.0 * step, q, q + 1)
        rx_layer(-2.0 * h * step if k < steps - 1 else -h * step)
    for q in range(n):
        circuit.save_expectation_value(Pauli("Z"), [q], label=f"z{q}")
    simulator = AerSimulator(method="matrix_product_state",
                             matrix_product_state_max_bond_dimension=int(max_bond))
    data = simulator.run(circuit, shots=1).result().data(0)
    return np.array([float(np.real(data[f"z{q}"])) for q in range(n)])


# ---------------------------------------------------------------------------------------------
# (c) value and gradient through a second-order Trotter circuit
def pennylane_trotter(strings: Sequence[str], coefficients: Any, time: float, steps: int,
                      initial_bits: Any) -> tuple[float, np.ndarray]:
    """``(E, dE/d(t, c_1..c_L))`` for ``E = <psi| sum Z_i Z_{i+1} |psi>``,
    ``psi = S_2(t / steps)^steps |initial_bits>``, ``H = sum_j c_j P_j`` in the given order.

    PennyLane: ``lightning.qubit`` QNode with ``diff_method="adjoint"`` and ``qml.grad``
    (autograd); ``qml.BasisState(initial_bits)``, then ``qml.TrotterProduct(H / s,
    time=-s t, n=steps, order=2)`` with ``H / s = qml.sum(*[qml.s_prod(c_j / s, P_j)])`` in the
    given term order (the Pauli words built from the strings, wire q = tyxonq's qubit q; wire 0
    is the most significant in PennyLane too; ``s`` below).
    ``TrotterProduct`` approximates ``exp(+i H time)``, hence a negative time; its order-2 step
    is the palindrome ``prod_j e^{-i dt/2 c_j P_j} prod_{j reversed} e^{-i dt/2 c_j P_j}``, the
    same factors in the same order as tyxonq's. The derivatives with respect to ``t`` and to
    every ``c_j`` reach the gates of the decomposition (IsingXX/YY/ZZ, RX, ... on lightning)
    through autograd; the adjoint method differentiates the gate parameters.

    PennyLane 0.45 loses the derivative of a coefficient whose value is exactly 1 (``qml.dot``
    skips ``s_prod`` for ``coeff == 1``, and the decomposition of ``Evolution`` calls
    ``SProd.simplify``, which drops a unit scalar: with ``H = qml.dot(c, ops)`` the gradient
    entries of all unit coefficients come out 0), so the Hamiltonian is passed rescaled by
    ``s = 2 max_j |c_j|`` (every ``|c_j / s| <= 1/2``), time ``-s t``: the same gates, to
    rounding. (A
    coefficient exactly 0 would still lose its derivative: PauliSentence.simplify drops it.)
    Observable ``qml.expval(qml.dot(ones, [Z_i Z_{i+1}]))``.
    """
    import pennylane as qml
    from pennylane import numpy as pnp

    strings, coefficients, n = _checked_terms(strings, coefficients)
    bits = _bits(initial_bits, n)
    ops = []
    for s in strings:
        factors = [getattr(qml, {"X": "PauliX", "Y": "PauliY", "Z": "PauliZ"}[letter])(q)
                   for q, letter in enumerate(s) if letter != "I"]
        if not factors:
            factors = [qml.Identity(0)]
        ops.append(factors[0] if len(factors) == 1 else qml.prod(*factors))
    observable = qml.dot([1.0] * (n - 1), [qml.PauliZ(i) @ qml.PauliZ(i + 1) for i in range(n - 1)])
    device = qml.device("lightning.qubit", wires=n)

    scale = 2.0 * float(np.max(np.abs(coefficients))) or 1.0

    @qml.qnode(device, diff_method="adjoint")
    def energy(params: Any) -> Any:
        qml.BasisState(np.array(bits), wires=range(n))
        hamiltonian = qml.sum(*[qml.s_prod(params[1 + j] / scale, op) for j, op in enumerate(ops)])
        qml.TrotterProduct(hamiltonian, time=-scale * params[0], n=int(steps), order=2)
        return qml.expval(observable)

    params = pnp.array(np.concatenate([[float(time)], coefficients]), requires_grad=True)
    value = float(energy(params))
    gradient = np.asarray(qml.grad(energy)(params), dtype=float)
    return value, gradient


def aer_trotter(strings: Sequence[str], coefficients: Any, time: float, steps: int,
                initial_bits: Any, fd_step: float = 1e-5) -> tuple[float, np.ndarray]:
    """``(E, dE/d(t, c_1..c_L))`` for ``E = <psi| sum Z_i Z_{i+1} |psi>``,
    ``psi = S_2(t / steps)^steps |initial_bits>``, ``H = sum_j c_j P_j`` in the given order.

    Qiskit + qiskit-aer: ``PauliEvolutionGate(SparsePauliOp(labels, c), time=t,
    synthesis=SuzukiTrotter(order=2, reps=steps, preserve_order=True))`` (``exp(-i H t)``; its
    order-2 step applies the terms in the given order with half steps, the last term a full
    step, then back: tyxonq's product) after X gates on the qubits whose bit is 1, with the
    labels reversed (Qiskit's label is little-endian: its last character is qubit 0) so that
    tyxonq's qubit q is Qiskit's qubit q. The value from ``save_expectation_value(
    SparsePauliOp(sum Z_i Z_{i+1}))`` on ``AerSimulator(method="statevector")``; the gradient
    by central finite differences ``(E(x + d e_k) - E(x - d e_k)) / (2 d)``,
    ``d = fd_step = 1e-5``, over the ``1 + L`` parameters ``x = (t, c_1..c_L)`` (truncation and
    rounding errors: 3e-9 at 4-8 qubits, 2.4e-8 at 16 qubits and 20 steps; the value itself
    agrees to ~1e-13). ``PauliEvolutionGate`` rejects ``Parameter`` coefficients, so the
    ``1 + 2 (1 + L)`` circuits are built with numeric values, transpiled together with
    ``transpile(circuits, simulator, optimization_level=0)`` (the synthesised rotations and CX
    ladders unchanged) and run as one Aer job: that is ``2 (1 + L) + 1`` full state-vector
    simulations (123 for the 16-qubit row). The default optimisation level must not be used for
    the finite differences: at 6 qubits it made the derivatives of the XX, YY, ZZ coefficients
    of the edge bonds all equal to their average (errors up to 0.6), presumably because the
    commuting XX, YY, ZZ rotations of a bond are consolidated into one two-qubit unitary whose
    resynthesis snaps Weyl coordinates that differ by ~1e-5 onto the symmetric point.
    """
    from qiskit import QuantumCircuit, transpile
    from qiskit.circuit.library import PauliEvolutionGate
    from qiskit.quantum_info import SparsePauliOp
    from qiskit.synthesis import SuzukiTrotter
    from qiskit_aer import AerSimulator

    strings, coefficients, n = _checked_terms(strings, coefficients)
    bits = _bits(initial_bits, n)
    labels = [s[::-1] for s in strings]
    observable = SparsePauliOp(["I" * (n - 2 - i) + "ZZ" + "I" * i for i in range(n - 1)])

    def circuit(x: np.ndarray) -> Any:
        gate = PauliEvolutionGate(SparsePauliOp(labels, coeffs=x[1:]), time=float(x[0]),
                                  synthesis=SuzukiTrotter(order=2, reps=int(steps),
                                                          preserve_order=True))
        qc = QuantumCircuit(n)
        for q, b in enumerate(bits):
            if b:
                qc.x(q)
        qc.append(gate, range(n))
        qc.save_expectation_value(observable, range(n), label="energy")
        return qc

    x0 = np.concatenate([[float(time)], coefficients])
    points = [x0]
    for k in range(len(x0)):
        for sign in (1.0, -1.0):
            x = x0.copy()
            x[k] += sign * fd_step
            points.append(x)
    simulator = AerSimulator(method="statevector")
    compiled = transpile([circuit(x) for x in points], simulator, optimization_level=0)
    result = simulator.run(compiled, shots=1).result()
    values = np.array([float(np.real(result.data(k)["energy"])) for k in range(len(points))])
    gradient = (values[1::2] - values[2::2]) / (2.0 * fd_step)
    return float(values[0]), gradient
