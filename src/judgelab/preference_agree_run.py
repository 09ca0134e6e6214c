"""``judgelab preference agree``'s whole run: read the verdicts files, compute the agreement with the humans'
label (:func:`judgelab.preference.agreement.preference_agreement`), write the folder.

The folder holds ``preference_agreement.csv`` (one row per rater and criterion), ``preference_orders.csv`` (how
each rater's verdicts fell into pairs asked in both orders), README.md, run.json and results.json (the step's
record, :class:`judgelab.preference.agreement_results.PreferenceAgreement`, which pages render).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from judgelab.errors import JudgelabError
from judgelab.preference.agreement_results import PreferenceAgreement

if TYPE_CHECKING:
    from judgelab.output.folder import Display
    from judgelab.output.record import InputFile

__all__ = ["PreferenceAgreeRun", "run_preference_agree", "write_preference_agree", "COMMAND"]

COMMAND = "preference agree"
TABLE = "preference_agreement"
ORDERS_TABLE = "preference_orders"


@dataclass
class PreferenceAgreeRun:
    """A run's result, its inputs, and the folder written (None until written)."""

    result: PreferenceAgreement
    inputs: "list[InputFile]"
    out: Path | None = None


def run_preference_agree(paths: Sequence[str | Path], rule: str = "keep", n_resamples: int = 999, seed: int = 0,
                         confidence_level: float = 0.95, out: str | Path | None = None,
                         display: "Display | None" = None) -> PreferenceAgreeRun:
    """Read ``paths`` (verdicts files of any format :mod:`judgelab.preference.formats` reads), compute the agreement,
    and write the folder ``out`` when given.

    Raises:
        JudgelabError: no file, a file that cannot be read (naming it), or what
            :func:`~judgelab.preference.agreement.preference_agreement` refuses.
    """
    from judgelab.output.record import input_file
    from judgelab.preference.agreement import preference_agreement
    from judgelab.preference.formats import read_verdict_files

    if not paths:
        raise JudgelabError("no verdicts file given: name one or more files of judges' and humans' verdicts")
    if n_resamples < 0:
        raise JudgelabError("--n-resamples is 0 (no intervals) or more")
    for p in paths:
        if not Path(p).is_file():
            raise JudgelabError(f"{p}: no such file; name a verdicts file (CSV, JSONL or another tool's judge output)")
    verdicts = read_verdict_files(list(paths))
    result = preference_agreement(verdicts, rule=rule, n_resamples=n_resamples, confidence_level=confidence_level,
                                  seed=seed)
    run = PreferenceAgreeRun(result, [input_file("verdicts", p) for p in paths])
    if out is not None:
        write_preference_agree(run, out, display)
    return run


def write_preference_agree(run: PreferenceAgreeRun, out: str | Path, display: "Display | None" = None) -> Path:
    """Write ``run`` into the folder ``out`` through the one writer of output folders; returns the folder."""
    import pandas as pd

    from judgelab.output import OutputFolder

    result = run.result
    s = result.settings
    with OutputFolder(Path(out), "Agreement with human preferences (`judgelab preference agree`)", command=COMMAND,
                      step=True, display=display) as output:
        output.table(result.to_frame(), TABLE, "per rater and criterion: accuracy (both orders), both_correct, "
                     "consistency, the same without ties, Cohen's kappa, each with its interval", show=False)
        output.table(pd.DataFrame(list(result.orders), columns=["rater", "criterion", "both_orders", "one_order",
                                                                "disagree"]),
                     ORDERS_TABLE, "per rater and criterion: pairs asked in both orders, verdicts in one order only, "
                     "pairs whose orders disagree", show=False)
        notes = [f"Both-order rule: {result.rule}.",
                 "The humans' label of a pair is the majority of the human raters' verdicts (a tie is a vote; equal top "
                 "votes make a tie); each human is compared with the majority of the others.",
                 f"Intervals: {s['confidence_level']:.0%} percentile cluster bootstrap over items, {s['n_resamples']} "
                 f"resamples, seed {s['seed']}; a missing interval has its reason in the note column.",
                 *result.notes]
        output.record(COMMAND, settings=dict(s), inputs=run.inputs, results=result.to_record())
        run.out = output.finish(notes)
    return run.out
