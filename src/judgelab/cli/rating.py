"""Commands that rate texts: rate, demo, export (templates: cli/templates.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.choices import Execution, PairOrders, QueryMode, RatingsFormat, Score, Style, TokenParam, Transport

from judgelab.cli.common import (
    RATING,
    START,
    app,
    judge_specs,
    JudgeOpt,
    BaseUrlOpt,
    ApiKeyOpt,
    StyleOpt,
    ModelPathOpt,
    ConcurrencyOpt,
    RetriesOpt,
    TimeoutOpt,
    MaxFailureRateOpt,
    TransportOpt,
    MaxTokensParamOpt,
    DryRunOpt,
    PriceInOpt,
    PriceOutOpt,
    split_list,
    IdFieldOpt,
    TextFieldOpt,
    ContextFieldOpt,
    SystemFieldOpt,
    GroupFieldOpt,
    QuietOpt,
)


@app.command(rich_help_panel=START)
def rate(
    items: Path = typer.Option(..., "--items", help="JSONL/CSV with id, text and optional context, system, group (with "
                               "--pairs: responses, one row per instruction × system: item_id, instruction, system, response)"),
    template: str = typer.Option("chiang-lee-story", "--template", help="shipped template name or path to a .yaml"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all of the template)"),
    variant: Optional[str] = typer.Option(None, "--variant", help="instruction variant, e.g. persona or explain"),
    judge: list[str] = JudgeOpt, base_url: Optional[str] = BaseUrlOpt,
    api_key: Optional[str] = ApiKeyOpt, style: Optional[Style] = StyleOpt, model_path: Optional[Path] = ModelPathOpt,
    concurrency: Optional[int] = ConcurrencyOpt, max_retries: Optional[int] = RetriesOpt,
    timeout: Optional[float] = TimeoutOpt,
    no_n: bool = typer.Option(False, "--no-n", help="the server does not support n samples per request"),
    samples: Optional[int] = typer.Option(None, "--samples", help="samples per item and criterion (default 3, the "
                                          "paper's three annotators; log-probability scoring reads one answer)"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="sampling temperature of generated "
                                                "answers, 0 to 2 (default 1.0; log-probability scoring reads the next "
                                                "token and ignores it)"),
    top_p: Optional[float] = typer.Option(None, "--top-p", help="nucleus sampling: the smallest set of tokens whose "
                                          "probability reaches this share (default 0.9)"),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="most tokens of one answer (default 128; a "
                                             "longer one is cut off and recorded as truncated)"),
    seed: Optional[int] = typer.Option(None, "--seed", help="sampling seed sent to judges that take one (the local "
                                       "judge, OpenAI); default: none"),
    score: Score = typer.Option("auto", "--score", help="parsed | logprob | auto (the judge's default: logprob for the local judge)"),
    query_mode: QueryMode = typer.Option("independent", "--query-mode", help="independent | conversation"),
    max_refusal_retries: int = typer.Option(3, "--max-refusal-retries", help="a refusal is asked again up to this "
                                            "many times, then recorded as a refusal"),
    top_logprobs: int = typer.Option(0, "--top-logprobs", help="ask for top log-probabilities (parsed mode)"),
    constrain: bool = typer.Option(False, "--constrain", help="constrain answers to the template's format (a scale "
                                   "point; llama.cpp grammar or JSON-schema response_format; with --score parsed); "
                                   "label +constrained"),
    rater: Optional[str] = typer.Option(None, "--rater", help="rater label (default: model@template[+variant]); one judge only"),
    out: Path = typer.Option(Path("judgelab-runs/rate"), "--out", help="output folder: store.sqlite, ratings, summary, README.md, run.json"),
    ratings_format: RatingsFormat = typer.Option("csv", "--ratings-format", help="ratings file format: csv | jsonl | parquet"),
    compare: Optional[str] = typer.Option(None, "--compare", help="two systems for Welch's t-test, e.g. human,gpt2"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="items: rate only the first N rows of --items"),
    id_field: str = IdFieldOpt, text_field: str = TextFieldOpt, context_field: str = ContextFieldOpt,
    system_field: str = SystemFieldOpt, group_field: str = GroupFieldOpt,
    quiet: bool = QuietOpt,
    pairs: Optional[str] = typer.Option(None, "--pairs", help="judge pairs of responses (docs/preference-judging.md): "
                                        "baseline:SYSTEM (every other system against it), all, or a .csv/.jsonl of pairs "
                                        "(first, second, optionally item_id); writes verdicts.csv"),
    orders: PairOrders = typer.Option("both", "--orders", help="with --pairs: both (each pair in both orders) | given"),
    offer_tie: bool = typer.Option(True, "--offer-tie/--no-offer-tie", help="with --pairs: whether the template offers a tie"),
    all_runs: bool = typer.Option(False, "--all-runs", help="ratings.csv and summary.csv cover every run in the store, not only this one"),
    max_failure_rate: float = MaxFailureRateOpt,
    transport: Optional[Transport] = TransportOpt,
    max_tokens_param: Optional[TokenParam] = MaxTokensParamOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
    export_batch: Optional[Path] = typer.Option(
        None, "--export-batch", help="call no model: write the calls the store lacks as OpenAI batch-input JSONL "
        "(for `vllm run-batch` or a provider), record them in the store; then `judgelab batch import` the answers "
        "and run the same command again (docs/at-scale.md)"),
    execution: Execution = typer.Option("live", "--execution", help="live | batch (the provider's batch API: "
                                        "about half the price, hours not minutes; resumable; docs/at-scale.md)"),
    batch_max_requests: int = typer.Option(50_000, "--batch-max-requests", min=1, help="most requests per batch file"),
    batch_max_mb: float = typer.Option(200.0, "--batch-max-mb", min=0.001, help="most megabytes per batch file"),
    batch_max_attempts: int = typer.Option(6, "--batch-max-attempts", min=1, max=20,
                                           help="failed answers per request and run at most (expired, cancelled or refused batches spend none; docs/at-scale.md)"),
    batch_poll: float = typer.Option(30.0, "--batch-poll", min=0.01, help="seconds between two looks at a batch"),
    batch_discount: float = typer.Option(0.5, "--batch-discount", min=0.0, max=1.0,
                                         help="the batch price's discount on --price-in/--price-out (OpenAI: 0.5)"),
) -> None:
    """Rate items with one or more judges; write the ratings table and print the summary.

    The same run as a file: ``judgelab run SPEC.yaml`` (keys = these flags; see docs/runs-and-stores.md).

    Exit status: 0 done; 2 a user error; 3 more judgments failed than --max-failure-rate
    allows (outputs are still written); 130 interrupted (run the same command to resume).
    """
    from judgelab.runfile import RunFile

    from judgelab.cli.common import from_flags, judge_options
    from judgelab.settings import SamplingConfig
    from judgelab.spec import BatchOptions

    spec = RunFile(
        items=items, template=template, criteria=split_list(criteria), variant=variant, judge=judge_specs(judge),
        **({} if samples is None else {"samples": samples}), sampling=from_flags(SamplingConfig, temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        score=score, query_mode=query_mode, max_refusal_retries=max_refusal_retries, top_logprobs=top_logprobs, constrain=constrain,
        rater=rater, out=out, ratings_format=ratings_format, compare=split_list(compare), n_items=n_items, id_field=id_field,
        text_field=text_field, context_field=context_field, system_field=system_field, group_field=group_field,
        all_runs=all_runs, max_failure_rate=max_failure_rate, execution=execution, pairs=pairs, orders=orders, offer_tie=offer_tie,
        batch=BatchOptions(max_requests=batch_max_requests, max_mb=batch_max_mb, max_attempts=batch_max_attempts,
                           poll_seconds=batch_poll, discount=batch_discount),
        options=judge_options(base_url=base_url, api_key=api_key, style=style, concurrency=concurrency,
                              max_retries=max_retries, timeout=timeout, no_n=no_n, transport=transport,
                              max_tokens_param=max_tokens_param, model_path=model_path),
    )
    if export_batch is not None:
        if dry_run:
            from judgelab.errors import JudgelabError

            raise JudgelabError("--export-batch and --dry-run: choose one (--export-batch calls no model either)")
        from judgelab.cli.batch import export_run

        export_run(spec, export_batch, batch_max_requests, int(batch_max_mb * 1024 * 1024))
        return
    execute_spec(spec, progress=not quiet, dry_run=dry_run, price_in=price_in, price_out=price_out)


def execute_spec(spec, progress: bool = True, dry_run: bool = False, price_in: float | None = None,
                 price_out: float | None = None) -> None:
    """Run (or with ``dry_run`` only plan) a :class:`judgelab.runfile.RunFile` and show the result:
    the one path of ``judgelab rate`` and ``judgelab run``."""
    from judgelab.report.terminal import console, print_table
    from judgelab.rate import finish_rate, report_lines, stats_line

    if dry_run:
        from judgelab.cli.common import show_plans

        plans = spec.plan()
        pairs = spec.pair_set()
        if pairs is not None:
            typer.echo(f"pairs: {pairs.describe()} (the calls below count every order)")
        show_plans(plans, price_in, price_out)
        if spec.execution == "batch":
            from judgelab.cli.batch import show_batch_plan

            show_batch_plan(plans, spec.batch, price_in, price_out)
        return
    result = spec.run(progress=progress, price_in=price_in, price_out=price_out)
    for run in result.runs:
        shown = result.summary[result.summary["rater"] == run.rater] if len(result.runs) > 1 else result.summary
        print_table(shown.drop(columns=["rater"]), title=f"Ratings by {run.rater}")
    if result.welch is not None:
        a, b = result.compare
        welch = result.welch.drop(columns=["rater"]) if len(result.runs) == 1 else result.welch
        print_table(welch, title=f"Welch's t-test, {a} vs {b} (per-item means)")
    for run in result.runs:
        console.print(stats_line(run.stats))
        if run.stats.batches:
            b = run.stats.batches
            ended = "".join(f", {b[k]} {k}" for k in ("refused", "lost") if b.get(k))
            console.print(f"batches: {b['batches']} created, {b['resumed']} resumed{ended}; {b['submitted']} requests "
                          f"submitted ({b['resubmitted']} again after no answer), {b['answered']} answered, "
                          f"{b['gave_up']} without an answer")
        if run.cost_usd is not None:
            console.print(f"cost of the calls made: ${run.cost_usd:.4f} (at --price-in/--price-out per 1M tokens)")
        for note in run.notes:
            console.print(f"note: {note}")
        for line in report_lines(result.failures[run.rater]):
            console.print(line)
        if result.verdict_summary is not None:
            console.print(verdict_line(result.verdict_summary, run.rater))
    f = result.files
    console.print(f"ratings: {f['ratings']}   summary: {f['summary']}   manifest: {f['manifest']}   store: {f['store']}"
                  + (f"   verdicts: {f['verdicts']}" if "verdicts" in f else ""))
    finish_rate(result, spec.max_failure_rate, show=lambda line: typer.echo(line, err=True))


def verdict_line(summary: dict, rater: str) -> str:
    """``verdicts of R: 24 (10 pairs × 2 orders): first 9, second 12, tie 1; 2 failed (no verdict read)``."""
    counts = summary["raters"].get(rater, {"verdicts": 0, "first": 0, "second": 0, "tie": 0, "failed": 0})
    orders = 2 if summary["orders"] == "both" else 1
    return (f"verdicts of {rater}: {counts['verdicts']} ({summary['pairs']} pairs × {orders} order{'s' * (orders > 1)}): "
            f"first {counts['first']}, second {counts['second']}, tie {counts['tie']}"
            + (f"; {counts['failed']} failed (no verdict read)" if counts["failed"] else ""))


@app.command(rich_help_panel=RATING)
def demo(
    n_items: int = typer.Option(8, "--n-items", min=1, max=8, help="references: demo summaries to perturb and rate (1-8)"),
    out: Path = typer.Option(Path("judgelab-runs/demo"), "--out", help="output folder: tables, figures, README.md, run.json"),
    judge: str = typer.Option("local", "--judge", help="the judge (default: the embedded one); local | local:PATH.gguf | openai:MODEL[@URL] | scripted-test-double:SCRIPT.json"),
    model_path: Optional[Path] = ModelPathOpt,
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt,
    quiet: bool = QuietOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """A small DHP benchmark of the embedded judge on shipped texts (offline, a few minutes)."""
    from judgelab.cli.common import judge_options
    from judgelab.dhp.study import run_demo

    defaults = judge_options(base_url=base_url, api_key=api_key, model_path=model_path)
    if dry_run:
        from judgelab.cli.common import show_plans
        from judgelab.dhp.study import plan_dhp

        plan = plan_dhp("summarization", judge_specs([judge]), n_items=n_items, options=defaults, out=out)
        show_plans(plan.judges, price_in, price_out, plan.later)
        return
    from judgelab.report.terminal import console

    who = ("the embedded judge (Gemma 3 270M via llama.cpp, offline) scores from next-token log-probabilities"
           if judge == "local" else f"judge: {judge}")
    console.print("judgelab demo: can the judge tell reference summaries from damaged copies? DHP benchmark (Wang et al.), "
                  f"summarization, rule-based perturbations; {who}.")
    result = run_demo(n_items=n_items, out=out, judge=judge_specs([judge])[0], options=defaults, progress=not quiet)
    from judgelab.cli.dhp import show_dhp

    show_dhp(result)
    rep = next(iter(result.reports.values()))
    verdict = "discerns" if rep.D_avg > 1 else "does not reliably discern"
    console.print(f"On average the judge {verdict} damaged summaries (D_avg = {rep.D_avg:.2f}; D > 1 means "
                  f"p < 0.05); its weakest case has D_min = {rep.D_min:.2f}.")
    result.finish(show=lambda line: typer.echo(line, err=True))


@app.command(rich_help_panel=RATING)
def export(
    store: Path = typer.Argument(..., help="a run's store.sqlite"),
    to: Path = typer.Option(..., "--to", help="output file: .csv, .jsonl or .parquet"),
    meta: bool = typer.Option(False, "--meta", help="include attempts, tokens, latency and metadata"),
) -> None:
    """Export the ratings table of a store (no model is called)."""
    from judgelab.output import write_table
    from judgelab.store import Store

    write_table(None, to, check_only=True)  # a bad --to is refused before the store is read
    with Store(store, read_only=True) as s:  # never creates, converts or locks the file it reads
        write_table(s.ratings(with_meta=meta), to)
    typer.echo(f"wrote {to}")
