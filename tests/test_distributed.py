"""The communicator under the real launchers: 2 ranks under ``torchrun``, under ``mpirun``
(oversubscribed on 2 cores) and as 2 JAX processes on localhost; every collective against the
answer computed here, and a disagreement between ranks raised on every rank. Each run has a
timeout: a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tyxonq as tq
from tyxonq.numerics.distributed import SingleProcess, detect_launcher

WORKERS = Path(__file__).parent / "distributed"
BIN = Path(sys.executable).parent
TIMEOUT = 240


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def environment(**extra: str) -> dict:
    """The test's environment without any launcher's variables (a nested launch starts clean),
    Open MPI allowed to run as root, one thread per rank, JAX processes on the CPU (on a 1-GPU
    machine two JAX processes on the GPU fail in NCCL: 'Duplicate GPU detected', seen on an H200)."""
    launched = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                "PMI_SIZE", "JAX_COORDINATOR_ADDRESS", "TYXONQ_PERSISTENT_CACHE")
    clean = {name: value for name, value in os.environ.items() if name not in launched}
    return {**clean, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "JAX_PLATFORMS": "cpu",
            "PYTHONPATH": os.pathsep.join(filter(None, (str(WORKERS), os.environ.get("PYTHONPATH")))),
            **extra}


def run_launcher(engine: str, worker: str, *arguments: str, ranks: int = 2,
                 timeout: float = TIMEOUT) -> list[tuple[int, str, str]]:
    """Run the script ``worker`` (in ``tests/distributed`` unless a path) with ``arguments`` on
    ``ranks`` ranks with ``engine``'s launcher: each launched process's return code, standard
    output and standard error (one launcher process, or the JAX processes), within
    ``timeout`` s. ``"jax-self"`` starts JAX processes without the ``JAX_*`` variables: the
    script starts JAX's runtime itself from ``SHARDED_TEST_*`` ones."""
    script = [str(WORKERS / worker), *arguments]
    if engine == "torch":
        runs = [subprocess.Popen([str(BIN / "torchrun"), "--nproc-per-node", str(ranks), "--master-port",
                                  str(free_port()), *script], env=environment(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)]
    elif engine == "mpi":
        mpirun = shutil.which("mpirun", path=str(BIN)) or shutil.which("mpirun")
        if mpirun is None:
            pytest.skip("mpirun is not installed (pip install 'tyxonq[distributed]')")
        runs = [subprocess.Popen([mpirun, "-n", str(ranks), "--oversubscribe", sys.executable, *script],
                                 env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)]
    else:
        address = f"localhost:{free_port()}"
        names = ("SHARDED_TEST_COORDINATOR", "SHARDED_TEST_PROCESSES", "SHARDED_TEST_PROCESS_ID") \
            if engine == "jax-self" else ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")
        runs = [subprocess.Popen([sys.executable, *script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True,
                                 env=environment(**dict(zip(names, (address, str(ranks), str(rank))))))
                for rank in range(ranks)]
    finished = []
    try:
        for run in runs:
            out, err = run.communicate(timeout=timeout)
            finished.append((run.returncode, out, err))
    finally:
        for run in runs:
            run.kill()
    return finished


def launch(engine: str, worker: str, *arguments: str, ranks: int = 2,
           timeout: float = TIMEOUT) -> dict[int, dict]:
    """Run ``worker`` on ``ranks`` ranks with ``engine``'s launcher, which must succeed; the JSON
    each rank printed on its ``RESULT <rank> <json>`` line, by rank."""
    finished = run_launcher(engine, worker, engine, *arguments, ranks=ranks, timeout=timeout)
    for code, out, err in finished:
        assert code == 0, f"{engine} run failed:\n{out[-3000:]}\n{err[-5000:]}"
    results = {}
    for _, out, _ in finished:
        for line in out.splitlines():
            if line.startswith("RESULT "):
                _, rank, text = line.split(" ", 2)
                results[int(rank)] = json.loads(text)
    assert sorted(results) == list(range(ranks)), finished
    return results


@pytest.mark.parametrize("engine", ["torch", "mpi", "jax"])
def test_collectives_under_each_launcher(engine):
    if engine == "mpi":
        pytest.importorskip("mpi4py")
    if engine == "jax":
        pytest.importorskip("jax")
    result = launch(engine, "collectives.py")[0]
    ranks = [np.array([1.0 + r, 2.0 * r]) + 1j * np.array([r, 1.0]) for r in range(2)]
    assert result["size"] == 2
    assert result["backend"] in ({"torch": ("gloo", "nccl")}.get(engine, (None,)))
    np.testing.assert_allclose(np.array(result["sum"], dtype=float) @ [1, 1j], sum(ranks), atol=0)
    np.testing.assert_allclose(result["real sum"], np.arange(3.0) * 3, atol=0)
    np.testing.assert_allclose(result["gathered"], [[0.0], [1.0]], atol=0)
    np.testing.assert_allclose(result["broadcast"], [11.0, 21.0], atol=0)
    assert "the circuit differs between ranks (rank 0 and rank(s) [1] of 2)" in result["mismatch"]


def cuda_devices() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.mark.skipif(cuda_devices() == 0, reason="needs a CUDA device")
@pytest.mark.parametrize("surplus", [0, 1])
def test_torchrun_uses_nccl_when_each_rank_has_a_gpu_else_gloo(surplus):
    """One rank per GPU (at most 2): the collectives run over NCCL; one rank more than the GPUs:
    over gloo (NCCL refuses two ranks on one device). The same answers either way."""
    ranks = min(cuda_devices(), 2) + surplus
    result = launch("torch", "collectives.py", ranks=ranks)[0]
    assert result["backend"] == ("gloo" if surplus else "nccl")
    values = [np.array([1.0 + r, 2.0 * r]) + 1j * np.array([r, 1.0]) for r in range(ranks)]
    np.testing.assert_allclose(np.array(result["sum"], dtype=float) @ [1, 1j], sum(values), atol=0)
    np.testing.assert_allclose(result["gathered"], [[float(r)] for r in range(ranks)], atol=0)
    np.testing.assert_allclose(result["broadcast"], [10.0 + ranks - 1, 20.0 + ranks - 1], atol=0)


def test_outside_a_launcher_nothing_changes():
    comm = tq.distributed.initialize()
    assert isinstance(comm, SingleProcess) and (comm.rank, comm.size) == (0, 1)
    assert tq.distributed.communicator() is comm
    np.testing.assert_array_equal(comm.all_reduce_sum(np.array([1.0 + 2j])), [1.0 + 2j])
    np.testing.assert_array_equal(comm.all_gather(np.array([3.0])), [[3.0]])
    assert detect_launcher({"JAX_COORDINATOR_ADDRESS": "localhost:1"}) == "jax"
    assert detect_launcher({"PMI_SIZE": "4"}) == "mpi"
    with pytest.raises(ValueError, match="engine='slurm'"):
        tq.distributed.initialize("slurm")
    tq.distributed.finalize()


JAX_VARIABLES = ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")


@pytest.mark.parametrize("given, missing", [
    ({}, JAX_VARIABLES),
    ({"JAX_COORDINATOR_ADDRESS": "localhost:1"}, ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID")),
    ({"JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "0"}, ("JAX_COORDINATOR_ADDRESS",)),
])
def test_jax_outside_its_launcher_says_what_is_missing_and_how_to_launch(monkeypatch, given, missing):
    """No KeyError from deep inside: a ValueError naming each missing setting (and only those),
    the way to launch, and that an initialised jax.distributed is joined as it is."""
    jax = pytest.importorskip("jax")
    assert not jax.distributed.is_initialized()
    for name in JAX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match="engine='jax'") as raised:
        tq.distributed.initialize("jax")
    message = str(raised.value)
    named = message.split("but")[1].split(":")[0]  # "..., but <the missing ones> is not set (...): ..."
    assert all(name in named for name in missing) and not any(
        name in named for name in set(JAX_VARIABLES) - set(missing)), message
    assert "jax.distributed.initialize" in message and "num_processes=" in message
    assert not tq.distributed.joined()


@pytest.mark.parametrize("variable, value, fragment", [
    ("JAX_NUM_PROCESSES", "two", "JAX_NUM_PROCESSES='two' must be a positive int"),
    ("JAX_NUM_PROCESSES", "0", "JAX_NUM_PROCESSES='0' must be a positive int"),
    ("JAX_PROCESS_ID", "2", r"JAX_PROCESS_ID='2' must be a rank in \[0, 2\)"),
    ("JAX_PROCESS_ID", "-1", r"JAX_PROCESS_ID='-1' must be a rank in \[0, 2\)"),
])
def test_jax_settings_are_checked_before_joining(monkeypatch, variable, value, fragment):
    pytest.importorskip("jax")
    for name, default in zip(JAX_VARIABLES, ("localhost:1", "2", "0")):
        monkeypatch.setenv(name, default)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=fragment):
        tq.distributed.initialize("jax")
    monkeypatch.setenv(variable, dict(zip(JAX_VARIABLES, ("localhost:1", "2", "0")))[variable])
    with pytest.raises(ValueError, match=r"process_id=5 must be a rank in \[0, 2\)"):
        tq.distributed.initialize("jax", process_id=5)
    with pytest.raises(TypeError, match="num_processes=2.0 must be a positive int"):
        tq.distributed.initialize("jax", num_processes=2.0)


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), float("inf"), "60", True])
def test_the_timeout_is_checked_for_every_engine(timeout):
    for engine in ("torch", "jax"):
        with pytest.raises((ValueError, TypeError), match="timeout="):
            tq.distributed.initialize(engine, timeout=timeout)
    assert not tq.distributed.joined()


