"""``--execution batch`` against the stub's files and batches endpoints: failures, expiry, kills, restarts."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from batch_stub import BATCH, kill_when, provider_batch_ids, rate_args, ratings_of, start_rate, stub_maker
from conftest import run_cli, write_items
from servers import wait_until


@pytest.fixture
def stubs(tmp_path):
    yield from stub_maker(tmp_path)


def test_2000_requests_with_failures_and_a_half_expired_batch_complete_every_judgment(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 500)  # × 4 criteria = 2,000 requests
    live_stub = stubs("live")
    live = tmp_path / "live"
    assert run_cli(*rate_args(items, live_stub.base_url, live)).returncode == 0

    stub = stubs("batch", "--batch-fail-rate", "0.1", "--batch-expire-first", "--batch-seconds", "0.3")
    out = tmp_path / "batch"
    result = run_cli(*rate_args(items, stub.base_url, out, *BATCH, "--batch-max-requests", "800", "--batch-max-attempts", "8"))
    assert result.returncode == 0, result.stderr
    text = result.stdout.replace("\n", " ")
    assert "new statuses: ok 2000" in text and "calls made 2000, cache hits 0" in text
    answered = stub.answered()
    assert len(answered) == 2000 and set(answered.values()) == {1}  # every request answered (paid) once
    submitted = stub.submitted()
    resubmitted = sum(submitted.values()) - 2000
    assert resubmitted == stub.error_lines() >= 400 + 100  # only failed or expired requests were submitted again
    assert f"({resubmitted} again after no answer)" in text
    pd.testing.assert_frame_equal(ratings_of(out), ratings_of(live))
    again = run_cli(*rate_args(items, stub.base_url, out, *BATCH))  # nothing left: no batch, no call
    assert again.returncode == 0 and "calls made 0" in again.stdout and sum(stub.submitted().values()) == 2000 + resubmitted


def test_kill_9_while_polling_then_rerun_submits_nothing_twice(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 60)
    live_stub = stubs("live")
    assert run_cli(*rate_args(items, live_stub.base_url, tmp_path / "live")).returncode == 0
    stub = stubs("batch", "--batch-seconds", "3")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", *rate_args(items, stub.base_url, out, *BATCH,
                                                                         "--batch-max-requests", "100")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: len(provider_batch_ids(out / "store.sqlite")) >= 3, "three batches submitted", procs=[proc])
    time.sleep(0.3)  # polling now
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(provider_batch_ids(out / "store.sqlite")) == 3 and not (out / "ratings.csv").exists()
    assert sum(stub.submitted().values()) == 240

    rerun = run_cli(*rate_args(items, stub.base_url, out, *BATCH))
    assert rerun.returncode == 0, rerun.stderr
    assert "new statuses: ok 240" in rerun.stdout and "3 resumed" in rerun.stdout
    assert set(stub.submitted().values()) == {1} and len(stub.submitted()) == 240  # nothing submitted twice
    assert set(stub.answered().values()) == {1}
    pd.testing.assert_frame_equal(ratings_of(out), ratings_of(tmp_path / "live"))


def test_a_server_restart_mid_poll_is_waited_out(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 20)
    stub = stubs("batch", "--batch-seconds", "2")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", *rate_args(items, stub.base_url, out, *BATCH)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: provider_batch_ids(out / "store.sqlite"), "a batch submitted", procs=[proc])
    stub.stop()  # the server goes away mid-poll …
    time.sleep(1.0)
    stub.start()  # … and comes back with its batches
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "new statuses: ok 80" in stdout and set(stub.submitted().values()) == {1}


def test_a_batch_created_just_before_a_kill_is_found_not_created_again(tmp_path, stubs):
    """Killed after ``batches.create`` reached the provider, before its id was stored: the rerun adopts it."""
    import openai

    from judgelab.run.batch_export import export_batch
    from judgelab.datasets.items import load_items
    from judgelab.run import RunSpec
    from judgelab.store import Store

    items_path = write_items(tmp_path / "items.jsonl", 5)
    stub = stubs("batch", "--batch-seconds", "0.2")
    out = tmp_path / "out"
    spec = RunSpec(judge=f"openai:m@{stub.base_url}", samples=1)
    exported = export_batch(load_items(items_path), spec, out, tmp_path / "req.jsonl")
    data = exported.files[0].read_bytes()
    client = openai.OpenAI(base_url=stub.base_url, api_key="k")
    file = client.files.create(file=("x.jsonl", data), purpose="batch")
    client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h",
                          metadata={"judgelab_batch": "b-000000000001"})
    with Store(out / "store.sqlite") as store:  # what the killed run had recorded: the upload, not the batch id
        requests = store.batch_requests(exported.batch)
        store.add_batch("b-000000000001", "openai", "run", exported.rater, [(k, q) for k, (q, _) in requests.items()],
                        endpoint=stub.base_url, detail={"url": "/v1/chat/completions"})
        store.update_batch("b-000000000001", state="uploaded", provider_file=file.id)
        store.update_batch(exported.batch, state="done")
    rerun = run_cli(*rate_args(items_path, stub.base_url, out, *BATCH))
    assert rerun.returncode == 0, rerun.stderr
    assert "0 created, 1 resumed" in rerun.stdout and "new statuses: ok 20" in rerun.stdout
    assert set(stub.submitted().values()) == {1} and len(stub.submitted()) == 20


def test_dry_run_shows_the_batch_plan_at_the_batch_price(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 30)
    r = run_cli(*rate_args(items, "http://127.0.0.1:9/v1", tmp_path / "o", "--execution", "batch", "--dry-run",
                       "--batch-max-requests", "50", "--price-in", "1", "--price-out", "2"))
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("batch plan:"))
    assert "120 requests in 3 batch file(s)" in line and "50% off" in line
    assert not (tmp_path / "o").exists()


def test_a_judge_without_a_batch_api_is_refused_in_one_line(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "4"}))
    r = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--out", str(tmp_path / "o"),
                "--execution", "batch", "--samples", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no batch API" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()  # refused before any work


def test_cancel_then_rerun_records_what_the_batch_finished_and_asks_the_rest_again(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 25)
    stub = stubs("batch", "--batch-seconds", "4")
    out = tmp_path / "out"
    proc = start_rate(rate_args(items, stub.base_url, out, *BATCH))
    kill_when(proc, lambda: provider_batch_ids(out / "store.sqlite"), "a batch submitted", then=0.0)
    time.sleep(1.0)  # about a quarter done
    cancelled = run_cli("batch", "cancel", str(out))
    assert cancelled.returncode == 0 and "cancelling" in cancelled.stdout, cancelled.stderr
    assert " openai submitted: 100 requests" in run_cli("batch", "list", str(out)).stdout
    # a cancelled batch spends no attempt: even with one attempt each, the requests it did not run are asked again
    rerun = run_cli(*rate_args(items, stub.base_url, out, *BATCH, "--batch-max-attempts", "1"))
    assert rerun.returncode == 0, rerun.stderr
    assert "new statuses: ok 100" in rerun.stdout
    again = {k for k, n in stub.submitted().items() if n == 2}
    assert 0 < len(again) < 100 and again == set(stub.unanswered()) and stub.paid_once()
    listed = run_cli("batch", "list", str(out)).stdout
    assert "openai cancelled: 100 requests" in listed and f"openai done: {len(again)} requests" in listed


def test_kill_9_while_downloading_then_rerun_submits_nothing_twice(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 30)
    stub = stubs("batch", "--batch-seconds", "0.2", "--download-delay", "3")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", *rate_args(items, stub.base_url, out, *BATCH)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(stub.answered, "the batch complete (the download begins)", procs=[proc])
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as db:
        assert db.execute("SELECT state FROM batches").fetchall() == [("submitted",)]  # killed before recording
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone() == (0,)
    rerun = run_cli(*rate_args(items, stub.base_url, out, *BATCH))
    assert rerun.returncode == 0, rerun.stderr
    assert "new statuses: ok 120" in rerun.stdout and "0 created, 1 resumed" in rerun.stdout
    assert set(stub.submitted().values()) == {1} and set(stub.answered().values()) == {1}


def test_a_run_file_runs_as_a_batch_with_a_progress_line_from_the_provider(tmp_path, stubs):
    import asyncio

    from judgelab.datasets.items import load_items
    from judgelab.run import Runner
    from judgelab.run.provider_batch import run_batches
    from judgelab.runfile import load_run_file
    from judgelab.store import Store

    items = write_items(tmp_path / "items.jsonl", 10)
    stub = stubs("batch", "--batch-seconds", "0.5")
    spec_file = tmp_path / "run.yaml"
    spec_file.write_text(f"items: items.jsonl\njudge: openai:m@{stub.base_url}\nsamples: 1\nout: out\n"
                         "execution: batch\nbatch: {poll_seconds: 0.05, max_attempts: 2}\n")
    spec = load_run_file(spec_file).run_specs()[0]
    assert spec.execution == "batch" and spec.batch.poll_seconds == 0.05
    notes: list[str] = []
    backend = spec.judge.build()
    with Store(tmp_path / "s.sqlite") as store:
        runner = Runner(backend, store, spec)
        report = asyncio.run(run_batches(runner, load_items(items), on_note=notes.append))
    assert report.batches == 1 and report.answered == 40 and report.gave_up == 0
    assert any(n.startswith("batches: ") and "/40 done" in n and "ETA" in n for n in notes), notes[:5]
    assert notes[-1].startswith("batches: 40/40 done, 0 failed")
    assert run_cli("run", str(spec_file)).returncode == 0  # the same file through the command line
    assert (tmp_path / "out" / "ratings.csv").exists()
