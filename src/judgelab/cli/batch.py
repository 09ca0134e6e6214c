"""Batch commands: ``judgelab batch import`` (answers of an offline batch file), ``batch list``;
``rate --export-batch`` writes the batch-input files (:func:`export_run`)."""
from __future__ import annotations

from pathlib import Path

import typer

from judgelab.cli.common import app, RATING

batch_app = typer.Typer(help="Batches: import the answers of a batch file, list a store's batches.",
                        no_args_is_help=True)
app.add_typer(batch_app, name="batch", rich_help_panel=RATING)


def export_run(spec, path: Path, max_requests: int, max_bytes: int) -> None:
    """``rate --export-batch``: write the pending calls of a :class:`judgelab.runfile.RunFile` (one judge)."""
    from judgelab.errors import JudgelabError
    from judgelab.run.batch_export import export_batch

    specs = spec.run_specs()
    if len(specs) != 1:
        raise JudgelabError("--export-batch writes one judge's requests (one model per batch file): give one --judge")
    result = export_batch(spec.load_items(), specs[0], spec.out, path, max_requests, max_bytes)
    if not result.requests:
        typer.echo(f"nothing to export: the store answers every call of {result.rater}; run the same command "
                   "without --export-batch to record the ratings")
        return
    typer.echo(f"batch {result.batch}: {result.requests} requests of {result.rater} in {len(result.files)} file(s), "
               f"recorded in {result.store}")
    for file in result.files:
        answers = file.with_name(file.stem + ".out" + file.suffix)
        typer.echo(f"  {file}   e.g. vllm run-batch -i {file} -o {answers} --model {result.model}" if result.vllm_accepts
                   else f"  {file}   {result.url} lines, for OpenAI's Batch API: vllm run-batch reads chat lines only "
                   "(export with --style chat for it)")
    typer.echo(f"then: judgelab batch import OUTPUT.jsonl --out {spec.out}, and run the same command without "
               "--export-batch (it makes no call for imported answers)")


def show_batch_plan(plans, options, price_in, price_out) -> None:
    """The dry run of ``--execution batch``: batch files, requests and the price at the batch rate."""
    import math

    for p in plans:
        d = p.to_dict()
        requests = d["calls"]
        size = p.plan.prompt_chars() + 400 * requests  # the messages plus each line's JSON around them, roughly
        files = max(math.ceil(requests / options.max_requests), math.ceil(size / (options.max_mb * 1024 * 1024))) if requests else 0
        line = (f"batch plan: {d['judge']}: {requests} requests in {files} batch file(s) (at most {options.max_requests} "
                f"requests and {options.max_mb:g} MB each), ~{size / 1e6:.1f} MB")
        cost_in, cost_out = p.cost_usd(price_in, price_out)
        if cost_in is not None or cost_out is not None:
            rate = 1.0 - options.discount
            line += (f"; at the batch rate ({options.discount:.0%} off): about ${(cost_in or 0.0) * rate:.4f} in"
                     + (f" + at most ${cost_out * rate:.4f} out" if cost_out is not None else ""))
        typer.echo(line)
    typer.echo("refusals asked again and later conversation turns are submitted in later batches (not planned)")


@batch_app.command("import")
def import_command(
    files: list[Path] = typer.Argument(..., help="batch-output JSONL files (vllm run-batch -o, or a provider's output/error files)"),
    out: Path = typer.Option(..., "--out", help="the output folder the batch was exported from (its store.sqlite)"),
    accept_model: str = typer.Option(None, "--accept-model", metavar="NAME",
                                     help="answers of this other model: record them as its own (for --judge "
                                          "openai:NAME@URL), never as the exported judge's"),
) -> None:
    """Record the answers of batch-output files in the store's call ledger, as live answers (checked whole first)."""
    from judgelab.run.batch_import import import_batch

    result = import_batch(list(files), out, accept_model)
    as_model = f" as answers of {result.accepted}" if result.accepted else ""
    typer.echo(f"imported {result.lines} answer lines into {result.store}{as_model}: {result.new} new, "
               f"{result.already} already in the store, {result.failed} failed (exported again by the next "
               "--export-batch)")
    for key, why in result.examples:
        typer.echo(f"  failed {key[:16]}…: {why}")
    if result.accepted:
        typer.echo(f"then: run the same rate command with --judge {' or '.join(result.judges)} to use them; the "
                   "exported judge's requests stay unanswered (its next --export-batch writes them again)")


@batch_app.command("list")
def list_command(
    out: Path = typer.Argument(..., metavar="FOLDER", help="a run's output folder (its store.sqlite is read)"),
) -> None:
    """List the batches of a store: id, kind, state, requests, provider ids."""
    from judgelab.store import Store
    from judgelab.store.batches import batch_store

    path = batch_store(out)
    with Store(path, read_only=True) as store:
        records = store.batches()
    if not records:  # an empty list, not an error
        typer.echo(f"no batches in {path}: its runs made live calls (batches come from rate --execution batch "
                   "or --export-batch)")
        return
    for b in records:
        provider = f" provider batch {b.provider_batch}" if b.provider_batch else ""
        counts = b.detail.get("counts")
        done = f" ({counts})" if counts else ""
        typer.echo(f"{b.id} {b.kind} {b.state}: {b.n_requests} requests of {b.rater}{provider}{done}")


@batch_app.command("cancel")
def cancel_command(
    out: Path = typer.Argument(..., metavar="FOLDER", help="a run's output folder (its store.sqlite names the batches)"),
    batch: str = typer.Option(None, "--batch", help="judgelab's or the provider's batch id (default: every open batch)"),
    api_key: str = typer.Option(None, "--api-key", help="the provider's key (default: $OPENAI_API_KEY)"),
) -> None:
    """Ask the provider to cancel a store's open batches; the next run records what they finished."""
    from judgelab.run.provider_api import cancel_batches

    cancelled = cancel_batches(out, batch, api_key)
    if not cancelled:
        typer.echo(f"no open batches in {out / 'store.sqlite'}: nothing to cancel")
        return
    for record, status in cancelled:
        typer.echo(f"{record.id} (provider {record.provider_batch}): {status}")
    typer.echo("run the same rate command to record what the batches finished (cancelled requests are submitted "
               "again, up to --batch-max-attempts)")
