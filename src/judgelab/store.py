"""SQLite persistence: the call ledger and the judgments, resumable after any kill.

Two tables:

* ``calls`` — one row per model call, keyed by a SHA-256 of the full request (judge
  identity, messages, sampling parameters, n, log-probability options, sample slot,
  retry attempt). It is the cache, the resume point and the reproducibility record.
  Each response is committed the moment it arrives; errors are never stored.
* ``judgments`` — one row per rating (item, system, criterion, rater, sample), with
  the parsed and log-probability scores, the status, the raw output and every
  attempt. The primary key makes each judgment recorded exactly once.

The database runs in WAL mode; every write is one transaction, so a ``kill -9`` at any
moment leaves either the whole row or nothing. The runner groups database writes (at most
64 records or 50 ms late) for speed; so that no answered call is lost in that window, each
answer is first appended to a journal file beside the database (``<store>.journal``, one
``write`` to the operating system, which survives the death of the process). Opening a
store replays the journal into ``calls`` (a torn last line is ignored) and clears it. A
resumed run therefore repeats only the calls that were still in flight when it was killed.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["Judgment", "Store", "request_key", "keyed_json", "RATING_COLUMNS", "write_table"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    item_id TEXT NOT NULL,
    system TEXT NOT NULL,
    grp TEXT,
    criterion TEXT NOT NULL,
    rater TEXT NOT NULL,
    sample INTEGER NOT NULL,
    score REAL,
    score_parsed REAL,
    score_logprob REAL,
    logprob_outside REAL,
    status TEXT NOT NULL,
    raw TEXT,
    attempts TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency_s REAL,
    meta TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (rater, criterion, system, item_id, sample)
);
"""

#: Columns of the tidy ratings table (ARCHITECTURE.md), in export order.
RATING_COLUMNS = [
    "item_id", "system", "group", "criterion", "rater", "sample", "score",
    "score_parsed", "score_logprob", "logprob_outside", "status", "raw",
]


def request_key(payload: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of a request description."""
    return keyed_json(payload)[0]


def keyed_json(payload: dict[str, Any]) -> tuple[str, str]:
    """(SHA-256 key, canonical JSON) of a request description; the JSON is what the ledger stores."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest(), blob


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class Judgment:
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

    @property
    def identity(self) -> tuple[str, str, str, str, int]:
        return (self.rater, self.criterion, self.system, self.item_id, self.sample)


class Store:
    """The run database. Open with a path; ``:memory:`` works for tests."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            parent = Path(self.path).parent
            if not parent.exists():
                raise JudgelabError(f"store folder does not exist: {parent}")
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise JudgelabError(f"{self.path}: not a judgelab store ({exc})") from None
        self._seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM judgments").fetchone()[0]
        self._journal_path = None if self.path == ":memory:" else Path(self.path + ".journal")
        self._journal = None
        self._replay_journal()

    # -- journal of answered calls (survives a kill between group commits) ------------
    def _replay_journal(self) -> None:
        if self._journal_path is None or not self._journal_path.exists():
            return
        rows = []
        for line in self._journal_path.read_text(encoding="utf-8", errors="replace").split("\n"):  # JSON lines: "\n" only
            try:
                entry = json.loads(line)
                rows.append((entry["key"], entry["request"], entry["response"]))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line torn by the kill
        if rows:
            self.put(calls=[(k, q, r) for k, q, r in rows])
        self._journal_path.unlink()

    def journal_call(self, key: str, request: dict[str, Any] | str, response: dict[str, Any] | str) -> None:
        """Append an answered call to the journal at once (cheap; the database write may follow later).

        ``request`` and ``response`` may be given as JSON text already, so nothing is serialised twice.
        """
        if self._journal_path is None:
            return
        if self._journal is None:
            self._journal = open(self._journal_path, "a", encoding="utf-8")
        self._journal.write(f'{{"key":"{key}","request":{_as_json(request)},"response":{_as_json(response)}}}\n')
        self._journal.flush()

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            if self._journal_path is not None and self._journal_path.exists():
                self._replay_journal()  # everything journaled is in the database before the journal goes
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- call ledger -----------------------------------------------------
    def get_call(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def call_keys(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT key FROM calls")}

    def put_call(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        self.put(calls=[(key, request, response)])

    def put(self, calls: Iterable[tuple[str, Any, Any]] = (), judgments: Iterable[Judgment] = ()) -> None:
        """Write calls (request and response as dicts or JSON text) and judgments in one transaction."""
        now = time.time()
        call_rows = [(k, _as_json(q), _as_json(r), now) for k, q, r in calls]
        judgment_rows = [self._row(j) for j in judgments]
        with self._db:
            self._db.execute("BEGIN")
            if call_rows:
                self._db.executemany("INSERT OR IGNORE INTO calls (key, request, response, created) VALUES (?, ?, ?, ?)", call_rows)
            if judgment_rows:
                self._db.executemany("INSERT OR IGNORE INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", judgment_rows)

    def n_calls(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    # -- judgments ---------------------------------------------------------
    def done(self) -> set[tuple[str, str, str, str, int]]:
        rows = self._db.execute("SELECT rater, criterion, system, item_id, sample FROM judgments")
        return {tuple(r) for r in rows}  # type: ignore[misc]

    def _row(self, j: Judgment) -> tuple[Any, ...]:
        self._seq += 1
        return (
            j.item_id, j.system, j.group, j.criterion, j.rater, j.sample, j.score, j.score_parsed, j.score_logprob,
            j.logprob_outside, j.status, j.raw, json.dumps(j.attempts, ensure_ascii=False), j.prompt_tokens,
            j.completion_tokens, j.latency_s, json.dumps(j.meta, ensure_ascii=False, sort_keys=True), self._seq,
        )

    def ratings(self, with_meta: bool = False, rater: str | None = None) -> pd.DataFrame:
        """The tidy ratings table (of one rater if given), sorted deterministically (independent of finishing order)."""
        if rater is None:
            df = pd.read_sql_query("SELECT * FROM judgments", self._db)
        else:
            df = pd.read_sql_query("SELECT * FROM judgments WHERE rater = ?", self._db, params=(rater,))
        df = df.rename(columns={"grp": "group"})
        df = df.sort_values(["rater", "criterion", "system", "item_id", "sample"], kind="mergesort").reset_index(drop=True)
        cols = RATING_COLUMNS + (["attempts", "prompt_tokens", "completion_tokens", "latency_s", "meta"] if with_meta else [])
        return df[cols]


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as CSV, JSONL or Parquet, by the file's extension."""
    path = Path(path)
    if not path.parent.exists():
        raise JudgelabError(f"output folder does not exist: {path.parent}")
    suffix = path.suffix.lower()
    tmp = path.with_name(path.name + ".tmp")
    if suffix == ".csv":
        df.to_csv(tmp, index=False)
    elif suffix in {".jsonl", ".json"}:
        df.to_json(tmp, orient="records", lines=True, force_ascii=False)
    elif suffix == ".parquet":
        df.to_parquet(tmp, index=False)
    else:
        raise JudgelabError(f"unknown output format {suffix!r}: use .csv, .jsonl or .parquet")
    tmp.replace(path)
    return path
