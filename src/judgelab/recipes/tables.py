"""The paper tables that several recipes share, computed from the tidy ratings table.

* :func:`table1`: Chiang & Lee (2023) Table 1 — per rater group, writer (system) and
  criterion: mean ± SD of all ratings, Krippendorff's alpha (``summary.TABLE1_ALPHA_LEVEL``,
  interval; the decision and its reason are documented there) among the three
  annotators (three teachers, or three samples of one LLM) and the percentage of items on
  which all three give exactly the same rating.
* :func:`pairwise_kendall`: Table 6 — the mean Kendall tau-b between pairs of annotators.
* :func:`kendall_vs_humans`: Table 2 — Kendall tau between the mean teacher rating and the
  mean judge rating per story.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from judgelab.raters import is_human, with_sample, human_mask
from judgelab.stats import correlate
from judgelab.summary import TABLE1_ALPHA_LEVEL, annotator_agreement
from judgelab.status import Status

__all__ = ["table1", "pairwise_kendall", "kendall_vs_humans", "annotator_matrix"]


def annotator_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Items × annotators (human raters, or a judge's samples) of one rater group."""
    key = [r if is_human(r) else with_sample(r, s) for r, s in zip(df["rater"], df["sample"])]
    ok = df.assign(annotator=key)
    ok = ok[ok["status"] == Status.OK]
    return ok.pivot_table(index="item_id", columns="annotator", values="score", aggfunc="first")


def _group(rater: str) -> str:
    return "human" if is_human(rater) else rater


def table1(df: pd.DataFrame, level: str = TABLE1_ALPHA_LEVEL) -> pd.DataFrame:
    """Chiang & Lee (2023) Table 1 from a ratings table with humans and/or judges.

    Args:
        df: tidy ratings; human raters pooled as ``human``, a judge's samples are its annotators.
        level: Krippendorff's alpha level (default: the one decision, ``TABLE1_ALPHA_LEVEL``).

    Returns:
        ``rater, writer, criterion, items, annotators, mean, sd, alpha, full_agreement_pct, failed``.

    Example:
        >>> table1(ratings).set_index(["writer", "criterion"])  # doctest: +SKIP
    """
    rows = []
    for (group, system, criterion), grp in df.assign(group=df["rater"].map(_group)).groupby(["group", "system", "criterion"], sort=True):
        scores = grp.loc[grp["status"] == Status.OK, "score"]
        matrix = annotator_matrix(grp)
        iaa = annotator_agreement(matrix.to_numpy(dtype=float).T, level)
        rows.append({
            "rater": group, "writer": system, "criterion": criterion, "items": matrix.shape[0],
            "annotators": matrix.shape[1], "mean": scores.mean(), "sd": scores.std(ddof=1),
            "alpha": iaa.alpha, "full_agreement_pct": 100 * iaa.exact_agreement,
            "failed": int((grp["status"] != Status.OK).sum()),
        })
    return pd.DataFrame(rows)


def pairwise_kendall(df: pd.DataFrame) -> pd.DataFrame:
    """Chiang & Lee (2023) Table 6: mean Kendall's τ between pairs of annotators (or samples), per
    rater group, writer and attribute."""
    rows = []
    for (group, system, criterion), grp in df.assign(group=df["rater"].map(_group)).groupby(["group", "system", "criterion"], sort=True):
        matrix = annotator_matrix(grp)
        taus = [correlate(matrix[a], matrix[b], "kendall").r for a, b in itertools.combinations(matrix.columns, 2)]
        rows.append({"rater": group, "writer": system, "criterion": criterion,
                     "mean_pairwise_kendall": float(np.nanmean(taus)) if taus and not np.all(np.isnan(taus)) else np.nan,
                     "pairs": len(taus)})
    return pd.DataFrame(rows)


def kendall_vs_humans(df: pd.DataFrame) -> pd.DataFrame:
    """Chiang & Lee (2023) Table 2: Kendall's τ between each judge's per-item mean and the mean
    human rating, per writer and attribute."""
    ok = df[df["status"] == Status.OK]
    human = ok[human_mask(ok["rater"])].groupby(["system", "criterion", "item_id"])["score"].mean()
    rows = []
    for rater, grp in ok[~human_mask(ok["rater"])].groupby("rater"):
        judge = grp.groupby(["system", "criterion", "item_id"])["score"].mean()
        joined = pd.concat([human.rename("h"), judge.rename("j")], axis=1, join="inner")
        for (system, criterion), g in joined.groupby(level=["system", "criterion"]):
            c = correlate(g["h"], g["j"], "kendall")
            rows.append({"rater": rater, "writer": system, "criterion": criterion, "kendall": c.r, "p": c.p, "n": c.n, "note": c.reason})
    return pd.DataFrame(rows)
