"""SQLite persistence: the call ledger and the judgments, resumable after any kill.

Two tables (and the ``batches`` of :mod:`judgelab.store.batches`, the ``items`` of
:mod:`judgelab.store.items`: the text each rater judged):

* ``calls`` — one row per model call, keyed by a SHA-256 of the full request (judge
  identity, messages, sampling parameters, n, log-probability options, sample slot,
  retry attempt). It is the cache, the resume point and the reproducibility record.
  Each response is committed the moment it arrives; errors are never stored.
* ``judgments`` — one row per rating (item, system, criterion, rater, sample), with
  the parsed and log-probability scores, the status, the raw output and every
  attempt. The primary key makes each judgment recorded exactly once.

The database runs in WAL mode; every write is one transaction, so a ``kill -9`` at any
moment leaves either the whole row or nothing. The runner groups database writes (at most
512 records or 200 ms late) for speed; so that no answered call is lost in that window, each
answer is first appended to a journal file beside the database (``<store>.journal``, one
``write`` to the operating system, which survives the death of the process). Opening a
store replays the journal into ``calls`` (a torn last line is ignored) and clears it. A
resumed run therefore repeats only the calls that were still in flight when it was killed.
"""
from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import IO, Any, Iterable

from judgelab.errors import JudgelabError
from judgelab.store.batches import BatchRecord, BatchTable
from judgelab.store.items import ITEM_COLUMNS, ItemTable, ItemText, item_row
from judgelab.store.judgments import RATING_COLUMNS, Judgment, JudgmentTable, prompt_key
from judgelab.store.ledger import Ledger, _as_json
from judgelab.store.lock import last_store_summary, remember_opened, take_lock
from judgelab.store.runs import RunLabels, describe_changes
from judgelab.store.schema import (JUDGMENT_COLUMNS, SCHEMA, STORE_FORMAT, STORE_VERSION, check_format, migrate,
                                   upgraded_copy, write_error)
from judgelab.store.writer import GroupWriter

__all__ = ["Judgment", "Store", "BatchRecord", "GroupWriter", "prompt_key", "RATING_COLUMNS", "last_store_summary",
           "describe_changes", "ItemText", "item_row"]

logger = logging.getLogger(__name__)

#: A writing connection's page cache and WAL size. A million calls make a ledger index of about 75 MB
#: whose keys (SHA-256) are random, so each insert touches a random page: a 64 MiB page cache keeps them
#: in memory (allocated as used), and a checkpoint every 10,000 WAL pages (about 40 MB, not 1,000)
#: copies a page changed by many group commits once, not once per 1,000 pages: the pace stays flat.
WRITER_PRAGMAS = ("cache_size=-65536", "wal_autocheckpoint=10000")


