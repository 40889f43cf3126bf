"""Developer sessions: ``nox -s tests``, ``nox -s jax_matrix``, ``nox -s cupynumeric``,
``nox -s docs``, ``nox -s bench``, ``nox -s lint``.

torch is pinned to 2.13.0 on purpose: on these machines that version is a local CPU wheel, while a
bare ``torch`` requirement resolves to a ~3 GB CUDA build.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
TORCH = "torch==2.13.0"


def _venv(session: nox.Session, name: str, *requirements: str) -> str:
    """A fresh venv in .nox/<name>-venv with ``requirements`` installed; returns its python."""
    folder = f".nox/{name}-venv"
    session.run("python3", "-m", "venv", "--clear", folder, external=True)
    session.run(f"{folder}/bin/pip", "install", "-q", *requirements, external=True)
    return f"{folder}/bin/python"


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """The README's test command in a fresh .nox venv, torch from the CPU wheel (the suite with
    doctests, less the ``jax_matrix`` cases: ``nox -s jax_matrix``)."""
    python = _venv(session, "tests", TORCH, "-e", ".[torch,jax,test]")
    session.run(python, "-m", "pytest", *session.posargs, external=True)


@nox.session(python=False)
def jax_matrix(session: nox.Session) -> None:
    """The JAX cases the README's test command leaves out: ``pytest -m jax_matrix``.

    They are JAX cases that spend seconds compiling (``jax_in_matrix`` in tests/conftest.py);
    they run in a fresh .nox venv with the main suite's extras, and CI (.ci/run) runs this
    session after the main suite."""
    python = _venv(session, "jax_matrix", TORCH, "-e", ".[torch,jax,test]")
    session.run(python, "-m", "pytest", "-m", "jax_matrix", *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the package, tests and examples."""
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "examples-ng", "benchmarks", "docs-ng", "noxfile.py")


@nox.session(python=False)
def docs(session: nox.Session) -> None:
    """User guide (Markdown) and API reference (pdoc, from docstrings); warnings fail the build."""
    python = _venv(session, "docs", TORCH, "-e", ".[torch,docs,qiskit,pennylane]")
    session.run(python, "docs-ng/build.py", *session.posargs, external=True)


@nox.session(python=False)
def cupynumeric(session: nox.Session) -> None:
    """The suite's cuPyNumeric cases on the real cuPyNumeric (CPU via a stand-in driver where
    there is no NVIDIA driver; see tests/cupynumeric_ci/README.md)."""
    python = _venv(session, "cupynumeric", TORCH, "nvidia-cupynumeric", "-e", ".[torch,test]")
    session.run(python, "tests/cupynumeric_ci/run_suite.py", *session.posargs, external=True)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """The benchmark suite (benchmarks/run.py) against the peer simulators of the ``bench`` extra;
    pass --quick for the smoke run, other arguments go to run.py."""
    python = _venv(session, "bench", TORCH, "-e", ".[torch,bench]")
    session.run(python, "benchmarks/run.py", *session.posargs, external=True)
