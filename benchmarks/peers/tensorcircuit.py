"""tensorcircuit-ng on one backend (``numpy``, ``pytorch`` or ``jax``), complex128, with the
cotengra contractor (``set_contractor("custom", optimizer=ReusableHyperOptimizer,
preprocessing=True)``, the ``"cotengra"`` preset of tensorcircuit without a process pool).

- statevector, brickwork (``amplitude`` and ``expectation_ps(z=..., enable_lightcone=True)``) and
  shallow_amplitude: contracted by that contractor; on jax the whole function of the angles is
  ``K.jit``-compiled, elsewhere the circuit is built once (like tyxonq's).
- energies: ``operator_expectation`` with the Hamiltonian as a sparse matrix
  (``PauliStringSum2COO``), as tensorcircuit's VQE tutorials do.
- light-cone rows (100-node QAOA energies, with and without gradient; the 50-qubit TFIM brickwork
  energy with gradient): the sum over the Hamiltonian's terms of ``c * expectation_ps(x=..., z=...,
  enable_lightcone=True)``, each term its own network; the optimizer searches 16 repeats per
  network instead of 64 (:data:`peers.common.LIGHT_CONE_REPEATS`). The energies alone run on every
  backend (the circuit built once; on jax the function of the angles jitted).
- gradients: ``K.value_and_grad`` (``K.jit`` on jax; on pytorch tensorcircuit's ``jit`` is a no-op);
  numpy has no autodiff: n/a. Adam: ``torch.optim.Adam`` on pytorch, the shared update inside one
  jitted step on jax. The 64 energies: ``K.vmap`` (``K.jit`` on jax; a loop on numpy).

- noisy rows: a ``tc.DMCircuit`` with ``depolarizing(q, px=p/3, py=p/3, pz=p/3)`` after every gate
  on each of its qubits (tensorcircuit's Kraus operators ``sqrt(1 - px - py - pz) I, sqrt(px) X,
  sqrt(py) Y, sqrt(pz) Z``: our p split evenly). The energy is ``Σ c expectation_ps(...)`` over the
  TFIM terms with ``reuse=True``: the density matrix is contracted once per call and each term
  contracted against it (its ``operator_expectation`` takes a pure state's vector; a DMCircuit's
  ``wavefunction`` refuses a mixed state); the circuit is built inside the timed call, because
  ``reuse`` caches that density matrix on the circuit. The gradient by ``K.value_and_grad`` on jax
  (jitted), by ``backward`` on pytorch (``K.value_and_grad`` there is ``torch.func``, under which
  tensornetwork's trace of that expectation network fails), n/a on numpy. The density matrix by
  ``densitymatrix()``; the 40-qubit brickwork's <Z> by ``expectation_ps(z=[mid], reuse=False)``,
  one contraction of the whole doubled network (DMCircuit has no light-cone option; cotengra's
  search sees the traced-out qubits). On jax every noisy row is a jitted function of the angles.
  Outside jit that <Z> searches a new contraction path on every call: tensorcircuit-ng 1.10
  contracts the network's self-loops (a qubit's ket and bra legs traced on the same channel node)
  first, in set order, so the node order and cotengra's cache key change from call to call; each
  timed repetition on numpy and pytorch includes that search (up to 30 s, 64 repeats).

- MPS rows: a ``tc.MPSCircuit(n, split=...)`` built inside the timed call (its gates are applied
  as they are added), on every backend for the brickwork and the quench, on pytorch and jax for
  the energy gradient (``K.value_and_grad``; numpy: n/a). Split rules: ``max_singular_values =
  max_bond`` and ``max_truncation_err = 1e-6``: tensorcircuit drops the smallest singular values
  while their norm (the square root of their summed squares) is at most that, an absolute bound on
  a state it never renormalises, so a discarded weight of 1e-12 of a squared norm at most 1 (its
  ``relative`` option scales by the largest singular value instead). On jax under ``K.jit`` the
  cap alone: the number a cutoff keeps is a traced value there (tensorcircuit-ng 1.10's split
  fails with a TracerBoolConversionError), so every bond keeps its full rank up to the cap, zero
  singular values included (its SVD derivative regularises their denominators by 1e-15: the
  10-qubit gradient is 1e-9 off the exact one there, 1e-13 on pytorch). Values:
  ``expectation((gate, [q]), ..., normalize=True)`` (divided by the squared norm), the
  brickwork's samples by ``sample(batch=shots, status=...)`` with the uniforms drawn from
  ``numpy.random.default_rng(SEED)``, from the same state; on jax by ``K.vmap`` of
  ``measure(*range(n), status=...)``, the function ``sample`` loops over (jitting that Python loop
  would unroll shots x n measurement steps). The whole row is ``K.jit``-compiled on jax.
  ``truncation_error``: ``1 - circuit._fidelity`` (a private attribute, no public accessor: the
  product over splits of 1 - the discarded singular values' summed squares). As the state is not
  renormalised, those are weights of a shrinking state, so under heavy truncation it reads lower
  than 1 - ||psi||^2 (quimb's estimate): 0.241 against 0.273 for the 12-qubit brickwork capped
  at 8.

tensorcircuit's qubit 0 is the most significant bit and its ``rx/ry/rz/rzz`` are ``exp(-iθP/2)``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from adam import adam_update
from specs import ENERGY_ONLY, GRADIENTS, LIGHT_CONE, MPS, NOISY, SAMPLING, SEED, Spec

from peers.common import cotengra_optimizer, pauli_terms, repeats_for

GRADIENT_WORKLOADS = GRADIENTS + ("adam_vqe_100",)
CONTRACTIONS = ("statevector", "brickwork_local", "shallow_amplitude") + ENERGY_ONLY
SUPPORTED = CONTRACTIONS + ("batched_energies_64",) + GRADIENT_WORKLOADS + NOISY + MPS
_PAULI_CODE = {"I": 0, "X": 1, "Y": 2, "Z": 3}


def supports(workload: str, backend: str | None) -> bool:
    if workload in GRADIENT_WORKLOADS:
        return backend in ("pytorch", "jax")
    return workload in SUPPORTED


def _setup(backend: str, repeats: int) -> Any:
    import tensorcircuit as tc

    K = tc.set_backend(backend)
    tc.set_dtype("complex128")
    tc.set_contractor("custom", optimizer=cotengra_optimizer(repeats), preprocessing=True)
    return K


def _circuit(spec: Spec, params: Any) -> Any:
    """The spec's circuit on the angles ``params`` (a backend tensor or array)."""
    import tensorcircuit as tc

    return _apply_gates(spec, tc.Circuit(spec.n), params)


