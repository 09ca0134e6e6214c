"""The typed result of a score summary (:func:`judgelab.summary.score_summary`) as results.json records it.

One :class:`ScoreRow` per rater, system and criterion: n, the mean of item means, its interval and
the interval's method, SD, Table 1's alpha and exact agreement, and the judgments per status. The
rate step's record holds the judges' rows; the agree step's record holds the humans' rows (each
system and criterion: the mean over items of the mean of the human raters). Pages render these rows
as recorded; this module imports nothing of the analysis that computes them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ScoreRow", "ScoreSummary", "INTERVAL_METHOD"]

#: The interval every summary row carries (``stats.describe.mean_interval``'s default).
INTERVAL_METHOD = "95% t-interval over item means (items are the independent units)"


@dataclass(frozen=True)
class ScoreRow:
    """One rater × system × criterion of a summary (``None`` where a value is undefined, with ``why`` for the interval).

    Attributes:
        rater: the rater's label (for humans: ``summary.humans_label``, e.g. ``humans (mean of N raters)``).
        items: the items rated (successful or not); ``n``: those with a successful rating (the interval's n).
        samples: samples per item (``None`` for humans).
        mean: the mean of item means; ``ci_low``/``ci_high`` its interval, ``interval_note`` why there is none.
        statuses: judgments per status (``ok``, ``refusal`` …; empty for humans).
    """

    rater: str
    system: str
    criterion: str
    items: int
    n: int
    samples: int | None
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    interval_note: str = ""
    sd: float | None = None
    alpha: float | None = None
    exact_agreement: float | None = None
    failed: int | None = None
    failure_rate: float | None = None
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoreSummary:
    """A summary's rows with the interval's method and the level of Table 1's alpha."""

    rows: tuple[ScoreRow, ...]
    interval: str = INTERVAL_METHOD
    alpha_level: str = "interval"

    def to_record(self) -> dict[str, Any]:
        import math

        def num(v: Any) -> Any:
            return None if isinstance(v, float) and not math.isfinite(v) else v

        return {"interval": self.interval, "alpha_level": self.alpha_level,
                "rows": [{k: num(v) for k, v in asdict(r).items()} for r in self.rows]}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "ScoreSummary":
        """The summary recorded in results.json (``KeyError``/``TypeError`` on a damaged record)."""
        names = set(ScoreRow.__dataclass_fields__)
        rows = tuple(ScoreRow(**{k: v for k, v in r.items() if k in names}) for r in doc.get("rows") or [])
        return cls(rows, str(doc.get("interval") or INTERVAL_METHOD), str(doc.get("alpha_level") or "interval"))