def test_a_jax_runtime_already_started_is_used_and_left_running(monkeypatch):
    """jax.distributed initialised by the user (here: reported so): joined without any variable,
    and finalize leaves it to its owner."""
    jax = pytest.importorskip("jax")
    for name in JAX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(jax.distributed, "is_initialized", lambda: True)
    shutdowns = []
    monkeypatch.setattr(jax.distributed, "shutdown", lambda: shutdowns.append(1))
    comm = tq.distributed.initialize("jax")
    assert comm.name == "jax" and (comm.rank, comm.size) == (0, 1) and tq.distributed.joined()
    np.testing.assert_array_equal(comm.all_reduce_sum(np.array([1.0 + 2j])), [1.0 + 2j])
    tq.distributed.finalize()
    assert shutdowns == [] and not tq.distributed.joined()


def test_a_torch_process_group_the_program_created_is_joined(monkeypatch):
    """A process group started with the program's own init_method (no torchrun variables)."""
    torch_distributed = pytest.importorskip("torch.distributed")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                 "JAX_COORDINATOR_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    torch_distributed.init_process_group("gloo", init_method=f"tcp://localhost:{free_port()}", rank=0,
                                         world_size=1)
    try:
        assert tq.distributed.running_engines() == ["torch"]
        comm = tq.distributed.initialize()
        assert comm.name == "torch" and (comm.rank, comm.size) == (0, 1)
        with pytest.raises(ValueError, match="already started a 'torch' runtime"):
            tq.distributed.initialize("mpi")
        jax = pytest.importorskip("jax")
        monkeypatch.setattr(jax.distributed, "is_initialized", lambda: True)
        with pytest.raises(ValueError, match="started torch and jax runtimes; .* pass engine="):
            tq.distributed.initialize()
    finally:
        tq.distributed.finalize()
    assert not torch_distributed.is_initialized()


