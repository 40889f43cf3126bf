"""Backends under test, shared by every test module.

``pytorch-cuda`` is the PyTorch backend on ``device="cuda"``: it runs wherever PyTorch sees a CUDA
device and is skipped elsewhere (``pytest -k pytorch-cuda`` on a GPU machine runs the backend
matrix there). ``jax`` runs on JAX's default device, a GPU where ``jax[cuda]`` sees one.
``cupynumeric`` runs wherever ``import cupynumeric`` works (it needs an NVIDIA driver, or the
stand-in driver of the cuPyNumeric CI session). ``cupynumeric-logic`` is the
:class:`CuPyNumericBackend` class over the NumPy module: it checks that class's own code (its
compositions for what cuPyNumeric lacks and its 6-dimension limit) on every machine.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings

from limitations import declared_limitation
from tyxonq.numerics import CuPyNumericBackend, NumpyBackend

# Hypothesis draws the same examples on every run by default (the test command is never flaky);
# TYXONQ_HYPOTHESIS=explore searches with fresh random examples (and honours --hypothesis-seed).
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("TYXONQ_HYPOTHESIS", "deterministic"))

BACKEND_IDS = ("numpy", "pytorch", "pytorch-cuda", "cupynumeric", "cupynumeric-logic", "jax")


def make_backend(backend_id: str, **options):
    """A fresh backend instance for ``backend_id``; skips when its library is missing."""
    if backend_id == "numpy":
        return NumpyBackend(**options)
    if backend_id == "pytorch":
        pytest.importorskip("torch")
        from tyxonq.numerics import PyTorchBackend

        return PyTorchBackend(**options)
    if backend_id == "pytorch-cuda":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device")
        from tyxonq.numerics import PyTorchBackend

        return PyTorchBackend(device="cuda", **options)
    if backend_id == "cupynumeric":
        pytest.importorskip("cupynumeric", exc_type=ImportError)
        return CuPyNumericBackend(**options)
    if backend_id == "jax":
        pytest.importorskip("jax")
        from tyxonq.numerics import JaxBackend

        return JaxBackend(**options)
    if backend_id == "cupynumeric-logic":
        return CuPyNumericBackend(module=np, **options)
    raise ValueError(backend_id)


def recording(objective, seen):
    """``objective`` that appends the active backend's name to ``seen`` at each call: where a
    host-twin route ran it."""
    def recorded(t):
        from tyxonq.numerics import get_backend

        seen.append(get_backend().name)
        return objective(t)

    return recorded


def jax_in_matrix(cases):
    """``cases`` (values, or tuples of values, for ``pytest.mark.parametrize``) with every case
    that runs on JAX (the value ``"jax"``, alone or in a tuple) marked ``jax_matrix``.

    Eager JAX compiles every operation for each new shape, so the JAX cases of these tests spend
    seconds each compiling (up to ~45 s on 2 cores; ~7.5 min together): they run in ``nox -s
    jax_matrix`` (``pytest -m jax_matrix``, after the main suite in ``.ci/run``) instead of the
    README's test command, which deselects them (``-m 'not jax_matrix'`` in pyproject's addopts).
    The JAX cases left in the main suite still cover each part of the backend (eager contractions,
    autodiff, SVD gradients, ``jit``, ``vmap``, MPS, density matrices, sampling, the distributed
    launcher)."""
    marked = []
    for case in cases:
        values = case if isinstance(case, tuple) else (case,)
        marked.append(pytest.param(*values, marks=pytest.mark.jax_matrix) if "jax" in values else case)
    return marked


def launcher_runs(engines, ranks=(2, 4)):
    """``(engine, ranks)`` cases for ``pytest.mark.parametrize``: the JAX ones marked ``jax_matrix``
    (:func:`jax_in_matrix`), those of more than 2 ranks ``launchers`` (oversubscribed here, a
    minute each: run after the main suite by ``.ci/run``, ``pytest -m "launchers and not jax_matrix"``)."""
    cases = []
    for engine in engines:
        for count in ranks:
            marks = ([pytest.mark.jax_matrix] if engine == "jax" else []) + \
                ([pytest.mark.launchers] if count > 2 else [])
            cases.append(pytest.param(engine, count, marks=marks))
    return cases


@pytest.fixture(params=BACKEND_IDS)
def backend_id(request):
    return request.param


@pytest.fixture
def K(backend_id):
    return make_backend(backend_id)


@pytest.fixture
def require(backend_id):
    """``require(feature)`` skips with the reason declared in tests/limitations.py, if any."""

    def check(feature: str) -> None:
        reason = declared_limitation(backend_id, feature)
        if reason is not None:
            pytest.skip(f"declared limitation of {backend_id}: {reason}")

    return check


@pytest.fixture(autouse=True)
def _restore_active_backend():
    """Tests that call set_backend must not leak their choice into other tests."""
    from tyxonq.numerics.selection import ACTIVE_BACKEND

    with ACTIVE_BACKEND.isolated():
        yield
