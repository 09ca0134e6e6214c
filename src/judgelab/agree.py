"""Agreement of raters over the tidy ratings table: judge vs human, human baseline,
self-consistency and Williams tests between judges.

* Judge vs human (HANNA, meta-evaluation; Chiang & Lee 2023, §3.3.1): each rater's mean
  over its samples is compared with the mean of the human raters per item, at the overall,
  per-group and system levels (:func:`judgelab.stats.correlation.level_correlation`, the one
  level dispatch), each with an item-clustered (per-group level: group-clustered) bootstrap CI.
* Human baseline (HANNA): each human rater against the mean of all human ratings (an upper
  bound, since the rater is part of the mean), averaged over raters; and the mean pairwise
  correlation between human raters (Chiang & Lee 2023, Table 6). Needs two individual raters:
  a file of mean ratings (rater ``human:mean``) skips it with a reason.
* Self-consistency: Krippendorff's alpha (ordinal) and ICC(2,k) with its 95% CI, with
  samples (for a judge) or human raters (for the humans) as the raters.
* Williams tests (HANNA): for every pair of judges, H1 "judge A correlates better with the
  humans than judge B", BH-adjusted over the family of all pairs of one criterion and level.
  One judge: no pair, so the table has its columns and no row (and a reason).

Failed judgments never count as scores; each table reports how many ratings entered. Every NaN
has its reason in the ``note`` column. Raters, items and groups are matched by label, never by
position: a rater who skipped a group is missing in that group's correlations only, and every
bootstrap resample draws the same groups (or items) for all raters. ``n`` counts the paired
values, systems or defined groups behind an estimate; ``n_clusters`` the items (overall, system
level) or groups (group level) it used, which the bootstrap resamples.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.ratings import human_raters, is_human, item_means, read_ratings
from judgelab.raters import human_mask
from judgelab.stats import bh_adjust, correlate, icc, krippendorff_alpha, williams_test
from judgelab.stats.reliability import icc_reason
from judgelab.agree_gate import Threshold, parse_threshold, threshold_failures
from judgelab.stats.correlation import LEVELS, level_correlation, mean_level_correlation
from judgelab.status import Status

__all__ = ["LEVELS", "level_correlation", "judge_vs_human", "human_baseline", "self_consistency", "williams_matrix",
           "agreement", "AgreeReport", "matched_means", "Threshold", "parse_threshold", "threshold_failures", "JSON_SCHEMA", "CORRELATION_COLUMNS", "BASELINE_COLUMNS",
           "CONSISTENCY_COLUMNS", "WILLIAMS_COLUMNS"]

JSON_SCHEMA = 1
CORRELATION_COLUMNS = ["rater", "criterion", "level", "method", "r", "p", "n", "n_clusters", "ci_low", "ci_high",
                       "failure_rate", "note"]
BASELINE_COLUMNS = ["criterion", "level", "method", "vs_mean", "vs_mean_ci_low", "vs_mean_ci_high", "vs_mean_n",
                    "vs_mean_n_clusters", "pairwise", "pairwise_ci_low", "pairwise_ci_high", "pairwise_n",
                    "pairwise_n_clusters", "raters", "note"]
CONSISTENCY_COLUMNS = ["rater", "criterion", "raters_are", "k", "items", "alpha", "icc2k", "icc2k_low", "icc2k_high",
                       "failure_rate", "note"]
WILLIAMS_COLUMNS = ["criterion", "judge_a", "judge_b", "r_a", "r_b", "r_ab", "n", "t", "p", "p_bh"]
_HUMANS = "__humans__"


def _human_mean(means: pd.DataFrame, criterion: str) -> pd.DataFrame:
    h = means[(means["criterion"] == criterion) & human_mask(means["rater"])]
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
    return (df["status"] != Status.OK).groupby([df["rater"], df["criterion"]]).mean()


def _joined(mine: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """Two item-mean tables joined on (system, item_id) as ``score_x``/``score_y``; the group comes
    from the first table, else the second (a file of human means often has no group column)."""
    joined = mine.merge(ref, on=["system", "item_id"], suffixes=("_x", "_y"), how="inner")
    joined["group"] = joined["group_x"].where(joined["group_x"].notna(), joined["group_y"])
    return joined[["system", "item_id", "group", "score_x", "score_y"]]


def matched_means(df: pd.DataFrame, rater: str, criterion: str, means: pd.DataFrame | None = None) -> pd.DataFrame:
    """The pairs :func:`judge_vs_human` correlates for one rater and criterion: per (system, item) the
    rater's mean over its successful samples (``score_x``) and the mean of the human raters
    (``score_y``), joined on the labels; ``means`` is :func:`judgelab.ratings.item_means` of ``df``
    when already computed.

    Example:
        >>> matched_means(ratings, "judge", "coherence")[["score_x", "score_y"]].mean()  # doctest: +SKIP
    """
    means = item_means(df) if means is None else means
    mine = means[(means["rater"] == rater) & (means["criterion"] == criterion)][["system", "item_id", "score", "group"]]
    return _joined(mine, _human_mean(means, criterion))


def judge_vs_human(df: pd.DataFrame, methods=("kendall",), levels=LEVELS, criteria: list[str] | None = None,
                   variant: str = "b", n_resamples: int = 999, seed: int = 0,
                   ci_method: str = "percentile", means: pd.DataFrame | None = None) -> pd.DataFrame:
    """Correlation of every judge with the mean human rating, per criterion, level and method.

    Args:
        df: the tidy ratings table (judges and ``human:<id>`` raters).
        methods: ``kendall``, ``pearson``, ``spearman``; levels: ``overall``, ``group``, ``system``.
        criteria: the criteria to report (default: all); ``variant``: Kendall's ``b`` or ``c``.
        n_resamples: bootstrap resamples of the CI (0: none); seed: its seed.
        means: :func:`judgelab.ratings.item_means` of ``df`` when already computed.

    Returns:
        One row per (rater, criterion the rater rated, level, method): ``CORRELATION_COLUMNS`` (``r, p, n,
        n_clusters, ci_low, ci_high``, the rater's failure rate, and ``note`` naming the reason of each NaN).

    Raises:
        JudgelabError: no human ratings, or an unknown criterion.

    Example:
        >>> judge_vs_human(ratings, ["kendall"], ["overall"])  # doctest: +SKIP
    """
    means = item_means(df) if means is None else means
    failures = _failure_rates(df)
    if not human_mask(means["rater"]).any():
        raise JudgelabError("no human ratings (raters named human:<id>) to compare with")
    rated = set(df[["rater", "criterion"]].drop_duplicates().itertuples(index=False, name=None))  # the criteria a judge rated
    rows = []
    for criterion in _check_criteria(df, criteria):
        for rater in sorted(r for r in df["rater"].unique() if not is_human(r) and (r, criterion) in rated):
            joined = matched_means(df, rater, criterion, means)
            for level in levels:
                for method in methods:
                    c = level_correlation(joined, level, method, variant, n_resamples=n_resamples, seed=seed,
                                          ci_method=ci_method)
                    d = c.to_dict()
                    if joined.empty:
                        d["note"] = "r: no items rated by both this rater and the humans"
                    rows.append({"rater": rater, "criterion": criterion, "level": level, "method": method, **d,
                                 "failure_rate": float(failures.get((rater, criterion), 0.0))})
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def _baseline_skip(df: pd.DataFrame) -> str:
    raters = human_raters(df)
    if len(raters) >= 2:
        return ""
    if not raters and human_mask(df["rater"]).any():
        return "the human ratings are means (rater human:mean), not individual raters: a human baseline needs two"
    return f"needs at least two individual human raters; the ratings have {len(raters)}"


def human_baseline(df: pd.DataFrame, methods=("kendall",), levels=LEVELS, criteria: list[str] | None = None,
                   variant: str = "b", n_resamples: int = 999, seed: int = 0,
                   ci_method: str = "percentile", means: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per criterion: mean correlation of each human rater with the mean of all humans
    (``vs_mean``, HANNA's baseline) and mean pairwise correlation between human raters
    (``pairwise``, Chiang & Lee Table 6), at each level and method, each with a clustered
    bootstrap CI (all raters resampled on the same items or groups, matched by label: a rater who
    skipped a group is missing there, the other raters are not shifted).

    Returns:
        ``BASELINE_COLUMNS``: ``*_n`` the smallest ``n`` of the rater pairs, ``*_n_clusters`` the
        items or groups the estimate used; no row for a criterion with fewer than
        two individual raters (:func:`agreement` reports why).

    Example:
        >>> human_baseline(ratings, ["pearson"], ["overall"]).vs_mean  # doctest: +SKIP

    ``means``: :func:`judgelab.ratings.item_means` of ``df`` when already computed.
    """
    means = item_means(df) if means is None else means
    rows = []
    for criterion in _check_criteria(df, criteria):
        sub = means[means["criterion"] == criterion]
        raters = human_raters(sub)
        if len(raters) < 2:
            continue
        humans = sub[sub["rater"].isin(raters)]
        wide = humans.pivot_table(index=["system", "item_id"], columns="rater", values="score", aggfunc="first")
        ref = _human_mean(means, criterion).set_index(["system", "item_id"])
        wide[_HUMANS] = ref["score"]
        wide["group"] = ref["group"]
        wide = wide.reset_index()
        for level in levels:
            for method in methods:
                vs = mean_level_correlation(wide, [(r, _HUMANS) for r in raters], level, method, variant, n_resamples, seed,
                                            ci_method=ci_method)
                pw = mean_level_correlation(wide, list(itertools.combinations(raters, 2)), level, method, variant,
                                            n_resamples, seed, ci_method=ci_method)
                notes = [f"vs_mean {vs.note}" if vs.note else "", f"pairwise {pw.note}" if pw.note else ""]
                rows.append({"criterion": criterion, "level": level, "method": method,
                             "vs_mean": vs.r, "vs_mean_ci_low": vs.ci_low, "vs_mean_ci_high": vs.ci_high, "vs_mean_n": vs.n,
                             "vs_mean_n_clusters": vs.n_clusters, "pairwise": pw.r, "pairwise_ci_low": pw.ci_low,
                             "pairwise_ci_high": pw.ci_high, "pairwise_n": pw.n, "pairwise_n_clusters": pw.n_clusters,
                             "raters": len(raters), "note": "; ".join(n for n in notes if n)})
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def self_consistency(df: pd.DataFrame, criteria: list[str] | None = None) -> pd.DataFrame:
    """Per rater (all individual humans together as one group) and criterion: Krippendorff's alpha
    (ordinal) and ICC(2,k) with its 95% CI (:func:`judgelab.stats.icc`), samples or human raters as
    the raters. A file of human means (``human:mean``) has no raters to compare and gets no row.

    Returns:
        ``CONSISTENCY_COLUMNS``; NaN with a ``note`` for a judge with one sample.
    """
    ok = df[df["status"] == Status.OK]
    failures = _failure_rates(df)
    individual = set(human_raters(df))
    rows = []
    for criterion in _check_criteria(df, criteria):
        sub = ok[ok["criterion"] == criterion]
        human = sub[sub["rater"].isin(individual)]
        units: list[tuple[str, pd.DataFrame, str]] = []
        if not human.empty:
            units.append(("humans", human.assign(unit=human["rater"]), "human raters"))
        for rater in sorted(r for r in sub["rater"].unique() if not is_human(r)):
            s = sub[sub["rater"] == rater]
            units.append((rater, s.assign(unit=s["sample"].astype(str)), "samples"))
        for name, s, kind in units:
            wide = s.pivot_table(index=["system", "item_id"], columns="unit", values="score", aggfunc="first")
            base = {"rater": name, "criterion": criterion, "raters_are": kind, "k": wide.shape[1], "items": len(wide),
                    "failure_rate": float(failures.get((name, criterion), 0.0)) if name != "humans" else 0.0}
            if wide.shape[1] < 2:
                rows.append({**base, "alpha": math.nan, "icc2k": math.nan, "icc2k_low": math.nan, "icc2k_high": math.nan,
                             "note": f"alpha, icc2k: needs at least two {kind}; this rater has {wide.shape[1]}"})
                continue
            res = icc(wide.to_numpy(float)).average
            alpha = krippendorff_alpha(wide.to_numpy(float).T, "ordinal")
            notes = []
            if math.isnan(alpha):
                notes.append("alpha: no item with two ratings, or every rating the same")
            if any(math.isnan(v) for v in res):  # estimate, ci_low, ci_high
                notes.append(f"icc2k: {icc_reason(wide, kind, res.estimate)}")
            rows.append({**base, "alpha": alpha, "icc2k": res.estimate, "icc2k_low": res.ci_low, "icc2k_high": res.ci_high,
                         "note": "; ".join(notes)})
    return pd.DataFrame(rows, columns=CONSISTENCY_COLUMNS)


def williams_matrix(df: pd.DataFrame, level: str = "overall", method: str = "kendall",
                    criteria: list[str] | None = None, variant: str = "b",
                    means: pd.DataFrame | None = None) -> pd.DataFrame:
    """For each criterion and ordered pair of judges (A, B): one-sided Williams test of
    corr(A, humans) > corr(B, humans), with BH-adjusted p over the pairs of that criterion.

    Returns:
        ``WILLIAMS_COLUMNS``; no row with fewer than two judges (a test compares two). ``means``:
        :func:`judgelab.ratings.item_means` of ``df`` when already computed.
    """
    if level not in {"overall", "system"}:
        raise JudgelabError("Williams tests need one correlation per judge: use level overall or system")
    means = item_means(df) if means is None else means
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
            t, p = williams_test(r12, r13, r23, n, alternative="greater")
            family.append({"criterion": criterion, "judge_a": a, "judge_b": b, "r_a": r12, "r_b": r13, "r_ab": r23,
                           "n": n, "t": t, "p": p})
        adjusted = bh_adjust([f["p"] for f in family])
        for f, q in zip(family, adjusted):
            f["p_bh"] = float(q)
        rows.extend(family)
    return pd.DataFrame(rows, columns=WILLIAMS_COLUMNS)


@dataclass(frozen=True)
class AgreeReport:
    """Everything ``judgelab agree`` reports: four tables, why a table is empty, and the settings.

    ``to_dict()`` is the command's JSON (``schema`` 1)::

        {"schema": 1, "command": "agree", "settings": {...},
         "tables": {"correlations": [row, ...], "human_baseline": [...], "self_consistency": [...],
                    "williams": [...]},
         "skipped": {"<table>": "<why it has no row>"}, "notes": ["<table>: <a row's note> (<n> rows)", ...]}

    A row is an object with the table's columns (``*_COLUMNS``); NaN is ``null`` and its reason is
    in the row's ``note``.
    """

    correlations: pd.DataFrame
    human_baseline: pd.DataFrame
    self_consistency: pd.DataFrame
    williams: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    #: ``--standardize z``: ``standardization`` (every statistic raw beside standardised) and
    #: ``rater_scales`` (each rater's mean and SD), :mod:`judgelab.agree_standardize`.
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    TABLES = ("correlations", "human_baseline", "self_consistency", "williams")

    def tables(self) -> dict[str, pd.DataFrame]:
        return {**{name: getattr(self, name) for name in self.TABLES}, **self.extra}

    def to_frame(self, table: str = "correlations") -> pd.DataFrame:
        return getattr(self, table)

    def notes(self, nan_only: bool = False) -> list[tuple[str, str, int]]:
        """(table, note, rows) per distinct note of a row, in table order: a NaN's reason or a caveat (few
        clusters …); ``nan_only`` (:meth:`nan_notes`): of rows where a number is NaN only."""
        out: list[tuple[str, str, int]] = []
        for name, t in self.tables().items():
            if "note" in t and not t.empty:
                noted = (t["note"].fillna("").astype(str) != "") & (t.select_dtypes("number").isna().any(axis=1) | (not nan_only))
                out.extend((name, str(note), int(n)) for note, n in t.loc[noted, "note"].value_counts(sort=False).items())
        return out

    nan_notes = partialmethod(notes, nan_only=True)  # a caveat on a row with every number is no NaN's reason

    def to_dict(self) -> dict[str, Any]:
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return None if math.isnan(v) else float(v)
            if isinstance(v, np.integer):
                return int(v)
            return v

        return {"schema": JSON_SCHEMA, "command": "agree", "settings": self.settings,
                "tables": {k: [{c: clean(v) for c, v in r.items()} for r in t.to_dict(orient="records")]
                           for k, t in self.tables().items()},
                "skipped": dict(self.skipped),
                "notes": [f"{table}: {note} ({n} row{'s' if n != 1 else ''})" for table, note, n in self.notes()]}


def agreement(df: pd.DataFrame, methods=("kendall",), levels=LEVELS, criteria: list[str] | None = None,
              variant: str = "b", williams_level: str = "overall", n_resamples: int = 999, seed: int = 0,
              ci_method: str = "percentile", standardize: str = "none") -> AgreeReport:
    """All of ``agree``'s analyses of one ratings table, as an :class:`AgreeReport`.

    Tables that need what the ratings lack are empty with the reason in ``skipped``: the human
    baseline without two individual human raters (a file of means), Williams tests with fewer than
    two judges, self-consistency without two samples or raters anywhere.

    ``standardize="z"``: the tables are computed on each rater's z-standardised scores, and
    ``extra`` holds them side by side with the raw ones (:mod:`judgelab.agree_standardize` says which
    statistics change and why).

    ``df`` is any ratings table :func:`judgelab.ratings.read_ratings` reads: a judge's ratings
    (``RateResult.ratings``, ``Store.ratings()``) stacked with human ratings (``import_human``, or
    rows of raters named ``human:<id>``); a row without ``status`` is an ``ok`` rating when it has a
    score.

    Example:
        >>> report = agreement(pd.concat([result.ratings, import_human(humans)]), n_resamples=999)  # doctest: +SKIP
        >>> report.correlations[["rater", "level", "r", "ci_low", "ci_high"]]  # doctest: +SKIP
    """
    from judgelab.agree_standardize import check_standardize, standardized_agreement

    df = read_ratings(df)
    if check_standardize(standardize) != "none":
        return standardized_agreement(df, agreement, _check_criteria(df, criteria), methods, levels, criteria,
                                      variant, williams_level, n_resamples, seed, ci_method)
    means = item_means(df)  # once, for the three analyses of means
    corr = judge_vs_human(df, methods, levels, criteria, variant, n_resamples, seed, ci_method, means)
    base = human_baseline(df, methods, levels, criteria, variant, n_resamples, seed, ci_method, means)
    cons = self_consistency(df, criteria)
    will = williams_matrix(df, williams_level, methods[0], criteria, variant, means)
    skipped: dict[str, str] = {}
    if base.empty:
        skipped["human_baseline"] = _baseline_skip(df) or "no criterion has two individual human raters"
    if cons.empty:
        skipped["self_consistency"] = "no rater with two samples, and no two individual human raters"
    if will.empty:
        judges = sorted(r for r in df["rater"].unique() if not is_human(r))
        skipped["williams"] = (f"Williams tests compare two judges; the ratings have {len(judges)}"
                               if len(judges) < 2 else "no items rated by all judges and the humans")
    settings = {"methods": list(methods), "levels": list(levels), "kendall_variant": variant,
                "williams_level": williams_level, "n_resamples": n_resamples, "seed": seed, "ci_method": ci_method,
                "confidence_level": 0.95, "standardize": "none",
                "bootstrap_clusters": {"overall": "item_id", "system": "item_id (systems fixed)", "group": "group"}}
    return AgreeReport(corr, base, cons, will, skipped, settings)
