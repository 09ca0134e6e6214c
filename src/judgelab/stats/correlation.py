"""Correlations with p-values at the three levels of meta-evaluation, with cluster bootstrap CIs.

HANNA paper (story-evaluation-hanna), "meta-evaluation": for S systems and N story-prompts,
scores ``x[s, n]`` of a measure and ``y[s, n]`` of the human ratings,

* **overall**: ``corr(vec(x), vec(y))`` over all S × N rated texts;
* **system level**: ``corr(mean_n x[s, :], mean_n y[s, :])`` over the S systems;
* **per group** (the "story level" of HANNA, the "summary level" of summarization):
  for each story-prompt n, ``corr(x[:, n], y[:, n])`` across systems, averaged over the
  story-prompts where it is defined.

Each correlation is :func:`judgelab.stats.coefficient.correlate` (missing values dropped pairwise;
an undefined correlation is NaN with a reason, never an exception).

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

Several rater pairs (a human baseline, the mean pairwise correlation) are matched by **label**,
never by position: each pair's per-group correlations are indexed by group label and joined on
it, so a group that one pair lacks (a rater skipped it) is missing for that pair only, and the
bootstrap resamples group labels, drawing the same groups for every pair. Rows without a group
(None, NaN, an empty or blank label such as a CSV's empty cell) are no group; the note says how
many rows were left out. Every estimate reports its ``n`` and ``n_clusters`` (the groups or
items it used and the bootstrap resampled).

System means are numpy's ``np.mean`` of each system's values in row order (pairwise summation),
as the HANNA authors' code computed them. **Ties** (``ties=``): ``"exact"`` (default) ranks values
that are equal on paper as ties, even when floating-point summation left two means a few bits
apart (see :func:`judgelab.stats.coefficient._tie_safe`); ``"paper"`` ranks the plain floats, as the authors' code (then
scipy) did, and reproduces their published tables (docs/hanna.md, "Ties"), where GPT and TD-VAE, both
718/288 on Complexity, are ranked apart by their last bits.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from judgelab.stats.agreement import as_float_array
from judgelab.stats.coefficient import Correlation, _check, _nan, correlate

__all__ = ["overall", "system_level", "per_group", "level_correlation", "mean_level_correlation", "matrix_frame",
           "LEVELS", "CLUSTER_OF_LEVEL"]

LEVELS = ("overall", "group", "system")
CLUSTER_OF_LEVEL = {"overall": "item_id", "system": "item_id", "group": "group"}
_NAN = float("nan")


def overall(x, y, method: str = "kendall", variant: str = "b", ties: str = "exact") -> Correlation:
    """Correlation over all rated texts pooled (HANNA "overall")."""
    return correlate(np.ravel(as_float_array(x, "x")), np.ravel(as_float_array(y, "y")), method, variant, ties)


def system_level(x, y, method: str = "kendall", variant: str = "b", ties: str = "exact") -> Correlation:
    """Correlation of per-system means; ``x`` and ``y`` are systems × items (NaN allowed: the
    means are over the items rated in both). :func:`level_correlation` on :func:`matrix_frame`."""
    return level_correlation(matrix_frame(x, y), "system", method, variant, ties=ties)


def per_group(x, y, method: str = "kendall", variant: str = "b", ties: str = "exact") -> Correlation:
    """Mean over groups (columns) of the correlation across systems (rows) within each group.

    ``r`` is the mean of the defined per-group correlations, ``n`` how many were defined and
    ``p`` is NaN (per-group p-values are not combined). NaN with a reason when none is defined.
    :func:`level_correlation` on :func:`matrix_frame`.
    """
    return level_correlation(matrix_frame(x, y), "group", method, variant, ties=ties)


def matrix_frame(x, y):
    """Systems × groups matrices as the tidy table :func:`level_correlation` reads (one row per
    system and group, in the matrices' order; the group is the item)."""
    import pandas as pd

    x = as_float_array(x, "x")
    y = as_float_array(y, "y")
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"expected two systems × groups matrices of one shape; got {x.shape} and {y.shape}")
    s, g = x.shape
    groups = np.tile(np.arange(g).astype(str), s)
    return pd.DataFrame({"system": np.repeat(np.arange(s).astype(str), g), "item_id": groups, "group": groups,
                         "score_x": x.ravel(), "score_y": y.ravel()})


def _level_r(frame, level: str, method: str, variant: str, x: str, y: str, ties: str) -> Correlation:
    """The point estimate of one pair at the overall or system level (pairs with a NaN dropped).

    System means are numpy's ``np.mean`` of each system's values in row order (pairwise summation),
    the means of the HANNA authors' code; ``ties`` decides whether means equal on paper are ties."""
    import pandas as pd

    xv, yv = as_float_array(frame[x], x), as_float_array(frame[y], y)
    both = ~(np.isnan(xv) | np.isnan(yv))
    xv, yv = xv[both], yv[both]
    if level == "system":
        codes, labels = pd.factorize(frame["system"].to_numpy()[both], sort=True)
        xv = np.array([np.mean(xv[codes == k]) for k in range(len(labels))])
        yv = np.array([np.mean(yv[codes == k]) for k in range(len(labels))])
    return correlate(xv, yv, method, variant, ties)


