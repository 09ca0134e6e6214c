"""Per-rater standardisation for ``judgelab agree --standardize z``: agreement once the raters'
scale use (leniency, spread) is taken out, side by side with agreement on the raw scores.

Each rater (judge or human) and criterion is standardised on its own: its successful ratings (every
sample of every item it rated) minus their mean, divided by their standard deviation (population
SD, ``ddof=0``, as ``scipy.stats.zscore``). A rater whose ratings on a criterion are all the same, or
who has one rating, cannot be standardised: its rows leave the standardised tables and
``rater_scales`` says why. Failed judgments stay failed.

What it does to each statistic of ``agree`` (one increasing linear map per rater):

* **Judge vs humans** (Pearson, Spearman, Kendall at every level): the judge's item means are the
  same linear map of its raw item means, and every coefficient is invariant to it, so a change
  comes only from the human reference — the mean of the *standardised* humans weights each human by
  1/SD and removes their mean differences (and which human rated which items matters). Against a
  file of human means (``human:mean``, one rater) nothing changes.
* **Human baseline**: ``pairwise`` (two raters, each mapped) is invariant; ``vs_mean`` changes with
  the reference.
* **Self-consistency**: a judge's samples share one map, so its ordinal α (which depends only on
  the order and frequencies of the values) and ICC(2,k) are invariant; the humans' change, since
  their mean and spread differences no longer count as disagreement.
* **Williams tests**: change only through the reference (judge-judge correlations are invariant).
* **Krippendorff's α (interval) of the judge with the individual humans** (``alpha_interval``,
  reported only in the side-by-side table): changes — a lenient or narrow judge disagrees in
  absolute terms on the raw scale, not after standardisation. This is the statistic that shows
  how much of a judge's disagreement is scale use.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.ratings import human_raters, is_human, item_means
from judgelab.stats import krippendorff_alpha
from judgelab.status import Status

__all__ = ["STANDARDIZE", "standardized_agreement", "standardize_scores", "alpha_vs_humans", "before_after", "SCALE_COLUMNS",
           "COMPARISON_COLUMNS"]

STANDARDIZE = ("none", "z")
SCALE_COLUMNS = ["rater", "criterion", "mean", "sd", "n", "note"]
COMPARISON_COLUMNS = ["table", "rater", "criterion", "level", "method", "statistic", "raw", "standardized", "change",
                      "note"]


def check_standardize(value: str) -> str:
    if value not in STANDARDIZE:
        raise JudgelabError(f"unknown --standardize {value!r}: {' or '.join(STANDARDIZE)}")
    return value


def standardize_scores(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``df`` with each (rater, criterion)'s successful scores z-standardised, and the maps used.

    Returns:
        (the standardised ratings table, ``SCALE_COLUMNS``: per rater and criterion the mean and SD
        (``ddof=0``) of its successful ratings, how many, and a note when it could not be standardised
        and was left out).

    Example:
        >>> z, scales = standardize_scores(ratings)  # doctest: +SKIP
    """
    ok = df["status"] == Status.OK
    scores = pd.to_numeric(df["score"], errors="coerce").astype(float)
    key = [df["rater"], df["criterion"]]
    good = scores.where(ok)
    mean = good.groupby(key).transform("mean")
    sd = good.groupby(key).transform(lambda s: s.std(ddof=0))
    rows = []
    drop: set[tuple[str, str]] = set()
    for (rater, criterion), s in good.groupby(key):
        values = s.dropna()
        m = float(values.mean()) if len(values) else math.nan
        d = float(values.std(ddof=0)) if len(values) else math.nan
        note = ""
        if len(values) < 2 or not d > 0:
            note = ("not standardised: " + ("fewer than two ratings" if len(values) < 2 else
                                            f"every rating is {m:g} (SD 0)") + "; left out of the standardised tables")
            drop.add((str(rater), str(criterion)))
        rows.append({"rater": rater, "criterion": criterion, "mean": m, "sd": d, "n": int(len(values)), "note": note})
    out = df.copy()
    out["score"] = ((scores - mean) / sd).where(ok, scores)
    gone = pd.Series([(str(r), str(c)) in drop for r, c in zip(df["rater"], df["criterion"])], index=df.index)
    return out[~gone].reset_index(drop=True), pd.DataFrame(rows, columns=SCALE_COLUMNS)


