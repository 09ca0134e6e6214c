"""``judgelab preference agree``: agreement of judges' pairwise verdicts with the humans' preferences."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import FormatOpt
from judgelab.cli.preference import preference_app

#: The columns of the terminal table (every column is in preference_agreement.csv).
_SHOWN = ["rater", "criterion", "n", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "both_correct", "consistency",
          "accuracy_no_ties", "kappa"]


@preference_app.command("agree")
def agree(
    verdicts: list[Path] = typer.Argument(..., help="verdicts files: judges' and humans' (human:<id> raters), "
                                                    "judgelab's CSV/JSONL or another tool's judge output"),
    out: Optional[Path] = typer.Option(None, "--out", help="folder for preference_agreement.csv, README.md, "
                                                           "results.json and report.html"),
    orders: str = typer.Option("keep", "--order-rule", help="both-order rule: keep (both verdicts count) | mt-bench "
                                                        "(orders that disagree become one tie)"),
    n_resamples: int = typer.Option(999, "--n-resamples", help="bootstrap resamples of each interval (0: none)"),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap"),
    fmt: str = FormatOpt,
) -> None:
    """Accuracy (both orders), correct in both orders, positional consistency, with and without ties, and
    Cohen's kappa of each judge against the humans' majority, with the human-human baseline."""
    from judgelab.cli.common import NotesDisplay
    from judgelab.cli.output import emit
    from judgelab.preference_agree_run import run_preference_agree

    run = run_preference_agree(verdicts, rule=orders, n_resamples=n_resamples, seed=seed, out=out,
                               display=NotesDisplay())
    table = run.result.to_frame()
    emit(table[_SHOWN] if fmt == "table" else table, fmt, "preference agree",
         title="Agreement with human preferences")
    for note in run.result.notes:
        typer.echo(f"judgelab: {note}", err=True)
