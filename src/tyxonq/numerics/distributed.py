"""One communicator over the engines users already launch with: ``torchrun`` (torch.distributed,
gloo on CPU, NCCL on CUDA), JAX's multi-process runtime (``jax.distributed``) and ``mpirun``
(mpi4py).

:func:`initialize` finds which launcher started the process from its environment (``torchrun``
sets ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``; Open MPI ``OMPI_COMM_WORLD_SIZE``, MPICH and Slurm's
PMI ``PMI_SIZE``; a JAX run ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and
``JAX_PROCESS_ID``), joins it and makes that communicator the active one; outside a launcher the
communicator is :class:`SingleProcess` (rank 0 of 1) and nothing changes. Every communicator has
the same small interface on host arrays: ``rank``, ``size``, :meth:`~Communicator.all_reduce_sum`,
:meth:`~Communicator.all_gather`, :meth:`~Communicator.broadcast`, :meth:`~Communicator.barrier`,
and :meth:`~Communicator.agree`, which raises on every rank when the ranks disagree (a circuit or
Hamiltonian that differs between them), instead of letting a collective hang.

Example (two processes on one machine)::

    torchrun --nproc-per-node 2 script.py        # torch.distributed, gloo
    mpirun -n 2 python script.py                 # mpi4py
    JAX_COORDINATOR_ADDRESS=localhost:12355 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=0 python script.py &
    JAX_COORDINATOR_ADDRESS=localhost:12355 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 python script.py

with ``script.py`` calling ``tq.distributed.initialize()``.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import sys
from typing import Any

import numpy as np

__all__ = ["Communicator", "SingleProcess", "TorchCommunicator", "JaxCommunicator", "MPICommunicator",
           "DistributedMismatchError", "initialize", "communicator", "finalize", "joined",
           "detect_launcher", "DEFAULT_TIMEOUT_SECONDS", "ENGINES"]

#: how long a collective (or joining the run) may wait for the other ranks
DEFAULT_TIMEOUT_SECONDS = 300.0
ENGINES = ("torch", "jax", "mpi")


class DistributedMismatchError(RuntimeError):
    """The ranks of a distributed run disagree about what they compute (raised on every rank)."""


class Communicator:
    """What every engine provides: collectives on host arrays (float or complex NumPy arrays of
    the same shape on every rank)."""

    name = "base"
    rank = 0
    size = 1

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        """The elementwise sum over ranks, on every rank."""
        raise NotImplementedError

    def all_gather(self, array: Any) -> np.ndarray:
        """Every rank's array, stacked in rank order (shape ``(size, *array.shape)``), on every rank."""
        raise NotImplementedError

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        """``root``'s array, on every rank."""
        raise NotImplementedError

    def barrier(self) -> None:
        """Wait for every rank."""

    def close(self) -> None:
        """Leave the run (the process may not join another with this engine afterwards)."""

    def agree(self, value: Any, what: str) -> None:
        """Raise :class:`DistributedMismatchError` on every rank unless every rank passes the same
        ``value`` (compared by a digest of its ``repr``): the check before a collective whose
        ranks must compute the same thing.

        Examples
        --------
        >>> SingleProcess().agree(("rx", (0,)), "the circuit's structure")
        """
        digest = np.frombuffer(hashlib.sha256(repr(value).encode()).digest(), dtype=np.uint8)
        digest = digest.astype(np.float64)
        digests = self.all_gather(digest)
        differing = [rank for rank in range(self.size) if not np.array_equal(digests[rank], digests[0])]
        if differing:
            raise DistributedMismatchError(
                f"{what} differs between ranks (rank 0 and rank(s) {differing} of {self.size}): every "
                "rank must build the same circuit and observable; seed anything random the same on "
                "every rank")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rank={self.rank}, size={self.size})"


