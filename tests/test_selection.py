"""set_backend / get_backend / use_backend: identity, names, errors, nesting, threads, tasks, env."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

import tyxonq as tq
from conftest import make_backend
from tyxonq.numerics import ArrayBackend, BackendNotInstalledError, DeviceNotAvailableError

torch = pytest.importorskip("torch")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, timeout=120)


def test_set_backend_returns_the_active_instance_and_get_backend_is_stable():
    K = tq.set_backend("pytorch")
    assert K.name == "pytorch"
    assert tq.get_backend() is K
    assert tq.get_backend() is tq.get_backend()
    assert tq.set_backend("torch") is K  # alias, same shared instance
    assert tq.get_backend("numpy") is tq.get_backend("numpy")


@pytest.mark.parametrize("name", [n for n in tq.backend_names() if n != "cupynumeric"])
def test_backends_satisfy_the_protocol(name):
    """cuPyNumeric is covered by the conformance tests where it imports."""
    pytest.importorskip({"pytorch": "torch"}.get(name, name))
    assert isinstance(tq.get_backend(name), ArrayBackend)


@pytest.mark.parametrize("backend_id", ["numpy", "pytorch", "jax"])
def test_protocol_lists_every_required_operation(backend_id):
    required = """array asarray to_numpy zeros ones zeros_like ones_like eye arange linspace cast
    matmul einsum tensordot kron outer reshape moveaxis transpose stack concatenate sum mean norm
    diag where abs real imag conj square sign exp sin cos sqrt log log2 svd qr eigh eig solve inv
    expm rng normal uniform choice bincount nonzero requires_grad detach value_and_grad grad vmap
    jit complex64 complex128 float32 float64 int8 int32 int64 bool name capabilities""".split()
    backend = make_backend(backend_id)
    assert not [op for op in required if not hasattr(backend, op)]
    assert all(hasattr(ArrayBackend, op) or op in ArrayBackend.__annotations__ for op in required)


def test_options_make_a_new_configured_instance():
    K = tq.set_backend("numpy", dtype="complex64", seed=3)
    assert K is not tq.get_backend("numpy")
    assert K.precision == "complex64" and tq.get_backend() is K


def test_set_backend_accepts_an_instance_but_not_instance_plus_options():
    instance = tq.numerics.NumpyBackend(dtype="complex64")
    assert tq.set_backend(instance) is instance
    with pytest.raises(TypeError, match="options"):
        tq.set_backend(instance, dtype="complex128")


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="'numpy', 'pytorch', 'cupynumeric', 'jax'"):
        tq.set_backend("tensorflow")
    with pytest.raises(TypeError):
        tq.set_backend(42)


def test_bad_dtype_is_rejected():
    with pytest.raises(ValueError, match="complex128"):
        tq.set_backend("numpy", dtype="float16")


@pytest.mark.parametrize("module, backend, command", [
    ("torch", "pytorch", 'pip install "torch==2.13.0"'), ("jax", "jax", 'pip install "tyxonq[jax]"'),
])
def test_missing_library_raises_importerror_with_pip_command(module, backend, command):
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "import tyxonq as tq\n"
        f"try:\n    tq.set_backend({backend!r})\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, '|', e)\n"
    )
    result = run_python(code)
    assert "BackendNotInstalledError" in result.stdout, result.stderr
    assert command in result.stdout


def test_import_tyxonq_needs_only_numpy_and_opt_einsum():
    code = (
        "import sys\n"
        "for blocked in ('torch', 'cupynumeric', 'scipy', 'cotengra', 'jax'):\n"
        "    sys.modules[blocked] = None  # any import of these now raises ImportError\n"
        "import tyxonq as tq\n"
        "K = tq.get_backend()\n"
        "print(K.name, float(K.to_numpy(K.sum(K.ones(3)).real)))\n"
    )
    result = run_python(code, TYXONQ_BACKEND="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["numpy", "3.0"]


def test_cupynumeric_missing_or_driverless_gives_install_hint():
    try:
        import cupynumeric  # noqa: F401
    except ImportError:
        with pytest.raises(BackendNotInstalledError, match="pip install"):
            tq.set_backend("cupynumeric")
    else:
        pytest.skip("cupynumeric imports here; nothing is missing")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_without_cuda_is_a_clear_error(device):
    with pytest.raises(DeviceNotAvailableError, match="no CUDA"):
        tq.set_backend("pytorch", device=device)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_arrays_live_on_the_device():
    K = tq.set_backend("pytorch", device="cuda")
    assert K.zeros(2).device.type == "cuda"
    assert K.asarray([1.0]).device.type == "cuda"
    _, g = K.value_and_grad(lambda x: K.sum(x ** 2))(K.asarray([1.0, 2.0]))
    assert g.device.type == "cuda"
    with pytest.raises(DeviceNotAvailableError, match="CUDA device"):
        tq.set_backend("pytorch", device=f"cuda:{torch.cuda.device_count()}")


def test_garbage_device_is_a_value_error():
    with pytest.raises(ValueError, match="device"):
        tq.set_backend("pytorch", device="quantum-annealer")


def test_use_backend_nests_and_restores_even_on_error():
    outer = tq.set_backend("numpy")
    with tq.use_backend("pytorch") as inner:
        assert tq.get_backend() is inner
        with tq.use_backend("numpy", dtype="complex64") as innermost:
            assert tq.get_backend() is innermost
        assert tq.get_backend() is inner
    assert tq.get_backend() is outer
    with pytest.raises(RuntimeError, match="inside"):
        with tq.use_backend("pytorch"):
            raise RuntimeError("inside")
    assert tq.get_backend() is outer


@pytest.mark.parametrize("set_before", [False, True])
def test_set_backend_inside_use_backend_lasts_until_the_block_ends(set_before):
    """One rule whether or not set_backend was called before the block: leaving it restores the
    backend the thread had on entering it; the process default (new threads) keeps the new one."""
    from tyxonq.numerics.selection import ACTIVE_BACKEND

    if set_before:
        tq.set_backend("numpy")
    entered = tq.get_backend()
    with tq.use_backend("numpy", dtype="complex64"):
        chosen = tq.set_backend("pytorch")
        assert tq.get_backend() is chosen
    assert tq.get_backend() is entered
    seen = []
    thread = threading.Thread(target=lambda: seen.append(tq.get_backend()))
    thread.start()
    thread.join()
    assert seen == [chosen] and ACTIVE_BACKEND._process_default == [chosen]


def test_threads_do_not_see_each_others_use_backend():
    tq.set_backend("numpy")
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def switcher():
        with tq.use_backend("pytorch"):
            seen["switcher"] = tq.get_backend().name
            inside.set()
            checked.wait(10)

    def observer():
        inside.wait(10)
        seen["observer"] = tq.get_backend().name
        checked.set()

    threads = [threading.Thread(target=switcher), threading.Thread(target=observer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"switcher": "pytorch", "observer": "numpy"}
    assert tq.get_backend().name == "numpy"


def test_new_threads_see_the_process_default_from_set_backend():
    K = tq.set_backend("pytorch")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(tq.get_backend()))
    thread.start()
    thread.join(10)
    assert seen == [K]


def test_asyncio_tasks_do_not_see_each_others_use_backend():
    tq.set_backend("numpy")

    async def switcher(started: asyncio.Event, release: asyncio.Event) -> str:
        with tq.use_backend("pytorch"):
            started.set()
            await release.wait()
            return tq.get_backend().name

    async def observer(started: asyncio.Event, release: asyncio.Event) -> str:
        await started.wait()
        name = tq.get_backend().name
        release.set()
        return name

    async def main():
        started, release = asyncio.Event(), asyncio.Event()
        return await asyncio.gather(switcher(started, release), observer(started, release))

    assert asyncio.run(main()) == ["pytorch", "numpy"]


@pytest.mark.parametrize("value, expected", [("pytorch", "pytorch"), ("torch", "pytorch"),
                                             ("numpy", "numpy"), ("", "numpy")])
def test_environment_variable_sets_the_default(value, expected):
    result = run_python("import tyxonq as tq; print(tq.get_backend().name)", TYXONQ_BACKEND=value)
    assert result.stdout.strip() == expected, result.stderr


def test_invalid_environment_variable_is_named_in_the_error():
    result = run_python("import tyxonq as tq; tq.get_backend()", TYXONQ_BACKEND="tensorflow")
    assert "TYXONQ_BACKEND='tensorflow'" in result.stderr
    assert "valid names" in result.stderr


@pytest.mark.parametrize("chosen", [None, "tensorfloat32"])
def test_jax_products_are_full_precision_unless_the_program_chose(chosen):
    """JAX rounds float32/complex64 products to TF32 on recent NVIDIA GPUs by default (seen on an
    H200: complex64 matmuls off the 1e-5 bound): the jax backend asks for "highest", but keeps a
    precision the program set before."""
    pytest.importorskip("jax")
    choose = f"jax.config.update('jax_default_matmul_precision', {chosen!r})\n" if chosen else ""
    code = ("import jax\n" + choose + "import tyxonq as tq\n"
            "tq.set_backend('jax', dtype='complex64')\n"
            "print(jax.config.jax_default_matmul_precision, jax.config.jax_enable_x64)\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [chosen or "highest", "True"]
