"""Build the docs: the user guide (Markdown -> HTML) and the API reference (pdoc, from docstrings).

    python docs-ng/build.py [output folder, default docs-ng/_build]

Any warning (a broken docstring reference, an unresolvable name) fails the build.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import warnings

HERE = pathlib.Path(__file__).resolve().parent
#: the package, and the integrations it does not import itself (they need Qiskit and PennyLane)
API_MODULES = ("tyxonq", "tyxonq.qiskit", "tyxonq.pennylane")
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title} - tyxonq</title>
<style>body{{max-width:52rem;margin:2rem auto;font-family:sans-serif;line-height:1.5}}
code,pre{{background:#f4f4f4}}pre{{padding:.6rem;overflow:auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2rem .5rem}}</style></head><body>{body}
<p><a href="index.html">guide</a> · <a href="api/tyxonq.html">API reference</a></p></body></html>"""


def build_guide(output: pathlib.Path) -> None:
    import markdown

    output.mkdir(parents=True, exist_ok=True)
    for page in sorted(HERE.glob("*.md")):
        text = page.read_text().replace(".md)", ".html)")
        body = markdown.markdown(text, extensions=["tables", "fenced_code"])
        title = text.splitlines()[0].lstrip("# ")
        (output / f"{page.stem}.html").write_text(PAGE.format(title=title, body=body))
    if (HERE / "images").is_dir():  # the figures the pages show
        shutil.copytree(HERE / "images", output / "images", dirs_exist_ok=True)


def build_api(output: pathlib.Path) -> None:
    # PDOC_ALLOW_EXEC: importing PennyLane imports h5py where PySCF installed it (the chem and
    # test extras), and h5py runs ``uname -p`` at import, which pdoc otherwise refuses
    environment = dict(os.environ, PDOC_ALLOW_EXEC="1")
    subprocess.run([sys.executable, "-W", "error", "-m", "pdoc", "--docformat", "numpy", "-o",
                    str(output / "api"), *API_MODULES], check=True, env=environment)


def main() -> int:
    output = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "_build"
    warnings.simplefilter("error")
    build_guide(output)
    build_api(output)
    print(f"docs built in {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
