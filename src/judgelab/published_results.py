"""What a recipe records of its judge-vs-humans correlations beside the published figures it reproduces
(results.json's ``published``): per judge, criterion, level and method our r with its 95% interval, n and the
number of clusters resampled (each named by what it counts), and the published r with its source.

The report's first screen renders it (:func:`judgelab.report.headline.published_headline`) as it renders an
``agree`` step's correlations; this module imports nothing of the analysis.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from judgelab.missing import finite_or_none

__all__ = ["PublishedRow", "PublishedComparison"]


_num = finite_or_none  # one reader of a recorded number (judgelab.missing)


def _int(value: Any) -> int | None:
    f = _num(value)
    return None if f is None else int(f)


@dataclass(frozen=True)
class PublishedRow:
    """One correlation of a judge with the humans (None: undefined; ``note`` says why) and the published one."""

    rater: str
    criterion: str
    method: str  # spearman | kendall | pearson
    level: str  # the recipe's level name: summary, system, turn
    r: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None  # what n counts: text_unit
    n_clusters: int | None  # what the bootstrap resampled: cluster_unit
    text_unit: str  # singular: "document", "response"
    cluster_unit: str  # singular: "document", "dialogue context"
    published_r: float | None
    note: str = ""


@dataclass(frozen=True)
class PublishedComparison:
    """A recipe's correlations beside the published ones: who published them (``published_by``, e.g.
    "G-EVAL-4"), where (``source``), and what the humans' scores are (``humans``, e.g. "means of three raters")."""

    published_by: str
    source: str
    humans: str
    rows: tuple[PublishedRow, ...]

    def to_record(self) -> dict[str, Any]:
        return {"schema": 1, "published_by": self.published_by, "source": self.source, "humans": self.humans,
                "rows": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                          for k, v in asdict(r).items()} for r in self.rows]}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "PublishedComparison":
        """The comparison recorded in results.json (``KeyError``/``TypeError`` on a damaged record)."""
        rows = tuple(PublishedRow(
            rater=str(r["rater"]), criterion=str(r["criterion"]), method=str(r["method"]), level=str(r["level"]),
            r=_num(r.get("r")), ci_low=_num(r.get("ci_low")), ci_high=_num(r.get("ci_high")), n=_int(r.get("n")),
            n_clusters=_int(r.get("n_clusters")), text_unit=str(r.get("text_unit") or "item"),
            cluster_unit=str(r.get("cluster_unit") or "item"), published_r=_num(r.get("published_r")),
            note=str(r.get("note") or "")) for r in doc["rows"])
        return cls(str(doc.get("published_by") or ""), str(doc.get("source") or ""), str(doc.get("humans") or ""),
                   rows)
