"""``judgelab preference win-rates``: win rates against a baseline, length-controlled, and a Bradley–Terry
leaderboard of all systems (``docs/preference.md``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import FormatOpt
from judgelab.cli.preference import preference_app


@preference_app.command("win-rates")
def win_rates(
    verdicts: list[Path] = typer.Argument(..., metavar="VERDICTS", help="verdicts files: judgelab's own, or another "
                                          "tool's judge outputs (AlpacaEval's annotations.json, …), recognised by their fields"),
    baseline: str = typer.Option(..., "--baseline", help="the system every other is compared with (AlpacaEval's "
                                 "baseline); the leaderboard's anchor at 1000"),
    out: Optional[Path] = typer.Option(None, "--out", help="folder for win_rates.csv, leaderboard.csv, README.md, "
                                       "run.json and results.json"),
    style_control: bool = typer.Option(False, "--style-control", help="the leaderboard controls for Arena-Hard's "
                                       "style covariates (length, headers, lists, bold) read from the responses"),
    no_length_control: bool = typer.Option(False, "--no-length-control", help="skip the length-controlled win rate"),
    n_resamples: int = typer.Option(100, "--n-resamples", help="bootstrap resamples of the leaderboard's intervals "
                                    "(0: no intervals)"),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap"),
    order_rule: str = typer.Option("keep", "--order-rule", help="both-order rule: keep (both verdicts count) | "
                                   "mt-bench (orders that disagree become one tie)"),
    fmt: str = FormatOpt,
) -> None:
    """Per system against --baseline: AlpacaEval's win rate, standard error, counts and discrete and
    length-controlled win rates; and a leaderboard of all systems (Bradley–Terry ratings, bootstrap intervals)."""
    from judgelab.cli.common import NotesDisplay
    from judgelab.preference_rates_run import run_win_rates

    run = run_win_rates(verdicts, baseline, length_control=not no_length_control, style_control=style_control,
                        n_resamples=n_resamples, seed=seed, out=out, display=NotesDisplay() if out else None,
                        rule=order_rule)
    _show(run.rates, fmt, out)


def _show(rates, fmt: str, out: Optional[Path]) -> None:
    """Both tables in the terminal; CSV: the win rates (the leaderboard is a file of --out); JSON: one document."""
    import json
    import sys

    from judgelab.cli.output import emit
    from judgelab.output import json_document

    wr, lb = rates.win_rate_frame(), rates.leaderboard_frame()
    if fmt == "json":
        typer.echo(json.dumps(json_document("preference win-rates", baseline=rates.baseline,
                                            tables={"win_rates": wr, "leaderboard": lb}), ensure_ascii=False))
        return
    if fmt == "csv":
        emit(wr, fmt, "preference win-rates")
        if out is None:
            print("judgelab: note: CSV on stdout is the win rates; the leaderboard is written with --out FOLDER "
                  "(or use --format json for both)", file=sys.stderr)
        return
    emit(wr[["rater", "criterion", "system", "win_rate", "standard_error", "n_total", "discrete_win_rate",
             "length_controlled_win_rate"]].round(2), fmt, "preference win-rates",
         title=f"Win rates against {rates.baseline} (%)")
    emit(lb[["rater", "criterion", "rank", "system", "rating", "ci_low", "ci_high", "note"]].round(1), fmt,
         "preference win-rates", title="Leaderboard (Bradley–Terry, anchor 1000)")
