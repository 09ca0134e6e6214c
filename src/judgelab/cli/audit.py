"""``judgelab audit``: a bias report for one or more judges, and its planted-bias self-check."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

import typer

from judgelab.cli.common import FormatOpt, HumanLayoutOpt, HumansOpt, MapOpt, RatingsArg, VerboseOpt, app, split_list, START
from judgelab.errors import JudgelabError


def _read_table(path: Path):
    from judgelab.ratings import _frame

    return _frame(path)[0]


def read_lengths(path: Path):
    """``--lengths``: item_id, optional system, and ``length`` (words) or ``text`` (words counted)."""
    import pandas as pd

    from judgelab.datasets.readers import parse_score

    df = _read_table(path)
    if "item_id" not in df.columns or not ({"length", "text"} & set(df.columns)):
        raise JudgelabError(f"{path}: need columns item_id and length (words) or text")
    out = pd.DataFrame({"item_id": df["item_id"].astype(str)})
    if "system" in df.columns:
        out["system"] = df["system"].astype(str)
    if "length" in df.columns:
        out["length"] = [parse_score(v, f"{path}: row {i + 1}, column 'length'") for i, v in enumerate(df["length"])]
    else:
        out["length"] = [float(len(str(t).split())) for t in df["text"]]
    return out


@app.command(rich_help_panel=START)
def audit(
    ratings: list[Path] = RatingsArg,
    human: Optional[list[Path]] = HumansOpt,
    human_layout: str = HumanLayoutOpt,
    maps: Optional[list[str]] = MapOpt,
    pairs: Optional[Path] = typer.Option(None, "--pairs", help="pairwise verdicts in both orders: rater, first, "
                                         "second, choice (first|second|tie), optional item_id, criterion"),
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
    n_items: int = typer.Option(200, "--n-items", help="--self-check: items per simulated study"),
    n_studies: int = typer.Option(200, "--n-studies", help="--self-check: simulated studies (with and without bias)"),
    fmt: str = FormatOpt,
    verbose: bool = VerboseOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="folder for the CSV tables, README.md and run.json"),
) -> None:
    """Bias report: leniency, spread and scale use against humans, length dependence, self-preference, position."""
    from judgelab.cli.agreement import _check_output
    from judgelab.ratings import parse_map

    _check_output(fmt, out)
    if n_resamples < 0:
        raise JudgelabError("--n-resamples is 0 (no interval) or more")
    if per <= 0:
        raise JudgelabError("--per-words must be positive")
    if self_check:
        if ratings or human or pairs or lengths or hanna_scores:
            raise JudgelabError("--self-check simulates its own studies: give no ratings, --human, --pairs or --lengths")
        _self_check(n_items, n_studies, seed, n_resamples, fmt, out)
        return
    from judgelab.audit import read_audit_inputs

    jury_list = split_list(jury_methods) or []
    if not (0 < risk < 1 and 0 < delta < 1):
        raise JudgelabError("--risk and --delta are between 0 and 1")
    if not (math.isfinite(tolerance) and tolerance >= 0):  # NaN compares False with everything
        raise JudgelabError(f"--tolerance is a number, 0 or more (got {tolerance})")
    if jury_level not in {"group", "overall"}:
        raise JudgelabError(f"unknown --jury-level {jury_level!r}: group or overall")
    if bins < 1:
        raise JudgelabError(f"--bins is 1 or more (got {bins})")
    df = read_audit_inputs(ratings, human, human_layout, hanna_scores, judges, parse_map(maps))
    judge_fam = parse_map(self_family, "--self-family", "NAME=FAMILY", "gpt-4o=openai")
    system_fam = parse_map(system_family, "--system-family", "NAME=FAMILY", "gpt-4o=openai")
    if system_fam and not judge_fam:
        raise JudgelabError("--system-family needs --self-family JUDGE=FAMILY (whose family to compare)")
    pair_table = _read_table(pairs) if pairs is not None else None
    length_table = read_lengths(lengths) if lengths is not None else None
    report, shift = _bias_report(df, pair_table, length_table, judge_fam, system_fam, split_list(criteria), per,
                                 n_resamples, seed, compare)
    for line in [f"{name} skipped: {reason}" for name, reason in report.skipped.items()] + shift.lines():
        _say(line)
    sections = _Sections(report, shift)
    if jury_list:
        sections.add_jury(df, jury_list, jury_level, folds, n_resamples, seed)
    if selective:
        sections.add_selective(df, risk, delta, tolerance, seed, folds)
    if calibrate:
        sections.add_calibration(df, tolerance, bins, split_list(criteria), n_resamples, seed)
    if out is not None:
        sections.write(out, ratings, human)
    _show_audit(sections, fmt, verbose, out)


def _say(line: str) -> None:
    import sys

    print(f"judgelab: {line}", file=sys.stderr)


def _self_check(n_items: int, n_studies: int, seed: int, n_resamples: int, fmt: str, out: Optional[Path]) -> None:
    """``--self-check``: simulated studies with planted biases, and how often the audit finds them."""
    from judgelab.audit import self_check as run_check
    from judgelab.cli.output import emit

    result = run_check(n_items, n_studies, seed, n_resamples)
    table = result.to_frame()
    if out is not None:
        from judgelab.audit_results import self_check_document

        _write(out, "audit --self-check", "Audit self-check (`judgelab audit --self-check`)",
               [(table, "self_check", "detection, coverage and false alarms per planted bias, with Monte-Carlo "
                 "standard errors")], result.lines(), result.settings, self_check_document(result))
    for line in result.lines():
        _say(line)
    emit(table, fmt, "audit", title="audit self-check" if fmt == "table" else None)


def _bias_report(df, pair_table, length_table, judge_fam, system_fam, criteria, per, n_resamples, seed, compare):
    """(the bias report, the constrained/free comparison); without human ratings only the comparison."""
    from judgelab.audit import AuditReport
    from judgelab.audit import audit as run_audit

    shift = _constrained_section(df, compare, criteria)
    if shift.shifts and not _has_humans(df):  # a free/constrained comparison needs no human ratings
        report = AuditReport((), {"bias": "no human ratings (raters named human:<id>): only the comparison of raters "
                                          "was run"}, {"n_resamples": n_resamples, "seed": seed})
    else:
        report = run_audit(df, pair_table, length_table, judge_fam, system_fam, criteria, None, per, n_resamples, seed)
    return report, shift


class _Sections:
    """What one audit wrote and shows: the bias tables, then the comparison, jury, selective and
    calibration sections as they are asked for (``parts``: name → table beside the bias tables)."""

    def __init__(self, report, shift) -> None:
        self.report, self.shift = report, shift
        self.tables = report.tables()
        self.written = [(t, name, _DESCRIPTIONS[name]) for name, t in self.tables.items()
                        if name not in report.skipped and "bias" not in report.skipped]
        self.parts: dict[str, Any] = {}
        self.jury_level: Optional[str] = None
        self.calib: Any = None
        if shift.shifts:
            shift_tables = shift.tables()
            self.written += [(t, name, _DESCRIPTIONS[name]) for name, t in shift_tables.items()]
            self.parts.update(shift_tables)

    def add_jury(self, df, methods: list[str], level: str, folds: int, n_resamples: int, seed: int) -> None:
        from judgelab.audit import jury_report

        jury_table, weights, jury_rows = jury_report(df, methods, level, "kendall", folds, n_resamples, seed)
        self.written += [(jury_table, "jury_agreement", f"Kendall tau ({level} level) with the mean human rating of "
                          "every judge and jury, and each jury minus the best single judge, with 95% CIs"),
                         (weights, "jury_weights", "weights of the cross-validated weighted jury per fold"),
                         (jury_rows, "jury_ratings", "the juries' ratings as raters jury:<method> of the tidy ratings "
                          "table (input of `judgelab agree`)")]
        self.parts.update({"jury": jury_table, "jury_weights": weights})
        self.jury_level = level
        for _, row in jury_table[jury_table["rater"].str.contains(" - ", regex=False)].iterrows():
            _say(f"{row['criterion']}: {row['rater']}: Kendall tau difference {row['r']:+.3f} "
                 f"(95% CI {row['ci_low']:+.3f} to {row['ci_high']:+.3f})")

    def add_selective(self, df, risk: float, delta: float, tolerance: float, seed: int, folds: int) -> None:
        from judgelab.audit import selective_holdout

        sel = selective_holdout(df, risk, delta, tolerance, seed, folds)
        self.written.append((sel, "selective", f"selective judging of the weighted jury: threshold calibrated on half "
                             f"of the items for agreement >= {1 - risk:.0%} with probability >= {1 - delta:.0%}, "
                             "checked on the other half"))
        self.parts["selective"] = sel

    def add_calibration(self, df, tolerance: float, bins: int, criteria, n_resamples: int, seed: int) -> None:
        from judgelab.audit_results import calibration_tables, sample_calibration

        self.calib = sample_calibration(df, tolerance, bins, criteria, n_resamples, seed)
        calib_table, calib_bins = calibration_tables(self.calib)
        self.written += [(calib_table, "calibration", f"ECE and Brier score of each judge's sample agreement as its "
                          f"confidence of agreeing with the humans within {tolerance:g} points, with 95% CIs"),
                         (calib_bins, "calibration_bins", "the reliability diagram's bins per judge and criterion")]
        self.parts["calibration"] = calib_table

    def write(self, out: Path, ratings, human) -> None:
        from judgelab.audit_results import audit_document

        report, parts = self.report, self.parts
        _write(out, "audit", "Judge audit (`judgelab audit`)", self.written, report.lines() + self.shift.lines(),
               {"inputs": [str(p) for p in ratings or []], "human": [str(h) for h in human or []],
                "settings": report.settings, "skipped": report.skipped},
               audit_document(report, parts.get("jury"), self.jury_level, parts.get("selective"), self.calib,
                              parts.get("constrained_shift"), self.shift.lines()))


#: The columns of audit's terminal summary (every column is in the files and with --verbose).
_SUMMARY_COLUMNS = {
    "biases": ("rater", "criterion", "bias", "estimate", "ci_low", "ci_high", "detected"),
    "calibration": ("rater", "criterion", "ece", "ece_ci_low", "ece_ci_high", "brier", "agreement", "mean_confidence"),
}


def _show_audit(sections: _Sections, fmt: str, verbose: bool, out: Optional[Path]) -> None:
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
    from judgelab.ratings import is_human

    if effects.empty or "rater" not in effects:
        return effects
    keep = ~effects["rater"].astype(str).map(is_human).astype(bool)
    keep &= ~effects["bias"].astype(str).str.startswith("scale_point") | effects["detected"].astype(bool)
    return effects[keep].sort_values(["rater", "criterion"], kind="stable")


def pd_concat(tables):
    import pandas as pd

    non_empty = [t for t in tables.values() if not t.empty]
    return pd.concat(non_empty, ignore_index=True) if non_empty else next(iter(tables.values()))


_DESCRIPTIONS = {
    "leniency": "mean shift against the (other) humans and ratio of spreads, per rater and criterion, with 95% CIs",
    "scale_points": "share of each scale point, rater minus humans, with 95% CIs (the shares in note)",
    "length": "judge score per length unit beyond the human score (errors-in-variables corrected), and on pairs "
              "the judge's preference for the longer text minus the humans', with 95% CIs",
    "self_preference": "judge-human gap on its own family's texts minus other texts, with 95% CIs",
    "position": "first-position preference and consistency of pairwise verdicts in both orders, with 95% CIs",
    "prompt_sensitivity": "ICC(2,1) across a judge's prompt variants and the largest mean shift between them, "
                          "with 95% CIs",
    "constrained_shift": "mean shift of the second rater against the first on the same texts (e.g. constrained - "
                         "free), paired by item, system and criterion, with a 95% t interval over items; each "
                         "rater's failed judgments",
    "constrained_points": "share of each scale point of the paired texts' ok ratings, both raters",
}


def _has_humans(df) -> bool:
    from judgelab.ratings import is_human

    return bool(df["rater"].map(is_human).any())


def _constrained_section(df, compare: Optional[list[str]], criteria: Optional[list[str]]):
    """``--compare FIRST,SECOND`` (repeatable), or every rater with its ``+constrained`` twin."""
    from judgelab.stats.paired_shift import constrained_shift

    pairs = None
    if compare:
        pairs = []
        for value in compare:
            first, sep, second = value.partition(",")
            if not sep or not first.strip() or not second.strip() or "," in second:
                raise JudgelabError(f"--compare {value!r}: expected FIRST,SECOND (two rater labels)")
            pairs.append((first.strip(), second.strip()))
    return constrained_shift(df, pairs, criteria)


def _write(out: Path, command: str, title: str, tables, lines: list[str], extra, document=None) -> None:
    import json

    from judgelab.audit_results import AUDIT_JSON
    from judgelab.cli.common import NotesDisplay
    from judgelab.output import OutputFolder

    with OutputFolder(out, title, command=command, display=NotesDisplay()) as output:
        for df, name, description in tables:
            output.table(df, name, description, show=False)
        if document is not None:  # the typed results in one file: what report.html's Audit section renders
            output.file(AUDIT_JSON, "every result of the audit as one JSON document (schema 1), read by report.html",
                        table="audit").write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        notes = ["Intervals: 95% percentile cluster bootstrap over item_id. An effect is detected when its interval "
                 "excludes the no-bias value (0; 1 for the spread ratio).", *lines]  # write_index bullets each note
        output.finish(notes, extra=extra)
