"""The benchmark workloads as backend-neutral specifications: exact gates, angles, seeds, sizes.

Every engine (tyxonq on each backend, every peer simulator) builds its workload from the
:class:`Spec` that :func:`make_spec` returns, and :mod:`reference` computes the expected result
from the same spec with dense NumPy. Nothing here imports tyxonq or a peer.

Conventions (every engine follows them; the reference defines them):

- qubit 0 is the most significant bit of a state index (tyxonq, pennylane, tensorcircuit, quimb);
- ``rx/ry/rz(θ) = exp(-iθP/2)``, ``rzz(θ) = exp(-iθ Z⊗Z/2)``, ``cx(control, target)``, ``cz``, ``h``;
- a gate's angle is ``scale * params[param]`` (``param`` None: a fixed gate);
- a Hamiltonian is a tuple of ``(coefficient, pauli_string)`` with letter ``q`` acting on qubit ``q``;
- noisy workloads (``Spec.noise`` = p > 0): after every gate, the one-qubit depolarising channel
  ``rho -> (1 - p) rho + p/3 (X rho X + Y rho Y + Z rho Z)`` on each qubit the gate acts on, in the
  gate's qubit order (a CX: control, then target).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

SEED = 2026
#: largest deviation from the dense reference that still counts as correct
TOLERANCE = 1e-8

#: the QAOA rows on 100 nodes (light cones, no state vector): workload -> p; energies, then with gradients
LIGHT_CONE_QAOA = {f"qaoa_{kind}_p{p}": p for kind in ("energy", "gradient") for p in (1, 2, 3)}
#: workloads whose result is an energy alone (every other energy workload adds its gradient)
ENERGY_ONLY = tuple(name for name in LIGHT_CONE_QAOA if name.startswith("qaoa_energy"))
#: workloads evaluated term by term on light cones (the peers' path search is lighter for them)
LIGHT_CONE = (*LIGHT_CONE_QAOA, "tfim_brickwork_gradient")

#: the rows simulated as density matrices, with a depolarising channel after every gate
NOISY = ("noisy_energy", "noisy_energy_gradient", "noisy_density_matrix", "noisy_brickwork_local")
#: the depolarising probability of those rows (one channel per qubit of each gate)
NOISE = 0.01

#: the rows simulated as matrix-product states with a bond-dimension cap (``Spec.max_bond``)
#: exact samples of circuits past the state vector: a 1D brickwork and a 2D lattice circuit
SAMPLING = ("wide_sampling", "lattice_sampling")
MPS = ("mps_brickwork", "mps_quench", "mps_energy_gradient", *SAMPLING)

#: workload name -> one-line description (the order is the suite's order)
WORKLOADS = {
    "statevector": "state of a 10-layer RX·RZ + CNOT-ladder circuit",
    "state_sampling": "10^5 samples of the statevector row's circuit (its state simulated in the call)",
    "energy_gradient": "TFIM energy + full gradient, 4-layer RY·RZ + CNOT-ladder ansatz",
    "adam_vqe_100": "100 Adam steps (lr 0.05) on the TFIM ansatz",
    "batched_energies_64": "TFIM energies of 64 parameter sets in one batch",
    "qaoa_gradient": "QAOA MaxCut energy + gradient, random 3-regular graph, p = 3",
    "brickwork_local": "depth-10 RY + CZ brickwork: <0...0|psi> and <Z_middle>",
    "qaoa_energy_p1": "QAOA MaxCut energy, random 3-regular graph, p = 1 (light cones)",
    "qaoa_energy_p2": "QAOA MaxCut energy, random 3-regular graph, p = 2 (light cones)",
    "qaoa_energy_p3": "QAOA MaxCut energy, random 3-regular graph, p = 3 (light cones)",
    "qaoa_gradient_p1": "QAOA MaxCut energy + gradient, random 3-regular graph, p = 1 (light cones)",
    "qaoa_gradient_p2": "QAOA MaxCut energy + gradient, random 3-regular graph, p = 2 (light cones)",
    "qaoa_gradient_p3": "QAOA MaxCut energy + gradient, random 3-regular graph, p = 3 (light cones)",
    "tfim_brickwork_gradient": "TFIM energy + gradient, depth-4 RY + CZ brickwork (light cones)",
    "noisy_energy": "TFIM energy of the 4-layer ansatz, depolarising p = 0.01 after every gate",
    "noisy_energy_gradient": "the same noisy TFIM energy + full gradient",
    "noisy_density_matrix": "density matrix of the noisy 4-layer ansatz",
    "noisy_brickwork_local": "<Z_middle> of a depth-4 RY + CZ brickwork, depolarising after every gate",
    "mps_brickwork": "MPS, max_bond 64: <Z_middle> and 1000 samples of a depth-20 RY + CZ brickwork",
    "mps_quench": "MPS, max_bond 32: magnetisation after a 20-step TFIM Trotter quench",
    "mps_energy_gradient": "MPS, max_bond 32: TFIM energy + gradient of the 4-layer ansatz",
    "wide_sampling": "1000 exact samples (and <Z_middle>) of a depth-6 RY + CZ brickwork, no state vector",
    "lattice_sampling": "1000 exact samples (and <Z_middle>) of a depth-8 RY + CZ square-lattice circuit",
    "reversible_arithmetic": "<Z_q> of every qubit after 689 random X/CX/CCX gates on |0...0> "
                             "(a reversible multiplier's shape)",
}
#: workloads whose result is the energy and its gradient at ``params``
GRADIENTS = ("energy_gradient", "qaoa_gradient", *(w for w in LIGHT_CONE_QAOA if w not in ENERGY_ONLY),
             "tfim_brickwork_gradient", "noisy_energy_gradient", "mps_energy_gradient")

#: full and --quick sizes (qubits) per workload
SIZES = {
    "statevector": ((16, 20, 22, 24), (10,)),
    "state_sampling": ((20,), (10,)),
    "energy_gradient": ((8, 12, 16), (6,)),
    "adam_vqe_100": ((12,), (6,)),
    "batched_energies_64": ((10,), (6,)),
    "qaoa_gradient": ((16,), (8,)),
    "brickwork_local": ((50,), (24,)),
    **{name: ((100,), (12,)) for name in LIGHT_CONE_QAOA},
    "tfim_brickwork_gradient": ((50,), (12,)),
    "noisy_energy": ((10,), (6,)),
    "noisy_energy_gradient": ((10,), (6,)),
    "noisy_density_matrix": ((12,), (6,)),
    "noisy_brickwork_local": ((40,), (12,)),
    "mps_brickwork": ((50,), (12,)),
    "mps_quench": ((100,), (12,)),
    "mps_energy_gradient": ((32,), (8,)),
    "wide_sampling": ((50,), (30,)),
    "lattice_sampling": ((36,), (16,)),
    "reversible_arithmetic": ((45, 75), (12,)),
}

#: the scaling study (benchmarks/scaling.py): name -> (description, full sizes, --quick sizes)
SCALING = {
    "statevector": ("state of the 10-layer RX·RZ + CNOT ladder", tuple(range(10, 27, 2)), (8, 10, 12)),
    "shallow_amplitude": ("<0...0|psi> of a depth-8 RY + CZ brickwork", tuple(range(20, 101, 10)), (20, 30)),
}

LADDER_LAYERS = 10
ANSATZ_LAYERS = 4
ANSATZ_ROTATIONS = ("ry", "rz")
BATCH = 64
ADAM_STEPS = 100
LEARNING_RATE = 0.05
QAOA_LAYERS = 3
BRICKWORK_DEPTH = 10
TFIM_BRICKWORK_DEPTH = 4
SHALLOW_DEPTH = 8
MPS_BRICKWORK_DEPTH = 20
MPS_BRICKWORK_BOND = 64
#: depth of the wide-sampling row, and a bond cap the peers' MPS never reaches there (exact: the
#: bonds of a depth-6 brickwork are at most 2^3)
SAMPLING_DEPTH = 6
SAMPLING_BOND = 1024
LATTICE_DEPTH = 8
SHOTS = 1000
#: samples of the ``state_sampling`` row (issue 47's example: 10^5 samples of a 20-qubit state)
STATE_SHOTS = 100_000
QUENCH_STEPS = 20
QUENCH_DT = 0.05
QUENCH_FIELD = 1.0
QUENCH_BOND = 32
ANSATZ_BOND = 32
#: gates of the reversible-arithmetic row (the 45-qubit multiplier of a public OpenQASM suite has
#: 689 CCX/CX/X gates)
REVERSIBLE_GATES = 689


class Gate(NamedTuple):
    """One gate: its angle is ``scale * params[param]``; ``param`` None for fixed gates."""

    name: str
    qubits: tuple[int, ...]
    param: int | None = None
    scale: float = 1.0


@dataclass(eq=False)
class Spec:
    """Everything an engine needs to run one workload at one size.

    Attributes
    ----------
    workload, n : str, int
        Workload name and number of qubits.
    gates : tuple of Gate
        The circuit; angles index ``params`` (the last axis of a batch).
    params : numpy.ndarray
        Angles: the circuit's (statevector, brickwork), the point to differentiate at
        (gradients), the starting point (Adam) or ``(BATCH, P)`` parameter sets (batch).
    hamiltonian : tuple of (float, str)
        Observable of the energy workloads.
    steps, learning_rate : int, float
        Adam iterations and step size (``adam_vqe_100``).
    layers : int
        Layers of the template the gates come from (ladder, ansatz, QAOA p, brickwork depth).
    edges : tuple of (int, int, float)
        QAOA graph edges with weights.
    observed : int
        Qubit of ``<Z>`` (``brickwork_local``, ``noisy_brickwork_local``).
    noise : float
        Depolarising probability p after every gate, on each of its qubits (0: a pure state).
    max_bond : int
        The MPS rows' bond-dimension cap (0 elsewhere); their cutoff is 1e-12 (relative
        discarded weight) or the library's nearest equivalent.
    shots : int
        Samples drawn (``mps_brickwork``, the sampling rows; seed ``SEED``).
    """

    workload: str
    n: int
    gates: tuple[Gate, ...]
    params: np.ndarray
    hamiltonian: tuple[tuple[float, str], ...] = ()
    steps: int = 0
    learning_rate: float = 0.0
    layers: int = 0
    edges: tuple[tuple[int, int, float], ...] = ()
    observed: int = 0
    noise: float = 0.0
    max_bond: int = 0
    shots: int = 0

    @property
    def num_params(self) -> int:
        return int(self.params.shape[-1])


def z_means(indices: np.ndarray, n: int) -> np.ndarray:
    """Every qubit's sampled ``<Z>`` from basis-state indices (qubit 0 the most significant bit):
    the canonical result of ``state_sampling``.

    Examples
    --------
    >>> z_means(np.array([0b10, 0b11]), 2).tolist()
    [-1.0, 0.0]
    """
    bits = (np.asarray(indices, dtype=np.int64)[:, None] >> np.arange(n - 1, -1, -1)) & 1
    return 1.0 - 2.0 * bits.mean(axis=0)


# -- circuits -------------------------------------------------------------------------------
def rotation_ladder(n: int, layers: int) -> list[Gate]:
    """``layers`` times RX·RZ on every qubit, then a CNOT ladder (= ``tq.templates.rotation_ladder``)."""
    gates = []
    for layer in range(layers):
        for q in range(n):
            index = 2 * (layer * n + q)
            gates += [Gate("rx", (q,), index), Gate("rz", (q,), index + 1)]
        gates += [Gate("cx", (q, q + 1)) for q in range(n - 1)]
    return gates


def hardware_efficient(n: int, layers: int, rotations: tuple[str, ...] = ANSATZ_ROTATIONS) -> list[Gate]:
    """Rotations on every qubit, then ``layers`` times a CNOT ladder and rotations
    (= ``tq.templates.hardware_efficient``: parameters qubit by qubit, rotation by rotation)."""
    gates: list[Gate] = []
    count = 0

    def rotate() -> None:
        nonlocal count
        for q in range(n):
            for rotation in rotations:
                gates.append(Gate(rotation, (q,), count))
                count += 1

    rotate()
    for _ in range(layers):
        gates.extend(Gate("cx", (q, q + 1)) for q in range(n - 1))
        rotate()
    return gates


def ansatz_size(n: int, layers: int = ANSATZ_LAYERS) -> int:
    return n * len(ANSATZ_ROTATIONS) * (layers + 1)


def qaoa(n: int, edges: tuple[tuple[int, int, float], ...], layers: int) -> list[Gate]:
    """H on every qubit, then per layer ``RZZ(γ_l·w)`` on every edge and ``RX(2β_l)`` on every qubit;
    parameters ``[γ_0..γ_{p-1}, β_0..β_{p-1}]`` (= ``tq.templates.qaoa``)."""
    gates = [Gate("h", (q,)) for q in range(n)]
    for layer in range(layers):
        gates += [Gate("rzz", (a, b), layer, w) for a, b, w in edges]
        gates += [Gate("rx", (q,), layers + layer, 2.0) for q in range(n)]
    return gates


def brickwork(n: int, depth: int) -> list[Gate]:
    """``depth`` layers of RY on every qubit, then CZ on alternating neighbour pairs
    (= ``tq.templates.brickwork``)."""
    gates = []
    for layer in range(depth):
        gates += [Gate("ry", (q,), layer * n + q) for q in range(n)]
        gates += [Gate("cz", (q, q + 1)) for q in range(layer % 2, n - 1, 2)]
    return gates


def lattice(n: int, depth: int) -> list[Gate]:
    """``depth`` layers on a ``sqrt(n) x sqrt(n)`` lattice (qubit ``r * side + c``): RY on every
    qubit, then CZ on one of four edge classes in turn (horizontal from even columns, from odd
    columns, vertical from even rows, from odd rows)."""
    side = int(round(np.sqrt(n)))
    gates = []
    for layer in range(depth):
        gates += [Gate("ry", (q,), layer * n + q) for q in range(n)]
        kind, start = divmod(layer % 4, 2)
        for r in range(side):
            for c in range(side):
                if kind == 0 and c % 2 == start and c + 1 < side:
                    gates.append(Gate("cz", (r * side + c, r * side + c + 1)))
                if kind == 1 and r % 2 == start and r + 1 < side:
                    gates.append(Gate("cz", (r * side + c, (r + 1) * side + c)))
    return gates


def trotter_quench(n: int, steps: int) -> list[Gate]:
    """First-order Trotter steps of ``exp(-i dt H)``, ``H = -Σ Z_i Z_{i+1} - g Σ X_i``: per step
    ``RZZ(params[0])`` on even bonds, then odd bonds, then ``RX(params[1])`` on every qubit, with
    ``params = [-2 dt, -2 g dt]`` (``exp(i dt Z Z) = RZZ(-2 dt)``)."""
    gates = []
    for _ in range(steps):
        for start in (0, 1):
            gates += [Gate("rzz", (q, q + 1), 0) for q in range(start, n - 1, 2)]
        gates += [Gate("rx", (q,), 1) for q in range(n)]
    return gates


def reversible(n: int, count: int, seed: int = SEED) -> list[Gate]:
    """``count`` random X, CX and CCX gates (a third each, on distinct random qubits): classical
    reversible logic, which keeps ``|0...0>`` a basis state."""
    rng = np.random.default_rng(seed)
    gates = []
    for _ in range(count):
        kind = int(rng.integers(3))
        qubits = tuple(int(q) for q in rng.choice(n, kind + 1, replace=False))
        gates.append(Gate(("x", "cx", "ccx")[kind], qubits))
    return gates


# -- Hamiltonians ---------------------------------------------------------------------------
def _pauli(n: int, letters: dict[int, str]) -> str:
    return "".join(letters.get(q, "I") for q in range(n))


def tfim(n: int) -> tuple[tuple[float, str], ...]:
    """Open transverse-field Ising chain ``-Σ Z_i Z_{i+1} - Σ X_i`` (= ``tq.hamiltonians.tfim``)."""
    return tuple([(-1.0, _pauli(n, {q: "Z", q + 1: "Z"})) for q in range(n - 1)]
                 + [(-1.0, _pauli(n, {q: "X"})) for q in range(n)])


def maxcut(n: int, edges: tuple[tuple[int, int, float], ...]) -> tuple[tuple[float, str], ...]:
    """``Σ w/2 Z_i Z_j`` over the edges (= ``tq.hamiltonians.maxcut``)."""
    return tuple((w / 2, _pauli(n, {a: "Z", b: "Z"})) for a, b, w in edges)


def regular_graph_edges(n: int, degree: int = 3, seed: int = SEED) -> tuple[tuple[int, int, float], ...]:
    """Edges (weight 1) of networkx's ``random_regular_graph(degree, n, seed)``."""
    import networkx as nx

    graph = nx.random_regular_graph(degree, n, seed=seed)
    return tuple((int(a), int(b), 1.0) for a, b in graph.edges)


