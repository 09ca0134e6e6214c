"""Judgments: one row per rating, what each answered (its prompt key), and the tidy ratings table."""
from __future__ import annotations

import copy
import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from judgelab.digest import keyed_json, plain_json
from judgelab.status import Status
from judgelab.table import RATING_COLUMNS, TIDY_COLUMNS, with_identity

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Judgment", "JudgmentTable", "prompt_key", "RATING_COLUMNS", "CHUNK_ROWS", "COMPACT_CATEGORIES"]

#: Rows per chunk of :meth:`JudgmentTable.rating_chunks`: reading a chunk holds about 2 KB a row for a moment (10,000
#: rows: 20 MB); larger chunks save little time (300,000 rows: 1.3 s of CPU at 10,000, 1.1 s at 50,000).
CHUNK_ROWS = 10_000
#: The columns of :meth:`JudgmentTable.compact_ratings` held as categories (few distinct values, repeated on every row).
COMPACT_CATEGORIES = ("system", "group", "criterion", "rater", "status")
#: The order of :meth:`JudgmentTable.ratings` and every chunked read: the primary key's.
_ORDER = ["rater", "criterion", "system", "item_id", "sample"]



def prompt_key(messages: Iterable[tuple[str, str]] | Iterable[list[str]]) -> str:
    """The SHA-256 of what a judgment was asked: the non-assistant turns of its call, in order.

    Every judgment records the key of the prompt it answers (``judgments.prompt_key``); a run
    whose rendered prompt for the same item, criterion and sample differs (an edited text or
    context, other few-shot or dynamic examples) asks again instead of returning the old
    answer. Assistant turns are left out: in conversation mode they are the judge's own earlier
    answers, unknown when the run is planned.

    Args:
        messages: ``(role, text)`` turns as sent (or as stored in the ledger: ``[role, text]``).

    Returns:
        64 hex digits.

    Example:
        >>> prompt_key([("user", "Rate it.")]) == prompt_key([("user", "Rate it."), ("assistant", "4")])
        True
    """
    asked = [[str(role), str(text)] for role, text in messages if role != "assistant"]
    return keyed_json({"asked": asked})[0]


def _count(value: Any) -> int:
    """A token count from SQLite or pandas: None and NaN are 0."""
    return 0 if value is None or value != value else int(value)


@dataclass
class Judgment:
    """One rating as the runner records it (a row of the ``judgments`` table).

    Attributes:
        item_id, system, group: the item rated.
        criterion: the criterion (or metric of a multi-metric criterion).
        rater: the run's label.
        sample: the sample number (0 … samples − 1).
        score: the rating used (parsed, or the expectation in log-probability mode).
        score_parsed, score_logprob: the parsed rating and the log-probability expectation.
        logprob_outside: probability mass outside the scale's labels.
        status: a :class:`~judgelab.status.Status` value.
        raw: the answer's text.
        attempts: every answer asked for (refusals included), each with its call key.
        prompt_tokens, completion_tokens, latency_s: of the final call.
        meta: the run's settings.
        prompt_key: :func:`prompt_key` of the messages it answers (``None`` for human ratings).

    Example:
        >>> Judgment("a", "human", None, "likability", "r", 0, 4.0, 4.0, None, None, "ok", "4").identity
        ('r', 'likability', 'human', 'a', 0)
    """
    item_id: str
    system: str
    group: str | None
    criterion: str
    rater: str
    sample: int
    score: float | None
    score_parsed: float | None
    score_logprob: float | None
    logprob_outside: float | None
    status: str
    raw: str | None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    prompt_key: str | None = None

    @property
    def identity(self) -> tuple[str, str, str, str, int]:
        """The primary key: (rater, criterion, system, item_id, sample)."""
        return (self.rater, self.criterion, self.system, self.item_id, self.sample)



