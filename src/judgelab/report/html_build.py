"""Section builders of the HTML report: each turns what a folder holds into typed report data.

Each builder returns ``None`` when its data is absent; :func:`judgelab.report.html.build_report`
runs them and records (rather than raises) a builder's failure on damaged data, so that a
report is always written.
"""
from __future__ import annotations

import math
import shlex
from typing import Any, Iterable, TypeGuard

import numpy as np
import pandas as pd

from judgelab.report.folder import HumanRatings, RunFolder, StoreReader, read_table
from judgelab.report.html_items import CallCache, messages_of
from judgelab.report.html_model import (
    ColumnKind,
    CostTime,
    Discernment,
    FailureExample,
    Failures,
    Figure,
    PromptExample,
    Results,
    RunInfo,
    Table,
    WhatRan,
)
from judgelab.report.svg import BarSeries, Point, bar_chart, interval_chart
from judgelab.status import Status

__all__ = ["df_table", "mean_ci", "what_ran", "results", "discernment", "failures",
           "cost_time", "other_tables", "CONSUMED_FILES", "OTHER_TABLE_ROWS"]

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


def _judge_label(judge: Any) -> str:
    if isinstance(judge, dict):
        parts = [str(judge.get("kind", "")), str(judge.get("model", ""))]
        extra = [f"{k} {v}" for k, v in sorted(judge.items()) if k not in {"kind", "model"} and v not in (None, "")]
        return " ".join(p for p in parts if p) + (f" ({', '.join(extra)})" if extra else "")
    return "" if judge is None else str(judge)


