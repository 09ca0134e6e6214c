"""Correlations with p-values at the three levels of meta-evaluation, with cluster bootstrap CIs.

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

:func:`level_correlation` is the one dispatch over the levels, on a tidy table (one row per
system and item); :func:`overall`, :func:`system_level` and :func:`per_group` are the same
computation on systems × groups matrices (HANNA's score files). Confidence intervals are
cluster bootstrap intervals (:func:`judgelab.stats.bootstrap.cluster_bootstrap_ci`):

* overall and system level: the **item** (``item_id``) is the cluster; an item is resampled
  with all its rows (every system's text of that item, and every sample behind a mean).
  At the system level the systems stay fixed and the items are resampled ("boot-inputs",
  Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization Evaluation Metrics
  using Resampling Methods", TACL, §4): the CI says how much the ranking correlation would
  move on other items for these systems. Resampling the 10-16 systems themselves would give
  mostly undefined or degenerate correlations at the sizes of the benchmarks.
* per-group level: the **group** is the cluster; the statistic is the mean of the per-group
  correlations, so a group drawn twice counts twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as _st

__all__ = ["Correlation", "correlate", "overall", "system_level", "per_group", "level_correlation",
           "mean_level_correlation", "matrix_frame", "METHODS", "LEVELS", "CLUSTER_OF_LEVEL"]

METHODS = ("pearson", "spearman", "kendall")
LEVELS = ("overall", "group", "system")
CLUSTER_OF_LEVEL = {"overall": "item_id", "system": "item_id", "group": "group"}
_NAN = float("nan")


@dataclass(frozen=True)
class Correlation:
    """A correlation (scipy-style: unpacks as ``r, p``) with its size, CI and the reason for any NaN.

    Attributes:
        r: the coefficient (NaN when undefined).
        p: two-sided p-value (NaN when undefined, or for a mean of per-group correlations).
        n: paired values (overall), systems (system level) or defined groups (per group).
        reason: why ``r`` is NaN, or else why ``p`` is (empty when both are defined).
        ci_low, ci_high: bootstrap confidence interval (NaN when not computed or undefined).
        ci_note: why the CI is NaN.
    """

    r: float
    p: float
    n: int
    reason: str = ""
    ci_low: float = _NAN
    ci_high: float = _NAN
    ci_note: str = ""

    def __iter__(self):  # allows ``r, p = correlate(...)``
        yield self.r
        yield self.p

    @property
    def note(self) -> str:
        """One line naming the reason of every NaN field (empty when nothing is NaN)."""
        parts = []
        if math.isnan(self.r):
            parts.append(f"r: {self.reason or 'undefined'}")
        elif math.isnan(self.p):
            parts.append(f"p: {self.reason or 'not defined for this statistic'}")
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            if not math.isnan(self.r):
                parts.append(f"ci: {self.ci_note or 'not computed'}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """``{"r", "p", "n", "ci_low", "ci_high", "note"}`` (the column names of every correlation table)."""
        return {"r": self.r, "p": self.p, "n": self.n, "ci_low": self.ci_low, "ci_high": self.ci_high, "note": self.note}

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
    xs, ys = _tie_safe(x), _tie_safe(y)
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


def overall(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Correlation over all rated texts pooled (HANNA "overall")."""
    return correlate(np.ravel(x), np.ravel(y), method, variant)


