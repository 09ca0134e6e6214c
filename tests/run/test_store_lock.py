"""The store's lock file names its holder: a refusal between the holder's ``flock`` and its record,
or while an earlier holder's record is still in the file, waits for the real holder's record."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time

import pytest

from judgelab.errors import JudgelabError
from judgelab.store import lock


def _held(path, content: str = ""):
    """The store's lock taken by another open file (as a second process would hold it), ``content`` in it."""
    fh = open(str(path) + ".lock", "a+", encoding="utf-8")
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    fh.seek(0)
    fh.truncate()
    fh.write(content)
    fh.flush()
    return fh


def test_a_refusal_before_the_holder_recorded_itself_waits_for_the_record(tmp_path):
    store = tmp_path / "store.sqlite"
    holder = _held(store)  # locked, still empty: the holder is between flock and its write
    record = f"judgelab process {os.getpid()} (judgelab rate --out x)\n"
    writer = threading.Timer(0.3, lambda: (holder.write(record), holder.flush()))
    writer.start()
    try:
        with pytest.raises(JudgelabError) as refused:
            lock.take_lock(str(store))
    finally:
        writer.join()
        holder.close()
    assert f"is in use by judgelab process {os.getpid()} (judgelab rate --out x);" in str(refused.value)


def test_an_earlier_holders_record_is_not_taken_for_the_holder(tmp_path, monkeypatch):
    monkeypatch.setattr(lock, "HOLDER_WAIT_S", 0.3)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that has ended: its record is stale
    store = tmp_path / "store.sqlite"
    holder = _held(store, f"judgelab process {gone.pid} (judgelab rate --out old)\n")
    try:
        start = time.monotonic()
        with pytest.raises(JudgelabError) as refused:
            lock.take_lock(str(store))
        waited = time.monotonic() - start
    finally:
        holder.close()
    assert "is in use by another process;" in str(refused.value) and str(gone.pid) not in str(refused.value)
    assert 0.25 <= waited < 5  # bounded: a holder that never records itself costs HOLDER_WAIT_S


def test_the_holder_records_itself_in_one_line_ending_the_record(tmp_path):
    store = tmp_path / "store.sqlite"
    fh = lock.take_lock(str(store))
    try:
        text = (tmp_path / "store.sqlite.lock").read_text(encoding="utf-8")
        assert text.startswith(f"judgelab process {os.getpid()} (") and text.endswith(")\n")
        with pytest.raises(JudgelabError, match=f"is in use by judgelab process {os.getpid()} "):
            lock.take_lock(str(store))
    finally:
        fh.close()
