"""Collection rules for the whole repository (tests/conftest.py holds the test fixtures)."""

import importlib.util

# the JAX backend's doctests need jax, an optional extra (pip install -e ".[jax]")
collect_ignore = [] if importlib.util.find_spec("jax") else ["src/tyxonq/numerics/jax_backend.py"]
