"""``judgelab preference win-rates`` as one library function: read verdicts files, compute the win rates against
a baseline and the leaderboard of all systems, and — with ``out`` — write them into a folder with its record
(``docs/preference.md``).

:func:`run_win_rates` returns :class:`judgelab.preference.win_rates_results.PreferenceRates` (what results.json
records and the pages render) with the inputs read; the command line only parses options and calls it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from judgelab.output.record import InputFile, input_file
from judgelab.preference.win_rates_results import PreferenceRates

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.output import Display

__all__ = ["run_win_rates", "RatesRun", "TABLE_DESCRIPTIONS"]

TABLE_DESCRIPTIONS = {
    "win_rates": "per rater, criterion and system against the baseline: AlpacaEval's win_rate (100 × mean preference, "
                 "a tie 0.5), standard_error (100 × SEM, ddof 1), n_wins, n_wins_base, n_draws, n_total, "
                 "discrete_win_rate, and the length-controlled win rate (AlpacaEval's GLM without its "
                 "instruction-difficulty term)",
    "leaderboard": "per rater and criterion: each system's Bradley–Terry rating (anchor = the baseline at 1000; 400 "
                   "points = odds of 10 to 1) with its 95% item-bootstrap interval, and its modelled win rate against "
                   "the anchor",
}


@dataclass
class RatesRun:
    """What :func:`run_win_rates` computed and read."""

    rates: PreferenceRates
    inputs: list[InputFile] = field(default_factory=list)
    out: Path | None = None


def run_win_rates(verdicts: Sequence[str | Path] | "pd.DataFrame", baseline: str, length_control: bool = True,
                  style_control: bool = False, n_resamples: int = 100, seed: int = 0,
                  out: str | Path | None = None, display: Display | None = None, rule: str = "keep") -> RatesRun:
    """Win rates and the leaderboard of verdicts files (any format :func:`judgelab.preference.formats.read_verdicts`
    recognises) or a verdicts table. ``rule``: the both-order rule (:mod:`judgelab.preference.orders`: ``keep`` both
    verdicts of a pair asked in both orders, or ``mt-bench``: orders that disagree are one tie).

    Raises:
        JudgelabError: an unreadable file, an unknown baseline (naming the systems), no verdicts against it, or a
            negative ``n_resamples`` (one line each).
    """
    import pandas as pd

    from judgelab.errors import JudgelabError
    from judgelab.preference.formats import read_verdict_files
    from judgelab.preference.leaderboard import leaderboard
    from judgelab.preference.length_control import MODEL
    from judgelab.preference.orders import apply_order_rule
    from judgelab.preference.win_rates import win_rates

    if n_resamples < 0:
        raise JudgelabError(f"--n-resamples is {n_resamples}; give 0 (no intervals) or more")
    if isinstance(verdicts, pd.DataFrame):
        table, inputs = verdicts, []
    else:
        table, inputs = read_verdict_files(list(verdicts)), [input_file("verdicts", p) for p in verdicts]
    table, _ = apply_order_rule(table, rule)
    rows = win_rates(table, baseline, length_control=length_control)
    standings, coefs = leaderboard(table, baseline, style_control=style_control, n_resamples=n_resamples, seed=seed)
    methods = {"win_rate": "AlpacaEval's: every verdict against the baseline, in either order, turned to the system's "
                           "side; a verdict without a choice left out",
               "order_rule": "keep: both verdicts of a pair asked in both orders count" if rule == "keep" else
                             "mt-bench: a pair whose two orders name different winners is one tie, one whose orders "
                             "agree one verdict (MT-Bench's rule)",
               "length_control": MODEL if length_control else "not asked",
               "leaderboard": f"Bradley–Terry maximum likelihood, ties half a win each; 95% percentile bootstrap over "
                              f"items, {n_resamples} resamples, seed {seed}",
               "style_control": "Arena-Hard's covariates (length, headers, lists, bold; standardised); the ratings "
                                "depend on which systems are in the pool" if style_control else "not asked"}
    run = RatesRun(PreferenceRates(baseline, rows, standings, coefs, methods), inputs)
    if out is not None:
        _write(run, Path(out), display, {"baseline": baseline, "length_control": length_control,
                                         "style_control": style_control, "n_resamples": n_resamples, "seed": seed,
                                         "order_rule": rule})
    return run


def _write(run: RatesRun, out: Path, display: Display | None, settings: dict[str, object]) -> None:
    from judgelab.output import OutputFolder

    rates = run.rates
    with OutputFolder(out, "Win rates and leaderboard (`judgelab preference win-rates`)",
                      command="preference win-rates", display=display) as output:
        output.table(rates.win_rate_frame(), "win_rates", TABLE_DESCRIPTIONS["win_rates"], show=False)
        output.table(rates.leaderboard_frame(), "leaderboard", TABLE_DESCRIPTIONS["leaderboard"], show=False)
        output.record("preference win-rates", settings=settings, inputs=run.inputs,
                      results={"preference_rates": rates.to_record()})
        notes = [f"{k}: {v}." for k, v in rates.methods.items()]
        if rates.style_coefficients:
            notes.append("Style coefficients (per SD of each covariate): " + "; ".join(
                f"{k}: " + ", ".join(f"{n} {c:+.3f}" for n, c in v.items()) for k, v in rates.style_coefficients.items()))
        run.out = output.finish(notes, runs=[], extra={"settings": settings, "inputs": [i.path for i in run.inputs]})
