"""The ``judgelab dhp`` workflow: perturb (or reuse a stored set), judge with one or more
judges, analyse, and write tables, JSON and figures into one folder."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.datasets.dhp_sources import demo_set, load_reference_items
from judgelab.datasets.items import FieldMap
from judgelab.dhp.analysis import analyze, load_votes, perturbation_table, summary_table
from judgelab.dhp.build import build_perturbed, load_saved_items, save_items
from judgelab.dhp.task import load_task
from judgelab.errors import JudgelabError
from judgelab.manifest import write_manifest
from judgelab.paths import output_folder
from judgelab.models import Sampling
from judgelab.models.spec import build_judge, parse_judge
from judgelab.report.terminal import console, print_table
from judgelab.run import RunSpec
from judgelab.store import Store, write_table
from judgelab.workflow import execute

__all__ = ["run_dhp", "dhp_analyze_file", "write_reports", "check_run_options"]

DEFAULT_SAMPLES = 5  # ratings per text at temperature 0, averaged per item (DHP appendix D: "each model score 5 times")
MAX_SAMPLES = 128  # RunSpec.samples' upper bound


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float) and np.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    return obj


def public_report(report: dict[str, Any]) -> dict[str, Any]:
    """The documented JSON shape of one judge's report."""
    keys = ("name", "level", "p", "p_hmp", "D", "p_hmp_ew", "D_ew")
    return _jsonable({
        "perturbations": [{k: r[k] for k in keys} for r in report["perturbations"]],
        "D_avg": report["D_avg"], "D_min": report["D_min"], "D_avg_ew": report["D_avg_ew"], "D_min_ew": report["D_min_ew"],
        "notes": list(report.get("notes", [])),
    })


def write_reports(reports: dict[str, dict[str, Any]], ratings: pd.DataFrame, task, out: Path, show: bool = True) -> None:
    from judgelab.report.figures import bar_chart, response_styles

    table = perturbation_table(reports, task.metrics)
    summary = summary_table(reports)
    write_table(table, out / "perturbations.csv")
    write_table(summary, out / "discernment.csv")
    (out / "discernment.json").write_text(json.dumps({r: public_report(rep) for r, rep in reports.items()}, indent=2))
    bar_chart(summary.set_index("judge")[["D_avg", "D_min", "D_avg_ew", "D_min_ew"]], out / "discernment.png",
              f"DHP discernment, {task.name}", "discernment D", threshold=1.0)
    levels = {p.name: p.level for p in task.perturbations}
    per_judge: dict[str, dict[str, np.ndarray]] = {}
    for rater, grp in ratings[ratings["status"] == "ok"].groupby("rater"):
        item_scores = grp.groupby(["system", "item_id"])["score"].mean().reset_index()
        item_scores["level"] = item_scores["system"].map(lambda s: "original" if s == "original" else levels.get(s, "?"))
        order = ["original", "character", "word", "sentence"]
        groups = {lvl: g["score"].to_numpy(float) for lvl, g in item_scores.groupby("level")}
        per_judge[rater] = {lvl: groups[lvl] for lvl in order if lvl in groups}
    response_styles(per_judge, out / "response_style.png", f"Score distributions, {task.name}: originals vs perturbed copies")
    if show:
        shown = table.drop(columns=[c for c in ("p_hmp_ew", "D_ew") if (table[c] == table[c.replace("_ew", "")]).all()])
        print_table(shown, title=f"DHP {task.name}: per perturbation (one-sided Wilcoxon p per metric, HMP, D = log_0.05 p)")
        print_table(summary, title="Discernment scores (D > 1: significant at 0.05)")


def check_run_options(samples: int | None = None, n_items: int | None = None) -> None:
    """Out-of-range options are user errors (never a silent default): samples in 1..128, n_items >= 1."""
    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise JudgelabError(f"--samples must be between 1 and {MAX_SAMPLES} ratings per text, not {samples}")
    if n_items is not None and n_items < 1:
        raise JudgelabError(f"--n-items must be at least 1, not {n_items}")


