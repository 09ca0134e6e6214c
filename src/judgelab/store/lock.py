"""One writer per store: an exclusive ``flock`` on ``<store>.lock`` that dies with its process."""
from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path
from typing import IO

from judgelab.errors import JudgelabError

__all__ = ["take_lock", "lock_holder", "last_store_summary", "remember_opened"]

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


#: Seconds a refused process waits for the holder to record itself in the lock file (the holder
#: writes its record right after taking the lock; a refusal in between would otherwise name nobody).
HOLDER_WAIT_S = 2.0
_RECORD = re.compile(r"^judgelab process (\d+) \(.*\)\n\Z", re.DOTALL)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    return True


def _holder(fh: IO[str], wait_s: float) -> str:
    """Who holds the lock, as its holder recorded it: ``judgelab process PID (command)``.

    The record is read again until it is complete (it ends with a newline) and names a running
    process (not a record left by an earlier holder), for at most ``wait_s``; then ``another process``.
    """
    deadline = time.monotonic() + wait_s
    while True:
        fh.seek(0)
        text = fh.read()
        found = _RECORD.match(text)
        if found and _running(int(found.group(1))):
            return text.strip()
        if time.monotonic() >= deadline:
            return "another process"
        time.sleep(0.02)


def take_lock(path: str) -> IO[str] | None:
    """Take the store's lock: the open lock file (closing it releases the lock), ``None`` for
    ``:memory:`` or where there is no ``fcntl``; a store held by another process is one line naming
    it (``judgelab process PID (command)``, or ``another process`` when the holder has not recorded
    itself within :data:`HOLDER_WAIT_S`)."""
    if path == ":memory:":
        return None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        return None
    from judgelab.secrets import masked_argv

    # the command line without secrets (an --api-key value never reaches a file); ready before the lock
    record = f"judgelab process {os.getpid()} ({' '.join(masked_argv())[:200]})\n"
    lock_path = Path(path + ".lock")
    try:
        fh = open(lock_path, "a+", encoding="utf-8")
    except OSError as exc:
        raise JudgelabError(f"cannot create the lock file {lock_path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = _holder(fh, HOLDER_WAIT_S)
        fh.close()
        raise JudgelabError(f"{path} is in use by {holder}; wait for it to finish or use another --out") from None
    fh.seek(0)
    fh.truncate()
    os.chmod(lock_path, 0o600)  # the holder's command line is for its own user only
    fh.write(record)  # one write: a reader sees the whole record or none of it (it waits for the newline)
    fh.flush()
    return fh


def _flocked_inodes() -> set[int] | None:
    """Inodes of the files some process holds a ``flock`` on (Linux's ``/proc/locks``); ``None`` where unreadable."""
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    inodes = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 5 and parts[1] == "FLOCK" and parts[5].count(":") == 2:
            try:
                inodes.add(int(parts[5].rsplit(":", 1)[1]))
            except ValueError:
                continue
    return inodes


def lock_holder(path: str) -> int | None:
    """The process id of the judgelab process that holds the store's lock now (as it recorded itself), or
    ``None``: read without taking the lock, so a run starting at that moment is never refused because of a look.

    The holder's record names a running process, and where ``/proc/locks`` can be read (Linux) a ``flock`` is held
    on the lock file itself: a process killed outright releases its lock at once, though its record stays (and
    its process id may be a zombie not yet waited for).
    """
    lock_path = Path(path + ".lock")
    try:
        text = lock_path.read_text(encoding="utf-8", errors="replace")
        inode = lock_path.stat().st_ino
    except OSError:
        return None
    found = _RECORD.match(text)
    if not found or not _running(int(found.group(1))):
        return None
    locked = _flocked_inodes()
    if locked is not None and inode not in locked:
        return None
    return int(found.group(1))
