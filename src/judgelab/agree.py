"""Agreement of raters over the tidy ratings table: judge vs human, human baseline,
self-consistency and Williams tests between judges.

* Judge vs human (HANNA, meta-evaluation; Chiang & Lee 2023, §3.3.1): each rater's mean
  over its samples is compared with the mean of the human raters per item, at the overall,
  per-group and system levels (:mod:`judgelab.stats.correlation`).
* Human baseline (HANNA): each human rater against the mean of all human ratings (an upper
  bound, since the rater is part of the mean), averaged over raters; and the mean pairwise
  correlation between human raters (Chiang & Lee 2023, Table 6).
* Self-consistency: Krippendorff's alpha (ordinal) and ICC(2,k) with its 95% CI, with
  samples (for a judge) or human raters (for the humans) as the raters.
* Williams tests (HANNA): for every pair of judges, H1 "judge A correlates better with the
  humans than judge B", BH-adjusted over the family of all pairs of one criterion and level.

Failed judgments never count as scores; each table reports how many ratings entered.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.ratings import is_human, item_means
from judgelab.stats import (
    bh_adjust,
    correlate,
    icc,
    krippendorff_alpha,
    overall,
    williams_one_sided,
)

__all__ = ["LEVELS", "level_correlation", "judge_vs_human", "human_baseline", "self_consistency", "williams_matrix"]

LEVELS = ("overall", "group", "system")


def _aligned(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Join two item-mean tables (system, item_id → score, group) on their items."""
    return a.merge(b, on=["system", "item_id"], suffixes=("_x", "_y"), how="inner")


def level_correlation(joined: pd.DataFrame, level: str, method: str, variant: str = "b"):
    """Correlation of ``score_x`` and ``score_y`` at one level (see module docstring)."""
    from judgelab.stats.correlation import Correlation

    if level == "overall":
        return overall(joined["score_x"], joined["score_y"], method, variant)
    if level == "system":
        both = joined.dropna(subset=["score_x", "score_y"])
        means = both.groupby("system")[["score_x", "score_y"]].mean()
        return correlate(means["score_x"], means["score_y"], method, variant)
    if level == "group":
        groups = joined["group_x"] if "group_x" in joined else joined.get("group")
        if groups is None or groups.isna().all():
            return Correlation(float("nan"), float("nan"), 0, "no group column: per-group correlation needs groups")
        values = [correlate(g["score_x"], g["score_y"], method, variant).r for _, g in joined.groupby(groups)]
        defined = [v for v in values if not np.isnan(v)]
        if not defined:
            return Correlation(float("nan"), float("nan"), 0, "no group has a defined correlation")
        return Correlation(float(np.mean(defined)), float("nan"), len(defined))
    raise JudgelabError(f"unknown level {level!r}: {', '.join(LEVELS)}")


def _human_mean(means: pd.DataFrame, criterion: str) -> pd.DataFrame:
    h = means[(means["criterion"] == criterion) & means["rater"].map(is_human)]
    return h.groupby(["system", "item_id"]).agg(score=("score", "mean"), group=("group", "first")).reset_index()


def _check_criteria(df: pd.DataFrame, criteria: list[str] | None) -> list[str]:
    known = sorted(df["criterion"].unique())
    if criteria is None:
        return known
    unknown = [c for c in criteria if c not in known]
    if unknown:
        raise JudgelabError(f"unknown criterion {', '.join(map(repr, unknown))}; the ratings have: {', '.join(known)}")
    return criteria


def _failure_rates(df: pd.DataFrame) -> pd.Series:
    """Share of judgments without a score, per (rater, criterion): printed beside every statistic."""
    return (df["status"] != "ok").groupby([df["rater"], df["criterion"]]).mean()


def judge_vs_human(df: pd.DataFrame, methods=("kendall",), levels=LEVELS, criteria: list[str] | None = None,
                   variant: str = "b") -> pd.DataFrame:
    """One row per (rater, criterion, level, method) for every non-human rater."""
    means = item_means(df)
    failures = _failure_rates(df)
    humans = means[means["rater"].map(is_human)]
    if humans.empty:
        raise JudgelabError("no human ratings (raters named human:<id>) to compare with")
    rows = []
    for criterion in _check_criteria(df, criteria):
        ref = _human_mean(means, criterion)
        for rater in sorted(r for r in means["rater"].unique() if not is_human(r)):
            mine = means[(means["rater"] == rater) & (means["criterion"] == criterion)][["system", "item_id", "score", "group"]]
            joined = _aligned(mine, ref)
            for level in levels:
                for method in methods:
                    c = level_correlation(joined, level, method, variant)
                    reason = "no items rated by both this rater and the humans" if joined.empty else c.reason
                    rows.append({"rater": rater, "criterion": criterion, "level": level, "method": method,
                                 "r": c.r, "p": c.p, "n": c.n, "failure_rate": float(failures.get((rater, criterion), 0.0)),
                                 "note": reason})
    return pd.DataFrame(rows)


