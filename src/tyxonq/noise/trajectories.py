"""Noisy expectation values by Monte-Carlo trajectories: state-vector cost, for more qubits than a
density matrix allows."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..numerics import get_backend
from ..numerics.arguments import checked_count, checked_flag, checked_seed
from ..numerics.progress import progress as progress_report
from ..numerics.protocol import ArrayBackend
from ..numerics.sharing import shared_rows

__all__ = ["trajectory_expectation"]


def trajectory_expectation(circuit: Any, observable: Any, trajectories: int,
                           seed: int | None = None, progress: bool | None = None) -> tuple[float, float]:
    """``Tr(O rho)`` of a noisy circuit estimated from ``trajectories`` sampled pure states.

    Each trajectory follows one Kraus branch per channel, drawn with its exact probability
    ``||K_a psi||^2`` from a generator seeded by ``seed`` (the same seed gives the same numbers,
    on every backend); trajectories run together as one batch of state vectors
    (:mod:`tyxonq.circuit.statevector.trajectories`), so the cost is that of a few state-vector
    simulations, never a ``4^n`` density matrix. In a distributed run each rank simulates its
    share of the trajectories with its own seed derived from ``seed``
    (:func:`~tyxonq.numerics.sharing.rank_seed`), and every rank returns the mean over all; where
    one trajectory's state does not fit a rank (:meth:`~tyxonq.Circuit.state_shards`), the ranks
    run the trajectories one at a time on the state sharded across them
    (:mod:`~tyxonq.circuit.statevector.sharded_trajectories`), drawing what one process draws
    with ``seed`` when it runs them one at a time.

    Parameters
    ----------
    circuit : Circuit or DMCircuit
        Gates and channels (a :class:`~tyxonq.DMCircuit` with a density-matrix input is refused).
    observable : PauliSum or sequence of (matrix, qubits)
        What to measure: a Hermitian Pauli sum, or local operators whose product is measured.
    trajectories : int
        Number of trajectories (at least 2, for the standard error).
    seed : int, optional
        Seed of the branch choices.
    progress : bool, optional
        Show the trajectories done as a progress bar (:func:`tyxonq.set_progress`: by default in
        interactive sessions past one second; on rank 0 of a distributed run, its share).

    Returns
    -------
    (float, float)
        The mean over trajectories and its standard error (sample standard deviation over
        ``sqrt(trajectories)``).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.Circuit(2).h(0).cx(0, 1).depolarizing(0, p=0.2)
    >>> mean, error = tq.noise.trajectory_expectation(c, tq.PauliSum([(1.0, "ZZ")]), 4000, seed=1)
    >>> exact = float(c.to_density_matrix().expectation_ps(z=[0, 1]))
    >>> abs(mean - exact) < 4 * error
    True
    """
    from ..circuit.statevector.trajectories import local_values, trajectory_states
    from ..operators.pauli import PauliSum
    from ..operators.pauli_action import pauli_sum_expectation

    if checked_count(trajectories, "trajectories") < 2:
        raise ValueError(f"trajectories={trajectories!r} must be an int >= 2")
    checked_seed(seed)
    progress = None if progress is None else checked_flag(progress, "progress")
    if getattr(circuit, "inputs_kind", lambda: None)() == "density":
        raise ValueError("trajectories start from a pure state; this circuit's input is a density matrix")
    K = get_backend()
    n = circuit.num_qubits
    if isinstance(observable, PauliSum):
        if observable.n_qubits != n:
            raise ValueError(f"observable acts on {observable.n_qubits} qubits; the circuit has {n}")
        if not observable.is_hermitian():
            raise ValueError("observable has complex coefficients; trajectories estimate Hermitian ones")

        def values(states: Any) -> Any:
            return K.real(pauli_sum_expectation(K, states, observable))

        def sharded_value(state: Any) -> float:
            return state.expectation(observable)
    else:
        matrices, groups = _local_operators(circuit, observable, K)

        def values(states: Any) -> Any:
            return K.real(local_values(K, states, matrices, groups, n))

        def sharded_value(state: Any) -> float:
            return state.operator_value(matrices, groups).real
    if (comm := circuit.state_shards(4, trajectories=True)) is not None:
        # one trajectory at a time, its state sharded over the ranks (all draw alike)
        from ..circuit.statevector.sharded_trajectories import sharded_trajectory_values

        comm.agree((int(trajectories), checked_seed(seed), circuit.structure_key(), n),
                   "sharded trajectories")
        results = sharded_trajectory_values(K, comm, n, circuit.operations, circuit.input_state(K),
                                            int(trajectories), checked_seed(seed), sharded_value)
        return float(results.mean()), float(results.std(ddof=1) / np.sqrt(len(results)))
    from ..circuit.base import LIGHT_CONE_HINT
    from ..circuit.statevector.trajectories import batch_size
    from ..numerics.memory import require_memory

    def draw(count: int, rank_seed: int | None) -> np.ndarray:  # a rank's share in a distributed run
        require_memory(K, 4 * batch_size(n, count) * 2 ** n,
                       f"trajectories of {n} qubits (a batch of state vectors)", LIGHT_CONE_HINT)
        states = trajectory_states(K, n, circuit.operations, circuit.input_state(K), count,
                                   np.random.default_rng(rank_seed))
        rows = []
        with progress_report(count, "noisy trajectories", progress, unit="trajectory") as report:
            for batch in states:
                rows.append(np.asarray(K.to_numpy(values(batch)), dtype=float).reshape(-1))
                report.advance(len(rows[-1]))
        return np.concatenate(rows)

    results = shared_rows(draw, int(trajectories), seed, 1, "noisy trajectories", dtype=float,
                          structure=[(op.gate, op.qubits) for op in circuit.operations]).reshape(-1)
    return float(results.mean()), float(results.std(ddof=1) / np.sqrt(len(results)))


def _local_operators(circuit: Any, observable: Sequence[Any], K: ArrayBackend) -> tuple[list, list]:
    if isinstance(observable, tuple) and len(observable) == 2 and not isinstance(observable[0], tuple):
        observable = [observable]  # one (matrix, qubits) pair
    matrices, groups, used = [], [], set()
    for operator in observable:
        matrix, qubits, _ = circuit.validated_operator(operator, True, K)
        if used.intersection(qubits):
            raise ValueError(f"operators overlap on qubit(s) {sorted(used.intersection(qubits))}")
        used.update(qubits)
        matrices.append(matrix)
        groups.append(qubits)
    if not matrices:
        raise ValueError("observable needs at least one (matrix, qubits) operator")
    return matrices, groups
