"""Shared pieces of the command line: the Typer app, judge options, output formats."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional, TypeVar

import typer

from judgelab.choices import Style, TokenParam, Transport
from judgelab.status import DEFAULT_MAX_FAILURE_RATE

_Model = TypeVar("_Model")

if TYPE_CHECKING:
    from judgelab.spec import JudgeOptions

APP_HELP = """judgelab: LLM judges, measured like human raters.

Start here, in this order:
  1. rate    a judge rates your texts: ratings.csv, summary, report.html
  2. agree   how well the judge agrees with people, with 95% intervals
  3. audit   how the judge is biased: leniency, spread, scale use, length

judgelab rate --items ITEMS.jsonl --judge local --out runs/r, then
judgelab agree runs/r/ratings.csv --human HUMANS.csv (audit alike).
Each command's options: judgelab COMMAND --help; the map: docs/cli.md."""

#: The panels of `judgelab --help`, in the order they first appear (the order the command modules register).
START, RATING, STUDIES, PEOPLE, SETUP = ("Start here", "More ways to rate", "Benchmarks and the papers' studies",
                                         "People, reports and selective judging", "Installation")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help=APP_HELP)


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
    return None  # the app's help is APP_HELP


# -- shared judge options ------------------------------------------------------
#: The one judge syntax of every command (parsed by :func:`judgelab.models.spec.parse_judge`).
JUDGE_SYNTAX = ("local | local:PATH.gguf | openai:MODEL | openai:MODEL@BASE_URL | "
                "openai:MODEL@URL1,URL2,... (a fleet of replicas, one rater) | "
                "scripted-test-double:SCRIPT.json (a test double)")


def judge_options(
    base_url: Optional[str] = None, api_key: Optional[str] = None, style: Optional[Style] = None,
    concurrency: Optional[int] = None, max_retries: Optional[int] = None, no_n: bool = False,
    timeout: Optional[float] = None, transport: Optional[Transport] = None, max_tokens_param: Optional[TokenParam] = None,
    model_path: Optional[Path] = None,
) -> "JudgeOptions":
    """The connection options every ``--judge`` of a command shares (:class:`judgelab.spec.JudgeOptions`):
    ``openai:MODEL`` takes the endpoint from ``--base-url`` (else ``$OPENAI_BASE_URL``), the key from
    ``--api-key`` (else ``$OPENAI_API_KEY``); a bare ``local`` takes ``--model-path``. ``None`` is "not
    set" (the defaults are :data:`judgelab.settings.CONNECTION_DEFAULTS`); the bounds are checked there too."""
    from pydantic import SecretStr

    from judgelab.settings import JudgeOptions

    return from_flags(JudgeOptions, base_url=base_url, api_key=SecretStr(api_key) if api_key else None, style=style,
                      concurrency=concurrency, max_retries=max_retries, supports_n=False if no_n else None, timeout=timeout,
                      transport=transport, max_tokens_param=max_tokens_param, model_path=model_path)


def from_flags(model: type[_Model], **values: object) -> _Model:
    """``model(**values)`` from command-line flags: a value outside the model's bounds is one line
    naming the flag (``invalid value for --timeout: …``); the bounds live in the model only."""
    from pydantic import ValidationError

    from judgelab.errors import JudgelabError

    try:
        return model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        flag = "--no-n" if name == "supports_n" else "--" + name.replace("_", "-")
        raise JudgelabError(f"invalid value for {flag}: {first['msg']}") from None


def judge_specs(judges: list[str]) -> list[str]:
    """The ``--judge`` values, checked before any work (a malformed or repeated spec is one line)."""
    from judgelab.errors import JudgelabError
    from judgelab.models.spec import parse_judge

    for judge in judges:
        parse_judge(judge, {})
    if len(set(judges)) != len(judges):
        raise JudgelabError(f"the same --judge is given twice: {', '.join(sorted({s for s in judges if judges.count(s) > 1}))}")
    return list(judges)


