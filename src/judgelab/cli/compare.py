"""``judgelab compare``: two runs side by side, item by item."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import app, PEOPLE


@app.command(rich_help_panel=PEOPLE)
def compare(
    run_a: Path = typer.Argument(..., metavar="RUN_A", help="the output folder of the first run (A)"),
    run_b: Path = typer.Argument(..., metavar="RUN_B", help="the output folder of the second run (B)"),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="the folder to write compare.csv, results.json and "
                                                                "the compare page (report.html) into"),
    rater_a: Optional[str] = typer.Option(None, "--rater-a", metavar="LABEL", help="the judge of RUN_A, when it has several"),
    rater_b: Optional[str] = typer.Option(None, "--rater-b", metavar="LABEL", help="the judge of RUN_B, when it has several"),
) -> None:
    """Compare two runs item by item (two judges, two prompts, before and after a change).

    Rows are matched by label (item, system, criterion, sample), never by position; differences come first,
    the largest first, and labels one run lacks or failed are counted. Per criterion: labels in both, how many
    differ, the mean difference, exact agreement, Spearman and Kendall with n. The page (report.html) has a
    search over texts and answers, a link to each item and a download of the rows shown."""
    from judgelab.cli.common import TerminalDisplay
    from judgelab.compare_run import run_compare

    result = run_compare(run_a, run_b, out, rater_a, rater_b, display=TerminalDisplay())
    counts = result.counts()
    typer.echo(f"compared {len(result.rows)} labels: {counts['differ']} differ, {counts['failed']} failed, "
               f"{counts['only_a']} only in A, {counts['only_b']} only in B, {counts['same']} the same")
    for summary in result.summaries:
        typer.echo(summary.line())
