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

__all__ = ["examples_directory", "example_scripts", "main"]


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
