"""A state vector too large for one rank, sharded across the ranks of a run: a VQE energy and its
exact gradient on a brickwork ansatz, then the energy of a noisy version by trajectories, with
each rank's memory limit below the whole state.

The same script runs as one process (the state whole) or under each engine's launcher; with
``2^k`` ranks each holds ``2^(n-k)`` amplitudes, gates on the leading (global) qubits first swap
them with local ones (half of each shard travels), and every result comes from local partial
sums and one all-reduce. ``tq.rehearse`` says how, before anything runs:

    python examples-ng/sharded_state.py                                      # one process
    mpirun -n 4 python examples-ng/sharded_state.py                          # MPI, NumPy
    torchrun --nproc-per-node 2 examples-ng/sharded_state.py --backend pytorch

(add ``--oversubscribe`` to mpirun where there are fewer cores than ranks; as root, Open MPI also
needs ``OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``). Every rank checks its energy
and gradient against the same computed by one process with no limit (the state whole, in this
process: for the example's small sizes only); the trajectories' estimate is checked against the
exact density matrix with ``--quick`` (within five standard errors).

Run:  python examples-ng/sharded_state.py [--quick] [--qubits 20] [--layers 6] [--backend numpy]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tyxonq as tq


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="12 qubits, 4 layers")
    parser.add_argument("--qubits", type=int, default=20)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch", "jax"])
    args = parser.parse_args(argv)
    n, layers = (12, 4) if args.quick else (args.qubits, args.layers)
    comm = tq.distributed.initialize()
    K = tq.set_backend(args.backend)
    hamiltonian = tq.hamiltonians.heisenberg(n)

    def energy(angles):
        return tq.templates.brickwork(n, angles, layers).expectation(hamiltonian)

    angles = K.asarray(np.random.default_rng(3).uniform(-0.5, 0.5, n * layers), K.real_dtype)
    state_bytes = 2 ** n * 16
    with tq.distributed.use_communicator(tq.distributed.SingleProcess()):  # the state whole, as a check
        expected_value, expected_gradient = tq.value_and_grad(energy)(angles)
    noisy = noisy_ansatz(K.to_numpy(angles), n, layers)
    exact_noisy = None
    if args.quick:  # the density matrix (4^n entries): small sizes only
        with tq.distributed.use_communicator(tq.distributed.SingleProcess()):
            exact_noisy = float(K.to_numpy(noisy.to_density_matrix().expectation(hamiltonian)))
    if comm.size > 1:  # below one state: a rank cannot hold it (one process holds it whole)
        tq.set_memory_limit(int(0.8 * state_bytes))
    report = tq.rehearse(tq.value_and_grad(energy), angles)
    start = time.perf_counter()
    value, gradient = tq.value_and_grad(energy)(angles)
    seconds = time.perf_counter() - start
    error = max(abs(float(value) - float(expected_value)),
                float(np.max(np.abs(K.to_numpy(gradient) - K.to_numpy(expected_gradient)))))
    if comm.rank == 0:
        mib = state_bytes / 2 ** 20
        limit = f"memory limit {0.8 * mib:.3g} MiB per rank" if comm.size > 1 else "no limit"
        print(f"{comm.size} rank(s) of {comm.name!r}, {n} qubits ({mib:.3g} MiB state), {limit}")
        print(f"route: {' then '.join(report.routes) or '-'}")
        if report.sharding is not None:
            print(f"  {report.sharding}")
        print(f"energy {float(value):.10f} and its gradient ({len(gradient)} angles) in {seconds:.3g} s")
        print(f"{'ok' if error < 1e-10 else 'FAIL'}: largest difference from one process {error:.1e}")
    start = time.perf_counter()
    mean, standard_error = tq.noise.trajectory_expectation(noisy, hamiltonian, TRAJECTORIES, seed=7)
    seconds = time.perf_counter() - start
    within = exact_noisy is None or abs(mean - exact_noisy) < 5 * standard_error
    if comm.rank == 0:
        how = "state sharded" if noisy.state_shards(4, trajectories=True) is not None else "not sharded"
        print(f"noisy energy by {TRAJECTORIES} trajectories ({how}): {mean:.6f} +- {standard_error:.6f} "
              f"in {seconds:.3g} s")
        if exact_noisy is not None:
            print(f"{'ok' if within else 'FAIL'}: the density matrix gives {exact_noisy:.6f}")
    tq.distributed.finalize()
    return 0 if error < 1e-10 and within else 1


#: trajectories of the noisy ansatz
TRAJECTORIES = 24


def noisy_ansatz(angles, n: int, layers: int) -> tq.Circuit:
    """The brickwork ansatz with depolarising noise after every layer's gates (p = 0.01 per qubit)
    and amplitude damping of every qubit at the end (gamma = 0.05)."""
    c = tq.Circuit(n)
    for layer in range(layers):  # the layers of tq.templates.brickwork, each followed by noise
        c.layer("ry", range(n), angles[layer * n:(layer + 1) * n])
        c.layer("cz", [(q, q + 1) for q in range(layer % 2, n - 1, 2)])
        for q in range(n):
            c.depolarizing(q, p=0.01)
    for q in range(n):
        c.amplitude_damping(q, gamma=0.05)
    return c


if __name__ == "__main__":
    sys.exit(main())
