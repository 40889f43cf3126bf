"""What each backend cannot do, declared once with the reason, instead of scattered skips."""

from __future__ import annotations

LIMITATIONS: dict[tuple[str, str], str] = {
    ("numpy", "native-vmap"): "NumPy has no vectorising transform; vmap traces lanes",
    ("cupynumeric", "native-vmap"): "cuPyNumeric has no vectorising transform; vmap traces lanes",
    ("cupynumeric-logic", "native-vmap"): "cuPyNumeric has no vectorising transform; vmap traces lanes",
    ("cupynumeric", "lanes-with-object-arrays"): (
        "an array argument traced as lanes is a NumPy object array; arithmetic between it and a "
        "cuPyNumeric array runs cuPyNumeric's ufuncs, which refuse object arrays, so such a "
        "function loops over the batch (warned once)"),
    ("numpy", "autograd"): "gradients are central finite differences, not autograd",
    ("cupynumeric", "autograd"): "gradients are central finite differences, not autograd",
    ("cupynumeric-logic", "autograd"): "gradients are central finite differences, not autograd",
    ("cupynumeric", "qr-complete"): "cuPyNumeric's linalg.qr has no mode argument (reduced only)",
    ("cupynumeric", "norm-matrix-2"): "cuPyNumeric's linalg.norm lacks ord=2 for matrices",
    ("cupynumeric", "batched-qr-svd"): "cuPyNumeric's qr and svd take 2-d input only",
    ("cupynumeric", "ndim-above-6"): "cuPyNumeric arrays have at most 6 dimensions",
    ("cupynumeric-logic", "ndim-above-6"): "cuPyNumeric arrays have at most 6 dimensions",
}


def declared_limitation(backend_id: str, feature: str) -> str | None:
    """The declared reason ``backend_id`` cannot do ``feature``, or None if it can."""
    family = "pytorch" if backend_id == "pytorch-cuda" else backend_id
    return LIMITATIONS.get((family, feature))
