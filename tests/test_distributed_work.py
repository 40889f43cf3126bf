"""Work shared between ranks under the real launchers (2 and 4 ranks: torchrun with PyTorch,
mpirun with NumPy, JAX processes with JAX), each rank's results against one process's to 1e-12: a QAOA
energy and exact gradient (its terms shared), Pauli expectations, a sliced contraction's value and
gradient (its slices shared), a batch of energies and gradients (its lanes shared), noisy
trajectories and shots with a seed (each rank its own stream) and three Adam steps; a circuit that
differs between ranks and a rank whose share fails raise on every rank; a rank that stops outside
any collective ends the run within the timeout."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_distributed import TIMEOUT, WORKERS, launch, run_launcher

import tyxonq as tq
from conftest import jax_in_matrix, launcher_runs
from tyxonq.numerics import distributed
from tyxonq.numerics.distributed import SingleProcess
from tyxonq.numerics.sharing import balanced_shares, rank_seed, rank_share, summed_over_ranks

sys.path.insert(0, str(WORKERS))
import workloads  # noqa: E402

pytest.importorskip("cotengra")
ENGINES = ["torch", "mpi", "jax"]
EXAMPLE = Path(__file__).parents[1] / "examples-ng" / "distributed_qaoa.py"
EXACT = ("energy", "gradient", "pauli", "sliced", "sliced gradient", "batch", "batch gradient", "adam",
         "adam fun")


class OneRankOf(SingleProcess):
    """Rank ``rank`` of ``size`` computing alone: its share, as it would in a run."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size

    def agree(self, value, what) -> None:
        pass


@pytest.fixture(scope="module")
def one_process() -> dict:
    """One process's results on NumPy and PyTorch (JAX's: NumPy's; one JAX process differentiates
    by tracing and compiles for a minute here, while a distributed JAX run computes its gradients
    on the host, as NumPy does)."""
    results = {backend: workloads.workloads(backend) for backend in ("numpy", "pytorch")}
    tq.set_backend("numpy")
    return {**results, "jax": results["numpy"]}


def shared_trajectories(seed: int, size: int) -> float:
    """The mean of 64 trajectories that ``size`` ranks draw, each its share with its own seed,
    computed here one rank at a time."""
    total = 0.0
    for rank in range(size):
        distributed._ACTIVE[0] = OneRankOf(rank, size)  # noqa: SLF001 - rank by rank, here
        try:
            mean, _ = tq.noise.trajectory_expectation(workloads.noisy_circuit(),
                                                      tq.PauliSum([(1.0, "IIZZII")]), 64, seed=seed)
        finally:
            tq.distributed.finalize()
        total += mean
    return total


def shared_samples(size: int) -> dict:
    """The samples ``size`` ranks draw, each its share with its own seed, drawn here one rank
    at a time (each rank's rows, zeros elsewhere, added up)."""
    total = None
    for rank in range(size):
        distributed._ACTIVE[0] = OneRankOf(rank, size)  # noqa: SLF001 - rank by rank, here
        try:
            with tq.use_backend("numpy"):
                drawn = workloads.samples()
        finally:
            tq.distributed.finalize()
        total = drawn if total is None else {k: (np.add(total[k], drawn[k])).tolist() for k in total}
    return total


@pytest.mark.parametrize("engine, ranks", launcher_runs(ENGINES))
def test_every_rank_gets_one_process_results(engine, ranks, one_process):
    pytest.importorskip({"torch": "torch", "mpi": "mpi4py", "jax": "jax"}[engine])
    results = launch(engine, "workloads.py", ranks=ranks)
    expected = one_process[workloads.BACKENDS[engine]]
    assert expected["slices"] >= 4
    for rank in range(ranks):
        found = results[rank]
        assert found["size"] == ranks and found["slices"] == expected["slices"]
        for name in EXACT:
            np.testing.assert_allclose(found[name], expected[name], rtol=0, atol=1e-12, err_msg=name)
        assert found["trajectories"] == results[0]["trajectories"]  # every rank: the same numbers
    with tq.use_backend(workloads.BACKENDS[engine]):
        mean, error = results[0]["trajectories"]
        np.testing.assert_allclose(mean, shared_trajectories(11, ranks), atol=1e-12)
        exact = float(workloads.noisy_circuit().to_density_matrix().expectation_ps(z=[2, 3]))
    assert abs(mean - exact) < 4 * error
    expected_samples = shared_samples(ranks)
    for name in ("state samples", "wide samples", "dynamic Circuit samples", "dynamic MPSCircuit samples"):
        assert all(results[rank][name] == expected_samples[name] for rank in range(ranks)), name
    assert "the circuit and observable differs between ranks" in results[0]["mismatch"]
    assert all(results[rank]["mismatch"] == results[0]["mismatch"] for rank in range(ranks))
    last = ranks - 1
    for rank in range(last):
        assert results[rank]["failure"].startswith(f"DistributedRankError: 1 other rank(s) of {ranks} failed")
    assert results[last]["failure"] == f"RuntimeError: rank {last}'s share failed on purpose"


