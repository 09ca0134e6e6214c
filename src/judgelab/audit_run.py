"""``judgelab audit`` as one library function: read the inputs, run the bias audit and the sections asked for
(juries, selective judging, calibration, a constrained/free comparison), and — with ``out`` — write the
folder with its record (results.json) and ``audit.json``.

:func:`run_audit` returns :class:`AuditRun`; the command line only parses options, calls it and shows it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from judgelab.errors import JudgelabError
from judgelab.output.record import InputFile, input_file

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.output import Display

__all__ = ["run_audit", "write_audit", "AuditRun", "read_lengths", "write_audit_folder", "TABLE_DESCRIPTIONS"]

TABLE_DESCRIPTIONS = {
    "leniency": "mean shift against the (other) humans and ratio of spreads, per rater and criterion, with 95% CIs",
    "scale_points": "share of each scale point, rater minus humans, with 95% CIs (the shares in note)",
    "length": "judge score per {per} words beyond the human score (errors-in-variables corrected), and on pairs "
              "the judge's preference for the longer text minus the humans', with 95% CIs",
    "self_preference": "judge-human gap on its own family's texts minus other texts, with 95% CIs",
    "position": "first-position preference and consistency of pairwise verdicts in both orders, with 95% CIs",
    "pairwise": "pairwise judges from --verdicts: position preference (share of decisive first-shown picks minus 1/2), "
                "share of pairs whose winner flips with the order, and the judge's share for the longer response and "
                "for its own family's minus the humans' on the same pairs, with 95% CIs",
    "prompt_sensitivity": "ICC(2,1) across a judge's prompt variants and the largest mean shift between them, "
                          "with 95% CIs",
    "constrained_shift": "mean shift of the second rater against the first on the same texts (e.g. constrained - "
                         "free), paired by item, system and criterion, with a 95% t interval over items; each "
                         "rater's failed judgments",
    "constrained_points": "share of each scale point of the paired texts' ok ratings, both raters",
}


def _read_table(path: Path) -> pd.DataFrame:
    from judgelab.ratings import _frame

    return _frame(path)[0]


def read_lengths(path: Path) -> pd.DataFrame:
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


@dataclass
class AuditRun:
    """What :func:`run_audit` computed: the bias report and the comparison of raters (``shift``), the tables
    written (``written``: table, name, what it holds), the further sections (``parts``), the lines to show, the
    inputs read, and the folder written (``out``)."""

    report: Any
    shift: Any
    written: list[tuple[pd.DataFrame, str, str]] = field(default_factory=list)
    parts: dict[str, Any] = field(default_factory=dict)
    jury_level: str | None = None
    calib: Any = None
    lines: list[str] = field(default_factory=list)
    inputs: list[InputFile] = field(default_factory=list)
    out: Path | None = None
    #: when the audit began (``time.time()``): run.json's wall time counts the analysis, not only the writing
    started: float | None = None

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return self.report.tables()

    def document(self) -> dict[str, Any]:
        """The audit's typed results as one document (``audit.json``, the step's results in results.json)."""
        from judgelab.audit_results import audit_document

        return audit_document(self.report, self.parts.get("jury"), self.jury_level, self.parts.get("selective"),
                              self.calib, self.parts.get("constrained_shift"), self.shift.lines())


def _check(n_resamples: int, per: float, risk: float, delta: float, tolerance: float, jury_level: str, bins: int) -> None:
    if n_resamples < 0:
        raise JudgelabError("--n-resamples is 0 (no interval) or more")
    if per <= 0:
        raise JudgelabError("--per-words must be positive")
    if not (0 < risk < 1 and 0 < delta < 1):
        raise JudgelabError("--risk and --delta are between 0 and 1")
    if not (math.isfinite(tolerance) and tolerance >= 0):  # NaN compares False with everything
        raise JudgelabError(f"--tolerance is a number, 0 or more (got {tolerance})")
    if jury_level not in {"group", "overall"}:
        raise JudgelabError(f"unknown --jury-level {jury_level!r}: group or overall")
    if bins < 1:
        raise JudgelabError(f"--bins is 1 or more (got {bins})")


def run_audit(ratings: Sequence[str | Path] = (), human: Sequence[str | Path] = (), human_layout: str = "auto",
              mapping: dict[str, str] | None = None, pairs: str | Path | None = None, lengths: str | Path | None = None,
              self_family: dict[str, str] | None = None, system_family: dict[str, str] | None = None,
              hanna_scores: str | Path | None = None, judges: str | None = None, jury: Sequence[str] = (),
              jury_level: str = "group", folds: int = 5, selective: bool = False, risk: float = 0.1,
              delta: float = 0.1, tolerance: float = 1.0, calibration: bool = False, bins: int = 20,
              compare: Sequence[str] | None = None, criteria: Sequence[str] | None = None, per: float = 100.0,
              n_resamples: int = 999, seed: int = 0, out: str | Path | None = None,
              display: Display | None = None, verdicts: Sequence[str | Path] = ()) -> AuditRun:
    """The bias audit of ratings files and verdicts files (``verdicts``: pairwise judges, beside or instead of
    ratings): ``judgelab audit`` without the printing (its options, by name).

    Returns:
        :class:`AuditRun`; with ``out`` the folder is written (tables, ``audit.json``, README.md, run.json,
        results.json with the audit step, report.html); without, nothing is.

    Raises:
        JudgelabError: an option out of range or unreadable input (one line).

    Example:
        >>> run = run_audit(["run/ratings.csv"], ["humans.csv"], out="audit")  # doctest: +SKIP
        >>> run.report.tables()["leniency"]                                   # doctest: +SKIP
    """
    import time

    from judgelab.audit import read_audit_inputs

    started = time.time()
    _check(n_resamples, per, risk, delta, tolerance, jury_level, bins)
    judge_fam, system_fam = dict(self_family or {}), dict(system_family or {})
    if system_fam and not judge_fam:
        raise JudgelabError("--system-family needs --self-family JUDGE=FAMILY (whose family to compare)")
    verdict_table = _read_verdicts(verdicts, judges, dict(mapping or {}))
    if verdict_table is not None and not (ratings or human or hanna_scores):
        df = None  # pairwise judges only
    else:
        df = read_audit_inputs(list(ratings), list(human), human_layout, hanna_scores, judges, dict(mapping or {}))
    pair_table = _read_table(Path(pairs)) if pairs is not None else None
    length_table = read_lengths(Path(lengths)) if lengths is not None else None
    crit = list(criteria) if criteria else None
    report, shift = _bias_report(df, pair_table, length_table, judge_fam, system_fam, crit, per, n_resamples, seed,
                                 list(compare) if compare else None)
    if verdict_table is not None:
        report = _with_pairwise(report, verdict_table, judge_fam, system_fam, crit, n_resamples, seed)
    run = AuditRun(report, shift, started=started)
    run.lines = [f"{name} skipped: {reason}" for name, reason in report.skipped.items()] + shift.lines()
    run.written = [(t, name, TABLE_DESCRIPTIONS[name].format(per=f"{per:g}")) for name, t in report.tables().items()
                   if name not in report.skipped
                   and (not t.empty if name == "pairwise" else df is not None and "bias" not in report.skipped)]
    if shift.shifts:
        shift_tables = shift.tables()
        run.written += [(t, name, TABLE_DESCRIPTIONS[name]) for name, t in shift_tables.items()]
        run.parts.update(shift_tables)
    if (jury or selective or calibration) and df is None:
        raise JudgelabError("--jury, --selective and --calibration read ratings; verdicts alone have none")
    if jury:
        _add_jury(run, df, list(jury), jury_level, folds, n_resamples, seed)
    if selective:
        _add_selective(run, df, risk, delta, tolerance, seed, folds)
    if calibration:
        _add_calibration(run, df, tolerance, bins, crit, n_resamples, seed)
    run.inputs = ([input_file("ratings", p) for p in ratings] + [input_file("human", h, {"layout": human_layout})
                                                                  for h in human]
                  + [input_file("verdicts", p) for p in verdicts]
                  + [input_file(role, p) for role, p in (("pairs", pairs), ("lengths", lengths),
                                                         ("hanna_scores", hanna_scores)) if p is not None])
    if out is not None:
        write_audit(run, out, display)
    return run


def _read_verdicts(paths: Sequence[str | Path], judges: str | None, mapping: dict[str, str]):
    if not paths:
        return None
    from judgelab.audit_pairwise import read_audit_verdicts

    return read_audit_verdicts(paths, judges, mapping)


def _with_pairwise(report, verdicts, judge_fam, system_fam, criteria, n_resamples: int, seed: int):
    """The report with the pairwise judges' effects (:func:`judgelab.stats.pairwise_bias.pairwise_biases`) added."""
    from judgelab.audit import AuditReport
    from judgelab.stats.pairwise_bias import pairwise_biases

    if criteria:
        verdicts = verdicts[verdicts["criterion"].isin(criteria)]
    effects, skipped = pairwise_biases(verdicts, judge_fam, system_fam, n_resamples=n_resamples, seed=seed)
    if not effects:
        why = ("the verdicts have no judge (only human:<id> raters)" if len(verdicts) else
               f"no verdicts on the criteria asked for ({', '.join(criteria or [])})")
        skipped = {"pairwise": why, **skipped}
    settings = {**report.settings, "n_resamples": n_resamples, "seed": seed,
                "interval": "percentile cluster bootstrap over item_id"}
    return AuditReport(report.effects + tuple(effects), {**report.skipped, **skipped}, settings)


