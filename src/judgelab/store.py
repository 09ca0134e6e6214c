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
import logging
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterable

from judgelab.errors import JudgelabError

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Judgment", "Store", "GroupWriter", "request_key", "keyed_json", "RATING_COLUMNS", "write_table", "last_store_summary"]

#: The file of the store most recently opened for writing in this process (for the Ctrl-C message).
_last_opened: str | None = None


def last_store_summary() -> tuple[str, int] | None:
    """(path, number of judgments) of the store this process last opened for writing, read read-only.

    The command line uses it to say how much an interrupted run kept.

    Returns:
        ``(path, count)``, or ``None`` when no store was opened, it was ``:memory:``, or it
        cannot be read.

    Example:
        >>> _ = Store(":memory:"); last_store_summary() is None
        True
    """
    if _last_opened is None or _last_opened == ":memory:":
        return None
    try:
        db = sqlite3.connect(f"{Path(_last_opened).resolve().as_uri()}?mode=ro", uri=True)
        try:
            count = db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return _last_opened, int(count)

STORE_FORMAT = "judgelab-store"
STORE_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgelab_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    rater TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    identity TEXT NOT NULL,
    created REAL NOT NULL
);
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
    prompt_key TEXT,
    PRIMARY KEY (rater, criterion, system, item_id, sample)
);
"""

#: Columns of the ``judgments`` table in the order :meth:`Store._row` fills them.
_JUDGMENT_COLUMNS = ("item_id, system, grp, criterion, rater, sample, score, score_parsed, score_logprob, "
                     "logprob_outside, status, raw, attempts, prompt_tokens, completion_tokens, latency_s, meta, seq, "
                     "prompt_key")

#: Columns of the tidy ratings table (ARCHITECTURE.md), in export order.
RATING_COLUMNS = [
    "item_id", "system", "group", "criterion", "rater", "sample", "score",
    "score_parsed", "score_logprob", "logprob_outside", "status", "raw",
]


def request_key(payload: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of a request description (the call ledger's key).

    Args:
        payload: the request description (JSON-serialisable).

    Returns:
        64 hex digits; equal descriptions give equal keys whatever their key order.

    Example:
        >>> request_key({"b": 1, "a": [1, "x"]}) == request_key({"a": [1, "x"], "b": 1})
        True
    """
    return keyed_json(payload)[0]


def keyed_json(payload: dict[str, Any]) -> tuple[str, str]:
    """(SHA-256 key, canonical JSON) of a request description; the JSON is what the ledger stores.

    Args:
        payload: the request description.

    Returns:
        ``(key, json)`` with the JSON sorted by key, compact, UTF-8 kept.

    Example:
        >>> keyed_json({"n": 1, "messages": [["user", "hi"]]})[1]
        '{"messages":[["user","hi"]],"n":1}'
    """
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest(), blob


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


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


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


