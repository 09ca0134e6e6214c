"""The ``judgelab dhp`` workflow: perturb (or reuse a stored set), judge with one or more
judges, analyse, and write tables, JSON and figures into one folder.

Library code: :func:`run_dhp` returns a :class:`DhpResult` and prints nothing; ``cli/dhp.py``
shows it. This module imports :mod:`judgelab.rate` and is never imported by it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from judgelab.choices import Score
from judgelab.datasets.dhp_sources import demo_set, load_reference_items
from judgelab.datasets.items import FieldMap
from judgelab.dhp.analysis import DhpReport, analyze, load_votes, perturbation_table, report_json, summary_table
from judgelab.dhp.build import build_perturbed, load_saved_items, save_items
from judgelab.dhp.task import load_task
from judgelab.errors import JudgelabError
from judgelab.paths import output_folder
from judgelab.models import Sampling
from judgelab.run import run_spec
from judgelab.spec import JudgeOptions, JudgeSpec, RunSpec
from judgelab.store import Store
from judgelab.output import Display, OutputFolder, write_html_report
from judgelab.summary import judges_summary
from judgelab.rate import StudyPlan, check_failure_rate, failure_lines
from judgelab.status import DEFAULT_MAX_FAILURE_RATE, Status

__all__ = ["run_dhp", "run_demo", "plan_dhp", "DhpResult", "dhp_analyze_file", "write_reports", "check_run_options"]

DEFAULT_SAMPLES = 5  # ratings per text at temperature 0, averaged per item (DHP appendix D: "each model score 5 times")
MAX_SAMPLES = 128  # RunSpec.samples' upper bound


def write_reports(reports: dict[str, DhpReport], ratings: pd.DataFrame | None, task, output: OutputFolder) -> None:
    """Write the DHP tables, JSON and figures of ``reports`` through ``output``. ``ratings`` (for
    the response-style figure) may be ``None``."""
    from judgelab.report.figures import bar_chart, response_styles

    output.table(perturbation_table(reports, task.metrics), "perturbations",
                 "per judge and perturbation: pairs, one-sided Wilcoxon p per metric, HMP, D and D^EW", show=False)
    summary = output.table(summary_table(reports), "discernment",
                           "per judge: D_avg, D_min (and with expert weights), failure rate", show=False)
    output.file("discernment.json", "the same as JSON: {schema, task, judges: {rater: report}} (one shape for any "
                "number of judges)").write_text(json.dumps(report_json(reports, task.name), indent=2) + "\n", encoding="utf-8")
    bar_chart(summary.set_index("judge")[["D_avg", "D_min", "D_avg_ew", "D_min_ew"]],
              output.file("discernment.png", "bar chart of the discernment scores (D > 1: significant at 0.05)"),
              f"DHP discernment, {task.name}", "discernment D", threshold=1.0)
    if ratings is not None:
        levels = {p.name: p.level for p in task.perturbations}
        per_judge: dict[str, dict[str, np.ndarray]] = {}
        for rater, grp in ratings[ratings["status"] == Status.OK].groupby("rater"):
            item_scores = grp.groupby(["system", "item_id"])["score"].mean().reset_index()
            item_scores["level"] = item_scores["system"].map(lambda s: "original" if s == "original" else levels.get(s, "?"))
            order = ["original", "character", "word", "sentence"]
            groups = {lvl: g["score"].to_numpy(float) for lvl, g in item_scores.groupby("level")}
            per_judge[rater] = {lvl: groups[lvl] for lvl in order if lvl in groups}
        response_styles(per_judge, output.file("response_style.png", "score distributions: originals vs perturbed "
                                               "copies, per level"),
                        f"Score distributions, {task.name}: originals vs perturbed copies")


@dataclass(frozen=True)
class DhpResult:
    """What a DHP run produced: one :class:`judgelab.dhp.analysis.DhpReport` per judge,
    the ratings, and lines to show (what was perturbed or left out)."""

    out: Path
    task: Any
    reports: dict[str, DhpReport]
    ratings: pd.DataFrame
    raters: tuple[str, ...]
    messages: tuple[str, ...] = ()
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    files: dict[str, Path] = field(default_factory=dict)

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(per-perturbation table, discernment summary)."""
        return perturbation_table(self.reports, self.task.metrics), summary_table(self.reports)

    def failure_lines(self) -> list[str]:
        lines = []
        for rater in self.raters:
            lines += [f"{rater}: {line}" for line in failure_lines(self.ratings[self.ratings["rater"] == rater])]
        return lines

    def to_dict(self) -> dict[str, Any]:
        return report_json(self.reports, self.task.name)

    def finish(self, show: Callable[[str], None] | None = None) -> Path | None:
        """The HTML report of the folder (its line passed to ``show``), then :class:`TooManyFailures`
        when a judge failed too often. Returns the report's path."""
        path, line = write_html_report(self.out)
        if show is not None:
            show(line)
        check_failure_rate(self.ratings, self.max_failure_rate)
        return path


