"""Run-level sections of the HTML report: "What ran" (each run's judge, settings, counts and first
prompts, from run.json and the store) and "Cost and time" (calls, tokens, latency, dollars)."""
from __future__ import annotations

import shlex
from typing import Any

import pandas as pd

from judgelab.call_costs import CallCosts
from judgelab.report.folder import RunFolder, StoreReader, read_table
from judgelab.report.html_build import _finite, df_table, table_file
from judgelab.report.html_calls import CallCache, messages_of
from judgelab.report.html_model import CostTime, PromptExample, RunInfo, Table, WhatRan
from judgelab.report.humans import HumanRatings

__all__ = ["run_infos", "first_prompts", "what_ran", "cost_time", "recorded_costs"]


# -- what ran ------------------------------------------------------------------
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
        pt, ct = entry.get("prompt_tokens"), entry.get("completion_tokens")
        cost = entry.get("cost_usd")
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
        sources.append(reader.source)
    if humans.sources:
        n = len(humans.table)
        k = humans.table["rater"].nunique()
        sources.append(f"human ratings: {n} by {k} rater{'s' if k != 1 else ''} from {', '.join(humans.sources)}")
    return WhatRan(
        command=m.get("command"), argv=shlex.join(str(a) for a in argv) if isinstance(argv, list) else None,
        started=m.get("started"), finished=m.get("finished"), wall_s=m.get("wall_s"), python=m.get("python"),
        platform=m.get("platform"), versions=dict(m.get("versions") or {}), runs=infos,
        settings_table=_settings_table(infos), prompts=first_prompts(judge, calls), sources=sources)


# -- cost and time ---------------------------------------------------------------------------
def recorded_costs(folder: RunFolder) -> CallCosts | None:
    """The calls, tokens, latency and statuses the folder's record holds (None: a folder written before
    judgelab recorded them)."""
    doc = folder.record.result("call_costs")
    return CallCosts.from_record(doc) if isinstance(doc, dict) else None


def cost_time(folder: RunFolder, infos: list[RunInfo], reader: StoreReader | None) -> CostTime | None:
    """The "Cost and time" section: the record's calls, tokens and latency per rater beside run.json's
    wall time and cost per run (nothing is computed here)."""
    manifest = folder.manifest or {}
    costs = recorded_costs(folder)
    measured = {r.rater: r for r in costs.raters} if costs is not None else {}
    by_rater = {i.rater: i for i in infos}
    rows = []
    notes = []
    for rater in dict.fromkeys([*by_rater, *measured]):
        info, m = by_rater.get(rater), measured.get(rater)
        got = m if m is not None and m.calls > 0 else None  # calls found in the store: its counts, else run.json's
        rows.append([
            rater, m.judgments if m is not None else (info.judgments if info else None),
            got.calls if got else (info.calls_made if info else None),
            got.prompt_tokens if got else (info.prompt_tokens if info else None),
            got.completion_tokens if got else (info.completion_tokens if info else None),
            got.tokens_per_judgment if got else None,
            got.latency_sum_s if got else None, got.latency_mean_s if got else None,
            got.latency_p95_s if got else None,
            info.wall_s if info else None, info.cost_usd if info else None,
        ])
    empty = [str(r[0]) for r in rows if all(v is None for v in r[1:])]
    rows = [r for r in rows if r[0] not in empty]
    if not rows:
        return None
    if empty:
        notes.append("Nothing of " + ", ".join(empty) + "'s calls, tokens or time is recorded in this folder (its "
                     "judgments are counted in another row or another folder), so it has no row.")
    if costs is None and any(step.source == "rebuilt" for step in folder.record.steps):
        notes.append("This folder's record holds no calls, tokens or latency per rater (written by an older judgelab): "
                     "the counts shown are run.json's; rerun the same command (0 calls) to record them.")
    if not any(r[10] is not None for r in rows):
        notes.append("No cost was recorded, so no money is shown (rate's --price-in and --price-out, in USD per "
                     "million tokens, record it in run.json).")
    if manifest.get("wall_s") is not None:
        notes.append(f"The command ({manifest.get('command') or 'unknown'}) took {manifest['wall_s']} s in all, from "
                     f"{manifest.get('started')} to {manifest.get('finished')}.")
    for step in manifest.get("steps") or []:
        if isinstance(step, dict) and step.get("wall_s") is not None:
            notes.append(f"A later step, {step.get('command') or 'unknown'}, took {step['wall_s']} s (finished "
                         f"{step.get('finished')}).")
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
    cost_file = table_file(folder, "cost")
    if cost_file is not None:
        c = read_table(cost_file)
        if not c.empty:
            cost_table = df_table(c, "cost-csv", "Cost and time (cost.csv)")
    return CostTime(table, cost_table, notes)
