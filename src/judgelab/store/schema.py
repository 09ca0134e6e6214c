"""The store's tables, its format marker and the migration from earlier versions."""
from __future__ import annotations

import json
import sqlite3
import time

from judgelab.errors import JudgelabError
from judgelab.raters import FIELDS, parse_label
from judgelab.store.judgments import prompt_key

__all__ = ["STORE_FORMAT", "STORE_VERSION", "SCHEMA", "JUDGMENT_COLUMNS", "check_format", "migrate", "upgraded_copy", "write_error"]

STORE_FORMAT = "judgelab-store"
STORE_VERSION = 6

SCHEMA = """
CREATE TABLE IF NOT EXISTS judgelab_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    rater TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    identity TEXT NOT NULL,
    created REAL NOT NULL,
    rater_kind TEXT,
    judge TEXT,
    template TEXT,
    variant TEXT,
    constrained INTEGER,
    label_digest TEXT
);
CREATE TABLE IF NOT EXISTS run_log (
    rater TEXT NOT NULL,
    started REAL NOT NULL,
    wall_s REAL NOT NULL,
    calls_made INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    planned INTEGER,
    already INTEGER,
    done INTEGER,
    failed INTEGER,
    retries TEXT,
    updated REAL,
    ended REAL,
    outcome TEXT,
    pid INTEGER
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
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    run TEXT NOT NULL,
    rater TEXT NOT NULL,
    endpoint TEXT,
    provider_file TEXT,
    provider_batch TEXT,
    state TEXT NOT NULL,
    detail TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_requests (
    batch TEXT NOT NULL,
    key TEXT NOT NULL,
    request TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (batch, key)
);
CREATE INDEX IF NOT EXISTS batch_requests_key ON batch_requests (key);
CREATE TABLE IF NOT EXISTS items (
    rater TEXT NOT NULL,
    system TEXT NOT NULL,
    item_id TEXT NOT NULL,
    grp TEXT,
    text TEXT NOT NULL,
    context TEXT,
    parts TEXT,
    PRIMARY KEY (rater, system, item_id)
);
"""

#: Columns of the ``judgments`` table in the order :meth:`Store._row` fills them.
JUDGMENT_COLUMNS = ("item_id, system, grp, criterion, rater, sample, score, score_parsed, score_logprob, "
                     "logprob_outside, status, raw, attempts, prompt_tokens, completion_tokens, latency_s, meta, seq, "
                     "prompt_key")


