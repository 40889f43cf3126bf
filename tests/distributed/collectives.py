"""Run under a launcher (torchrun, mpirun, or two JAX processes): every collective of the active
communicator, printed as JSON by rank 0 for the test to compare with one process's answers."""

import json
import sys

import numpy as np

import tyxonq as tq


def main(engine: str) -> None:
    comm = tq.distributed.initialize(engine)
    rank, size = comm.rank, comm.size
    values = np.array([1.0 + rank, 2.0 * rank]) + 1j * np.array([rank, 1.0])
    result = {
        "size": size,
        "backend": getattr(comm, "backend", None),
        "sum": comm.all_reduce_sum(values).tolist(),
        "real sum": comm.all_reduce_sum(np.arange(3.0) * (rank + 1)).tolist(),
        "gathered": comm.all_gather(np.array([float(rank)])).tolist(),
        "broadcast": comm.broadcast(np.array([10.0 + rank, 20.0 + rank]), root=size - 1).tolist(),
    }
    comm.agree(("rx", (0,), 0.3), "the circuit")
    try:
        comm.agree(("rx", (rank,)), "the circuit")
        result["mismatch"] = None
    except tq.distributed.DistributedMismatchError as error:
        result["mismatch"] = str(error)
    for turn in range(size):  # one rank at a time: the ranks may share one output pipe
        if turn == rank:
            text = json.dumps(result, default=lambda z: [z.real, z.imag])
            sys.stdout.write(f"RESULT {rank} {text}\n")
            sys.stdout.flush()
        comm.barrier()
    tq.distributed.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