def check_run_options(samples: int | None = None, n_items: int | None = None) -> None:
    """Out-of-range options are user errors (never a silent default): samples in 1..128, n_items >= 1."""
    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise JudgelabError(f"--samples must be between 1 and {MAX_SAMPLES} ratings per text, not {samples}")
    if n_items is not None and n_items < 1:
        raise JudgelabError(f"--n-items must be at least 1, not {n_items}")


def _judge_spec(task, judge: str, samples: int | None, options: JudgeOptions | None, score: Score | None = None) -> RunSpec:
    """A DHP judge's run: the task's rubric at temperature 0, each text rated ``samples`` times and
    averaged (appendix D); one deterministic sample with log-probability scoring. ``score`` ``None`` is
    the judge's default (``RunSpec(score="auto")``: log-probabilities for the embedded judge)."""
    return RunSpec(judge=JudgeSpec.of(judge, options), template=task.template.name,
                   samples=DEFAULT_SAMPLES if samples is None else samples,
                   sampling=Sampling(temperature=0.0, max_tokens=16), score=score or "auto",
                   label="{model}@dhp-" + task.name)


def _texts(task, data, fields, n_items, seed, perturbed, generator, options, store):
    """The texts to judge and the lines that say where they came from."""
    messages = []
    if perturbed is not None:
        items = load_saved_items(perturbed)
        if n_items is not None:
            keep = sorted({i.item_id for i in items if i.system == "original"})[:n_items]
            items = [i for i in items if i.item_id in set(keep)]
        return items, None, [f"reusing the perturbed set {perturbed} ({len(items)} texts)"], None
    source = data or demo_set(task.name)
    originals = load_reference_items(source, fields, n_items)
    gen = JudgeSpec.of(generator, options).build() if generator else None
    items, report = build_perturbed(originals, task, seed, gen, store)
    made, failed = report[report["ok"]], report[~report["ok"]]
    messages.append(f"perturbed {len(originals)} texts from {source}: {len(made)} copies made by "
                    f"{made['perturbation'].nunique()} perturbations" + ("" if failed.empty else
                    f"; {len(failed)} not made, one line per reason (per text: perturbation_report.csv)"))
    for reason, rows in failed.groupby("reason", sort=False):  # each reason once, with the perturbations it holds for
        counts = rows.groupby("perturbation", sort=False).size()
        names = [name if n == len(originals) else f"{name} ({n} of {len(originals)} texts)" for name, n in counts.items()]
        messages.append(f"  {len(rows)} not made, {reason}: {', '.join(names)}")
    return items, report, messages, originals


