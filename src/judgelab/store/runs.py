"""Runs: one rater label per set of settings (a run's identity), never reused for other settings."""
from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from judgelab.digest import keyed_json
from judgelab.errors import JudgelabError

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
                if d == digest and (label == preferred or label.startswith(preferred + "#")):
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
            label = f"{preferred}#{digest[:6]}"
        if label in others:
            raise JudgelabError(f"rater {label!r} in {self.path} holds ratings that no judge run made (annotations); "
                                "choose another --rater")
        if label not in rows and record:
            self._write("INSERT INTO runs VALUES (?, ?, ?, ?)", (label, digest, blob, time.time()))
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
