"""``judgelab escalate``: keep the judge's rating where its confidence certifies agreement with people,
send the rest to people (selective judging with a guarantee; logic in :mod:`judgelab.escalate`)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import HumanLayoutOpt, HumansOpt, RatingsArg, app, split_list, PEOPLE


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
    from judgelab.cli.common import NotesDisplay
    from judgelab.escalate_run import run_escalate
    from judgelab.report.terminal import print_table

    run = run_escalate(ratings or [], human or [], human_layout, hanna_scores, judges, confidence, risk, delta, tolerance,
                       split_list(criteria), holdout, seed, out, NotesDisplay())
    if run.holdout is not None:
        print_table(run.holdout, title=f"held-out check: target agreement {1 - risk:.0%} within {tolerance:g}, "
                                       f"δ = {delta:g}")
        return
    for line in run.lines():
        print(f"judgelab: {line}", file=sys.stderr)
    print_table(run.result.summary().drop(columns=["note"]), title="selective judging")
