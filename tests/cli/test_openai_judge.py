"""`judgelab rate` against a local OpenAI-compatible server that fails now and then,
killed with SIGKILL halfway and resumed."""
import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter

from conftest import run_cli, write_items
from servers import wait_until


def rate_args(items, base_url, out, *extra):
    return ["rate", "--items", str(items), "--judge", "openai:stub", "--base-url", base_url,
            "--out", str(out), "--samples", "3", "--concurrency", "8", "--max-retries", "8", "--quiet", *extra]


def test_flaky_server_completes_every_judgment(tmp_path, stub_factory):
    stub = stub_factory(fail_rate=0.3, seed=1)
    items = write_items(tmp_path / "items.jsonl", 12)
    result = run_cli(*rate_args(items, stub.base_url, tmp_path / "out", "--compare", "human,gpt2"))
    assert result.returncode == 0, result.stderr
    ratings = (tmp_path / "out" / "ratings.csv").read_text().splitlines()
    assert len(ratings) == 1 + 12 * 4 * 3
    assert "statuses: ok 144" in result.stdout
    assert "Welch" in result.stdout and (tmp_path / "out" / "welch.csv").exists()
    answered = Counter(stub.answered())
    assert len(answered) == 12 * 4 and max(answered.values()) == 1  # one call per item × criterion (n=3)


def test_sigkill_halfway_then_resume(tmp_path, stub_factory):
    items = write_items(tmp_path / "items.jsonl", 40)
    reference = stub_factory(fail_rate=0.2, seed=2)
    done = run_cli(*rate_args(items, reference.base_url, tmp_path / "ref"))
    assert done.returncode == 0, done.stderr

    stub = stub_factory(fail_rate=0.2, seed=3, latency=0.03)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", *rate_args(items, stub.base_url, out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = out / "store.sqlite"

    def recorded_a_third() -> int:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                recorded = con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        except sqlite3.Error:
            return 0
        return recorded if recorded >= 40 * 4 * 3 // 3 else 0

    recorded = wait_until(recorded_a_third, "a third of the judgments recorded", procs=[proc])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < recorded < 480, recorded
    from judgelab.store import Store

    with Store(db) as store:  # opening replays the journal of answers not yet in the database
        stored_at_kill = store.call_keys()
    answered_before_rerun = Counter(stub.answered())

    resumed = run_cli(*rate_args(items, stub.base_url, out))
    assert resumed.returncode == 0, resumed.stderr
    assert "already in the store" in resumed.stdout

    with sqlite3.connect(db) as con:
        call_keys = {r[0] for r in con.execute("SELECT key FROM calls")}
        n_judgments = con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    answered = Counter(stub.answered())
    assert n_judgments == 480 and len(call_keys) == 160
    assert set(answered) == call_keys  # every request was answered
    repeated = {k: c for k, c in answered.items() if c > 1}
    # Only calls in flight at the moment of the kill (at most --concurrency = 8) can be asked twice;
    # every call answered before the kill (in the database or its journal) is never asked again.
    assert len(repeated) <= 8
    assert not set(repeated) & stored_at_kill
    # The rerun asks exactly the planned calls the store had no answer for: planned − stored.
    asked_by_rerun = set(answered - answered_before_rerun)
    assert asked_by_rerun == call_keys - stored_at_kill, (len(asked_by_rerun), len(call_keys), len(stored_at_kill))
    assert f"calls made {len(asked_by_rerun)}," in resumed.stdout
    assert (out / "ratings.csv").read_text() == (tmp_path / "ref" / "ratings.csv").read_text()
