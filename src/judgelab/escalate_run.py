"""``judgelab escalate`` as one library function: read the ratings, decide per item whether the judge's rating
is kept or escalated to people (or, with ``holdout``, check that decision on hidden human ratings), and —
with ``out`` — write the folder with its record. The logic is :mod:`judgelab.escalate`."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from judgelab.errors import JudgelabError
from judgelab.output.record import InputFile, input_file

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.output import Display

__all__ = ["run_escalate", "EscalateRun"]


@dataclass
class EscalateRun:
    """What :func:`run_escalate` computed: the decision (``result``, :class:`judgelab.escalate.EscalationResult`)
    or, with ``holdout``, the held-out check (``holdout``); the inputs read and the folder written."""

    result: Any = None
    holdout: pd.DataFrame | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputFile] = field(default_factory=list)
    out: Path | None = None

    def lines(self) -> list[str]:
        return self.result.lines() if self.result is not None else []


def run_escalate(ratings: Sequence[str | Path] = (), human: Sequence[str | Path] = (), human_layout: str = "auto",
                 hanna_scores: str | Path | None = None, judges: str | None = None, confidence: str = "jury",
                 risk: float = 0.1, delta: float = 0.1, tolerance: float = 1.0, criteria: Sequence[str] | None = None,
                 holdout: bool = False, seed: int = 0, out: str | Path | None = None,
                 display: Display | None = None) -> EscalateRun:
    """Selective judging with a guarantee: ``judgelab escalate`` without the printing (its options, by name).

    Returns:
        :class:`EscalateRun`; with ``out`` the folder is written (escalation tables, ``escalated_ids.txt``,
        ``audit.json``, README.md, run.json, results.json with the escalate step, report.html).

    Raises:
        JudgelabError: an unknown confidence signal, no input, an unknown criterion (one line).

    Example:
        >>> run = run_escalate(["run/ratings.csv"], ["humans.csv"], confidence="samples")  # doctest: +SKIP
        >>> run.result.summary()                                                         # doctest: +SKIP
    """
    from judgelab.audit import read_audit_inputs
    from judgelab.escalate import SIGNALS, escalate, escalation_holdout, logprob_columns

    if confidence not in SIGNALS:
        raise JudgelabError(f"unknown --confidence {confidence!r}: {', '.join(SIGNALS)}")
    if not ratings and hanna_scores is None and not human:
        raise JudgelabError("give ratings files (or --hanna-scores) and human ratings")
    df = read_audit_inputs(list(ratings), list(human), human_layout, hanna_scores, judges)
    if criteria:
        unknown = sorted(set(criteria) - set(df["criterion"].unique()))
        if unknown:
            raise JudgelabError(f"--criteria: no ratings of {', '.join(unknown)}")
        df = df[df["criterion"].isin(list(criteria))].reset_index(drop=True)
    logprobs = None
    if confidence == "logprob":
        import pandas as pd

        if not ratings:
            raise JudgelabError("--confidence logprob reads score_parsed and score_logprob from judgelab ratings files")
        logprobs = pd.concat([logprob_columns(p) for p in ratings], ignore_index=True)
    run = EscalateRun(settings={"confidence": confidence, "risk": risk, "delta": delta, "tolerance": tolerance,
                                "criteria": list(criteria or []), "holdout": holdout, "seed": seed})
    run.inputs = ([input_file("ratings", p) for p in ratings] + [input_file("human", h, {"layout": human_layout})
                                                                  for h in human]
                  + ([input_file("hanna_scores", hanna_scores)] if hanna_scores is not None else []))
    if holdout:
        run.holdout = escalation_holdout(df, confidence, risk, delta, tolerance, seed, logprobs)
    else:
        run.result = escalate(df, confidence, risk, delta, tolerance, logprobs)
    if out is not None:
        run.out = _write(Path(out), run, display)
    return run


def _write(out: Path, run: EscalateRun, display: Display | None) -> Path:
    import json

    from judgelab.audit_results import AUDIT_JSON, escalation_document
    from judgelab.output import OutputFolder

    command = "escalate --holdout" if run.holdout is not None else "escalate"
    with OutputFolder(out, "Selective judging (`judgelab escalate`)", command=command, display=display) as output:
        if run.holdout is not None:
            output.table(run.holdout, "escalation_holdout", "escalation calibrated on half of the items, checked on "
                         "the other half's hidden human ratings", show=False)
            output.record("escalate", settings=run.settings, inputs=run.inputs)
            return output.finish([], extra={"seed": run.settings["seed"], "confidence": run.settings["confidence"]})
        result = run.result
        output.table(result.to_frame(), "escalation", "per item, criterion and rater: the rating, its confidence and "
                     "the decision (keep or escalate), with the mean human rating where there is one", show=False)
        output.table(result.summary(), "escalation_guarantee", "the guarantee per rater and criterion: target, δ, "
                     "tolerance, threshold, calibration items, kept share", show=False)
        output.file("escalated_ids.txt", "the escalated items, system<TAB>item_id per line: `judgelab annotate "
                    "--sample ids:escalated_ids.txt`", table="escalated_ids").write_text(result.ids_text(),
                                                                                       encoding="utf-8")
        output.file(AUDIT_JSON, "the guarantee as one JSON document (schema 1), read by report.html",
                    table="audit").write_text(json.dumps(escalation_document(result), ensure_ascii=False, indent=1),
                                              encoding="utf-8")
        output.record("escalate", settings=run.settings, inputs=run.inputs, results={"lines": result.lines()})
        return output.finish(result.lines(), extra=result.to_dict())
