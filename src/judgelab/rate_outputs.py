"""How a rater's judgments ended, and the end of ``judgelab rate``: its tables read from the store in bounded memory.

The ratings file is streamed from the store a chunk at a time (:meth:`judgelab.store.Store.rating_chunks`
into :func:`judgelab.output.tables.write_table_chunks`); the summary, its intervals, the failure counts,
Welch's test and the failure-rate check read the compact table (:meth:`judgelab.store.Store.compact_ratings`:
the tidy columns, repeated texts as categories); the failed answers shown are read with a ``LIMIT``. So the
end of a run of a million judgments holds tens of megabytes, not the whole table with every answer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from judgelab.errors import TooManyFailures
from judgelab.raters import human_mask
from judgelab.status import DEFAULT_MAX_FAILURE_RATE, Status
from judgelab.store.judgments import CHUNK_ROWS
from judgelab.table import RATING_COLUMNS, with_identity

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.store import Store

__all__ = ["FailureReport", "failure_report", "check_failure_rate", "failure_lines", "report_lines", "RateRows"]


@dataclass(frozen=True)
class FailureReport:
    """How a rater's judgments ended: counts by status and a few failed answers to show.

    Attributes:
        counts: status → judgments (sorted by status).
        examples: up to ``examples`` ``(status, raw answer)`` pairs of failed judgments.
    """

    counts: dict[str, int]
    examples: tuple[tuple[str, str], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        """Judgments whose status is not ``ok``."""
        return self.total - self.counts.get(Status.OK.value, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"statuses": dict(self.counts), "examples": [list(e) for e in self.examples]}


def _status_counts(statuses: "pd.Series") -> dict[str, int]:
    """status → rows, sorted by status (a categorical column's unused categories left out)."""
    return {str(k): int(v) for k, v in statuses.value_counts().sort_index().items() if v}


def _examples(failed: "pd.DataFrame") -> tuple[tuple[str, str], ...]:
    return tuple((str(r.status), "" if r.raw is None or (isinstance(r.raw, float) and math.isnan(r.raw)) else str(r.raw))
                 for r in failed.itertuples())


def failure_report(ratings: "pd.DataFrame", examples: int = 3) -> FailureReport:
    """Counts of judgments by status and up to ``examples`` (status, raw answer) pairs of failures."""
    return FailureReport(_status_counts(ratings["status"]), _examples(ratings[ratings["status"] != Status.OK].head(examples)))


def check_failure_rate(ratings: "pd.DataFrame", max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
                       what: str | None = None) -> None:
    """Raise :class:`TooManyFailures` when, for any judge rater in ``ratings`` (human raters are not
    judged), the share of failed judgments exceeds ``max_failure_rate``."""
    if not len(ratings):
        return
    judged = ratings[~human_mask(ratings["rater"])]
    for rater, group in judged.groupby("rater", sort=True, observed=True):
        failed = int((group["status"] != Status.OK).sum())
        share = failed / len(group)
        if share > max_failure_rate:
            raise TooManyFailures(f"{failed} of {len(group)} judgments of {what or rater} failed ({share:.0%} > "
                                  f"--max-failure-rate {max_failure_rate:.0%}); see the failure counts above")


def failure_lines(ratings: "pd.DataFrame") -> list[str]:
    """The status counts of a rater's judgments and up to three failed answers (an answer cut at 200
    characters; a failed call's reason, bounded where it is made, whole), as lines to show."""
    return report_lines(failure_report(ratings))


def report_lines(report: FailureReport) -> list[str]:
    """:func:`failure_lines` of a :class:`FailureReport` already made."""
    line = ", ".join(f"{k} {v}" for k, v in report.counts.items())
    lines = [f"statuses of {report.total} judgments: {line}" + (f" — {report.failed} failed" if report.failed else "")]
    for status, raw in report.examples:
        text = " ".join(raw.split())
        limit = len(text) if status == Status.ERROR else 200  # a failed call's reason is shown whole (bounded)
        lines.append(f"  example {status}: {text[:limit]!r}" + (" …" if len(text) > limit else ""))
    return lines


@dataclass(frozen=True)
class RateRows:
    """The rows of a store that a rate folder's outputs hold, in the store's order.

    Attributes:
        raters: only these raters (None: every rater of the store, ``all_runs``).
        items: makes the ``(system, item_id)`` of the items rated (None: every item); called once per store opened.
        chunk_rows: rows read at a time.
    """

    raters: tuple[str, ...] | None
    items: Callable[[], Iterable[tuple[str, str]]] | None = None
    chunk_rows: int = CHUNK_ROWS

    def open(self, store: "Store") -> "RateRows":
        """Tell ``store`` the items (once per connection). Returns these rows, without the items when every
        row of the raters is of one of them (the reads then match no item: 10^6 rows, about 1 s less)."""
        if self.items is None:
            return self
        store.ask_items(self.items())
        return self if store.unasked(self.raters) else RateRows(self.raters, None, self.chunk_rows)

    def compact(self, store: "Store") -> "pd.DataFrame":
        """:meth:`judgelab.store.Store.compact_ratings` of these rows (after :meth:`open`)."""
        return store.compact_ratings(self.raters, self.items is not None, self.chunk_rows)

    def write(self, store: "Store", path: Path) -> None:
        """The ratings file (every column of :data:`judgelab.table.RATING_COLUMNS` and the identity), a chunk at a time."""
        from judgelab.output.tables import write_table_chunks

        write_table_chunks(lambda: (with_identity(c) for c in store.rating_chunks(
            RATING_COLUMNS, self.raters, self.items is not None, self.chunk_rows)), path)

    def full(self, store: "Store") -> "pd.DataFrame":
        """The whole table of these rows, as the ratings file holds it (every column, in memory)."""
        return with_identity(next(store.rating_chunks(RATING_COLUMNS, self.raters, self.items is not None, size=0)))

    def failures(self, store: "Store", table: "pd.DataFrame", raters: Sequence[str], examples: int = 3) -> dict[str, FailureReport]:
        """:func:`failure_report` of each rater: the counts from ``table`` (:meth:`compact`), the failed answers
        shown read from the store (the first ``examples`` in the table's order)."""
        out = {}
        for rater in raters:
            failed = next(store.rating_chunks(["status", "raw"], [rater], self.items is not None, size=0,
                                              failed_only=True, limit=examples))
            out[rater] = FailureReport(_status_counts(table.loc[table["rater"] == rater, "status"]), _examples(failed))
        return out
