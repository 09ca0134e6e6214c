"""Batches: the requests a run handed to a batch (an offline batch file or a provider's batch API).

Two tables, written *before* anything leaves the process, so a killed run finds its batches:

* ``batches`` — one row per batch: judgelab's own id, its kind (``file`` for an exported batch
  file, ``openai`` for a provider batch), the run identity digest and rater it was made for, the
  provider's file and batch ids once known, its state and a JSON ``detail`` (counts, files,
  limits). States: ``prepared`` (recorded, nothing sent), ``uploaded`` (input file at the
  provider), ``submitted`` (batch created), ``done`` (answers recorded in the ledger), and the
  provider's final states ``expired``/``failed``/``cancelled`` once their answers are recorded;
  ``refused`` (the provider did not accept the file or the batch) and ``lost`` (no endpoint knows
  the batch any more) ran nothing that judgelab could record.
* ``batch_requests`` — one row per (batch, ledger key): the canonical request description
  (what the ledger records with the answer) and the request's state (``sent``; ``answered``;
  ``failed``: an answer came back failed; ``missed``: the batch ended without running it — expired,
  cancelled, refused, lost). A key's rows over all batches count its submissions.

Answers never live here: they go to the call ledger (``calls``) exactly as live answers do.
"""
from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from judgelab.errors import JudgelabError
from judgelab.store.schema import in_chunks, write_error

__all__ = ["BatchTable", "BatchRecord", "OPEN_STATES", "FINAL_STATES"]

#: States of a batch whose answers are not recorded yet (a resumed run continues them).
OPEN_STATES = ("prepared", "uploaded", "submitted")
#: States of a batch whose answers (if any) are in the ledger.
FINAL_STATES = ("done", "expired", "failed", "cancelled", "refused", "lost", "exported")


@dataclass(frozen=True)
class BatchRecord:
    """One row of the ``batches`` table.

    Attributes:
        id: judgelab's id of the batch (``b-`` and 12 hex digits).
        kind: ``file`` (an exported batch file) or ``openai`` (a provider batch).
        run: the run identity digest it was made for; rater: that run's label.
        endpoint: the base URL of the endpoint holding the batch (a fleet: its replica; ``None`` for a file;
            ``""`` for a fleet's batch recorded before replicas were recorded).
        provider_file, provider_batch: the provider's ids once known.
        state: see the module's docstring.
        detail: counts, file names, limits (JSON).
        created, updated: Unix times.
        n_requests: requests in the batch.
    """

    id: str
    kind: str
    run: str
    rater: str
    endpoint: str | None
    provider_file: str | None
    provider_batch: str | None
    state: str
    detail: dict[str, Any]
    created: float
    updated: float
    n_requests: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "run": self.run, "rater": self.rater, "endpoint": self.endpoint,
                "provider_file": self.provider_file, "provider_batch": self.provider_batch, "state": self.state,
                "requests": self.n_requests, "detail": self.detail, "created": self.created, "updated": self.updated}


