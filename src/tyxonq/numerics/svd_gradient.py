"""The derivative of the reduced SVD, with broadened denominators where singular values meet.

``A = U diag(S) Vh`` (reduced: ``k = min(m, n)`` singular values). The textbook reverse-mode rule
(Wan & Zhang 2019 for complex matrices; PyTorch's ``svd_backward``) divides by
``E_ij = S_j^2 - S_i^2`` and by ``S_i``: at degenerate or vanishing singular values, which an
MPS meets all the time (a Bell pair's two equal values, a product state's zeros), it returns
``inf`` or ``nan``. Here ``1/x`` becomes ``x / (x^2 + eps)`` (Lorentzian broadening, Liao, Liu,
Wang & Xiang, PRX 9, 031041 (2019)), with ``eps = (1e-12 S_max^2)^2`` for the ``E`` terms and
``(1e-12 S_max)^2`` for the ``1/S`` terms: denominators far above ``1e-12`` (relative) are
unchanged to ~1e-24 relative, those at rounding level give 0 instead of dividing rounding noise.
For a loss that does not depend on the singular vectors' phases (every physical quantity of an
MPS), the broadened terms are exactly those whose numerators vanish at a degeneracy, so the
gradient stays exact up to that relative size.

The formula is written once, over array methods both PyTorch tensors and JAX arrays have, in
PyTorch's convention (cotangent = ``dL/d conj(z)``); JAX's convention is its conjugate, which
:func:`svd_cotangent` takes and returns when ``conjugate_convention`` is set.
"""

from __future__ import annotations

from typing import Any

__all__ = ["svd_cotangent", "split_cotangent", "choose_rank", "RELATIVE_BROADENING"]

#: Denominators below this size relative to the largest singular value (squared, for ``E``) are
#: broadened.
RELATIVE_BROADENING = 1e-12


def _mH(a: Any) -> Any:
    return a.swapaxes(-1, -2).conj()


def svd_cotangent(U: Any, S: Any, Vh: Any, gU: Any, gS: Any, gVh: Any, eye: Any, cast: Any,
                  conjugate_convention: bool = False) -> Any:
    """The cotangent of ``A`` from those of the reduced SVD's ``U``, ``S``, ``Vh``.

    ``gU``, ``gS``, ``gVh`` may be ``None`` (no cotangent); ``eye`` is the ``k x k`` identity in
    ``S``'s dtype and device, ``cast(x, like)`` casts ``x`` to the dtype of ``like``. With
    ``conjugate_convention`` (JAX) the cotangents given and the one returned are the
    conjugates of PyTorch's.
    """
    if conjugate_convention:
        gU = None if gU is None else gU.conj()
        gVh = None if gVh is None else gVh.conj()
    m, n = U.shape[-2], Vh.shape[-1]
    scale = S.max() if S.shape[-1] else 1.0
    inverse_S = S / (S * S + (RELATIVE_BROADENING * scale) ** 2)
    inner = 0 * eye if gS is None else gS[..., :, None] * eye
    if gU is not None or gVh is not None:
        S2 = S * S
        E = S2[..., None, :] - S2[..., :, None] + eye  # diagonal 1: its numerators are apart
        F = E / (E * E + (RELATIVE_BROADENING * scale * scale) ** 2)
        UhgU = None if gU is None else _skew(_mH(U) @ gU)
        VhgV = None if gVh is None else _skew(Vh @ _mH(gVh))
        if UhgU is not None and VhgV is not None:
            off = (UhgU * S[..., None, :] + S[..., :, None] * VhgV) * F
        elif UhgU is not None:
            off = UhgU * F * S[..., None, :]
        else:
            off = S[..., :, None] * (VhgV * F)
        inner = inner + off * (1 - eye)
        if UhgU is not None:  # complex: the phase gauge's (imaginary) share of the diagonal
            inner = inner + ((UhgU * eye).sum(-1) * inverse_S / 2)[..., :, None] * eye
    inner = cast(inner, U)
    if m > n and gU is not None:
        gUSinv = gU * inverse_S[..., None, :]
        result = (U @ inner + gUSinv - U @ (_mH(U) @ gUSinv)) @ Vh
    elif m < n and gVh is not None:
        SinvgVh = gVh * inverse_S[..., :, None]
        result = U @ (inner @ Vh + SinvgVh - (SinvgVh @ _mH(Vh)) @ Vh)
    else:
        result = U @ inner @ Vh
    return result.conj() if conjugate_convention else result


def _skew(a: Any) -> Any:
    return a - _mH(a)


def choose_rank(rank: Any, singular_values: Any, to_host: Any) -> int:
    """``rank(host_singular_values_or_None, k)``: the values are ``None`` where they cannot be
    read (inside ``jit``); the answer is checked to lie in ``[1, k]``."""
    k = int(singular_values.shape[-1])
    try:
        host = to_host(singular_values)
    except Exception:  # a traced array: its values exist only in the compiled program
        host = None
    r = int(rank(host, k))
    if not 1 <= r <= k:
        raise ValueError(f"rank chose {r} singular values of {k}; it must keep between 1 and {k}")
    return r


def split_cotangent(U: Any, S: Any, Vh: Any, r: int, gU: Any, gW: Any,
                    conjugate_convention: bool = False) -> Any:
    """The cotangent of ``A`` from those of ``U_r`` and ``W_r = diag(S_r) Vh_r`` (the rank-``r``
    split of ``A = U diag(S) Vh``), for a loss unchanged by ``U_r -> U_r Q, W_r -> Q^H W_r``.

    Only the kept subspace and ``U_r^H A`` matter to such a loss, so no denominator couples two
    kept singular values (degenerate ones are exact): ``s_i^2 - s_j^2`` appears only between a
    kept ``i`` and a discarded ``j`` (broadened, as in :func:`svd_cotangent`, where the cut
    splits a multiplet and the truncated simulation itself jumps), and ``1/s_i`` only for kept
    values. With ``A A^H``'s kept eigenspace perturbed (``Y = (1-P) dU_r``) and
    ``dW_r = dU_r^H A + U_r^H dA``::

        Gamma = (1 - P)(gU + A gW^H),  Z[j, i] = (U_d^H Gamma)[j, i] / (s_i^2 - s_j^2)
        gA = U_r gW + U_d Z S_r Vh_r + (1 - U U^H) gU S_r^-1 Vh_r + U_r Z^H S_d Vh_d
    """
    if conjugate_convention:
        gU, gW = gU.conj(), gW.conj()
    U_r, U_d, S_r, S_d = U[..., :, :r], U[..., :, r:], S[..., :r], S[..., r:]
    Vh_r, Vh_d = Vh[..., :r, :], Vh[..., r:, :]
    m, k = U.shape[-2], S.shape[-1]
    scale = S.max() if k else 1.0
    result = U_r @ gW
    if k > r:
        gamma = _mH(U_d) @ gU + S_d[..., :, None] * (Vh_d @ _mH(gW))  # U_d^H Gamma
        gap = S_r[..., None, :] ** 2 - S_d[..., :, None] ** 2
        Z = gamma * (gap / (gap * gap + (RELATIVE_BROADENING * scale * scale) ** 2))
        result = result + U_d @ (Z * S_r[..., None, :]) @ Vh_r \
            + U_r @ (_mH(Z) * S_d[..., None, :]) @ Vh_d
    if m > k:
        inverse_S = S_r / (S_r * S_r + (RELATIVE_BROADENING * scale) ** 2)
        outside = gU - U @ (_mH(U) @ gU)
        result = result + (outside * inverse_S[..., None, :]) @ Vh_r
    return result.conj() if conjugate_convention else result
