"""Runs: one rater label per set of settings (a run's identity), never reused for other settings."""
from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

from judgelab.digest import keyed_json
from judgelab.errors import JudgelabError
from judgelab.raters import claims, with_digest
from judgelab.store.schema import RUN_LABEL_COLUMNS, run_label_values

__all__ = ["RunLabels", "describe_changes"]


class RunLabels:
    """The store's ``runs`` table (a part of :class:`judgelab.store.Store`)."""

    _db: sqlite3.Connection
    path: str

    def _write(self, sql: str, params: tuple[Any, ...]) -> None: ...  # defined by Store

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
            JudgelabError: a forced label used with other settings, or one that holds annotations.

        Example:
            >>> from judgelab.store import Store
            >>> store = Store(":memory:")
            >>> store.claim_rater({"samples": 3}, "gemma@story")
            'gemma@story'
            >>> store.claim_rater({"samples": 5}, "gemma@story", record=False)[:12]
            'gemma@story#'
        """
        digest, blob = keyed_json(identity)
        has_runs = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone()
        rows = {r[0]: (r[1], r[2]) for r in self._db.execute("SELECT rater, digest, identity FROM runs")} if has_runs else {}
        if not forced:  # an identical earlier run under this label (or its #digest form) resumes
            for label, (d, _) in sorted(rows.items()):
                if d == digest and claims(label, preferred):
                    return label
        # labels with ratings but no run (the annotation app's human raters) are taken too
        others = {r[0] for r in self._db.execute("SELECT DISTINCT rater FROM judgments")} - set(rows)
        label = preferred
        if forced:
            if label in rows and rows[label][0] != digest:
                changed = describe_changes(json.loads(rows[label][1]), identity)
                raise JudgelabError(f"rater {label!r} in {self.path} was run with other settings ({changed}); "
                                    "drop --rater for a new label, or use another --out")
        elif label in rows or label in others:
            label = with_digest(preferred, digest[:6])
        if label in others:
            raise JudgelabError(f"rater {label!r} in {self.path} holds ratings that no judge run made (annotations); "
                                "choose another --rater")
        if label not in rows and record:
            self._write(f"INSERT INTO runs (rater, digest, identity, created, {', '.join(RUN_LABEL_COLUMNS)}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (label, digest, blob, time.time(), *run_label_values(label)))
        return label

    def runs(self) -> dict[str, dict[str, Any]]:
        """Rater label → the settings (run identity) it was recorded with.

        Returns:
            ``{label: identity}`` ({} for a judgelab 0.1 store, which kept no settings).

        Example:
            >>> from judgelab.store import Store
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

    def begin_run(self, rater: str, started: float, planned: int, already: int) -> int:
        """Open ``rater``'s entry in the ``run_log`` when its plan is known: ``planned`` judgments, ``already`` of
        them found in the store. :meth:`run_advanced` writes its progress and :meth:`log_run` its end; a process
        killed outright leaves the entry open (no end), which :meth:`last_run` reads as a run that stopped.

        Returns:
            The entry's id (for :meth:`run_advanced` and :meth:`log_run`).
        """
        self._write("INSERT INTO run_log (rater, started, wall_s, calls_made, prompt_tokens, completion_tokens, planned, "
                    "already, done, failed, retries, updated, pid) VALUES (?, ?, 0, 0, 0, 0, ?, ?, ?, 0, '{}', ?, ?)",
                    (rater, started, int(planned), int(already), int(already), time.time(), os.getpid()))
        return int(self._db.execute("SELECT last_insert_rowid()").fetchone()[0])

    def run_replanned(self, entry: int, planned: int, already: int) -> None:
        """The plan of the open run ``entry`` once known exactly (a batch run opens its entry before its batch
        rounds, with the judgments it asks for, and learns after them which the store already held)."""
        self._write("UPDATE run_log SET planned = ?, already = ?, done = MAX(done, ?), updated = ? WHERE rowid = ?",
                    (int(planned), int(already), int(already), time.time(), entry))

    def run_advanced(self, entry: int, done: int, failed: int, retries: dict[str, int]) -> None:
        """The progress of the open run ``entry``: judgments done (those found in the store included), failed,
        and retries by reason (:attr:`judgelab.models.retry.CallGate.counts`)."""
        self._write("UPDATE run_log SET done = ?, failed = ?, retries = ?, updated = ? WHERE rowid = ?",
                    (int(done), int(failed), json.dumps(dict(sorted(retries.items()))), time.time(), entry))

    def log_run(self, rater: str, started: float, wall_s: float, calls_made: int, prompt_tokens: int,
                completion_tokens: int, entry: int | None = None, outcome: str = "finished") -> None:
        """Log the end of one run of ``rater`` in the ``run_log`` table: when it started (epoch seconds), how long
        it took, the calls it made (ledger hits excluded), their tokens, and how it ended (``finished``,
        ``failed``, ``interrupted``) — in its entry opened by :meth:`begin_run`, else in a new one. Written by
        :func:`judgelab.run.run_spec` when a run ends (also when it fails or is interrupted)."""
        now = time.time()
        values = (float(wall_s), int(calls_made), int(prompt_tokens), int(completion_tokens), now, outcome)
        if entry is not None:
            self._write("UPDATE run_log SET wall_s = ?, calls_made = ?, prompt_tokens = ?, completion_tokens = ?, "
                        "ended = ?, outcome = ? WHERE rowid = ?", (*values, entry))
        else:
            self._write("INSERT INTO run_log (rater, started, wall_s, calls_made, prompt_tokens, completion_tokens, "
                        "ended, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (rater, started, *values))

    def last_run(self) -> dict[str, Any] | None:
        """The progress of the store's latest run that recorded it (a run of judgelab with store version 6 or
        later), as the run wrote it; ``None`` when no run did.

        Returns:
            ``{"rater", "started", "planned", "already", "done", "failed", "retries": {reason: n}, "updated",
            "ended", "outcome", "pid"}``; ``ended`` and ``outcome`` are ``None`` while the run goes on, and stay so
            when its process died without logging its end; ``pid`` is the process that ran it.

        Example:
            >>> from judgelab.store import Store
            >>> store = Store(":memory:")
            >>> entry = store.begin_run("r", 0.0, planned=10, already=2)
            >>> store.run_advanced(entry, 6, 1, {"timeout": 2})
            >>> {k: v for k, v in store.last_run().items() if k in ("planned", "done", "failed", "retries", "outcome")}
            {'planned': 10, 'done': 6, 'failed': 1, 'retries': {'timeout': 2}, 'outcome': None}
        """
        if not self._has_table("run_log"):
            return None
        names = ("rater", "started", "planned", "already", "done", "failed", "retries", "updated", "ended", "outcome",
                 "pid")
        if not set(names) <= {r[1] for r in self._db.execute("PRAGMA table_info(run_log)")}:
            return None  # a store of version 5 or earlier, read as it is: no run recorded its progress
        row = self._db.execute(f"SELECT {', '.join(names)} FROM run_log WHERE planned IS NOT NULL "
                               "ORDER BY rowid DESC LIMIT 1").fetchone()
        if row is None:
            return None
        out = dict(zip(names, row))
        try:
            retries = json.loads(out["retries"] or "{}")
        except (TypeError, ValueError):
            retries = {}
        out["retries"] = {str(k): int(v) for k, v in retries.items()} if isinstance(retries, dict) else {}
        return out

    def run_totals(self, rater: str) -> dict[str, Any]:
        """What ``rater``'s judgments cost, accumulated over its logged runs that made calls.

        A rerun answered by the ledger (0 calls) adds nothing, so the totals stay those of the runs that
        produced the judgments. A label claimed before the store had its run log (a run of an older judgelab)
        had runs that were not logged: its totals are ``None``, with a ``totals_note`` saying so.

        Returns:
            ``{"calls_made", "prompt_tokens", "completion_tokens", "wall_s", "runs_with_calls"}`` (and
            ``totals_note`` when they are unknown).

        Example:
            >>> from judgelab.store import Store
            >>> store = Store(":memory:")
            >>> store.log_run("r", 0.0, 2.0, 10, 500, 40); store.log_run("r", 5.0, 0.1, 0, 0, 0)
            >>> store.run_totals("r")
            {'calls_made': 10, 'prompt_tokens': 500, 'completion_tokens': 40, 'wall_s': 2.0, 'runs_with_calls': 1}
        """
        since = self._db.execute("SELECT value FROM judgelab_meta WHERE name = 'run_log_since'").fetchone() \
            if self._has_table("judgelab_meta") else None
        created = self._db.execute("SELECT created FROM runs WHERE rater = ?", (rater,)).fetchone() \
            if self._has_table("runs") else None
        if since is None or (created is not None and created[0] < float(since[0])):
            return {"calls_made": None, "prompt_tokens": None, "completion_tokens": None, "wall_s": None,
                    "runs_with_calls": None, "totals_note": "this rater ran before its store logged runs (an older "
                    "judgelab): the calls, tokens and time of those runs are unknown"}
        made = self._db.execute("SELECT wall_s, calls_made, prompt_tokens, completion_tokens FROM run_log "
                                "WHERE rater = ? AND calls_made > 0", (rater,)).fetchall()
        return {"calls_made": sum(r[1] for r in made), "prompt_tokens": sum(r[2] for r in made),
                "completion_tokens": sum(r[3] for r in made), "wall_s": round(sum(r[0] for r in made), 3),
                "runs_with_calls": len(made)}

    def _has_table(self, name: str) -> bool:
        return bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone())


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
