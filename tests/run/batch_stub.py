"""The batch API stand-in in a subprocess, for the ``--execution batch`` tests (not a test module)."""
import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from servers import ServerProcess, wait_until

COLUMNS = ["item_id", "system", "criterion", "sample", "score", "status", "raw"]


class BatchStub:
    """The stub in a subprocess with its batch modes; restartable on the same port and state folder."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.folder = folder
        self.port = 0  # a free port, picked by the first start and kept by restarts
        self.state = folder / "state"
        self.log = folder / "answered.jsonl"
        self.args = args
        self.start()

    def start(self) -> None:
        self.server = ServerProcess(
            [sys.executable, "-m", "judgelab.testing.openai_stub", "--port", str(self.port), "--state-dir",
             str(self.state), "--log", str(self.log), *self.args], self.folder, ready_line=r"^PORT (\d+)$",
            name="the batch stub")
        self.proc = self.server.proc
        self.port = int(self.server.ready_match.group(1))
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.server.stop()

    def submitted(self) -> Counter:
        path = self.state / "submitted.jsonl"
        return Counter(json.loads(l)["key"] for l in path.read_text().splitlines()) if path.exists() else Counter()

    def answered(self) -> Counter:
        return Counter(json.loads(l)["key"] for l in self.log.read_text().splitlines()) if self.log.exists() else Counter()

    def unanswered(self) -> Counter:
        """Per key, the submissions the stub did not answer (lines of its error files: failed, expired, cancelled)."""
        state = json.loads((self.state / "state.json").read_text())
        return Counter(json.loads(line)["custom_id"] for b in state["batches"].values() if b.get("error_file_id")
                       for line in (self.state / "files" / b["error_file_id"]).read_text().splitlines())

    def paid_once(self) -> bool:
        """Every key answered exactly once, and submitted again only after a submission that got no answer."""
        submitted, unanswered = self.submitted(), self.unanswered()
        return set(self.answered().values()) == {1} and all(n == 1 + unanswered[k] for k, n in submitted.items())

    def error_lines(self) -> int:
        """Requests the stub's batches reported failed or expired (lines of their error files)."""
        state = json.loads((self.state / "state.json").read_text())
        return sum(len((self.state / "files" / b["error_file_id"]).read_text().splitlines())
                   for b in state["batches"].values() if b.get("error_file_id"))


def stub_maker(tmp_path: Path):
    """The body of a test module's ``stubs`` fixture: makes :class:`BatchStub` s in ``tmp_path``, stops them after."""
    made = []

    def make(name: str, *args: str) -> BatchStub:
        folder = tmp_path / name
        folder.mkdir()
        stub = BatchStub(folder, *args)
        made.append(stub)
        return stub

    yield make
    for stub in made:
        stub.stop()


def ratings_of(folder: Path) -> pd.DataFrame:
    df = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str})
    return df[COLUMNS].sort_values(["system", "item_id", "criterion", "sample"]).reset_index(drop=True)


def rate_args(items: Path, url: str, out: Path, *extra: str) -> list[str]:
    return ["rate", "--items", str(items), "--judge", f"openai:m@{url}", "--samples", "1", "--out", str(out), "--quiet",
            *extra]


BATCH = ("--execution", "batch", "--batch-poll", "0.05")


def provider_batch_ids(store: Path) -> list[str]:
    if not store.exists():
        return []
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            return [r[0] for r in db.execute("SELECT provider_batch FROM batches WHERE provider_batch IS NOT NULL")]
    except sqlite3.OperationalError:
        return []


def start_rate(args: list[str]) -> subprocess.Popen:
    """``judgelab ARGS`` in a subprocess (to be killed), with this checkout's sources."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    return subprocess.Popen([sys.executable, "-m", "judgelab.cli", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def kill_when(proc: subprocess.Popen, ready, what: str, then: float = 0.3) -> None:
    """``kill -9`` the process ``then`` seconds after ``ready()`` holds (the test fails if it ends first)."""
    import signal
    import time

    wait_until(ready, what, procs=[proc])
    time.sleep(then)
    assert proc.poll() is None, f"the run ended {then} s after {what}, before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
