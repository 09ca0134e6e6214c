"""A run writes its plan and progress into the store's run log while it runs (what ``judgelab view``'s status
strip reads), and logs how it ended; a store of version 5 gains the columns and resumes without a call."""
from __future__ import annotations

import asyncio
import gzip
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from conftest import write_items
from judgelab.datasets.items import load_items
from judgelab.errors import ServerError
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.models.retry import RetryPolicy
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store
from judgelab.store.schema import RUN_PROGRESS_COLUMNS, STORE_VERSION


class SlowFlaky(ScriptedTestJudge):
    """Answers after ``delay`` seconds; the first attempt of every ``flaky``-th call is a server error (retried)."""

    retry_policy = RetryPolicy(backoff_base=0.01, backoff_cap=0.02)

    def __init__(self, script, delay: float = 0.0, flaky: int = 0) -> None:
        super().__init__(script)
        self.delay, self.flaky, self.attempts, self.raised = delay, flaky, 0, 0

    async def _complete(self, request):
        self.attempts += 1
        await asyncio.sleep(self.delay)
        if self.flaky and self.attempts % self.flaky == 0:
            self.raised += 1
            raise ServerError("HTTP 503: busy")
        return await super()._complete(request)


def test_a_run_writes_its_plan_and_progress_while_it_runs(tmp_path):
    items = load_items(write_items(tmp_path / "items.jsonl", 12))
    path = tmp_path / "store.sqlite"
    judge = SlowFlaky({"rules": [{"contains": "Story number 3.", "reply": "no rating here"}], "default": "4"},
                      delay=0.15, flaky=5)
    seen = []
    with Store(path) as store:
        result = {}
        worker = threading.Thread(target=lambda: result.setdefault("stats", run_spec(
            RunSpec(samples=1, concurrency=2, criteria=["likability"]), items, store, backend=judge)))
        worker.start()
        while worker.is_alive():
            with Store(path, read_only=True) as reader:  # another process's view: read only
                entry = reader.last_run()
            if entry is not None:
                seen.append(entry)
            time.sleep(0.05)
        worker.join()
        stats = result["stats"]
        with Store(path, read_only=True) as reader:
            last = reader.last_run()
        totals = store.run_totals(stats.rater)
    running = [e for e in seen if e["outcome"] is None]
    assert running and all(e["planned"] == 12 and e["already"] == 0 and e["ended"] is None for e in running)
    assert any(0 < e["done"] < 12 for e in running)  # written while it ran, not only at the end
    assert [e["done"] for e in running] == sorted(e["done"] for e in running)
    assert last["outcome"] == "finished" and last["ended"] is not None and last["rater"] == stats.rater
    assert (last["planned"], last["done"], last["failed"]) == (12, 12, 1)
    assert last["retries"] == {"server_error": judge.raised} and judge.raised >= 2
    assert totals["runs_with_calls"] == 1 and totals["calls_made"] == stats.calls_made > 0


def test_a_rerun_answered_by_the_store_logs_a_finished_run_with_everything_already_done(tmp_path):
    items = load_items(write_items(tmp_path / "items.jsonl", 3))
    with Store(tmp_path / "store.sqlite") as store:
        spec = RunSpec(samples=1, criteria=["likability"])
        first = run_spec(spec, items, store, backend=ScriptedTestJudge({"default": "4"}))
        again = run_spec(spec, items, store, backend=ScriptedTestJudge({"default": "4"}))
        last = store.last_run()
        totals = store.run_totals(first.rater)
    assert again.calls_made == 0
    assert (last["planned"], last["already"], last["done"], last["outcome"]) == (3, 3, 3, "finished")
    assert totals["runs_with_calls"] == 1 and totals["calls_made"] == first.calls_made  # the rerun adds nothing


def test_a_failing_run_logs_its_end_as_failed(tmp_path):
    class Breaks(ScriptedTestJudge):
        async def _complete(self, request):
            if len(self.calls) >= 2:
                raise RuntimeError("the judge broke")
            return await super()._complete(request)

    items = load_items(write_items(tmp_path / "items.jsonl", 4))
    with Store(tmp_path / "store.sqlite") as store:
        with pytest.raises(RuntimeError):
            run_spec(RunSpec(samples=1, concurrency=1, criteria=["likability"]), items, store, backend=Breaks({"default": "4"}))
        last = store.last_run()
    assert last["outcome"] == "failed" and last["planned"] == 4 and last["done"] < 4 and last["ended"] is not None


def test_an_interrupted_run_logs_its_end_as_interrupted(tmp_path):
    class CtrlC(ScriptedTestJudge):
        async def _complete(self, request):
            if len(self.calls) >= 2:
                raise KeyboardInterrupt
            return await super()._complete(request)

    items = load_items(write_items(tmp_path / "items.jsonl", 4))
    with Store(tmp_path / "store.sqlite") as store:
        with pytest.raises(KeyboardInterrupt):
            run_spec(RunSpec(samples=1, concurrency=1, criteria=["likability"]), items, store, backend=CtrlC({"default": "4"}))
        last = store.last_run()
    assert last["outcome"] == "interrupted" and last["done"] < last["planned"] == 4


def _as_version_5(path: Path) -> None:
    """The store as judgelab wrote it with store version 5: no progress columns in the run log."""
    db = sqlite3.connect(path)
    for name, _ in RUN_PROGRESS_COLUMNS:
        db.execute(f"ALTER TABLE run_log DROP COLUMN {name}")
    db.execute("UPDATE judgelab_meta SET value = '5' WHERE name = 'version'")
    db.commit()
    db.close()


def test_a_store_of_version_5_reads_resumes_without_a_call_and_gains_the_progress_columns(tmp_path):
    items = load_items(write_items(tmp_path / "items.jsonl", 3))
    path = tmp_path / "store.sqlite"
    spec = RunSpec(samples=1, criteria=["likability"])
    with Store(path) as store:
        first = run_spec(spec, items, store, backend=ScriptedTestJudge({"default": "4"}))
    _as_version_5(path)
    with Store(path, read_only=True) as old:
        assert old.last_run() is None and old.run_totals(first.rater)["calls_made"] == first.calls_made
    with Store(path) as store:
        again = run_spec(spec, items, store, backend=ScriptedTestJudge({"default": "4"}))
        assert again.calls_made == 0 and again.already_done == 3
        assert store.run_totals(first.rater)["calls_made"] == first.calls_made
        assert store.last_run()["outcome"] == "finished"
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM judgelab_meta WHERE name = 'version'").fetchone()[0] == str(STORE_VERSION) == "6"
    assert {n for n, _ in RUN_PROGRESS_COLUMNS} <= {r[1] for r in db.execute("PRAGMA table_info(run_log)")}
    db.close()


def test_a_store_written_before_the_run_log_shows_no_run_progress(tmp_path):
    before = Path(__file__).parent.parent / "table_before" / "store_main.sqlite.gz"
    with gzip.open(before) as src, open(tmp_path / "store.sqlite", "wb") as dst:
        dst.write(src.read())
    with Store(tmp_path / "store.sqlite", read_only=True) as old:
        assert old.last_run() is None
