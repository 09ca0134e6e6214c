"""Cluster bootstrap confidence intervals, through :func:`scipy.stats.bootstrap`.

Ratings are not independent rows: a judge's several samples of one item, or the sixteen
summaries of one source document, move together. Resampling rows would treat them as
independent and give intervals that are too narrow. Here the *clusters* (items, documents,
story-prompts) are resampled with replacement, each bringing all its rows, and the
statistic is recomputed on the rebuilt table (Davison & Hinkley 1997, §3.8, "cluster
bootstrap"; the resampling itself is scipy's).

Only the cluster indices go through scipy; the statistic sees a table built from the
resampled clusters (a cluster drawn twice appears twice, under two distinct cluster labels,
so a per-cluster statistic such as a per-document correlation counts it twice).

:func:`label_table_ci` and :func:`paired_correlation_ci` are the two resampling schemes of
:func:`judgelab.stats.correlation.mean_level_correlation`: group labels (rows of a table of
per-group correlations, one column per rater pair, joined on the label) and items with all their
rows; every pair sees the same draws.

Four intervals from the same resamples (``method``):

* ``"percentile"`` (the default): the ``alpha/2`` and ``1 - alpha/2`` quantiles of the
  resampled statistic. Too narrow with few clusters: it behaves like ``estimate ± z σ̂`` with
  ``σ̂`` computed with divisor ``k`` instead of ``k - 1`` (Hesterberg 2015, §4).
* ``"basic"``: the percentile interval reflected about the estimate (Davison & Hinkley 1997,
  eq. 5.6); the same width.
* ``"BCa"``: bias-corrected and accelerated (Efron 1987; scipy's implementation), with the
  acceleration from the leave-one-cluster-out jackknife; undefined (NaN with a reason) when
  the statistic is undefined in a resample or on a leave-one-cluster-out table.
* ``"expanded"``: Hesterberg's expanded percentile interval — the percentile interval at the
  levels ``alpha'/2``, ``1 - alpha'/2`` with ``z_{1-alpha'/2} = sqrt(k/(k-1)) t_{1-alpha/2, k-1}``
  (``k`` clusters), which corrects the narrowness of the percentile interval at small ``k``
  and is what judgelab recommends (docs/intervals.md has the coverages measured for each).

No interval comes from fewer than :data:`MIN_CLUSTERS` clusters (NaN, with the reason); an
interval from fewer than :data:`FEW_CLUSTERS` carries a ``note``; an interval of zero width
(every resample gives the same value) is never reported: its bounds are NaN, with the reason.

References:
    Davison & Hinkley (1997). Bootstrap Methods and their Application, §3.8, §5.2–5.3.
    Efron (1987). Better bootstrap confidence intervals. JASA 82(397):171–185.
    Hesterberg (2015). What teachers should know about the bootstrap. The American
    Statistician 69(4):371–386 (arXiv:1411.5279), §4 (the expanded percentile interval).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["ConfidenceInterval", "cluster_bootstrap_ci", "label_table_ci", "paired_correlation_ci", "METHODS",
           "MIN_CLUSTERS", "FEW_CLUSTERS"]

METHODS = ("percentile", "basic", "BCa", "expanded")
"""The intervals :func:`cluster_bootstrap_ci` offers (its ``method``)."""

MIN_CLUSTERS = 5
"""Fewer clusters than this give no interval (NaN with the reason): with 4 clusters there are 35
distinct resamples, and every method covered 77–85% of a clustered mean in simulation
(docs/intervals.md)."""

FEW_CLUSTERS = 20
"""Intervals from fewer clusters than this carry a ``note``: at 5–10 clusters the percentile, basic
and BCa intervals covered 84–93% of a clustered mean or a correlation in simulation, the expanded
one 92.5–97% (docs/intervals.md)."""


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap interval.

    Attributes:
        low, high: the bounds; NaN when there is no interval (``reason`` says why).
        confidence_level: e.g. 0.95.
        n_resamples: bootstrap resamples drawn.
        clusters: distinct clusters resampled.
        reason: why ``low``/``high`` are NaN (empty when they are defined).
        method: the interval (one of :data:`METHODS`).
        note: a caveat on a defined interval: few clusters, or resamples where the statistic
            was undefined (empty when there is none).
    """

    low: float
    high: float
    confidence_level: float
    n_resamples: int
    clusters: int
    reason: str = ""
    method: str = "percentile"
    note: str = ""

    @property
    def message(self) -> str:
        """The reason for NaN bounds, else the caveat (what a table's note column should show)."""
        return self.reason or self.note

    def to_dict(self) -> dict[str, float | int | str]:
        return {"ci_low": self.low, "ci_high": self.high}


