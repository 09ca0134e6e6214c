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

:func:`judgelab.stats.bootstrap_schemes.label_table_ci` and ``paired_correlation_ci`` are the two resampling schemes of
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

__all__ = ["ConfidenceInterval", "cluster_bootstrap_ci", "expanded_level", "METHODS", "MIN_CLUSTERS", "FEW_CLUSTERS"]

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

#: What the note on few clusters says of the simulation (:data:`FEW_CLUSTERS`), in the note itself: the
#: note reaches report.html, tables and the terminal, where no page of the repository's docs/ is at hand.
FEW_CLUSTERS_COVERAGE = ("in simulation, 95% intervals from 5-10 clusters covered 84-93% of a mean or a "
                         "correlation; the expanded percentile interval 92.5-97%")


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


def caveats(clusters: int, cluster: str, confidence_level: float, undefined: int, n_resamples: int) -> str:
    """The note on a defined bootstrap interval: fewer than :data:`FEW_CLUSTERS` clusters, resamples where
    the statistic was undefined (empty when there is neither)."""
    notes = []
    if clusters < FEW_CLUSTERS:
        notes.append(f"only {clusters} {cluster} values: bootstrap intervals from fewer than {FEW_CLUSTERS} clusters "
                     f"often cover less than {confidence_level:.0%} ({FEW_CLUSTERS_COVERAGE})")
    if undefined:
        notes.append(f"the statistic is undefined in {undefined} of {n_resamples} resamples (the interval is from "
                     "the others)")  # one clause: notes are "; "-separated clauses
    return "; ".join(notes)


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
    note = caveats(k, cluster, confidence_level, int((~defined).sum()), n_resamples)
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
