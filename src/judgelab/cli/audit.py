"""``judgelab audit``: a bias report for one or more judges, and its planted-bias self-check."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from judgelab.cli.common import FormatOpt, HumanLayoutOpt, HumansOpt, MapOpt, RatingsArg, VerboseOpt, app, split_list, START
from judgelab.errors import JudgelabError


@app.command(rich_help_panel=START)
def audit(
    ratings: list[Path] = RatingsArg,
    human: Optional[list[Path]] = HumansOpt,
    human_layout: str = HumanLayoutOpt,
    maps: Optional[list[str]] = MapOpt,
    pairs: Optional[Path] = typer.Option(None, "--pairs", help="pairwise verdicts in both orders: rater, first, "
                                         "second, choice (first|second|tie), optional item_id, criterion"),
    verdicts: Optional[list[Path]] = typer.Option(None, "--verdicts", help="verdicts files of pairwise judges and "
                                                  "humans (repeatable; judgelab's verdicts or another tool's judge "
                                                  "outputs): position, length and self-preference per judge"),
    lengths: Optional[Path] = typer.Option(None, "--lengths", help="text lengths: item_id, [system], length (words) "
                                           "or text"),
    self_family: Optional[list[str]] = typer.Option(None, "--self-family", help="JUDGE=FAMILY: the judge's model "
                                                    "family (repeatable; a judge label or its part before @)"),
    system_family: Optional[list[str]] = typer.Option(None, "--system-family", help="SYSTEM=FAMILY: the family of "
                                                      "a system's texts (repeatable; unnamed systems: no judge's)"),
    hanna_scores: Optional[Path] = typer.Option(None, "--hanna-scores", help="read HANNA's hanna_metric_scores_llm.csv "
                                                "(LLM judges and three humans; the ten generation systems)"),
    judges: Optional[str] = typer.Option(None, "--judges", help="glob of the judges to audit, e.g. '*@eval-prompt-1' "
                                         "(default: every rater that is not human)"),
    jury_methods: Optional[str] = typer.Option(None, "--jury", help="comma-separated jury methods to add as raters "
                                               "and compare with each judge: mean, median, majority, weighted"),
    jury_level: str = typer.Option("group", "--jury-level", help="level of the jury comparison: group (HANNA's "
                                   "story level) or overall"),
    folds: int = typer.Option(5, "--folds", help="cross-validation folds of the weighted jury"),
    selective: bool = typer.Option(False, "--selective", help="selective judging of the weighted jury, calibrated "
                                   "on half of the items and checked on the other half (docs/audit.md)"),
    risk: float = typer.Option(0.1, "--risk", help="--selective: the share of kept items allowed to disagree "
                               "with the humans (beyond --tolerance)"),
    delta: float = typer.Option(0.1, "--delta", help="--selective: probability that the guarantee fails"),
    tolerance: float = typer.Option(1.0, "--tolerance", help="--selective, --calibration: agreement is "
                                    "|jury or judge - human| <= this"),
    calibrate: bool = typer.Option(False, "--calibration", help="calibration of each judge's sample agreement (the "
                                   "share of its samples within --tolerance of its rating) against its agreement "
                                   "with the humans: reliability bins, ECE, Brier (docs/audit.md)"),
    bins: int = typer.Option(20, "--bins", help="--calibration: one bin per distinct confidence value up to this "
                             "many; more values: this many equal-width bins"),
    compare: Optional[list[str]] = typer.Option(None, "--compare", help="FIRST,SECOND: the mean shift of SECOND "
                                                "against FIRST on the same texts, e.g. a free and a constrained judge "
                                                "(repeatable; default: every rater with its +constrained twin)"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all)"),
    per: float = typer.Option(100.0, "--per-words", help="length unit of the length coefficient"),
    n_resamples: int = typer.Option(999, "--n-resamples", help="bootstrap resamples of each interval (0: none)"),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap (and of --self-check's simulated studies)"),
    self_check: bool = typer.Option(False, "--self-check", help="simulate studies with planted biases and show "
                                    "how often the audit finds them (no input read)"),
    pairwise: bool = typer.Option(False, "--pairwise", help="--self-check: simulate pairwise judges (planted position, "
                                  "length and self-preference, and none) instead of ratings"),
    n_items: int = typer.Option(200, "--n-items", help="--self-check: items per simulated study"),
    n_studies: int = typer.Option(200, "--n-studies", help="--self-check: simulated studies (with and without bias)"),
    fmt: str = FormatOpt,
    verbose: bool = VerboseOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="folder for the CSV tables, README.md and run.json"),
) -> None:
    """Bias report: leniency, spread and scale use against humans, length dependence, self-preference, position;
    pairwise judges' position, length and self-preference from --verdicts."""
    from judgelab.audit_run import run_audit, write_audit
    from judgelab.cli.agreement import _check_output
    from judgelab.cli.common import NotesDisplay
    from judgelab.ratings import parse_map

    _check_output(fmt, out)
    if self_check:
        if n_resamples < 0:
            raise JudgelabError("--n-resamples is 0 (no interval) or more")
        if ratings or human or pairs or lengths or hanna_scores or verdicts:
            raise JudgelabError("--self-check simulates its own studies: give no ratings, --human, --pairs, --lengths "
                                "or --verdicts")
        _self_check(n_items, n_studies, seed, n_resamples, fmt, out, pairwise)
        return
    if pairwise:
        raise JudgelabError("--pairwise goes with --self-check; pairwise judges are audited from --verdicts FILE")
    run = run_audit(ratings or [], human or [], human_layout, parse_map(maps), pairs, lengths,
                    parse_map(self_family, "--self-family", "NAME=FAMILY", "gpt-4o=openai"),
                    parse_map(system_family, "--system-family", "NAME=FAMILY", "gpt-4o=openai"), hanna_scores, judges,
                    split_list(jury_methods) or [], jury_level, folds, selective, risk, delta, tolerance, calibrate, bins,
                    compare, split_list(criteria), per, n_resamples, seed, verdicts=verdicts or [])
    for line in run.lines:
        _say(line)
    if out is not None:
        write_audit(run, out, NotesDisplay())
    _show_audit(run, fmt, verbose, out)