def alpha_vs_humans(df: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    """Per judge and criterion: Krippendorff's α (interval) of the judge's item means (its samples
    averaged) with the individual human raters' item means (with a file of means, ``human:mean``),
    units = (system, item) pairs, matched by label. Columns ``rater, criterion, alpha, n, note``."""
    means = item_means(df)
    rows = []
    for criterion in criteria:
        sub = means[means["criterion"] == criterion]
        humans = human_raters(sub) or sorted(r for r in sub["rater"].unique() if is_human(r))
        wide = sub.pivot_table(index="rater", columns=["system", "item_id"], values="score", aggfunc="first")
        for judge in sorted(r for r in sub["rater"].unique() if not is_human(r)):
            if not humans:
                continue
            block = wide.reindex([judge, *humans])
            both = block.loc[[judge]].notna().to_numpy()[0] & block.loc[humans].notna().any().to_numpy()
            alpha = krippendorff_alpha(block.to_numpy(float), "interval")
            note = "" if not math.isnan(alpha) else "alpha: no unit with two values, or every value the same"
            rows.append({"rater": judge, "criterion": criterion, "alpha": alpha, "n": int(both.sum()), "note": note})
    return pd.DataFrame(rows, columns=["rater", "criterion", "alpha", "n", "note"])


_KEYS = {"correlations": (["rater", "criterion", "level", "method"], ["r"]),
         "human_baseline": (["criterion", "level", "method"], ["vs_mean", "pairwise"]),
         "self_consistency": (["rater", "criterion"], ["alpha", "icc2k"])}


def before_after(raw: dict[str, pd.DataFrame], standardized: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The side-by-side table: every statistic of ``raw``'s tables beside the same statistic of
    ``standardized``'s, matched by its labels (rater, criterion, level, method), and the change.

    Args:
        raw, standardized: ``agree``'s tables by name (``AgreeReport.tables()``), plus ``alpha_interval``
            from :func:`alpha_vs_humans`.

    Returns:
        ``COMPARISON_COLUMNS``; a row present on one side only has NaN on the other and a note.
    """
    keys = dict(_KEYS, alpha_interval=(["rater", "criterion"], ["alpha"]))
    out = []
    for table, (on, stats) in keys.items():
        a, b = raw.get(table), standardized.get(table)
        if a is None or b is None or (a.empty and b.empty):
            continue
        merged = a[on + stats].merge(b[on + stats], on=on, how="outer", suffixes=("_raw", "_z"), indicator=True)
        for row in merged.to_dict(orient="records"):
            for stat in stats:
                x, z = float(row[f"{stat}_raw"]), float(row[f"{stat}_z"])
                note = {"left_only": "no standardised value: the rater could not be standardised",
                        "right_only": "no raw value"}.get(str(row["_merge"]), "")
                out.append({"table": table, "rater": row.get("rater", "humans"), "criterion": row["criterion"],
                            "level": row.get("level", ""), "method": row.get("method", ""),
                            "statistic": "alpha_interval" if table == "alpha_interval" else stat, "raw": x,
                            "standardized": z, "change": z - x if not (np.isnan(x) or np.isnan(z)) else math.nan,
                            "note": note})
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


def standardized_agreement(df: pd.DataFrame, agreement: Callable[..., Any], chosen: list[str], *args: Any) -> Any:
    """``agreement(df, *args)`` on the standardised scores (``agree.agreement(..., standardize="z")``
    passes itself and the criteria it checked): the report of the standardised scores, with ``extra`` =
    ``standardization`` (every statistic raw beside standardised, :func:`before_after`) and
    ``rater_scales`` (the maps, :func:`standardize_scores`)."""
    z_df, scales = standardize_scores(df)
    raw, z = agreement(df, *args), agreement(z_df, *args)
    side = before_after({**raw.tables(), "alpha_interval": alpha_vs_humans(df, chosen)},
                        {**z.tables(), "alpha_interval": alpha_vs_humans(z_df, chosen)})
    return dataclasses.replace(z, settings={**z.settings, "standardize": "z"},
                               extra={"standardization": side, "rater_scales": scales})
