"""Section builders of the HTML report: each turns what a folder holds into typed report data
(the run-level sections, "What ran" and "Cost and time", are :mod:`judgelab.report.html_runs`).

Each builder returns ``None`` when its data is absent; :func:`judgelab.report.html.build_report`
runs them and records (rather than raises) a builder's failure on damaged data, so that a
report is always written.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, TypeGuard

import numpy as np
import pandas as pd

from judgelab.report.folder import RunFolder, read_table
from judgelab.report.html_model import (
    ColumnKind,
    Discernment,
    FailureExample,
    Failures,
    Figure,
    Results,
    Table,
)
from judgelab.report.humans import HumanRatings
from judgelab.report.svg import BarSeries, Point, bar_chart, interval_chart
from judgelab.status import Status

__all__ = ["df_table", "mean_ci", "results", "discernment", "failures", "other_tables", "CONSUMED_FILES",
           "OTHER_TABLE_ROWS"]

#: Files the sections read; any other CSV in the folder is shown under "Other tables".
CONSUMED_FILES = {"ratings.csv", "summary.csv", "welch.csv", "correlations.csv", "williams.csv", "human_baseline.csv",
                  "self_consistency.csv", "discernment.csv", "perturbations.csv", "perturbation_report.csv", "cost.csv",
                  "human_ratings.csv"}
OTHER_TABLE_ROWS = 500


# -- helpers -----------------------------------------------------------------
def _finite(x: Any) -> TypeGuard[float]:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _clean(value: Any) -> Any:
    """A table cell: numpy scalars to Python, NaN to None."""
    if value is None:
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, (np.bool_, bool)):
        return str(bool(value)).lower()
    if isinstance(value, (list, tuple, dict)):
        return str(value)
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value


def _kind(name: str, series: pd.Series) -> ColumnKind:
    lowered = name.lower()
    if pd.api.types.is_bool_dtype(series):
        return "text"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_numeric_dtype(series):
        if lowered == "p" or lowered.startswith("p_") or lowered.endswith("_p"):
            return "p"
        return "num"
    return "text"


def df_table(df: pd.DataFrame, table_id: str, caption: str, note: str = "", rename: dict[str, str] | None = None,
             kinds: dict[str, ColumnKind] | None = None, row_header: bool = True) -> Table:
    """A report table from a DataFrame (column kinds inferred; ``kinds`` overrides)."""
    kinds = kinds or {}
    columns = [str(c) for c in df.columns]
    return Table(
        id=table_id, caption=caption,
        columns=[(rename or {}).get(c, c) for c in columns],
        kinds=[kinds.get(c, _kind(c, df[c])) for c in columns],
        rows=[[_clean(v) for v in row] for row in df.itertuples(index=False, name=None)],
        note=note, row_header=row_header,
    )


def mean_ci(values: Iterable[float]) -> tuple[float | None, float | None, float | None, int]:
    """(mean, low, high, n) for a table cell: :func:`judgelab.stats.describe.mean_interval`'s 95% t
    interval, None where it is undefined (no values; no interval below two values or with zero spread)."""
    from judgelab.stats.describe import mean_interval

    r = mean_interval(list(values))
    cell = lambda v: v if _finite(v) else None  # noqa: E731
    return cell(r.mean), cell(r.low), cell(r.high), r.n


# -- results ---------------------------------------------------------------------
def results(folder: RunFolder, judge: pd.DataFrame | None, humans: HumanRatings) -> Results | None:
    """The "Results" section: per rater, system and criterion means with CIs and figures (None without ratings)."""
    welch = None
    if folder.has("welch.csv"):
        w = read_table(folder.file("welch.csv"))
        if not w.empty:
            welch = df_table(w, "welch", "Welch's t-test between two systems (per-item means)")
    no_humans = humans.table is None or humans.table.empty
    if (judge is None or judge.empty) and no_humans:
        if folder.has("summary.csv"):
            s = read_table(folder.file("summary.csv"))
            if not s.empty:
                return Results(df_table(s, "summary", "Summary (summary.csv)"), [], welch,
                               "No judgments in the folder to compute intervals from; summary.csv is shown as written.")
        return None
    from judgelab.ratings import item_means
    from judgelab.summary import TABLE1_ALPHA_LEVEL, summarize

    rows = []
    if judge is not None and not judge.empty:
        base = summarize(judge)  # its mean is summary.score_means, the one mean per rater, system and criterion
        per_item = item_means(judge).dropna(subset=["score"]).set_index(["rater", "system", "criterion"])["score"]
    else:
        base = pd.DataFrame()
    for rec in base.itertuples(index=False):
        try:
            values = per_item.loc[[(rec.rater, rec.system, rec.criterion)]].to_numpy(float)
        except KeyError:
            values = np.array([])
        _, lo, hi, n = mean_ci(values)  # the interval over the same item means summary.csv's mean averages
        rows.append([rec.rater, rec.system, rec.criterion, rec.items, rec.samples, _clean(rec.mean), lo, hi,
                     rec.sd, rec.alpha, rec.exact_agreement, rec.failed, rec.failure_rate])
    hum = humans.table
    if hum is not None and not hum.empty:
        hok = hum[(hum["status"] == Status.OK) & hum["score"].notna()].copy()
        hok["system"] = hok["system"].where(hok["system"].notna(), "(any)")
        per_rater = hok.groupby(["system", "criterion", "item_id", "rater"])["score"].mean()
        per_item = per_rater.groupby(level=["system", "criterion", "item_id"]).mean()
        for (system, criterion), values in per_item.groupby(level=["system", "criterion"]):
            mean, lo, hi, n = mean_ci(values.to_numpy(float))
            raters = hok[(hok["system"] == system) & (hok["criterion"] == criterion)]["rater"].nunique()
            rows.append([f"humans (mean of {raters} rater{'s' if raters != 1 else ''})", system, criterion, n, None,
                         mean, lo, hi, None, None, None, None, None])
    table = Table(
        id="summary", caption="Mean score per rater, system and criterion, with 95% confidence intervals",
        columns=["rater", "system", "criterion", "items", "samples", "mean", "95% CI low", "95% CI high", "SD",
                 f"α ({TABLE1_ALPHA_LEVEL}, samples)", "exact agreement", "failed", "failure rate"],
        kinds=["text", "text", "text", "int", "int", "num", "num", "num", "num", "num", "num", "int", "num"],
        rows=rows,
        note="mean = mean of per-item means (samples averaged, failed judgments left out; the mean of summary.csv); "
             "95% CI = t-interval over items (items are the independent units). SD over all successful ratings; "
             f"α = Krippendorff's α ({TABLE1_ALPHA_LEVEL}) with samples as annotators; exact agreement = share of "
             "items whose samples all agree.")
    figures = []
    for k, criterion in enumerate(sorted({r[2] for r in rows})):
        mine = [r for r in rows if r[2] == criterion]
        raters = sorted({r[0] for r in mine})
        points = [Point(label=f"{r[1]}" if len(raters) == 1 else f"{r[1]} · {r[0]}", value=r[5], low=r[6], high=r[7],
                        series=raters.index(r[0])) for r in mine]
        figures.append(Figure(
            id=f"fig-results-{k}", title=f"Mean {criterion} score by system, with 95% CI",
            description=f"Dot plot of the mean {criterion} score of each system"
                        + (f" for raters {', '.join(raters)}" if len(raters) > 1 else f" rated by {raters[0]}")
                        + "; horizontal lines are 95% confidence intervals over items.",
            svg=interval_chart(points, f"fig-results-{k}", f"Mean {criterion} score by system, with 95% CI",
                               f"Mean {criterion} score per system with 95% confidence intervals over items.",
                               f"mean {criterion} score (95% CI over items)", "system" if len(raters) == 1 else "system · rater",
                               series_names=raters if len(raters) > 1 else ())))
    return Results(table, figures, welch, "")


# -- discernment -------------------------------------------------------------------------
def discernment(folder: RunFolder) -> Discernment | None:
    """The DHP section from discernment.json/csv of the folder (None when the folder holds no DHP run)."""
    if not (folder.has("discernment.csv") or folder.has("perturbations.csv")):
        return None
    summary = read_table(folder.file("discernment.csv")) if folder.has("discernment.csv") else pd.DataFrame()
    per = read_table(folder.file("perturbations.csv")) if folder.has("perturbations.csv") else pd.DataFrame()
    figure = None
    if not per.empty and {"perturbation", "D"} <= set(per.columns):
        judges = sorted(per["judge"].astype(str).unique()) if "judge" in per else ["judge"]
        cats: list[str] = []
        for row in per.itertuples(index=False):
            label = f"{row.perturbation} ({row.level})" if "level" in per else str(row.perturbation)
            if label not in cats:
                cats.append(label)
        series = []
        for j in judges:
            mine = per[per["judge"].astype(str) == j] if "judge" in per else per
            values = {(f"{r.perturbation} ({r.level})" if "level" in per else str(r.perturbation)): _clean(r.D)
                      for r in mine.itertuples(index=False)}
            series.append(BarSeries(j, [values.get(c) for c in cats]))
        title = "Discernment D per perturbation (D > 1: the judge rates perturbed copies lower, p < 0.05)"
        figure = Figure("fig-dhp", title,
                        "Horizontal bars of the discernment score D = log base 0.05 of the combined p-value for each "
                        "perturbation and judge; the dashed line marks D = 1.",
                        bar_chart(cats, series, "fig-dhp", title, "D per perturbation and judge", "discernment D",
                                  "perturbation (level)", threshold=1.0, threshold_label="D = 1 (p = 0.05)"))
    left_out = None
    if folder.has("perturbation_report.csv"):
        rep = read_table(folder.file("perturbation_report.csv"))
        if not rep.empty and {"perturbation", "ok"} <= set(rep.columns):
            ok = rep["ok"].astype(str).str.lower().isin({"true", "1"})
            made = rep[ok].groupby("perturbation").size()
            rows = []
            for pert in dict.fromkeys(rep["perturbation"].astype(str)):
                reasons = rep[(~ok) & (rep["perturbation"].astype(str) == pert)]
                reason_text = "; ".join(f"{c} × {r}" for r, c in reasons.groupby("reason").size().items()) if len(reasons) else ""
                rows.append([pert, int(made.get(pert, 0)), int(len(reasons)), reason_text])
            left_out = Table("dhp-left-out", "Perturbed copies made and left out (perturbation_report.csv)",
                             ["perturbation", "copies made", "left out", "reasons"], ["text", "int", "int", "text"], rows)
    return Discernment(
        summary=df_table(summary, "dhp-summary", "Discernment scores per judge (D > 1: significant at 0.05)")
        if not summary.empty else None,
        perturbations=df_table(per, "dhp-perturbations", "Per perturbation: one-sided Wilcoxon p per metric, "
                               "harmonic-mean p and D = log₀.₀₅ p") if not per.empty else None,
        figure=figure, left_out=left_out)


# -- failures -----------------------------------------------------------------------------
def failures(judge: pd.DataFrame | None, examples_per_status: int = 3) -> Failures | None:
    """The "Failures" section: counts by status and up to ``examples_per_status`` raw answers each."""
    if judge is None or judge.empty:
        return None
    from judgelab.report.html_items import parse_attempts

    total = len(judge)
    failed = int((judge["status"] != Status.OK).sum())
    counts = judge.groupby(["rater", "status"]).size().reset_index(name="judgments")
    per_rater = judge.groupby("rater").size()
    counts["share"] = [c / per_rater[r] for r, c in zip(counts["rater"], counts["judgments"])]
    by_status = df_table(counts, "failures-status", "Judgments by status", kinds={"judgments": "int", "share": "num"},
                         note="ok = a rating was read. refusal, no_rating, out_of_range, empty, truncated … are failures "
                              "and never enter the statistics.")
    by_criterion = None
    if judge["criterion"].nunique() > 1 and failed:
        bad = judge[judge["status"] != Status.OK].groupby(["rater", "criterion", "status"]).size().reset_index(name="judgments")
        by_criterion = df_table(bad, "failures-criterion", "Failed judgments by criterion and status",
                                kinds={"judgments": "int"})
    examples = []
    bad = judge[judge["status"] != Status.OK].sort_values("seq", kind="mergesort")
    for (rater, status), grp in bad.groupby(["rater", "status"], sort=True):
        for row in grp.head(examples_per_status).itertuples(index=False):
            atts = [(str(a.get("status", "")), str(a.get("text") or "")) for a in parse_attempts(row.attempts)]
            raw = row.raw if isinstance(row.raw, str) else ""
            examples.append(FailureExample(str(rater), str(row.criterion), str(row.system), str(row.item_id),
                                           int(row.sample), str(status), raw, atts if len(atts) > 1 else []))
    return Failures(total, failed, by_status, by_criterion, examples)


# -- other tables ------------------------------------------------------------------------------
def other_tables(folder: RunFolder, consumed: set[str]) -> list[Table]:
    """Every CSV of the folder that no section above has shown, as a plain table."""
    out = []
    for k, name in enumerate(n for n in folder.files if n.endswith(".csv") and n not in consumed):
        df = read_table(folder.file(name))
        if df.empty:
            continue
        note = f"The first {OTHER_TABLE_ROWS} of {len(df)} rows." if len(df) > OTHER_TABLE_ROWS else ""
        out.append(df_table(df.head(OTHER_TABLE_ROWS), f"other-{k}", name, note=note))
    return out
