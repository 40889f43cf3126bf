"""tyxonq on one backend (``numpy``, ``pytorch`` or ``jax``): every workload, built from its spec
through the public API the way a user writes it (``tq.templates``, ``tq.hamiltonians``,
``tq.value_and_grad``, ``tq.optimize.minimize``, ``tq.vectorize_or_fallback``). On ``jax`` the
timed function of the parameters is wrapped in ``K.jit`` (``minimize`` compiles by itself), and the
timing waits for JAX's asynchronous results. Results at fixed angles (states, amplitudes, the
100-node QAOA energies) come from a circuit built once, outside the timed call, elsewhere.

``build(spec, backend)`` returns ``(run, canonical)``: ``run()`` is the timed work, ``canonical``
turns its result into the reference's form (untimed).
"""

from __future__ import annotations

from typing import Any, Callable

from specs import ANSATZ_ROTATIONS, ENERGY_ONLY, GRADIENTS, MPS, NOISY, SAMPLING, SEED, Spec, z_means
from specs import WORKLOADS as SUITE

WORKLOADS = (*SUITE, "shallow_amplitude")


def supports(workload: str, backend: str | None) -> bool:
    return workload in WORKLOADS


def _qaoa(spec: Spec) -> tuple[Callable[[Any], Any], Any]:
    """The QAOA circuit of the angles ``[γ_0..γ_{p-1}, β_0..β_{p-1}]`` and the MaxCut Hamiltonian."""
    import networkx as nx

    import tyxonq as tq

    graph = nx.Graph()
    graph.add_nodes_from(range(spec.n))
    graph.add_weighted_edges_from(spec.edges)
    p = spec.layers
    return (lambda params: tq.templates.qaoa(graph, params[:p], params[p:])), tq.hamiltonians.maxcut(graph)


def noisy_circuit(spec: Spec, params: Any) -> Any:
    """The spec's gates on a ``tq.DMCircuit``, each followed by ``depolarizing(q, p=spec.noise)``
    on each of its qubits (in its qubit order)."""
    import tyxonq as tq

    circuit = tq.DMCircuit(spec.n)
    for gate in spec.gates:
        if gate.param is None:
            getattr(circuit, gate.name)(*gate.qubits)
        else:
            getattr(circuit, gate.name)(*gate.qubits, theta=gate.scale * params[gate.param])
        for q in gate.qubits:
            circuit.depolarizing(q, p=spec.noise)
    return circuit


def gate_circuit(spec: Spec) -> Any:
    """The spec's fixed gates (no angles) on a ``tq.Circuit``."""
    import tyxonq as tq

    circuit = tq.Circuit(spec.n)
    for gate in spec.gates:
        getattr(circuit, gate.name)(*gate.qubits)
    return circuit


def ansatz(spec: Spec) -> tuple[Callable[[Any], Any], Any]:
    """The circuit as a function of the angles and the Hamiltonian of an energy workload: the TFIM
    ansatz, QAOA, or the TFIM brickwork (whose ``expectation`` contracts term by term on light cones
    above 20 qubits, as it does for the 100-node QAOA); for the noisy rows the noisy DMCircuit
    (:func:`noisy_circuit`) and the TFIM."""
    import tyxonq as tq

    if spec.workload in NOISY:
        return (lambda params: noisy_circuit(spec, params)), tq.hamiltonians.tfim(spec.n)
    if spec.workload in ("energy_gradient", "adam_vqe_100", "batched_energies_64"):
        return (lambda params: tq.templates.hardware_efficient(spec.n, params, spec.layers, ANSATZ_ROTATIONS),
                tq.hamiltonians.tfim(spec.n))
    if spec.workload == "tfim_brickwork_gradient":
        return (lambda params: tq.templates.brickwork(spec.n, params, spec.layers),
                tq.hamiltonians.tfim(spec.n))
    return _qaoa(spec)


def mps_circuit(spec: Spec, params: Any) -> Any:
    """The spec's gates on a ``tq.MPSCircuit`` capped at ``spec.max_bond`` (cutoff 1e-12)."""
    import tyxonq as tq

    circuit = tq.MPSCircuit(spec.n, max_bond=spec.max_bond)
    for gate in spec.gates:
        if gate.param is None:
            getattr(circuit, gate.name)(*gate.qubits)
        else:
            getattr(circuit, gate.name)(*gate.qubits, theta=gate.scale * params[gate.param])
    return circuit


