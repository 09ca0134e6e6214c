"""A folder's accounting for its record: the judges' calls, tokens, latency and judgments by status
(:mod:`judgelab.call_costs`), read from the folder's store — or, in a folder with only a ratings
file, its statuses — when a command writes the folder (:class:`judgelab.output.folder.OutputFolder`)
or when an older folder's record is rebuilt (:mod:`judgelab.output.legacy`). The report renders it.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["folder_call_costs", "RATINGS_FILES"]

RATINGS_FILES = ("ratings.csv", "ratings.jsonl", "ratings.parquet")


def folder_call_costs(folder: Path) -> dict[str, Any] | None:
    """The record part ``call_costs`` of ``folder`` (None: no store or ratings file, or one that cannot be read)."""
    from judgelab.call_costs import call_costs
    from judgelab.raters import human_mask

    store = folder / "store.sqlite"
    try:
        if store.is_file():
            return _store_call_costs(store).to_record()
        ratings = next((folder / n for n in RATINGS_FILES if (folder / n).is_file()), None)
        if ratings is None:
            return None
        judgments = _statuses_of(ratings)
        judgments = judgments[~human_mask(judgments["rater"])].reset_index(drop=True)
    except (JudgelabError, sqlite3.Error, OSError, ValueError, KeyError):
        return None
    return call_costs(judgments, {}).to_record()


def _store_call_costs(path: Path) -> Any:
    """The store's judges' :class:`judgelab.call_costs.CallCosts` in bounded memory: judgments by status from
    SQL counts; each rater's distinct calls gathered a chunk of judgments at a time into a temporary table
    and their responses read a chunk at a time (a million judgments never sit in memory at once)."""
    from judgelab.call_costs import attempt_keys, rater_calls, with_statuses
    from judgelab.raters import is_human
    from judgelab.store import Store

    with Store(path, read_only=True) as s:
        counts = [c for c in s.status_counts() if not is_human(c[0])]
        judgments: dict[str, int] = {}
        for rater, _, _, n in counts:
            judgments[rater] = judgments.get(rater, 0) + n
        raters = []
        for rater in sorted(judgments):
            s.gather_keys((), fresh=True)
            for chunk in s.attempts_of(rater):
                s.gather_keys(key for attempts in chunk for key in attempt_keys(attempts))
            raters.append(rater_calls(rater, judgments[rater], s.gathered_responses()))
    return with_statuses(tuple(raters), counts)


def _statuses_of(path: Path) -> Any:
    """A ratings file's rater, criterion and status (``ok`` where it has no status column)."""
    import pandas as pd

    if path.suffix == ".parquet":
        df = pd.read_parquet(path)
    elif path.suffix == ".jsonl":
        df = pd.read_json(path, lines=True, dtype=False) if path.stat().st_size else pd.DataFrame()
    else:
        df = pd.read_csv(path, dtype=str, keep_default_na=False) if path.stat().st_size else pd.DataFrame()
    if "rater" not in df.columns or "criterion" not in df.columns:
        raise KeyError("rater")
    status = df["status"].replace("", "ok") if "status" in df.columns else "ok"
    return pd.DataFrame({"rater": df["rater"].astype(str), "criterion": df["criterion"].astype(str),
                         "status": status, "attempts": None})
