"""What an ``agree`` step records in results.json besides its tables (which it writes as CSV files):
why a table is empty, the scores' standardisation, the humans' and the judges' mean scores and, per
judge and criterion, the matched per-item means (judge, humans) the first screen of the report draws.

Pages read it with :meth:`AgreeRecord.from_record`; this module imports nothing of the analysis.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judgelab.summary_results import ScoreSummary

__all__ = ["MatchedMeans", "AgreeRecord"]


@dataclass(frozen=True)
class MatchedMeans:
    """One judge and criterion: per (system, item) the judge's mean over its successful samples and the
    humans' mean (the pairs its correlation with the humans is computed on, raw scores)."""

    rater: str
    criterion: str
    systems: tuple[str, ...]
    items: tuple[str, ...]
    judge: tuple[float, ...]
    human: tuple[float, ...]
    #: the judge's and the humans' mean over the matched pairs (None: no pair, or a record written before)
    judge_mean: float | None = None
    human_mean: float | None = None
    #: what one pair is (``summary``) and what the bootstrap resamples (``article``), from the judge's template's
    #: ``fields`` ("" where not known: the page says "texts" and "items")
    text_unit: str = ""
    cluster_unit: str = ""
    #: the judge's scale (low, high) from its template (None: not known)
    judge_scale: tuple[float, float] | None = None
    #: False when a human mean lies outside the judge's scale (e.g. judge 1–3, humans 1–5): the two are
    #: then never drawn on one axis or compared as means
    same_scale: bool = True


@dataclass(frozen=True)
class AgreeRecord:
    """The record of an ``agree`` step (see the module docstring)."""

    skipped: dict[str, str] = field(default_factory=dict)
    standardize: str = "none"
    human_summary: ScoreSummary = field(default_factory=lambda: ScoreSummary(()))
    matched: tuple[MatchedMeans, ...] = ()
    #: the judges' summary of the ratings agree read (the Results of a folder no rating step wrote)
    judge_summary: ScoreSummary = field(default_factory=lambda: ScoreSummary(()))

    def to_record(self) -> dict[str, Any]:
        import math

        def num(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        return {"skipped": dict(self.skipped), "standardize": self.standardize,
                "human_summary": self.human_summary.to_record(), "judge_summary": self.judge_summary.to_record(),
                "matched": [{"rater": m.rater, "criterion": m.criterion, "system": list(m.systems), "item_id": list(m.items),
                             "judge": [num(v) for v in m.judge], "human": [num(v) for v in m.human],
                             "judge_mean": m.judge_mean, "human_mean": m.human_mean, "text_unit": m.text_unit,
                             "cluster_unit": m.cluster_unit,
                             "judge_scale": list(m.judge_scale) if m.judge_scale is not None else None,
                             "same_scale": m.same_scale} for m in self.matched]}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "AgreeRecord":
        """The record of results.json (a step rebuilt from an older folder has no summary or means)."""
        nan = float("nan")

        def nums(values: Any) -> tuple[float, ...]:
            return tuple(nan if v is None else float(v) for v in values or [])

        matched = tuple(MatchedMeans(str(m["rater"]), str(m["criterion"]), tuple(map(str, m.get("system") or [])),
                                     tuple(map(str, m.get("item_id") or [])), nums(m.get("judge")), nums(m.get("human")),
                                     _mean(m.get("judge_mean")), _mean(m.get("human_mean")),
                                     str(m.get("text_unit") or ""), str(m.get("cluster_unit") or ""),
                                     _scale(m.get("judge_scale")), bool(m.get("same_scale", True)))
                        for m in doc.get("matched") or [])
        def summary(key: str) -> ScoreSummary:
            return ScoreSummary.from_record(doc[key]) if doc.get(key) else ScoreSummary(())

        return cls({str(k): str(v) for k, v in (doc.get("skipped") or {}).items()}, str(doc.get("standardize") or "none"),
                   summary("human_summary"), matched, summary("judge_summary"))


def _mean(value: Any) -> float | None:
    return None if value is None else float(value)


def _scale(value: Any) -> tuple[float, float] | None:
    return (float(value[0]), float(value[1])) if isinstance(value, (list, tuple)) and len(value) == 2 else None
