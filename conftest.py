"""Collection rules for the whole repository (tests/conftest.py holds the test fixtures)."""

import importlib.util
import os

# One OpenBLAS / OpenMP thread per test process (set before NumPy, SciPy or PyTorch is imported;
# a value already set is kept; the processes tests launch inherit it unless they set their own).
# The suite's arrays are small and it runs one test at a time on 2 cores, often beside the
# processes a test launches: there a second thread mostly waits for the first (on a busy 2-core
# machine scipy.linalg.solve of a 4x4 matrix took 7.8 ms with OpenBLAS's two threads, 0.06 ms
# with one; a 20-site order-4 TEBD quench 41 s against 5 s).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

# the JAX backend's doctests need jax, an optional extra (pip install -e ".[jax]")
collect_ignore = [] if importlib.util.find_spec("jax") else ["src/tyxonq/numerics/jax_backend.py"]

# Route choices between exact routes use the reference machine's rates in every test, so the same
# route is taken on every machine (tests/test_route_choice.py measures the rates themselves).
import tyxonq  # noqa: E402

tyxonq.set_machine_rates("reference")
