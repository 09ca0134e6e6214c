"""One correlation coefficient of two vectors, with its p-value: the :class:`Correlation` result and
:func:`correlate` (Pearson, Spearman, Kendall tau-b or tau-c), on which every level of
:mod:`judgelab.stats.correlation` is built.

Missing values are dropped pairwise so that both vectors stay aligned. A correlation
that is undefined (fewer than three pairs, or a constant vector) is NaN with a reason,
never an exception.

**Ties** (``ties=``): ``"exact"`` (default) ranks values that are equal on paper as ties, even
when floating-point summation left two means a few bits apart (see :func:`_tie_safe`);
``"paper"`` ranks the plain floats, as the HANNA authors' code (then scipy) did, and reproduces
their published tables (docs/hanna.md, "Ties").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from judgelab.stats.agreement import as_float_array

__all__ = ["Correlation", "correlate", "METHODS", "TIES"]

METHODS = ("pearson", "spearman", "kendall")
TIES = ("exact", "paper")
_NAN = float("nan")


@dataclass(frozen=True)
class Correlation:
    """A correlation (scipy-style: unpacks as ``r, p``) with its size, CI and the reason for any NaN.

    Attributes:
        r: the coefficient (NaN when undefined).
        p: two-sided p-value (NaN when undefined, or for a mean of per-group correlations).
        n: paired values (overall), systems (system level) or groups with a defined correlation
            (per group); for a mean over rater pairs, the smallest ``n`` of the pairs.
        reason: why ``r`` is NaN, or else why ``p`` is (empty when both are defined).
        ci_low, ci_high: bootstrap confidence interval (NaN when not computed or undefined).
        ci_note: why the CI is NaN, or a caveat on a defined one (fewer than 20 clusters).
        n_clusters: the clusters the estimate used and the bootstrap resamples: group labels with
            a rated row (per group), items (overall and system level).
        omitted: rows the estimate left out and why (rows without a group), empty when none.
    """

    r: float
    p: float
    n: int
    reason: str = ""
    ci_low: float = _NAN
    ci_high: float = _NAN
    ci_note: str = ""
    n_clusters: int = 0
    omitted: str = ""

    def __iter__(self):  # allows ``r, p = correlate(...)``
        yield self.r
        yield self.p

    @property
    def note(self) -> str:
        """One line naming the reason of every NaN field and what was left out (empty when nothing)."""
        parts = []
        if math.isnan(self.r):
            parts.append(f"r: {self.reason or 'undefined'}")
        elif math.isnan(self.p):
            parts.append(f"p: {self.reason or 'not defined for this statistic'}")
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            if not math.isnan(self.r):
                parts.append(f"ci: {self.ci_note or 'not computed'}")
        elif self.ci_note:  # a caveat on a defined interval (few clusters, resamples where r was undefined)
            parts.append(f"ci: {self.ci_note}")
        if self.omitted:
            parts.append(self.omitted)
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """``{"r", "p", "n", "n_clusters", "ci_low", "ci_high", "note"}`` (the columns of every correlation table)."""
        return {"r": self.r, "p": self.p, "n": self.n, "n_clusters": self.n_clusters, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "note": self.note}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([self.to_dict()])


def _tie_safe(v: np.ndarray) -> np.ndarray:
    """Values rounded to 40 significant bits (about 12 decimal digits, relative to each value's
    own magnitude) for ranking and for the constant check: means that are equal on paper but differ
    in the last bits by the order of summation (3.0000000000000004 vs 3.0) must be ties for
    Spearman and Kendall (not two ranks) and constant for every method. Relative rounding keeps
    measures on any scale (a metric near 1e-12 keeps its order); Pearson's r itself is computed on
    the unrounded values."""
    mantissa, exponent = np.frexp(v)
    return np.ldexp(np.round(mantissa * 2.0**40) / 2.0**40, exponent)


def _rankable(v: np.ndarray, ties: str) -> np.ndarray:
    """The values that are ranked and checked for constancy: tie-safe (``exact``) or as they are (``paper``)."""
    return _tie_safe(v) if ties == "exact" else v


def _check(method: str, ties: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}: {', '.join(METHODS)}")
    if ties not in TIES:
        raise ValueError(f"unknown ties {ties!r}: exact (values equal on paper are ties) or paper "
                         "(plain floats, as the published HANNA tables)")


def _nan(n: int, reason: str) -> Correlation:
    return Correlation(float("nan"), float("nan"), n, reason)


def correlate(x, y, method: str = "kendall", variant: str = "b", ties: str = "exact") -> Correlation:
    """Pearson, Spearman or Kendall correlation with its two-sided p-value.

    Kendall is tau-b by default (ties corrected, as scipy's default); ``variant="c"`` gives
    Stuart's tau-c. Pairs with a missing value (``None``, NaN of any dtype, ``pandas.NA``) are
    dropped; the result is NaN with a reason when fewer than three pairs remain or a vector is
    constant. ``ties``: ``exact`` (values equal on paper are ties) or ``paper`` (plain floats).

    Example:
        >>> round(correlate([1, 2, 3, 4, None], [1, 3, 2, 4, 5], "spearman").r, 3)
        0.8
    """
    _check(method, ties)
    x = as_float_array(x, "x").ravel()
    y = as_float_array(y, "y").ravel()
    if x.shape != y.shape:
        raise ValueError(f"vectors differ in length: {x.size} vs {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 3:
        return _nan(n, f"only {n} paired values")
    xs, ys = _rankable(x, ties), _rankable(y, ties)
    if np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return _nan(n, "constant ratings: correlation undefined")
    if method != "pearson":  # ranks of the tie-safe values; Pearson keeps every digit
        x, y = xs, ys
    if method == "pearson":
        res = _st.pearsonr(x, y)
    elif method == "spearman":
        res = _st.spearmanr(x, y)
    else:
        res = _st.kendalltau(x, y, variant=variant)
    return Correlation(float(res.statistic), float(res.pvalue), n)
