"""The typed result of comparing two runs item by item (:func:`judgelab.compare.compare_runs`).

A :class:`CompareResult` holds one row per label — ``(item_id, system, criterion, sample)`` — that either run
rated, with both scores and statuses, and a :class:`CriterionSummary` per criterion. It is what
``compare.csv`` (the rows) and the ``compare`` step of ``results.json`` (:meth:`CompareResult.to_record`: the
runs, the counts and the summaries) hold; the compare page renders those and computes nothing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CompareResult", "CriterionSummary", "ROW_COLUMNS", "KEY_COLUMNS", "WHERE"]

#: What matches a row of one run with a row of the other: its label, never its position.
KEY_COLUMNS = ["item_id", "system", "criterion", "sample"]
#: The columns of ``compare.csv``, in this order (``diff`` = score_b − score_a).
ROW_COLUMNS = [*KEY_COLUMNS, "where", "score_a", "score_b", "diff", "status_a", "status_b", "text", "answer_a",
               "answer_b"]
#: The values of ``where``, in the order the rows are listed: differences first, then the rows one run failed or
#: lacks, then the rows both runs scored alike.
WHERE = {
    "differ": "both scored, the scores differ",
    "failed": "failed in one run or both (no score to compare)",
    "only_a": "in run A only",
    "only_b": "in run B only",
    "same": "both scored, the same score",
}


@dataclass(frozen=True)
class CriterionSummary:
    """One criterion: ``n_both`` labels both runs scored, of which ``n_differ`` differ, the mean of B − A over
    them, exact agreement (share equal), Spearman's ρ and Kendall's τ-b over them (``None`` with ``note`` when
    there are fewer than 3 or a run's scores do not vary), and the labels one run lacks or failed."""

    criterion: str
    n_both: int
    n_differ: int
    mean_diff: float | None
    exact: float | None
    spearman: float | None
    kendall: float | None
    only_a: int
    only_b: int
    failed_a: int
    failed_b: int
    note: str = ""

    def line(self) -> str:
        """The summary in one line (the terminal and the page say the same)."""
        def num(x: float | None, fmt: str) -> str:
            return "n/a" if x is None else format(x, fmt)

        parts = [f"{self.criterion}: {self.n_both} in both, {self.n_differ} differ",
                 f"mean B − A {num(self.mean_diff, '+.3f')}", f"exact agreement {num(self.exact, '.0%')}",
                 f"Spearman ρ {num(self.spearman, '.3f')}, Kendall τ {num(self.kendall, '.3f')} (n = {self.n_both})"]
        extra = [f"{k.replace('_', ' ')} {v}" for k, v in (("only in A", self.only_a), ("only in B", self.only_b),
                                                              ("failed in A", self.failed_a), ("failed in B", self.failed_b))
                 if v]
        return " · ".join(parts + extra) + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class CompareResult:
    """Two runs compared by label: ``rows`` (the :data:`ROW_COLUMNS` table, differences first) and ``summaries``."""

    run_a: str
    run_b: str
    rater_a: str
    rater_b: str
    rows: pd.DataFrame
    summaries: tuple[CriterionSummary, ...] = field(default_factory=tuple)

    def counts(self) -> dict[str, int]:
        """How many rows each ``where`` value has (every key of :data:`WHERE`, zeros included)."""
        found = self.rows["where"].value_counts().to_dict() if len(self.rows) else {}
        return {k: int(found.get(k, 0)) for k in WHERE}

    def to_frame(self) -> pd.DataFrame:
        return self.rows

    def to_record(self) -> dict[str, Any]:
        """What results.json keeps (the rows are compare.csv)."""
        return {"compare": {"run_a": self.run_a, "run_b": self.run_b, "rater_a": self.rater_a, "rater_b": self.rater_b,
                            "counts": self.counts(), "summaries": [asdict(s) for s in self.summaries]}}

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_record()["compare"], "rows": self.rows.to_dict(orient="records")}

    @staticmethod
    def summaries_from_record(doc: dict[str, Any]) -> list[CriterionSummary]:
        """The summaries a record holds (``to_record()["compare"]``)."""
        return [CriterionSummary(**s) for s in doc.get("summaries") or []]