def run_dhp(task_name: str, judges: list[str], out: Path, data: Path | None = None, fields: FieldMap = FieldMap(),
            n_items: int | None = None, seed: int = 0, votes_path: Path | None = None, generator: str | None = None,
            perturbed: Path | None = None, samples: int | None = None, judge_defaults: dict[str, Any] | None = None,
            exact: bool = False, progress: bool = True, max_failure_rate: float = 0.5) -> dict[str, dict[str, Any]]:
    check_run_options(samples, n_items)
    task = load_task(task_name)
    votes = load_votes(votes_path, task) if votes_path else None
    output_folder(out)
    for spec in judges:
        parse_judge(spec, judge_defaults)  # fail on a malformed judge before any work
    with Store(out / "store.sqlite") as store:
        if perturbed is not None:
            items = load_saved_items(perturbed)
            if n_items is not None:
                keep = sorted({i.item_id for i in items if i.system == "original"})[:n_items]
                items = [i for i in items if i.item_id in set(keep)]
            console.print(f"reusing the perturbed set {perturbed} ({len(items)} texts)")
        else:
            source = data or demo_set(task.name)
            originals = load_reference_items(source, fields, n_items)
            gen = build_judge(generator, judge_defaults) if generator else None
            items, report = build_perturbed(originals, task, seed, gen, store)
            save_items(items, out / "perturbed.jsonl")
            write_table(report, out / "perturbation_report.csv")
            failed = report[~report["ok"]]
            console.print(f"perturbed {len(originals)} texts from {source}: {int(report['ok'].sum())} copies made, "
                          f"{len(failed)} left out (see perturbation_report.csv)")
            for reason, count in failed.groupby(["perturbation", "reason"]).size().items():
                console.print(f"  left out: {reason[0]}: {count} × {reason[1]}")
        raters = []
        for spec in judges:
            kind, _ = parse_judge(spec, judge_defaults)
            backend = build_judge(spec, judge_defaults)
            logprob = kind == "local"
            run = RunSpec(template=task.template.name, score="logprob" if logprob else "parsed",
                          samples=1 if logprob else (DEFAULT_SAMPLES if samples is None else samples),
                          sampling=Sampling(temperature=0.0, max_tokens=16), label=f"{backend.model_id}@dhp-{task.name}")
            stats = execute(items, run, backend, store, progress, label=f"judging ({backend.model_id})", template=task.template)
            raters.append(stats.rater)
        ratings = store.ratings()
        runs = store.runs()
    ratings = ratings[ratings["rater"].isin(raters)]
    write_table(ratings, out / "ratings.csv")
    try:
        reports = analyze(ratings, task, votes, exact)
    except JudgelabError:
        from judgelab.workflow import check_failure_rate, print_failures

        for rater in raters:  # when nothing could be analysed because the judge failed, say so
            print_failures(ratings[ratings["rater"] == rater])
        check_failure_rate(ratings, max_failure_rate)
        raise
    write_reports(reports, ratings, task, out)
    write_manifest(out, "dhp", [{"rater": r, "settings": runs.get(r)} for r in raters],
                   extra={"task": task.name, "texts": len(items)})
    console.print(f"tables, figures and ratings: {out}")
    from judgelab.workflow import check_failure_rate, print_failures, report_folder

    report_folder(out)
    for rater in raters:
        print_failures(ratings[ratings["rater"] == rater])
    check_failure_rate(ratings, max_failure_rate)
    return reports


def dhp_analyze_file(ratings_path: Path, task_name: str, votes_path: Path | None = None, exact: bool = False,
                     rater: str | None = None) -> dict[str, dict[str, Any]]:
    from judgelab.ratings import read_ratings

    task = load_task(task_name)
    ratings = read_ratings(ratings_path)
    if rater is not None:
        if rater not in set(ratings["rater"]):
            raise JudgelabError(f"no rater {rater!r} in {ratings_path}; raters: {', '.join(sorted(set(ratings['rater'])))}")
        ratings = ratings[ratings["rater"] == rater]
    votes = load_votes(votes_path, task) if votes_path else None
    return analyze(ratings, task, votes, exact)