def _mps_row(spec: Spec, K: Any) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """The MPS rows, simulated inside the timed call (the circuit caches its state): the wide
    circuit's exact samples through ``tq.Circuit.sample`` (its automatic method), the brickwork's
    ``<Z>`` and samples, the quench's magnetisation (eagerly on every backend: samples and
    truncation read values), the ansatz's energy and gradient (``K.jit`` on JAX)."""
    import numpy as np

    import tyxonq as tq

    def report(circuit: Any) -> float:
        return float(K.to_numpy(circuit.truncation_error()))

    if spec.workload in SAMPLING:  # tq.Circuit: exact samples past the state vector
        def wide() -> Any:
            circuit = tq.Circuit(spec.n)
            for gate in spec.gates:
                angles = () if gate.param is None else (gate.scale * spec.params[gate.param],)
                getattr(circuit, gate.name)(*gate.qubits, *angles)
            z = circuit.expectation_ps(z=[spec.observed])
            bits = circuit.sample(spec.shots, seed=SEED, format="bitstrings")
            sampled = np.mean([1 - 2 * int(row[spec.observed]) for row in bits])
            return {"z": float(K.to_numpy(z)), "sampled_z": float(sampled), "truncation_error": 0.0}

        return wide, lambda r: r

    if spec.workload == "mps_brickwork":
        def brickwork() -> Any:
            circuit = mps_circuit(spec, spec.params)
            z = circuit.expectation_ps(z=[spec.observed])
            indices = K.to_numpy(circuit.sample(spec.shots, seed=SEED, format="indices"))
            bits = (indices >> (spec.n - 1 - spec.observed)) & 1
            return {"z": float(K.to_numpy(z)), "sampled_z": float(np.mean(1 - 2 * bits)),
                    "truncation_error": report(circuit)}

        return brickwork, lambda r: r
    if spec.workload == "mps_quench":
        strings = ["I" * q + "Z" + "I" * (spec.n - q - 1) for q in range(spec.n)]

        def quench() -> Any:
            circuit = mps_circuit(spec, spec.params)
            value = circuit.pauli_expectations(strings, [1.0 / spec.n] * spec.n)
            return {"magnetisation": float(K.to_numpy(value)), "truncation_error": report(circuit)}

        return quench, lambda r: r
    hamiltonian = tq.hamiltonians.tfim(spec.n)
    value_and_grad = _compiler(K)(tq.value_and_grad(
        lambda params: mps_circuit(spec, params).expectation(hamiltonian)))
    params = K.asarray(spec.params)
    return (lambda: value_and_grad(params)), (lambda r: {
        "energy": float(K.to_numpy(r[0])), "gradient": K.to_numpy(r[1]), "truncation_error": None})


def _energy(spec: Spec) -> Callable[[Any], Any]:
    """The energy as a function of the angles."""
    make, hamiltonian = ansatz(spec)
    return lambda params: make(params).expectation(hamiltonian)


def _compiler(K: Any) -> Callable[[Callable], Callable]:
    """``K.jit`` plus waiting for the result on JAX; elsewhere the function itself (their jit is
    none, or torch.compile, which is slower than eager for complex code on the CPU)."""
    if K.name != "jax":
        return lambda function: function
    import jax

    def compile_and_wait(function: Callable) -> Callable:
        compiled = K.jit(function)
        return lambda *args: jax.block_until_ready(compiled(*args))

    return compile_and_wait


def _fixed_circuit(K: Any, compiled: Callable, make: Callable[[Any], Any],
                   evaluate: Callable[[Any], Any], params: Any) -> Callable[[], Any]:
    """The timed call for a circuit of fixed angles: on JAX the compiled function of the angles;
    elsewhere the circuit is built once (``make``) and only ``evaluate`` is timed."""
    if K.name == "jax":
        function, angles = compiled(lambda a: evaluate(make(a))), K.asarray(params)
        return lambda: function(angles)
    circuit = make(params)
    return lambda: evaluate(circuit)


