"""Developer sessions: ``nox -s tests``, ``nox -s cupynumeric``, ``nox -s docs``, ``nox -s bench``,
``nox -s lint``.

torch is pinned to 2.13.0 on purpose: on these machines that version is a local CPU wheel, while a
bare ``torch`` requirement resolves to a ~3 GB CUDA build.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
TORCH = "torch==2.13.0"


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """The full test suite (with doctests) in a fresh .nox venv, torch from the CPU wheel."""
    session.run("python3", "-m", "venv", "--clear", ".nox/tests-venv", external=True)
    pip = ".nox/tests-venv/bin/pip"
    session.run(pip, "install", "-q", TORCH, "-e", ".[torch,test]", external=True)
    session.run(".nox/tests-venv/bin/python", "-m", "pytest", *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the package, tests and examples."""
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "examples-ng", "noxfile.py")


@nox.session(python=False)
def docs(session: nox.Session) -> None:
    """User guide (Markdown) and API reference (pdoc, from docstrings); warnings fail the build."""
    session.run("python3", "-m", "venv", "--clear", ".nox/docs-venv", external=True)
    session.run(".nox/docs-venv/bin/pip", "install", "-q", TORCH, "-e", ".[torch,docs]",
                external=True)
    session.run(".nox/docs-venv/bin/python", "docs-ng/build.py", *session.posargs, external=True)


@nox.session(python=False)
def cupynumeric(session: nox.Session) -> None:
    """The whole suite with the real cuPyNumeric importable (CPU via a stand-in driver where
    there is no NVIDIA driver; see tests/cupynumeric_ci/README.md)."""
    session.run("python3", "-m", "venv", "--clear", ".nox/cupynumeric-venv", external=True)
    session.run(".nox/cupynumeric-venv/bin/pip", "install", "-q", TORCH, "nvidia-cupynumeric",
                "-e", ".[torch,test]", external=True)
    session.run(".nox/cupynumeric-venv/bin/python", "tests/cupynumeric_ci/run_suite.py",
                *session.posargs, external=True)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """The benchmark suite (benchmarks/run.py); pass --quick for the smoke run."""
    session.run("python3", "-m", "venv", "--clear", ".nox/bench-venv", external=True)
    session.run(".nox/bench-venv/bin/pip", "install", "-q", TORCH, "-e", ".[torch,examples]",
                external=True)
    session.run(".nox/bench-venv/bin/python", "benchmarks/run.py", *session.posargs, external=True)
