"""The DHP discernment benchmark: run and analyze."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    STUDIES,
    MaxFailureRateOpt,
    app,
    BaseUrlOpt,
    ApiKeyOpt,
    StyleOpt,
    ConcurrencyOpt,
    RetriesOpt,
    TimeoutOpt,
    FormatOpt,
    JUDGE_SYNTAX,
    DryRunOpt,
    PriceInOpt,
    PriceOutOpt,
    ScoreOpt,
    judge_options,
    judge_specs,
    IdFieldOpt,
    TextFieldOpt,
    ContextFieldOpt,
    QuietOpt,
)
from judgelab.choices import Score, Style
from judgelab.errors import JudgelabError


def _show_notes(reports: dict) -> None:
    """A report's notes (e.g. too few pairs for D > 1) on stderr, so that JSON on stdout stays JSON."""
    for rater, rep in reports.items():
        for note in rep.notes:
            typer.echo(f"judgelab: note: {rater}: {note}", err=True)


def show_dhp(result) -> None:
    """Show a :class:`judgelab.dhp.study.DhpResult`: what was perturbed, the tables, failures, notes."""
    from judgelab.report.terminal import console, print_table

    for line in result.messages:
        console.print(line)
    table, summary = result.tables()
    shown = table.drop(columns=[c for c in ("p_hmp_ew", "D_ew") if (table[c] == table[c.replace("_ew", "")]).all()])
    print_table(shown, title=f"DHP {result.task.name}: per perturbation (one-sided Wilcoxon p per metric, HMP, D = log_0.05 p)")
    print_table(summary, title="Discernment scores (D > 1: significant at 0.05)")
    console.print(f"tables, figures and ratings: {result.out} (index: README.md)")
    for line in result.failure_lines():
        console.print(line)
    _show_notes(result.reports)


dhp_app = typer.Typer(help="DHP discernment benchmark: perturb references, judge, test, score. "
                      "Run: judgelab dhp --task TASK [--items FILE] --judge SPEC [--judge SPEC …]; "
                      "recompute from ratings: judgelab dhp analyze RATINGS --task TASK.",
                      invoke_without_command=True)
app.add_typer(dhp_app, name="dhp", rich_help_panel=STUDIES)


