"""Run identity: an identical rerun makes no call; changed settings or template text never reuse old
judgments; one writer per store; stores opened read-only are never changed."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
import yaml

from conftest import judgelab_cmd, write_items
from servers import wait_until
from judgelab.errors import JudgelabError
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.prompts import load_template
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store


def rate(store, items, **spec):
    judge = ScriptedTestJudge({"default": "I would rate it a 4."})
    spec.setdefault("criteria", ["grammaticality"])
    return run_spec(RunSpec(**spec), items, store, backend=judge)


@pytest.fixture()
def items(tmp_path):
    from judgelab.datasets.items import load_items

    return load_items(write_items(tmp_path / "items.jsonl", 4))


def test_identical_rerun_makes_no_call(tmp_path, items):
    with Store(tmp_path / "s.sqlite") as store:
        first = rate(store, items, samples=2)
        again = rate(store, items, samples=2)
    assert first.calls_made > 0 and again.calls_made == 0 and again.rater == first.rater
    assert again.already_done == again.total == 8


@pytest.mark.parametrize("change", [
    {"sampling": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 128}},
    {"sampling": {"temperature": 1.0, "top_p": 0.5, "max_tokens": 128}},
    {"sampling": {"temperature": 1.0, "top_p": 0.9, "max_tokens": 64}},
    {"sampling": {"temperature": 1.0, "top_p": 0.9, "max_tokens": 128, "seed": 7}},
    {"samples": 3},
    {"variant": "persona"},
    {"max_refusal_retries": 1},
])
def test_a_changed_setting_is_a_new_run(tmp_path, items, change):
    base = {"samples": 2, "sampling": {"temperature": 1.0, "top_p": 0.9, "max_tokens": 128}}
    with Store(tmp_path / "s.sqlite") as store:
        first = rate(store, items, **base)
        second = rate(store, items, **{**base, **change})
        assert second.rater != first.rater and second.already_done == 0
        if "variant" not in change:
            assert second.rater.startswith(first.rater + "#")
        if "max_refusal_retries" in change:  # the same requests: the ledger's answers are reused, judged anew
            assert second.calls_made + second.cache_hits > 0
        else:
            assert second.calls_made > 0
        assert set(store.runs()) == {first.rater, second.rater}


def test_an_edited_template_with_the_same_name_is_a_new_run(tmp_path, items):
    tpl = load_template("chiang-lee-story").model_dump(mode="json")
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({**tpl, "name": "mine"}))
    with Store(tmp_path / "s.sqlite") as store:
        first = rate(store, items, template=str(path))
        tpl["criteria"]["grammaticality"]["question"] += " Think carefully."
        path.write_text(yaml.safe_dump({**tpl, "name": "mine"}))
        second = rate(store, items, template=str(path))
    assert second.rater != first.rater and second.calls_made > 0


def test_forcing_a_label_used_with_other_settings_names_the_change(tmp_path, items):
    with Store(tmp_path / "s.sqlite") as store:
        rate(store, items, rater="mine")
        with pytest.raises(JudgelabError, match=r"'mine'.*sampling\.temperature 1\.0 → 0\.2"):
            rate(store, items, rater="mine", sampling={"temperature": 0.2, "top_p": 0.9, "max_tokens": 128})
        assert rate(store, items, rater="mine").calls_made == 0


def test_rate_writes_this_runs_ratings_and_no_stale_files(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 4)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    out = tmp_path / "out"
    base = ["rate", "--items", str(items), "--criteria", "grammaticality", "--judge", f"scripted-test-double:{script}",
            "--quiet", "--out", str(out)]
    assert judgelab_cmd(*base, "--compare", "human,gpt2").returncode == 0
    assert (out / "welch.csv").exists()
    result = judgelab_cmd(*base, "--temperature", "0.5")
    assert result.returncode == 0, result.stderr
    assert not (out / "welch.csv").exists()
    import pandas as pd

    raters = set(pd.read_csv(out / "ratings.csv")["rater"])
    assert len(raters) == 1 and next(iter(raters)).endswith(tuple("0123456789abcdef"))
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["runs"][0]["settings"]["sampling"]["temperature"] == 0.5
    assert manifest["runs"][0]["settings"]["template_sha256"] == load_template("chiang-lee-story").digest()
    both = judgelab_cmd(*base, "--temperature", "0.5", "--all-runs")
    assert both.returncode == 0 and len(set(pd.read_csv(out / "ratings.csv")["rater"])) == 2


def test_the_api_key_never_reaches_the_manifest_or_store(tmp_path, stub_factory):
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 2)
    out = tmp_path / "out"
    secret = "sk-secret-do-not-store-123"
    # the key comes first on the command line, so no truncation of a long command line can hide it
    result = judgelab_cmd("rate", "--api-key", secret, "--items", str(items), "--criteria", "grammaticality",
                          "--judge", f"openai:m@{stub.base_url}", "--quiet", "--out", str(out))
    assert result.returncode == 0, result.stderr
    lock = out / "store.sqlite.lock"
    assert lock.is_file() and (lock.stat().st_mode & 0o077) == 0  # the lock file names the holder, for its user only
    for path in out.iterdir():
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert "--api-key ***" in " ".join(json.loads((out / "run.json").read_text())["argv"])
    assert "--api-key ***" in lock.read_text()
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"items: items.jsonl\njudge: openai:m@{stub.base_url}\napi_key: {secret}\n")
    refused = judgelab_cmd("run", str(spec))
    assert refused.returncode == 2 and "never holds an API key" in refused.stderr and secret not in refused.stderr
    in_url = judgelab_cmd("rate", "--items", str(items), "--criteria", "grammaticality", "--judge", "openai:m",
                          "--base-url", stub.base_url.replace("http://", "http://user:pw@"), "--quiet", "--out", str(out))
    assert in_url.returncode == 2 and "credentials in the endpoint URL" in in_url.stderr


def test_two_processes_on_one_store_pay_for_no_call_twice(tmp_path, stub_factory):
    """Both start at once; whichever takes the lock is paused (SIGSTOP) while it holds it, so the other
    is refused however the two are scheduled on a loaded machine, then the holder finishes."""
    stub = stub_factory(latency=0.05)
    items = write_items(tmp_path / "items.jsonl", 30)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "judgelab.cli", "rate", "--items", str(items), "--criteria", "grammaticality",
           "--judge", "openai:m", "--base-url", stub.base_url, "--concurrency", "2", "--out", str(out), "--quiet"]
    procs = {p.pid: p for p in (subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                                for _ in range(2))}
    try:
        holder = _lock_holder(out / "store.sqlite.lock", procs)
        os.kill(holder, signal.SIGSTOP)  # it keeps the lock until the other has been refused
        try:
            (other,) = [p for pid, p in procs.items() if pid != holder]
            refused = other.communicate(timeout=120)[1]
        finally:
            os.kill(holder, signal.SIGCONT)
        _, err = procs[holder].communicate(timeout=120)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    assert procs[holder].returncode == 0, err
    assert other.returncode == 2 and len(refused.strip().splitlines()) == 1, refused
    assert f"is in use by judgelab process {holder} (" in refused  # the holder, by its pid (docs/runs-and-stores.md)
    keys = stub.answered()
    assert len(keys) == len(set(keys)) == 30  # every call paid once


def _lock_holder(lock_file, procs: dict[int, subprocess.Popen]) -> int:
    """The pid the store's lock file names once one of ``procs`` holds the lock."""
    def holder() -> int:
        text = lock_file.read_text(encoding="utf-8") if lock_file.exists() else ""
        pid = int(text.split()[2]) if text.endswith("\n") and text.startswith("judgelab process ") else 0
        return pid if pid in procs else 0

    return wait_until(holder, "one process holding the store's lock", procs=list(procs.values()))


def test_export_opens_read_only_and_refuses_foreign_files(tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    result = judgelab_cmd("export", str(empty), "--to", str(tmp_path / "x.csv"))
    assert result.returncode == 2 and "not a judgelab store" in result.stderr
    assert empty.read_bytes() == b""
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE judgments (id INTEGER, verdict TEXT)")
    db.execute("INSERT INTO judgments VALUES (1, 'guilty')")
    db.commit()
    db.close()
    before = hashlib.sha256(foreign.read_bytes()).hexdigest()
    result = judgelab_cmd("export", str(foreign), "--to", str(tmp_path / "x.csv"))
    assert result.returncode == 2 and "not a judgelab store" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert hashlib.sha256(foreign.read_bytes()).hexdigest() == before
    assert not (tmp_path / "foreign.sqlite-wal").exists()
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    result = judgelab_cmd("export", str(corrupt), "--to", str(tmp_path / "x.csv"))
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_foreign_sqlite_file_is_never_used_as_a_store(tmp_path):
    foreign = tmp_path / "store.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE judgments (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(JudgelabError, match="not a judgelab store"):
        Store(foreign)