def _flatten(settings: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if key == "judge" and not prefix:
            out[name] = _judge_label(value)
        elif isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        elif isinstance(value, list):
            out[name] = ", ".join(map(str, value))
        else:
            out[name] = "none" if value is None else str(value)
    return out


# -- what ran ------------------------------------------------------------------
def _prices(entry: dict[str, Any], manifest: dict[str, Any]) -> tuple[float | None, float | None]:
    for source in (entry, manifest):
        raw = source.get("prices")
        prices = raw if isinstance(raw, dict) else {}
        pin = source.get("price_in", prices.get("in"))
        pout = source.get("price_out", prices.get("out"))
        if _finite(pin) and _finite(pout):
            return float(pin), float(pout)
    return None, None


def run_infos(folder: RunFolder, store_runs: dict[str, dict[str, Any]]) -> list[RunInfo]:
    """Runs of the manifest first, then the store's other runs."""
    manifest = folder.manifest or {}
    infos: list[RunInfo] = []
    seen = set()
    for entry in manifest.get("runs") or []:
        if not isinstance(entry, dict):
            continue
        rater = str(entry.get("rater", ""))
        settings = entry.get("settings") or store_runs.get(rater) or {}
        pin, pout = _prices(entry, manifest)
        pt, ct = entry.get("prompt_tokens"), entry.get("completion_tokens")
        cost = entry.get("cost_usd")
        if not _finite(cost) and pin is not None and _finite(pt) and _finite(ct):
            cost = (float(pt) * pin + float(ct) * (pout or 0.0)) / 1e6
        notes = [str(n) for n in entry.get("backend_notes") or []]
        for key in ("transport", "cpu_path", "max_tokens_param"):
            if entry.get(key):
                notes.append(f"{key.replace('_', ' ')}: {entry[key]}")
        infos.append(RunInfo(
            rater=rater, judge=_judge_label(settings.get("judge")), settings=settings,
            judgments=entry.get("judgments"), calls_made=entry.get("calls_made"),
            already_in_store=entry.get("already_in_store"), statuses=dict(entry.get("statuses") or {}),
            prompt_tokens=pt, completion_tokens=ct, wall_s=entry.get("wall_s"),
            cost_usd=float(cost) if _finite(cost) else None, notes=notes))
        seen.add(rater)
    for rater in sorted(store_runs):
        if rater not in seen:
            settings = store_runs[rater]
            infos.append(RunInfo(rater=rater, judge=_judge_label(settings.get("judge")), settings=settings))
    return infos


def _settings_table(infos: list[RunInfo]) -> Table | None:
    if not infos:
        return None
    flat = [_flatten(i.settings) for i in infos]
    order: list[str] = []
    for f in flat:
        order += [k for k in f if k not in order]
    rows: list[list[Any]] = [[k, *[f.get(k, "") for f in flat]] for k in order]
    for label, getter in (
        ("judgments", lambda i: i.judgments), ("already in the store", lambda i: i.already_in_store),
        ("calls made", lambda i: i.calls_made),
        ("statuses", lambda i: ", ".join(f"{k} {v}" for k, v in sorted(i.statuses.items())) or None),
        ("prompt tokens", lambda i: i.prompt_tokens), ("completion tokens", lambda i: i.completion_tokens),
        ("wall time (s)", lambda i: i.wall_s), ("cost (USD)", lambda i: None if i.cost_usd is None else f"{i.cost_usd:.4f}"),
        ("notes", lambda i: "; ".join(i.notes) or None),
    ):
        values = [getter(i) for i in infos]
        if any(v is not None for v in values):
            rows.append([label, *["" if v is None else f"{v:,}" if isinstance(v, int) and not isinstance(v, bool)
                                  else str(v) for v in values]])
    return Table(id="settings", caption="Run settings (the run identity) and what each run did",
                 columns=["setting", *[i.rater for i in infos]], kinds=["text"] * (len(infos) + 1), rows=rows,
                 note="One column per run (rater). template_sha256 is the SHA-256 of the template's full content.")


def first_prompts(judge: pd.DataFrame | None, calls: CallCache) -> list[PromptExample]:
    """The messages of the first stored request of each rater and criterion (by recording order)."""
    if judge is None or judge.empty or not len(calls):
        return []
    firsts = judge.sort_values("seq", kind="mergesort").drop_duplicates(["rater", "criterion"], keep="first")
    out = []
    for row in firsts.sort_values(["rater", "criterion"]).itertuples(index=False):
        request = calls.request(row.keys[0]) if row.keys else None
        msgs = messages_of(request)
        if request is None or msgs is None:
            continue
        out.append(PromptExample(rater=str(row.rater), criterion=str(row.criterion), item_id=str(row.item_id),
                                 system=str(row.system), messages=msgs,
                                 score_cue=None if request.get("score_cue") is None else str(request["score_cue"])))
    return out


def what_ran(folder: RunFolder, reader: StoreReader | None, judge: pd.DataFrame | None,
             humans: HumanRatings, calls: CallCache) -> WhatRan | None:
    """The report's "What ran" section: each run's judge, settings, counts and first prompts (from run.json and the store)."""
    manifest = folder.manifest
    store_runs = reader.runs if reader is not None else {}
    if manifest is None and not store_runs and judge is None:
        return None
    m = manifest or {}
    infos = run_infos(folder, store_runs)
    argv = m.get("argv")
    sources = []
    if manifest is not None:
        sources.append("run.json")
    if reader is not None:
        sources.append("store.sqlite")
    if humans.sources:
        n = len(humans.table)
        k = humans.table["rater"].nunique()
        sources.append(f"human ratings: {n} by {k} rater{'s' if k != 1 else ''} from {', '.join(humans.sources)}")
    return WhatRan(
        command=m.get("command"), argv=shlex.join(str(a) for a in argv) if isinstance(argv, list) else None,
        started=m.get("started"), finished=m.get("finished"), wall_s=m.get("wall_s"), python=m.get("python"),
        platform=m.get("platform"), versions=dict(m.get("versions") or {}), runs=infos,
        settings_table=_settings_table(infos), prompts=first_prompts(judge, calls), sources=sources)


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
    from judgelab.summary import summarize

    rows = []
    if judge is not None and not judge.empty:
        base = summarize(judge)
        ok = judge[(judge["status"] == Status.OK) & judge["score"].notna()]
        item_means = ok.groupby(["rater", "system", "criterion", "item_id"])["score"].mean()
    else:
        base = pd.DataFrame()
    for rec in base.itertuples(index=False):
        try:
            values = item_means.loc[(rec.rater, rec.system, rec.criterion)].to_numpy(float)
        except KeyError:
            values = np.array([])
        mean, lo, hi, n = mean_ci(values)
        rows.append([rec.rater, rec.system, rec.criterion, rec.items, rec.samples, mean, lo, hi, rec.sd, rec.alpha,
                     rec.exact_agreement, rec.failed, rec.failure_rate])
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
                 "α (ordinal, samples)", "exact agreement", "failed", "failure rate"],
        kinds=["text", "text", "text", "int", "int", "num", "num", "num", "num", "num", "num", "int", "num"],
        rows=rows,
        note="mean = mean of per-item means (samples averaged, failed judgments left out); 95% CI = t-interval over "
             "items (items are the independent units). SD over all successful ratings; α = Krippendorff's α (ordinal) "
             "with samples as annotators; exact agreement = share of items whose samples all agree.")
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