def run_dhp(task_name: str, judges: list[str], out: Path, data: Path | None = None, fields: FieldMap = FieldMap(),
            n_items: int | None = None, seed: int = 0, votes_path: Path | None = None, generator: str | None = None,
            perturbed: Path | None = None, samples: int | None = None, options: JudgeOptions | None = None,
            exact: bool = False, progress: bool = True, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
            score: Score | None = None) -> DhpResult:
    """Run the DHP benchmark (Wang et al. 2024, §3): perturb references, judge originals and copies
    with every judge, test and score discernment, and write everything into ``out``.

    Args:
        task_name: ``summarization``, ``story-completion``, ``question-answering``, ``translation`` or a task .yaml.
        judges: judge specs (:mod:`judgelab.models.spec`), one rater each.
        out: output folder (``store.sqlite``, ``perturbed.jsonl``, ratings, tables, figures, README.md, run.json).
        data: references (JSONL/CSV); default the task's shipped demo set.
        fields: column names of ``data``.
        n_items: references to use (the first N), each with all its perturbed copies.
        seed: perturbation seed.
        votes_path: expert votes per metric and perturbation (for D^EW).
        generator: judge spec that writes the LLM-based perturbations (``None``: they are left out).
        perturbed: reuse a stored perturbed set instead of perturbing.
        samples: ratings per text at temperature 0 (default 5; 1 for log-probability scoring).
        options: options shared by the judge specs (``base_url``, ``api_key`` …).
        exact: combine with the asymptotically exact HMP instead of Wilson's statistic.
        progress: progress bars on stderr.
        max_failure_rate: checked by :meth:`DhpResult.finish`.
        score: ``parsed`` (read the rating from the answer) or ``logprob`` (the expected rating under the
            next-token distribution, as ``judgelab demo`` scores; through an OpenAI-compatible server best with
            ``style="completion"`` in ``options``); ``None``: the judge's default (logprob for the embedded judge).

    Returns:
        :class:`DhpResult`; its reports carry ``notes`` when a perturbation has too few pairs for D to exceed 1.
        Call ``result.finish()`` after showing it (HTML report, failure-rate check).

    Example:
        >>> result = run_dhp("summarization", ["local"], Path("runs/dhp"), n_items=8)   # doctest: +SKIP
        >>> result.reports["gemma-3-270m-it@dhp-summarization"].D_avg                   # doctest: +SKIP
    """
    check_run_options(samples, n_items)
    task = load_task(task_name)
    votes = load_votes(votes_path, task) if votes_path else None
    specs = [_judge_spec(task, judge, samples, options, score) for judge in judges]  # a malformed judge fails before any work
    with Store(output_folder(out) / "store.sqlite") as store, \
            OutputFolder(out, f"DHP discernment benchmark: {task.name}", command="dhp") as output:
        items, report, messages, _ = _texts(task, data, fields, n_items, seed, perturbed, generator, options, store)
        if report is not None:
            save_items(items, output.file("perturbed.jsonl", "the originals and their perturbed copies (reuse with --perturbed)"))
            output.table(report, "perturbation_report", "per perturbation and text: made or left out, and why", show=False)
        raters = [run_spec(spec, items, store, template=task.template, progress=progress).rater for spec in specs]
        ratings = store.ratings()
        runs = store.runs()
        ratings = ratings[ratings["rater"].isin(raters)]
        output.table(ratings, "ratings", "the judges' ratings (tidy table)", show=False)
        output.record("dhp", settings={"task": task.name, "samples": samples, "n_items": n_items, "seed": seed},
                      results={"texts": len(items), "summary": judges_summary(ratings)})
        try:
            reports = analyze(ratings, task, votes, exact)
        except JudgelabError as exc:
            # nothing could be analysed, e.g. because a judge never answered: the ratings are written (to
            # look at), and the error carries the failure counts and examples (``details``) for the command line
            output.finish([f"no discernment analysis: {exc}"], runs=[{"rater": r, "settings": runs.get(r), **store.run_totals(r)} for r in raters],
                          extra={"task": task.name, "texts": len(items)}, report=False)
            details = [line for rater in raters for line in failure_lines(ratings[ratings["rater"] == rater])]
            try:
                check_failure_rate(ratings, max_failure_rate)
            except JudgelabError as failures:
                failures.details = details  # type: ignore[attr-defined]
                raise
            exc.details = details  # type: ignore[attr-defined]
            raise
        write_reports(reports, ratings, task, output)
        output.finish([f"{r}: {n}" for r, rep in reports.items() for n in rep.notes],
                      runs=[{"rater": r, "settings": runs.get(r), **store.run_totals(r)} for r in raters],
                      extra={"task": task.name, "texts": len(items)}, report=False)
    return DhpResult(out, task, reports, ratings, tuple(raters), tuple(messages), max_failure_rate)


def run_demo(n_items: int = 8, out: Path = Path("judgelab-runs/demo"), judge: str = "local",
             options: JudgeOptions | None = None, progress: bool = True) -> DhpResult:
    """``judgelab demo``: DHP on the shipped summarization demo set (rule-based perturbations).

    Args:
        n_items: demo summaries (1-8).
        out: output folder.
        judge: judge spec (default: the embedded judge, offline).
        options: options shared by judge specs.
        progress: progress bar on stderr.

    Returns:
        :class:`DhpResult` of the run.

    Example:
        >>> result = run_demo(n_items=4, progress=False)   # doctest: +SKIP
    """
    return run_dhp("summarization", [judge], out, n_items=n_items, options=options, progress=progress)