def system_level(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Correlation of per-system means; ``x`` and ``y`` are systems × items (NaN allowed: the
    means are over the items rated in both). :func:`level_correlation` on :func:`matrix_frame`."""
    return level_correlation(matrix_frame(x, y), "system", method, variant)


def per_group(x, y, method: str = "kendall", variant: str = "b") -> Correlation:
    """Mean over groups (columns) of the correlation across systems (rows) within each group.

    ``r`` is the mean of the defined per-group correlations, ``n`` how many were defined and
    ``p`` is NaN (per-group p-values are not combined). NaN with a reason when none is defined.
    :func:`level_correlation` on :func:`matrix_frame`.
    """
    return level_correlation(matrix_frame(x, y), "group", method, variant)


def matrix_frame(x, y):
    """Systems × groups matrices as the tidy table :func:`level_correlation` reads (one row per
    system and group; the group is the item)."""
    import pandas as pd

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    s, g = x.shape
    groups = np.tile(np.arange(g).astype(str), s)
    return pd.DataFrame({"system": np.repeat(np.arange(s).astype(str), g), "item_id": groups, "group": groups,
                         "score_x": x.ravel(), "score_y": y.ravel()})


def _level_r(frame, level: str, method: str, variant: str, x: str, y: str) -> Correlation:
    """The point estimate at one level (pairs with a NaN dropped)."""
    both = frame.dropna(subset=[x, y])
    if level == "overall":
        return correlate(both[x], both[y], method, variant)
    if level == "system":
        means = both.groupby("system")[[x, y]].mean()
        return correlate(means[x], means[y], method, variant)
    per = _group_rs(both, method, variant, x, y)
    defined = per[~np.isnan(per)]
    if defined.size == 0:
        return _nan(0, "no group has a defined correlation (each needs three systems with varied ratings)")
    return Correlation(float(defined.mean()), _NAN, int(defined.size), "per-group p-values are not combined")


def _group_rs(frame, method: str, variant: str, x: str, y: str) -> np.ndarray:
    """The correlation within each group (sorted by group), on numpy slices (no per-group DataFrame)."""
    import pandas as pd

    codes, _ = pd.factorize(frame["group"], sort=True)
    keep = codes >= 0
    codes = codes[keep]
    xv, yv = frame[x].to_numpy(dtype=float)[keep], frame[y].to_numpy(dtype=float)[keep]
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.array([correlate(xs, ys, method, variant).r
                     for xs, ys in zip(np.split(xv[order], bounds), np.split(yv[order], bounds))], dtype=float)


def _check_level(frame, level: str) -> str:
    if level not in LEVELS:
        from judgelab.errors import JudgelabError

        raise JudgelabError(f"unknown level {level!r}: {', '.join(LEVELS)}")
    if level == "group" and ("group" not in frame or frame["group"].isna().all()):
        return "no group column: per-group correlation needs groups"
    return ""


def mean_level_correlation(frame, pairs: list[tuple[str, str]], level: str, method: str = "kendall",
                           variant: str = "b", n_resamples: int = 0, seed: int = 0,
                           confidence_level: float = 0.95) -> Correlation:
    """Mean over column ``pairs`` of the correlation at ``level``, with one cluster bootstrap CI.

    The statistic of HANNA's human baseline (each rater vs the mean, averaged over raters) and of
    the mean pairwise correlation between raters (Chiang & Lee 2023, Table 6). All pairs are
    resampled together (the same items or groups in every resample).

    Args:
        frame: one row per (system, item) with columns ``system``, ``item_id``, ``group`` and the
            score columns named in ``pairs`` (NaN = not rated).
        pairs: (x column, y column) pairs.
        level: ``overall``, ``group`` or ``system``.
        method: ``kendall``, ``pearson`` or ``spearman``; ``variant``: Kendall's ``b`` or ``c``.
        n_resamples: bootstrap resamples (0: no CI); ``seed``; ``confidence_level``.

    Returns:
        A :class:`Correlation`; ``p`` is NaN for a mean over several pairs, ``n`` is the smallest
        ``n`` of the pairs.

    Example:
        >>> import pandas as pd
        >>> t = pd.DataFrame({"system": list("aabbcc"), "item_id": list("121212"), "group": list("121212"),
        ...                   "h1": [1, 2, 3, 4, 5, 6], "h2": [2, 1, 3, 5, 4, 6], "m": [1.5, 1.5, 3, 4.5, 4.5, 6]})
        >>> round(mean_level_correlation(t, [("h1", "m"), ("h2", "m")], "overall", "pearson").r, 3)
        0.971
    """
    if not pairs:
        return _nan(0, "no pairs of raters")
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}: {', '.join(METHODS)}")
    missing = _check_level(frame, level)
    if missing:
        return _nan(0, missing)
    points = [_level_r(frame, level, method, variant, x, y) for x, y in pairs]
    if len(points) == 1:
        point = points[0]
    else:
        rs = np.array([c.r for c in points])
        if np.isnan(rs).all():
            return _nan(0, f"no pair has a defined correlation ({points[0].reason})")
        point = Correlation(float(np.nanmean(rs)), _NAN, int(min(c.n for c in points if not math.isnan(c.r))),
                            f"a mean over {int((~np.isnan(rs)).sum())} rater pairs has no p-value")
    if math.isnan(point.r):
        return point
    if n_resamples <= 0:
        return replace(point, ci_note="no bootstrap (n_resamples 0)")
    ci = _bootstrap(frame, pairs, level, method, variant, n_resamples, seed, confidence_level)
    return replace(point, ci_low=ci.low, ci_high=ci.high, ci_note=ci.reason)


def _fast_r(x: np.ndarray, y: np.ndarray, method: str, variant: str) -> float:
    """The coefficient only (no p-value), as :func:`correlate` computes it: NaN pairs dropped,
    NaN for fewer than three pairs or a constant vector."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    xs, ys = _tie_safe(x), _tie_safe(y)
    if x.size < 3 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return _NAN
    if method != "pearson":
        x, y = xs, ys
    if method == "kendall":
        return float(_st.kendalltau(x, y, variant=variant).statistic)
    if method == "spearman":
        x, y = _st.rankdata(x), _st.rankdata(y)
    return float(np.corrcoef(x, y)[0, 1])


def _bootstrap(frame, pairs, level, method, variant, n_resamples, seed, confidence_level):
    import pandas as pd

    from judgelab.stats.bootstrap import cluster_bootstrap_ci

    if level == "group":
        # each group's correlation does not change when groups are resampled: resample the table of them
        rs = np.column_stack([_group_rs(frame.dropna(subset=[x, y]), method, variant, x, y) for x, y in pairs])

        def group_statistic(rows, _clusters) -> float:
            drawn = rs[rows]
            defined = ~np.isnan(drawn)
            per_pair = [drawn[defined[:, j], j].mean() for j in range(drawn.shape[1]) if defined[:, j].any()]
            return float(np.mean(per_pair)) if per_pair else _NAN

        table = pd.DataFrame({"group": np.arange(rs.shape[0])})
        return cluster_bootstrap_ci(table, group_statistic, "group", n_resamples, confidence_level, seed, rows=True)
    cols = sorted({c for pair in pairs for c in pair})
    table = frame[["system", "item_id", *cols]].reset_index(drop=True)
    values = {c: table[c].to_numpy(dtype=float) for c in cols}
    systems, system_labels = pd.factorize(table["system"])

    def statistic(rows, _clusters) -> float:
        rs = []
        for x, y in pairs:
            xv, yv = values[x][rows], values[y][rows]
            if level == "system":
                both = ~(np.isnan(xv) | np.isnan(yv))
                s = systems[rows][both]
                counts = np.bincount(s, minlength=len(system_labels))
                with np.errstate(invalid="ignore", divide="ignore"):
                    xv = np.bincount(s, xv[both], len(system_labels)) / counts
                    yv = np.bincount(s, yv[both], len(system_labels)) / counts
            rs.append(_fast_r(xv, yv, method, variant))
        return float(np.nanmean(rs)) if not np.isnan(rs).all() else _NAN

    return cluster_bootstrap_ci(table, statistic, CLUSTER_OF_LEVEL[level], n_resamples, confidence_level, seed, rows=True)


def level_correlation(frame, level: str, method: str = "kendall", variant: str = "b", x: str = "score_x",
                      y: str = "score_y", n_resamples: int = 0, seed: int = 0,
                      confidence_level: float = 0.95) -> Correlation:
    """Correlation of columns ``x`` and ``y`` at one level, with an item- or group-clustered bootstrap CI.

    The one level dispatch of judgelab (``agree``, the HANNA tables and the recipes use it).
    See the module docstring for the levels and the bootstrap clusters.

    Args:
        frame: one row per (system, item): ``system``, ``item_id``, ``group`` (for the per-group
            level) and the two score columns.
        level: ``overall``, ``group`` or ``system``.
        method: ``kendall`` (tau-b, or tau-c with ``variant="c"``), ``pearson`` or ``spearman``.
        n_resamples: bootstrap resamples for ``ci_low``/``ci_high`` (0: no CI).
        seed: seeds the resampling; ``confidence_level``: e.g. 0.95.

    Returns:
        A :class:`Correlation` (``r, p, n, ci_low, ci_high`` and ``note`` naming each NaN's reason).

    Raises:
        JudgelabError: an unknown level.

    Example:
        >>> import numpy as np
        >>> x = np.arange(12.0).reshape(3, 4); y = x + np.array([[0, 1, 0, 1]] * 3)
        >>> round(level_correlation(matrix_frame(x, y), "system", "pearson").r, 6)
        1.0
    """
    return mean_level_correlation(frame, [(x, y)], level, method, variant, n_resamples, seed, confidence_level)
