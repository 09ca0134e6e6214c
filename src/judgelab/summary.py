"""Run summaries over the tidy ratings table (Chiang & Lee 2023, Table 1 and section 3.3).

Per rater, system and criterion: number of items, mean ± SD of all ratings, Krippendorff's
alpha (ordinal) over the samples as annotators, the share of items where all samples give
the same rating, and the count of failed judgments (which never enter the statistics).
Welch's t-test compares two systems on per-item mean scores (items are the independent
units; the samples of one item are not).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.stats.agreement import exact_agreement, krippendorff_alpha

__all__ = ["sample_matrix", "summarize", "compare_systems"]


def sample_matrix(ratings: pd.DataFrame) -> np.ndarray:
    """Samples × items matrix of scores (NaN where a judgment failed or is missing)."""
    wide = ratings.pivot_table(index="sample", columns="item_id", values="score", aggfunc="first", dropna=False)
    return wide.to_numpy(dtype=float)


def summarize(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (rater, system, criterion) with Table 1's columns and failure counts."""
    rows = []
    for (rater, system, criterion), grp in ratings.groupby(["rater", "system", "criterion"], sort=True):
        scores = grp["score"].astype(float)
        ok = scores.dropna()
        matrix = sample_matrix(grp)
        n_samples = int(grp["sample"].nunique())
        alpha = krippendorff_alpha(matrix, "ordinal") if n_samples > 1 else float("nan")
        agree = exact_agreement(matrix) if n_samples > 1 else float("nan")
        rows.append({
            "rater": rater,
            "system": system,
            "criterion": criterion,
            "items": int(grp["item_id"].nunique()),
            "samples": n_samples,
            "mean": float(ok.mean()) if len(ok) else float("nan"),
            "sd": float(ok.std(ddof=1)) if len(ok) > 1 else float("nan"),
            "alpha": alpha,
            "exact_agreement": agree,
            "failed": int((grp["status"] != "ok").sum()),
            "refusals": int((grp["status"] == "refusal").sum()),
            "failure_rate": float((grp["status"] != "ok").mean()),
        })
    return pd.DataFrame(rows)


def _welch_t(*args, **kwargs):  # scipy.stats is imported only when a comparison is asked for
    from judgelab.stats.tests_twosample import welch_t

    return welch_t(*args, **kwargs)


def compare_systems(ratings: pd.DataFrame, system_a: str, system_b: str) -> pd.DataFrame:
    """Welch's t-test of per-item mean scores, system_a vs system_b, per rater and criterion."""
    rows = []
    for (rater, criterion), grp in ratings.groupby(["rater", "criterion"], sort=True):
        item_means = grp.groupby(["system", "item_id"])["score"].mean()
        a = item_means[item_means.index.get_level_values("system") == system_a]
        b = item_means[item_means.index.get_level_values("system") == system_b]
        t, p = _welch_t(a.to_numpy(dtype=float), b.to_numpy(dtype=float))
        rows.append({"rater": rater, "criterion": criterion, "system_a": system_a, "system_b": system_b,
                     "mean_a": float(np.nanmean(a)) if len(a) else float("nan"),
                     "mean_b": float(np.nanmean(b)) if len(b) else float("nan"),
                     "t": t, "p": p})
    return pd.DataFrame(rows)
