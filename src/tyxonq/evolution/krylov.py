"""``exp(tau A) psi`` by restarted Krylov (Arnoldi) projection with error control (Expokit's
scheme, Sidje 1998), on any backend.

From a state ``psi`` (norm ``beta``) ``m`` products with ``H`` build an orthonormal basis ``V``
of the Krylov space and the Hessenberg matrix ``H_m = V^† H V`` (``A = s H``, ``s = -i`` for real
time, ``-1`` for imaginary time). With the augmented ``(m+1) x (m+1)`` matrix ``Ĥ = [[H_m, 0],
[h_{m+1,m} e_m^T, 0]]``, ``exp(tau A) psi ≈ beta V exp(tau s Ĥ) e_1`` (the corrected scheme,
using ``v_{m+1}``), with the a-posteriori error estimate ``beta |[exp(tau s Ĥ)]_{m+1,1}|``.
One basis serves every time up to the largest step whose estimated error stays within the
tolerance's share (``tol * tau / T``); the state there starts the next basis. Step choices are
made on the host from the small matrices; every array operation is the backend's, so autograd
differentiates the result with respect to times, coefficients and the initial state.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..numerics.expm import expm_pade13
from ..numerics.host import host_values
from ..numerics.protocol import ArrayBackend

__all__ = ["krylov_propagate"]

#: a basis vector whose norm falls below this fraction of the norm bound ends the space: it is
#: invariant and the projection is exact (a "happy breakdown")
BREAKDOWN = 1e-13
#: basis vectors stacked at once for a product with several output times (a bounded copy,
#: whose memory the next chunk reuses)
PROJECTION_CHUNK = 16


def krylov_propagate(K: ArrayBackend, apply: Callable[[Any], Any], state: Any, times: list[float],
                     time_values: list[Any], scale: complex, tol: float, dimension: int,
                     norm_bound: float, normalise: bool, emit: Callable[[Any], None],
                     hermitian: bool = False) -> None:
    """Call ``emit(exp(t_k s H) state)`` for each output time ``t_k`` (``times`` on the host,
    non-decreasing from 0; ``time_values`` the same as numbers or backend scalars, which carry
    gradients); ``normalise``: each emitted state and the carried one divided by its norm;
    ``hermitian``: ``H`` is (Lanczos)."""
    total = times[-1] if times else 0.0
    rate = tol / total if total > 0 else 0.0
    now, step, k = 0.0, None, 0
    while k < len(times):
        if times[k] <= now:
            emit(_normalised(K, state) if normalise else state)
            k += 1
            continue
        remaining = total - now
        basis, hessenberg, host, beta, exact = _arnoldi(
            K, apply, state, dimension, norm_bound,
            functools.partial(_admissible, scale=scale, rate=rate, tau=remaining), hermitian)
        if exact:
            step = remaining
        else:
            size = float(host_values(K, beta))
            step = _largest_step(lambda tau, host=host, size=size: _admissible(host, size, scale, rate, tau),
                                 remaining if step is None else min(step, remaining), remaining)
        end = now + step if step < remaining else total
        factors = []
        while k < len(times) and times[k] <= end:
            factors.append((time_values[k] - now) * scale)
            k += 1
        carried = k < len(times)
        if carried:
            factors.append((end - now) * scale)
        states = _projected(K, basis, hessenberg, beta, factors, normalise)
        for vector in states[: len(states) - carried]:
            emit(vector)
        if carried:
            state, now = states[-1], end


def _admissible(host: np.ndarray, beta: float, scale: complex, rate: float, tau: float) -> bool:
    """Whether the error estimate ``beta |[exp(tau s Ĥ)]_{m+1,1}|`` of a step ``tau`` is within
    its share ``rate * tau`` of the tolerance."""
    return beta * abs(expm_pade13(np, (tau * scale) * host)[-1, 0]) <= rate * tau


def _largest_step(admissible: Callable[[float], bool], guess: float, limit: float) -> float:
    """About the largest step in ``(0, limit]`` that is ``admissible`` (admissible steps are taken
    to form an interval from 0): doubling or halving from ``guess``, then bisection."""
    good, bad = 0.0, None
    step = guess
    while bad is None or good == 0.0:
        if admissible(step):
            good = step
            if step >= limit:
                return limit
            step = min(2 * step, limit)
        else:
            bad = step
            step *= 0.5
        if step < limit * 1e-14:  # nothing admissible: the smallest step (tolerance unreachable)
            return step
        if good and bad is not None:
            break
    for _ in range(6):
        middle = 0.5 * (good + bad)
        good, bad = (middle, bad) if admissible(middle) else (good, middle)
    return good


def _projected(K: ArrayBackend, basis: list, hessenberg: Any, beta: Any, factors: list,
               normalise: bool) -> list:
    """``beta V exp(f Ĥ) e_1`` for each factor ``f``: one product with the stacked basis for
    several, a sum over the basis vectors for one (no stacked copy of the basis)."""
    columns = [K.expm(factor * hessenberg)[:, 0] * beta for factor in factors]
    if len(columns) == 1:
        column, state = columns[0], None
        for j, vector in enumerate(basis):
            state = column[j] * vector if state is None else state + column[j] * vector
        states = [state]
    else:
        coefficients = K.stack(columns)
        product = None
        for start in range(0, len(basis), PROJECTION_CHUNK):  # stacked a chunk at a time
            chunk = K.matmul(coefficients[:, start:start + PROJECTION_CHUNK],
                             K.stack(basis[start:start + PROJECTION_CHUNK]))
            product = chunk if product is None else product + chunk
        states = [product[i] for i in range(len(columns))]
    return [_normalised(K, state) for state in states] if normalise else states


def _normalised(K: ArrayBackend, state: Any) -> Any:
    return state / K.sqrt(K.sum(K.abs(state) ** 2))


def _arnoldi(K: ArrayBackend, apply: Callable[[Any], Any], state: Any, dimension: int, norm_bound: float,
             enough: Callable[[np.ndarray, float], bool],
             hermitian: bool) -> tuple[Any, Any, np.ndarray, float, bool]:
    """``(V, Ĥ, Ĥ on the host, beta, exact)``: the basis vectors, ``m + 1`` (``m`` after
    a breakdown, ``exact``, when ``Ĥ`` is ``H_m`` itself). Arnoldi with classical Gram-Schmidt
    applied twice; for a Hermitian ``H`` Lanczos' three-term recurrence without
    reorthogonalisation (the Hessenberg matrix is then tridiagonal; the loss of orthogonality
    in finite precision does not spoil the exponential's projection, Druskin, Greenbaum and
    Knizhnerman, SIAM J. Sci. Comput. 19, 38 (1998), and keeps each step at two inner products).
    It stops before ``dimension`` vectors once ``enough(Ĥ on the host, beta)``."""
    dtype = K.dtype_of(state)
    beta = K.sqrt(K.real(_dot(K, K.conj(state), state)))
    beta_host = float(host_values(K, beta))
    vectors = [state / beta]
    conjugates = [K.conj(vectors[0])]
    columns = []
    size = K.shape(state)[0]
    m = min(dimension, size)
    host = np.zeros((m + 1, m + 1), dtype=complex)
    for j in range(m):
        w = apply(vectors[j])
        if hermitian:
            alpha = _dot(K, conjugates[j], w)
            w = w - alpha * vectors[j] if j == 0 else w - alpha * vectors[j] - columns[-1][1] * vectors[j - 1]
            coefficients = K.reshape(alpha, (1,))
            if j >= 1:
                coefficients = K.concatenate([K.zeros((j - 1,), dtype=dtype),
                                              K.reshape(K.cast(columns[-1][1], dtype), (1,)), coefficients])
        else:
            stacked = K.stack(vectors)
            first = K.matmul(K.conj(stacked), w)
            w = w - K.matmul(first, stacked)
            second = K.matmul(K.conj(stacked), w)
            w = w - K.matmul(second, stacked)
            coefficients = first + second
        conjugate = K.conj(w)
        norm = K.sqrt(K.real(_dot(K, conjugate, w)))
        columns.append((coefficients, norm))
        read = host_values(K, K.concatenate([coefficients, K.reshape(K.cast(norm, dtype), (1,))]))
        host[: j + 2, j] = read
        if abs(read[-1]) <= BREAKDOWN * max(norm_bound, 1.0) or j == size - 1:
            hessenberg = _hessenberg(K, columns, j + 1, dtype, augmented=False)
            return vectors, hessenberg, host[: j + 1, : j + 1].copy(), beta, True
        vectors.append(w / norm)
        conjugates.append(conjugate / norm)
        augmented = np.zeros((j + 2, j + 2), dtype=complex)
        augmented[:, : j + 1] = host[: j + 2, : j + 1]
        if j + 1 < m and j >= 2 and enough(augmented, beta_host):
            m = j + 1
            break
    hessenberg = _hessenberg(K, columns, m, dtype, augmented=True)
    augmented = np.zeros((m + 1, m + 1), dtype=complex)
    augmented[:, :m] = host[: m + 1, :m]
    return vectors, hessenberg, augmented, beta, False


def _dot(K: ArrayBackend, left: Any, right: Any) -> Any:
    """``sum_i left_i right_i`` of two vectors (one BLAS call)."""
    return K.matmul(left, right)


def _hessenberg(K: ArrayBackend, columns: list, m: int, dtype: Any, augmented: bool) -> Any:
    """``H_m`` (``m x m``), or ``Ĥ`` (``(m+1) x (m+1)``, the last column zero)."""
    rows = m + 1 if augmented else m
    built = []
    for j, (coefficients, norm) in enumerate(columns[:m]):
        parts = [K.cast(coefficients, dtype)]
        if j + 1 < rows:
            parts.append(K.reshape(K.cast(norm, dtype), (1,)))
        if j + 2 < rows:
            parts.append(K.zeros((rows - j - 2,), dtype=dtype))
        built.append(K.concatenate(parts)[:rows])
    if augmented:
        built.append(K.zeros((rows,), dtype=dtype))
    return K.stack(built, axis=1)