def _group_rs(frame, method: str, variant: str, x: str, y: str, ties: str):
    """The correlation within each group of one pair, as a Series indexed by group label (sorted);
    a group without a row rated in both columns has no entry. On numpy slices (no per-group DataFrame)."""
    import pandas as pd

    both = frame.dropna(subset=[x, y])
    codes, labels = pd.factorize(both["group"], sort=True)
    keep = codes >= 0
    if not keep.any():
        return pd.Series([], index=pd.Index([], dtype=object), dtype=float)
    codes = codes[keep]
    xv, yv = both[x].to_numpy(dtype=float)[keep], both[y].to_numpy(dtype=float)[keep]
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    rs = [correlate(xs, ys, method, variant, ties).r
          for xs, ys in zip(np.split(xv[order], bounds), np.split(yv[order], bounds))]
    return pd.Series(rs, index=labels, dtype=float)


def _group_table(frame, pairs, method: str, variant: str, ties: str):
    """Groups × pairs: each pair's per-group correlations joined on the group label (NaN where a
    pair has no rated row in a group, or its correlation is undefined). Rows are the group labels
    with a rated row for at least one pair, sorted: the clusters of the group-level bootstrap."""
    import pandas as pd

    columns = [_group_rs(frame, method, variant, x, y, ties) for x, y in pairs]
    return pd.concat(columns, axis=1, keys=range(len(pairs)), join="outer").sort_index()


def _with_groups(frame, pairs):
    """The frame with blank group labels (a CSV's empty cell) as missing, and a note on the rated
    rows without a group (empty when every rated row has one, or none has)."""
    group = frame["group"]
    blank = group.map(lambda v: isinstance(v, str) and not v.strip()).astype(bool)
    group = group.where(~blank & group.notna())
    rated = _rated(frame, pairs)
    missing = int((group.isna().to_numpy() & rated).sum())
    note = f"{missing} of {int(rated.sum())} rated rows have no group and are left out" if 0 < missing < rated.sum() else ""
    return frame.assign(group=group), note


def _check_level(frame, level: str) -> str:
    if level not in LEVELS:
        from judgelab.errors import JudgelabError

        raise JudgelabError(f"unknown level {level!r}: {', '.join(LEVELS)}")
    if level == "group" and ("group" not in frame or frame["group"].isna().all()):
        return "no group column: per-group correlation needs groups"
    return ""


def _group_point(column) -> Correlation:
    """The mean of one pair's defined per-group correlations."""
    rs = column.to_numpy(dtype=float)
    defined = rs[~np.isnan(rs)]
    if defined.size == 0:
        return _nan(0, "no group has a defined correlation (each needs three systems with varied ratings)")
    return Correlation(float(defined.mean()), _NAN, int(defined.size), "per-group p-values are not combined")