def _say(line: str) -> None:
    import sys

    print(f"judgelab: {line}", file=sys.stderr)


def _self_check(n_items: int, n_studies: int, seed: int, n_resamples: int, fmt: str, out: Optional[Path],
                pairwise: bool = False) -> None:
    """``--self-check``: simulated studies with planted biases, and how often the audit finds them
    (``--pairwise``: pairwise judges)."""
    from judgelab.audit import self_check as run_check
    from judgelab.audit_pairwise import pairwise_self_check
    from judgelab.cli.output import emit

    result = (pairwise_self_check if pairwise else run_check)(n_items, n_studies, seed, n_resamples)
    table = result.to_frame()
    if out is not None:
        from judgelab.audit_results import self_check_document
        from judgelab.audit_run import write_audit_folder
        from judgelab.cli.common import NotesDisplay

        command = "audit --self-check" + (" --pairwise" if pairwise else "")
        write_audit_folder(out, command, f"Audit self-check (`judgelab {command}`)",
                           [(table, "self_check", "detection, coverage and false alarms per planted bias, with "
                             "Monte-Carlo standard errors")], result.lines(), result.settings,
                           self_check_document(result), display=NotesDisplay())
    for line in result.lines():
        _say(line)
    emit(table, fmt, "audit", title="audit self-check" if fmt == "table" else None)


#: The columns of audit's terminal summary (every column is in the files and with --verbose).
_SUMMARY_COLUMNS = {
    "biases": ("rater", "criterion", "bias", "estimate", "ci_low", "ci_high", "detected"),
    "calibration": ("rater", "criterion", "ece", "ece_ci_low", "ece_ci_high", "brier", "agreement", "mean_confidence"),
}


def _show_audit(sections: Any, fmt: str, verbose: bool, out: Optional[Path]) -> None:
    """A summary of about 40 lines (table format: the judges' effects, the other sections cut to fit),
    every table and line (``--verbose``), one CSV table of every effect, or everything as JSON."""
    import json

    from judgelab.cli.output import emit
    from judgelab.output import json_document

    tables, parts = sections.tables, sections.parts
    if fmt == "table" and not verbose:
        from judgelab.cli.summary import Part, show_summary

        shown = [Part("biases of the judges", _judges_effects(pd_concat(tables)), _SUMMARY_COLUMNS["biases"],
                      about="detected: the 95% interval excludes no bias; scale points only where detected; "
                            "the human raters' rows: --verbose, --out")]
        shown += [Part(name.replace("_", " "), t, _SUMMARY_COLUMNS.get(name, ()),
                       out / f"{'jury_agreement' if name == 'jury' else name}.csv" if out is not None else None)
                  for name, t in parts.items() if name != "jury_weights"]
        show_summary(shown)
        return
    for line in sections.report.lines():
        _say(line)
    if fmt == "json":
        typer.echo(json.dumps(json_document("audit", rows=pd_concat(tables), skipped=sections.report.skipped, **parts),
                              ensure_ascii=False))
    elif fmt == "csv":
        emit(pd_concat(tables), fmt, "audit")
        if parts and out is None:
            _say("note: CSV on stdout is the bias table; the jury tables are written with --out FOLDER")
    else:
        for name, t in tables.items():
            if not t.empty:
                emit(t.drop(columns=["line"]), fmt, "audit", title=name.replace("_", " "))
        for name, t in parts.items():
            emit(t.drop(columns=["line"]) if "line" in t.columns else t, fmt, "audit", title=name.replace("_", " "))


def _judges_effects(effects):
    """The summary's effects: the judges' (not the human raters'), each scale point only where detected,
    by rater and criterion."""
    from judgelab.raters import human_mask

    if effects.empty or "rater" not in effects:
        return effects
    keep = ~human_mask(effects["rater"])
    keep &= ~effects["bias"].astype(str).str.startswith("scale_point") | effects["detected"].astype(bool)
    return effects[keep].sort_values(["rater", "criterion"], kind="stable")


def pd_concat(tables):
    import pandas as pd

    non_empty = [t for t in tables.values() if not t.empty]
    return pd.concat(non_empty, ignore_index=True) if non_empty else next(iter(tables.values()))