JudgeOpt = typer.Option(["local"], "--judge", help=f"the judge: {JUDGE_SYNTAX}; repeatable (one rater per judge)")
BaseUrlOpt = typer.Option(None, "--base-url", help="endpoint of openai:MODEL judges without @URL (default: $OPENAI_BASE_URL or OpenAI)")
ApiKeyOpt = typer.Option(None, "--api-key", help="API key of openai judges (default: $OPENAI_API_KEY)")
StyleOpt = typer.Option(None, "--style", help="chat | completion requests (openai judge; default chat)")
ModelPathOpt = typer.Option(None, "--model-path", help="GGUF file for the local judge (default: the shipped Gemma 3 270M); same as --judge local:PATH")
ConcurrencyOpt = typer.Option(None, "--concurrency", help="calls in flight at once, 1 to 1024 (openai judge; default 16)")
MaxFailureRateOpt = typer.Option(DEFAULT_MAX_FAILURE_RATE, "--max-failure-rate", min=0.0, max=1.0,
                                 help="exit with status 3 when more than this share of judgments failed")
MaxTokensParamOpt = typer.Option(None, "--max-tokens-param",
                                 help="auto (the default) | max_tokens | max_completion_tokens (reasoning models need the latter; auto switches once when refused)")
TransportOpt = typer.Option(None, "--transport", help="HTTP transport of the openai judge: auto (aiohttp; the default) | aiohttp | httpx")
RetriesOpt = typer.Option(None, "--max-retries",
                          help="0 to 50 (default 10) retries of a call after server errors, timeouts and broken connections (rate limits "
                               "are retried with backoff without using these up); then the judgment is recorded as "
                               "'error' and asked again by the next run")
TimeoutOpt = typer.Option(None, "--timeout", help="seconds one attempt of a call may take, above 0 and up to 3600 (openai judge; default 120)")
DryRunOpt = typer.Option(False, "--dry-run", help="call no model: print the calls, judgments, estimated prompt tokens "
                         "(and dollars with --price-in/--price-out) and the first prompt of each criterion")
PriceInOpt = typer.Option(None, "--price-in", min=0.0, help="USD per 1M prompt tokens: the --dry-run estimate, and the cost of a real run (printed, in run.json)")
PriceOutOpt = typer.Option(None, "--price-out", min=0.0, help="USD per 1M completion tokens")


