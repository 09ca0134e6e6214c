"""Intraclass correlation ICC(2,1) and ICC(2,k) with 95% confidence intervals.

HANNA paper, self-consistency: three tries of one LLM are treated as three raters and
ICC2k (two-way random effects, absolute agreement, mean of k raters) is reported with its
confidence interval. Shrout & Fleiss (1979), case 2, from the two-way ANOVA mean squares
of an items × raters matrix (MSR rows/items, MSC columns/raters, MSE residual):

* ICC(2,1) = (MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE) / n)
* ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n)

Confidence intervals follow McGraw & Wong (1996) (the F-based bounds with Satterthwaite
degrees of freedom, as in pingouin and R's psych::ICC). Items with a missing rating are
dropped (listwise), as the ANOVA needs a complete matrix; every missing kind counts
(``None``, NaN of any float dtype, ``pandas.NA``; :func:`judgelab.stats.agreement.as_float_array`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats as _st

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ICCEstimate", "ICCResult", "icc", "icc_reason"]

_NAN = float("nan")


@dataclass(frozen=True)
class ICCEstimate:
    """One ICC type of :func:`icc` (scipy-style: unpacks as ``estimate, ci_low, ci_high``).

    Attributes:
        kind: ``"ICC(2,1)"`` (one rater) or ``"ICC(2,k)"`` (mean of k raters).
        estimate: the coefficient (NaN with fewer than two complete items or two raters, or
            without variation).
        ci_low, ci_high: McGraw & Wong (1996) F-based bounds at ``confidence``.
        confidence: the interval's level.
        f, df1, df2, pvalue: the F test of H0 "no item variance" (``F = MSR / MSE`` on
            ``n - 1`` and ``(n - 1)(k - 1)`` degrees of freedom, as pingouin reports it; the same
            for both types).
    """

    kind: str
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    f: float = _NAN
    df1: float = _NAN
    df2: float = _NAN
    pvalue: float = _NAN

    def __iter__(self):  # allows ``value, low, high = result.average``
        yield self.estimate
        yield self.ci_low
        yield self.ci_high

    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)`` at the level the estimate was computed with."""
        return self.ci_low, self.ci_high

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": self.confidence, "f": self.f, "df1": self.df1, "df2": self.df2, "pvalue": self.pvalue}


@dataclass(frozen=True)
class ICCResult:
    """ICC(2,1) and ICC(2,k) of an items × raters table.

    Attributes:
        single: ICC(2,1), the reliability of one rater.
        average: ICC(2,k), the reliability of the mean of the k raters (HANNA's self-consistency).
        n: complete items used (items with a missing rating are left out).
        k: raters.
    """

    single: ICCEstimate
    average: ICCEstimate
    n: int
    k: int

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "k", "ICC(2,1)": {...}, "ICC(2,k)": {...}}``."""
        return {"n": self.n, "k": self.k, self.single.kind: self.single.to_dict(),
                self.average.kind: self.average.to_dict()}

    def to_frame(self):
        """One row per ICC type: kind, estimate, ci_low, ci_high, confidence, f, df1, df2, pvalue, n, k."""
        import pandas as pd

        return pd.DataFrame([{**e.to_dict(), "n": self.n, "k": self.k} for e in (self.single, self.average)])


def icc(data, confidence: float = 0.95) -> ICCResult:
    """ICC(2,1) and ICC(2,k) with confidence intervals and the F test, for items × raters.

    ``data``: items × raters (a list of rows, a 2-D array or a DataFrame with items as rows);
    items with a missing rating are left out. Every field is NaN with fewer than two complete
    items or two raters; estimate and interval are NaN without variation.

    Example:
        >>> round(icc([[1, 2], [2, 3], [3, 5], [4, 4]]).average.estimate, 3)
        0.78
    """
    from judgelab.stats.agreement import as_float_array

    x = as_float_array(data, "items × raters")
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D table: items × raters; got {x.ndim}-D")
    x = x[~np.isnan(x).any(axis=1)]
    n, k = x.shape

    def result(v1, lo1, hi1, vk, lok, hik, f=_NAN, df1=_NAN, df2=_NAN, p=_NAN) -> ICCResult:
        return ICCResult(ICCEstimate("ICC(2,1)", v1, lo1, hi1, confidence, f, df1, df2, p),
                         ICCEstimate("ICC(2,k)", vk, lok, hik, confidence, f, df1, df2, p), n, k)

    if n < 2 or k < 2:
        return result(*(_NAN,) * 6)
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    df1, df2 = float(n - 1), float((n - 1) * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        f_stat = float(np.float64(msr) / np.float64(mse))
    p_f = float(_st.f.sf(f_stat, df1, df2)) if not math.isnan(f_stat) else _NAN
    denom1 = msr + (k - 1) * mse + k * (msc - mse) / n
    denomk = msr + (msc - mse) / n
    if denom1 == 0 or denomk == 0:
        return result(*(_NAN,) * 6, f_stat, df1, df2, p_f)
    icc1 = (msr - mse) / denom1
    icck = (msr - mse) / denomk
    # McGraw & Wong (1996), case 2A: CI of the single-rater ICC, then Spearman-Brown for k raters.
    alpha = 1 - confidence
    a = k * icc1 / (n * (1 - icc1)) if icc1 != 1 else float("inf")
    b = 1 + k * icc1 * (n - 1) / (n * (1 - icc1)) if icc1 != 1 else float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
        f_up = _st.f.ppf(1 - alpha / 2, n - 1, v)
        f_lo = _st.f.ppf(1 - alpha / 2, v, n - 1)
        low1 = n * (msr - f_up * mse) / (f_up * (k * msc + (k * n - k - n) * mse) + n * msr)
        high1 = n * (f_lo * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_lo * msr)
    lowk = k * low1 / (1 + (k - 1) * low1)
    highk = k * high1 / (1 + (k - 1) * high1)
    return result(float(icc1), float(low1), float(high1), float(icck), float(lowk), float(highk), f_stat, df1, df2, p_f)


def icc_reason(wide: pd.DataFrame, kind: str, estimate: float) -> str:
    """Why ICC(2,k) or its interval is undefined, named from the data (items × raters or samples)."""
    complete = wide.dropna()
    what = "estimate and interval" if math.isnan(estimate) else "interval"
    if len(complete) < 2:
        return f"the {what} need two items scored by every one of the {kind}; {len(complete)} item(s) are"
    same_within = bool((complete.nunique(axis=1) == 1).all())
    constant_means = complete.mean(axis=1).nunique() == 1
    if same_within and constant_means:
        return f"every score is the same ({complete.iloc[0, 0]:g}): there is no variation to split"
    if same_within:
        return (f"the {kind} of each item give identical scores (no disagreement within an item): the {what} "
                "cannot be computed from a zero error variance")
    if constant_means:
        return f"every item has the same mean score (no variation between items): the {what} is undefined"
    return f"the {what} is undefined for these scores"
