"""Calibration of a judge's confidence that it agrees with the humans: reliability diagram, expected
calibration error (ECE) and Brier score, with item-bootstrap intervals.

``confidence`` is the judge's stated probability (in [0, 1]) that its rating agrees with the human
rating (e.g. the probability mass its log-probabilities put within one point of its answer, or the
share of its samples within one point of their median); ``agreed`` is whether it did
(``|judge − human| ≤ tolerance``). The reliability diagram is the agreement rate per bin of
confidence against the bin's mean confidence (equal-width bins by default); ECE is the bin-size-weighted mean
of their absolute differences (Guo et al. 2017, eq. 3; Naeini et al. 2015); with ``by_value`` each
distinct confidence value is a bin of its own as long as there are at most ``n_bins`` of them (a
judge's sample agreement takes few values: merging two would hide a step); the Brier score is the
mean squared difference between confidence and the 0/1 outcome (Brier 1950). Intervals resample
items (the clusters) with all their rows. ECE is biased upwards with few items per bin; the
``note`` says so below 20 items per bin on average.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats.wboot import weighted_ci

__all__ = ["CalibrationResult", "calibration", "BIN_COLUMNS"]

BIN_COLUMNS = ["bin_low", "bin_high", "n", "mean_confidence", "agreement"]


@dataclass(frozen=True)
class CalibrationResult:
    """ECE and Brier score with 95% intervals, and the reliability diagram's bins.

    Attributes:
        ece, ece_ci_low, ece_ci_high; brier, brier_ci_low, brier_ci_high.
        n: rows; n_clusters: items resampled.
        bins: one dict per non-empty bin (:data:`BIN_COLUMNS`).
        note: caveats (few items per bin) and reasons of NaN bounds.
    """

    ece: float
    ece_ci_low: float
    ece_ci_high: float
    brier: float
    brier_ci_low: float
    brier_ci_high: float
    n: int
    n_clusters: int
    bins: tuple[dict[str, float], ...]
    note: str = ""

    def to_frame(self) -> pd.DataFrame:
        """The reliability diagram's data (one row per non-empty bin)."""
        return pd.DataFrame(list(self.bins), columns=BIN_COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        return {"ece": self.ece, "ece_ci_low": self.ece_ci_low, "ece_ci_high": self.ece_ci_high, "brier": self.brier,
                "brier_ci_low": self.brier_ci_low, "brier_ci_high": self.brier_ci_high, "n": self.n,
                "n_clusters": self.n_clusters, "bins": [dict(b) for b in self.bins], "note": self.note}


def calibration(confidence, agreed, n_bins: int = 10, clusters=None, n_resamples: int = 999, seed: int = 0,
                confidence_level: float = 0.95, by_value: bool = False) -> CalibrationResult:
    """Reliability bins, ECE and Brier score of ``confidence`` for the outcomes ``agreed``.

    Args:
        confidence: probabilities in [0, 1], one per row.
        agreed: 0/1 (or bool) outcomes, one per row.
        n_bins: equal-width bins on [0, 1] (the last includes 1); with ``by_value``, the most bins.
        clusters: the item of each row (default: each row its own item).
        n_resamples, seed, confidence_level: the item bootstrap (0: no intervals).
        by_value: one bin per distinct confidence value (``bin_low`` = ``bin_high`` = the value) when
            there are at most ``n_bins`` of them; more values fall back to ``n_bins`` equal-width bins,
            said in the note.

    Returns:
        A :class:`CalibrationResult`.

    Raises:
        JudgelabError: lengths differ, a confidence outside [0, 1], or an outcome not 0/1.

    Example:
        >>> r = calibration([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0], n_bins=2, n_resamples=0)
        >>> round(r.brier, 4)
        0.125
    """
    p = np.asarray(confidence, dtype=float)
    y = np.asarray(agreed, dtype=float)
    if p.shape != y.shape or p.ndim != 1:
        raise JudgelabError("confidence and outcomes must be equally long")
    if p.size == 0:
        raise JudgelabError("calibration needs at least one rated item")
    if not np.all((p >= 0) & (p <= 1)):
        raise JudgelabError("confidence must be a probability in [0, 1]")
    if not np.all((y == 0) | (y == 1)):
        raise JudgelabError("outcomes must be 0 or 1 (agreed or not)")
    if n_bins < 1:
        raise JudgelabError("n_bins is at least 1")
    b, lows, highs, binning = _bins(p, n_bins, by_value)
    nb = len(lows)
    codes, labels = pd.factorize(pd.Series(np.arange(p.size) if clusters is None else list(clusters)), sort=True)
    k = len(labels)
    count, hits, conf = (np.zeros((k, nb)) for _ in range(3))  # per item and bin: rows, agreements, confidence
    np.add.at(count, (codes, b), 1.0)
    np.add.at(hits, (codes, b), y)
    np.add.at(conf, (codes, b), p)

    def ece(w: np.ndarray) -> np.ndarray:
        return np.abs(w @ hits - w @ conf).sum(1) / (w @ count).sum(1)

    def brier(w: np.ndarray) -> np.ndarray:
        sq = np.bincount(codes, weights=(p - y) ** 2, minlength=k)
        return (w @ sq) / (w @ count.sum(1))
    one = np.ones((1, k))
    notes = [binning] if binning else []
    bounds = []
    for stat, s in ((ece, 0), (brier, 1)):
        if n_resamples > 0:
            ci = weighted_ci(stat, k, n_resamples, confidence_level, seed + s)
            bounds.append((ci.low, ci.high))
            if ci.message and ci.message not in notes:
                notes.append(ci.message)
        else:
            bounds.append((math.nan, math.nan))
    if p.size / nb < 20:
        notes.append(f"{p.size / nb:.1f} items per bin on average: ECE is biased upwards with few items per bin")
    bins = tuple({"bin_low": lows[i], "bin_high": highs[i], "n": int((b == i).sum()),
                  "mean_confidence": float(p[b == i].mean()), "agreement": float(y[b == i].mean())}
                 for i in range(nb) if (b == i).any())
    return CalibrationResult(float(ece(one)[0]), *bounds[0], float(brier(one)[0]), *bounds[1], int(p.size), k, bins,
                             "; ".join(notes))


def _bins(p: np.ndarray, n_bins: int, by_value: bool) -> tuple[np.ndarray, list[float], list[float], str]:
    """Each row's bin, the bins' bounds, and a note when ``by_value`` had to fall back to equal widths."""
    note = ""
    if by_value:
        values, b = np.unique(p, return_inverse=True)
        if values.size <= n_bins:
            return b.ravel(), [float(v) for v in values], [float(v) for v in values], ""
        note = f"{values.size} distinct confidence values, more than {n_bins} bins: {n_bins} equal-width bins"
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return b, [i / n_bins for i in range(n_bins)], [(i + 1) / n_bins for i in range(n_bins)], note