def split_list(values: Optional[str]) -> Optional[list[str]]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``; None for an empty value (a comma-separated option).

    Example:
        >>> split_list("human, gpt2,"), split_list("")
        (['human', 'gpt2'], None)
    """
    if not values:
        return None
    return [v.strip() for v in values.split(",") if v.strip()]



def _check_format(value: str) -> str:
    """``--format`` of the table commands, checked while the arguments are parsed (before any work)."""
    if value not in ("table", "csv", "json"):
        from judgelab.errors import JudgelabError

        raise JudgelabError(f"unknown --format {value!r}: table, csv, json")
    return value


FormatOpt = typer.Option("table", "--format", help="table | csv | json", callback=_check_format)
JudgeSpecOpt = typer.Option("local", "--judge", help=f"the judge: {JUDGE_SYNTAX}")
#: The inputs of the commands that read ratings tables and human files (audit, escalate).
RatingsArg = typer.Argument(None, help="ratings files (judge runs and/or tidy human ratings)")
HumansOpt = typer.Option(None, "--human", help="human ratings to import (repeatable; long or wide layout, read as by "
                         "`judgelab agree --human`)")
HumanLayoutOpt = typer.Option("auto", "--human-layout", help="auto | long | wide")
MapOpt = typer.Option(None, "--map", help="OLD=NEW: rename a criterion in every input (repeatable)")
ScoreOpt = typer.Option(None, "--score", help="parsed | logprob (default: logprob for the local judge, else parsed)")
QuietOpt = typer.Option(False, "--quiet", help="no progress bar")
VerboseOpt = typer.Option(False, "--verbose", help="print every table in full, with each row's note (by default a "
                          "summary of about 40 lines; the files of --out hold everything)")
#: The columns of an input file (items, references, human ratings): one spelling, ``--<what>-field``.
IdFieldOpt = typer.Option("id", "--id-field", help="the column of each row's id (the item id)")
TextFieldOpt = typer.Option("text", "--text-field", help="the column of the text to rate")
ContextFieldOpt = typer.Option("context", "--context-field", help="the column of the text's context (e.g. the "
                               "source of a summary, a story's prompt); optional")
SystemFieldOpt = typer.Option("system", "--system-field", help="the column naming the system that wrote the text; optional")
GroupFieldOpt = typer.Option("group", "--group-field", help="the column grouping texts (e.g. one source document); optional")


def show_plans(plans: Sequence, price_in: Optional[float] = None, price_out: Optional[float] = None,
               later: Optional[Sequence[str]] = None) -> None:
    """Print a dry run: per judge and stage the calls, judgments, estimated tokens (and dollars),
    then the first rendered prompt of each criterion exactly as it would be sent."""
    typer.echo("dry run: no model is called and nothing is written")
    calls = judgments = tokens = 0
    up_to = False
    dollars_in = dollars_out = 0.0
    for p in plans:
        d = p.to_dict()
        at_most = d["calls_at_most"]
        up_to = up_to or at_most is not None
        calls += d["calls"] if at_most is None else at_most
        judgments += d["judgments"]
        tokens += d["prompt_tokens"]
        how = "the embedded judge's tokenizer" if d["token_method"] == "tokenizer" else "characters / 4, an estimate"
        counted = (f"{d['calls']} calls (" if at_most is None else
                   f"up to {at_most} calls ({d['calls']} if the endpoint returns n samples per request, one per sample "
                   "if it ignores n; ")
        line = (f"{d['stage']}: {d['judge']} as {d['rater']}: {counted}{d['cached_calls']} answered by the store), "
                f"{d['judgments']} judgments ({d['already_done']} already in the store"
                + (f"; {d['prompt_changed']} to ask again because their prompt changed" if d["prompt_changed"] else "")
                + (f"; {d['after_error']} to ask again after an error" if d["after_error"] else "") + "), "
                f"~{d['prompt_tokens']} prompt tokens ({how})")
        cost_in, cost_out = p.cost_usd(price_in, price_out)
        if cost_in is not None:
            dollars_in += cost_in
            line += f", ${cost_in:.4f} in"
        if cost_out is not None:
            dollars_out += cost_out
            line += f", at most ${cost_out:.4f} out ({d['max_completion_tokens']} completion tokens = max_tokens × answers)"
        typer.echo(line)
    total = f"total: {'up to ' if up_to else ''}{calls} calls, {judgments} judgments, ~{tokens} prompt tokens"
    if price_in is not None or price_out is not None:
        total += f", about ${dollars_in + dollars_out:.4f} (prompt ${dollars_in:.4f}"
        total += f" + completions at most ${dollars_out:.4f})" if price_out is not None else ")"
    else:
        total += " (--price-in/--price-out USD per 1M tokens give dollars)"
    typer.echo(total)
    for line in later or []:
        typer.echo(f"not planned: {line}")
    shown: set[tuple[str, str]] = set()
    for p in plans:
        for criterion, messages in p.plan.first_prompt_per_criterion().items():
            key = (p.stage, criterion)
            if key in shown:
                continue
            shown.add(key)
            typer.echo(f"\n===== first prompt of {criterion!r} ({p.stage}, {p.plan.rater}), exactly as sent =====")
            for role, text in messages:
                typer.echo(f"--- {role} ---")
                typer.echo(text)


class TerminalDisplay:
    """The command line's display of an output folder (:class:`judgelab.output.Display`): tables and
    lines on stdout, notes (the report's path, warnings) on stderr."""

    def table(self, df, title: str) -> None:
        from judgelab.report.terminal import print_table

        print_table(df, title=title)

    def line(self, text: str) -> None:
        from judgelab.report.terminal import console

        console.print(text)

    def note(self, text: str) -> None:
        typer.echo(text, err=True)


class NotesDisplay(TerminalDisplay):
    """A display for commands whose stdout carries data (``--format csv|json``): notes on stderr only."""

    def table(self, df, title: str) -> None:
        return None

    def line(self, text: str) -> None:
        return None
