"""The live view's status strip: the progress of the latest run in a folder's store, as the run wrote it.

The run writes its plan, the judgments done and failed and its retries into the store's run log while it
runs (:class:`judgelab.run.runlog.RunLog`); this reads them and says whether the run is **running** (its
entry is open and a process holds the store's lock — the process that opened the entry), **finished** (it
logged its end), or **stopped** (interrupted or failed, as it logged; or its entry is open and no process
holds the lock: killed or crashed). The rate and ETA are those of :func:`judgelab.progress.rate_and_eta`,
the texts those the page shows as they are.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError
from judgelab.progress import clock_text, rate_and_eta

__all__ = ["read_last_run", "run_status", "STATES"]

#: What a run can be said to be doing.
STATES = ("running", "finished", "stopped")

_ENDED = {"interrupted": "stopped: interrupted", "failed": "stopped: the run failed"}


def read_last_run(store_path: str | Path) -> dict[str, Any] | None:
    """The latest run entry with progress in the store at ``store_path``
    (:meth:`judgelab.store.Store.last_run`); ``None`` when there is no store, it cannot be read, or no run
    recorded its progress (a store of an older judgelab, ratings only)."""
    from judgelab.store import Store

    path = Path(store_path)
    if not path.is_file():
        return None
    try:
        with Store(path, read_only=True) as store:
            entry = store.last_run()
            if entry is not None:
                entry["batches"] = _batches(store, entry)
            return entry
    except JudgelabError:
        return None


def _batches(store: Any, entry: dict[str, Any]) -> dict[str, int]:
    """The provider batches of the run ``entry`` (``--execution batch``: its rater's, made since it started):
    how many, how many still open, and their requests (total, completed, failed — the provider's counts while a
    batch runs, the answers recorded once it ended). All zero for a run without batches."""
    from judgelab.store.batches import OPEN_STATES

    out = {"batches": 0, "pending": 0, "requests": 0, "completed": 0, "failed": 0}
    for b in store.batches(kind="openai"):
        if b.rater != entry["rater"] or b.created < float(entry["started"]) - 1:
            continue
        out["batches"] += 1
        out["pending"] += b.state in OPEN_STATES
        counts, progress = b.detail.get("counts"), b.detail.get("progress")
        total = int(b.detail.get("requests") or 0)
        if isinstance(counts, dict):
            done, failed = int(counts.get("answered", 0)), int(counts.get("failed", 0)) + int(counts.get("missed", 0))
        elif isinstance(progress, list) and len(progress) == 3:
            done, failed = int(progress[1]), int(progress[2])
        else:
            done = failed = 0
        out["requests"] += total
        out["completed"] += done
        out["failed"] += failed
    return out


def _batch_words(b: dict[str, int] | None) -> tuple[str, str]:
    """(the batches' progress, their failed requests) in words; ("", "") for a run without batches."""
    if not b or not b.get("batches"):
        return "", ""
    n, pending = b["batches"], b["pending"]
    said = (f"provider batches: {n:,} submitted, {pending:,} pending; {b['completed']:,} of {b['requests']:,} "
            "requests answered")
    failed = b["failed"]
    return said, f"{failed:,} batch {'request' if failed == 1 else 'requests'} failed or not run" if failed else ""


def run_status(entry: dict[str, Any] | None, holder: int | None, now: float | None = None) -> dict[str, Any] | None:
    """What the strip shows of the run ``entry`` (:func:`read_last_run`), whose store's lock ``holder`` holds
    (:func:`judgelab.store.lock.lock_holder`: a process id or ``None``), at ``now`` (epoch seconds).

    Returns:
        ``None`` for no entry, else ``{"state", "rater", "planned", "done", "failed", "retries",
        "retries_by_reason", "gave_up", "rate", "eta_s", "batches" (a batch run's :func:`_batches`), "text": {"state", "rater", "done", "failed", "retries",
        "rate", "eta"}}`` — ``rate`` in judgments per second over the run so far, ``eta_s`` ``None`` unless running
        at a known rate.

    Example:
        >>> entry = {"rater": "r", "started": 0.0, "planned": 10, "already": 0, "done": 4, "failed": 1,
        ...          "retries": {"rate_limited": 2}, "updated": 2.0, "ended": None, "outcome": None, "pid": 7}
        >>> status = run_status(entry, holder=7, now=2.0)
        >>> status["state"], status["text"]["done"], status["text"]["retries"], status["text"]["eta"]
        ('running', '4 of 10 judgments done (40%)', '2 retries (rate limited 2)', 'ETA 0:00:03')
        >>> run_status(entry, holder=None, now=2.0)["text"]["state"]
        'stopped: its process ended without logging the end (killed or crashed)'
    """
    if entry is None:
        return None
    now = time.time() if now is None else now
    if entry["outcome"] == "finished":
        state, said = "finished", "finished"
    elif entry["outcome"] is not None:
        state, said = "stopped", _ENDED.get(entry["outcome"], f"stopped: {entry['outcome']}")
    elif holder is not None and holder == entry["pid"]:
        state, said = "running", "running"
    else:
        state, said = "stopped", "stopped: its process ended without logging the end (killed or crashed)"
    planned, done, already = int(entry["planned"]), int(entry["done"] or 0), int(entry["already"] or 0)
    until = now if state == "running" else (entry["ended"] or entry["updated"] or entry["started"])
    rate, eta = rate_and_eta(planned, done, already, until - entry["started"])
    eta = eta if state == "running" else None
    by_reason = {k: v for k, v in entry["retries"].items() if k != "gave_up" and v}
    retries = sum(by_reason.values())
    detail = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(by_reason.items()))
    gave_up = entry["retries"].get("gave_up", 0)
    pct = f" ({100 * done // planned}%)" if planned else ""
    batches, batch_failed = _batch_words(entry.get("batches"))
    return {
        "state": state, "rater": entry["rater"], "planned": planned, "done": done, "failed": int(entry["failed"] or 0),
        "retries": retries, "retries_by_reason": by_reason, "gave_up": gave_up, "rate": rate, "eta_s": eta,
        "batches": dict(entry.get("batches") or {}),
        "text": {
            "state": said, "rater": f"run {entry['rater']}",
            "done": f"{done:,} of {planned:,} judgments done{pct}" + (f"; {batches}" if batches else ""),
            "failed": f"{int(entry['failed'] or 0):,} failed" + (f" ({batch_failed})" if batch_failed else ""),
            "retries": f"{retries:,} {'retry' if retries == 1 else 'retries'}" + (f" ({detail})" if detail else "")
                       + (f", {gave_up:,} {'call' if gave_up == 1 else 'calls'} given up" if gave_up else ""),
            "rate": f"{rate:.1f} judgments/s" if rate > 0 else "– judgments/s",
            "eta": f"ETA {clock_text(eta)}" if state == "running" else "",
        },
    }
