"""Williams' test for dependent correlations and Benjamini–Hochberg adjustment.

HANNA paper, "Williams test": correlations of two measures (2, 3) with the same human
ratings (1) are dependent. Williams (1959), in the form of Graham & Baldwin (2014):

    t = (r12 - r13) sqrt((n - 1)(1 + r23)) /
        sqrt(2 (n - 1)/(n - 3) |R| + ((r12 + r13)/2)^2 (1 - r23)^3),
    |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,

Student's t with n - 3 degrees of freedom. The paper tests for an *increase*
(one-sided, r12 > r13); :func:`williams_test` returns the two-sided p-value and
:func:`williams_one_sided` the one-sided one. All p-values are reported, not stars.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st

__all__ = ["williams_test", "williams_one_sided", "bh_adjust"]


def _williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    if n <= 3:
        return float("nan")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denom = 2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3
    if not denom > 0:
        return float("nan")
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """``(t, two-sided p)`` for H0: r12 = r13, where variable 1 (the human ratings) is shared."""
    t = _williams_t(r12, r13, r23, n)
    if math.isnan(t):
        return float("nan"), float("nan")
    return float(t), float(2 * _st.t.sf(abs(t), n - 3))


def williams_one_sided(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """``(t, p)`` for H1: r12 > r13 (measure 2 correlates better with the humans than measure 3)."""
    t = _williams_t(r12, r13, r23, n)
    if math.isnan(t):
        return float("nan"), float("nan")
    return float(t), float(_st.t.sf(t, n - 3))


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values, same order; NaN entries stay NaN and are not counted.

    ``p_(i) * m / i`` for the i-th smallest of m p-values, made monotone from the largest
    down (cumulative minimum) and capped at 1.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return out
    vals = p[ok]
    order = np.argsort(vals)
    ranked = vals[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(ranked, 1.0)
    out[ok] = adjusted
    return out
