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

import numpy as np
from scipy import stats as _st

__all__ = ["icc"]


def icc(data, confidence: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """``{"ICC(2,1)": (value, low, high), "ICC(2,k)": (value, low, high)}`` for items × raters.

    ``data``: items × raters (a list of rows, a 2-D array or a DataFrame with items as rows);
    items with a missing rating are left out. NaN triples with fewer than two complete items or
    two raters, or without variation.

    Example:
        >>> round(icc([[1, 2], [2, 3], [3, 5], [4, 4]])["ICC(2,k)"][0], 3)
        0.78
    """
    from judgelab.stats.agreement import as_float_array

    x = as_float_array(data, "items × raters")
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D table: items × raters; got {x.ndim}-D")
    x = x[~np.isnan(x).any(axis=1)]
    n, k = x.shape
    nan3 = (float("nan"),) * 3
    if n < 2 or k < 2:
        return {"ICC(2,1)": nan3, "ICC(2,k)": nan3}
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    denom1 = msr + (k - 1) * mse + k * (msc - mse) / n
    denomk = msr + (msc - mse) / n
    if denom1 == 0 or denomk == 0:
        return {"ICC(2,1)": nan3, "ICC(2,k)": nan3}
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
    return {"ICC(2,1)": (float(icc1), float(low1), float(high1)), "ICC(2,k)": (float(icck), float(lowk), float(highk))}
