"""What a backend can do, declared as data.

Code that needs to know whether a backend differentiates natively, vectorises natively or has a
dimension limit reads :class:`BackendCapabilities`; it never probes by catching
``NotImplementedError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BackendCapabilities"]

AutodiffKind = Literal["autograd", "finite-difference"]
VmapKind = Literal["native", "lanes", "loop"]
JitKind = Literal["none", "torch.compile", "jax.jit"]


@dataclass(frozen=True)
class BackendCapabilities:
    """Static description of a backend instance.

    Attributes
    ----------
    autodiff : {"autograd", "finite-difference"}
        How :meth:`ArrayBackend.value_and_grad` computes gradients.
    vmap : {"native", "lanes", "loop"}
        ``"native"``: :meth:`ArrayBackend.vmap` is a true vectorising transform; ``"lanes"``: it
        calls the function once with the batch as :class:`~tyxonq.numerics.lanes.Lanes`
        (arithmetic, elementwise functions and state-vector circuits run batched), looping over
        the batch for functions that cannot run on lanes; ``"loop"``: it calls the function once
        per batch element and stacks the results.
    jit : {"none", "torch.compile", "jax.jit"}
        What :meth:`ArrayBackend.jit` does; ``"none"`` returns the function unchanged.
    devices : tuple of str
        Devices this backend instance can place arrays on (e.g. ``("cpu",)`` or
        ``("cpu", "cuda:0")``).
    device : str
        The device every array created by this instance lives on.
    distributed : bool
        Whether the backend's work is shared between the ranks of a :mod:`tq.distributed
        <tyxonq.numerics.distributed>` run (under ``torchrun``, ``mpirun`` or JAX's processes):
        NumPy, PyTorch and JAX. cuPyNumeric: no; Legate partitions its arrays itself, within one
        process with the pip wheels (built without networking), and cuPyNumeric as ranks of a
        ``tq.distributed`` run was never verified.
    max_ndim : int
        Largest number of array dimensions the backend supports. Nothing in tyxonq builds an
        array with more dimensions, nor an einsum with more distinct indices, than this.
    gradient_nodes : bool
        Whether :meth:`ArrayBackend.gradient_node` makes a differentiable node from a value and
        its Jacobian (PyTorch): simulators then differentiate expectation values by their own
        exact methods (one adjoint sweep) inside the library's autograd.
    sparse_products : bool
        Whether :meth:`ArrayBackend.row_sparse` builds a compiled sparse product (NumPy with SciPy
        installed, PyTorch); otherwise it gathers, correct but no faster than the dense routes
        callers take instead.

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> caps = NumpyBackend().capabilities
    >>> caps.autodiff, caps.vmap, caps.device
    ('finite-difference', 'lanes', 'cpu')
    """

    autodiff: AutodiffKind
    vmap: VmapKind
    jit: JitKind
    devices: tuple[str, ...]
    device: str
    distributed: bool
    max_ndim: int
    gradient_nodes: bool = False
    sparse_products: bool = False

    @property
    def compiles_whole_functions(self) -> bool:
        """Whether compiling a whole function with :meth:`ArrayBackend.jit` is how this backend
        gets fast (JAX). Then callers compile objectives and prefer one large traced computation
        (a contraction) to many small eager calls (a state sweep). ``torch.compile`` is not
        counted: on the CPU it was measured slower than eager for complex code."""
        return self.jit == "jax.jit"
