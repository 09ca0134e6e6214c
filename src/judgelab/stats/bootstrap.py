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
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["ConfidenceInterval", "cluster_bootstrap_ci"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap interval: ``low``/``high`` (NaN with a ``reason`` when undefined)."""

    low: float
    high: float
    confidence_level: float
    n_resamples: int
    clusters: int
    reason: str = ""

    def to_dict(self) -> dict[str, float | int | str]:
        return {"ci_low": self.low, "ci_high": self.high}


def _undefined(confidence_level: float, n_resamples: int, clusters: int, reason: str) -> ConfidenceInterval:
    return ConfidenceInterval(float("nan"), float("nan"), confidence_level, n_resamples, clusters, reason)


def cluster_bootstrap_ci(
    frame: pd.DataFrame,
    statistic: Callable[..., float],
    cluster: str,
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
    rows: bool = False,
) -> ConfidenceInterval:
    """Bootstrap CI of ``statistic(frame)``, resampling the values of column ``cluster``.

    Args:
        frame: one row per observation; ``frame[cluster]`` names the cluster of each row.
        statistic: maps a table of the same columns to a number (NaN when undefined).
        cluster: the column whose values are resampled with all their rows.
        n_resamples: bootstrap resamples (scipy's ``n_resamples``).
        confidence_level: e.g. 0.95.
        seed: seeds :class:`numpy.random.Generator`, so a CI is reproducible.
        method: ``"percentile"`` (default) or ``"basic"``; BCa's jackknife is not used
            because a statistic such as Kendall's tau is often undefined on a
            leave-one-cluster-out table of a small study.
        rows: the fast path: ``statistic(rows, clusters)`` gets the positions of the resampled
            rows in ``frame`` and each row's cluster number in the resample (numpy arrays)
            instead of a rebuilt table. The same resamples; about 20 times faster for a
            correlation on a few hundred rows (measured: no per-resample DataFrame copy).

    Returns:
        A :class:`ConfidenceInterval`; NaN with a reason when fewer than two clusters exist
        or fewer than half of the resamples give a defined statistic.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"doc": [1, 1, 2, 2, 3, 3, 4, 4], "x": [1, 2, 2, 3, 3, 4, 4, 5]})
        >>> ci = cluster_bootstrap_ci(df, lambda t: t["x"].mean(), "doc", n_resamples=200)
        >>> ci.low < 3.0 < ci.high
        True
    """
    from scipy import stats

    if method not in {"percentile", "basic"}:
        raise ValueError(f"unknown bootstrap method {method!r}: percentile or basic")
    codes, labels = pd.factorize(frame[cluster], sort=True)
    k = len(labels)
    if k < 2:
        return _undefined(confidence_level, n_resamples, k, f"only {k} {cluster} value(s): nothing to resample")
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

    with warnings.catch_warnings():
        # scipy warns (in BCa's words, for every method) when a resample's statistic is NaN or all
        # resamples agree; both cases are handled below and explained in the result's reason
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap((np.arange(k),), on_resample, n_resamples=n_resamples, vectorized=False,
                              confidence_level=confidence_level, method=method,
                              rng=np.random.default_rng(seed))
    defined = np.isfinite(res.bootstrap_distribution)
    if defined.mean() < 0.5:
        return _undefined(confidence_level, n_resamples, k,
                          f"the statistic is undefined in {int((~defined).sum())} of {n_resamples} resamples")
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        # scipy returns NaN when any resample is NaN; take the quantiles of the defined ones
        alpha = (1 - confidence_level) / 2
        dist = res.bootstrap_distribution[defined]
        low, high = float(np.quantile(dist, alpha)), float(np.quantile(dist, 1 - alpha))
        if method == "basic":
            theta = float(statistic(np.arange(len(frame)), codes) if rows else statistic(frame))
            low, high = 2 * theta - high, 2 * theta - low
    return ConfidenceInterval(low, high, confidence_level, n_resamples, k)