def _apply_gates(spec: Spec, circuit: Any, params: Any) -> Any:
    """``circuit`` (a ``Circuit`` or ``MPSCircuit``) with the spec's gates on the angles ``params``."""
    for gate in spec.gates:
        if gate.param is None:
            getattr(circuit, gate.name)(*gate.qubits)
        else:
            getattr(circuit, gate.name)(*gate.qubits, theta=gate.scale * params[gate.param])
    return circuit


def _noisy_circuit(spec: Spec, params: Any) -> Any:
    """The spec's gates on a ``tc.DMCircuit``, each followed by the depolarising channel (our p as
    ``px = py = pz = p/3``) on each of its qubits."""
    import tensorcircuit as tc

    # a float64 tensor: tensorcircuit turns a Python float into the backend's default dtype first
    # (float32 on pytorch: Kraus operators good to 1e-8 only)
    circuit, share = tc.DMCircuit(spec.n), tc.backend.convert_to_tensor(np.array(spec.noise / 3))
    for gate in spec.gates:
        if gate.param is None:
            getattr(circuit, gate.name)(*gate.qubits)
        else:
            getattr(circuit, gate.name)(*gate.qubits, theta=gate.scale * params[gate.param])
        for q in gate.qubits:
            circuit.depolarizing(q, px=share, py=share, pz=share)
    return circuit


