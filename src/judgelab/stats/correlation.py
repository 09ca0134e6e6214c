"""Correlations with p-values at the three levels of meta-evaluation, and bootstrap CIs.

HANNA paper (story-evaluation-hanna), "meta-evaluation": for S systems and N story-prompts,
scores ``x[s, n]`` of a measure and ``y[s, n]`` of the human ratings,

* **overall**: ``corr(vec(x), vec(y))`` over all S × N rated texts;
* **system level**: ``corr(mean_n x[s, :], mean_n y[s, :])`` over the S systems;
* **per group** (the "story level" of HANNA, the "summary level" of summarization):
  for each story-prompt n, ``corr(x[:, n], y[:, n])`` across systems, averaged over the
  story-prompts where it is defined.

Missing values are dropped pairwise so that both vectors stay aligned. A correlation
that is undefined (fewer than three pairs, or a constant vector) is NaN with a reason,
never an exception.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["Correlation", "correlate", "overall", "system_level", "per_group", "bootstrap_ci", "METHODS"]

METHODS = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Correlation:
    r: float
    p: float
    n: int
    reason: str = ""

    def __iter__(self):  # allows ``r, p = correlate(...)``
        yield self.r
        yield self.p


def _nan(n: int, reason: str) -> Correlation:
    return Correlation(float("nan"), float("nan"), n, reason)


def correlate(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Pearson, Spearman or Kendall correlation with its two-sided p-value.

    Kendall is tau-b by default (ties corrected, as scipy's default); ``variant="c"`` gives
    Stuart's tau-c. NaN pairs are dropped; the result is NaN with a reason when fewer than
    three pairs remain or a vector is constant.
    """
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}: {', '.join(METHODS)}")
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"vectors differ in length: {x.size} vs {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 3:
        return _nan(n, f"only {n} paired values")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return _nan(n, "constant ratings: correlation undefined")
    if method == "pearson":
        res = _st.pearsonr(x, y)
    elif method == "spearman":
        res = _st.spearmanr(x, y)
    else:
        res = _st.kendalltau(x, y, variant=variant)
    return Correlation(float(res.statistic), float(res.pvalue), n)


def overall(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Correlation over all rated texts pooled (HANNA "overall")."""
    return correlate(np.ravel(x), np.ravel(y), method, variant)


def system_level(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Correlation of per-system means; ``x`` and ``y`` are systems × items (NaN allowed)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    both = ~(np.isnan(x) | np.isnan(y))  # means over the items rated by both, per system
    with np.errstate(invalid="ignore"):
        mx = np.where(both, x, 0).sum(1) / both.sum(1)
        my = np.where(both, y, 0).sum(1) / both.sum(1)
    return correlate(mx, my, method, variant)


def per_group(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Mean over groups (columns) of the correlation across systems (rows) within each group.

    ``r`` is the mean of the defined per-group correlations, ``n`` how many were defined and
    ``p`` is NaN (per-group p-values are not combined). NaN with a reason when none is defined.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    values = [correlate(x[:, j], y[:, j], method, variant).r for j in range(x.shape[1])]
    defined = [v for v in values if not np.isnan(v)]
    if not defined:
        return _nan(0, "no group has a defined correlation")
    return Correlation(float(np.mean(defined)), float("nan"), len(defined))


def bootstrap_ci(x, y, method: str = "kendall", n_boot: int = 1000, level: float = 0.95, seed: int = 0,
                 variant: str = "b") -> tuple[float, float]:
    """Percentile bootstrap CI of a correlation, resampling items (pairs) with replacement."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if x.size < 3:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        idx = rng.integers(0, x.size, x.size)
        r = correlate(x[idx], y[idx], method, variant).r
        if not np.isnan(r):
            draws.append(r)
    if not draws:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    return float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))