class Store:
    """The run database. Open with a path; ``:memory:`` works for tests.

    A writable store is held by one process at a time: opening it takes an exclusive lock
    on ``<store>.lock`` (released when the store is closed or the process dies), and a
    second process gets a one-line error naming the holder, so no call is ever paid twice
    because two processes ran at once. ``read_only=True`` (used by ``export`` and the
    analysis commands) neither locks, creates, migrates nor switches the journal mode, and
    refuses a file that is not a judgelab store.

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
        self._journal: IO[str] | None = None
        self._journal_path: Path | None = None
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
                self._check_format(require_tables=True)
            else:
                self._take_lock()
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._check_format(require_tables=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO judgelab_meta VALUES ('format', ?), ('version', ?)",
                                 (STORE_FORMAT, str(STORE_VERSION)))
                self._migrate()
            self._seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM judgments").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self._release_lock()
            raise JudgelabError(f"{self.path}: not a readable judgelab store ({exc})") from None
        except JudgelabError:
            self._release_lock()
            raise
        if read_only:
            return
        global _last_opened
        _last_opened = self.path
        self._journal_path = None if self.path == ":memory:" else Path(self.path + ".journal")
        self._replay_journal()

    # -- format and ownership -------------------------------------------------
    def _check_format(self, require_tables: bool) -> None:
        """Refuse SQLite files that are not judgelab stores (a foreign ``judgments`` table, another app's database)."""
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            if require_tables:
                raise JudgelabError(f"{self.path}: an empty database, not a judgelab store")
            return
        if "judgelab_meta" in tables:
            meta = dict(self._db.execute("SELECT name, value FROM judgelab_meta").fetchall())
            if meta.get("format") != STORE_FORMAT:
                raise JudgelabError(f"{self.path}: not a judgelab store (format {meta.get('format')!r})")
            if int(meta.get("version", "0")) > STORE_VERSION:
                raise JudgelabError(f"{self.path}: written by a newer judgelab (store version {meta['version']}); upgrade judgelab")
            return
        expected = {"calls": {"key", "request", "response", "created"},
                    "judgments": {"item_id", "system", "criterion", "rater", "sample", "status", "meta", "seq"}}
        for table, columns in expected.items():
            have = {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")} if table in tables else set()
            if not columns <= have:
                raise JudgelabError(f"{self.path}: not a judgelab store (table {table!r} missing or of another shape)")
        if require_tables:
            return  # a store of judgelab 0.1 (no meta table), readable as it is

    def _migrate(self) -> None:
        """Bring a store of an earlier version up to this one (version 2 → 3: ``judgments.prompt_key``,
        filled in from the ledger, so a store written before resumes without asking again)."""
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(judgments)")}
        if "prompt_key" not in columns:
            self._db.execute("ALTER TABLE judgments ADD COLUMN prompt_key TEXT")
        rows = self._db.execute("SELECT rowid, attempts FROM judgments WHERE prompt_key IS NULL AND attempts != '[]'").fetchall()
        if rows:
            updates = []
            for rowid, attempts in rows:
                try:
                    keys = [a["key"] for a in json.loads(attempts) if isinstance(a, dict) and a.get("key")]
                except (TypeError, ValueError):
                    keys = []
                found = self._db.execute("SELECT request FROM calls WHERE key = ?", (keys[-1],)).fetchone() if keys else None
                try:
                    messages = json.loads(found[0])["messages"] if found else None
                except (TypeError, ValueError, KeyError):
                    messages = None
                if messages is not None:
                    updates.append((prompt_key(messages), rowid))
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("UPDATE judgments SET prompt_key = ? WHERE rowid = ?", updates)
        self._db.execute("UPDATE judgelab_meta SET value = ? WHERE name = 'version' AND CAST(value AS INTEGER) < ?",
                         (str(STORE_VERSION), STORE_VERSION))

    def _take_lock(self) -> None:
        if self.path == ":memory:":
            return
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        lock_path = Path(self.path + ".lock")
        try:
            fh = open(lock_path, "a+", encoding="utf-8")
        except OSError as exc:
            raise JudgelabError(f"cannot create the lock file {lock_path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise JudgelabError(f"{self.path} is in use by {holder}; wait for it to finish or use another --out") from None
        import os

        from judgelab.manifest import masked_argv

        fh.seek(0)
        fh.truncate()
        os.chmod(lock_path, 0o600)  # the holder's command line is for its own user only
        # the command line without secrets (an --api-key value never reaches a file)
        fh.write(f"judgelab process {os.getpid()} ({' '.join(masked_argv())[:200]})")
        fh.flush()
        self._lock_fh = fh

    def _release_lock(self) -> None:
        if self._lock_fh is not None:
            self._lock_fh.close()  # closing the descriptor releases the flock
            self._lock_fh = None

    # -- runs: one rater label per set of settings ------------------------------
    def claim_rater(self, identity: dict[str, Any], preferred: str, forced: bool = False, record: bool = True) -> str:
        """The rater label for a run with ``identity``.

        An identical earlier run under the same preferred label keeps its label (its judgments
        resume). A new set of settings gets ``preferred`` or, when another run holds that label,
        ``preferred#<digest>``. Identical settings under another preferred label are another
        rater (e.g. NLE's ``+dynamic`` stage, which asks other prompts with the same settings). With ``forced`` the label is the user's: if it was used with
        other settings the call fails with one line naming what changed — old judgments
        are never returned for new settings.

        Args:
            identity: the run's settings (:func:`judgelab.run.run_identity`).
            preferred: the label wanted (``--rater``, a recipe's label, or ``model@template``).
            forced: the user insists on ``preferred``; other settings under it are an error.
            record: write a new label into the ``runs`` table. ``False`` answers the same
                label without writing (planning, ``--dry-run``; works on a read-only store).

        Returns:
            The rater label the run's judgments are stored under.

        Raises:
            JudgelabError: a forced label used with other settings, or a judgelab 0.1 label.

        Example:
            >>> store = Store(":memory:")
            >>> store.claim_rater({"samples": 3}, "gemma@story")
            'gemma@story'
            >>> store.claim_rater({"samples": 5}, "gemma@story", record=False)[:12]
            'gemma@story#'
        """
        blob = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()
        has_runs = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone()
        rows = {r[0]: (r[1], r[2]) for r in self._db.execute("SELECT rater, digest, identity FROM runs")} if has_runs else {}
        if not forced:  # an identical earlier run under this label (or its #digest form) resumes
            for label, (d, _) in sorted(rows.items()):
                if d == digest and (label == preferred or label.startswith(preferred + "#")):
                    return label
        legacy = {r[0] for r in self._db.execute("SELECT DISTINCT rater FROM judgments")} - set(rows)
        label = preferred
        if forced:
            if label in rows and rows[label][0] != digest:
                changed = describe_changes(json.loads(rows[label][1]), identity)
                raise JudgelabError(f"rater {label!r} in {self.path} was run with other settings ({changed}); "
                                    "drop --rater for a new label, or use another --out")
        elif label in rows or label in legacy:
            label = f"{preferred}#{digest[:6]}"
        if label in legacy:
            raise JudgelabError(f"rater {label!r} in {self.path} was written by judgelab 0.1, which did not record its "
                                "settings; use another --out (or another --rater)")
        if label not in rows and record:
            self._write("INSERT INTO runs VALUES (?, ?, ?, ?)", (label, digest, blob, time.time()))
        return label

    def runs(self) -> dict[str, dict[str, Any]]:
        """Rater label → the settings (run identity) it was recorded with.

        Returns:
            ``{label: identity}`` ({} for a judgelab 0.1 store, which kept no settings).

        Example:
            >>> store = Store(":memory:"); _ = store.claim_rater({"samples": 1}, "r")
            >>> store.runs()
            {'r': {'samples': 1}}
        """
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone():
            return {}
        out: dict[str, dict[str, Any]] = {}
        for rater, identity in self._db.execute("SELECT rater, identity FROM runs"):
            try:
                out[str(rater)] = json.loads(identity)
            except (TypeError, ValueError):
                out[str(rater)] = {}
        return out

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            raise _write_error(self.path, exc) from None

    # -- journal of answered calls (survives a kill between group commits) ------------
    def _replay_journal(self) -> None:
        """Write the journal's answered calls into the ledger, then remove it.

        Each line is checked first: a torn last line (the kill) is ignored, and a line whose key or
        answer is not what the ledger holds (damage, an edit by hand) is left out with one warning,
        so a bad answer never reaches the ledger. A journal that is not a file (a folder of that
        name) is moved aside with a warning.
        """
        path = self._journal_path
        if path is None or not (path.exists() or path.is_symlink()):
            return
        if not path.is_file():
            aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
            try:
                path.rename(aside)
            except OSError as exc:
                raise JudgelabError(f"{path} is not a journal file and cannot be moved aside ({exc.strerror or exc}); "
                                    "move it away and run again") from None
            logger.warning("%s was not a journal file; moved aside to %s", path, aside.name)
            return
        from judgelab.models.base import JudgeResponse

        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise JudgelabError(f"cannot read {path}: {exc.strerror or exc}") from None
        rows, damaged = [], 0
        lines = text.split("\n")  # JSON lines: "\n" only
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, request, response = entry["key"], entry["request"], entry["response"]
                if not (isinstance(key, str) and key and isinstance(request, dict)):
                    raise ValueError("not a ledger entry")
                JudgeResponse.from_json(response)  # raises on anything that is not a stored answer
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                if number < len(lines) - 1:  # the last line may be torn by a kill; others are damage
                    damaged += 1
                continue
            rows.append((key, request, response))
        if damaged:
            logger.warning("%s: %d damaged line(s) left out; their calls are asked again", path, damaged)
        if rows:
            self.put(calls=rows)
        path.unlink()

    def journal_call(self, key: str, request: dict[str, Any] | str, response: dict[str, Any] | str) -> None:
        """Append an answered call to the journal at once (cheap; the database write may follow later).

        Args:
            key: the ledger key.
            request, response: dicts, or JSON text already (nothing is serialised twice).

        Raises:
            JudgelabError: the journal cannot be written (finished judgments are kept).
        """
        if self._journal_path is None:
            return
        try:
            if self._journal is None:
                self._journal = open(self._journal_path, "a", encoding="utf-8")
            self._journal.write(f'{{"key":"{key}","request":{_as_json(request)},"response":{_as_json(response)}}}\n')
            self._journal.flush()
        except OSError as exc:
            raise JudgelabError(f"cannot write {self._journal_path}: {exc.strerror or exc}; "
                                "finished judgments are kept in the store") from None

    def close(self) -> None:
        """Close the store: replay the journal into the database, then release the lock."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            if self._journal_path is not None and self._journal_path.exists():
                self._replay_journal()  # everything journaled is in the database before the journal goes
        self._db.close()
        self._release_lock()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- call ledger -----------------------------------------------------
    def get_call(self, key: str) -> dict[str, Any] | None:
        """The stored response of a call, or ``None`` (also for a damaged entry, which is dropped so
        the call is asked again; a warning says so).

        Args:
            key: the ledger key.

        Returns:
            The response as a dict (:meth:`JudgeResponse.from_json` reads it).
        """
        row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        from judgelab.models.base import JudgeResponse

        try:
            data = json.loads(row[0])
            JudgeResponse.from_json(data)
        except (TypeError, ValueError, KeyError):
            self.dropped_calls += 1
            logger.warning("%s: a damaged answer in the call ledger (key %s…) was dropped and is asked again",
                           self.path, key[:12])
            if not self.read_only:
                self._write("DELETE FROM calls WHERE key = ?", (key,))
            return None
        return data

    def call_keys(self) -> set[str]:
        """The keys of every call in the ledger."""
        return {r[0] for r in self._db.execute("SELECT key FROM calls")}

    def put_call(self, key: str, request: dict[str, Any] | str, response: dict[str, Any] | str) -> None:
        """Write one answered call at once (outside a group commit).

        Args:
            key: the ledger key.
            request, response: dicts or JSON text.

        Example:
            >>> store = Store(":memory:"); store.put_call("k", {"q": 1}, {"choices": [{"text": "4"}]})
            >>> store.get_call("k")
            {'choices': [{'text': '4'}]}
        """
        self.put(calls=[(key, request, response)])

    def put(self, calls: Iterable[tuple[str, Any, Any]] = (), judgments: Iterable[Judgment] = (),
            replace: bool = False) -> None:
        """Write calls and judgments in one transaction.

        Args:
            calls: ``(key, request, response)`` rows, request and response as dicts or JSON text
                (an existing key is kept: a call is answered once).
            judgments: :class:`Judgment` rows.
            replace: a judgment replaces the stored one of the same (rater, criterion, system,
                item, sample) — the runner's re-judgments of changed prompts and of ``error``
                rows. Without it the stored one is kept (first answer wins: the annotation app).

        Raises:
            JudgelabError: the disk is full or the store is not writable (one line).
        """
        now = time.time()
        call_rows = [(k, _as_json(q), _as_json(r), now) for k, q, r in calls]
        judgment_rows = [self._row(j) for j in judgments]
        try:
            with self._db:
                self._db.execute("BEGIN")
                if call_rows:
                    self._db.executemany("INSERT OR IGNORE INTO calls (key, request, response, created) VALUES (?, ?, ?, ?)", call_rows)
                if judgment_rows:
                    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
                    self._db.executemany(f"{verb} INTO judgments ({_JUDGMENT_COLUMNS}) VALUES ({','.join('?' * 19)})",
                                         judgment_rows)
        except sqlite3.OperationalError as exc:
            raise _write_error(self.path, exc) from None

    def n_calls(self) -> int:
        """The number of calls in the ledger."""
        return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    # -- judgments ---------------------------------------------------------
    def done(self) -> set[tuple[str, str, str, str, int]]:
        """The primary keys (rater, criterion, system, item_id, sample) of every recorded judgment."""
        rows = self._db.execute("SELECT rater, criterion, system, item_id, sample FROM judgments")
        return {(r[0], r[1], r[2], r[3], r[4]) for r in rows}

    def bindings(self, rater: str) -> dict[tuple[str, str, str, int], tuple[str | None, str, str | None]]:
        """What each of a rater's judgments answered: ``(criterion, system, item_id, sample) →
        (prompt_key, status, group)``. The runner re-asks a judgment whose prompt key differs from
        the planned prompt's, or whose status is ``error``.

        Args:
            rater: the rater label.

        Returns:
            One entry per stored judgment of ``rater``.
        """
        rows = self._db.execute("SELECT criterion, system, item_id, sample, prompt_key, status, grp FROM judgments "
                                "WHERE rater = ?", (rater,))
        return {(r[0], r[1], r[2], int(r[3])): (r[4], r[5], r[6]) for r in rows}

    def regroup(self, rater: str, groups: Iterable[tuple[str, str, str | None]]) -> None:
        """Set the group of a rater's judgments of items whose group changed (the answers stay valid:
        the group is not part of the prompt).

        Args:
            rater: the rater label.
            groups: ``(system, item_id, group)`` per item.
        """
        rows = [(g, rater, system, item_id) for system, item_id, g in groups]
        if not rows:
            return
        try:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("UPDATE judgments SET grp = ? WHERE rater = ? AND system = ? AND item_id = ?", rows)
        except sqlite3.OperationalError as exc:
            raise _write_error(self.path, exc) from None

    def _row(self, j: Judgment) -> tuple[Any, ...]:
        self._seq += 1
        return (
            j.item_id, j.system, j.group, j.criterion, j.rater, j.sample, j.score, j.score_parsed, j.score_logprob,
            j.logprob_outside, j.status, j.raw, json.dumps(j.attempts, ensure_ascii=False), j.prompt_tokens,
            j.completion_tokens, j.latency_s, json.dumps(j.meta, ensure_ascii=False, sort_keys=True), self._seq,
            j.prompt_key,
        )

    def ratings(self, with_meta: bool = False, rater: str | None = None) -> "pd.DataFrame":
        """The tidy ratings table, sorted deterministically (independent of finishing order).

        Args:
            with_meta: add ``attempts`` (every answer with its call key, JSON), ``call_key``
                (the call of the final answer), ``prompt_tokens``, ``completion_tokens``,
                ``latency_s`` and ``meta`` (the run's settings, JSON).
            rater: only this rater's rows.

        Returns:
            One row per judgment, columns :data:`RATING_COLUMNS` (then the meta columns).

        Token accounting (``with_meta``): a call answers several judgments — all samples
        of an ``n`` request, every metric of a multi-metric criterion — and a refusal costs
        calls besides the final one. So that summing the columns gives the true total, each
        call's tokens (from the ledger) are counted once, on the first row of this table
        whose ``attempts`` name it, and 0 on the others: the column sums equal the sums over
        the calls the rows used. ``latency_s`` stays the final call's latency on every row.

        Example:
            >>> store = Store(":memory:")
            >>> list(store.ratings().columns[:7])
            ['item_id', 'system', 'group', 'criterion', 'rater', 'sample', 'score']
        """
        import pandas as pd

        if rater is None:
            df = pd.read_sql_query("SELECT * FROM judgments", self._db)
        else:
            df = pd.read_sql_query("SELECT * FROM judgments WHERE rater = ?", self._db, params=(rater,))
        df = df.rename(columns={"grp": "group"})
        df = df.sort_values(["rater", "criterion", "system", "item_id", "sample"], kind="mergesort").reset_index(drop=True)
        if not with_meta:
            return df[RATING_COLUMNS]
        df = self._tokens_once_per_call(df)
        return df[RATING_COLUMNS + ["attempts", "call_key", "prompt_tokens", "completion_tokens", "latency_s", "meta"]]

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


class GroupWriter:
    """Group commit for one store: answered calls and judgments written together, in batches.

    The runner only records judgments it planned as to be asked (new ones, changed prompts,
    earlier ``error`` rows), so a recorded judgment replaces the stored one.

    Per-call transactions cost more than the rest of the pipeline at concurrency 64, so
    records wait at most :attr:`FLUSH_SECONDS` or until :attr:`FLUSH_RECORDS` are waiting.
    Answers are journaled by the caller first (:meth:`Store.journal_call`), so nothing
    answered is lost in that window. One writer per store and run; not thread-safe (one
    asyncio loop).

    Args:
        store: the store written to.

    Example:
        >>> store = Store(":memory:")
        >>> writer = GroupWriter(store)
        >>> writer.add(calls=[("k", {"q": 1}, {"choices": []})])
        >>> writer.flush(); store.n_calls()
        1
    """

    #: Records are written at most this late, or when this many are waiting.
    FLUSH_SECONDS = 0.05
    FLUSH_RECORDS = 64

    def __init__(self, store: "Store") -> None:
        self.store = store
        self._calls: list[tuple[str, Any, Any]] = []
        self._judgments: list[Judgment] = []
        self._since = 0.0

    @property
    def waiting(self) -> int:
        """Records buffered and not yet written."""
        return len(self._calls) + len(self._judgments)

    def add(self, calls: Iterable[tuple[str, Any, Any]] = (), judgments: Iterable[Judgment] = ()) -> None:
        """Buffer records and write the group when it is full or old enough.

        Args:
            calls: ``(key, request, response)`` ledger rows (dicts or JSON text).
            judgments: judgments to write in the same transaction as the calls.
        """
        if not self._calls and not self._judgments:
            self._since = time.monotonic()
        self._calls.extend(calls)
        self._judgments.extend(judgments)
        if self.waiting >= self.FLUSH_RECORDS or time.monotonic() - self._since >= self.FLUSH_SECONDS:
            self.flush()

    def keep(self, calls: Iterable[tuple[str, Any, Any]]) -> None:
        """Buffer calls without a size or age check (a failing job's paid calls; written by the next flush).

        Args:
            calls: ``(key, request, response)`` ledger rows.
        """
        self._calls.extend(calls)

    def flush(self) -> None:
        """Write everything buffered in one transaction (kept buffered if the write fails)."""
        if self._calls or self._judgments:
            self.store.put(calls=self._calls, judgments=self._judgments, replace=True)
            self._calls, self._judgments = [], []

    async def flusher(self) -> None:
        """Run as a task beside the workers: writes records that waited ``FLUSH_SECONDS`` while calls are slow."""
        import asyncio

        while True:
            await asyncio.sleep(self.FLUSH_SECONDS)
            if self.waiting and time.monotonic() - self._since >= self.FLUSH_SECONDS:
                self.flush()


def write_table(df: "pd.DataFrame | None", path: str | Path, *, check_only: bool = False) -> Path:
    """Write a table as CSV, JSONL or Parquet, by the file's extension (atomically: a temporary file is renamed).

    Everything that can be checked is checked before writing; on any failure the temporary
    file is removed, so a refused or failed write leaves nothing behind (an existing file
    at ``path`` is kept as it was).

    Args:
        df: the table.
        path: ``.csv``, ``.jsonl``/``.json`` (JSON lines) or ``.parquet``.
        check_only: only check ``path`` (extension, folder) and write nothing — what a command
            does before any work (``df`` may then be None).

    Returns:
        The path written (or that would be written).

    Raises:
        JudgelabError: an unknown extension, a missing output folder, a target that is a
            folder, or a file that cannot be written (one line).

    Example:
        >>> import pandas as pd, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> write_table(pd.DataFrame({"r": [0.5]}), folder / "t.csv").read_text().splitlines()
        ['r', '0.5']
    """
    import os
    import tempfile

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".jsonl", ".json", ".parquet"}:
        what = f"unknown output format {suffix!r}" if suffix else f"{path} has no extension"
        raise JudgelabError(f"{what}: use .csv, .jsonl or .parquet")
    if not path.parent.exists():
        raise JudgelabError(f"output folder does not exist: {path.parent}")
    if not path.parent.is_dir():
        raise JudgelabError(f"cannot write {path}: {path.parent} is a file, not a folder")
    if path.is_dir():
        raise JudgelabError(f"cannot write {path}: it is a folder; give a file name, e.g. {path / ('table' + suffix)}")
    if not os.access(path.parent, os.W_OK):
        raise JudgelabError(f"cannot write {path}: the folder {path.parent} is not writable")
    if check_only:
        return path
    if df is None:
        raise TypeError("write_table needs a table unless check_only=True")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise JudgelabError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        if suffix == ".csv":
            df.to_csv(tmp, index=False)
        elif suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the table from the user's group
        os.replace(tmp, path)
    except OSError as exc:
        raise JudgelabError(f"cannot write {path}: {exc.strerror or exc}") from None
    except ImportError as exc:  # .parquet without pyarrow
        raise JudgelabError(f"cannot write {path}: {' '.join(str(exc).split())}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _write_error(path: str, exc: sqlite3.OperationalError) -> JudgelabError:
    text = str(exc)
    if "full" in text:
        return JudgelabError(f"{path}: the disk is full ({text}); finished judgments are kept — free space and run again")
    if "readonly" in text or "read-only" in text:
        return JudgelabError(f"{path}: the store cannot be written ({text})")
    return JudgelabError(f"{path}: cannot write the store ({text})")


def describe_changes(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> str:
    """Human-readable differences between two run identities, e.g. ``sampling.temperature 1.0 → 0.7``.

    Args:
        old, new: run identities (:func:`judgelab.run.run_identity`).
        prefix: the dotted path of nested keys (used in recursion).

    Returns:
        The changes joined by ``"; "`` ("" when equal).

    Example:
        >>> describe_changes({"samples": 3, "sampling": {"temperature": 1.0}}, {"samples": 5, "sampling": {"temperature": 0.7}})
        'samples 3 → 5; sampling.temperature 1.0 → 0.7'
    """
    parts = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        name = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            parts.append(describe_changes(a, b, name + "."))
        elif key == "template_sha256":
            parts.append(f"template text changed (sha256 {str(a)[:8]} → {str(b)[:8]})")
        else:
            parts.append(f"{name} {a!r} → {b!r}")
    return "; ".join(p for p in parts if p)
