"""How results are put together: weighted sums of terms, and samples in their formats
(counts, bitstrings, basis indices) read through readout errors."""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..numerics.protocol import ArrayBackend
from ..operators.readout import apply_readout_error

__all__ = ["readout_seed", "format_index", "weighted_sum", "format_samples"]


def readout_seed(seed: int | None) -> Any:
    """The readout stream's seed: derived from ``seed``, independent of the sampling stream."""
    return None if seed is None else np.random.SeedSequence([int(seed), 0x5EAD])


def format_index(index: int, width: int) -> str:
    """Basis index as a bitstring, qubit 0 leftmost."""
    return format(int(index), f"0{width}b")


def weighted_sum(K: ArrayBackend, values: Any, coefficients: Sequence[Any] | None) -> Any:
    """``values``, or ``sum_i c_i values_i`` when coefficients are given (backend arrays among
    them stay differentiable)."""
    if coefficients is None:
        return values
    if all(isinstance(c, numbers.Number) for c in coefficients):
        return K.sum(values * K.asarray(np.asarray(coefficients)))
    return K.sum(values * K.stack([K.asarray(c) for c in coefficients]))


def format_samples(K: ArrayBackend, n: int, format: str, confusions: list | None, seed: int | None, *,
                   indices: Any = None, bits: np.ndarray | None = None) -> Any:
    """Samples as basis ``indices`` (a backend array) or ``bits`` (a host ``(shots, n)`` array,
    qubit 0 first), read through ``confusions`` if given, in the requested format: counts,
    bitstrings, a backend array of basis indices (at most 62 qubits), or the bits themselves as a
    backend ``int8`` array ``(shots, n)`` (``"bits"``, any width)."""
    if confusions is not None:  # read through the confusion matrices (a separate stream)
        if bits is None:
            bits = (K.to_numpy(indices)[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
        bits = apply_readout_error(bits, confusions, np.random.default_rng(readout_seed(seed)))
        indices = None
    if format == "bits":
        if bits is None:
            bits = (K.to_numpy(indices)[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
        return K.asarray(np.asarray(bits, dtype=np.int8))
    if indices is None and n <= 62:
        indices = K.asarray(bits @ (1 << np.arange(n - 1, -1, -1, dtype=np.int64)), "int64")
    if format == "indices":
        if indices is None:
            raise ValueError(f"format='indices' holds basis indices as int64, at most 62 qubits; "
                             f"this circuit has {n}: use format='bitstrings' or 'counts'")
        return indices
    if indices is not None:
        host = K.to_numpy(indices)
        if format == "bitstrings":
            return [format_index(i, n) for i in host.tolist()]
        values, counts = np.unique(host, return_counts=True)
        return {format_index(v, n): int(c) for v, c in zip(values.tolist(), counts.tolist())}
    rows, counts = np.unique(bits.astype(np.int8), axis=0, return_counts=True)
    if format == "bitstrings":
        return ["".join(map(str, row)) for row in bits.astype(np.int8).tolist()]
    return {"".join(map(str, row)): int(c) for row, c in zip(rows.tolist(), counts.tolist())}
