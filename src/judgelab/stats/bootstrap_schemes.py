"""The two resampling schemes of :func:`judgelab.stats.correlation.mean_level_correlation`, on top of
:func:`judgelab.stats.bootstrap.cluster_bootstrap_ci`: group labels (:func:`label_table_ci`, rows of a
table of per-group correlations, one column per rater pair, joined on the label) and items with all
their rows (:func:`paired_correlation_ci`); every pair sees the same draws. Kendall's tau is computed
from tables of counts for all resamples at once where it can be (:data:`FAST_KENDALL`), bit-equal to
one :func:`scipy.stats.kendalltau` per resample.
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import pandas as pd

from judgelab.stats.bootstrap import ConfidenceInterval, cluster_bootstrap_ci

__all__ = ["label_table_ci", "paired_correlation_ci", "kendall_from_codes", "kendall_from_tables", "FAST_KENDALL"]


def label_table_ci(table: pd.DataFrame, name: str, n_resamples: int = 999, confidence_level: float = 0.95,
                   seed: int = 0, ci_method: str = "percentile", weights=None) -> ConfidenceInterval:
    """CI of the mean over ``table``'s columns of each column's mean over its defined values, resampling
    the rows (labels) of ``table``: a label drawn twice counts twice in every column.

    Args:
        table: labels × columns, e.g. groups × rater pairs of per-group correlations joined on the group
            label (NaN: that pair has no defined correlation in that group).
        name: what a label is, for the reason of an undefined interval (e.g. ``"group"``).
        weights: one per column: the CI of ``sum(weights * column means)`` instead (``[1, -1]``: the
            difference of two columns' means, each over its own defined values); a resample where a
            column has no defined value has none.

    Example:
        >>> t = pd.DataFrame({0: [0.1, 0.5, 0.9, float("nan")], 1: [0.2, 0.4, 0.8, 0.6]}, index=list("abcd"))
        >>> ci = label_table_ci(t, "group", n_resamples=200)
        >>> ci.low < 0.5 < ci.high
        True
    """
    values = table.to_numpy(dtype=float)
    w = None if weights is None else np.asarray(weights, dtype=float)

    def statistic(rows, _clusters) -> float:
        drawn = values[rows]
        defined = ~np.isnan(drawn)
        counts = defined.sum(axis=0)
        sums = np.where(defined, drawn, 0.0).sum(axis=0)
        has = counts > 0
        if w is not None:
            return float(w @ (sums / counts)) if has.all() else float("nan")
        return float(np.mean(sums[has] / counts[has])) if has.any() else float("nan")

    labels = pd.DataFrame({name: np.arange(len(table))})
    return cluster_bootstrap_ci(labels, statistic, name, n_resamples, confidence_level, seed, ci_method, rows=True)


def _fast_r(x: np.ndarray, y: np.ndarray, method: str, variant: str, ties: str) -> float:
    """The coefficient only (no p-value), as :func:`judgelab.stats.correlate` computes it: NaN pairs
    dropped, NaN for fewer than three pairs or a constant vector."""
    from scipy import stats as _st

    from judgelab.stats.coefficient import _rankable

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
    """Each value's rank among the distinct (tie-safe, see :func:`judgelab.stats.coefficient._rankable`)
    values, ``-1`` for NaN; and the number of distinct values."""
    from judgelab.stats.coefficient import _rankable

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
    from judgelab.stats.coefficient import _rankable

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
