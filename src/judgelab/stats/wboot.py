"""A vectorised cluster bootstrap for statistics that are weighted sums over rows.

:func:`judgelab.stats.bootstrap.cluster_bootstrap_ci` calls the statistic once per resample
(through scipy), which is right for correlations but slow for the audit's simulations (hundreds
of studies × several biases × 999 resamples). Every bias statistic of :mod:`judgelab.stats.bias`
is a function of weighted sums over rows, so a resample is a vector of cluster counts: drawing
``k`` clusters with replacement is the multinomial count ``c`` of each cluster, and each row gets
its cluster's count as a weight. All resamples are one ``(B, rows)`` weight matrix and a statistic
is evaluated for all of them at once (the same resampling scheme as the scipy-based bootstrap:
clusters with all their rows; a cluster drawn twice counts twice).

The interval is the percentile interval (the library default), with the same refusals as
:func:`~judgelab.stats.bootstrap.cluster_bootstrap_ci`: fewer than ``MIN_CLUSTERS`` clusters,
a statistic undefined in more than half of the resamples, or a zero-width interval give NaN
bounds with the reason; fewer than ``FEW_CLUSTERS`` clusters give a note.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from judgelab.stats.bootstrap import MIN_CLUSTERS, ConfidenceInterval, caveats

__all__ = ["cluster_weights", "weighted_ci"]


def cluster_weights(k: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, k)`` counts: how often each of ``k`` clusters is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(n_resamples, k))
    flat = (draws + k * np.arange(n_resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * k).reshape(n_resamples, k).astype(float)


def weighted_ci(statistic: Callable[[np.ndarray], np.ndarray], k: int, n_resamples: int = 999,
                confidence_level: float = 0.95, seed: int = 0, cluster: str = "item_id") -> ConfidenceInterval:
    """Percentile interval of ``statistic`` over cluster-count resamples.

    Args:
        statistic: maps a ``(B, k)`` array of cluster weights to ``B`` values (NaN where undefined);
            the point estimate is ``statistic(np.ones((1, k)))``.
        k: the number of clusters.
        n_resamples, confidence_level, seed: as in :func:`judgelab.stats.bootstrap.cluster_bootstrap_ci`.
        cluster: what a cluster is (for the reason of an undefined interval).

    Returns:
        A :class:`~judgelab.stats.bootstrap.ConfidenceInterval` (method ``percentile``).

    Example:
        >>> x = np.arange(30.0)
        >>> ci = weighted_ci(lambda w: (w * x).sum(1) / w.sum(1), 30, 500)
        >>> ci.low < 14.5 < ci.high
        True
    """
    nan = float("nan")
    if k < MIN_CLUSTERS:
        return ConfidenceInterval(nan, nan, confidence_level, n_resamples, k,
                                  f"only {k} {cluster} value(s): a bootstrap needs at least {MIN_CLUSTERS} to give an "
                                  f"interval")
    dist = np.asarray(statistic(cluster_weights(k, n_resamples, seed)), dtype=float)
    defined = np.isfinite(dist)
    if defined.mean() < 0.5:
        return ConfidenceInterval(nan, nan, confidence_level, n_resamples, k,
                                  f"the statistic is undefined in {int((~defined).sum())} of {n_resamples} resamples")
    kept = dist[defined]
    alpha = (1 - confidence_level) / 2
    low, high = (float(v) for v in np.quantile(kept, [alpha, 1 - alpha]))
    if not high > low:
        return ConfidenceInterval(nan, nan, confidence_level, n_resamples, k,
                                  f"every resample gives about the same value ({kept[0]:.6g}): a zero-width interval is "
                                  f"not a {confidence_level:.0%} interval")
    return ConfidenceInterval(low, high, confidence_level, n_resamples, k, "", "percentile",
                              caveats(k, cluster, confidence_level, int((~defined).sum()), n_resamples))
