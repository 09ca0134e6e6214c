"""``judgelab escalate``: keep the judge's rating where its confidence certifies agreement with people,
send the rest to people (selective judging with a guarantee; logic in :mod:`judgelab.escalate`)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import HumanLayoutOpt, HumansOpt, RatingsArg, app, split_list, PEOPLE
from judgelab.errors import JudgelabError


@app.command(rich_help_panel=PEOPLE)
def escalate(
    ratings: list[Path] = RatingsArg,
    human: Optional[list[Path]] = HumansOpt,
    human_layout: str = HumanLayoutOpt,
    hanna_scores: Optional[Path] = typer.Option(None, "--hanna-scores", help="read HANNA's hanna_metric_scores_llm.csv"),
    judges: Optional[str] = typer.Option(None, "--judges", help="glob of the judges (default: every rater that is "
                                         "not human)"),
    confidence: str = typer.Option("jury", "--confidence", help="samples (agreement of a judge's samples), logprob "
                                   "(|parsed - expected rating| at the rating token) or jury (judges' disagreement)"),
    risk: float = typer.Option(0.1, "--risk", help="the share of kept items allowed to disagree with the humans "
                               "(beyond --tolerance)"),
    delta: float = typer.Option(0.1, "--delta", help="probability that the guarantee fails"),
    tolerance: float = typer.Option(1.0, "--tolerance", help="agreement is |rating - mean human rating| <= this"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all)"),
    holdout: bool = typer.Option(False, "--holdout", help="check instead of decide: hide the human ratings of a "
                                 "random half of the items, escalate, and measure the kept items' agreement there"),
    seed: int = typer.Option(0, "--seed", help="--holdout: seed of the split"),
    out: Optional[Path] = typer.Option(None, "--out", help="folder for escalation.csv, escalated_ids.txt, README.md, "
                                       "run.json and audit.json"),
) -> None:
    """Selective judging with a guarantee: per item keep the judge's rating or escalate it to people."""
    from judgelab.audit import read_audit_inputs
    from judgelab.report.terminal import print_table
    from judgelab.escalate import SIGNALS, escalation_holdout, logprob_columns
    from judgelab.escalate import escalate as run_escalate

    if confidence not in SIGNALS:
        raise JudgelabError(f"unknown --confidence {confidence!r}: {', '.join(SIGNALS)}")
    if not ratings and hanna_scores is None and not human:
        raise JudgelabError("give ratings files (or --hanna-scores) and human ratings")
    df = read_audit_inputs(ratings, human, human_layout, hanna_scores, judges)
    wanted = split_list(criteria)
    if wanted:
        unknown = sorted(set(wanted) - set(df["criterion"].unique()))
        if unknown:
            raise JudgelabError(f"--criteria: no ratings of {', '.join(unknown)}")
        df = df[df["criterion"].isin(wanted)].reset_index(drop=True)
    logprobs = None
    if confidence == "logprob":
        import pandas as pd

        if not ratings:
            raise JudgelabError("--confidence logprob reads score_parsed and score_logprob from judgelab ratings files")
        logprobs = pd.concat([logprob_columns(p) for p in ratings], ignore_index=True)
    if holdout:
        table = escalation_holdout(df, confidence, risk, delta, tolerance, seed, logprobs)
        if out is not None:
            _write(out, "escalate --holdout", [(table, "escalation_holdout", "escalation calibrated on half of the "
                                                "items, checked on the other half's hidden human ratings")],
                   [], {"seed": seed, "confidence": confidence}, None)
        print_table(table, title=f"held-out check: target agreement {1 - risk:.0%} within {tolerance:g}, "
                                 f"δ = {delta:g}")
        return
    result = run_escalate(df, confidence, risk, delta, tolerance, logprobs)
    if out is not None:
        from judgelab.audit_results import escalation_document

        _write(out, "escalate", [(result.to_frame(), "escalation", "per item, criterion and rater: the rating, its "
                                  "confidence and the decision (keep or escalate), with the mean human rating where "
                                  "there is one"),
                                 (result.summary(), "escalation_guarantee", "the guarantee per rater and criterion: "
                                  "target, δ, tolerance, threshold, calibration items, kept share")],
               result.lines(), result.to_dict(), escalation_document(result), result.ids_text())
    for line in result.lines():
        print(f"judgelab: {line}", file=sys.stderr)
    print_table(result.summary().drop(columns=["note"]), title="selective judging")


def _write(out: Path, command: str, tables, lines: list[str], extra, document, ids: Optional[str] = None) -> None:
    import json

    from judgelab.audit_results import AUDIT_JSON
    from judgelab.cli.common import NotesDisplay
    from judgelab.output import OutputFolder

    with OutputFolder(out, "Selective judging (`judgelab escalate`)", command=command, display=NotesDisplay()) as output:
        for df, name, description in tables:
            output.table(df, name, description, show=False)
        if ids is not None:
            output.file("escalated_ids.txt", "the escalated items, system<TAB>item_id per line: `judgelab annotate "
                        "--sample ids:escalated_ids.txt`").write_text(ids, encoding="utf-8")
        if document is not None:
            output.file(AUDIT_JSON, "the guarantee as one JSON document (schema 1), read by report.html",
                        table="audit").write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        output.finish(lines, extra=extra)