class SingleProcess(Communicator):
    """One process: every collective returns its input.

    Examples
    --------
    >>> comm = SingleProcess()
    >>> comm.rank, comm.size, comm.all_reduce_sum(np.ones(2)).tolist()
    (0, 1, [1.0, 1.0])
    """

    name = "none"

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        return np.array(array)

    def all_gather(self, array: Any) -> np.ndarray:
        return np.asarray(array)[None]

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        return np.array(array)


def _as_real_parts(array: Any) -> tuple[np.ndarray, bool]:
    """Complex arrays travel as their real and imaginary parts (every engine sums floats)."""
    array = np.asarray(array)
    if np.iscomplexobj(array):
        return np.stack([array.real, array.imag]).astype(np.float64), True
    return array.astype(np.float64), False


def _from_real_parts(array: np.ndarray, was_complex: bool, axis: int = 0) -> np.ndarray:
    if not was_complex:
        return array
    real, imag = np.take(array, 0, axis=axis), np.take(array, 1, axis=axis)
    return real + 1j * imag


class TorchCommunicator(Communicator):
    """``torch.distributed``: the process group ``torchrun`` describes (gloo on CPU, NCCL when the
    ranks use CUDA devices: ``backend="nccl"``)."""

    name = "torch"

    def __init__(self, backend: str | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        if backend is None:
            backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
        if not dist.is_initialized():
            dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout))
        self.backend = dist.get_backend()
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self.device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}") if self.backend == "nccl" \
            else torch.device("cpu")

    def _tensor(self, array: np.ndarray) -> Any:
        return self.torch.as_tensor(np.ascontiguousarray(array), device=self.device)

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        tensor = self._tensor(parts)
        self.dist.all_reduce(tensor)
        return _from_real_parts(tensor.cpu().numpy(), was_complex)

    def all_gather(self, array: Any) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        tensor = self._tensor(parts)
        gathered = [self.torch.empty_like(tensor) for _ in range(self.size)]
        self.dist.all_gather(gathered, tensor)
        stacked = np.stack([t.cpu().numpy() for t in gathered])
        return _from_real_parts(stacked, was_complex, axis=1)

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        tensor = self._tensor(parts)
        self.dist.broadcast(tensor, src=root)
        return _from_real_parts(tensor.cpu().numpy(), was_complex)

    def barrier(self) -> None:
        self.dist.barrier()

    def close(self) -> None:
        if self.dist.is_initialized():
            self.dist.destroy_process_group()


