"""Shared pieces of the command line: the Typer app, judge options, output formats."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="judgelab: LLM judges, measured like human raters.")


def _print_version(value: bool) -> None:
    if value:
        from judgelab import __version__

        typer.echo(f"judgelab {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="print judgelab's version and exit (`judgelab doctor` says more)"),
) -> None:
    """judgelab: LLM judges, measured like human raters."""


# -- shared judge options ------------------------------------------------------
def judge_options(
    judge: str, model: Optional[str], base_url: Optional[str], api_key: Optional[str], style: str,
    model_path: Optional[Path], script: Optional[Path], concurrency: int, max_retries: int,
    no_n: bool = False, timeout: float = 120.0, transport: str = "auto", max_tokens_param: str = "auto",
) -> dict:
    """Keyword options for :func:`judgelab.models.make_judge` from command-line values."""
    if judge == "local":
        return {"model_path": str(model_path) if model_path else None}
    if judge == "openai":
        return {"model": model, "base_url": base_url, "api_key": api_key, "style": style,
                "concurrency": concurrency, "max_retries": max_retries, "supports_n": not no_n, "timeout": timeout, "transport": transport,
                "max_tokens_param": max_tokens_param}
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
MaxFailureRateOpt = typer.Option(0.5, "--max-failure-rate", min=0.0, max=1.0,
                                 help="exit with status 3 when more than this share of judgments failed")
MaxTokensParamOpt = typer.Option("auto", "--max-tokens-param",
                                 help="auto | max_tokens | max_completion_tokens (reasoning models need the latter; auto switches once when refused)")
TransportOpt = typer.Option("auto", "--transport", help="HTTP transport of the openai judge: auto (aiohttp) | aiohttp | httpx")
RetriesOpt = typer.Option(6, "--max-retries", min=0, max=50, help="retries on 429/5xx/timeouts before giving up")


def split_list(values: Optional[str]) -> Optional[list[str]]:
    if not values:
        return None
    return [v.strip() for v in values.split(",") if v.strip()]



FormatOpt = typer.Option("table", "--format", help="table | csv | json")
JudgeSpecOpt = typer.Option("local", "--judge", help="local[:GGUF] | openai:MODEL[@BASE_URL] | scripted-test-double:FILE")
ScoreOpt = typer.Option(None, "--score", help="parsed | logprob (default: logprob for the local judge, else parsed)")
