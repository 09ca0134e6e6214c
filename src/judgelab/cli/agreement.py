"""Agreement commands: agree, and the HANNA meta-evaluation tables."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    app,
    FormatOpt,
    split_list,
)
from judgelab.errors import JudgelabError


@app.command()
def agree(
    ratings: list[Path] = typer.Argument(None, help="ratings files (judge runs and/or tidy human ratings)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings to import (CSV/JSONL)"),
    human_layout: str = typer.Option("long", "--human-layout", help="long (one row per rating) | wide (one column per criterion)"),
    item_col: str = typer.Option("item_id", "--item-col"), rater_col: str = typer.Option("rater", "--rater-col"),
    criterion_col: str = typer.Option("criterion", "--criterion-col"), score_col: str = typer.Option("score", "--score-col"),
    system_col: str = typer.Option("system", "--system-col"), group_col: str = typer.Option("group", "--group-col"),
    criteria_cols: Optional[str] = typer.Option(None, "--criteria-cols", help="wide layout: the criterion columns"),
    methods: str = typer.Option("kendall", "--method", help="comma-separated: kendall, pearson, spearman"),
    levels: str = typer.Option("overall,group,system", "--level", help="comma-separated: overall, group, system"),
    williams_level: str = typer.Option("overall", "--williams-level", help="overall | system"),
    kendall_variant: str = typer.Option("b", "--kendall-variant", help="b (tau-b, default) | c (Stuart's tau-c)"),
    fmt: str = FormatOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="folder for the CSV tables"),
) -> None:
    """Judge-vs-human correlations, human baseline, self-consistency and Williams tests."""
    from judgelab.agree import human_baseline, judge_vs_human, self_consistency, williams_matrix
    from judgelab.ratings import combine, import_long, import_wide, read_ratings
    from judgelab.report.output import emit
    from judgelab.store import write_table

    frames = [read_ratings(p) for p in (ratings or [])]
    if human is not None:
        if human_layout == "long":
            frames.append(import_long(human, item_col, rater_col, criterion_col, score_col, system_col, group_col))
        elif human_layout == "wide":
            cols = split_list(criteria_cols)
            if not cols:
                raise JudgelabError("--human-layout wide needs --criteria-cols")
            frames.append(import_wide(human, cols, item_col, rater_col, system_col, group_col))
        else:
            raise JudgelabError(f"unknown --human-layout {human_layout!r}: long or wide")
    df = combine(frames)
    method_list, level_list = split_list(methods) or ["kendall"], split_list(levels) or ["overall"]
    for m in method_list:
        if m not in {"kendall", "pearson", "spearman"}:
            raise JudgelabError(f"unknown method {m!r}: kendall, pearson or spearman")
    if kendall_variant not in {"b", "c"}:
        raise JudgelabError("--kendall-variant is b or c")
    tables = {
        "correlations": judge_vs_human(df, method_list, level_list, variant=kendall_variant),
        "human_baseline": human_baseline(df, method_list, level_list, variant=kendall_variant),
        "self_consistency": self_consistency(df),
        "williams": williams_matrix(df, williams_level, method_list[0], variant=kendall_variant),
    }
    if out is not None:
        from judgelab.paths import output_folder

        output_folder(out)
        for name, table in tables.items():
            write_table(table, out / f"{name}.csv")
        from judgelab.manifest import record_step
        from judgelab.workflow import report_folder

        record_step(out, "agree", extra={"inputs": [str(p) for p in (ratings or [])], "human": str(human) if human else None})
        report_folder(out)
    if fmt == "json":
        import json as _json
        import math as _math

        def clean(v):
            return None if isinstance(v, float) and _math.isnan(v) else v

        typer.echo(_json.dumps({k: [{c: clean(v) for c, v in r.items()} for r in t.to_dict(orient="records")]
                                for k, t in tables.items()}, ensure_ascii=False))
        return
    for name, table in tables.items():
        if fmt == "csv":
            typer.echo(f"# {name}")
        emit(table, fmt, title=name.replace("_", " ") if fmt == "table" else None)


hanna_app = typer.Typer(help="The HANNA story-evaluation benchmark: meta-evaluation tables.", no_args_is_help=True)
app.add_typer(hanna_app, name="hanna")
ScoresOpt = typer.Option(..., "--scores", help="hanna_metric_scores.csv or hanna_metric_scores_llm.csv")


@hanna_app.command("correlations")
def hanna_correlations(
    scores: Path = ScoresOpt,
    level: str = typer.Option("system", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method", help="kendall | pearson | spearman"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG"),
) -> None:
    """Correlation of every measure with every human criterion (the ten generation systems)."""
    from judgelab.recipes.hanna import correlation_table, load_scores
    from judgelab.report.output import emit

    if level not in {"system", "story", "overall"}:
        raise JudgelabError(f"unknown --level {level!r}: system, story or overall")
    table = correlation_table(load_scores(scores), level, method)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"{method} correlation with human criteria ({level} level)")
    emit(table, fmt, title=f"{method} correlations, {level} level" if fmt == "table" else None)


@hanna_app.command("williams")
def hanna_williams(
    scores: Path = ScoresOpt,
    measure: str = typer.Option("Beluga-13B … 1", "--measure", help="a column, or an LLM family '<LLM> … <prompt>'"),
    level: str = typer.Option("overall", "--level", help="overall | system"),
    method: str = typer.Option("kendall", "--method"),
    versus: Optional[str] = typer.Option(None, "--versus", help="comma-separated measures to compare with (default: all)"),
    family: str = typer.Option("row", "--bh-family", help="row | column | table: the tests one BH adjustment covers"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG of the p-values"),
) -> None:
    """BH-adjusted one-sided Williams p-values: MEASURE vs every other measure, per criterion."""
    from judgelab.recipes.hanna import load_scores, williams_table
    from judgelab.report.output import emit

    table = williams_table(load_scores(scores), measure, level, method, split_list(versus), family)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"Williams p (BH, {family}): {measure} > other ({level})",
                cmap="viridis_r", vmin=0.0, vmax=1.0)
    emit(table, fmt, title=f"Williams tests, {measure} vs others ({level}, BH per {family})" if fmt == "table" else None)


@hanna_app.command("baseline")
def hanna_baseline(
    scores: Path = ScoresOpt,
    level: str = typer.Option("overall", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method"),
    leave_one_out: bool = typer.Option(False, "--leave-one-out", help="compare each rater with the mean of the other two"),
    fmt: str = FormatOpt,
) -> None:
    """Human baseline: each human rater against the mean human rating, per criterion."""
    from judgelab.recipes.hanna import human_baseline, load_scores
    from judgelab.report.output import emit

    emit(human_baseline(load_scores(scores), level, method, leave_one_out), fmt,
         title=f"human baseline ({method}, {level})" if fmt == "table" else None)


@hanna_app.command("icc")
def hanna_icc(
    scores: Path = ScoresOpt,
    generated_only: bool = typer.Option(False, "--generated-only", help="leave out the human-written stories"),
    fmt: str = FormatOpt,
) -> None:
    """ICC(2,1) and ICC(2,k) with 95% CI of the three human raters, per criterion."""
    from judgelab.recipes.hanna import human_icc, load_scores
    from judgelab.report.output import emit

    emit(human_icc(load_scores(scores), not generated_only), fmt, title="human raters: ICC" if fmt == "table" else None)