class BatchTable:
    """The store's ``batches`` and ``batch_requests`` tables (a part of :class:`judgelab.store.Store`).

    Example:
        >>> from judgelab.store import Store
        >>> store = Store(":memory:")
        >>> store.add_batch("b-1", "file", run="r1", rater="m@t", requests=[("k1", '{"q": 1}')])
        >>> store.batch("b-1").state, store.batch_requests("b-1")
        ('prepared', {'k1': ('{"q": 1}', 'sent')})
    """

    _db: sqlite3.Connection

    def _write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...  # defined by Store

    def _write(self, sql: str, params: tuple[Any, ...]) -> None: ...  # defined by Store

    def _has_batches(self) -> bool:
        return bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batches'").fetchone())

    def add_batch(self, batch_id: str, kind: str, run: str, rater: str, requests: Iterable[tuple[str, str]],
                  endpoint: str | None = None, detail: dict[str, Any] | None = None, state: str = "prepared") -> None:
        """Record a batch and its requests in one transaction (before anything is sent).

        Args:
            batch_id: judgelab's id; kind: ``file`` or ``openai``; run, rater: the run it serves.
            requests: ``(ledger key, canonical request JSON)`` pairs.
            endpoint: the provider's base URL; detail: JSON-serialisable facts; state: the first state.
        """
        now = time.time()
        rows = [(batch_id, key, request, "sent") for key, request in requests]
        try:
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute("INSERT INTO batches VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)",
                                 (batch_id, kind, run, rater, endpoint, state, json.dumps(detail or {}), now, now))
                self._db.executemany("INSERT INTO batch_requests VALUES (?, ?, ?, ?)", rows)
        except sqlite3.OperationalError as exc:
            raise write_error(getattr(self, "path", ""), exc) from None

    def update_batch(self, batch_id: str, state: str | None = None, provider_file: str | None = None,
                     provider_batch: str | None = None, detail: dict[str, Any] | None = None,
                     endpoint: str | None = None) -> None:
        """Change a batch's state, provider ids, endpoint or detail (committed at once)."""
        sets: list[str] = ["updated = ?"]
        params: list[Any] = [time.time()]
        for column, value in (("state", state), ("provider_file", provider_file), ("provider_batch", provider_batch),
                              ("endpoint", endpoint)):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if detail is not None:
            sets.append("detail = ?")
            params.append(json.dumps(detail))
        self._write(f"UPDATE batches SET {', '.join(sets)} WHERE id = ?", (*params, batch_id))

    def drop_batch(self, batch_id: str) -> None:
        """Remove a batch that never left the process (state ``prepared``) and its requests."""
        try:
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute("DELETE FROM batch_requests WHERE batch = ?", (batch_id,))
                self._db.execute("DELETE FROM batches WHERE id = ?", (batch_id,))
        except sqlite3.OperationalError as exc:
            raise write_error(getattr(self, "path", ""), exc) from None

    def set_request_states(self, batch_id: str, states: Iterable[tuple[str, str]]) -> None:
        """``(key, state)`` of a batch's requests, in one transaction."""
        self._write_many("UPDATE batch_requests SET state = ? WHERE batch = ? AND key = ?",
                         [(state, batch_id, key) for key, state in states])

    def batches(self, kind: str | None = None, states: Iterable[str] | None = None) -> list[BatchRecord]:
        """The store's batches, oldest first (``[]`` for a store written before batches existed)."""
        if not self._has_batches():
            return []
        sql = ("SELECT b.*, (SELECT COUNT(*) FROM batch_requests r WHERE r.batch = b.id) FROM batches b")
        rows = self._db.execute(sql + " ORDER BY created, id").fetchall()
        wanted = None if states is None else set(states)
        out = []
        for row in rows:
            record = BatchRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], json.loads(row[8] or "{}"),
                                 row[9], row[10], int(row[11]))
            if (kind is None or record.kind == kind) and (wanted is None or record.state in wanted):
                out.append(record)
        return out

    def batch(self, batch_id: str) -> BatchRecord | None:
        """One batch by judgelab's id or the provider's batch id, or ``None``."""
        for record in self.batches():
            if batch_id in (record.id, record.provider_batch):
                return record
        return None

    def batch_requests(self, batch_id: str) -> dict[str, tuple[str, str]]:
        """Key → (canonical request JSON, state) of one batch's requests."""
        if not self._has_batches():
            return {}
        return {k: (q, s) for k, q, s in self._db.execute(
            "SELECT key, request, state FROM batch_requests WHERE batch = ?", (batch_id,))}

    def batches_of(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """Key → the batches it was handed to (oldest first); keys in no batch are left out."""
        if not self._has_batches():
            return {}
        out: dict[str, list[str]] = {}
        for chunk, marks in in_chunks(list(keys)):
            for key, batch in self._db.execute(
                    f"SELECT r.key, r.batch FROM batch_requests r JOIN batches b ON b.id = r.batch "
                    f"WHERE r.key IN ({marks}) ORDER BY b.created", chunk):
                out.setdefault(key, []).append(batch)
        return out

    def submissions(self, keys: Iterable[str], kind: str = "openai") -> Counter[str]:
        """How many batches of ``kind`` each key was submitted in (0 when never)."""
        counts: Counter[str] = Counter()
        if not self._has_batches():
            return counts
        for chunk, marks in in_chunks(list(keys)):
            for key, n in self._db.execute(
                    f"SELECT r.key, COUNT(*) FROM batch_requests r JOIN batches b ON b.id = r.batch "
                    f"WHERE b.kind = ? AND r.key IN ({marks}) GROUP BY r.key", [kind, *chunk]):
                counts[key] = int(n)
        return counts


def batch_store(out: str | Path) -> Path:
    """The store of a run's output folder, whose batches ``batch list`` and ``batch cancel`` read.

    Raises:
        JudgelabError: the folder has no store (one line naming the command that writes it).
    """
    path = Path(out) / "store.sqlite"
    if not path.is_file():
        raise JudgelabError(f"no store in {out}: a run's batches are kept in the store.sqlite that `judgelab rate "
                            f"--out {out}` writes; name the --out folder of that rate command")
    return path

