"""What the PPI++ estimator (:mod:`judgelab.stats.ppi`) and its planner (:mod:`judgelab.stats.ppi_plan`)
share: the checks of their inputs, the smallest sizes each interval can be computed from and is
trusted from (:func:`minimum_sizes`, :data:`VALID_FROM`), and the interval arithmetic — the t or
normal quantile, Welch–Satterthwaite degrees of freedom capped at the human-labelled terms', the
rule that a zero-width interval is none, and Cochran's skewness caveat. The formulas and their
references are in :mod:`judgelab.stats.ppi`'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special as _sp

from judgelab.stats.ppi_results import MeanCI

__all__ = ["QUANTILES", "VALID_FROM", "COCHRAN", "minimum_sizes"]

QUANTILES = ("t", "normal")
"""The intervals on offer: ``"t"`` (small-sample, default) and ``"normal"`` (ppi-python's)."""

VALID_FROM = {"t": 5, "normal": 50}
"""Human-rated items (per system) from which each interval is trusted; the planner never plans
fewer, and a result below it says so in its ``note``. Measured with ``benchmarks/interval_coverage.py``
(4,000 studies per cell, docs/intervals.md): ``"normal"`` covered at least 93.7% in every
scenario without skewed ratings from 50 on (92.8% at 30, 87–90% at 10). ``"t"`` covered at
least 94.3% from 3 on, but with 1 or 2 degrees of freedom its intervals are several times as
wide as at 10 and, on a 5-point scale, often absent (all ratings equal), so 5 is its floor.
Skewed ratings need more (Cochran's rule, in ``note`` and in the planner's ``valid_from``)."""

COCHRAN = 25.0  # Cochran (1977, §2.15): a mean's normal approximation needs n > 25 g1²


def minimum_sizes(quantile: str = "t", tuned: bool = True) -> tuple[int, int]:
    """Fewest ``(n, N)`` (human-rated items, judge-only items) an interval can be computed from.

    ``"normal"``: ``(2, 1)`` (ppi-python's formula). ``"t"``: ``n - k >= 1`` degrees of freedom
    for the labelled term (``k = 2`` with a tuned ``lam``, 1 with a fixed one) and ``N >= 2``
    for an unbiased variance of the judge-only ratings. Computable is not trustworthy: see
    :data:`VALID_FROM`.
    """
    if _quantile_name(quantile) == "normal":
        return 2, 1
    return (3 if tuned else 2), 2


def _quantile_name(quantile: str) -> str:
    if quantile not in QUANTILES:
        raise ValueError(f"quantile must be one of {', '.join(map(repr, QUANTILES))}, got {quantile!r}.")
    return quantile


def _vector(x, name: str, min_len: int, why: str = "") -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric ratings.") from None
    if a.ndim != 1:
        a = a.ravel() if a.ndim == 2 and 1 in a.shape else a
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {np.shape(x)}.")
    if a.size < min_len:
        raise ValueError(f"{name} needs at least {min_len} values, got {a.size}{why}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains missing or non-finite values; drop those items first.")
    return a


def _alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    return float(alpha)


def _why(quantile: str, tuned: bool, labelled: bool) -> str:
    if quantile == "normal":
        return ""
    if labelled:
        return (" (the t interval with a tuned lam spends one degree of freedom on lam)" if tuned
                else " (the t interval needs a degree of freedom)")
    return " (the t interval estimates the judge's variance on them)"


def _inputs(y, yhat, yhat_unlabeled, suffix: str = "", quantile: str = "normal", tuned: bool = True):
    n_min, N_min = minimum_sizes(quantile, tuned)
    y = _vector(y, "y" + suffix, n_min, _why(quantile, tuned, True))
    yhat = _vector(yhat, "yhat" + suffix, 2)
    if y.size != yhat.size:
        raise ValueError(f"y{suffix} and yhat{suffix} must rate the same items: {y.size} vs {yhat.size} values.")
    yhat_u = _vector(yhat_unlabeled, "yhat_unlabeled" + suffix, N_min, _why(quantile, tuned, False))
    return y, yhat, yhat_u


def _lam_value(lam) -> float | None:
    if lam is None:
        return None
    if not (isinstance(lam, (int, float, np.floating, np.integer)) and not isinstance(lam, bool) and math.isfinite(lam)):
        raise ValueError(f"lam must be None or a finite number, got {lam!r}.")
    return float(lam)


def _q(alpha: float, df: float) -> float:
    """Two-sided ``1 - alpha`` quantile: normal for ``df = inf``, else Student's t."""
    if math.isinf(df):
        return float(_sp.ndtri(1 - alpha / 2))
    return float(_sp.stdtrit(df, 1 - alpha / 2))  # scipy.stats.t.ppf's kernel, without its overhead


def _welch_df(parts: list[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of independent variance estimates
    ``(v_i, df_i)``: ``(Σ v_i)² / Σ (v_i² / df_i)`` over the terms with ``v_i > 0``; ``inf``
    when every ``df_i`` is infinite, NaN when every ``v_i`` is 0."""
    live = [(v, d) for v, d in parts if v > 0]
    if not live:
        return float("nan")
    if len(live) == 1:
        return float(live[0][1])
    denom = sum(v * v / d for v, d in live if math.isfinite(d))
    return math.inf if denom == 0 else float(sum(v for v, _ in live) ** 2 / denom)


def _capped_df(parts: list[tuple[float, float]], labelled: list[tuple[float, float]]) -> float:
    """Welch–Satterthwaite df of all terms, never more than that of the human-labelled terms
    (the judge-only terms, with their many degrees of freedom, must not lend them any)."""
    cap = _welch_df(labelled)
    if math.isnan(cap):  # no labelled variance: fall back on the labelled terms' own df
        cap = min(d for _, d in labelled)
    df = _welch_df(parts)
    return cap if math.isnan(df) else min(df, cap)


def _zero(se: float, est: float) -> bool:
    return not se > 1e-12 * max(1.0, abs(est))


def _ci(method: str, est: float, se: float, alpha: float, df: float, what: str) -> MeanCI:
    if _zero(se, est):
        nan = float("nan")
        return MeanCI(method, float(est), float(se), nan, nan, df,
                      f"zero standard error ({what}): a zero-width interval is not a {1 - alpha:.0%} interval; none is given")
    q = _q(alpha, df)
    return MeanCI(method, float(est), float(se), float(est - q * se), float(est + q * se), df)


def _skew_note(resid: np.ndarray) -> str:
    """Cochran's rule ``n > 25 g1²`` on the labelled residuals; the caveat when it fails."""
    n = resid.size
    d = resid - resid.mean()
    m2 = float(np.mean(d * d))
    if not m2 > 0:
        return ""
    g1 = float(np.mean(d**3)) / m2**1.5
    need = COCHRAN * g1 * g1
    if n > need:
        return ""
    return (f"skewed human ratings (sample skewness {g1:.2f} of y - lam*yhat): by Cochran's rule n > 25 g1² an "
            f"interval for this mean needs more than {math.floor(need)} human-rated items to keep its level; "
            f"with {n} it may cover less")


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