def mean_level_correlation(frame, pairs: list[tuple[str, str]], level: str, method: str = "kendall",
                           variant: str = "b", n_resamples: int = 0, seed: int = 0,
                           confidence_level: float = 0.95, ties: str = "exact",
                           ci_method: str = "percentile") -> Correlation:
    """Mean over column ``pairs`` of the correlation at ``level``, with one cluster bootstrap CI.

    The statistic of HANNA's human baseline (each rater vs the mean, averaged over raters) and of
    the mean pairwise correlation between raters (Chiang & Lee 2023, Table 6). The pairs are
    matched by label: at the per-group level each pair's per-group correlations are joined on the
    group label (a group a rater skipped is missing for that rater's pairs only), and every
    resample draws the same groups (or items) for all pairs.

    Args:
        frame: one row per (system, item) with columns ``system``, ``item_id``, ``group`` and the
            score columns named in ``pairs`` (NaN = not rated; a blank group label = no group).
        pairs: (x column, y column) pairs.
        level: ``overall``, ``group`` or ``system``.
        method: ``kendall``, ``pearson`` or ``spearman``; ``variant``: Kendall's ``b`` or ``c``.
        n_resamples: bootstrap resamples (0: no CI); ``seed``; ``confidence_level``.
        ties: ``exact`` (default: values equal on paper are ties) or ``paper`` (the plain floats,
            as the published HANNA tables; see the module docstring).
        ci_method: the bootstrap interval, one of :data:`judgelab.stats.bootstrap.METHODS`
            (``percentile``, ``basic``, ``BCa``, ``expanded``; docs/intervals.md has their coverage).

    Returns:
        A :class:`Correlation`; ``p`` is NaN for a mean over several pairs, ``n`` is the smallest
        ``n`` of the pairs, ``n_clusters`` the groups (per group) or items the estimate used.

    Example:
        >>> import pandas as pd
        >>> t = pd.DataFrame({"system": list("aabbcc"), "item_id": list("121212"), "group": list("121212"),
        ...                   "h1": [1, 2, 3, 4, 5, 6], "h2": [2, 1, 3, 5, 4, 6], "m": [1.5, 1.5, 3, 4.5, 4.5, 6]})
        >>> round(mean_level_correlation(t, [("h1", "m"), ("h2", "m")], "overall", "pearson").r, 3)
        0.971
    """
    import pandas as pd

    if not pairs:
        return _nan(0, "no pairs of raters")
    _check(method, ties)
    omitted, table = "", None
    if level == "group" and "group" in frame:
        frame, omitted = _with_groups(frame, pairs)
    missing = _check_level(frame, level)
    if missing:
        return _nan(0, missing)
    if level == "group":
        table = _group_table(frame, pairs, method, variant, ties)
        points = [_group_point(table[j]) for j in range(len(pairs))]
        clusters = len(table)
    else:
        points = [_level_r(frame, level, method, variant, x, y, ties) for x, y in pairs]
        clusters = len(pd.unique(frame["item_id"].to_numpy()[_rated(frame, pairs)]))
    if len(points) == 1:
        point = points[0]
    else:
        rs = np.array([c.r for c in points])
        if np.isnan(rs).all():
            return replace(_nan(0, f"no pair has a defined correlation ({points[0].reason})"), n_clusters=clusters,
                           omitted=omitted)
        point = Correlation(float(np.nanmean(rs)), _NAN, int(min(c.n for c in points if not math.isnan(c.r))),
                            f"a mean over {int((~np.isnan(rs)).sum())} rater pairs has no p-value")
    point = replace(point, n_clusters=clusters, omitted=omitted)
    if math.isnan(point.r):
        return point
    if n_resamples <= 0:
        return replace(point, ci_note="no bootstrap (n_resamples 0)")
    from judgelab.stats.bootstrap_schemes import label_table_ci, paired_correlation_ci

    if table is not None:  # resample group labels: the rows of the groups × pairs table
        ci = label_table_ci(table, "group", n_resamples, confidence_level, seed, ci_method)
    else:  # resample items with all their rated rows
        rated = frame.loc[_rated(frame, pairs)].reset_index(drop=True)
        ci = paired_correlation_ci(rated, pairs, level, method, variant, ties, n_resamples, confidence_level, seed,
                                   ci_method)
    return replace(point, ci_low=ci.low, ci_high=ci.high, ci_note=ci.message)


def _rated(frame, pairs) -> np.ndarray:
    """Rows rated in both columns of at least one pair."""
    rated = np.zeros(len(frame), dtype=bool)
    for x, y in pairs:
        rated |= (frame[x].notna() & frame[y].notna()).to_numpy()
    return rated


def level_correlation(frame, level: str, method: str = "kendall", variant: str = "b", x: str = "score_x",
                      y: str = "score_y", n_resamples: int = 0, seed: int = 0,
                      confidence_level: float = 0.95, ties: str = "exact",
                      ci_method: str = "percentile") -> Correlation:
    """Correlation of columns ``x`` and ``y`` at one level, with an item- or group-clustered bootstrap CI.

    The one level dispatch of judgelab (``agree``, the HANNA tables and the recipes use it).
    See the module docstring for the levels, the bootstrap clusters and ``ties``.

    Args:
        frame: one row per (system, item): ``system``, ``item_id``, ``group`` (for the per-group
            level) and the two score columns.
        level: ``overall``, ``group`` or ``system``.
        method: ``kendall`` (tau-b, or tau-c with ``variant="c"``), ``pearson`` or ``spearman``.
        n_resamples: bootstrap resamples for ``ci_low``/``ci_high`` (0: no CI).
        seed: seeds the resampling; ``confidence_level``: e.g. 0.95.
        ties: ``exact`` (default) or ``paper`` (as the published HANNA tables).
        ci_method: the bootstrap interval (``percentile``, ``basic``, ``BCa``, ``expanded``).

    Returns:
        A :class:`Correlation` (``r, p, n, n_clusters, ci_low, ci_high`` and ``note`` naming each NaN's reason).

    Raises:
        JudgelabError: an unknown level.

    Example:
        >>> import numpy as np
        >>> x = np.arange(12.0).reshape(3, 4); y = x + np.array([[0, 1, 0, 1]] * 3)
        >>> round(level_correlation(matrix_frame(x, y), "system", "pearson").r, 6)
        1.0
    """
    return mean_level_correlation(frame, [(x, y)], level, method, variant, n_resamples, seed, confidence_level, ties,
                                  ci_method)
