"""The live view's status strip for ``--execution batch``: the run's entry is open while its provider batches
run, so a watcher reads done of planned, the batches submitted and pending with their requests answered, the
failures, and running → finished, as for a live run."""
import time

import pytest

from batch_stub import BATCH, provider_batch_ids, rate_args, start_rate, stub_maker
from conftest import write_items
from servers import wait_until

from judgelab.report.live_status import read_last_run, run_status
from judgelab.store.lock import lock_holder


@pytest.fixture
def stubs(tmp_path):
    yield from stub_maker(tmp_path)


def _status(store):
    return run_status(read_last_run(store), lock_holder(str(store)))


def test_a_batch_run_shows_its_batches_while_they_run_then_finished(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 30)  # × 4 criteria = 120 requests
    stub = stubs("batch", "--batch-seconds", "3")
    out = tmp_path / "out"
    store = out / "store.sqlite"
    proc = start_rate(rate_args(items, stub.base_url, out, *BATCH, "--batch-max-requests", "50"))
    try:
        wait_until(lambda: len(provider_batch_ids(store)) >= 3, "three batches submitted", procs=[proc])
        status = _status(store)
        assert status is not None, "no run entry while the batches run"
        assert status["state"] == "running" and status["planned"] == 120 and status["done"] == 0
        assert status["batches"]["batches"] == 3 and status["batches"]["pending"] == 3
        assert status["batches"]["requests"] == 120
        assert status["text"]["done"].startswith("0 of 120 judgments done (0%); provider batches: 3 submitted, "
                                                 "3 pending; ")
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    status = _status(store)
    assert status["state"] == "finished" and (status["done"], status["planned"], status["failed"]) == (120, 120, 0)
    assert status["batches"] == {"batches": 3, "pending": 0, "requests": 120, "completed": 120, "failed": 0}
    assert status["text"]["done"] == ("120 of 120 judgments done (100%); provider batches: 3 submitted, 0 pending; "
                                      "120 of 120 requests answered")
    assert status["text"]["failed"] == "0 failed"


def test_failed_batch_requests_are_counted_in_the_strip(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 10)
    stub = stubs("batch", "--batch-fail-rate", "1.0", "--batch-seconds", "0.2")
    out = tmp_path / "out"
    proc = start_rate(rate_args(items, stub.base_url, out, *BATCH, "--batch-max-attempts", "1",
                                "--max-failure-rate", "1"))
    assert proc.wait(timeout=120) in (0, 3)
    time.sleep(0.1)
    status = _status(out / "store.sqlite")
    assert status["state"] == "finished" and status["failed"] == 40
    assert status["batches"]["failed"] == 40 and status["batches"]["completed"] == 0
    assert status["text"]["failed"] == "40 failed (40 batch requests failed or not run)"
