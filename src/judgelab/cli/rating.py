"""Commands that rate texts: rate, demo, templates, export."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    app,
    judge_options,
    JudgeOpt,
    ModelOpt,
    BaseUrlOpt,
    ApiKeyOpt,
    StyleOpt,
    ModelPathOpt,
    ScriptOpt,
    ConcurrencyOpt,
    RetriesOpt,
    MaxFailureRateOpt,
    TransportOpt,
    MaxTokensParamOpt,
    split_list,
)
from judgelab.errors import JudgelabError


@app.command()
def rate(
    items: Path = typer.Option(..., "--items", help="JSONL/CSV with id, text and optional context, system, group"),
    template: str = typer.Option("chiang-lee-story", "--template", help="shipped template name or path to a .yaml"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all of the template)"),
    variant: Optional[str] = typer.Option(None, "--variant", help="instruction variant, e.g. persona or explain"),
    judge: str = JudgeOpt, model: Optional[str] = ModelOpt, base_url: Optional[str] = BaseUrlOpt,
    api_key: Optional[str] = ApiKeyOpt, style: str = StyleOpt, model_path: Optional[Path] = ModelPathOpt,
    script: Optional[Path] = ScriptOpt, concurrency: int = ConcurrencyOpt, max_retries: int = RetriesOpt,
    no_n: bool = typer.Option(False, "--no-n", help="the server does not support n samples per request"),
    samples: int = typer.Option(3, "--samples", help="samples per item and criterion (the paper's three annotators)"),
    temperature: float = typer.Option(1.0, "--temperature"),
    top_p: float = typer.Option(0.9, "--top-p"),
    max_tokens: int = typer.Option(128, "--max-tokens"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    score: str = typer.Option("auto", "--score", help="parsed | logprob | auto (logprob for the local judge)"),
    query_mode: str = typer.Option("independent", "--query-mode", help="independent | conversation"),
    max_refusal_retries: int = typer.Option(3, "--max-refusal-retries"),
    top_logprobs: int = typer.Option(0, "--top-logprobs", help="ask for top log-probabilities (parsed mode)"),
    rater: Optional[str] = typer.Option(None, "--rater", help="rater label (default: model@template[+variant])"),
    out: Path = typer.Option(Path("judgelab-runs/rate"), "--out", help="output folder: store.sqlite, ratings, summary"),
    ratings_format: str = typer.Option("csv", "--format", help="ratings file format: csv | jsonl | parquet"),
    compare: Optional[str] = typer.Option(None, "--compare", help="two systems for Welch's t-test, e.g. human,gpt2"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="rate only the first N items"),
    id_field: str = typer.Option("id", "--id-field"), text_field: str = typer.Option("text", "--text-field"),
    context_field: str = typer.Option("context", "--context-field"),
    system_field: str = typer.Option("system", "--system-field"), group_field: str = typer.Option("group", "--group-field"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    all_runs: bool = typer.Option(False, "--all-runs", help="ratings.csv and summary.csv cover every run in the store, not only this one"),
    max_failure_rate: float = MaxFailureRateOpt,
    transport: str = TransportOpt,
    max_tokens_param: str = MaxTokensParamOpt,
) -> None:
    """Rate items with a judge; write the ratings table and print the summary.

    Exit status: 0 done; 2 a user error; 3 more judgments failed than --max-failure-rate
    allows (outputs are still written); 130 interrupted (run the same command to resume).
    """
    from judgelab.datasets.items import FieldMap, load_items
    from judgelab.models import Sampling
    from judgelab.run import RunSpec
    from judgelab.workflow import rate_items

    if ratings_format not in {"csv", "jsonl", "parquet"}:
        raise JudgelabError(f"unknown --format {ratings_format!r}: csv, jsonl or parquet")
    if score not in {"auto", "parsed", "logprob"}:
        raise JudgelabError(f"unknown --score {score!r}: parsed, logprob or auto")
    fields = FieldMap(id=id_field, text=text_field, context=context_field, system=system_field, group=group_field)
    loaded = load_items(items, fields, limit=n_items)
    spec = RunSpec(
        template=template, criteria=split_list(criteria), variant=variant, samples=samples,
        sampling=Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        score=("logprob" if judge == "local" else "parsed") if score == "auto" else score,
        query_mode=query_mode, max_refusal_retries=max_refusal_retries, top_logprobs=top_logprobs,
        rater=rater, concurrency=concurrency if judge != "local" else None,
    )
    pair = split_list(compare)
    if pair is not None and len(pair) != 2:
        raise JudgelabError("--compare needs two systems, e.g. --compare human,gpt2")
    rate_items(
        loaded, spec, judge,
        judge_options(judge, model, base_url, api_key, style, model_path, script, concurrency, max_retries, no_n,
                      transport=transport, max_tokens_param=max_tokens_param),
        out, ratings_format, compare=tuple(pair) if pair else None, progress=not quiet, all_runs=all_runs,
        max_failure_rate=max_failure_rate,
    )


@app.command()
def demo(
    n_items: int = typer.Option(8, "--n-items", min=1, max=8, help="demo summaries to use (1-8)"),
    out: Path = typer.Option(Path("judgelab-runs/demo"), "--out"),
    model_path: Optional[Path] = ModelPathOpt,
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """A small DHP benchmark of the embedded judge on shipped texts (offline, a few minutes)."""
    from judgelab.workflow import run_demo

    run_demo(n_items=n_items, out=out, model_path=str(model_path) if model_path else None, progress=not quiet)


@app.command()
def templates() -> None:
    """List the shipped prompt templates and their criteria."""
    from judgelab.prompts import available_templates, load_template

    for name in available_templates():
        t = load_template(name)
        variants = f"; variants: {', '.join(t.variants)}" if t.variants else ""
        typer.echo(f"{name}: {', '.join(t.criteria)}{variants} — {t.description}")


@app.command()
def export(
    store: Path = typer.Argument(..., help="a run's store.sqlite"),
    to: Path = typer.Option(..., "--to", help="output file: .csv, .jsonl or .parquet"),
    meta: bool = typer.Option(False, "--meta", help="include attempts, tokens, latency and metadata"),
) -> None:
    """Export the ratings table of a store (no model is called)."""
    from judgelab.store import Store, write_table

    with Store(store, read_only=True) as s:  # never creates, converts or locks the file it reads
        write_table(s.ratings(with_meta=meta), to)
    typer.echo(f"wrote {to}")