class JudgmentTable:
    """The store's ``judgments`` table (a part of :class:`judgelab.store.Store`)."""

    _db: sqlite3.Connection
    _seq: int
    #: (the last meta dict, a copy of it as encoded, its JSON): see :meth:`_meta_json`.
    _last_meta: tuple[dict[str, Any], dict[str, Any], str] | None = None

    def _write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...  # defined by Store

    def judgment_rows(self, columns: list[str]) -> list[tuple[Any, ...]]:
        """Every judgment's ``columns`` as stored (``group`` is the ``grp`` column; a column this store
        does not have reads as NULL), in table order."""
        return self._judgment_cursor(columns).fetchall()

    def judgment_chunks(self, columns: list[str], size: int) -> Iterator[list[tuple[Any, ...]]]:
        """:meth:`judgment_rows` a chunk of at most ``size`` rows at a time (all at once when ``size`` is 0)."""
        cursor = self._judgment_cursor(columns)
        if size <= 0:
            yield cursor.fetchall()
            return
        while chunk := cursor.fetchmany(size):
            yield chunk

    def _judgment_cursor(self, columns: list[str]) -> sqlite3.Cursor:
        have = {r[1] for r in self._db.execute("PRAGMA table_info(judgments)")}
        names = [("grp" if c == "group" else c) for c in columns]
        select = ", ".join(n if n in have else "NULL" for n in names)
        return self._db.execute(f"SELECT {select} FROM judgments")

    def rated_by_humans(self) -> Iterator[tuple[str, str, str, str]]:
        """``(rater, criterion, system, item_id)`` of each first sample a human rater (``human:…``,
        :func:`judgelab.raters.is_human`) recorded, a row at a time (not every judgment's key as a set)."""
        from judgelab.raters import HUMAN_PREFIX

        yield from self._db.execute("SELECT rater, criterion, system, item_id FROM judgments "
                                    "WHERE substr(rater, 1, ?) = ? AND sample = 0", (len(HUMAN_PREFIX), HUMAN_PREFIX))

    def unsettled(self, rater: str, planned: Iterable[tuple[Any, ...]],
                  parser: int | None) -> Iterator[tuple[int, str, tuple[Any, ...] | None]] | None:
        """Compare a run's planned judgments with the rater's stored ones, in SQL: only what is not plainly
        done comes back (a rerun of a million done judgments reads no million rows into Python).

        Args:
            rater: the rater label.
            planned: ``(unit, criterion, system, item_id, sample, prompt_key, group)`` per planned judgment,
                the rows of a unit together (a unit is one answer: a criterion's metrics share it).
            parser: the current answer parser's version (a judgment recorded by another is not plainly
                done), or ``None`` when the answers' text is not parsed.

        Returns:
            ``None`` when the rater has no judgment (``planned`` is not read); else, for every unit with a
            row that is not stored, stored for another prompt key, as ``error``, by another parser or in
            another group, each of its rows in planned order: ``(unit, planned prompt_key, (prompt_key,
            status, group, parser) as stored or None)`` (``parser``: ``meta.parser`` as stored, None when
            not recorded).
        """
        if self._db.execute("SELECT 1 FROM judgments WHERE rater = ? LIMIT 1", (rater,)).fetchone() is None:
            return None
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS planned (unit INTEGER, criterion TEXT, system TEXT, "
                   "item_id TEXT, sample INTEGER, prompt_key TEXT, grp TEXT)")
        db.execute("DELETE FROM temp.planned")
        db.execute("BEGIN")
        try:
            db.executemany("INSERT INTO temp.planned VALUES (?, ?, ?, ?, ?, ?, ?)", planned)
        finally:
            db.execute("COMMIT")
        return self._unsettled_rows(rater, parser)

    def _unsettled_rows(self, rater: str, parser: int | None) -> Iterator[tuple[int, str, tuple[Any, ...] | None]]:
        join = ("LEFT JOIN judgments j ON j.rater = ? AND j.criterion = p.criterion AND j.system = p.system "
                "AND j.item_id = p.item_id AND j.sample = p.sample")
        unsettled = ("j.rater IS NULL OR j.prompt_key IS NOT p.prompt_key OR j.status = ? OR j.grp IS NOT p.grp "
                     "OR (? IS NOT NULL AND COALESCE(json_extract(j.meta, '$.parser'), 1) IS NOT ?)")
        try:
            rows = self._db.execute(
                f"SELECT p.unit, p.prompt_key, j.rater IS NOT NULL, j.prompt_key, j.status, j.grp, "
                f"json_extract(j.meta, '$.parser') FROM temp.planned p {join} WHERE p.unit IN "
                f"(SELECT p.unit FROM temp.planned p {join} WHERE {unsettled}) ORDER BY p.rowid",
                (rater, rater, Status.ERROR.value, parser, parser))
            for unit, key, stored, *found in rows:
                yield unit, key, tuple(found) if stored else None
        finally:
            self._db.execute("DELETE FROM temp.planned")

    def regroup(self, rater: str, groups: Iterable[tuple[str, str, str | None]]) -> None:
        """Set the group of a rater's judgments of items whose group changed (the answers stay valid:
        the group is not part of the prompt).

        Args:
            rater: the rater label.
            groups: ``(system, item_id, group)`` per item.
        """
        rows = [(g, rater, system, item_id) for system, item_id, g in groups]
        if rows:
            self._write_many("UPDATE judgments SET grp = ? WHERE rater = ? AND system = ? AND item_id = ?", rows)

    def _row(self, j: Judgment) -> tuple[Any, ...]:
        self._seq += 1
        return (
            j.item_id, j.system, j.group, j.criterion, j.rater, j.sample, j.score, j.score_parsed, j.score_logprob,
            j.logprob_outside, j.status, j.raw, plain_json(j.attempts), j.prompt_tokens,
            j.completion_tokens, j.latency_s, self._meta_json(j.meta), self._seq,
            j.prompt_key,
        )

    def _meta_json(self, meta: dict[str, Any]) -> str:
        """``meta`` as stored (sorted-key JSON), encoded once per run: a run passes the same dict with
        every judgment; it is encoded again when it is another object or was changed since."""
        last = self._last_meta
        if last is not None and last[0] is meta and last[1] == meta:
            return last[2]
        text = json.dumps(meta, ensure_ascii=False, sort_keys=True)
        self._last_meta = (meta, copy.deepcopy(meta), text)
        return text

    def ratings(self, with_meta: bool = False, rater: str | None = None) -> "pd.DataFrame":
        """The tidy ratings table, sorted deterministically (independent of finishing order).

        Args:
            with_meta: add ``attempts`` (every answer with its call key, JSON), ``call_key``
                (the call of the final answer), ``prompt_tokens``, ``completion_tokens``,
                ``latency_s`` and ``meta`` (the run's settings, JSON).
            rater: only this rater's rows.

        Returns:
            One row per judgment, columns :data:`RATING_COLUMNS`, the rater's identity
            (:data:`judgelab.table.IDENTITY_COLUMNS`, from its label), then the meta columns.

        Token accounting (``with_meta``): a call answers several judgments — all samples
        of an ``n`` request, every metric of a multi-metric criterion — and a refusal costs
        calls besides the final one. So that summing the columns gives the true total, each
        call's tokens (from the ledger) are counted once, on the first row of this table
        whose ``attempts`` name it, and 0 on the others: the column sums equal the sums over
        the calls the rows used. ``latency_s`` stays the final call's latency on every row.

        Example:
            >>> from judgelab.store import Store
            >>> store = Store(":memory:")
            >>> list(store.ratings().columns[:7])
            ['item_id', 'system', 'group', 'criterion', 'rater', 'sample', 'score']
        """
        import pandas as pd

        # Without the meta columns only the table's columns are read: the JSON of every row's
        # attempts and settings would triple the memory of a large read (100,000 rows: 400 MB).
        columns = "*" if with_meta else ", ".join("grp" if c == "group" else c for c in RATING_COLUMNS)
        if rater is None:
            df = pd.read_sql_query(f"SELECT {columns} FROM judgments", self._db)
        else:
            df = pd.read_sql_query(f"SELECT {columns} FROM judgments WHERE rater = ?", self._db, params=(rater,))
        df = df.rename(columns={"grp": "group"})
        df = df.sort_values(_ORDER, kind="mergesort").reset_index(drop=True)
        if not with_meta:
            return with_identity(df[RATING_COLUMNS])
        df = self._tokens_once_per_call(df)
        meta = ["attempts", "call_key", "prompt_tokens", "completion_tokens", "latency_s", "meta"]
        return with_identity(df[RATING_COLUMNS]).join(df[meta])

    def _tokens_once_per_call(self, df: "pd.DataFrame") -> "pd.DataFrame":
        """Each call's tokens on the first row that used it, 0 on the others (see :meth:`ratings`)."""
        call_tokens = {key: (_count(p), _count(c)) for key, p, c in self._db.execute(
            "SELECT key, json_extract(response, '$.prompt_tokens'), json_extract(response, '$.completion_tokens') FROM calls")}
        seen: set[str] = set()
        keys, prompt, completion = [], [], []
        for attempts, p_row, c_row in zip(df["attempts"], df["prompt_tokens"], df["completion_tokens"]):
            try:
                used = [a["key"] for a in json.loads(attempts) if isinstance(a, dict) and a.get("key")]
            except (TypeError, ValueError):
                used = []
            keys.append(used[-1] if used else None)
            if not used:  # no call recorded (a human rating, an old row): its own numbers
                prompt.append(_count(p_row))
                completion.append(_count(c_row))
                continue
            p_sum = c_sum = 0
            for i, key in enumerate(used):
                if key in seen:
                    continue
                seen.add(key)
                # a call missing from the ledger: the row's stored numbers are its final call's
                p, c = call_tokens.get(key, (_count(p_row), _count(c_row)) if i == len(used) - 1 else (0, 0))
                p_sum, c_sum = p_sum + p, c_sum + c
            prompt.append(p_sum)
            completion.append(c_sum)
        return df.assign(call_key=keys, prompt_tokens=prompt, completion_tokens=completion)

    def rating_chunks(self, columns: Sequence[str] = RATING_COLUMNS, raters: Sequence[str] | None = None,
                      asked_only: bool = False, size: int = CHUNK_ROWS, failed_only: bool = False,
                      limit: int | None = None) -> Iterator["pd.DataFrame"]:
        """The ratings table's ``columns`` (no identity columns), at most ``size`` rows at a time, in the
        order of :meth:`ratings` (``ORDER BY`` the primary key, whose index gives it without a sort).

        Args:
            columns: of :data:`RATING_COLUMNS` (``group`` is the ``grp`` column).
            raters: only these raters' rows (None: every rater).
            asked_only: only rows of the items given to :meth:`ask_items` (matched in SQL, so no table
                of every item is built in memory).
            size: rows per chunk (all at once when 0).
            failed_only: only judgments whose status is not ``ok``; limit: at most this many rows.

        Yields:
            DataFrames as :func:`pandas.read_sql_query` makes them; at least one (empty when no row matches).
        """
        import pandas as pd

        where, params = [], []
        if raters is not None:
            where.append(f"rater IN ({', '.join('?' * len(raters))})")
            params += list(raters)
        if asked_only:
            where.append("EXISTS (SELECT 1 FROM temp.asked_items a WHERE a.system = judgments.system "
                         "AND a.item_id = judgments.item_id)")
        if failed_only:
            where.append("status != 'ok'")
        select = ", ".join('grp AS "group"' if c == "group" else c for c in columns)
        sql = (f"SELECT {select} FROM judgments" + (f" WHERE {' AND '.join(where)}" if where else "")
               + f" ORDER BY {', '.join(_ORDER)}" + ("" if limit is None else f" LIMIT {int(limit)}"))
        if size <= 0:
            yield pd.read_sql_query(sql, self._db, params=params)
            return
        yield from pd.read_sql_query(sql, self._db, params=params, chunksize=size)

    def ask_items(self, items: Iterable[tuple[str, str]]) -> None:
        """Set the ``(system, item_id)`` that :meth:`rating_chunks` keeps with ``asked_only`` (a temporary
        table of this connection, replaced by the next call)."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS asked_items (system TEXT NOT NULL, item_id TEXT NOT NULL, "
                         "PRIMARY KEY (system, item_id)) WITHOUT ROWID")
        self._db.execute("BEGIN")
        try:
            self._db.execute("DELETE FROM temp.asked_items")
            self._db.executemany("INSERT OR IGNORE INTO temp.asked_items VALUES (?, ?)", items)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def unasked(self, raters: Sequence[str] | None = None) -> bool:
        """Whether any row of ``raters`` is of an item not given to :meth:`ask_items` (found at the first such
        row, reading the primary key's index only): when none is, ``asked_only`` keeps every row."""
        where = "" if raters is None else f"rater IN ({', '.join('?' * len(raters))}) AND "
        return bool(self._db.execute(
            f"SELECT EXISTS (SELECT 1 FROM judgments WHERE {where}NOT EXISTS (SELECT 1 FROM temp.asked_items a "
            "WHERE a.system = judgments.system AND a.item_id = judgments.item_id))", list(raters or ())).fetchone()[0])

    def compact_ratings(self, raters: Sequence[str] | None = None, asked_only: bool = False,
                        size: int = CHUNK_ROWS) -> "pd.DataFrame":
        """The tidy columns (:data:`judgelab.table.TIDY_COLUMNS`) of :meth:`rating_chunks`' rows, in the same
        order, read a chunk at a time, the repeated texts (:data:`COMPACT_CATEGORIES`) as categories
        (sorted): what a summary, failure counts and Welch's test read, in tens of megabytes at a
        million rows (the ratings file's every column would be hundreds). No identity columns, no answers.
        """
        import pandas as pd

        chunks = [_compact(c) for c in self.rating_chunks(TIDY_COLUMNS, raters, asked_only, size)]
        for col in COMPACT_CATEGORIES:  # one set of categories for every chunk, so that they concatenate as categories
            dtype = pd.CategoricalDtype(sorted({v for c in chunks for v in c[col].cat.categories}))
            for c in chunks:
                c[col] = c[col].cat.set_categories(dtype.categories)
        return chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)


def _compact(chunk: "pd.DataFrame") -> "pd.DataFrame":
    """A chunk of :meth:`JudgmentTable.compact_ratings`: the same dtypes whatever values it holds."""
    import pandas as pd

    chunk = chunk.assign(score=pd.to_numeric(chunk["score"], errors="coerce").astype(float),
                         sample=chunk["sample"].astype("int64"))
    return chunk.astype({k: "category" for k in COMPACT_CATEGORIES})