def torch_with_the_launchers(cases):
    """The torchrun case of a check whose mpirun case runs in the main suite, marked ``launchers``
    (run after it by ``.ci/run``): a torchrun launch costs 10-15 s of the suite's 10 minutes, and the
    results every engine must share (``test_every_rank_gets_one_process_results``) keep theirs."""
    return [pytest.param(case, marks=pytest.mark.launchers) if case == "torch" else case for case in cases]


@pytest.mark.parametrize("engine", torch_with_the_launchers(jax_in_matrix(ENGINES)))
def test_a_rank_that_stops_outside_a_collective_ends_the_run(engine):
    pytest.importorskip({"torch": "torch", "mpi": "mpi4py", "jax": "jax"}[engine])
    start = time.perf_counter()
    finished = run_launcher(engine, "workloads.py", engine, "crash")
    assert time.perf_counter() - start < TIMEOUT
    assert any(code != 0 for code, _, _ in finished)
    assert any("rank 1 stops before the collective" in err for _, _, err in finished)


@pytest.fixture(scope="module")
def example_alone() -> str:
    """The example's output as one NumPy process (one JAX process would compile for a minute)."""
    alone = subprocess.run([sys.executable, str(EXAMPLE), "--quick"], capture_output=True, text=True,
                           timeout=TIMEOUT)
    assert alone.returncode == 0, alone.stderr
    return alone.stdout


@pytest.mark.parametrize("engine", torch_with_the_launchers(jax_in_matrix(ENGINES)))
def test_the_example_takes_one_process_steps_on_every_rank(engine, example_alone):
    pytest.importorskip({"torch": "torch", "mpi": "mpi4py", "jax": "jax"}[engine])
    finished = run_launcher(engine, str(EXAMPLE), "--quick", "--backend", workloads.BACKENDS[engine])
    assert all(code == 0 for code, _, _ in finished), finished
    printed = "".join(out for _, out, _ in finished)
    assert "2 rank(s)" in printed and "every rank's angles equal: True" in printed and "ok:" in printed
    for line in example_alone.splitlines():
        if line.startswith(("energy + gradient", "optimised")):  # the same numbers, to the digits shown
            numbers = line.split(" in ")[0] if line.startswith("energy") else line.split("cut per edge ")[1]
            assert numbers in printed, (numbers, printed)


def test_shares_and_seeds():
    assert balanced_shares([1.0] * 5, 2) == [[0, 2, 4], [1, 3]]
    assert sorted(sum(balanced_shares(list(np.random.default_rng(1).uniform(size=40)), 3), [])) == \
        list(range(40))
    assert [rank_share(10, OneRankOf(rank, 3)) for rank in range(3)] == [(0, 4), (4, 7), (7, 10)]
    assert rank_seed(5, SingleProcess()) == 5 and rank_seed(None, OneRankOf(0, 2)) is None
    first, second = (np.random.default_rng(rank_seed(5, OneRankOf(rank, 2))).integers(1 << 30, size=4)
                     for rank in range(2))
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, np.random.default_rng(rank_seed(5, OneRankOf(0, 2))).integers(
        1 << 30, size=4))
    with pytest.raises(ValueError, match="seed=-1"):
        rank_seed(-1, OneRankOf(0, 2))


def test_a_failing_share_is_reraised_after_the_sum():
    def fails():
        raise ZeroDivisionError("share")
    with pytest.raises(ZeroDivisionError, match="share"):
        summed_over_ranks(SingleProcess(), fails, (2,), "a test")