class Store(Ledger, JudgmentTable, ItemTable, RunLabels, BatchTable):
    """The run database. Open with a path; ``:memory:`` works for tests.

    A writable store is held by one process at a time: opening it takes an exclusive lock
    on ``<store>.lock`` (released when the store is closed or the process dies), and a
    second process gets a one-line error naming the holder, so no call is ever paid twice
    because two processes ran at once. ``read_only=True`` (used by ``export``, ``--dry-run`` and
    the analysis commands) neither locks, creates, migrates nor switches the journal mode, and
    refuses a file that is not a judgelab store; a store of version 2 is read through a copy in
    memory migrated as a writable open would migrate the file (:func:`judgelab.store.schema.upgraded_copy`).

    Args:
        path: the SQLite file, or ``":memory:"``.
        read_only: open without writing (the file must exist and be a judgelab store).

    Raises:
        JudgelabError: a folder, a missing file or folder, a foreign database, a store held
            by another process.

    Example:
        >>> with Store(":memory:") as store:
        ...     store.n_calls(), len(store.ratings())
        (0, 0)
    """

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._lock_fh: IO[str] | None = None
        self._journal: IO[bytes] | None = None
        self._journal_path: Path | None = None
        self._journaled: set[str] = set()
        #: Damaged ledger entries dropped by :meth:`get_call` (each is asked again).
        self.dropped_calls = 0
        if self.path != ":memory:":
            file = Path(self.path)
            if file.is_dir():
                raise JudgelabError(f"{file} is a folder, not a store file")
            if read_only and not file.is_file():
                raise JudgelabError(f"store not found: {file}")
            if not file.parent.exists():
                raise JudgelabError(f"store folder does not exist: {file.parent}")
        try:
            if read_only:
                # immutable=1 when no writer's -wal file exists: reading then creates no -wal/-shm files
                live = Path(self.path + "-wal").exists()
                uri = f"{Path(self.path).resolve().as_uri()}?mode=ro" + ("" if live else "&immutable=1")
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
                check_format(self._db, self.path, require_tables=True)
                upgraded = upgraded_copy(self._db)  # a store of version 2: read through a migrated copy in memory
                if upgraded is not None:
                    self._db.close()
                    self._db = upgraded
            else:
                self._lock_fh = take_lock(self.path)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                check_format(self._db, self.path, require_tables=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                for pragma in WRITER_PRAGMAS:
                    self._db.execute(f"PRAGMA {pragma}")
                self._db.executescript(SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO judgelab_meta VALUES ('format', ?), ('version', ?)",
                                 (STORE_FORMAT, str(STORE_VERSION)))
                migrate(self._db)
            self._seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM judgments").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self._unlock()
            raise JudgelabError(f"{self.path}: not a readable judgelab store ({exc})") from None
        except JudgelabError:
            self._unlock()
            raise
        if read_only:
            return
        remember_opened(self.path)
        self._journal_path = None if self.path == ":memory:" else Path(self.path + ".journal")
        self._replay_journal()

    def read_connection(self) -> sqlite3.Connection:
        """The connection of a store opened ``read_only``, for reads by SQL that the store has no method for (the
        report's reads of a large store a unit at a time, :mod:`judgelab.report.store_reads`); a writable store
        gives none (its writes go through its methods only)."""
        if not self.read_only:
            raise JudgelabError(f"{self.path}: only a store opened read-only gives its connection")
        return self._db

    def _unlock(self) -> None:
        if self._lock_fh is not None:
            self._lock_fh.close()  # closing the descriptor releases the flock
            self._lock_fh = None

    def close(self) -> None:
        """Close the store: replay the journal into the database, then release the lock."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            if self._journal_path is not None and self._journal_path.exists():
                self._replay_journal()  # everything journaled is in the database before the journal goes
        self._db.close()
        self._unlock()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, calls: Iterable[tuple[str, Any, Any]] = (), judgments: Iterable[Judgment] = (),
            replace: bool = False, items: Iterable[tuple[Any, ...]] = ()) -> None:
        """Write calls, judgments and the items judged in one transaction.

        Args:
            calls: ``(key, request, response)`` rows, request and response as dicts or JSON text
                (an existing key is kept: a call is answered once).
            judgments: :class:`Judgment` rows.
            replace: a judgment replaces the stored one of the same (rater, criterion, system,
                item, sample) — the runner's re-judgments of changed prompts and of ``error``
                rows. Without it the stored one is kept (first answer wins: the annotation app).
            items: :func:`judgelab.store.items.item_row` rows; one replaces the stored row of the
                same (rater, system, item_id).

        Raises:
            JudgelabError: the disk is full or the store is not writable (one line).
        """
        now = time.time()
        call_rows = [(k, _as_json(q), _as_json(r), now) for k, q, r in calls]
        judgment_rows = [self._row(j) for j in judgments]
        item_rows = list(items)
        try:
            with self._db:
                self._db.execute("BEGIN")
                if call_rows:
                    self._db.executemany("INSERT OR IGNORE INTO calls (key, request, response, created) VALUES (?, ?, ?, ?)", call_rows)
                if judgment_rows:
                    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
                    self._db.executemany(f"{verb} INTO judgments ({JUDGMENT_COLUMNS}) VALUES ({','.join('?' * 19)})",
                                         judgment_rows)
                if item_rows:
                    self._db.executemany(f"INSERT OR REPLACE INTO items ({ITEM_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                         item_rows)
        except sqlite3.OperationalError as exc:
            raise write_error(self.path, exc) from None
        if call_rows:
            self._committed(row[0] for row in call_rows)

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            raise write_error(self.path, exc) from None

    def _write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """``executemany`` in one transaction; a full disk or a read-only store is one line."""
        try:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany(sql, rows)
        except sqlite3.OperationalError as exc:
            raise write_error(self.path, exc) from None