def plan_dhp(task_name: str, judges: list[str], data: Path | None = None, fields: FieldMap = FieldMap(),
             n_items: int | None = None, seed: int = 0, generator: str | None = None, perturbed: Path | None = None,
             samples: int | None = None, options: JudgeOptions | None = None,
             out: Path | None = None, score: Score | None = None) -> StudyPlan:
    """Plan a DHP run without calling a model or writing anything (``--dry-run``).

    The rule-based perturbations are made in memory (they need no model), so the judging stage is
    planned exactly. Returns a :class:`judgelab.rate.StudyPlan`: one ``JudgePlan`` per judge, and as ``later``
    the stages that cannot be planned without answers (the LLM-based perturbations' texts).

    Example:
        >>> plan_dhp("summarization", ["openai:gpt-4o-mini"], n_items=2).later            # doctest: +SKIP
    """
    from judgelab.rate import plan_rate

    check_run_options(samples, n_items)
    task = load_task(task_name)
    later = []
    if perturbed is not None:
        items = load_saved_items(perturbed)
        if n_items is not None:
            keep = set(sorted({i.item_id for i in items if i.system == "original"})[:n_items])
            items = [i for i in items if i.item_id in keep]
    else:
        originals = load_reference_items(data or demo_set(task.name), fields, n_items)
        items, _ = build_perturbed(originals, task, seed, None, None)
        llm = [p.name for p in task.perturbations if p.method == "llm"]
        if llm and generator:
            later.append(f"LLM-based perturbations ({', '.join(llm)}): {len(llm) * len(originals)} calls to the generator "
                         f"{generator}; judging their copies cannot be planned before the generator answers")
        elif llm:
            later.append(f"LLM-based perturbations ({', '.join(llm)}) are left out: no --generator")
    runs = [_judge_spec(task, judge, samples, options, score) for judge in judges]
    return StudyPlan(tuple(plan_rate(items, runs, out, template=task.template)), tuple(later))


def dhp_analyze_file(ratings_path: Path, task_name: str, votes_path: Path | None = None, exact: bool = False,
                     rater: str | None = None, out: Path | None = None, display: Display | None = None
                     ) -> dict[str, DhpReport]:
    """``judgelab dhp analyze``: every DHP report from a ratings file, without calling a model.

    Returns one report per rater (see :func:`judgelab.dhp.analysis.report_json` for the JSON shape). With
    ``out`` the tables, discernment.json, README.md, run.json and results.json (a ``dhp analyze`` step
    beside a ``judgelab dhp`` run's own outputs) are written into that folder; without, nothing is.

    Example:
        >>> reports = dhp_analyze_file(Path("runs/dhp/ratings.csv"), "summarization")   # doctest: +SKIP
    """
    from judgelab.output.record import input_file
    from judgelab.ratings import read_ratings

    task = load_task(task_name)
    ratings = read_ratings(ratings_path)
    if rater is not None:
        if rater not in set(ratings["rater"]):
            raise JudgelabError(f"no rater {rater!r} in {ratings_path}; raters: {', '.join(sorted(set(ratings['rater'])))}")
        ratings = ratings[ratings["rater"] == rater]
    votes = load_votes(votes_path, task) if votes_path else None
    reports = analyze(ratings, task, votes, exact)
    if out is not None:
        with OutputFolder(out, f"DHP analysis of {Path(ratings_path).name}: {task.name}", command="dhp analyze",
                          step=True, display=display) as output:
            write_reports(reports, None, task, output)
            output.record("dhp analyze", settings={"task": task.name, "exact_hmp": exact, "rater": rater},
                          inputs=[input_file("ratings", ratings_path)]
                          + ([input_file("expert_weights", votes_path)] if votes_path else []))
            output.finish([f"{r}: {n}" for r, rep in reports.items() for n in rep.notes],
                          extra={"ratings": str(ratings_path), "task": task.name})
    return reports
