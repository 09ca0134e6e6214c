"""The report's reads of a large store by SQL, a unit or a few rows at a time (bounded memory).

:class:`judgelab.report.folder.StoreReader` reads every judgment into one table; a report of many judgments
reads instead, through :class:`StoreRows`: the cheap keys of every unit in the store's key order (the cards'
ranking, :mod:`judgelab.report.html_items_stream`), one unit's judgments, the text a rater judged, and the few
rows that "What ran" and "Failures" show (the first judgment of each rater and criterion, the first failures of
each rater and status) with the human raters' rows. Rows are read as :meth:`StoreReader.judgments` reads them:
an ``ok`` row without a score is ``missing`` (:func:`judgelab.table.normalise`).
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Iterator

import pandas as pd

from judgelab.call_costs import attempt_keys
from judgelab.raters import is_human
from judgelab.status import Status
from judgelab.store.items import ItemText
from judgelab.table import JUDGMENT_COLUMNS, normalise

__all__ = ["StoreRows", "UNIT_ROW"]

#: The columns of a unit's judgments as the cards read them (then ``keys``: html_items.ROW_FIELDS).
UNIT_ROW = ("sample", "status", "score", "score_parsed", "score_logprob", "logprob_outside", "raw", "attempts")
_UNIT = "rater = ? AND criterion = ? AND system = ? AND item_id = ?"
#: Failures shown per rater and status ("Failures": B.failures shows 3).
FAILURE_EXAMPLES = 3


def _status(status: Any, score: Any) -> str:
    return Status.MISSING.value if score is None and str(status) == Status.OK else str(status)


class StoreRows:
    """SQL reads of one open store connection (read-only): see the module docstring."""

    def __init__(self, db: sqlite3.Connection, raters: list[str] | None = None) -> None:
        """``raters``: read only these raters' judgments (default: every rater's)."""
        self.db = db
        if raters is None:
            raters = [str(r) for (r,) in db.execute("SELECT DISTINCT rater FROM judgments ORDER BY rater")]
        else:
            raters = sorted(raters)
        self.judges = [r for r in raters if not is_human(r)]
        self.humans = [r for r in raters if is_human(r)]
        has_items = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'items'").fetchone()
        self.item_raters = [str(r) for (r,) in db.execute("SELECT DISTINCT rater FROM items ORDER BY rater")] \
            if has_items else []
        has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'judgelab_meta'").fetchone()
        left = db.execute("SELECT value FROM judgelab_meta WHERE name = 'left_out'").fetchone() if has_meta else None
        #: Judge judgments of units without human ratings that a comparison's store left out (counted, not copied:
        #: :func:`judgelab.report.ratings_store.ratings_store`); 0 for a run's store.
        self.left_out = int(left[0]) if left else 0

    def count(self) -> int:
        """The judgments of the judge raters (with those left out of a comparison's store)."""
        marks = ",".join("?" * len(self.judges))
        return self.left_out + int(self.db.execute(f"SELECT count(*) FROM judgments WHERE rater IN ({marks})",
                                                   self.judges).fetchone()[0])

    def unit_keys(self) -> Iterator[tuple[str, str, str, str, Any, str, Any]]:
        """``(rater, criterion, system, item_id, sample, status, score)`` of every judge judgment, in key order."""
        for rater in self.judges:
            yield from ((rater, str(c), str(s), str(i), n, _status(st, sc), sc) for c, s, i, n, st, sc in self.db.execute(
                "SELECT criterion, system, item_id, sample, status, score FROM judgments WHERE rater = ? "
                "ORDER BY criterion, system, item_id, sample", (rater,)))

    def unit_rows(self, unit: tuple[str, str, str, str]) -> list[tuple[Any, ...]]:
        """One unit's judgments by sample, in :data:`UNIT_ROW` order with the ledger keys last."""
        rows = self.db.execute(f"SELECT {', '.join(UNIT_ROW)} FROM judgments WHERE {_UNIT} ORDER BY sample", unit)
        return [(int(n), _status(st, sc), sc, p, lp, lo, raw, att, attempt_keys(att))
                for n, st, sc, p, lp, lo, raw, att in rows]

    def item_text(self, rater: str, system: str, item: str) -> ItemText | None:
        """The text ``rater`` judged as the store's ``items`` table recorded it (as ``Store.item_texts`` reads it)."""
        if rater not in self.item_raters:
            return None
        row = self.db.execute("SELECT text, context, grp, parts FROM items WHERE rater = ? AND system = ? AND "
                              "item_id = ?", (rater, system, item)).fetchone()
        if row is None:
            return None
        text, context, grp, parts = row
        try:
            named = json.loads(parts) if parts else {}
        except ValueError:
            named = {}
        pairs = tuple((str(k), str(v)) for k, v in named.items()) if isinstance(named, dict) else ()
        return ItemText(str(text), context, grp, pairs)

    def texts_of(self, units: list[tuple[str, str, str, str]]) -> dict[tuple[str, str, str], ItemText]:
        """The texts of ``units`` recorded under their rater, and for a unit without one those every rater
        recorded for its system and item (:func:`judgelab.report.html_items.text_of_unit` chooses)."""
        out: dict[tuple[str, str, str], ItemText] = {}
        for rater, _, system, item in units:
            if (rater, system, item) in out:
                continue
            found = self.item_text(rater, system, item)
            if found is not None:
                out[(rater, system, item)] = found
                continue
            for other in self.item_raters:
                text = self.item_text(other, system, item)
                if text is not None:
                    out[(other, system, item)] = text
        return out

    def shown_rows(self) -> pd.DataFrame:
        """The judgments "What ran", "Failures" and the human ratings read: the first (by ``seq``) of each judge
        rater and criterion, the first :data:`FAILURE_EXAMPLES` failures of each judge rater and status, and every
        human rater's — a table as :meth:`judgelab.report.folder.StoreReader.judgments` returns."""
        judges = ",".join("?" * len(self.judges))
        failed = "CASE WHEN status = 'ok' AND score IS NULL THEN 'missing' ELSE status END"
        rowids = {r for (r,) in self.db.execute(
            f"SELECT min_rowid FROM (SELECT rowid AS min_rowid, row_number() OVER (PARTITION BY rater, criterion "
            f"ORDER BY seq) AS k FROM judgments WHERE rater IN ({judges})) WHERE k = 1", self.judges)}
        rowids |= {r for (r,) in self.db.execute(
            f"SELECT id FROM (SELECT rowid AS id, row_number() OVER (PARTITION BY rater, {failed} ORDER BY seq) AS k "
            f"FROM judgments WHERE rater IN ({judges}) AND (status != 'ok' OR score IS NULL)) WHERE k <= ?",
            [*self.judges, FAILURE_EXAMPLES])}
        humans = ",".join("?" * len(self.humans))
        rowids |= {r for (r,) in self.db.execute(f"SELECT rowid FROM judgments WHERE rater IN ({humans})", self.humans)}
        columns = [c for c in JUDGMENT_COLUMNS if c != "meta"]
        names = ", ".join("grp" if c == "group" else c for c in columns)
        ordered = sorted(rowids)
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(ordered), 500):
            block = ordered[start:start + 500]
            rows += self.db.execute(f"SELECT {names} FROM judgments WHERE rowid IN ({','.join('?' * len(block))})",
                                    block).fetchall()
        df = normalise(pd.DataFrame.from_records(rows, columns=columns), JUDGMENT_COLUMNS)
        if not df.empty:
            df = df.sort_values("seq", kind="stable").reset_index(drop=True)
        df["keys"] = [attempt_keys(a) for a in df["attempts"].tolist()]
        return df
