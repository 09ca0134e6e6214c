"""The call ledger: one row per answered call, journaled first so a kill loses none."""
from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import IO, Any, Iterable

from judgelab.errors import JudgelabError
from judgelab.store.schema import in_chunks

__all__ = ["Ledger"]

logger = logging.getLogger("judgelab.store")

def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)



class Ledger:
    """The store's ``calls`` table and journal (a part of :class:`judgelab.store.Store`)."""

    _db: sqlite3.Connection
    path: str
    read_only: bool
    dropped_calls: int
    _journal: IO[bytes] | None
    _journal_path: Path | None
    #: Keys journaled and not yet committed to the database (the journal is emptied when none is left).
    _journaled: set[str]

    def _write(self, sql: str, params: tuple[Any, ...]) -> None: ...  # defined by Store

    def put(self, calls: Any = (), judgments: Any = (), replace: bool = False) -> None: ...  # defined by Store

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
        from judgelab.answers import JudgeResponse

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

        The line goes to the operating system in one unbuffered ``write`` (no Python buffer, no
        ``fsync``): it survives a ``kill -9`` of the process, which loses nothing the operating
        system holds; a power loss may lose the last lines, as it may the database's last
        transactions (``synchronous=NORMAL``).

        Args:
            key: the ledger key.
            request, response: dicts, or JSON text already (nothing is serialised twice).

        Raises:
            JudgelabError: the journal cannot be written (finished judgments are kept).
        """
        if self._journal_path is None:
            return
        line = f'{{"key":"{key}","request":{_as_json(request)},"response":{_as_json(response)}}}\n'.encode("utf-8")
        try:
            if self._journal is None:
                self._journal = open(self._journal_path, "ab", buffering=0)  # unbuffered: each line one write(2)
            written = self._journal.write(line)
            while written is not None and written < len(line):  # a short write (rare): the rest, at once
                line = line[written:]
                written = self._journal.write(line)
            self._journaled.add(key)
        except OSError as exc:
            raise JudgelabError(f"cannot write {self._journal_path}: {exc.strerror or exc}; "
                                "finished judgments are kept in the store") from None

    def _committed(self, keys: Iterable[str]) -> None:
        """Calls just committed to the database: once every journaled call is, the journal is
        emptied, so it holds only the answers of the current group (a kill loses none of them,
        and closing the store or the next run replays a few lines, not the whole run)."""
        if not self._journaled:
            return
        self._journaled.difference_update(keys)
        if not self._journaled and self._journal is not None:
            try:
                self._journal.truncate(0)  # opened for appending: the next line is written at 0
            except OSError as exc:
                raise JudgelabError(f"cannot write {self._journal_path}: {exc.strerror or exc}; "
                                    "finished judgments are kept in the store") from None

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
        from judgelab.answers import JudgeResponse

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

    def has_call(self, key: str) -> bool:
        """Whether the ledger holds a call of ``key`` (by the key's index; a damaged entry counts until read)."""
        return self._db.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def call_keys(self) -> set[str]:
        """The keys of every call in the ledger."""
        return {r[0] for r in self._db.execute("SELECT key FROM calls")}

    def put_call(self, key: str, request: dict[str, Any] | str, response: dict[str, Any] | str) -> None:
        """Write one answered call at once (outside a group commit).

        Args:
            key: the ledger key.
            request, response: dicts or JSON text.

        Example:
            >>> from judgelab.store import Store
            >>> store = Store(":memory:"); store.put_call("k", {"q": 1}, {"choices": [{"text": "4"}]})
            >>> store.get_call("k")
            {'choices': [{'text': '4'}]}
        """
        self.put(calls=[(key, request, response)])

    def calls_of(self, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
        """key → (request JSON, response JSON) as stored, for the given keys (absent keys are left out)."""
        out: dict[str, tuple[str, str]] = {}
        for chunk, marks in in_chunks(sorted({k for k in keys if k})):
            for key, request, response in self._db.execute(
                    f"SELECT key, request, response FROM calls WHERE key IN ({marks})", chunk):
                out[key] = (request, response)
        return out

    def responses_of(self, keys: Iterable[str]) -> dict[str, str]:
        """key → the response JSON as stored, for the given keys (absent keys are left out)."""
        out: dict[str, str] = {}
        for chunk, marks in in_chunks(sorted({k for k in keys if k})):
            out.update(self._db.execute(f"SELECT key, response FROM calls WHERE key IN ({marks})", chunk).fetchall())
        return out

    def attempts_of(self, rater: str, chunk_rows: int = 10_000) -> Iterable[list[Any]]:
        """The ``attempts`` JSON of ``rater``'s judgments, a chunk of at most ``chunk_rows`` at a time."""
        cursor = self._db.execute("SELECT attempts FROM judgments WHERE rater = ?", (rater,))
        while rows := cursor.fetchmany(chunk_rows):
            yield [attempts for (attempts,) in rows]

    def gather_keys(self, keys: Iterable[str], fresh: bool = False) -> None:
        """Add ledger keys to a temporary set of keys (``fresh``: emptied first) whose responses
        :meth:`gathered_responses` reads: distinct keys on disk, not in memory."""
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS judgelab_gathered_keys (key TEXT PRIMARY KEY) WITHOUT ROWID")
        if fresh:
            db.execute("DELETE FROM judgelab_gathered_keys")
        db.executemany("INSERT OR IGNORE INTO judgelab_gathered_keys VALUES (?)", ((k,) for k in keys if k))

    def gathered_responses(self, chunk_rows: int = 10_000) -> Iterable[str]:
        """The stored response JSON of each gathered key the ledger holds (:meth:`gather_keys`)."""
        cursor = self._db.execute("SELECT c.response FROM judgelab_gathered_keys g JOIN calls c ON c.key = g.key")
        while rows := cursor.fetchmany(chunk_rows):
            yield from (response for (response,) in rows)

    def status_counts(self) -> list[tuple[str, str, str, int]]:
        """(rater, criterion, status, judgments) of every judgment, grouped."""
        return [(str(r), str(c), str(s), int(n)) for r, c, s, n in self._db.execute(
            "SELECT rater, criterion, status, COUNT(*) FROM judgments GROUP BY rater, criterion, status")]

    def call_span(self) -> tuple[float, float, int] | None:
        """(first, last) recording time of the calls and their number; None when there are none."""
        row = self._db.execute("SELECT MIN(created), MAX(created), COUNT(*) FROM calls").fetchone()
        return None if not row or row[2] == 0 else (float(row[0]), float(row[1]), int(row[2]))

    def n_calls(self) -> int:
        """The number of calls in the ledger."""
        return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
