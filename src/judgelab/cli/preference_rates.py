"""``judgelab preference win-rates``: win rates against a baseline, length-controlled, and a Bradley–Terry
leaderboard of all systems (``docs/preference.md``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

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
) -> None:
    """Per system against --baseline: AlpacaEval's win rate, standard error, counts and discrete and
    length-controlled win rates; and a leaderboard of all systems (Bradley–Terry ratings, bootstrap intervals)."""
    from judgelab.cli.common import NotesDisplay
    from judgelab.preference_rates_run import run_win_rates

    run = run_win_rates(verdicts, baseline, length_control=not no_length_control, style_control=style_control,
                        n_resamples=n_resamples, seed=seed, out=out, display=NotesDisplay() if out else None)
    _show(run.rates)


def _show(rates) -> None:
    from judgelab.report.terminal import print_table

    wr = rates.win_rate_frame()
    shown = wr[["rater", "criterion", "system", "win_rate", "standard_error", "n_total", "discrete_win_rate",
                "length_controlled_win_rate"]].round(2)
    print_table(shown, title=f"Win rates against {rates.baseline} (%)")
    lb = rates.leaderboard_frame()
    print_table(lb[["rater", "criterion", "rank", "system", "rating", "ci_low", "ci_high", "note"]].round(1),
                title="Leaderboard (Bradley–Terry, anchor 1000)")
