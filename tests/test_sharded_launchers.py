"""A state vector sharded across the ranks of the real launchers (``mpirun -n 2`` and ``-n 4``,
``torchrun`` with 2 and 4 processes, 2 JAX processes started by their variables and by the
script itself), each rank under a memory limit below the whole state: a 22-qubit depth-24 random
circuit's Pauli expectations, energy, marginals, amplitude, seeded samples and adjoint gradient
against one unrestricted process (1e-10; the samples exactly), and a rank that fails inside its
sweep ends the run instead of hanging."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from test_distributed import TIMEOUT, WORKERS, launch, run_launcher

import tyxonq as tq
from conftest import jax_in_matrix
from tyxonq.circuit.statevector.adjoint import adjoint_sweep
from tyxonq.circuit.statevector.sweep import sweep_state
from tyxonq.operators.pauli_action import apply_pauli_sum
from tyxonq.operators.state_expectation import state_pauli_values

sys.path.insert(0, str(WORKERS))
import sharded  # noqa: E402

pytestmark = pytest.mark.launchers  # a minute per launch: after the main suite in .ci/run

RUNS = [("mpi", 2), ("mpi", 4), ("torch", 2), ("torch", 4), ("jax", 2), ("jax-self", 2)]
MODULES = {"torch": "torch", "mpi": "mpi4py", "jax": "jax", "jax-self": "jax"}


@pytest.fixture(scope="module")
def one_process() -> dict:
    """One process without a memory limit: the state swept whole (NumPy), every result read from
    it; the samples of NumPy's sampler (JAX draws with NumPy's generator) and of PyTorch's."""
    K = tq.get_backend("numpy")
    h = sharded.hamiltonian()
    c = sharded.random_circuit(sharded.ANGLES)
    ops = c.operations
    state = sweep_state(K, sharded.QUBITS, ops)
    probabilities = np.abs(state) ** 2
    n = sharded.QUBITS
    axes = sharded.MARGINAL + [q for q in range(n) if q not in sharded.MARGINAL]
    marginal = probabilities.reshape((2,) * n).transpose(axes).reshape(2 ** len(sharded.MARGINAL), -1).sum(1)
    parametrised = [i for i, op in enumerate(ops) if op.params]
    wanted = {index: [(slot, 0)] for slot, index in enumerate(parametrised)}
    value, gradient = adjoint_sweep(K, ops, n, None, lambda K, s: apply_pauli_sum(K, s, h), wanted,
                                    len(parametrised))
    samples = {"numpy": K.to_numpy(K.choice(2 ** n, size=2000, p=probabilities / probabilities.sum(),
                                            rng=K.rng(5)))}
    if pytest.importorskip("torch"):
        T = tq.get_backend("pytorch")
        p = T.asarray(probabilities / probabilities.sum(), "float64")
        samples["pytorch"] = T.to_numpy(T.choice(2 ** n, size=2000, p=p, rng=T.rng(5)))
    return {"pauli": np.real(state_pauli_values(K, state, [s for _, s in h][:8])),
            "energy": float(np.real(np.vdot(state, apply_pauli_sum(K, state, h)))),
            "marginal": marginal, "amplitude": state[int("01" * (n // 2), 2)],
            "gradient value": value, "gradient": gradient, "samples": samples,
            "trajectories": one_at_a_time(
                lambda: tq.noise.trajectory_expectation(sharded.noisy_circuit(), h, 3, seed=4))}


def one_at_a_time(compute):
    """``compute()`` with trajectories run one at a time (as the launched ranks run them)."""
    from tyxonq.circuit.statevector import trajectories

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trajectories, "TRAJECTORY_BATCH_ENTRIES", 2 ** sharded.QUBITS)
        return compute()


@pytest.mark.parametrize("engine, ranks", jax_in_matrix(RUNS))
def test_sharded_results_equal_one_unrestricted_process(engine, ranks, one_process):
    pytest.importorskip(MODULES[engine])
    # eager JAX compiles each of the sweep's operations: about 3 minutes here
    results = launch(engine, "sharded.py", ranks=ranks, timeout=3 * TIMEOUT if engine == "jax" else TIMEOUT)
    expected = one_process
    backend = sharded.BACKENDS[engine]
    for rank in range(ranks):
        found = results[rank]
        assert found["size"] == ranks and found["engine"] == engine.split("-")[0]
        for name in ("pauli", "energy", "marginal", "gradient value", "gradient", "trajectories"):
            np.testing.assert_allclose(found[name], expected[name], rtol=0, atol=1e-10, err_msg=name)
        np.testing.assert_allclose(complex(*found["amplitude"]), expected["amplitude"], atol=1e-10)
        np.testing.assert_array_equal(found["samples"], expected["samples"]["pytorch" if backend == "pytorch"
                                                                           else "numpy"])
        assert found["routes"] == ["sharded-state"]
        assert f"sharded over {ranks} ranks" in found["sharding"]


@pytest.mark.parametrize("engine", jax_in_matrix(["mpi", "torch", "jax"]))
def test_a_rank_that_fails_inside_its_sweep_ends_the_run(engine):
    pytest.importorskip(MODULES[engine])
    start = time.perf_counter()
    finished = run_launcher(engine, "sharded.py", engine, "fail")
    assert time.perf_counter() - start < TIMEOUT
    assert any(code != 0 for code, _, _ in finished)
    assert any("fails inside its sweep" in err for _, _, err in finished)
