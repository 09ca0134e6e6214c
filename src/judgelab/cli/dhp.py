"""The DHP discernment benchmark: run and analyze."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    MaxFailureRateOpt,
    app,
    BaseUrlOpt,
    ApiKeyOpt,
    StyleOpt,
    ConcurrencyOpt,
    RetriesOpt,
    FormatOpt,
)
from judgelab.errors import JudgelabError


def _show_notes(reports: dict) -> None:
    """A report's notes (e.g. too few pairs for D > 1) on stderr, so that JSON on stdout stays JSON."""
    for rater, rep in reports.items():
        for note in rep.get("notes", []):
            typer.echo(f"judgelab: note: {rater}: {note}", err=True)


dhp_app = typer.Typer(help="DHP discernment benchmark: perturb references, judge, test, score. "
                      "Run: judgelab dhp --task TASK [--data FILE] --judge SPEC [--judge SPEC …]; "
                      "recompute from ratings: judgelab dhp analyze RATINGS --task TASK.",
                      invoke_without_command=True)
app.add_typer(dhp_app, name="dhp")


@dhp_app.callback()
def dhp(
    ctx: typer.Context,
    task: Optional[str] = typer.Option(None, "--task", help="summarization | story-completion | question-answering | translation | a task .yaml"),
    data: Optional[Path] = typer.Option(None, "--data", help="JSONL/CSV of references (default: the task's shipped demo set)"),
    judges: list[str] = typer.Option(["local"], "--judge", help="local[:GGUF] | openai:MODEL[@BASE_URL] | scripted-test-double:FILE; repeatable"),
    generator: Optional[str] = typer.Option(None, "--generator", help="judge spec that writes the LLM-based perturbations (none: they are skipped)"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1),
    seed: int = typer.Option(0, "--seed"),
    samples: Optional[int] = typer.Option(None, "--samples", help="ratings per text at temperature 0, 1 to 128 (default 5; 1 for log-probability scoring)"),
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights", help="votes per metric per perturbation (JSON or CSV)"),
    perturbed: Optional[Path] = typer.Option(None, "--perturbed", help="reuse a stored perturbed set (perturbed.jsonl)"),
    exact: bool = typer.Option(False, "--exact-hmp", help="combine with the asymptotically exact HMP instead of Wilson's statistic"),
    id_field: str = typer.Option("id", "--id-field"), text_field: str = typer.Option("text", "--text-field"),
    context_field: str = typer.Option("context", "--context-field"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, style: str = StyleOpt,
    concurrency: int = ConcurrencyOpt, max_retries: int = RetriesOpt,
    out: Path = typer.Option(Path("judgelab-runs/dhp"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
    max_failure_rate: float = MaxFailureRateOpt,
) -> None:
    """Run the DHP benchmark (or, with a subcommand, analyse existing ratings)."""
    if ctx.invoked_subcommand is not None:
        return
    if task is None:
        raise JudgelabError("judgelab dhp needs --task (summarization, story-completion, question-answering, translation)")
    from judgelab.datasets.items import FieldMap
    from judgelab.dhp.workflow import check_run_options, run_dhp

    check_run_options(samples, n_items)
    defaults = {"base_url": base_url, "api_key": api_key, "style": style, "concurrency": concurrency, "max_retries": max_retries}
    reports = run_dhp(task, judges, out, data, FieldMap(id=id_field, text=text_field, context=context_field), n_items, seed,
                      expert_weights, generator, perturbed, samples, defaults, exact, progress=not quiet,
                      max_failure_rate=max_failure_rate)
    _show_notes(reports)


@dhp_app.command("analyze")
def dhp_analyze(
    ratings: Path = typer.Argument(..., help="tidy ratings: item_id, system, criterion, rater, sample, score"),
    task: str = typer.Option(..., "--task"),
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights"),
    exact: bool = typer.Option(False, "--exact-hmp"),
    rater: Optional[str] = typer.Option(None, "--rater", help="analyse one rater of the file"),
    fmt: str = FormatOpt,
) -> None:
    """Recompute every DHP table from a ratings file, without calling a model."""
    import json as _json

    from judgelab.dhp.analysis import perturbation_table, summary_table
    from judgelab.dhp.task import load_task
    from judgelab.dhp.workflow import dhp_analyze_file, public_report
    from judgelab.report.output import emit

    reports = dhp_analyze_file(ratings, task, expert_weights, exact, rater)
    if fmt == "json":
        payload = {r: public_report(rep) for r, rep in reports.items()}
        typer.echo(_json.dumps(next(iter(payload.values())) if len(payload) == 1 else {"judges": payload}))
    else:
        metrics = load_task(task).metrics
        emit(perturbation_table(reports, metrics), fmt, title="per perturbation" if fmt == "table" else None)
        if fmt == "csv":
            typer.echo("")
        emit(summary_table(reports), fmt, title="discernment" if fmt == "table" else None)
    _show_notes(reports)