def test_communicators_given_are_used():
    given = SingleProcess()
    assert tq.distributed.initialize(comm=given) is given and tq.distributed.communicator() is given
    tq.distributed.finalize()
    with pytest.raises(ValueError, match="is a 'none' communicator, not engine='torch'"):
        tq.distributed.initialize("torch", comm=given)
    with pytest.raises(ValueError, match="comm= takes an mpi4py communicator"):
        tq.distributed.initialize("jax", comm=object())
    with pytest.raises(TypeError, match="must be a tq.distributed.Communicator"):
        with tq.distributed.use_communicator(object()):
            pass
    MPI = pytest.importorskip("mpi4py.MPI")
    comm = tq.distributed.initialize(comm=MPI.COMM_SELF)
    assert comm.name == "mpi" and comm.size == 1 and comm.comm is MPI.COMM_SELF
    tq.distributed.finalize()
    with pytest.raises(TypeError, match="must be an mpi4py communicator"):
        tq.distributed.initialize("mpi", comm="world")


def test_jax_finds_slurm_and_open_mpi_runs_itself():
    from tyxonq.numerics.distributed import jax_cluster

    assert jax_cluster({"SLURM_JOB_ID": "1", "SLURM_NTASKS": "2", "SLURM_PROCID": "1"}) == "slurm"
    assert jax_cluster({"OMPI_MCA_orte_hnp_uri": "x", "OMPI_COMM_WORLD_SIZE": "2",
                        "OMPI_COMM_WORLD_RANK": "0"}) == "open-mpi"
    assert jax_cluster({"SLURM_JOB_ID": "1"}) is None
