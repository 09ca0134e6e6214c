"""The jury beside the single judges (:func:`jury_vs_judges`): each one's agreement with the humans
(:func:`judgelab.agree.judge_vs_human`) and the paired difference between a jury and the best single
judge. The jury itself is :func:`judgelab.stats.jury.jury` (pure statistics, no agreement tables).
"""
from __future__ import annotations

import math

import pandas as pd

from judgelab.agree import judge_vs_human, matched_means
from judgelab.errors import JudgelabError
from judgelab.raters import is_jury
from judgelab.ratings import item_means

__all__ = ["jury_vs_judges", "PAIRED_NOTE"]


def jury_vs_judges(df: pd.DataFrame, jury_raters: list[str], level: str = "group", method: str = "kendall",
                   criteria: list[str] | None = None, n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """The jury beside every single judge: correlation with the mean human rating, and jury − best judge.

    Args:
        df: the tidy table with the jury's rows (:attr:`Jury.ratings` combined with the ratings).
        jury_raters: the juries' labels (e.g. ``["jury:mean", "jury:weighted"]``).
        level, method: as in :func:`judgelab.stats.correlation.level_correlation` (``group`` with
            HANNA's story prompts as groups is its story level).

    Returns:
        :data:`judgelab.agree.CORRELATION_COLUMNS` for every judge and jury, plus for every jury
        the row ``rater = "<jury> - <best judge>"`` with the paired difference of their two rows' ``r``
        and its interval (``n``: the texts, or per group the groups, of either; the note counts each
        one's texts when they differ).
    """
    table = judge_vs_human(df, (method,), (level,), criteria, n_resamples=n_resamples, seed=seed)
    extra = []
    for crit, t in table.groupby("criterion", sort=True):
        singles = t[~t["rater"].map(is_jury).astype(bool)]
        if singles.empty or singles["r"].isna().all():
            continue
        best = singles.loc[singles["r"].idxmax(), "rater"]
        for jury_rater in jury_raters:
            if jury_rater in set(t["rater"]):
                extra.append(_difference(df, crit, jury_rater, best, level, method, n_resamples, seed))
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True) if extra else table


PAIRED_NOTE = "paired difference, jury minus the best single judge (chosen on the same data)"


def _difference(df, crit, a, b, level, method, n_resamples, seed) -> dict:
    """r(a, humans) − r(b, humans), each on its own items as in its row of :func:`jury_vs_judges` (the
    texts it and the humans rated), with a paired cluster-bootstrap interval (the same resampled groups
    or items for both); the note counts the texts of each when they differ."""
    from judgelab.stats.bootstrap import cluster_bootstrap_ci
    from judgelab.stats.bootstrap_schemes import _fast_r, label_table_ci
    from judgelab.stats.correlation import _group_rs, _with_groups

    means = item_means(df)
    fa, fb = (matched_means(df, r, crit, means).dropna(subset=["score_x", "score_y"]) for r in (a, b))
    row = {"rater": f"{a} - {b}", "criterion": crit, "level": level, "method": method}
    if level == "group":
        ra, rb = (_group_rs(_with_groups(f, [("score_x", "score_y")])[0], method, "b", "score_x", "score_y", "exact")
                  for f in (fa, fb))
        table = pd.concat([ra, rb], axis=1, keys=[0, 1], join="outer").sort_index()
        defined = table.notna().any()
        point = float(table[0].mean() - table[1].mean()) if defined.all() else math.nan
        ci = label_table_ci(table, "group", n_resamples, seed=seed, weights=[1, -1]) \
            if n_resamples > 0 and not math.isnan(point) else None
        row["n"] = row["n_clusters"] = len(table)
    elif level == "overall":
        frame = fa.merge(fb, on=["system", "item_id"], how="outer", suffixes=("_a", "_b"))
        xa, xb = frame["score_x_a"].to_numpy(float), frame["score_x_b"].to_numpy(float)
        y = frame["score_y_a"].fillna(frame["score_y_b"]).to_numpy(float)
        point = _fast_r(xa, y, method, "b", "exact") - _fast_r(xb, y, method, "b", "exact")

        def stat(rows, _c):
            return _fast_r(xa[rows], y[rows], method, "b", "exact") - _fast_r(xb[rows], y[rows], method, "b", "exact")
        ci = cluster_bootstrap_ci(frame, stat, "item_id", n_resamples, seed=seed, rows=True) \
            if n_resamples > 0 and not math.isnan(point) else None
        row["n"], row["n_clusters"] = len(frame), frame["item_id"].nunique()
    else:
        raise JudgelabError("jury difference: level overall or group")
    common = len(fa.merge(fb, on=["system", "item_id"]))
    items = "" if common == len(fa) == len(fb) else (
        f"each r on its own texts, as in its row ({a}: {len(fa)}, {b}: {len(fb)}, {common} rated by both)")
    why = ci.message if ci else "no bootstrap" if n_resamples <= 0 or not math.isnan(point) else \
        "r: one of the two has no defined correlation"
    row.update(r=point, p=math.nan, ci_low=ci.low if ci else math.nan, ci_high=ci.high if ci else math.nan,
               note="; ".join(s for s in (why, PAIRED_NOTE, items) if s))
    return row