class JaxCommunicator(Communicator):
    """JAX's multi-process runtime (``jax.distributed``; CPU processes talk through gloo): joined
    from ``coordinator`` (``host:port``), ``num_processes`` and ``process_id``, or from the
    ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` variables."""

    name = "jax"

    def __init__(self, coordinator: str | None = None, num_processes: int | None = None,
                 process_id: int | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        import jax
        from jax.experimental import multihost_utils

        self.jax, self.utils = jax, multihost_utils
        if not jax.distributed.is_initialized():
            jax.distributed.initialize(
                coordinator_address=coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS"),
                num_processes=num_processes if num_processes is not None else
                int(os.environ["JAX_NUM_PROCESSES"]),
                process_id=process_id if process_id is not None else int(os.environ["JAX_PROCESS_ID"]),
                initialization_timeout=int(timeout))
        self.rank, self.size = jax.process_index(), jax.process_count()

    def all_gather(self, array: Any) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        stacked = np.asarray(self.utils.process_allgather(parts))
        if stacked.shape == parts.shape:  # one process: no leading axis was added
            stacked = stacked[None]
        return _from_real_parts(stacked, was_complex, axis=1)

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        return self.all_gather(array).sum(axis=0)

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        return self.all_gather(array)[root]

    def barrier(self) -> None:
        self.utils.sync_global_devices("tyxonq barrier")

    def close(self) -> None:
        if self.jax.distributed.is_initialized():
            self.jax.distributed.shutdown()


class MPICommunicator(Communicator):
    """MPI through mpi4py (``mpirun -n N python script.py``; ``pip install 'tyxonq[distributed]'``
    brings mpi4py and an Open MPI)."""

    name = "mpi"

    def __init__(self) -> None:
        from mpi4py import MPI

        self.MPI, self.comm = MPI, MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        if self.size > 1:
            _abort_on_uncaught_exceptions(self.comm)

    def all_reduce_sum(self, array: Any) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        parts = np.ascontiguousarray(parts)
        result = np.empty_like(parts)
        self.comm.Allreduce(parts, result, op=self.MPI.SUM)
        return _from_real_parts(result, was_complex)

    def all_gather(self, array: Any) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        parts = np.ascontiguousarray(parts)
        result = np.empty((self.size,) + parts.shape, dtype=parts.dtype)
        self.comm.Allgather(parts, result)
        return _from_real_parts(result, was_complex, axis=1)

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        parts, was_complex = _as_real_parts(array)
        parts = np.ascontiguousarray(parts)
        self.comm.Bcast(parts, root=root)
        return _from_real_parts(parts, was_complex)

    def barrier(self) -> None:
        self.comm.Barrier()


def _abort_on_uncaught_exceptions(comm: Any) -> None:
    """A rank that dies of an exception aborts the whole MPI job (as ``python -m mpi4py``
    does): otherwise the others would wait in their next collective forever."""
    previous = sys.excepthook

    def abort(kind: type, error: BaseException, trace: Any) -> None:
        previous(kind, error, trace)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = abort


_ACTIVE: list[Communicator] = [SingleProcess()]


def detect_launcher(environment: dict | None = None) -> str | None:
    """The engine whose launcher started this process (``"torch"``, ``"mpi"``, ``"jax"``), from
    its environment variables, or ``None``.

    Examples
    --------
    >>> detect_launcher({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "localhost"})
    'torch'
    >>> detect_launcher({"OMPI_COMM_WORLD_SIZE": "2"}), detect_launcher({})
    ('mpi', None)
    """
    environment = os.environ if environment is None else environment
    if all(name in environment for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR")):
        return "torch"
    if any(name in environment for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK")):
        return "mpi"
    if "JAX_COORDINATOR_ADDRESS" in environment:
        return "jax"
    return None


def initialize(engine: str | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS,
               **options: Any) -> Communicator:
    """Join the distributed run this process was launched into and make its communicator the
    active one; ``engine`` (``"torch"``, ``"jax"``, ``"mpi"``) overrides the detection, ``options``
    go to its communicator. Outside a launcher: :class:`SingleProcess`, and nothing changes.

    Examples
    --------
    >>> import tyxonq as tq
    >>> comm = tq.distributed.initialize()   # a plain process
    >>> comm.rank, comm.size
    (0, 1)
    """
    engine = detect_launcher() if engine is None else engine
    if engine is None or engine == "none":
        chosen: Communicator = SingleProcess()
    elif engine == "torch":
        chosen = TorchCommunicator(timeout=timeout, **options)
    elif engine == "jax":
        chosen = JaxCommunicator(timeout=timeout, **options)
    elif engine == "mpi":
        chosen = MPICommunicator(**options)
    else:
        raise ValueError(f"engine={engine!r} must be one of {ENGINES}, 'none' or None (detect)")
    _ACTIVE[0] = chosen
    return chosen


def communicator() -> Communicator:
    """The active communicator (:class:`SingleProcess` until :func:`initialize` joins a run)."""
    return _ACTIVE[0]


def joined() -> bool:
    """Whether :func:`initialize` joined a launcher's run (of any number of ranks)."""
    return not isinstance(_ACTIVE[0], SingleProcess)


def finalize() -> None:
    """Leave the run and return to :class:`SingleProcess`."""
    _ACTIVE[0].close()
    _ACTIVE[0] = SingleProcess()
