"""Williams' test for dependent correlations and Benjamini–Hochberg adjustment.

HANNA paper, "Williams test": correlations of two measures (2, 3) with the same human
ratings (1) are dependent. Williams (1959), in the form of Graham & Baldwin (2014):

    t = (r12 - r13) sqrt((n - 1)(1 + r23)) /
        sqrt(2 (n - 1)/(n - 3) |R| + ((r12 + r13)/2)^2 (1 - r23)^3),
    |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,

Student's t with n - 3 degrees of freedom. The paper tests for an *increase*
(one-sided, r12 > r13): :func:`williams_test` with ``alternative="greater"``; the default is
two-sided, as scipy's tests. All p-values are reported, not stars.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.stats.tests_twosample import _t_pvalue, check_alternative

__all__ = ["williams_test", "WilliamsResult", "bh_adjust"]


def _williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    if n <= 3:
        return float("nan")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denom = 2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3
    if not denom > 0:
        return float("nan")
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' test of two dependent correlations (scipy-style: unpacks as ``statistic, pvalue``).

    Attributes:
        statistic: Williams' t (NaN with n <= 3 or an impossible correlation matrix).
        pvalue: p-value for ``alternative`` (``"greater"``: r12 > r13).
        df: degrees of freedom, ``n - 3``.
        n: observations behind the correlations.
        alternative: ``"two-sided"``, ``"greater"`` or ``"less"``.
    """

    statistic: float
    pvalue: float
    df: int
    n: int
    alternative: str = "two-sided"

    def __iter__(self):  # allows ``t, p = williams_test(...)``
        yield self.statistic
        yield self.pvalue

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "pvalue": self.pvalue, "df": self.df, "n": self.n,
                "alternative": self.alternative}


def williams_test(r12: float, r13: float, r23: float, n: int, alternative: str = "two-sided") -> WilliamsResult:
    """Williams' t-test of H0: r12 = r13, where variable 1 (the human ratings) is shared.

    Args:
        r12, r13: the correlations of measures 2 and 3 with variable 1.
        r23: the correlation of measures 2 and 3.
        n: observations.
        alternative: ``"two-sided"`` (default), ``"greater"`` (H1: r12 > r13, measure 2 correlates
            better with the humans; HANNA's test) or ``"less"``.

    Example:
        >>> res = williams_test(0.5, 0.4, 0.1, 103, alternative="greater")
        >>> round(res.statistic, 2), res.df
        (0.89, 100)
    """
    check_alternative(alternative)
    t = _williams_t(r12, r13, r23, n)
    if math.isnan(t):
        return WilliamsResult(float("nan"), float("nan"), n - 3, n, alternative)
    return WilliamsResult(float(t), _t_pvalue(float(t), n - 3, alternative), n - 3, n, alternative)


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