def _undefined(confidence_level: float, n_resamples: int, clusters: int, reason: str, method: str,
               note: str = "") -> ConfidenceInterval:
    return ConfidenceInterval(float("nan"), float("nan"), confidence_level, n_resamples, clusters, reason, method, note)


def expanded_level(confidence_level: float, clusters: int) -> float:
    """Hesterberg's expanded confidence level for ``k`` clusters: ``1 - alpha'`` with
    ``z_{1-alpha'/2} = sqrt(k/(k-1)) t_{1-alpha/2, k-1}`` (always above ``confidence_level``).

    Example:
        >>> round(expanded_level(0.95, 30), 4)
        0.9625
    """
    from scipy import special

    k = clusters
    t = float(special.stdtrit(k - 1, 1 - (1 - confidence_level) / 2))
    return float(1 - 2 * special.ndtr(-math.sqrt(k / (k - 1)) * t))


def cluster_bootstrap_ci(
    frame: pd.DataFrame,
    statistic: Callable[..., float],
    cluster: str,
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
    rows: bool = False,
    *,
    min_clusters: int = MIN_CLUSTERS,
    batch_statistic: Callable[[np.ndarray], np.ndarray] | None = None,
) -> ConfidenceInterval:
    """Bootstrap CI of ``statistic(frame)``, resampling the values of column ``cluster``.

    Args:
        frame: one row per observation; ``frame[cluster]`` names the cluster of each row.
        statistic: maps a table of the same columns to a number (NaN when undefined).
        cluster: the column whose values are resampled with all their rows.
        n_resamples: bootstrap resamples (scipy's ``n_resamples``).
        confidence_level: e.g. 0.95.
        seed: seeds :class:`numpy.random.Generator`, so a CI is reproducible.
        method: ``"percentile"`` (default, unchanged), ``"basic"``, ``"BCa"`` or ``"expanded"``
            (see the module docstring; ``"expanded"`` keeps its level best with few
            clusters). All use the same resamples for a given ``seed``.
        rows: the fast path: ``statistic(rows, clusters)`` gets the positions of the resampled
            rows in ``frame`` and each row's cluster number in the resample (numpy arrays)
            instead of a rebuilt table. The same resamples; about 20 times faster for a
            correlation on a few hundred rows (measured: no per-resample DataFrame copy).
        min_clusters: fewer distinct clusters give no interval (default :data:`MIN_CLUSTERS`;
            at least 2).
        batch_statistic: the statistic of many resamples at once, for a statistic that depends only
            on how often each cluster is drawn: it gets the drawn cluster numbers (0 … k-1, clusters
            sorted by label) as an array of shape ``(..., m)`` and returns one value per resample
            (shape ``(...)``). scipy draws the same resamples as without it (``vectorized=True``
            only changes how the statistic is called); ``statistic`` is still used for a single table.

    Returns:
        A :class:`ConfidenceInterval`. NaN bounds with a ``reason`` when there are fewer than
        ``min_clusters`` clusters, when fewer than half of the resamples give a defined
        statistic, when every resample gives the same value or the interval has zero width,
        or when BCa is undefined. A ``note`` on a defined interval when there are fewer than
        :data:`FEW_CLUSTERS` clusters or the statistic was undefined in some resamples (the
        interval then comes from the others).

    Raises:
        ValueError: unknown ``method``, or ``min_clusters < 2``.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"doc": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5], "x": [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]})
        >>> ci = cluster_bootstrap_ci(df, lambda t: t["x"].mean(), "doc", n_resamples=200, method="expanded")
        >>> ci.low < 3.5 < ci.high, ci.note[:16]
        (True, 'only 5 doc value')
    """
    from scipy import stats

    if method not in METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}: {', '.join(METHODS)}")
    if min_clusters < 2:
        raise ValueError(f"min_clusters must be at least 2, got {min_clusters}")
    codes, labels = pd.factorize(frame[cluster], sort=True)
    k = len(labels)
    if k < min_clusters:
        return _undefined(confidence_level, n_resamples, k,
                          f"only {k} {cluster} value(s): a bootstrap needs at least {min_clusters} to give an interval "
                          f"(with fewer, intervals cover far less than {confidence_level:.0%})", method)
    order = np.argsort(codes, kind="stable")  # rows of cluster c: order[start[c]:start[c] + size[c]]
    size = np.bincount(codes, minlength=k)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])

    def positions(drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lengths = size[drawn]
        offsets = np.repeat(start[drawn] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        index = order[np.arange(lengths.sum()) + offsets]
        # each draw is its own cluster, so a cluster drawn twice counts twice
        return index, np.repeat(np.arange(drawn.size), lengths)

    def on_resample(drawn: np.ndarray) -> float:
        index, new_cluster = positions(np.asarray(drawn, dtype=int))
        if rows:
            return float(statistic(index, new_cluster))
        table = frame.iloc[index].copy()
        table[cluster] = new_cluster
        return float(statistic(table))

    alpha = (1 - confidence_level) / 2
    scipy_method = "percentile" if method == "expanded" else method
    with warnings.catch_warnings():
        # scipy warns (in BCa's words, for every method) when a resample's statistic is NaN or all
        # resamples agree; both cases are handled below and explained in the result's reason
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # BCa's 0/0 acceleration: NaN, handled below
        if batch_statistic is not None:
            res = stats.bootstrap((np.arange(k),), lambda drawn, axis=-1: batch_statistic(np.asarray(drawn, dtype=int)),
                                  n_resamples=n_resamples, vectorized=True, confidence_level=confidence_level,
                                  method=scipy_method, rng=np.random.default_rng(seed))
        else:
            res = stats.bootstrap((np.arange(k),), on_resample, n_resamples=n_resamples, vectorized=False,
                                  confidence_level=confidence_level, method=scipy_method,
                                  rng=np.random.default_rng(seed))
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    defined = np.isfinite(dist)
    if defined.mean() < 0.5:
        return _undefined(confidence_level, n_resamples, k,
                          f"the statistic is undefined in {int((~defined).sum())} of {n_resamples} resamples", method)
    kept = dist[defined]
    if np.ptp(kept) == 0:
        return _undefined(confidence_level, n_resamples, k,
                          f"every resample gives the same value ({kept[0]:.6g}): a zero-width interval is not a "
                          f"{confidence_level:.0%} interval", method)
    notes = []
    if k < FEW_CLUSTERS:
        notes.append(f"only {k} {cluster} values: bootstrap intervals from fewer than {FEW_CLUSTERS} clusters often "
                     f"cover less than {confidence_level:.0%} (docs/intervals.md)")
    if not defined.all():
        notes.append(f"the statistic is undefined in {int((~defined).sum())} of {n_resamples} resamples; "
                     "the interval is from the others")
    note = "; ".join(notes)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if method == "expanded":
        a = (1 - expanded_level(confidence_level, k)) / 2
        low, high = (float(v) for v in np.quantile(kept, [a, 1 - a]))
    elif not (np.isfinite(low) and np.isfinite(high)):
        if method == "BCa":
            return _undefined(confidence_level, n_resamples, k,
                              f"BCa is undefined here: it needs the statistic in every resample and on every "
                              f"leave-one-{cluster}-out table (method 'percentile' or 'expanded' does not)", method)
        # scipy returns NaN when any resample is NaN; take the quantiles of the defined ones
        low, high = float(np.quantile(kept, alpha)), float(np.quantile(kept, 1 - alpha))
        if method == "basic":
            theta = float(statistic(np.arange(len(frame)), codes) if rows else statistic(frame))
            low, high = 2 * theta - high, 2 * theta - low
    if not (np.isfinite(low) and np.isfinite(high)) or not high > low:
        return _undefined(confidence_level, n_resamples, k,
                          f"the {method} interval is degenerate ({low:.6g}, {high:.6g}): not a "
                          f"{confidence_level:.0%} interval", method)
    return ConfidenceInterval(low, high, confidence_level, n_resamples, k, "", method, note)


def label_table_ci(table: pd.DataFrame, name: str, n_resamples: int = 999, confidence_level: float = 0.95,
                   seed: int = 0, ci_method: str = "percentile") -> ConfidenceInterval:
    """CI of the mean over ``table``'s columns of each column's mean over its defined values, resampling
    the rows (labels) of ``table``: a label drawn twice counts twice in every column.

    Args:
        table: labels × columns, e.g. groups × rater pairs of per-group correlations joined on the group
            label (NaN: that pair has no defined correlation in that group).
        name: what a label is, for the reason of an undefined interval (e.g. ``"group"``).

    Example:
        >>> t = pd.DataFrame({0: [0.1, 0.5, 0.9, float("nan")], 1: [0.2, 0.4, 0.8, 0.6]}, index=list("abcd"))
        >>> ci = label_table_ci(t, "group", n_resamples=200)
        >>> ci.low < 0.5 < ci.high
        True
    """
    values = table.to_numpy(dtype=float)

    def statistic(rows, _clusters) -> float:
        drawn = values[rows]
        defined = ~np.isnan(drawn)
        counts = defined.sum(axis=0)
        sums = np.where(defined, drawn, 0.0).sum(axis=0)
        has = counts > 0
        return float(np.mean(sums[has] / counts[has])) if has.any() else float("nan")

    labels = pd.DataFrame({name: np.arange(len(table))})
    return cluster_bootstrap_ci(labels, statistic, name, n_resamples, confidence_level, seed, ci_method, rows=True)


def _fast_r(x: np.ndarray, y: np.ndarray, method: str, variant: str, ties: str) -> float:
    """The coefficient only (no p-value), as :func:`judgelab.stats.correlate` computes it: NaN pairs
    dropped, NaN for fewer than three pairs or a constant vector."""
    from scipy import stats as _st

    from judgelab.stats.correlation import _rankable

    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    xs, ys = _rankable(x, ties), _rankable(y, ties)
    if x.size < 3 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return float("nan")
    if method != "pearson":
        x, y = xs, ys
    if method == "kendall":
        xu, xc = np.unique(xs, return_inverse=True)
        yu, yc = np.unique(ys, return_inverse=True)
        if FAST_KENDALL and xu.size * yu.size <= _table_cells(x.size):  # scipy's float, without its per-call overhead
            return kendall_from_codes(xc.ravel(), yc.ravel(), int(xu.size), int(yu.size), variant)
        return float(_st.kendalltau(x, y, variant=variant).statistic)
    if method == "spearman":
        x, y = _st.rankdata(x), _st.rankdata(y)
    return float(np.corrcoef(x, y)[0, 1])


FAST_KENDALL = True
"""Kendall's tau in the bootstrap from tables of counts, all resamples at once where the statistic allows
(:func:`kendall_from_tables`); False computes one :func:`scipy.stats.kendalltau` per resample, as before.
Both give the same numbers bit for bit (tests/test_agree.py compares them); the switch exists for that test."""


def _table_cells(rows: int) -> int:
    """The largest table of counts :func:`kendall_from_codes` is used for, for a table of ``rows`` rows
    (beyond it, one sort per resample is cheaper)."""
    return max(4096, 4 * rows)


def _dense_codes(values: np.ndarray, ties: str) -> tuple[np.ndarray, int]:
    """Each value's rank among the distinct (tie-safe, see :func:`judgelab.stats.correlation._rankable`)
    values, ``-1`` for NaN; and the number of distinct values."""
    from judgelab.stats.correlation import _rankable

    codes = np.full(values.shape, -1, dtype=np.intp)
    defined = ~np.isnan(values)
    distinct, inverse = np.unique(_rankable(values[defined], ties), return_inverse=True)
    codes[defined] = inverse.ravel()
    return codes, int(distinct.size)


def kendall_from_codes(xc: np.ndarray, yc: np.ndarray, ux: int, uy: int, variant: str = "b") -> float:
    """Kendall's tau of two vectors given as dense value codes (``-1``: missing, the pair is dropped),
    from their ``ux × uy`` table of counts (:func:`kendall_from_tables`): the same float as
    :func:`scipy.stats.kendalltau`, in O(n + ux·uy) instead of a sort per call. NaN, as
    :func:`_fast_r`, for fewer than three pairs or a constant vector.

    Example:
        >>> round(kendall_from_codes(np.array([0, 1, 2, 2]), np.array([0, 2, 1, 2]), 3, 3), 6)
        0.547723
    """
    keep = (xc >= 0) & (yc >= 0)
    if not keep.all():
        xc, yc = xc[keep], yc[keep]
    counts = np.bincount(xc * uy + yc, minlength=ux * uy).reshape(1, ux, uy).astype(np.int64)
    return float(kendall_from_tables(counts, variant)[0])


def kendall_from_tables(counts: np.ndarray, variant: str = "b") -> np.ndarray:
    """Kendall's tau of each ``ux × uy`` table of counts in ``counts`` (shape ``(N, ux, uy)``, integers;
    cell ``(a, b)``: pairs whose x has the a-th and y the b-th smallest value).

    The integers scipy's :func:`scipy.stats.kendalltau` counts (concordant minus discordant pairs,
    ties in x, in y and in both) are counted exactly from the table, and the same final arithmetic
    is applied, so each value equals scipy's float bit for bit. NaN for a table with fewer than three
    pairs or a single non-empty row or column (a constant vector).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n, ux, uy = counts.shape
    rows, cols = counts.sum(axis=2), counts.sum(axis=1)
    size = rows.sum(axis=1)
    # below[a, b]: pairs partner with a larger x code and a smaller y code than cell (a, b)
    larger_x = np.zeros_like(counts)
    larger_x[:, :-1] = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][:, 1:]
    below = np.zeros_like(counts)
    below[:, :, 1:] = np.cumsum(larger_x, axis=2)[:, :, :-1]
    dis = (counts * below).sum(axis=(1, 2))
    ntie = (counts * (counts - 1) // 2).sum(axis=(1, 2))
    xtie = (rows * (rows - 1) // 2).sum(axis=1)
    ytie = (cols * (cols - 1) // 2).sum(axis=1)
    tot = (size * (size - 1)) // 2
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    x_classes, y_classes = np.count_nonzero(rows, axis=1), np.count_nonzero(cols, axis=1)
    undefined = (size < 3) | (x_classes < 2) | (y_classes < 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
        else:
            minclasses = np.minimum(x_classes, y_classes)
            tau = 2 * con_minus_dis / (size**2 * (minclasses - 1) / minclasses)
    tau = np.minimum(1.0, np.maximum(-1.0, tau))
    return np.where(undefined, np.nan, tau)


def paired_correlation_ci(table: pd.DataFrame, pairs: list[tuple[str, str]], level: str, method: str, variant: str,
                          ties: str, n_resamples: int = 999, confidence_level: float = 0.95,
                          seed: int = 0, ci_method: str = "percentile") -> ConfidenceInterval:
    """CI of the mean over column ``pairs`` of the correlation at the overall or system level, resampling
    ``item_id`` with all its rows (``table``: the rows rated for at least one pair; ``system`` for the
    system means, which stay fixed while items are resampled)."""
    cols = sorted({c for pair in pairs for c in pair})
    values = {c: table[c].to_numpy(dtype=float) for c in cols}
    systems, system_labels = pd.factorize(table["system"])
    coded = ({c: _dense_codes(values[c], ties) for c in cols} if FAST_KENDALL and method == "kendall" and level == "overall"
             else {})

    def statistic(rows, _clusters) -> float:
        rs = []
        for x, y in pairs:
            if coded:
                (xc, ux), (yc, uy) = coded[x], coded[y]
                if ux * uy <= _table_cells(len(table)):  # few distinct values (ratings): a table of counts
                    rs.append(kendall_from_codes(xc[rows], yc[rows], ux, uy, variant))
                    continue
            xv, yv = values[x][rows], values[y][rows]
            if level == "system":
                both = ~(np.isnan(xv) | np.isnan(yv))
                s = systems[rows][both]
                counts = np.bincount(s, minlength=len(system_labels))
                with np.errstate(invalid="ignore", divide="ignore"):
                    xv = np.bincount(s, xv[both], len(system_labels)) / counts
                    yv = np.bincount(s, yv[both], len(system_labels)) / counts
            rs.append(_fast_r(xv, yv, method, variant, ties))
        return float(np.nanmean(rs)) if not np.isnan(rs).all() else float("nan")

    batch = None
    if coded and all(coded[x][1] * coded[y][1] <= _table_cells(len(table)) for x, y in pairs):
        batch = _overall_kendall_batch(table, [(coded[x], coded[y]) for x, y in pairs], variant)
    elif FAST_KENDALL and method == "kendall" and variant == "b" and level == "system" and len(system_labels) <= SMALL_SYSTEMS:
        batch = _system_kendall_batch(table, pairs, variant, ties)
    return cluster_bootstrap_ci(table, statistic, "item_id", n_resamples, confidence_level, seed, ci_method, rows=True,
                                batch_statistic=batch)


SMALL_SYSTEMS = 64
"""Up to this many systems, the system-level Kendall bootstrap runs all resamples at once."""


def _system_kendall_batch(table: pd.DataFrame, pairs: list[tuple[str, str]], variant: str,
                          ties: str) -> Callable[[np.ndarray], np.ndarray]:
    """The system-level Kendall statistic of :func:`paired_correlation_ci` for many resamples at once,
    equal bit for bit to the one-resample statistic: each system's sum is accumulated in the same order
    (drawn items in order, an item's rows in table order, as ``np.bincount`` adds them), the means are
    divided as there, and tau comes from the same integers (pairs of systems concordant minus
    discordant, ties) with the same final arithmetic as :func:`scipy.stats.kendalltau`."""
    from judgelab.stats.correlation import _rankable

    items, labels = pd.factorize(table["item_id"], sort=True)
    systems, system_labels = pd.factorize(table["system"])
    k, n_sys = len(labels), len(system_labels)
    order = np.argsort(items, kind="stable")
    rank = np.zeros(len(table), dtype=int)  # a row's place among its item's rows of the same system
    seen: dict[tuple[int, int], int] = {}
    for i in order:
        key = (int(items[i]), int(systems[i]))
        rank[i] = seen.get(key, 0)
        seen[key] = rank[i] + 1
    depth = int(rank.max()) + 1 if len(table) else 1
    n_pairs = len(pairs)
    # item × pair × system × rank: the x and y values (NaN: no row there, or not rated in both)
    vx, vy = np.full((k, n_pairs, n_sys, depth), np.nan), np.full((k, n_pairs, n_sys, depth), np.nan)
    for p, (x, y) in enumerate(pairs):
        xv, yv = table[x].to_numpy(dtype=float), table[y].to_numpy(dtype=float)
        both = ~(np.isnan(xv) | np.isnan(yv))
        vx[items[both], p, systems[both], rank[both]] = xv[both]
        vy[items[both], p, systems[both], rank[both]] = yv[both]
    present_all = ~np.isnan(vx)
    vx0, vy0 = np.where(present_all, vx, 0.0), np.where(present_all, vy, 0.0)

    def batch(drawn: np.ndarray) -> np.ndarray:
        shape = drawn.shape[:-1]
        flat = drawn.reshape(-1, drawn.shape[-1])
        sx = np.zeros((flat.shape[0], n_pairs, n_sys))
        sy = np.zeros_like(sx)
        counts = np.zeros(sx.shape, dtype=np.int64)
        for j in range(flat.shape[1]):  # in draw order, as np.bincount adds a resample's rows
            item = flat[:, j]
            for r in range(depth):
                sx += vx0[item, :, :, r]  # x + 0.0 == x: an absent row changes nothing
                sy += vy0[item, :, :, r]
                counts += present_all[item, :, :, r]
        with np.errstate(invalid="ignore", divide="ignore"):
            mx, my = sx / counts, sy / counts
        rs = np.vstack([_small_kendall_b(mx[:, p], my[:, p], ties, _rankable) for p in range(n_pairs)])
        empty = np.isnan(rs).all(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = np.nanmean(rs, axis=0) if n_pairs > 1 else rs[0]
        return np.where(empty, np.nan, out).reshape(shape)

    return batch


def _small_kendall_b(x: np.ndarray, y: np.ndarray, ties: str, rankable) -> np.ndarray:
    """Kendall's tau-b of each row of ``x`` and ``y`` (few columns; NaN pairs dropped), as :func:`_fast_r`
    gives it: the same integers as :func:`scipy.stats.kendalltau` and the same final arithmetic."""
    keep = ~(np.isnan(x) | np.isnan(y))
    xs, ys = rankable(np.where(keep, x, 0.0), ties), rankable(np.where(keep, y, 0.0), ties)
    pair = keep[:, :, None] & keep[:, None, :] & np.triu(np.ones((x.shape[1], x.shape[1]), dtype=bool), 1)[None]
    dx, dy = np.sign(xs[:, :, None] - xs[:, None, :]), np.sign(ys[:, :, None] - ys[:, None, :])
    size = keep.sum(axis=1).astype(np.int64)
    tot = (size * (size - 1)) // 2
    con_minus_dis = np.where(pair, dx * dy, 0).sum(axis=(1, 2)).astype(np.int64)
    xtie = (pair & (dx == 0)).sum(axis=(1, 2)).astype(np.int64)
    ytie = (pair & (dy == 0)).sum(axis=(1, 2)).astype(np.int64)
    undefined = (size < 3) | (xtie == tot) | (ytie == tot)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, np.maximum(-1.0, tau))
    return np.where(undefined, np.nan, tau)


def _overall_kendall_batch(table: pd.DataFrame, coded: list[tuple[tuple[np.ndarray, int], tuple[np.ndarray, int]]],
                           variant: str) -> Callable[[np.ndarray], np.ndarray]:
    """The overall-level Kendall statistic of :func:`paired_correlation_ci` for many resamples at once:
    each resample's table of counts is (how often each item is drawn) × (each item's table of
    counts), one matrix product; the mean over pairs as the one-resample statistic takes it."""
    items, labels = pd.factorize(table["item_id"], sort=True)  # cluster numbers as cluster_bootstrap_ci's
    k = len(labels)
    per_item = []
    for (xc, ux), (yc, uy) in coded:
        ok = (xc >= 0) & (yc >= 0)
        m = np.zeros((k, ux * uy))
        np.add.at(m, (items[ok], xc[ok] * uy + yc[ok]), 1.0)
        per_item.append((m, ux, uy))

    def batch(drawn: np.ndarray) -> np.ndarray:
        shape = drawn.shape[:-1]
        flat = drawn.reshape(-1, drawn.shape[-1])
        n = flat.shape[0]
        # exact: counts of at most a few million are integers in float64
        weights = np.bincount((np.arange(n)[:, None] * k + flat).ravel(), minlength=n * k).reshape(n, k).astype(float)
        rs = np.vstack([kendall_from_tables(np.rint(weights @ m).astype(np.int64).reshape(n, ux, uy), variant)
                        for m, ux, uy in per_item])
        empty = np.isnan(rs).all(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = np.nanmean(rs, axis=0) if len(per_item) > 1 else rs[0]
        return np.where(empty, np.nan, out).reshape(shape)

    return batch
