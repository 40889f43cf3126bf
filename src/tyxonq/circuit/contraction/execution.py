"""Running plans: bound leaf arrays in, the contracted result out.

The last step of the contraction pipeline (:mod:`~tyxonq.circuit.contraction.evaluation`:
requests -> :mod:`~tyxonq.circuit.contraction.plan` -> bound leaves
(:mod:`~tyxonq.circuit.contraction.binding`, :mod:`~tyxonq.circuit.contraction.batching`) ->
here -> results): a plan's compiled pairwise steps (:mod:`~tyxonq.circuit.contraction.executor`)
run through the backend, as one compiled program per plan and backend where the backend
compiles whole functions (JAX, outside ``jit``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...numerics.moves import permute
from ...numerics.protocol import ArrayBackend
from .executor import CompiledContraction
from .plan import NetworkPlan

__all__ = ["run_plan", "run_contraction", "run_compiled"]


def run_plan(network_plan: NetworkPlan, K: ArrayBackend, tensors: Sequence[Any]) -> Any:
    """Contract bound leaf arrays (network order) along the plan and shape the result (one
    compiled program for eager calls on JAX: see :func:`run_compiled`)."""
    return run_compiled(network_plan, K, lambda *leaves: _run(network_plan, K, leaves), tensors)


def run_contraction(contraction: CompiledContraction, K: ArrayBackend, tensors: Sequence[Any]) -> Any:
    """``contraction.run(K, tensors)``, as one compiled program for eager calls on JAX."""
    return run_compiled(contraction, K, lambda *leaves: contraction.run(K, list(leaves)), tensors)


def run_compiled(owner: Any, K: ArrayBackend, function: Callable[..., Any], tensors: Sequence[Any]) -> Any:
    """``function(*tensors)``; on a backend that compiles whole functions (JAX), outside a
    compiled program, through ``K.jit(function)`` made once per ``owner`` (a plan or
    contraction) and backend: op by op, JAX compiles every transpose, reshape and product of a
    new shape on its own (a 20-qubit state's first eager call took 8.5 s that way, 2.6 s
    compiled whole)."""
    if not K.capabilities.compiles_whole_functions or K.compiling():
        return function(*tensors)
    runs = owner.__dict__.setdefault("_compiled_runs", {})
    if K not in runs:
        runs[K] = K.jit(function)
    return runs[K](*tensors)


def _run(network_plan: NetworkPlan, K: ArrayBackend, tensors: Sequence[Any]) -> Any:
    plan = network_plan.plan  # the result handed straight to permute, which frees it after one copy
    return K.reshape(permute(K, plan.contraction.run(K, network_plan.arrange(K, tensors)), plan.output_moves),
                     network_plan.output_shape)