@dhp_app.callback()
def dhp(
    ctx: typer.Context,
    task: Optional[str] = typer.Option(None, "--task", help="summarization | story-completion | question-answering | translation | a task .yaml"),
    data: Optional[Path] = typer.Option(None, "--items", help="JSONL/CSV of the references to perturb and rate (default: the task's shipped demo set)"),
    judges: list[str] = typer.Option(["local"], "--judge", help=f"the judge: {JUDGE_SYNTAX}; repeatable (one rater per judge)"),
    generator: Optional[str] = typer.Option(None, "--generator", help="judge spec that writes the LLM-based perturbations (none: they are skipped)"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="references: the first N of --items, each with all its perturbed copies"),
    seed: int = typer.Option(0, "--seed", help="seed of the rule-based perturbations (the same seed gives the same copies)"),
    samples: Optional[int] = typer.Option(None, "--samples", help="ratings per text at temperature 0, 1 to 128 (default 5; 1 for log-probability scoring)"),
    score: Optional[Score] = ScoreOpt,
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights", help="votes per metric per perturbation (JSON or CSV)"),
    perturbed: Optional[Path] = typer.Option(None, "--perturbed", help="reuse a stored perturbed set (perturbed.jsonl)"),
    exact: bool = typer.Option(False, "--exact-hmp", help="combine with the asymptotically exact HMP instead of Wilson's statistic"),
    id_field: str = IdFieldOpt, text_field: str = TextFieldOpt, context_field: str = ContextFieldOpt,
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, style: Optional[Style] = StyleOpt,
    concurrency: Optional[int] = ConcurrencyOpt, max_retries: Optional[int] = RetriesOpt, timeout: Optional[float] = TimeoutOpt,
    out: Path = typer.Option(Path("judgelab-runs/dhp"), "--out", help="output folder: tables, figures, ratings, README.md, run.json"),
    quiet: bool = QuietOpt,
    max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Run the DHP benchmark (or, with a subcommand, analyse existing ratings)."""
    if ctx.invoked_subcommand is not None:
        return
    if task is None:
        raise JudgelabError("judgelab dhp needs --task (summarization, story-completion, question-answering, translation)")
    from judgelab.datasets.items import FieldMap
    from judgelab.dhp.study import check_run_options, plan_dhp, run_dhp

    check_run_options(samples, n_items)
    specs = judge_specs(judges)
    defaults = judge_options(base_url=base_url, api_key=api_key, style=style, concurrency=concurrency,
                              max_retries=max_retries, timeout=timeout)
    fields = FieldMap(id=id_field, text=text_field, context=context_field)
    if dry_run:
        from judgelab.cli.common import show_plans

        plan = plan_dhp(task, specs, data, fields, n_items, seed, generator, perturbed, samples, defaults, out, score)
        show_plans(plan.judges, price_in, price_out, plan.later)
        return
    try:
        result = run_dhp(task, specs, out, data, fields, n_items, seed, expert_weights, generator, perturbed, samples, defaults,
                         exact, progress=not quiet, max_failure_rate=max_failure_rate, score=score)
    except JudgelabError as exc:  # nothing to analyse: show why (the judges' failures) before the one error line
        from judgelab.report.terminal import console

        for line in getattr(exc, "details", ()):
            console.print(line)
        raise
    show_dhp(result)
    result.finish(show=lambda line: typer.echo(line, err=True))


@dhp_app.command("analyze")
def dhp_analyze(
    ratings: Path = typer.Argument(..., help="tidy ratings: item_id, system, criterion, rater, sample, score"),
    task: str = typer.Option(..., "--task", help="the task the ratings are of: summarization | story-completion | "
                             "question-answering | translation | a task .yaml"),
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights", help="votes per metric per perturbation "
                                                  "(JSON or CSV)"),
    exact: bool = typer.Option(False, "--exact-hmp", help="combine with the asymptotically exact HMP instead of "
                               "Wilson's statistic"),
    rater: Optional[str] = typer.Option(None, "--rater", help="analyse one rater of the file"),
    fmt: str = FormatOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="also write the tables, discernment.json, README.md and run.json into this folder"),
) -> None:
    """Recompute every DHP table from a ratings file, without calling a model.

    CSV (--format csv) is one table: a row per judge and perturbation, with the judge's D_avg,
    D_min, D_avg_ew, D_min_ew and failure rate on each row.
    JSON (--format json and discernment.json) has one shape for any number of judges:
    {"schema": 1, "task": TASK, "judges": {RATER: {perturbations, D_avg, D_min, D_avg_ew, D_min_ew, notes}}}.
    """
    import json as _json

    from judgelab.dhp.analysis import perturbation_table, report_json, summary_table
    from judgelab.dhp.task import load_task
    from judgelab.dhp.study import dhp_analyze_file
    from judgelab.cli.output import FORMATS, emit

    if fmt not in FORMATS:
        raise JudgelabError(f"unknown --format {fmt!r}: {', '.join(FORMATS)}")
    from judgelab.cli.common import NotesDisplay

    # into a folder of `judgelab dhp`, analyze is a step beside the run's own outputs
    reports = dhp_analyze_file(ratings, task, expert_weights, exact, rater, out, NotesDisplay())
    loaded = load_task(task)
    if fmt == "json":
        typer.echo(_json.dumps(report_json(reports, loaded.name)))
    elif fmt == "csv":  # one table per stream: the judge-level scores repeated on each perturbation's row
        summary = summary_table(reports)
        emit(perturbation_table(reports, loaded.metrics).merge(summary, on="judge", how="left"), fmt, "dhp analyze")
    else:
        emit(perturbation_table(reports, loaded.metrics), fmt, "dhp analyze", title="per perturbation")
        emit(summary_table(reports), fmt, "dhp analyze", title="discernment")
    _show_notes(reports)
