"""The preference section's headline in words: per judge and criterion, its agreement with the humans' preference
against the humans' own agreement, as ``judgelab preference agree`` recorded both (docs/report-and-annotate.md).

The rule (:func:`preference_verdict`), on the recorded accuracy (the share of pairs whose winner is the humans'
label, averaged over the two orders) and its 95% cluster-bootstrap interval over instructions:

* no pair compared → "no verdict";
* no interval (fewer than :data:`MIN_ITEMS` instructions, or the bootstrap gave none) → "inconclusive: too few
  pairs for an interval";
* no human baseline (one human rater per pair, or its accuracy has no interval) → the judge's figure and "no human
  baseline to compare with";
* the judge's interval lies entirely above the baseline's → "better than a human rater";
* entirely below → "below a human rater: not yet a substitute for the humans";
* the intervals overlap → "not told apart from a human rater with these pairs" — not a claim that the two are
  equal: overlapping intervals say only that this many pairs cannot tell them apart.

The baseline is the pooled human row of the same criterion (every person against the majority of the others, as
``preference agree`` records it); without one, the rows of the individual humans: one row's accuracy and interval,
or with several the mean of their accuracies and the span of their intervals (the lowest lower end to the highest
upper end), so that a judge is only called better or worse than every person.
This module computes no statistic; it reads the record's typed results.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab.preference.agreement_results import BASELINE, AgreementRow, PreferenceAgreement

__all__ = ["MIN_ITEMS", "Baseline", "PreferenceLine", "preference_verdict", "preference_lines", "human_baseline"]

#: The sentence's end when the judge's and the humans' intervals overlap.
OVERLAP = "not told apart from a human rater with these pairs (the intervals overlap; more pairs would tell)"
#: Below this many instructions (the bootstrap's clusters) no interval is trusted: the verdict is inconclusive.
MIN_ITEMS = 5


@dataclass(frozen=True)
class Baseline:
    """The humans' agreement with each other: a value with its interval and how many human rows it summarises."""

    value: float
    low: float
    high: float
    raters: int


@dataclass(frozen=True)
class PreferenceLine:
    """One judge and criterion: the sentence and the judgement it ends with (``overlap``, ``better``,
    ``worse``, ``no-baseline``, ``inconclusive``, ``none``)."""

    judge: str
    criterion: str
    words: str
    decision: str


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _finite(*xs: float | None) -> bool:
    return all(x is not None and math.isfinite(x) for x in xs)


def human_baseline(rows: list[AgreementRow]) -> Baseline | None:
    """The baseline of the human rows of one criterion: the pooled row (:data:`BASELINE`) where recorded, else the
    rows of the individual humans (``None`` when none has an accuracy with an interval)."""
    pooled = _baseline_of([r for r in rows if r.rater == BASELINE])
    return pooled or _baseline_of([r for r in rows if r.rater != BASELINE])


def _baseline_of(rows: list[AgreementRow]) -> Baseline | None:
    usable = [r.measures["accuracy"] for r in rows if r.kind == "human" and "accuracy" in r.measures
              and _finite(r.measures["accuracy"].value, r.measures["accuracy"].ci_low, r.measures["accuracy"].ci_high)]
    if not usable:
        return None
    return Baseline(sum(e.value for e in usable) / len(usable), min(e.ci_low for e in usable),
                    max(e.ci_high for e in usable), len(usable))


def preference_verdict(judge: str, criterion: str, value: float | None, low: float | None, high: float | None,
                       n: int, items: int, baseline: Baseline | None) -> PreferenceLine:
    """The headline sentence of one judge and criterion (the rule of the module docstring).

    Example:
        >>> preference_verdict("j", "overall", 0.71, 0.63, 0.78, 120, 60, Baseline(0.74, 0.66, 0.81, 1)).words
        "j agrees with the humans' preference on 71% of pairs [63%, 78%] (n = 120 pairs, 60 instructions); the humans agree with each other on 74% [66%, 81%]: not told apart from a human rater with these pairs (the intervals overlap; more pairs would tell)."
    """
    counted = f"n = {n:,} pairs, {items:,} instructions"
    if value is None or not math.isfinite(value) or n == 0:
        return PreferenceLine(judge, criterion, f"{judge}: no verdict — no pair was compared with the humans' label.",
                              "none")
    said = f"{judge} agrees with the humans' preference on {_pct(value)} of pairs"
    if not _finite(low, high) or items < MIN_ITEMS:
        return PreferenceLine(judge, criterion, f"{said} ({counted}): inconclusive — too few pairs for an interval.",
                              "inconclusive")
    assert low is not None and high is not None
    said += f" [{_pct(low)}, {_pct(high)}] ({counted})"
    if baseline is None:
        return PreferenceLine(judge, criterion, f"{said}; no human baseline to compare with (it needs two human "
                                                "raters on the same pairs).", "no-baseline")
    said += f"; the humans agree with each other on {_pct(baseline.value)}" + (
        f" [{_pct(baseline.low)}, {_pct(baseline.high)}]" if baseline.raters == 1 else
        f" on average ({baseline.raters} raters, intervals from {_pct(baseline.low)} to {_pct(baseline.high)})")
    if low > baseline.high:
        return PreferenceLine(judge, criterion, f"{said}: better than a human rater.", "better")
    if high < baseline.low:
        return PreferenceLine(judge, criterion, f"{said}: below a human rater — not yet a substitute for the humans.",
                              "worse")
    return PreferenceLine(judge, criterion, f"{said}: {OVERLAP}.", "overlap")


def preference_lines(result: PreferenceAgreement) -> list[PreferenceLine]:
    """The headline of every judge and criterion of a ``preference agree`` record, criteria then judges in order."""
    out = []
    for row in sorted((r for r in result.rows if r.kind != "human"), key=lambda r: (r.criterion, r.rater)):
        humans = [r for r in result.rows if r.kind == "human" and r.criterion == row.criterion]
        acc = row.measures.get("accuracy")
        out.append(preference_verdict(row.rater, row.criterion, acc.value if acc else None,
                                      acc.ci_low if acc else None, acc.ci_high if acc else None, row.n, row.items,
                                      human_baseline(humans)))
    return out
