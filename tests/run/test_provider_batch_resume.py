"""``--execution batch`` leaves no silent gap: a rerun asks every request without an answer, whatever
happened to the earlier batches (killed, expired, failed, refused), at the endpoint that holds them."""
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest

from batch_stub import BATCH, kill_when, provider_batch_ids, rate_args, ratings_of, start_rate, stub_maker
from conftest import free_port, run_cli, write_items

TWO_CRITERIA = ("--criteria", "grammaticality,cohesiveness")


def _statuses(out) -> dict:
    return pd.read_csv(out / "ratings.csv")["status"].value_counts().to_dict()


@pytest.fixture
def stubs(tmp_path):
    yield from stub_maker(tmp_path)


def test_kill_9_mid_batch_with_failures_and_expiry_then_rerun_answers_every_request_paid_once(tmp_path, stubs):
    """Expired batches and a kill spend no attempt: each request fails at most once here, so two attempts
    answer every one (before, an expired-then-failed request had used up both and stayed ``error``)."""
    items = write_items(tmp_path / "items.jsonl", 40)  # × 2 criteria = 80 requests of 2 samples: 160 judgments
    live_stub = stubs("live")
    live = tmp_path / "live"
    assert run_cli(*rate_args(items, live_stub.base_url, live, *TWO_CRITERIA), "--samples", "2").returncode == 0
    stub = stubs("batch", "--batch-fail-rate", "0.3", "--batch-fail-times", "1", "--batch-expire-first",
                 "--batch-seconds", "1.5")
    out = tmp_path / "out"
    args = rate_args(items, stub.base_url, out, *TWO_CRITERIA, *BATCH, "--samples", "2", "--batch-max-requests", "40",
                     "--batch-max-attempts", "2")
    proc = start_rate(args)
    kill_when(proc, lambda: provider_batch_ids(out / "store.sqlite"), "a batch submitted")  # while it runs
    assert not (out / "ratings.csv").exists() and sum(stub.submitted().values()) >= 40

    rerun = run_cli(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert _statuses(out) == {"ok": 160}, rerun.stdout
    assert stub.unanswered() and stub.paid_once()  # failed or expired lines were asked again, nothing answered twice
    assert len(stub.answered()) == 80
    pd.testing.assert_frame_equal(ratings_of(out), ratings_of(live))


def test_a_refused_batch_spends_no_attempt_and_names_the_providers_reason(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 8)  # × 4 criteria: 32 requests
    stub = stubs("batch", "--batch-max-lines", "4", "--batch-seconds", "0.2")
    out = tmp_path / "out"
    first = run_cli(*rate_args(items, stub.base_url, out, *BATCH))
    assert first.returncode == 3, first.stderr
    said = first.stdout + first.stderr
    assert "more than the 4 requests allowed in a batch" in said and "refused" in said, said
    assert "not run (0 failed attempts before)" in said and "gave up after" not in said
    assert not stub.submitted()  # nothing ran, nothing paid
    rerun = run_cli(*rate_args(items, stub.base_url, out, *BATCH, "--batch-max-requests", "4"))
    assert rerun.returncode == 0, rerun.stderr
    assert _statuses(out) == {"ok": 32} and "batches: 8 created" in rerun.stdout
    assert stub.paid_once() and len(stub.submitted()) == 32


@pytest.mark.parametrize("recorded", [True, False], ids=["endpoint recorded", "store without endpoints"])
def test_a_fleets_batch_is_collected_whatever_the_order_of_its_replicas(tmp_path, stubs, recorded):
    items = write_items(tmp_path / "items.jsonl", 10)
    one, two = stubs("one", "--batch-seconds", "2"), stubs("two", "--batch-seconds", "2")
    out = tmp_path / "out"
    proc = start_rate(rate_args(items, f"{one.base_url},{two.base_url}", out, *BATCH))
    kill_when(proc, lambda: provider_batch_ids(out / "store.sqlite"), "a batch submitted")
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT endpoint FROM batches").fetchall() == [(one.base_url,)]
        if not recorded:  # as a store written before batches recorded their replica
            db.execute("UPDATE batches SET endpoint = ''")
    rerun = run_cli(*rate_args(items, f"{two.base_url},{one.base_url}", out, *BATCH))
    assert rerun.returncode == 0, rerun.stderr
    assert _statuses(out) == {"ok": 40} and "0 created, 1 resumed" in rerun.stdout
    assert len(one.submitted()) == 40 and one.paid_once() and not two.submitted()
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT endpoint, state FROM batches").fetchall() == [(one.base_url, "done")]


def test_a_batch_no_replica_knows_is_recorded_lost_with_a_warning_and_its_requests_asked_again(tmp_path, stubs):
    from judgelab.store import Store

    items = write_items(tmp_path / "items.jsonl", 3)
    one, two = stubs("one", "--batch-seconds", "0.2"), stubs("two", "--batch-seconds", "0.2")
    out = tmp_path / "out"
    fleet = f"{one.base_url},{two.base_url}"
    planned = run_cli(*rate_args(items, fleet, out, *BATCH, "--export-batch", str(tmp_path / "req.jsonl")))
    assert planned.returncode == 0, planned.stderr
    with Store(out / "store.sqlite") as store:  # a batch recorded without its replica, known nowhere
        exported = store.batches(kind="file")[0]
        requests = [(k, q) for k, (q, _) in store.batch_requests(exported.id).items()]
        store.add_batch("b-00000000000a", "openai", exported.run, exported.rater, requests, endpoint="",
                        detail={"url": "/v1/chat/completions"}, state="submitted")
        store.update_batch("b-00000000000a", provider_batch="batch_999999")
    rerun = run_cli(*rate_args(items, fleet, out, *BATCH))
    assert rerun.returncode == 0, rerun.stderr
    assert "batch_999999) is known at none of" in rerun.stderr and one.base_url in rerun.stderr
    assert _statuses(out) == {"ok": 12} and "1 lost" in rerun.stdout


def test_a_provider_gone_on_a_rerun_ends_at_once_in_one_line_and_keeps_the_outputs(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 3)
    stub = stubs("batch", "--batch-seconds", "0.2")
    out = tmp_path / "out"
    assert run_cli(*rate_args(items, stub.base_url, out, *BATCH)).returncode == 0
    before = (out / "ratings.csv").read_bytes()
    stub.stop()
    more = write_items(tmp_path / "more.jsonl", 6)
    start = time.monotonic()
    gone = subprocess.run([sys.executable, "-m", "judgelab.cli", *rate_args(more, stub.base_url, out, *BATCH)],
                          capture_output=True, text=True, timeout=120)
    assert time.monotonic() - start < 30  # before: the upload was tried again for 10 minutes
    assert gone.returncode == 2 and "Traceback" not in gone.stderr
    assert len(gone.stderr.strip().splitlines()) == 1, gone.stderr
    line = gone.stderr.strip()
    assert line.startswith("judgelab: error: the batch API at " + stub.base_url + " is unreachable"), gone.stderr
    assert "check the URL in --judge" in line
    assert (out / "ratings.csv").read_bytes() == before


def test_a_fleet_submits_to_a_replica_that_is_up(tmp_path, stubs):
    items = write_items(tmp_path / "items.jsonl", 3)
    up = stubs("up", "--batch-seconds", "0.2")
    down = f"http://127.0.0.1:{free_port()}/v1"
    result = run_cli(*rate_args(items, f"{down},{up.base_url}", tmp_path / "out", *BATCH))
    assert result.returncode == 0, result.stderr
    assert _statuses(tmp_path / "out") == {"ok": 12} and len(up.submitted()) == 12