def _torch_value_and_grad(energy: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Value and gradient by torch's reverse mode (``backward``): ``K.value_and_grad`` on pytorch
    is ``torch.func``, under which tensornetwork's trace of a DMCircuit's expectation network
    fails (it makes a NumPy array of shape tensors, which have no storage there)."""

    def value_and_grad(params: Any) -> tuple[Any, Any]:
        angles = params.detach().clone().requires_grad_(True)
        value = energy(angles)
        value.backward()
        return value.detach(), angles.grad

    return value_and_grad


def _noisy(spec: Spec, K: Any, params: Any, jit: bool) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """The noisy rows: energy (with gradient), density matrix, local <Z>."""
    numpy = K.numpy

    def energy(angles: Any) -> Any:
        circuit, total = _noisy_circuit(spec, angles), 0.0
        for coefficient, letters, qubits in pauli_terms(spec):
            acting = {a: [q for q, letter in zip(qubits, letters) if letter.lower() == a] for a in "xyz"}
            total = total + coefficient * K.real(circuit.expectation_ps(**acting, reuse=True))
        return total

    if spec.workload == "noisy_energy_gradient":
        function = _torch_value_and_grad(energy) if K.name == "pytorch" else K.value_and_grad(energy)
        convert = lambda r: (float(numpy(r[0])), numpy(r[1]))  # noqa: E731
    elif spec.workload == "noisy_energy":
        function, convert = energy, lambda r: float(np.real(numpy(r)))
    elif spec.workload == "noisy_density_matrix":
        function, convert = (lambda angles: _noisy_circuit(spec, angles).densitymatrix()), numpy
    else:
        function = lambda angles: K.real(_noisy_circuit(spec, angles).expectation_ps(  # noqa: E731
            z=[spec.observed], reuse=False))
        convert = lambda r: float(np.real(numpy(r)))  # noqa: E731
    function = _blocking(K.jit(function)) if jit else function
    return (lambda: function(params)), convert


def _mps_circuit(spec: Spec, params: Any, jit: bool) -> Any:
    """The spec's gates on a ``tc.MPSCircuit``: at most ``max_bond`` singular values kept, and
    (outside jit) the smallest dropped while their norm stays within 1e-6 (weight 1e-12)."""
    import tensorcircuit as tc

    split = {"max_singular_values": spec.max_bond}
    if not jit:  # a cutoff needs a concrete number of kept values
        split["max_truncation_err"] = 1e-6
    return _apply_gates(spec, tc.MPSCircuit(spec.n, split=split), params)


def _mps_expectation(circuit: Any, letters: str, qubits: tuple[int, ...]) -> Any:
    """``<P>`` of the Pauli ``letters`` on ``qubits``, divided by the state's squared norm."""
    import tensorcircuit as tc

    ops = [(getattr(tc.gates, letter.lower())(), [q]) for letter, q in zip(letters, qubits)]
    return tc.backend.real(circuit.expectation(*ops, normalize=True))


def _mps_error(circuit: Any) -> Any:
    """``1 - _fidelity``: one minus the product over splits of the kept weight."""
    import tensorcircuit as tc

    return 1 - tc.backend.convert_to_tensor(circuit._fidelity)


def _mps(spec: Spec, K: Any, params: Any, jit: bool) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """The MPS rows: the brickwork's <Z> and samples, the quench's magnetisation, the ansatz's
    energy and gradient; each with its truncation error."""
    numpy = K.numpy
    if spec.workload in ("mps_brickwork", *SAMPLING):
        status = K.convert_to_tensor(np.random.default_rng(SEED).random((spec.shots, spec.n)))

        def brickwork(angles: Any, status: Any) -> tuple[Any, Any, Any]:
            circuit = _mps_circuit(spec, angles, jit)
            z = _mps_expectation(circuit, "Z", (spec.observed,))
            if jit:
                samples = K.vmap(lambda row: circuit.measure(*range(spec.n), status=row)[0])(status)
            else:
                samples = circuit.sample(batch=spec.shots, status=status)
            return z, samples, _mps_error(circuit)

        function = _blocking(K.jit(brickwork)) if jit else brickwork
        return (lambda: function(params, status)), lambda r: {
            "z": float(numpy(r[0])), "sampled_z": float(np.mean(1 - 2 * numpy(r[1])[:, spec.observed])),
            "truncation_error": float(numpy(r[2]))}
    if spec.workload == "mps_quench":
        def quench(angles: Any) -> tuple[Any, Any]:
            circuit = _mps_circuit(spec, angles, jit)
            total = sum(_mps_expectation(circuit, "Z", (q,)) for q in range(spec.n))
            return total / spec.n, _mps_error(circuit)

        function = _blocking(K.jit(quench)) if jit else quench
        return (lambda: function(params)), lambda r: {
            "magnetisation": float(numpy(r[0])), "truncation_error": float(numpy(r[1]))}

    def energy(angles: Any) -> tuple[Any, Any]:
        circuit = _mps_circuit(spec, angles, jit)
        return sum(c * _mps_expectation(circuit, letters, qubits)
                   for c, letters, qubits in pauli_terms(spec)), _mps_error(circuit)

    value_and_grad = K.value_and_grad(energy, has_aux=True)
    value_and_grad = _blocking(K.jit(value_and_grad)) if jit else value_and_grad
    return (lambda: value_and_grad(params)), lambda r: {
        "energy": float(numpy(r[0][0])), "gradient": numpy(r[1]), "truncation_error": float(numpy(r[0][1]))}


def _light_cone_sum(spec: Spec, circuit: Any) -> Any:
    """``Σ c <P>`` over the Hamiltonian's terms, each ``expectation_ps`` on its light cone."""
    import tensorcircuit as tc

    K = tc.backend
    total = 0.0
    for coefficient, letters, qubits in pauli_terms(spec):
        acting = {axis: [q for q, letter in zip(qubits, letters) if letter.lower() == axis] for axis in "xyz"}
        total = total + coefficient * K.real(circuit.expectation_ps(**acting, enable_lightcone=True))
    return total


def _contract(spec: Spec, circuit: Any) -> Any:
    """The result of a contraction workload (state, amplitude and <Z>, amplitude, or energy)."""
    if spec.workload == "statevector":
        return circuit.state()
    if spec.workload in ENERGY_ONLY:
        return _light_cone_sum(spec, circuit)
    amplitude = circuit.amplitude("0" * spec.n)
    if spec.workload == "shallow_amplitude":
        return amplitude
    return amplitude, circuit.expectation_ps(z=[spec.observed], enable_lightcone=True)


def _energy(spec: Spec, K: Any) -> Callable[[Any], Any]:
    import tensorcircuit as tc

    structures = [[_PAULI_CODE[letter] for letter in pauli] for _, pauli in spec.hamiltonian]
    with tc.runtime_backend("numpy"):  # on pytorch, PauliStringSum2COO fails (tensorcircuit-ng 1.10)
        matrix = tc.quantum.PauliStringSum2COO(structures, [c for c, _ in spec.hamiltonian]).tocoo()
    hamiltonian = K.coo_sparse_matrix(np.stack([matrix.row, matrix.col], 1), matrix.data, matrix.shape)

    def energy(params: Any) -> Any:
        return K.real(tc.templates.measurements.operator_expectation(_circuit(spec, params), hamiltonian))

    return energy


def _adam(spec: Spec, K: Any, energy: Callable, backend: str) -> Callable[[], Any]:
    """``spec.steps`` Adam steps; returns the last evaluated point and its energy."""
    if backend == "pytorch":
        import torch

        def torch_run() -> tuple[np.ndarray, float]:
            params = torch.tensor(spec.params, dtype=torch.float64, requires_grad=True)
            optimizer = torch.optim.Adam([params], lr=spec.learning_rate)
            for _ in range(spec.steps):
                point = params.detach().clone()
                optimizer.zero_grad()
                value = energy(params)
                value.backward()
                optimizer.step()
            return point.numpy(), float(value.detach())

        return torch_run
    import jax.numpy as jnp

    value_and_grad = K.value_and_grad(energy)

    @K.jit
    def step(x: Any, first: Any, second: Any, count: Any) -> tuple[Any, ...]:
        value, gradient = value_and_grad(x)
        return (*adam_update(x, gradient, first, second, count, spec.learning_rate, xp=jnp), value)

    def jax_run() -> tuple[np.ndarray, float]:
        x = jnp.asarray(spec.params)
        first, second = jnp.zeros_like(x), jnp.zeros_like(x)
        for count in range(1, spec.steps + 1):
            point = x
            x, first, second, value = step(x, first, second, jnp.asarray(count, dtype=jnp.float64))
        return np.asarray(point), float(value)

    return jax_run


def _blocking(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` that waits for jax's asynchronous results (so their time is measured)."""
    import jax

    return lambda *args: jax.block_until_ready(function(*args))


def build(spec: Spec, backend: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    K = _setup(backend, repeats_for(spec))
    numpy = K.numpy
    jit = backend == "jax"
    params = K.convert_to_tensor(spec.params)
    if spec.workload in NOISY:
        return _noisy(spec, K, params, jit)
    if spec.workload in MPS:
        return _mps(spec, K, params, jit)
    if spec.workload in CONTRACTIONS:
        if jit:  # the whole function of the angles, compiled
            compiled = _blocking(K.jit(lambda angles: _contract(spec, _circuit(spec, angles))))
            run = lambda: compiled(params)  # noqa: E731
        else:  # the circuit built once, like tyxonq's
            circuit = _circuit(spec, params)
            run = lambda: _contract(spec, circuit)  # noqa: E731
        if spec.workload == "brickwork_local":
            return run, lambda r: (complex(numpy(r[0])), float(np.real(numpy(r[1]))))
        if spec.workload in ENERGY_ONLY:
            return run, lambda r: float(np.real(numpy(r)))
        return run, (numpy if spec.workload == "statevector" else lambda r: complex(numpy(r)))
    if spec.workload in LIGHT_CONE:
        energy = lambda angles: _light_cone_sum(spec, _circuit(spec, angles))  # noqa: E731
    else:
        energy = _energy(spec, K)
    if spec.workload == "batched_energies_64":
        batched = K.vmap(energy)
        batched = _blocking(K.jit(batched)) if jit else batched
        return (lambda: batched(params)), numpy
    if spec.workload in GRADIENTS:
        value_and_grad = K.value_and_grad(energy)
        value_and_grad = _blocking(K.jit(value_and_grad)) if jit else value_and_grad
        return (lambda: value_and_grad(params)), lambda r: (float(numpy(r[0])), numpy(r[1]))
    if spec.workload == "adam_vqe_100":
        return _adam(spec, K, energy, backend), lambda r: r
    raise ValueError(f"tensorcircuit has no workload {spec.workload!r}")
