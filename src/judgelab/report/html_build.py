"""Section builders of the HTML report: each turns what a folder holds into typed report data
(the run-level sections, "What ran" and "Cost and time", are :mod:`judgelab.report.html_runs`).

Each builder returns ``None`` when its data is absent; :func:`judgelab.report.html.build_report`
runs them and records (rather than raises) a builder's failure on damaged data, so that a
report is always written.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from judgelab.call_costs import CallCosts
from judgelab.report.folder import HUMAN_FILES, RunFolder, read_table
from judgelab.report.html_model import (
    ColumnKind,
    Discernment,
    FailureExample,
    Failures,
    Figure,
    Results,
    Table,
    natural_key,
)
from judgelab.report.svg import BarSeries, Point, bar_chart, interval_chart
from judgelab.status import Status

__all__ = ["df_table", "results", "discernment", "failures", "other_tables", "CONSUMED_TABLES", "table_file",
           "OTHER_TABLE_ROWS"]

#: The tables the sections show (results.json names the file of each); any other CSV is under "Other tables".
CONSUMED_TABLES = {"ratings", "summary", "welch", "correlations", "williams", "human_baseline", "self_consistency",
                   "discernment", "perturbations", "perturbation_report", "cost", "human_ratings",
                   "human_means"}
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


def table_file(folder: RunFolder, table: str) -> Path | None:
    """The file in ``folder`` holding ``table`` as results.json lists it (``None`` when it has none)."""
    name = folder.record.file(table)
    return folder.file(name) if name and folder.has(name) else None


# -- results ---------------------------------------------------------------------
def results(folder: RunFolder) -> Results | None:
    """The "Results" section as recorded: the summary of the step that rated (``rate``, ``dhp``: per rater, system
    and criterion the mean of item means with its interval) and the humans' rows of the agree step, with figures
    (None when neither is recorded)."""
    from judgelab.summary_results import ScoreSummary

    welch = None
    file = table_file(folder, "welch")
    if file is not None:
        w = read_table(file)
        if not w.empty:
            welch = df_table(w, "welch", "Welch's t-test between two systems (per-item means)")
    found = folder.record.result("summary") or folder.record.result("judge_summary")  # no rating step: agree's
    human_found = folder.record.result("human_summary")
    judges = ScoreSummary.from_record(found) if found else None
    humans = ScoreSummary.from_record(human_found) if human_found else None
    if judges is None and humans is None:
        return None
    def order(row: Any) -> tuple[Any, ...]:  # as recorded, systems in natural order (M2 before M10)
        return (row.rater, natural_key(row.system), row.criterion)

    rows: list[list[Any]] = [[r.rater, r.system, r.criterion, r.items, r.samples, r.mean, r.ci_low, r.ci_high, r.sd, r.alpha,
             r.exact_agreement, r.failed, r.failure_rate] for r in sorted(judges.rows if judges else (), key=order)]
    rows += [[r.rater, r.system, r.criterion, r.n, None, r.mean, r.ci_low, r.ci_high, None, None, None, None, None]
             for r in sorted(humans.rows if humans else (), key=order)]
    level = judges.alpha_level if judges else "interval"
    missing = sorted({r.interval_note for r in (judges.rows if judges else ()) if r.interval_note.startswith("not recorded")})
    table = Table(
        id="summary", caption="Mean score per rater, system and criterion, with 95% confidence intervals",
        columns=["rater", "system", "criterion", "items", "samples", "mean", "95% CI low", "95% CI high", "SD",
                 f"α ({level}, samples)", "exact agreement", "failed", "failure rate"],
        kinds=["text", "text", "text", "int", "int", "num", "num", "num", "num", "num", "num", "int", "num"],
        rows=rows,
        note="mean = mean of per-item means (samples averaged, failed judgments left out; the mean of summary.csv); "
             f"95% CI = {(judges or humans or ScoreSummary(())).interval}. SD over all successful ratings; "
             f"α = Krippendorff's α ({level}) with samples as annotators; exact agreement = share of "
             "items whose samples all agree." + "".join(f" 95% CI: {m}." for m in missing))
    apart = _other_scales(folder.record.result("matched") or [])
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
                        + "; horizontal lines are 95% confidence intervals over items."
                        + (f" The judge and the humans rated {criterion} on different scales ({apart[criterion]}): "
                           "their means are not comparable across rows." if criterion in apart else ""),
            svg=interval_chart(points, f"fig-results-{k}", f"Mean {criterion} score by system, with 95% CI",
                               f"Mean {criterion} score per system with 95% confidence intervals over items.",
                               f"mean {criterion} score (95% CI over items)", "system" if len(raters) == 1 else "system · rater",
                               series_names=raters if len(raters) > 1 else ())))
    return Results(table, figures, welch, "")


def _other_scales(matched: list[dict[str, Any]]) -> dict[str, str]:
    """criterion -> "judge on 1–3" where the agree step recorded the humans' means outside the judge's scale."""
    out = {}
    for m in matched:
        scale = m.get("judge_scale")
        if m.get("same_scale", True) is False and isinstance(scale, list) and len(scale) == 2:
            out[str(m.get("criterion"))] = f"judge on {scale[0]:g}–{scale[1]:g}, humans beyond it"
    return out


# -- discernment -------------------------------------------------------------------------
def discernment(folder: RunFolder) -> Discernment | None:
    """The DHP section from discernment.json/csv of the folder (None when the folder holds no DHP run)."""
    found, per_file = table_file(folder, "discernment"), table_file(folder, "perturbations")
    if found is None and per_file is None:
        return None
    summary = read_table(found) if found is not None else pd.DataFrame()
    per = read_table(per_file) if per_file is not None else pd.DataFrame()
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
    report_file = table_file(folder, "perturbation_report")
    if report_file is not None:
        rep = read_table(report_file)
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
def failures(costs: CallCosts | None, judge: pd.DataFrame | None, examples_per_status: int = 3) -> Failures | None:
    """The "Failures" section: the record's judgments by status (and by criterion, where any failed) and
    up to ``examples_per_status`` raw answers each, from the judgments."""
    if costs is None or not costs.statuses:
        return None
    from judgelab.report.html_items import parse_attempts

    total, failed = costs.total, costs.failed
    counts = pd.DataFrame([(s.rater, s.status, s.judgments, s.share) for s in costs.statuses],
                          columns=["rater", "status", "judgments", "share"])
    by_status = df_table(counts, "failures-status", "Judgments by status", kinds={"judgments": "int", "share": "num"},
                         note="ok = a rating was read. refusal, no_rating, out_of_range, empty, truncated … are failures "
                              "and never enter the statistics.")
    by_criterion = None
    bad_counts = [(s.rater, s.criterion, s.status, s.judgments) for s in costs.statuses_by_criterion if s.status != Status.OK]
    if bad_counts:
        by_criterion = df_table(pd.DataFrame(bad_counts, columns=["rater", "criterion", "status", "judgments"]),
                                "failures-criterion", "Failed judgments by criterion and status", kinds={"judgments": "int"})
    if judge is None or judge.empty:
        return Failures(total, failed, by_status, by_criterion, [])
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
    """Every CSV of the folder that no section above has shown (``consumed``: the tables shown), as a plain table."""
    shown = {name for table, name in folder.record.tables().items() if table in consumed}
    consumed = shown | set(HUMAN_FILES)
    out = []
    for k, name in enumerate(n for n in folder.files if n.endswith(".csv") and n not in consumed):
        df = read_table(folder.file(name))
        if df.empty:
            continue
        note = f"The first {OTHER_TABLE_ROWS} of {len(df)} rows." if len(df) > OTHER_TABLE_ROWS else ""
        out.append(df_table(df.head(OTHER_TABLE_ROWS), f"other-{k}", name, note=note))
    return out