# -- cost and time ---------------------------------------------------------------------------
def cost_time(folder: RunFolder, judge: pd.DataFrame | None, calls: CallCache,
              infos: list[RunInfo], reader: StoreReader | None) -> CostTime | None:
    """The "Cost and time" section: tokens, calls, wall time and (with prices) dollars per run."""
    manifest = folder.manifest or {}
    rows = []
    notes = []
    raters = sorted(judge["rater"].unique()) if judge is not None and not judge.empty else []
    by_rater = {i.rater: i for i in infos}
    for rater in dict.fromkeys([*by_rater, *raters]):
        info = by_rater.get(rater)
        keys: set[str] = set()
        n_judgments = None
        if judge is not None and rater in raters:
            mine = judge[judge["rater"] == rater]
            n_judgments = len(mine)
            for row in mine["keys"]:
                keys.update(row)
        pt = ct = 0
        latencies = []
        found = 0
        for key in keys:
            resp = calls.response(key)
            if resp is None:
                continue
            found += 1
            pt += int(resp.get("prompt_tokens") or 0)
            ct += int(resp.get("completion_tokens") or 0)
            if _finite(resp.get("latency_s")):
                latencies.append(float(resp["latency_s"]))
        lat = np.asarray(latencies, float)
        cost = info.cost_usd if info else None
        pin, pout = _prices({}, manifest)
        if cost is None and pin is not None and found:
            cost = (pt * pin + ct * pout) / 1e6  # type: ignore[operator]
        rows.append([
            rater, n_judgments if n_judgments is not None else (info.judgments if info else None),
            found or (info.calls_made if info else None),
            pt if found else (info.prompt_tokens if info else None),
            ct if found else (info.completion_tokens if info else None),
            (pt + ct) / n_judgments if found and n_judgments else None,
            float(lat.sum()) if lat.size else None, float(lat.mean()) if lat.size else None,
            float(np.percentile(lat, 95)) if lat.size else None,
            info.wall_s if info else None, cost,
        ])
    if not rows:
        return None
    if not any(r[10] is not None for r in rows):
        notes.append("No prices were recorded, so no money is shown (run.json keys price_in / price_out in USD per "
                     "million tokens, per run or for the folder, or cost_usd).")
    if manifest.get("wall_s") is not None:
        notes.append(f"The command ({manifest.get('command') or 'unknown'}) took {manifest['wall_s']} s in all, from "
                     f"{manifest.get('started')} to {manifest.get('finished')}.")
    if reader is not None:
        span = reader.call_span()
        if span is not None:
            import time as _time

            fmt = "%Y-%m-%d %H:%M:%S"
            notes.append(f"The store holds {span[2]} calls, recorded between {_time.strftime(fmt, _time.localtime(span[0]))} "
                         f"and {_time.strftime(fmt, _time.localtime(span[1]))} (local time).")
    table = Table("cost", "Calls, tokens, time and cost per run", [
        "rater", "judgments", "calls", "prompt tokens", "completion tokens", "tokens per judgment", "call latency, sum (s)",
        "call latency, mean (s)", "call latency, 95th percentile (s)", "run wall time (s)", "cost (USD)"],
        ["text", "int", "int", "int", "int", "num", "num", "num", "num", "num", "num"], rows,
        note="Calls and tokens are counted once per distinct call in the store used by the rater's judgments (a call "
             "with n samples counts once; cached calls of an earlier identical run count too). Latency is the judge's "
             "answer time per call; the run wall time is from run.json.")
    cost_table = None
    if folder.has("cost.csv"):
        c = read_table(folder.file("cost.csv"))
        if not c.empty:
            cost_table = df_table(c, "cost-csv", "Cost and time (cost.csv)")
    return CostTime(table, cost_table, notes)


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