def check_format(db: sqlite3.Connection, path: str, require_tables: bool) -> None:
    """Refuse SQLite files that are not judgelab stores (a foreign ``judgments`` table, another app's database)."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        if require_tables:
            raise JudgelabError(f"{path}: an empty database, not a judgelab store")
        return
    if "judgelab_meta" in tables:
        meta = dict(db.execute("SELECT name, value FROM judgelab_meta").fetchall())
        if meta.get("format") != STORE_FORMAT:
            raise JudgelabError(f"{path}: not a judgelab store (format {meta.get('format')!r})")
        if int(meta.get("version", "0")) > STORE_VERSION:
            raise JudgelabError(f"{path}: written by a newer judgelab (store version {meta['version']}); upgrade judgelab")
        return
    expected = {"calls": {"key", "request", "response", "created"},
                "judgments": {"item_id", "system", "criterion", "rater", "sample", "status", "meta", "seq"}}
    for table, columns in expected.items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")} if table in tables else set()
        if not columns <= have:
            raise JudgelabError(f"{path}: not a judgelab store (table {table!r} missing or of another shape)")


def migrate(db: sqlite3.Connection) -> None:
    """Bring a store of an earlier version up to this one (version 2 → 3: ``judgments.prompt_key``,
    filled in from the ledger, so a store written before resumes without asking again; 3 → 4: the
    ``items`` table, made by :data:`SCHEMA`'s ``CREATE TABLE IF NOT EXISTS`` and filled by the next run;
    the ``run_log`` table is made the same way, without a new version: a store without it is read as one
    whose runs were not logged, :meth:`judgelab.store.runs.RunLabels.run_totals`; 4 → 5: the rater's identity
    as columns of ``runs``; 5 → 6: a run's progress in ``run_log`` (:data:`RUN_PROGRESS_COLUMNS`), written
    while it runs; earlier entries have none)."""
    _label_columns(db)
    have = {r[1] for r in db.execute("PRAGMA table_info(run_log)")}
    for name, kind in RUN_PROGRESS_COLUMNS:
        if name not in have:
            db.execute(f"ALTER TABLE run_log ADD COLUMN {name} {kind}")
    columns = {r[1] for r in db.execute("PRAGMA table_info(judgments)")}
    if "prompt_key" not in columns:
        db.execute("ALTER TABLE judgments ADD COLUMN prompt_key TEXT")
    rows = db.execute("SELECT rowid, attempts FROM judgments WHERE prompt_key IS NULL AND attempts != '[]'").fetchall()
    if rows:
        updates = []
        for rowid, attempts in rows:
            try:
                keys = [a["key"] for a in json.loads(attempts) if isinstance(a, dict) and a.get("key")]
            except (TypeError, ValueError):
                keys = []
            found = db.execute("SELECT request FROM calls WHERE key = ?", (keys[-1],)).fetchone() if keys else None
            try:
                messages = json.loads(found[0])["messages"] if found else None
            except (TypeError, ValueError, KeyError):
                messages = None
            if messages is not None:
                updates.append((prompt_key(messages), rowid))
        with db:
            db.execute("BEGIN")
            db.executemany("UPDATE judgments SET prompt_key = ? WHERE rowid = ?", updates)
    # from now on runs are logged (``run_log``): labels claimed earlier had runs that were not
    db.execute("INSERT OR IGNORE INTO judgelab_meta VALUES ('run_log_since', ?)", (repr(time.time()),))
    db.execute("UPDATE judgelab_meta SET value = ? WHERE name = 'version' AND CAST(value AS INTEGER) < ?",
                     (str(STORE_VERSION), STORE_VERSION))


#: The ``run_log`` columns of a run's progress, written while it runs (store version 6): judgments the plan
#: covers, found in the store at the start, done so far (those included), failed, retries by reason (JSON),
#: when they were last written, when and how the run ended (``NULL`` while it runs or when its process died),
#: and the process that runs it.
RUN_PROGRESS_COLUMNS = (("planned", "INTEGER"), ("already", "INTEGER"), ("done", "INTEGER"), ("failed", "INTEGER"),
                        ("retries", "TEXT"), ("updated", "REAL"), ("ended", "REAL"), ("outcome", "TEXT"),
                        ("pid", "INTEGER"))


#: The ``runs`` table's columns of the rater's identity (:attr:`judgelab.raters.Rater.fields`; the label's
#: digest is ``label_digest``: ``digest`` is the settings' digest).
RUN_LABEL_COLUMNS = ("rater_kind", "judge", "template", "variant", "constrained", "label_digest")


def run_label_values(label: str) -> tuple[object, ...]:
    """The :data:`RUN_LABEL_COLUMNS` of a rater label."""
    fields = parse_label(label).fields
    return (*(fields[k] for k in FIELDS[:4]), int(bool(fields["constrained"])), fields["digest"])


def _label_columns(db: sqlite3.Connection) -> None:
    """Version 4 → 5: the rater's identity as columns of ``runs``, derived once from each label."""
    have = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
    for name in RUN_LABEL_COLUMNS:
        if name not in have:
            db.execute(f"ALTER TABLE runs ADD COLUMN {name} {'INTEGER' if name == 'constrained' else 'TEXT'}")
    labels = [r[0] for r in db.execute("SELECT rater FROM runs WHERE rater_kind IS NULL")]
    if labels:
        with db:
            db.execute("BEGIN")
            db.executemany(f"UPDATE runs SET {', '.join(c + ' = ?' for c in RUN_LABEL_COLUMNS)} WHERE rater = ?",
                           [(*run_label_values(label), label) for label in labels])


def upgraded_copy(db: sqlite3.Connection) -> sqlite3.Connection | None:
    """For a store opened read-only: an in-memory copy brought up to this version by :func:`migrate`
    when the file is of version 2 (no ``judgments.prompt_key``), else ``None`` (read the file itself).

    A dry run or a report then reads an old store as a resume does (prompt keys from the ledger's
    requests), and the file stays byte for byte as it was. The copy holds the whole store in memory.
    """
    if "prompt_key" in {r[1] for r in db.execute("PRAGMA table_info(judgments)")}:
        return None
    copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.backup(copy)
    copy.executescript(SCHEMA)
    migrate(copy)
    return copy


def in_chunks(keys: list[str], size: int = 500):
    """``(chunk, "?,?,…")`` pairs over ``keys``: SQLite limits the variables of one statement, so an
    ``IN (…)`` over many keys is asked in pieces."""
    for start in range(0, len(keys), size):
        chunk = keys[start:start + size]
        yield chunk, ",".join("?" * len(chunk))


def write_error(path: str, exc: sqlite3.OperationalError) -> JudgelabError:
    """The one line a failed write of the store gives (a full disk, a read-only file, anything else)."""
    text = str(exc)
    if "full" in text:
        return JudgelabError(f"{path}: the disk is full ({text}); finished judgments are kept — free space and run again")
    if "readonly" in text or "read-only" in text:
        return JudgelabError(f"{path}: the store cannot be written ({text})")
    return JudgelabError(f"{path}: cannot write the store ({text})")
