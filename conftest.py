"""Collection rules for the whole repository (tests/conftest.py holds the test fixtures)."""

import importlib.util

# the JAX backend's doctests need jax, an optional extra (pip install -e ".[jax]")
collect_ignore = [] if importlib.util.find_spec("jax") else ["src/tyxonq/numerics/jax_backend.py"]

# Route choices between exact routes use the reference machine's rates in every test, so the same
# route is taken on every machine (tests/test_route_choice.py measures the rates themselves).
import tyxonq  # noqa: E402

tyxonq.set_machine_rates("reference")
