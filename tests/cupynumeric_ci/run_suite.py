"""Run the test suite with cuPyNumeric importable, on a GPU host or, via a stand-in driver, a CPU one.

    python tests/cupynumeric_ci/run_suite.py [pytest arguments]

Without arguments it runs the suite's cuPyNumeric cases (:data:`CUPYNUMERIC_CASES`). If
``import cupynumeric`` works as installed (a machine with an NVIDIA driver), they run as is. If
it fails for want of ``libcuda.so.1`` (a machine without a GPU driver), this builds
``stub_libcuda.c`` -- a test-only stand-in that reports "no CUDA device", exactly what the real
driver reports on a GPU-less host -- with the machine's C compiler into ``.nox/stub-driver/``,
and runs them with it on ``LD_LIBRARY_PATH`` and Legate configured for one CPU. The
stand-in is never installed or shipped. Any other import failure is reported, not skipped.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LEGATE_CPU_CONFIG = "--cpus 1 --gpus 0 --omps 0 --utility 1 --sysmem 4000"
#: the cases this session runs: those of the real cuPyNumeric (every test parametrised over the
#: ``cupynumeric`` backend, and the tests named for it). The rest of the suite runs on NumPy,
#: PyTorch, JAX and the ``cupynumeric-logic`` stand-in whether or not cuPyNumeric imports, so here
#: it would only repeat the main suite's run (the whole suite again took past half an hour of CI)
CUPYNUMERIC_CASES = "cupynumeric and not cupynumeric-logic"


def cupynumeric_import_error(environment: dict[str, str]) -> str | None:
    probe = subprocess.run([sys.executable, "-c", "import cupynumeric"], env=environment,
                           capture_output=True, text=True, timeout=300)
    return None if probe.returncode == 0 else (probe.stderr.strip().splitlines() or ["?"])[-1]


def build_stand_in_driver() -> pathlib.Path:
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        raise SystemExit("cuPyNumeric needs libcuda.so.1 here and no C compiler is available to "
                         "build the stand-in driver: install gcc")
    folder = ROOT / ".nox" / "stub-driver"
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-Wl,-soname,libcuda.so.1", "-o",
                    str(folder / "libcuda.so.1"), str(HERE / "stub_libcuda.c"), "-ldl"], check=True)
    return folder


def main() -> int:
    environment = dict(os.environ)
    failure = cupynumeric_import_error(environment)
    if failure is not None:
        if "libcuda" not in failure:
            print(f"import cupynumeric failed for a reason the stand-in driver cannot fix: {failure}")
            return 1
        folder = build_stand_in_driver()
        environment["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(folder), environment.get("LD_LIBRARY_PATH", "")) if p)
        environment.setdefault("LEGATE_AUTO_CONFIG", "0")
        environment.setdefault("LEGATE_CONFIG", LEGATE_CPU_CONFIG)
        failure = cupynumeric_import_error(environment)
        if failure is not None:
            print(f"import cupynumeric failed even with the stand-in driver: {failure}")
            return 1
        print(f"cuPyNumeric runs on CPU with the stand-in driver in {folder} ({LEGATE_CPU_CONFIG})")
    arguments = sys.argv[1:] or ["-q", "-p", "no:cacheprovider", "-k", CUPYNUMERIC_CASES]
    return subprocess.call([sys.executable, "-m", "pytest", *arguments], env=environment, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
