"""List and run the scripts in ``examples-ng/``: ``python -m tyxonq.examples list | run NAME``.

Examples
--------
>>> names = [path.stem for path in example_scripts()]
>>> "vqe_tfim" in names
True
"""

from __future__ import annotations

import argparse
import os
import pathlib
import runpy
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["examples_directory", "example_scripts", "main", "save_figure"]

_NO_MATPLOTLIB = "matplotlib not installed (pip install 'tyxonq[examples]'): no plot"


def examples_directory() -> pathlib.Path:
    """The ``examples-ng`` folder: ``TYXONQ_EXAMPLES``, the source checkout, or the current one."""
    candidates = [os.environ.get("TYXONQ_EXAMPLES", "")]
    candidates += [str(parent / "examples-ng") for parent in pathlib.Path(__file__).resolve().parents]
    candidates.append(str(pathlib.Path.cwd() / "examples-ng"))
    for candidate in candidates:
        if candidate and pathlib.Path(candidate).is_dir():
            return pathlib.Path(candidate)
    raise FileNotFoundError(
        "examples-ng/ not found: run from a source checkout of tyxonq, or set TYXONQ_EXAMPLES to "
        "the folder"
    )


def example_scripts() -> list[pathlib.Path]:
    return sorted(examples_directory().glob("*.py"))


def save_figure(path: str, draw: Callable[[Any], object], *, columns: int = 1,
                figsize: tuple[float, float] = (6, 4), saved: str = "plot saved to {path}",
                missing: str = _NO_MATPLOTLIB) -> str:
    """Draw a figure and save it to ``path`` at 120 dpi, for the examples' plots.

    matplotlib is imported here, with the ``Agg`` backend, never by ``import tyxonq``.

    Parameters
    ----------
    path
        The image file to write; its suffix picks the format.
    draw
        Called once with the axis (``columns == 1``) or the row of axes (``columns > 1``); the
        figure is ``axis.figure``.
    columns
        How many axes side by side.
    figsize
        The figure's size in inches.
    saved
        The message when saved; ``{path}`` is replaced by ``path``.
    missing
        The message when matplotlib is not installed (then nothing is drawn or written).

    Returns
    -------
    str
        ``saved`` or ``missing``, for the example to print.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "line.png")
    >>> message = save_figure(path, lambda axis: axis.plot([0, 1], [1, 0]))
    >>> message in (f"plot saved to {path}", _NO_MATPLOTLIB)
    True
    >>> os.path.exists(path) == (message != _NO_MATPLOTLIB)
    True
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return missing
    figure, axes = plt.subplots(1, columns, figsize=figsize)
    try:
        draw(axes)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)
    return saved.format(path=path)


def _summary(path: pathlib.Path) -> str:
    text = path.read_text()
    start = text.find('"""')
    return text[start + 3:].split("\n", 1)[0].strip() if start >= 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tyxonq.examples", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the examples")
    run = commands.add_parser("run", help="run one example; further arguments go to it")
    run.add_argument("name")
    run.add_argument("arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    scripts = {path.stem: path for path in example_scripts()}
    if args.command == "list":
        width = max(map(len, scripts))
        for name, path in scripts.items():
            print(f"{name:<{width}}  {_summary(path)}")
        return 0
    if args.name not in scripts:
        print(f"unknown example {args.name!r}; choose from: {', '.join(scripts)}", file=sys.stderr)
        return 2
    sys.argv = [str(scripts[args.name]), *args.arguments]
    try:
        runpy.run_path(str(scripts[args.name]), run_name="__main__")
    except SystemExit as finished:
        return int(finished.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
