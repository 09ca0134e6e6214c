"""The ``judgelab`` command.

Every user error ends in one line on stderr and exit status 2 (never a traceback);
an interrupted run keeps every finished judgment in its store and resumes when the
same command is run again.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional

import typer
from pydantic import ValidationError

from judgelab.errors import JudgelabError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="judgelab: LLM judges, measured like human raters.")


# -- shared judge options ------------------------------------------------------
def judge_options(
    judge: str, model: Optional[str], base_url: Optional[str], api_key: Optional[str], style: str,
    model_path: Optional[Path], script: Optional[Path], concurrency: int, max_retries: int,
    no_n: bool = False, timeout: float = 120.0,
) -> dict:
    """Keyword options for :func:`judgelab.models.make_judge` from command-line values."""
    if judge == "local":
        return {"model_path": str(model_path) if model_path else None}
    if judge == "openai":
        return {"model": model, "base_url": base_url, "api_key": api_key, "style": style,
                "concurrency": concurrency, "max_retries": max_retries, "supports_n": not no_n, "timeout": timeout}
    if judge == "scripted-test-double":
        return {"script": str(script) if script else None}
    return {}


JudgeOpt = typer.Option("local", "--judge", help="local (embedded llama.cpp, default) | openai | scripted-test-double")
ModelOpt = typer.Option(None, "--model", help="model name for --judge openai")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or OpenAI)")
ApiKeyOpt = typer.Option(None, "--api-key", help="API key (default: $OPENAI_API_KEY)")
StyleOpt = typer.Option("chat", "--style", help="chat | completion requests (openai judge)")
ModelPathOpt = typer.Option(None, "--model-path", help="GGUF file for the local judge (default: the shipped Gemma 3 270M)")
ScriptOpt = typer.Option(None, "--script", help="JSON script for the scripted-test-double judge (tests only)")
ConcurrencyOpt = typer.Option(16, "--concurrency", min=1, max=1024, help="calls in flight at once (openai judge)")
RetriesOpt = typer.Option(6, "--max-retries", min=0, max=50, help="retries on 429/5xx/timeouts before giving up")


def _split(values: Optional[str]) -> Optional[list[str]]:
    if not values:
        return None
    return [v.strip() for v in values.split(",") if v.strip()]


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
) -> None:
    """Rate items with a judge; write the ratings table and print the summary."""
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
        template=template, criteria=_split(criteria), variant=variant, samples=samples,
        sampling=Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        score=("logprob" if judge == "local" else "parsed") if score == "auto" else score,
        query_mode=query_mode, max_refusal_retries=max_refusal_retries, top_logprobs=top_logprobs,
        rater=rater, concurrency=concurrency if judge != "local" else None,
    )
    pair = _split(compare)
    if pair is not None and len(pair) != 2:
        raise JudgelabError("--compare needs two systems, e.g. --compare human,gpt2")
    rate_items(
        loaded, spec, judge, judge_options(judge, model, base_url, api_key, style, model_path, script, concurrency, max_retries, no_n),
        out, ratings_format, compare=tuple(pair) if pair else None, progress=not quiet,
    )


@app.command()
def demo(
    n_items: int = typer.Option(6, "--n-items", min=1, max=12, help="demo paragraphs to use (1-12)"),
    out: Path = typer.Option(Path("judgelab-runs/demo"), "--out"),
    model_path: Optional[Path] = ModelPathOpt,
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Rate the shipped demo paragraphs and damaged copies of them with the embedded judge (offline)."""
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

    if not store.exists():
        raise JudgelabError(f"store not found: {store}")
    with Store(store) as s:
        write_table(s.ratings(with_meta=meta), to)
    typer.echo(f"wrote {to}")


def _run_cli(entry: Callable[..., object]) -> None:
    try:
        entry(standalone_mode=False)
    except JudgelabError as exc:
        typer.echo(f"judgelab: error: {exc}", err=True)
        sys.exit(2)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        typer.echo(f"judgelab: error: invalid value for {where}: {first['msg']}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("judgelab: interrupted; finished judgments are kept in the store — run the same command to resume", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors and friends
        import click

        if isinstance(exc, click.ClickException):
            typer.echo(f"judgelab: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        raise


def main() -> None:
    _run_cli(typer.main.get_command(app))


if __name__ == "__main__":  # pragma: no cover
    main()