def _bias_report(df, pair_table, length_table, judge_fam, system_fam, criteria, per, n_resamples, seed, compare):
    """(the bias report, the constrained/free comparison); without human ratings only the comparison; without
    ratings (verdicts only) an empty report."""
    from judgelab.audit import AuditReport, audit
    from judgelab.raters import human_mask
    from judgelab.stats.paired_shift import ShiftReport

    if df is None:
        if pair_table is not None or length_table is not None:
            raise JudgelabError("--pairs and --lengths go with ratings files; verdicts carry their texts "
                                "(first_text, second_text)")
        if compare:
            raise JudgelabError("--compare compares raters of ratings files; verdicts alone have none")
        return (AuditReport((), {"ratings": "no ratings files: only the pairwise judges of --verdicts are audited"},
                            {"per_words": per}), ShiftReport(()))
    shift = _constrained_section(df, compare, criteria)
    if shift.shifts and not bool(human_mask(df["rater"]).any()):  # a comparison needs no human ratings
        report = AuditReport((), {"bias": "no human ratings (raters named human:<id>): only the comparison of raters "
                                          "was run"}, {"n_resamples": n_resamples, "seed": seed})
    else:
        report = audit(df, pair_table, length_table, judge_fam, system_fam, criteria, None, per, n_resamples, seed)
    return report, shift