def build(spec: Spec, backend: str) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """The timed call and the conversion of its result for ``spec`` on tyxonq's ``backend``
    (``"name"`` or ``"name:device"``, e.g. ``"pytorch:cuda"``). On a CUDA device the timed call
    waits for the device to finish (PyTorch returns before its kernels have run)."""
    import tyxonq as tq

    name, _, device = backend.partition(":")
    K = tq.set_backend(name, **({"device": device} if device else {}))
    run, canonical = _build(spec, K)
    if K.capabilities.device.startswith("cuda") and K.name == "pytorch":
        import torch

        def run_and_wait() -> Any:
            result = run()
            torch.cuda.synchronize()
            return result

        return run_and_wait, canonical
    return run, canonical


def _build(spec: Spec, K: Any) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    import tyxonq as tq

    numpy = K.to_numpy

    compiled = _compiler(K)
    if spec.workload in MPS:
        return _mps_row(spec, K)
    if spec.workload == "statevector":
        ladder = lambda angles: tq.templates.rotation_ladder(spec.n, angles, spec.layers)  # noqa: E731
        return _fixed_circuit(K, compiled, ladder, lambda c: c.state(), spec.params), numpy
    if spec.workload == "state_sampling":  # eagerly on every backend, as issue 47's example: samples
        angles = K.asarray(spec.params)  # read values (a seeded draw), the circuit built in the call

        def samples() -> Any:
            circuit = tq.templates.rotation_ladder(spec.n, angles, spec.layers)
            return circuit.sample(spec.shots, seed=SEED, format="indices")

        return samples, lambda r: z_means(numpy(r), spec.n)
    if spec.workload in GRADIENTS:
        value_and_grad = compiled(tq.value_and_grad(_energy(spec)))
        params = K.asarray(spec.params)
        return (lambda: value_and_grad(params)), (lambda r: (float(numpy(r[0])), numpy(r[1])))
    if spec.workload in ENERGY_ONLY or spec.workload == "noisy_energy":
        make, hamiltonian = ansatz(spec)
        run = _fixed_circuit(K, compiled, make, lambda c: c.expectation(hamiltonian), spec.params)
        return run, lambda r: float(numpy(r))
    if spec.workload == "adam_vqe_100":
        energy = _energy(spec)

        def optimise() -> Any:
            return tq.optimize.minimize(energy, spec.params, method="adam", maxiter=spec.steps,
                                        learning_rate=spec.learning_rate, tol=0.0, progress=False)

        return optimise, lambda r: (r.history_x[-1], r.history_fun[-1])
    if spec.workload == "batched_energies_64":
        batched = compiled(tq.vectorize_or_fallback(_energy(spec)))
        params = K.asarray(spec.params)
        return (lambda: batched(params)), numpy
    if spec.workload in ("brickwork_local", "shallow_amplitude"):
        zeros = "0" * spec.n
        brickwork = lambda angles: tq.templates.brickwork(spec.n, angles, spec.layers)  # noqa: E731
        if spec.workload == "shallow_amplitude":
            run = _fixed_circuit(K, compiled, brickwork, lambda c: c.amplitude(zeros), spec.params)
            return run, lambda r: complex(numpy(r))
        run = _fixed_circuit(K, compiled, brickwork, lambda c: (
            c.amplitude(zeros), c.expectation_ps(z=[spec.observed])), spec.params)
        return run, lambda r: (complex(numpy(r[0])), float(numpy(r[1])))
    if spec.workload == "reversible_arithmetic":
        strings = ["I" * q + "Z" + "I" * (spec.n - q - 1) for q in range(spec.n)]
        run = _fixed_circuit(K, compiled, lambda angles: gate_circuit(spec),
                             lambda c: c.pauli_expectations(strings), spec.params)
        return run, numpy
    if spec.workload == "noisy_density_matrix":
        make = lambda angles: noisy_circuit(spec, angles)  # noqa: E731
        return _fixed_circuit(K, compiled, make, lambda c: c.state(), spec.params), numpy
    if spec.workload == "noisy_brickwork_local":
        make = lambda angles: noisy_circuit(spec, angles)  # noqa: E731
        run = _fixed_circuit(K, compiled, make, lambda c: c.expectation_ps(z=[spec.observed]), spec.params)
        return run, lambda r: float(numpy(r))
    raise ValueError(f"tyxonq has no workload {spec.workload!r}")
