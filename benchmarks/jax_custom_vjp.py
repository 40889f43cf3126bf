"""A measurement behind a design choice: on JAX, an expectation value as a ``jax.custom_vjp``
node whose forward and backward are tyxonq's NumPy adjoint sweep (through ``jax.pure_callback``,
under ``jax.jit``), against JAX's plain autodiff compiled, on the ``energy_gradient`` rows.

    python benchmarks/jax_custom_vjp.py

Measured on 2 cores (stop 22 of issue 15): 8 qubits 2.54 vs 0.33 ms, 12 qubits 5.32 vs 0.89 ms,
16 qubits 40.6 vs 8.95 ms: XLA's compiled reverse pass is faster, so JAX keeps plain autodiff.
"""

import pathlib
import sys
import timeit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import tyxonq_engine as te  # noqa: E402
from specs import make_spec  # noqa: E402

import tyxonq as tq  # noqa: E402


def host_node(energy_fn, size: int):
    """The energy as a ``jax.custom_vjp`` whose value and gradient come from the NumPy adjoint."""
    numpy_backend = tq.get_backend("numpy")
    host_value_and_grad = tq.value_and_grad(energy_fn, backend=numpy_backend)

    def host(params):
        with tq.use_backend(numpy_backend):
            value, gradient = host_value_and_grad(np.asarray(params))
        return np.float64(value), np.asarray(gradient, dtype=np.float64)

    shapes = (jax.ShapeDtypeStruct((), jnp.float64), jax.ShapeDtypeStruct((size,), jnp.float64))

    @jax.custom_vjp
    def energy(params):
        return jax.pure_callback(host, shapes, params)[0]

    def forward(params):
        return jax.pure_callback(host, shapes, params)

    def backward(gradient, cotangent):
        return (cotangent * gradient,)

    energy.defvjp(forward, backward)
    return energy


def seconds(function, params) -> float:
    jax.block_until_ready(function(params))
    return min(timeit.repeat(lambda: jax.block_until_ready(function(params)), number=20, repeat=5)) / 20


def main() -> None:
    for n in (8, 12, 16):
        spec = make_spec("energy_gradient", n)
        energy_fn = te._energy(spec)
        tq.set_backend("jax")
        params = jnp.asarray(spec.params)
        node = jax.jit(jax.value_and_grad(host_node(energy_fn, len(spec.params))))
        plain = jax.jit(jax.value_and_grad(energy_fn))
        (a, da), (b, db) = node(params), plain(params)
        assert abs(float(a) - float(b)) < 1e-10 and np.allclose(da, db, atol=1e-10)
        print(f"n={n}: custom_vjp (host adjoint) {seconds(node, params) * 1e3:.2f} ms | "
              f"plain autodiff {seconds(plain, params) * 1e3:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
