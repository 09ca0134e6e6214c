"""Agreement commands: agree, and the HANNA meta-evaluation tables."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    START,
    STUDIES,
    app,
    FormatOpt,
    MapOpt,
    VerboseOpt,
    split_list,
)
from judgelab.errors import JudgelabError


@app.command(rich_help_panel=START)
def agree(
    ratings: list[Path] = typer.Argument(None, help="ratings files (judge runs and/or tidy human ratings)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings to import (CSV/JSONL/Parquet)"),
    human_layout: str = typer.Option("auto", "--human-layout",
                                     help="auto (long when the file has rater, criterion and score columns) | "
                                          "long (one row per rating) | wide (one column per criterion)"),
    id_field: Optional[str] = typer.Option(None, "--id-field", help="the item id column of --human (default: "
                                           "item_id, id or doc_id)"),
    rater_field: Optional[str] = typer.Option(None, "--rater-field", help="the rater column of --human (default: "
                                              "rater; a wide file without one holds means: human:mean)"),
    criterion_field: str = typer.Option("criterion", "--criterion-field", help="long layout: the column naming "
                                        "the criterion of each rating"),
    score_field: str = typer.Option("score", "--score-field", help="long layout: the column of the rating"),
    system_field: str = typer.Option("system", "--system-field", help="the column naming the system that wrote "
                                     "the text; optional"),
    group_field: str = typer.Option("group", "--group-field", help="the column grouping texts (the per-group "
                                    "level); optional"),
    criteria_fields: Optional[str] = typer.Option(None, "--criteria-fields", help="wide layout: the criterion "
                                                  "columns, comma-separated (default: every column of numbers)"),
    raters_per_mean: Optional[int] = typer.Option(None, "--raters-per-mean", help="how many raters each mean of a "
                                                  "file of means pools (e.g. 3 for SummEval's experts); the page "
                                                  "says 'mean of 3 raters' (without it: an unstated number)"),
    maps: Optional[list[str]] = MapOpt,
    methods: str = typer.Option("kendall", "--method", help="comma-separated: kendall, pearson, spearman"),
    levels: str = typer.Option("overall,group,system", "--level", help="comma-separated: overall, group, system"),
    williams_level: str = typer.Option("overall", "--williams-level", help="overall | system"),
    kendall_variant: str = typer.Option("b", "--kendall-variant", help="b (tau-b, default) | c (Stuart's tau-c)"),
    n_resamples: int = typer.Option(999, "--n-resamples", help="bootstrap resamples of each CI (0: no CI)"),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap"),
    ci_method: str = typer.Option("percentile", "--ci-method",
                                  help="bootstrap interval: percentile (default), basic, BCa, expanded (Hesterberg's; "
                                       "closest to nominal with few clusters, see docs/intervals.md)"),
    standardize: str = typer.Option("none", "--standardize",
                                    help="none | z: standardise each rater's scores per criterion (minus its mean, "
                                         "over its SD) and show every statistic raw beside standardised"),
    fmt: str = FormatOpt,
    verbose: bool = VerboseOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="folder for the CSV tables, README.md and run.json"),
    fail_under: Optional[list[str]] = typer.Option(
        None, "--fail-under", metavar="METHOD:LEVEL[:CRITERION]:VALUE",
        help="CI gate (repeatable): exit status 3 when a judge's 95% CI lower bound is below VALUE, or has no "
             "interval, e.g. kendall:overall:0.3"),
) -> None:
    """Judge-vs-human correlations (with bootstrap CIs), human baseline, self-consistency and Williams tests."""
    import sys

    from judgelab.agree import parse_threshold, threshold_failures
    from judgelab.agree_run import HumanFile, run_agree, write_agree
    from judgelab.agree_standardize import check_standardize
    from judgelab.cli.common import NotesDisplay
    from judgelab.ratings import parse_map

    _check_output(fmt, out)
    check_standardize(standardize)
    mapping = parse_map(maps)
    method_list, level_list = _checked_lists(methods, levels, kendall_variant, n_resamples, ci_method)
    gates = [parse_threshold(g, method_list, level_list) for g in fail_under or []]
    if gates and n_resamples == 0:
        raise JudgelabError("--fail-under checks the CI lower bound: it needs --n-resamples above 0")
    hf = None if human is None else HumanFile(human, human_layout, id_field, rater_field, criterion_field, score_field,
                                               system_field, group_field, tuple(split_list(criteria_fields) or ()),
                                               raters_per_mean)
    run = run_agree(ratings or [], hf, mapping, method_list, level_list, williams_level, kendall_variant, n_resamples,
                    seed, ci_method, standardize)
    report = run.report
    failed_gates = threshold_failures(report.correlations, gates)  # a gate naming no criterion is refused: no folder
    if standardize != "none":  # the gate reads the correlations of the standardised scores: say so on each line
        failed_gates = [f"{line} (on scores standardised per rater, --standardize {standardize})" for line in failed_gates]
    for table, reason in report.skipped.items():
        print(f"judgelab: {table} skipped: {reason}", file=sys.stderr)
    if out is not None:
        write_agree(run, out, NotesDisplay())
    _show_agree(report, fmt, out, verbose)
    _gate(failed_gates, gates)


def _checked_lists(methods: str, levels: str, kendall_variant: str, n_resamples: int,
                   ci_method: str) -> tuple[list[str], list[str]]:
    """``--method`` and ``--level`` as lists, and the bootstrap options, checked before any work."""
    from judgelab.stats.bootstrap import METHODS as CI_METHODS

    method_list, level_list = split_list(methods) or ["kendall"], split_list(levels) or ["overall"]
    for m in method_list:
        if m not in {"kendall", "pearson", "spearman"}:
            raise JudgelabError(f"unknown method {m!r}: kendall, pearson or spearman")
    for lv in level_list:
        if lv not in {"overall", "group", "system"}:
            raise JudgelabError(f"unknown level {lv!r}: overall, group or system")
    if kendall_variant not in {"b", "c"}:
        raise JudgelabError("--kendall-variant is b or c")
    if n_resamples < 0:
        raise JudgelabError("--n-resamples is 0 (no CI) or more")
    if ci_method not in CI_METHODS:
        raise JudgelabError(f"unknown --ci-method {ci_method!r}: {', '.join(CI_METHODS)}")
    return method_list, level_list


#: The columns of agree's terminal summary (every column is in the files and with --verbose).
_SUMMARY_COLUMNS = {
    "correlations": ("rater", "criterion", "level", "method", "r", "ci_low", "ci_high", "p", "n"),
    "human_baseline": ("criterion", "level", "method", "vs_mean", "vs_mean_ci_low", "vs_mean_ci_high", "pairwise",
                       "pairwise_ci_low", "pairwise_ci_high", "raters"),
    "self_consistency": ("rater", "criterion", "raters_are", "k", "items", "alpha", "icc2k", "icc2k_low",
                         "icc2k_high"),
    "williams": ("criterion", "judge_a", "judge_b", "r_a", "r_b", "p_bh"),
}


def _show_agree(report, fmt: str, out: Optional[Path], verbose: bool) -> None:
    """The tables: a summary of about 40 lines (table format), every table whole (``--verbose``), the
    correlations as CSV, or everything as JSON; the notes of NaN rows on stderr with the last three."""
    import sys

    from judgelab.cli.output import emit

    if fmt == "table" and not verbose:
        from judgelab.cli.summary import Part, show_summary

        show_summary([Part(name.replace("_", " "), table, _SUMMARY_COLUMNS.get(name, ()),
                           out / f"{name}.csv" if out is not None else None)
                      for name, table in report.tables().items()])
        return
    for table, note, n in report.nan_notes():
        print(f"judgelab: note: {table}: NaN in {n} row{'s' if n != 1 else ''} — {note}", file=sys.stderr)
    if fmt == "json":
        import json as _json

        typer.echo(_json.dumps(report.to_dict(), ensure_ascii=False))
    elif fmt == "csv":  # one table per CSV stream: the correlations; the others are files of --out
        emit(report.tables()["correlations"], fmt, "agree")
        others = [name for name, table in report.tables().items() if name != "correlations" and not table.empty]
        if others and out is None:
            print(f"judgelab: note: CSV on stdout is the correlations table; {', '.join(others)} are written with "
                  "--out FOLDER (or use --format json for all tables)", file=sys.stderr)
    else:
        for name, table in report.tables().items():
            emit(table, fmt, "agree", title=name.replace("_", " "))


def _gate(failed: list[str], gates: list) -> None:
    """--fail-under: every failed gate on stderr, then exit status 3 (as too many failed judgments)."""
    import sys

    from judgelab.errors import EXIT_TOO_MANY_FAILURES

    if not failed:
        if gates:
            print(f"judgelab: --fail-under met: {', '.join(map(str, gates))}", file=sys.stderr)
        return
    for line in failed:
        print(f"judgelab: below --fail-under: {line}", file=sys.stderr)
    sys.exit(EXIT_TOO_MANY_FAILURES)


def _check_output(fmt: str, out: Optional[Path]) -> None:
    """--format and --out, checked before any input is read or anything computed or written (--out is
    created only when its files are written, so a refused command leaves no empty folder)."""
    import os

    from judgelab.cli.output import FORMATS

    if fmt not in FORMATS:
        raise JudgelabError(f"unknown --format {fmt!r}: {', '.join(FORMATS)}")
    if out is not None:
        existing = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
        if not existing.is_dir():
            raise JudgelabError(f"output folder {out} cannot be created: {existing} is a file, not a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise JudgelabError(f"output folder {out} cannot be written: no permission in {existing}")


hanna_app = typer.Typer(help="The HANNA story-evaluation benchmark: meta-evaluation tables.", no_args_is_help=True)
app.add_typer(hanna_app, name="hanna", rich_help_panel=STUDIES)
ScoresArg = typer.Argument(..., metavar="SCORES", help="HANNA's hanna_metric_scores.csv or "
                           "hanna_metric_scores_llm.csv (metric scores and the three humans' ratings)")
HannaOutOpt = typer.Option(None, "--out", help="also write the table as CSV with README.md and run.json into this folder")
TiesOpt = typer.Option("exact", "--ties",
                       help="exact (default: system means equal on paper are ties) | paper (the authors' float "
                            "ordering: reproduces the published tables; differs only on Complexity, GPT vs TD-VAE)")


def _check_ties(ties: str) -> None:
    if ties not in {"exact", "paper"}:
        raise JudgelabError(f"unknown --ties {ties!r}: exact or paper")


def _hanna_out(out: Optional[Path], command: str, table, name: str, description: str, scores: Path,
               ties: Optional[str] = None) -> None:
    """``--out`` of the hanna subcommands (:func:`judgelab.output.steps.write_hanna_table`)."""
    if out is not None:
        from judgelab.cli.common import NotesDisplay
        from judgelab.output.steps import write_hanna_table

        write_hanna_table(out, command, table, name, description, scores, ties, NotesDisplay())


@hanna_app.command("correlations")
def hanna_correlations(
    scores: Path = ScoresArg,
    level: str = typer.Option("system", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method", help="kendall | pearson | spearman"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG"),
    out: Optional[Path] = HannaOutOpt,
    ties: str = TiesOpt,
) -> None:
    """Correlation of every measure with every human criterion (the ten generation systems)."""
    from judgelab.recipes.hanna import correlation_table, load_scores
    from judgelab.cli.output import emit

    _check_output(fmt, out)
    if level not in {"system", "story", "overall"}:
        raise JudgelabError(f"unknown --level {level!r}: system, story or overall")
    _check_ties(ties)
    table = correlation_table(load_scores(scores), level, method, ties)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"{method} correlation with human criteria ({level} level)")
    _hanna_out(out, "hanna correlations", table, f"correlations_{level}_{method}",
               f"{method} correlation of every measure with every human criterion, {level} level", scores, ties)
    emit(table, fmt, "hanna correlations", title=f"{method} correlations, {level} level" if fmt == "table" else None)


@hanna_app.command("williams")
def hanna_williams(
    scores: Path = ScoresArg,
    measure: str = typer.Option("Beluga-13B … 1", "--measure", help="a column, or an LLM family '<LLM> … <prompt>'"),
    level: str = typer.Option("overall", "--level", help="overall | system"),
    method: str = typer.Option("kendall", "--method", help="kendall | pearson | spearman"),
    versus: Optional[str] = typer.Option(None, "--versus", help="comma-separated measures to compare with (default: all)"),
    family: str = typer.Option("row", "--bh-family", help="row | column | table: the tests one BH adjustment covers"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG of the p-values"),
    out: Optional[Path] = HannaOutOpt,
    ties: str = TiesOpt,
) -> None:
    """BH-adjusted one-sided Williams p-values: MEASURE vs every other measure, per criterion."""
    from judgelab.recipes.hanna import load_scores, williams_table
    from judgelab.cli.output import emit

    _check_output(fmt, out)
    _check_ties(ties)
    table = williams_table(load_scores(scores), measure, level, method, split_list(versus), family, ties)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"Williams p (BH, {family}): {measure} > other ({level})",
                cmap="viridis_r", vmin=0.0, vmax=1.0)
    _hanna_out(out, "hanna williams", table, f"williams_{level}_{method}",
               f"BH-adjusted one-sided Williams p, {measure} vs others ({level}, BH per {family})", scores, ties)
    emit(table, fmt, "hanna williams", title=f"Williams tests, {measure} vs others ({level}, BH per {family})" if fmt == "table" else None)


@hanna_app.command("baseline")
def hanna_baseline(
    scores: Path = ScoresArg,
    level: str = typer.Option("overall", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method", help="kendall | pearson | spearman"),
    leave_one_out: bool = typer.Option(False, "--leave-one-out", help="compare each rater with the mean of the other two"),
    fmt: str = FormatOpt,
    out: Optional[Path] = HannaOutOpt,
    ties: str = TiesOpt,
) -> None:
    """Human baseline: each human rater against the mean human rating, per criterion."""
    from judgelab.recipes.hanna import human_baseline, load_scores
    from judgelab.cli.output import emit

    _check_output(fmt, out)
    _check_ties(ties)
    table = human_baseline(load_scores(scores), level, method, leave_one_out, ties)
    _hanna_out(out, "hanna baseline", table, f"human_baseline_{level}_{method}",
               f"human baseline: each rater vs the mean human rating ({method}, {level})", scores, ties)
    emit(table, fmt, "hanna baseline",
         title=f"human baseline ({method}, {level})" if fmt == "table" else None)


@hanna_app.command("icc")
def hanna_icc(
    scores: Path = ScoresArg,
    generated_only: bool = typer.Option(False, "--generated-only", help="leave out the human-written stories"),
    fmt: str = FormatOpt,
    out: Optional[Path] = HannaOutOpt,
) -> None:
    """ICC(2,1) and ICC(2,k) with 95% CI of the three human raters, per criterion."""
    from judgelab.recipes.hanna import human_icc, load_scores
    from judgelab.cli.output import emit

    _check_output(fmt, out)
    table = human_icc(load_scores(scores), not generated_only)
    _hanna_out(out, "hanna icc", table, "human_icc", "ICC(2,1) and ICC(2,k) with 95% CI of the three human raters", scores)
    emit(table, fmt, "hanna icc", title="human raters: ICC" if fmt == "table" else None)

