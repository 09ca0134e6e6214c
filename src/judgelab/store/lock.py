"""One writer per store: an exclusive ``flock`` on ``<store>.lock`` that dies with its process."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import IO

from judgelab.errors import JudgelabError

__all__ = ["take_lock", "last_store_summary", "remember_opened"]

#: The file of the store most recently opened for writing in this process (for the Ctrl-C message).
_last_opened: str | None = None


def last_store_summary() -> tuple[str, int] | None:
    """(path, number of judgments) of the store this process last opened for writing, read read-only.

    The command line uses it to say how much an interrupted run kept.

    Returns:
        ``(path, count)``, or ``None`` when no store was opened, it was ``:memory:``, or it
        cannot be read.

    Example:
        >>> from judgelab.store import Store
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


def remember_opened(path: str) -> None:
    """Note the store this process opened for writing (the Ctrl-C message names it)."""
    global _last_opened
    _last_opened = path


def take_lock(path: str) -> IO[str] | None:
    """Take the store's lock: the open lock file (closing it releases the lock), ``None`` for
    ``:memory:`` or where there is no ``fcntl``; a store held by another process is one line naming it."""
    if path == ":memory:":
        return None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        return None
    lock_path = Path(path + ".lock")
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
        raise JudgelabError(f"{path} is in use by {holder}; wait for it to finish or use another --out") from None
    import os

    from judgelab.output.manifest import masked_argv

    fh.seek(0)
    fh.truncate()
    os.chmod(lock_path, 0o600)  # the holder's command line is for its own user only
    # the command line without secrets (an --api-key value never reaches a file)
    fh.write(f"judgelab process {os.getpid()} ({' '.join(masked_argv())[:200]})")
    fh.flush()
    return fh
