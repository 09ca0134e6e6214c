"""Two-sample comparisons of ratings."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

__all__ = ["welch_t", "WelchResult", "wilcoxon", "WilcoxonResult", "ALTERNATIVES", "check_alternative"]

_NAN = float("nan")
ALTERNATIVES = ("two-sided", "greater", "less")


def check_alternative(alternative: str) -> str:
    """``alternative`` if it is one of :data:`ALTERNATIVES`, else ValueError (scipy's vocabulary)."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}")
    return alternative


def _t_pvalue(t: float, df: float, alternative: str) -> float:
    if alternative == "greater":
        return float(_st.t.sf(t, df))
    if alternative == "less":
        return float(_st.t.cdf(t, df))
    return float(2.0 * _st.t.sf(abs(t), df))


@dataclass(frozen=True)
class WelchResult:
    """Welch's t-test (scipy-style: unpacks as ``statistic, pvalue``).

    Attributes:
        statistic: t (NaN when a group has fewer than two values or both variances are 0).
        pvalue: p-value for ``alternative`` (x's mean minus y's: ``"greater"`` tests > 0).
        df: Welch–Satterthwaite degrees of freedom.
        mean_x, mean_y: the group means (NaN for an empty group).
        n_x, n_y: values used (NaN dropped).
        stderr: standard error of ``mean_x - mean_y``.
        alternative: ``"two-sided"``, ``"greater"`` or ``"less"``.
    """

    statistic: float
    pvalue: float
    df: float
    mean_x: float
    mean_y: float
    n_x: int
    n_y: int
    stderr: float
    alternative: str = "two-sided"

    def __iter__(self):  # allows ``t, p = welch_t(x, y)``
        yield self.statistic
        yield self.pvalue

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        """Interval for ``mean_x - mean_y`` matching ``alternative`` (one-sided: one infinite bound), as scipy's."""
        diff = self.mean_x - self.mean_y
        if math.isnan(self.df):
            return _NAN, _NAN
        if self.alternative == "two-sided":
            q = float(_st.t.ppf(0.5 + confidence_level / 2, self.df))
            return diff - q * self.stderr, diff + q * self.stderr
        q = float(_st.t.ppf(confidence_level, self.df))
        if self.alternative == "greater":
            return diff - q * self.stderr, math.inf
        return -math.inf, diff + q * self.stderr

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "pvalue": self.pvalue, "df": self.df, "mean_x": self.mean_x,
                "mean_y": self.mean_y, "n_x": self.n_x, "n_y": self.n_y, "stderr": self.stderr,
                "alternative": self.alternative}


def welch_t(x, y, alternative: str = "two-sided") -> WelchResult:
    """Welch's unequal-variance t-test of ``mean(x) - mean(y)``; NaN values are dropped.

    Chiang & Lee (2023), section 3.3 compare human-written and GPT-2 stories with it.
    ``t = (mean_x - mean_y) / sqrt(s_x^2/n_x + s_y^2/n_y)`` with Welch–Satterthwaite
    degrees of freedom ``(a + b)^2 / (a^2/(n_x-1) + b^2/(n_y-1))``, ``a = s_x^2/n_x``,
    ``b = s_y^2/n_y``. NaN statistic, p and df when a group has fewer than two values or
    both variances are 0. ``alternative`` as scipy.stats.ttest_ind's.

    Example:
        >>> res = welch_t([1, 2, 3, 4], [2, 4, 6, 8], alternative="less")
        >>> round(res.statistic, 3), round(res.pvalue, 3)
        (-1.732, 0.076)
    """
    check_alternative(alternative)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    mx = float(x.mean()) if x.size else _NAN
    my = float(y.mean()) if y.size else _NAN
    if x.size < 2 or y.size < 2:
        return WelchResult(_NAN, _NAN, _NAN, mx, my, int(x.size), int(y.size), _NAN, alternative)
    a = x.var(ddof=1) / x.size
    b = y.var(ddof=1) / y.size
    if a + b == 0:
        return WelchResult(_NAN, _NAN, _NAN, mx, my, int(x.size), int(y.size), 0.0, alternative)
    t = (x.mean() - y.mean()) / math.sqrt(a + b)
    df = (a + b) ** 2 / (a**2 / (x.size - 1) + b**2 / (y.size - 1))
    return WelchResult(float(t), _t_pvalue(float(t), float(df), alternative), float(df), mx, my, int(x.size),
                       int(y.size), math.sqrt(a + b), alternative)


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test of paired values (scipy-style: unpacks as ``statistic, pvalue``).

    Attributes:
        statistic: scipy's statistic: the sum of the ranks of the positive differences for a
            one-sided test, the smaller of the two rank sums for a two-sided one (NaN when no
            pair has a nonzero difference).
        pvalue: p-value for ``alternative`` (``"greater"``: x > y); 1.0 when no pair has a nonzero
            difference (no evidence of any difference).
        n: pairs used (pairs with a NaN dropped), zero differences included.
        n_zero: pairs with a zero difference (dropped before ranking, ``zero_method="wilcox"``).
        alternative: ``"two-sided"``, ``"greater"`` or ``"less"``.
    """

    statistic: float
    pvalue: float
    n: int
    n_zero: int
    alternative: str = "two-sided"

    def __iter__(self):  # allows ``w, p = wilcoxon(x, y)``
        yield self.statistic
        yield self.pvalue

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "pvalue": self.pvalue, "n": self.n, "n_zero": self.n_zero,
                "alternative": self.alternative}


def wilcoxon(x, y, alternative: str = "two-sided") -> WilcoxonResult:
    """Wilcoxon signed-rank test of the paired differences ``x - y`` (pairs with a NaN dropped).

    DHP (Wang et al., section 3.3.1) uses ``alternative="greater"``: original scores greater than
    perturbed ones. Zero differences are dropped before ranking (Wilcoxon's original treatment,
    scipy's ``zero_method="wilcox"``); when every difference is zero (or no pair is left) there is no
    evidence of a difference and p = 1. scipy's ``method="auto"``: the exact null distribution for
    small samples without ties or zeros, the normal approximation with tie correction otherwise.

    Raises:
        ValueError: ``x`` and ``y`` differ in length, or an unknown ``alternative``.

    Example:
        >>> res = wilcoxon([4, 5, 3, 5, 4], [3, 3, 3, 2, 1], alternative="greater")
        >>> res.n, res.n_zero, round(res.pvalue, 4)
        (5, 1, 0.0625)
    """
    check_alternative(alternative)
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"x and y differ in length: {a.size} vs {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    d = a[keep] - b[keep]
    n_zero = int((d == 0).sum())
    if d.size == 0 or n_zero == d.size:
        return WilcoxonResult(_NAN, 1.0, int(d.size), n_zero, alternative)
    res = _st.wilcoxon(d, zero_method="wilcox", alternative=alternative)
    return WilcoxonResult(float(res.statistic), float(res.pvalue), int(d.size), n_zero, alternative)