# -- the specs ------------------------------------------------------------------------------
def _uniform(low: float, high: float, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(SEED).uniform(low, high, shape)


def make_spec(workload: str, n: int) -> Spec:
    """The exact workload ``workload`` at ``n`` qubits."""
    if workload in ("statevector", "state_sampling"):
        return Spec(workload, n, tuple(rotation_ladder(n, LADDER_LAYERS)),
                    _uniform(0, 2 * np.pi, (2 * n * LADDER_LAYERS,)), layers=LADDER_LAYERS,
                    shots=STATE_SHOTS if workload == "state_sampling" else 0)
    if workload in ("energy_gradient", "adam_vqe_100", "batched_energies_64", "noisy_energy",
                    "noisy_energy_gradient", "noisy_density_matrix"):
        gates = tuple(hardware_efficient(n, ANSATZ_LAYERS))
        size = ansatz_size(n)
        if workload in ("energy_gradient", "noisy_energy", "noisy_energy_gradient", "noisy_density_matrix"):
            params = _uniform(-np.pi, np.pi, (size,))
        elif workload == "adam_vqe_100":
            params = 0.1 * _uniform(-np.pi, np.pi, (size,))
        else:
            params = _uniform(-np.pi, np.pi, (BATCH, size))
        return Spec(workload, n, gates, params, tfim(n), layers=ANSATZ_LAYERS,
                    steps=ADAM_STEPS if workload == "adam_vqe_100" else 0,
                    learning_rate=LEARNING_RATE if workload == "adam_vqe_100" else 0.0,
                    noise=NOISE if workload in NOISY else 0.0)
    if workload == "qaoa_gradient" or workload in LIGHT_CONE_QAOA:
        p = LIGHT_CONE_QAOA.get(workload, QAOA_LAYERS)
        edges = regular_graph_edges(n)
        params = np.concatenate([np.linspace(0.1, 0.7, p), np.linspace(0.7, 0.1, p)])
        return Spec(workload, n, tuple(qaoa(n, edges, p)), params, maxcut(n, edges), layers=p, edges=edges)
    if workload == "brickwork_local":
        return Spec(workload, n, tuple(brickwork(n, BRICKWORK_DEPTH)),
                    _uniform(0, np.pi, (n * BRICKWORK_DEPTH,)), layers=BRICKWORK_DEPTH, observed=n // 2)
    if workload == "tfim_brickwork_gradient":
        return Spec(workload, n, tuple(brickwork(n, TFIM_BRICKWORK_DEPTH)),
                    _uniform(0, np.pi, (n * TFIM_BRICKWORK_DEPTH,)), tfim(n), layers=TFIM_BRICKWORK_DEPTH)
    if workload == "noisy_brickwork_local":
        return Spec(workload, n, tuple(brickwork(n, TFIM_BRICKWORK_DEPTH)),
                    _uniform(0, np.pi, (n * TFIM_BRICKWORK_DEPTH,)), layers=TFIM_BRICKWORK_DEPTH,
                    observed=n // 2, noise=NOISE)
    if workload == "mps_brickwork":
        return Spec(workload, n, tuple(brickwork(n, MPS_BRICKWORK_DEPTH)),
                    _uniform(0, np.pi, (n * MPS_BRICKWORK_DEPTH,)), layers=MPS_BRICKWORK_DEPTH,
                    observed=n // 2, max_bond=MPS_BRICKWORK_BOND, shots=SHOTS)
    if workload in SAMPLING:
        depth, gates = ((SAMPLING_DEPTH, brickwork) if workload == "wide_sampling"
                        else (LATTICE_DEPTH, lattice))
        return Spec(workload, n, tuple(gates(n, depth)), _uniform(0, np.pi, (n * depth,)), layers=depth,
                    observed=n // 2, max_bond=SAMPLING_BOND, shots=SHOTS)
    if workload == "mps_quench":
        params = np.array([-2 * QUENCH_DT, -2 * QUENCH_FIELD * QUENCH_DT])
        return Spec(workload, n, tuple(trotter_quench(n, QUENCH_STEPS)), params, layers=QUENCH_STEPS,
                    max_bond=QUENCH_BOND)
    if workload == "mps_energy_gradient":
        return Spec(workload, n, tuple(hardware_efficient(n, ANSATZ_LAYERS)),
                    _uniform(-np.pi, np.pi, (ansatz_size(n),)), tfim(n), layers=ANSATZ_LAYERS,
                    max_bond=ANSATZ_BOND)
    if workload == "reversible_arithmetic":
        return Spec(workload, n, tuple(reversible(n, REVERSIBLE_GATES)), np.zeros(0))
    if workload == "shallow_amplitude":
        return Spec(workload, n, tuple(brickwork(n, SHALLOW_DEPTH)), _uniform(0, np.pi, (n * SHALLOW_DEPTH,)),
                    layers=SHALLOW_DEPTH)
    raise ValueError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}, {', '.join(SCALING)}")
