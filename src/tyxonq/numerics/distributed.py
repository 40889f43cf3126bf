"""One communicator over the engines users already launch with: ``torchrun`` (torch.distributed,
gloo on CPU, NCCL on CUDA), JAX's multi-process runtime (``jax.distributed``) and ``mpirun``
(mpi4py).

:func:`initialize` finds which launcher started the process from its environment (``torchrun``
sets ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``; Open MPI ``OMPI_COMM_WORLD_SIZE``, MPICH and Slurm's
PMI ``PMI_SIZE``; a JAX run ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and
``JAX_PROCESS_ID``), joins it and makes that communicator the active one; outside a launcher the
communicator is :class:`SingleProcess` (rank 0 of 1) and nothing changes. An engine asked for by
name whose run cannot be joined (``initialize("jax")`` without the JAX variables) is refused with
a ``ValueError`` naming what is missing, before anything starts. Every communicator has
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

import contextlib
import contextvars
import datetime
import hashlib
import math
import numbers
import os
import sys
import warnings
from typing import Any, Iterator

import numpy as np

__all__ = ["Communicator", "SingleProcess", "TorchCommunicator", "JaxCommunicator", "MPICommunicator",
           "DistributedMismatchError", "initialize", "communicator", "finalize", "joined",
           "detect_launcher", "jax_run_settings", "use_communicator", "running_engines", "jax_cluster",
           "DEFAULT_TIMEOUT_SECONDS", "ENGINES"]

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

    def exchange(self, array: Any, partner: int) -> Any:
        """Send ``array`` to rank ``partner`` and return the array of the same shape and dtype that
        ``partner`` sends back (both ranks call it, each naming the other). This engine has no
        point-to-point transfer, so every rank's array is all-gathered (the same result; each rank
        receives ``size - 1`` arrays instead of one: warned once).

        Examples
        --------
        >>> SingleProcess().exchange(np.arange(3.0), 0).tolist()
        [0.0, 1.0, 2.0]
        """
        self._check_partner(partner)
        _warn_gathered_exchange(self.name)
        return self.all_gather(array)[partner]

    def _check_partner(self, partner: int) -> None:
        if isinstance(partner, bool) or not isinstance(partner, numbers.Integral) \
                or not 0 <= partner < self.size:
            raise ValueError(f"partner={partner!r} must be a rank in [0, {self.size})")

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

    def exchange(self, array: Any, partner: int) -> Any:
        self._check_partner(partner)
        return np.array(array)


_WARNED_GATHERED: set[str] = set()


def _warn_gathered_exchange(engine: str) -> None:
    if engine not in _WARNED_GATHERED:
        _WARNED_GATHERED.add(engine)
        warnings.warn(f"the {engine!r} engine has no point-to-point transfer: each exchange of a "
                      "sharded state all-gathers what the pair trades (the same results; more data "
                      "moves: each rank receives every rank's part, not only its partner's)",
                      RuntimeWarning, stacklevel=3)


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


def default_process_group_backend(torch: Any, dist: Any) -> str:
    """``"nccl"`` where every rank of this host has a CUDA device of its own (``LOCAL_WORLD_SIZE``,
    set by ``torchrun``, at most the devices PyTorch sees), else ``"gloo"``: NCCL refuses two ranks
    on one GPU, so 2 ranks on a 1-GPU machine talk through gloo instead of failing.

    Examples
    --------
    >>> import torch, torch.distributed as dist
    >>> default_process_group_backend(torch, dist) in ("nccl", "gloo")
    True
    """
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if torch.cuda.is_available() and dist.is_nccl_available() and local_ranks <= torch.cuda.device_count():
        return "nccl"
    return "gloo"


class TorchCommunicator(Communicator):
    """``torch.distributed``: the process group ``torchrun`` describes (gloo on CPU, NCCL when the
    ranks use CUDA devices: ``backend="nccl"``)."""

    name = "torch"

    def __init__(self, backend: str | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        if backend is None:
            backend = default_process_group_backend(torch, dist)
        if not dist.is_initialized():
            dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout))
        self.backend = dist.get_backend()
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self.device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}") if self.backend == "nccl" \
            else torch.device("cpu")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)  # NCCL's collectives run on the current device

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

    def exchange(self, array: Any, partner: int) -> Any:
        """A pairwise exchange by ``isend``/``irecv`` (gloo, or NCCL between GPUs); a torch tensor
        is sent from where it lives and the received one comes back there, anything else as a
        host array."""
        self._check_partner(partner)
        torch = self.torch
        given_tensor = isinstance(array, torch.Tensor)
        tensor = array if given_tensor else torch.as_tensor(np.ascontiguousarray(array))
        device = tensor.device
        if self.backend == "nccl" and tensor.device.type != "cuda":
            tensor = tensor.to(self.device)
        was_complex = tensor.is_complex()
        outgoing = (torch.view_as_real(tensor) if was_complex else tensor).contiguous()
        incoming = torch.empty_like(outgoing)
        requests = self.dist.batch_isend_irecv([self.dist.P2POp(self.dist.isend, outgoing, partner),
                                                self.dist.P2POp(self.dist.irecv, incoming, partner)])
        for request in requests:
            request.wait()
        received = torch.view_as_complex(incoming) if was_complex else incoming
        received = received.to(device)
        return received if given_tensor else received.numpy()

    def close(self) -> None:
        if self.dist.is_initialized():
            self.dist.destroy_process_group()


class JaxCommunicator(Communicator):
    """JAX's multi-process runtime (``jax.distributed``; CPU processes talk through gloo): joined
    from ``coordinator`` (``host:port``), ``num_processes`` and ``process_id``, or from the
    ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` variables; a
    ``ValueError`` names those missing. A runtime the program already started with
    ``jax.distributed.initialize()`` is used as it is (nothing is needed then) and left running by
    :meth:`close`, for its owner to shut down. Joining sets ``jax_enable_x64``: the collectives
    carry float64 arrays (JAX would round them to 32 bits)."""

    name = "jax"

    def __init__(self, coordinator: str | None = None, num_processes: int | None = None,
                 process_id: int | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        import jax
        from jax.experimental import multihost_utils

        self.jax, self.utils = jax, multihost_utils
        jax.config.update("jax_enable_x64", True)  # the collectives carry float64 (32 bits otherwise)
        self.owned = not jax.distributed.is_initialized()
        if self.owned:
            given = (coordinator, num_processes, process_id)
            if all(value is None for value in given) and not any(os.environ.get(variable)
                                                                 for _, variable in _JAX_SETTINGS) \
                    and (cluster := jax_cluster()) is not None:
                # Slurm or Open MPI: JAX reads the coordinator, the count and the rank itself
                jax.distributed.initialize(initialization_timeout=max(1, math.ceil(timeout)))
                self.cluster = cluster
            else:
                address, count, index = jax_run_settings(coordinator, num_processes, process_id)
                jax.distributed.initialize(coordinator_address=address, num_processes=count, process_id=index,
                                           initialization_timeout=max(1, math.ceil(timeout)))
        self.rank, self.size = jax.process_index(), jax.process_count()
        if self.size > 1:
            _exit_on_uncaught_exceptions()

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
        if self.owned and self.jax.distributed.is_initialized():
            self.jax.distributed.shutdown()


#: environment variables by which JAX's own cluster detection finds a run it can join without
#: ``JAX_*`` variables: Slurm's ``srun`` and Open MPI's ``mpirun`` (``jax.distributed.initialize()``)
JAX_CLUSTERS = (("slurm", ("SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_PROCID")),
                ("open-mpi", ("OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK")))


def jax_cluster(environment: dict | None = None) -> str | None:
    """The cluster whose launcher JAX detects by itself (:data:`JAX_CLUSTERS`), or ``None``.

    Examples
    --------
    >>> jax_cluster({"SLURM_JOB_ID": "7", "SLURM_NTASKS": "4", "SLURM_PROCID": "0"})
    'slurm'
    >>> jax_cluster({}) is None
    True
    """
    environment = os.environ if environment is None else environment
    for name, variables in JAX_CLUSTERS:
        if all(variable in environment for variable in variables):
            return name
    return None


_JAX_SETTINGS = (("coordinator", "JAX_COORDINATOR_ADDRESS"), ("num_processes", "JAX_NUM_PROCESSES"),
                 ("process_id", "JAX_PROCESS_ID"))


def jax_run_settings(coordinator: str | None = None, num_processes: int | None = None,
                     process_id: int | None = None, environment: dict | None = None) -> tuple[str, int, int]:
    """``(coordinator address, number of processes, this process's id)`` of the JAX run to join:
    each argument given, else its environment variable, checked.

    Raises
    ------
    ValueError
        Naming every setting that is missing and how to launch a JAX run, or a value that is not
        a positive count / a rank below it.
    TypeError
        An argument of the wrong type.

    Examples
    --------
    >>> jax_run_settings(environment={"JAX_COORDINATOR_ADDRESS": "localhost:12355",
    ...                               "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "1"})
    ('localhost:12355', 2, 1)
    >>> jax_run_settings(environment={"JAX_NUM_PROCESSES": "2"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: engine='jax' joins a JAX multi-process run, but JAX_COORDINATOR_ADDRESS, JAX_PROCESS_ID ...
    """
    environment = os.environ if environment is None else environment
    given = {"coordinator": coordinator, "num_processes": num_processes, "process_id": process_id}
    values = {option: given[option] if given[option] is not None else environment.get(variable)
              for option, variable in _JAX_SETTINGS}
    missing = [variable for option, variable in _JAX_SETTINGS if values[option] in (None, "")]
    if missing:
        raise ValueError(
            f"engine='jax' joins a JAX multi-process run, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set (and jax.distributed is not initialised): "
            "start every process with JAX_COORDINATOR_ADDRESS=host:port "
            "JAX_NUM_PROCESSES=<count> JAX_PROCESS_ID=<rank>, pass coordinator=, num_processes= and "
            "process_id= to tq.distributed.initialize('jax', ...), or call jax.distributed.initialize() "
            "before it; a single process needs no initialize('jax')")
    if not isinstance(values["coordinator"], str):
        raise TypeError(f"coordinator={values['coordinator']!r} must be a 'host:port' string")
    shown = {option: f"{option if given[option] is not None else variable}={values[option]!r}"
             for option, variable in _JAX_SETTINGS}
    count, index = (_held_int(values[option], given[option] is None)
                    for option in ("num_processes", "process_id"))
    if count is None or count < 1:
        wrong_type = count is None and given["num_processes"] is not None
        raise (TypeError if wrong_type else ValueError)(f"{shown['num_processes']} must be a positive int")
    if index is None or not 0 <= index < count:
        wrong_type = index is None and given["process_id"] is not None
        raise (TypeError if wrong_type else ValueError)(
            f"{shown['process_id']} must be a rank in [0, {count}) (an int below the number of processes)")
    return values["coordinator"], count, index


def _held_int(value: Any, from_environment: bool) -> int | None:
    """The int a setting holds (an environment variable's text of digits), or ``None``."""
    if from_environment:
        try:
            return int(value.strip())
        except ValueError:
            return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


class MPICommunicator(Communicator):
    """MPI through mpi4py (``mpirun -n N python script.py``; ``pip install 'tyxonq[distributed]'``
    brings mpi4py and an Open MPI): ``MPI.COMM_WORLD``, or the communicator ``comm`` the program
    already uses (a split of the world, say)."""

    name = "mpi"

    def __init__(self, comm: Any = None) -> None:
        from mpi4py import MPI

        if comm is not None and not isinstance(comm, MPI.Comm):
            raise TypeError(f"comm={comm!r} must be an mpi4py communicator (MPI.Comm), such as "
                            "MPI.COMM_WORLD.Split(...)")
        self.MPI, self.comm = MPI, MPI.COMM_WORLD if comm is None else comm
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

    #: MPI counts elements in an int: larger exchanges go in pieces of this many bytes
    EXCHANGE_PIECE_BYTES = 1 << 30

    def exchange(self, array: Any, partner: int) -> np.ndarray:
        """A pairwise ``Sendrecv`` (in pieces of at most :data:`EXCHANGE_PIECE_BYTES`)."""
        self._check_partner(partner)
        outgoing = np.ascontiguousarray(array).reshape(-1)
        incoming = np.empty_like(outgoing)
        step = max(1, self.EXCHANGE_PIECE_BYTES // max(outgoing.itemsize, 1))
        for start in range(0, max(outgoing.size, 1), step):
            piece = slice(start, start + step)
            self.comm.Sendrecv(outgoing[piece], dest=partner, recvbuf=incoming[piece], source=partner)
        return incoming.reshape(np.shape(array))


def _abort_on_uncaught_exceptions(comm: Any) -> None:
    """A rank that dies of an exception aborts the whole MPI job (as ``python -m mpi4py``
    does): otherwise the others would wait in their next collective forever."""
    previous = sys.excepthook

    def abort(kind: type, error: BaseException, trace: Any) -> None:
        previous(kind, error, trace)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = abort


def _exit_on_uncaught_exceptions() -> None:
    """A JAX process that dies of an exception leaves at once (``os._exit``): its runtime's
    shutdown would wait at a barrier for the other processes, themselves waiting in a collective
    for it, for minutes; gone, it is noticed by the coordination service, which ends the others."""
    previous = sys.excepthook

    def leave(kind: type, error: BaseException, trace: Any) -> None:
        previous(kind, error, trace)
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)

    sys.excepthook = leave


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
    active one. Outside a launcher: :class:`SingleProcess`, and nothing changes.

    Parameters
    ----------
    engine : {None, "torch", "jax", "mpi", "none"}
        ``None``: the runtime the program already started itself, if any (a torch process group,
        ``jax.distributed.initialize(...)`` called with its own arguments, MPI:
        :func:`running_engines`), else the launcher found from the environment
        (:func:`detect_launcher`); a name overrides the detection.
    timeout : float
        Seconds joining the run (and, on torch, each collective) may wait for the other ranks.
    **options
        Passed to the engine's communicator (``"jax"``: ``coordinator``, ``num_processes``,
        ``process_id``; ``"torch"``: ``backend``; ``"mpi"``: ``comm``, an mpi4py communicator the
        program already uses). ``comm=`` may also be a tyxonq :class:`Communicator`, made active
        as it is.

    Raises
    ------
    ValueError
        An unknown engine, a timeout that is not positive and finite, or an engine whose run this
        process cannot join: ``"jax"`` without ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``
        and ``JAX_PROCESS_ID`` (or the matching options) is refused naming the missing ones,
        unless the program has already started ``jax.distributed``, which is then used as it is
        (under Slurm or Open MPI, without those variables, JAX finds its cluster itself). Two
        engines' runtimes started at once (or an engine asked for while another one's runs) are
        refused naming both.

    Examples
    --------
    >>> import tyxonq as tq
    >>> comm = tq.distributed.initialize()   # a plain process
    >>> comm.rank, comm.size
    (0, 1)
    """
    timeout = _checked_timeout(timeout)
    comm = options.pop("comm", None)
    if isinstance(comm, Communicator):
        if engine not in (None, comm.name):
            raise ValueError(f"comm={comm!r} is a {comm.name!r} communicator, not engine={engine!r}")
        _ACTIVE[0] = comm
        return comm
    if comm is not None:
        if engine not in (None, "mpi"):
            raise ValueError(f"comm= takes an mpi4py communicator (engine='mpi'), not with engine={engine!r}")
        engine, options = "mpi", {**options, "comm": comm}
    if engine is None:
        engine = _running_engine() or detect_launcher()
    else:
        _refuse_mixed(engine)
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


def running_engines() -> list[str]:
    """The engines whose runtime this program has already started itself: a torch process group
    (``torch.distributed.init_process_group``), a JAX multi-process runtime
    (``jax.distributed.initialize``), an MPI communicator of more than one rank (mpi4py imported
    and MPI initialised). Only modules already imported are asked.

    Examples
    --------
    >>> running_engines()   # a plain process
    []
    """
    running = []
    if "torch.distributed" in sys.modules:
        dist = sys.modules["torch.distributed"]
        if dist.is_available() and dist.is_initialized():
            running.append("torch")
    if "jax" in sys.modules:
        jax = sys.modules["jax"]
        if getattr(jax, "distributed", None) is not None and jax.distributed.is_initialized():
            running.append("jax")
    if "mpi4py.MPI" in sys.modules:
        MPI = sys.modules["mpi4py.MPI"]
        if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            running.append("mpi")
    return running


def _running_engine() -> str | None:
    """The one engine already running (:func:`running_engines`), ``None``; two raise."""
    running = running_engines()
    if len(running) > 1:
        raise ValueError(f"this program has started {' and '.join(running)} runtimes; tyxonq shares work "
                         f"over one: pass engine= (one of {running}) to tq.distributed.initialize")
    return running[0] if running else None


def _refuse_mixed(engine: str) -> None:
    """An engine asked for while another one's runtime already runs: refused (the ranks of the two
    need not match)."""
    others = [name for name in running_engines() if name != engine and engine in ENGINES]
    if others:
        raise ValueError(f"engine={engine!r} asked for, but this program has already started a {others[0]!r} "
                         f"runtime: use engine={others[0]!r}, or leave that runtime before joining another "
                         "(mixing two engines' ranks in one run is not supported)")


def _checked_timeout(timeout: Any) -> float:
    """``timeout`` as a positive, finite number of seconds."""
    if isinstance(timeout, (bool, np.bool_)) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout={timeout!r} must be a number of seconds; got {type(timeout).__name__}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout={timeout!r} must be a positive, finite number of seconds")
    return float(timeout)


_IN_USE: contextvars.ContextVar[Communicator | None] = contextvars.ContextVar("tyxonq_communicator",
                                                                              default=None)


def communicator() -> Communicator:
    """The active communicator: the one :func:`use_communicator` gives the current block, else
    the run's (:class:`SingleProcess` until :func:`initialize` joins a run)."""
    in_use = _IN_USE.get()
    return _ACTIVE[0] if in_use is None else in_use


@contextlib.contextmanager
def use_communicator(comm: Communicator) -> Iterator[Communicator]:
    """Within the block (and the thread or task running it), share work over ``comm`` instead of
    the run's communicator: a group of the run's ranks, say, or ranks simulated by threads.

    Examples
    --------
    >>> with use_communicator(SingleProcess()) as comm:
    ...     communicator() is comm
    True
    """
    if not isinstance(comm, Communicator):
        raise TypeError(f"comm={comm!r} must be a tq.distributed.Communicator (initialize(comm=...) wraps "
                        "an mpi4py communicator)")
    token = _IN_USE.set(comm)
    try:
        yield comm
    finally:
        _IN_USE.reset(token)


def joined() -> bool:
    """Whether :func:`initialize` joined a launcher's run (of any number of ranks)."""
    return not isinstance(communicator(), SingleProcess)


def finalize() -> None:
    """Leave the run and return to :class:`SingleProcess`."""
    _ACTIVE[0].close()
    _ACTIVE[0] = SingleProcess()