def human_baseline(df: pd.DataFrame, methods=("kendall",), levels=LEVELS, criteria: list[str] | None = None,
                   variant: str = "b") -> pd.DataFrame:
    """Per criterion: mean correlation of each human rater with the mean of all humans
    (``vs_mean``, HANNA's baseline) and mean pairwise correlation between human raters
    (``pairwise``, Chiang & Lee Table 6), at each level and method."""
    means = item_means(df)
    rows = []
    for criterion in _check_criteria(df, criteria):
        humans = means[(means["criterion"] == criterion) & means["rater"].map(is_human)]
        raters = sorted(humans["rater"].unique())
        if len(raters) < 2:
            continue
        ref = _human_mean(means, criterion)
        per = {r: humans[humans["rater"] == r][["system", "item_id", "score", "group"]] for r in raters}
        for level in levels:
            for method in methods:
                vs_mean = [level_correlation(_aligned(per[r], ref), level, method, variant).r for r in raters]
                pairwise = [level_correlation(_aligned(per[a], per[b]), level, method, variant).r
                            for a, b in itertools.combinations(raters, 2)]
                rows.append({"criterion": criterion, "level": level, "method": method,
                             "vs_mean": _nanmean(vs_mean), "pairwise": _nanmean(pairwise), "raters": len(raters)})
    return pd.DataFrame(rows)


def _nanmean(values) -> float:
    arr = np.asarray(values, dtype=float)
    return float(np.nanmean(arr)) if np.any(~np.isnan(arr)) else float("nan")


def self_consistency(df: pd.DataFrame, criteria: list[str] | None = None) -> pd.DataFrame:
    """Per rater (all humans together as one group) and criterion: alpha (ordinal), ICC(2,k) and its 95% CI."""
    ok = df[df["status"] == "ok"]
    failures = _failure_rates(df)
    rows = []
    for criterion in _check_criteria(df, criteria):
        sub = ok[ok["criterion"] == criterion]
        human = sub[sub["rater"].map(is_human)]
        units: list[tuple[str, pd.DataFrame, str]] = []
        if not human.empty:
            units.append(("humans", human.assign(unit=human["rater"]), "human raters"))
        for rater in sorted(r for r in sub["rater"].unique() if not is_human(r)):
            s = sub[sub["rater"] == rater]
            units.append((rater, s.assign(unit=s["sample"].astype(str)), "samples"))
        for name, s, kind in units:
            wide = s.pivot_table(index=["system", "item_id"], columns="unit", values="score", aggfunc="first")
            if wide.shape[1] < 2:
                rows.append({"rater": name, "criterion": criterion, "raters_are": kind, "k": wide.shape[1], "items": len(wide),
                             "alpha": float("nan"), "icc2k": float("nan"), "icc2k_low": float("nan"), "icc2k_high": float("nan"),
                             "note": "needs at least two samples or raters"})
                continue
            res = icc(wide.to_numpy(float))["ICC(2,k)"]
            rows.append({"rater": name, "criterion": criterion, "raters_are": kind, "k": wide.shape[1], "items": len(wide),
                         "alpha": krippendorff_alpha(wide.to_numpy(float).T, "ordinal"),
                         "icc2k": res[0], "icc2k_low": res[1], "icc2k_high": res[2],
                         "failure_rate": float(failures.get((name, criterion), 0.0)), "note": ""})
    return pd.DataFrame(rows)


def williams_matrix(df: pd.DataFrame, level: str = "overall", method: str = "kendall",
                    criteria: list[str] | None = None, variant: str = "b") -> pd.DataFrame:
    """For each criterion and ordered pair of judges (A, B): one-sided Williams test of
    corr(A, humans) > corr(B, humans), with BH-adjusted p over the pairs of that criterion."""
    if level not in {"overall", "system"}:
        raise JudgelabError("Williams tests need one correlation per judge: use level overall or system")
    means = item_means(df)
    judges = sorted(r for r in means["rater"].unique() if not is_human(r))
    rows = []
    for criterion in _check_criteria(df, criteria):
        ref = _human_mean(means, criterion).rename(columns={"score": "human"})
        table = ref[["system", "item_id", "human"]]
        for j in judges:
            mine = means[(means["rater"] == j) & (means["criterion"] == criterion)][["system", "item_id", "score"]]
            table = table.merge(mine.rename(columns={"score": j}), on=["system", "item_id"], how="inner")
        table = table.dropna()
        if level == "system":
            table = table.groupby("system")[["human", *judges]].mean().reset_index()
        n = len(table)
        family = []
        for a, b in itertools.permutations(judges, 2):
            r12 = correlate(table["human"], table[a], method, variant).r
            r13 = correlate(table["human"], table[b], method, variant).r
            r23 = correlate(table[a], table[b], method, variant).r
            t, p = williams_one_sided(r12, r13, r23, n)
            family.append({"criterion": criterion, "judge_a": a, "judge_b": b, "r_a": r12, "r_b": r13, "r_ab": r23,
                           "n": n, "t": t, "p": p})
        adjusted = bh_adjust([f["p"] for f in family])
        for f, q in zip(family, adjusted):
            f["p_bh"] = float(q)
        rows.extend(family)
    return pd.DataFrame(rows)
