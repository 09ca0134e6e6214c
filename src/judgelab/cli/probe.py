"""``judgelab probe``: probes of a judge's biases that make their own test texts (``probe padding``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.choices import Score
from judgelab.errors import JudgelabError
from judgelab.cli.common import (
    STUDIES,
    JUDGE_SYNTAX,
    ApiKeyOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    DryRunOpt,
    FormatOpt,
    MaxFailureRateOpt,
    ModelPathOpt,
    PriceInOpt,
    PriceOutOpt,
    ScoreOpt,
    app,
    judge_options,
    judge_specs,
    show_plans,
    split_list,
    IdFieldOpt,
    TextFieldOpt,
    ContextFieldOpt,
    SystemFieldOpt,
    GroupFieldOpt,
)

probe_app = typer.Typer(help="Probes of a judge's biases that make their own test texts: "
                        "judgelab probe padding --items FILE --template T --judge SPEC", no_args_is_help=True)
app.add_typer(probe_app, name="probe", rich_help_panel=STUDIES)


@probe_app.command("padding")
def padding(
    items: Path = typer.Option(..., "--items", help="JSONL/CSV with id, text and optional context, system, group"),
    template: str = typer.Option(..., "--template", help="shipped template name or path to a .yaml (originals and "
                                 "copies are judged with it)"),
    judges: list[str] = typer.Option(["local"], "--judge", help=f"the judge: {JUDGE_SYNTAX}; repeatable"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all of the template)"),
    paddings: Optional[str] = typer.Option(None, "--padding", help="comma-separated KIND:PERCENT, KIND repeat (sentences "
                                           "of the text repeated) or filler (neutral sentences appended); default "
                                           "repeat:25,repeat:50,filler:25,filler:50"),
    seed: int = typer.Option(0, "--seed", help="padding seed (the same seed gives the same copies)"),
    samples: int = typer.Option(1, "--samples", min=1, max=128, help="ratings per text at temperature 0 (averaged)"),
    score: Optional[Score] = ScoreOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="the first N rows of --items"),
    id_field: str = IdFieldOpt, text_field: str = TextFieldOpt, context_field: str = ContextFieldOpt,
    system_field: str = SystemFieldOpt, group_field: str = GroupFieldOpt,
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    model_path: Optional[Path] = ModelPathOpt,
    out: Path = typer.Option(Path("judgelab-runs/padding"), "--out", help="output folder: padded texts, ratings, "
                             "padding_effect.csv, README.md, run.json"),
    fmt: str = FormatOpt,
    quiet: bool = typer.Option(False, "--quiet", help="no progress bars"),
    max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Pad texts without adding content (repeated or filler sentences), judge originals and copies, and test
    whether the judge's score rises (mean change with 95% CI, one-sided Wilcoxon)."""
    import sys

    from judgelab.cli.output import emit
    from judgelab.datasets.items import FieldMap
    from judgelab.perturb.padding import parse_padding
    from judgelab.probes.padding_study import DEFAULT_PADDINGS, plan_padding, run_padding

    specs = judge_specs(judges)
    chosen = split_list(paddings) if paddings is not None else list(DEFAULT_PADDINGS)
    if not chosen:
        raise JudgelabError(f"--padding {paddings!r} names no padding: give KIND:PERCENT, e.g. filler:50")
    for p in chosen:
        parse_padding(p)  # a malformed --padding is one line before any work
    defaults = judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency, model_path=model_path)
    fields = FieldMap(id=id_field, text=text_field, context=context_field, system=system_field, group=group_field)
    kwargs = dict(criteria=split_list(criteria), paddings=chosen, seed=seed, samples=samples, score=score,
                  fields=fields, n_items=n_items, options=defaults)
    if dry_run:
        plan = plan_padding(items, template, specs, out=out, **kwargs)  # type: ignore[arg-type]
        show_plans(plan.judges, price_in, price_out, plan.later)
        return
    try:
        result = run_padding(items, template, specs, out, progress=not quiet, max_failure_rate=max_failure_rate,
                             **kwargs)  # type: ignore[arg-type]
    except JudgelabError as exc:  # too many failures: their counts and examples before the one error line
        for line in getattr(exc, "details", ()):
            print(f"judgelab: {line}", file=sys.stderr)
        raise
    for line in (*result.messages, *result.failures):
        print(f"judgelab: {line}", file=sys.stderr)
    for line in result.report.lines():
        print(f"judgelab: {line}", file=sys.stderr)
    table = result.report.to_frame()
    emit(table if fmt != "table" else table.drop(columns=["line", "note"]), fmt, "probe padding",
         title="padding probe: score change padded - original" if fmt == "table" else None)
    print(f"judgelab: outputs: {result.out} (index: README.md)", file=sys.stderr)
