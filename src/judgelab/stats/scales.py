"""Agreement at several granularities (NLE quality study, section 4.2, tables 3-5).

Scores on a 1-7 scale (human and judge scores may be averages, so not integers) are
turned into classes and compared with the weighted F1-score and the RMSE of the class
indices, next to the majority-class baseline (every item labelled with the most frequent
human class).

Bins. The paper: binary "between 1 and 4 as low ... between 4 and 7, including 4, as high";
ternary "low (1 to 3), moderate (3 to 5), high (5 to 7)". We read both the same way: a bin
edge belongs to the upper class — class = number of edges ≤ score. Binary edges [4]: 3.99
is low, 4 is high. Ternary edges [3, 5]: 2.99 low, 3 moderate, 4.99 moderate, 5 high. The
7-way granularity rounds to the nearest integer, halves up (3.5 → 4), clipped to 1..7.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["GRANULARITIES", "to_classes", "weighted_f1", "rmse", "majority_baseline", "scale_report", "ScaleReport",
           "scale_table",
           "SCALE_COLUMNS"]

GRANULARITIES: dict[str, list[float] | None] = {"binary": [4.0], "ternary": [3.0, 5.0], "7-way": None}


def to_classes(scores, edges: Sequence[float] | None, scale: tuple[int, int] = (1, 7)) -> np.ndarray:
    """Class index per score: the number of edges ≤ score; ``edges=None`` rounds half up to integers."""
    s = np.asarray(scores, dtype=float)
    if edges is None:
        return np.clip(np.floor(s + 0.5), scale[0], scale[1]).astype(int)
    return np.searchsorted(np.asarray(sorted(edges), dtype=float), s, side="right").astype(int)


def weighted_f1(truth, pred) -> float:
    """F1 per class present in ``truth``, averaged with weights = support (scikit-learn's ``average="weighted"``)."""
    t = np.asarray(truth)
    p = np.asarray(pred)
    labels = np.union1d(t, p)
    total = 0.0
    for c in labels:
        support = np.sum(t == c)
        if support == 0:
            continue
        tp = np.sum((t == c) & (p == c))
        precision = tp / np.sum(p == c) if np.sum(p == c) else 0.0
        recall = tp / support
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        total += support * f1
    return float(total / t.size) if t.size else float("nan")


def rmse(truth, pred) -> float:
    """Root mean squared error (NaN for no pairs).

    Example:
        >>> rmse([1, 2, 3], [1, 2, 5])
        1.1547005383792515
    """
    t = np.asarray(truth, dtype=float)
    p = np.asarray(pred, dtype=float)
    return float(math.sqrt(np.mean((t - p) ** 2))) if t.size else float("nan")


def majority_baseline(truth) -> np.ndarray:
    """Every item gets the most frequent class (the smallest class on ties)."""
    t = np.asarray(truth)
    values, counts = np.unique(t, return_counts=True)
    return np.full(t.shape, values[np.argmax(counts)])


@dataclass(frozen=True)
class ScaleReport:
    """A judge's agreement with people at one granularity, beside the majority-class baseline.

    Attributes:
        granularity: ``binary``, ``ternary``, ``7-way`` (or the name given with custom edges).
        n: items with both scores.
        f1, rmse: the judge's weighted F1 and the RMSE of its class indices.
        baseline_f1, baseline_rmse: the same for the majority-class baseline.
        f1_gain: ``f1 - baseline_f1``; rmse_change: ``rmse - baseline_rmse``.
    """

    granularity: str
    n: int
    f1: float
    rmse: float
    baseline_f1: float
    baseline_rmse: float
    f1_gain: float
    rmse_change: float

    def to_dict(self) -> dict[str, Any]:
        """The granularity columns of :data:`SCALE_COLUMNS`, in that order."""
        return {"granularity": self.granularity, "n": self.n, "f1": self.f1, "rmse": self.rmse,
                "baseline_f1": self.baseline_f1, "baseline_rmse": self.baseline_rmse, "f1_gain": self.f1_gain,
                "rmse_change": self.rmse_change}


def scale_report(human, judge, granularity: str = "binary",
                 edges: Sequence[float] | Literal["default"] | None = "default") -> ScaleReport:
    """Weighted F1 and RMSE of the judge and of the majority baseline at one granularity."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}: {', '.join(GRANULARITIES)}")
    h = np.asarray(human, dtype=float)
    j = np.asarray(judge, dtype=float)
    keep = ~(np.isnan(h) | np.isnan(j))
    h, j = h[keep], j[keep]
    bins = GRANULARITIES[granularity] if edges == "default" else edges
    th, tj = to_classes(h, bins), to_classes(j, bins)
    base = majority_baseline(th)
    f1, err = weighted_f1(th, tj), rmse(th, tj)
    f1_b, err_b = weighted_f1(th, base), rmse(th, base)
    return ScaleReport(granularity, int(h.size), f1, err, f1_b, err_b, f1 - f1_b, err - err_b)


SCALE_COLUMNS = ["metric", "granularity", "n", "f1", "rmse", "baseline_f1", "baseline_rmse", "f1_gain", "rmse_change",
                 "r", "p", "note"]


def scale_table(human, judge, edges: Mapping[str, Sequence[float] | None] | None = None, metrics=None):
    """Scale agreement of a judge with humans per metric: every granularity, then Pearson and Spearman.

    The one implementation behind ``judgelab scales`` and the NLE recipe (tables 3-5). Granularity
    rows carry the F1/RMSE columns of :func:`scale_report`; the ``pearson`` and ``spearman`` rows carry
    ``r``, ``p`` and ``n`` (never an F1 column) with NaN F1/RMSE.

    Args:
        human, judge: items × metrics tables (pandas, index = item id); items in both are compared.
        edges: ``{granularity: edges}`` (default :data:`GRANULARITIES`).
        metrics: the metrics to compare (default: the judge's columns that the humans have, in order).

    Returns:
        A DataFrame with :data:`SCALE_COLUMNS`.

    Example:
        >>> import pandas as pd
        >>> h = pd.DataFrame({"clarity": [1, 3, 5, 7, 6]}, index=list("abcde"))
        >>> t = scale_table(h, h)
        >>> t.loc[0, "granularity"], float(t.loc[0, "f1"])
        ('binary', 1.0)
    """
    import pandas as pd

    from judgelab.stats.coefficient import correlate

    edges = dict(GRANULARITIES) if edges is None else edges
    metrics = [m for m in judge.columns if m in human.columns] if metrics is None else metrics
    rows = []
    for metric in metrics:
        joined = pd.concat([human[metric].rename("h"), judge[metric].rename("j")], axis=1, join="inner").dropna()
        for granularity, e in edges.items():
            report = scale_report(joined["h"], joined["j"], granularity, e)
            note = "" if report.n else "no item scored by both"
            rows.append({"metric": metric, **report.to_dict(), "r": float("nan"), "p": float("nan"),
                         "note": note or "r, p: see the pearson and spearman rows"})
        for method in ("pearson", "spearman"):
            c = correlate(joined["h"], joined["j"], method)
            rows.append({"metric": metric, "granularity": method, "n": c.n, "r": c.r, "p": c.p,
                         "note": "; ".join(x for x in ("f1, rmse: a correlation row", c.reason and f"r: {c.reason}") if x)})
    return pd.DataFrame(rows, columns=SCALE_COLUMNS)