def _constrained_section(df, compare: list[str] | None, criteria: list[str] | None):
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


def _add_jury(run: AuditRun, df, methods: list[str], level: str, folds: int, n_resamples: int, seed: int) -> None:
    from judgelab.audit import jury_report
    from judgelab.audit_results import jury_lines

    jury_table, weights, jury_rows = jury_report(df, methods, level, "kendall", folds, n_resamples, seed)
    run.written += [(jury_table, "jury_agreement", f"Kendall tau ({level} level) with the mean human rating of "
                     "every judge and jury, and each jury minus the best single judge, with 95% CIs"),
                    (weights, "jury_weights", "weights of the cross-validated weighted jury per fold"),
                    (jury_rows, "jury_ratings", "the juries' ratings as raters jury:<method> of the tidy ratings "
                     "table (input of `judgelab agree`)")]
    run.parts.update({"jury": jury_table, "jury_weights": weights})
    run.jury_level = level
    run.lines += jury_lines(jury_table)


def _add_selective(run: AuditRun, df, risk: float, delta: float, tolerance: float, seed: int, folds: int) -> None:
    from judgelab.audit import selective_holdout

    sel = selective_holdout(df, risk, delta, tolerance, seed, folds)
    run.written.append((sel, "selective", f"selective judging of the weighted jury: threshold calibrated on half "
                        f"of the items for agreement >= {1 - risk:.0%} with probability >= {1 - delta:.0%}, "
                        "checked on the other half"))
    run.parts["selective"] = sel


def _add_calibration(run: AuditRun, df, tolerance: float, bins: int, criteria, n_resamples: int, seed: int) -> None:
    from judgelab.audit_results import calibration_tables, sample_calibration

    run.calib = sample_calibration(df, tolerance, bins, criteria, n_resamples, seed)
    calib_table, calib_bins = calibration_tables(run.calib)
    run.written += [(calib_table, "calibration", f"ECE and Brier score of each judge's sample agreement as its "
                     f"confidence of agreeing with the humans within {tolerance:g} points, with 95% CIs"),
                    (calib_bins, "calibration_bins", "the reliability diagram's bins per judge and criterion")]
    run.parts["calibration"] = calib_table


def write_audit(run: AuditRun, out: str | Path, display: Display | None = None) -> Path:
    """Write ``run`` into the folder ``out`` (sets ``run.out``) and return it."""
    report = run.report
    ratings = [i.path for i in run.inputs if i.role == "ratings"]
    human = [i.path for i in run.inputs if i.role == "human"]
    run.out = write_audit_folder(Path(out), "audit", "Judge audit (`judgelab audit`)", run.written,
                                 report.lines() + run.shift.lines(),
                                 {"inputs": ratings, "human": human, "settings": report.settings,
                                  "skipped": report.skipped}, run.document(), run.inputs, display, run.started)
    return run.out


def write_audit_folder(out: Path, command: str, title: str, tables, lines: list[str], extra: dict[str, Any],
                       document: dict[str, Any] | None = None, inputs: Sequence[InputFile] = (),
                       display: Display | None = None, started: float | None = None) -> Path:
    """An audit's folder (``audit`` or ``audit --self-check``): its tables, ``audit.json`` and the record's step."""
    import json

    from judgelab.audit_results import AUDIT_JSON
    from judgelab.output import OutputFolder

    with OutputFolder(out, title, command=command, display=display, started=started) as output:
        for df, name, description in tables:
            output.table(df, name, description, show=False)
        if document is not None:  # the typed results in one file: what report.html's Audit section renders
            output.file(AUDIT_JSON, "every result of the audit as one JSON document (schema 1), read by report.html",
                        table="audit").write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        output.record("audit", settings=dict(extra.get("settings") or {}), inputs=list(inputs),
                      results={"skipped": dict(extra.get("skipped") or {}), "lines": list(lines)})
        notes = ["Intervals: 95% percentile cluster bootstrap over item_id. An effect is detected when its interval "
                 "excludes the no-bias value (0; 1 for the spread ratio).", *lines]  # write_index bullets each note
        return output.finish(notes, extra=extra)
