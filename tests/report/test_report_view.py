"""``judgelab view``: the live report app (in-process, Starlette's test client) and its refusals."""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

from conftest import run_cli, write_items
from judgelab.report.live import LiveReport, make_app
from report_helpers import rate_agree_folder
from servers import wait_until


def test_the_page_is_the_report_and_is_rebuilt_when_the_ratings_change(tmp_path_factory, tmp_path):
    from starlette.testclient import TestClient

    folder = tmp_path / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), folder)
    live = LiveReport(folder, poll_ms=500)
    client = TestClient(make_app(live), base_url="http://127.0.0.1:8765")
    first = client.get("/")
    assert first.status_code == 200 and "<title>judgelab report: run</title>" in first.text
    assert 'fetch("state"' in first.text and "location.reload" not in first.text and first.text.rstrip().endswith("</html>")
    v1 = client.get("/state").json()["version"]
    assert client.get("/state").json()["version"] == v1  # nothing changed
    assert f'data-version="{v1}"' in first.text  # the page knows the version it shows
    assert client.get("/").text == first.text  # not rebuilt (the same page, the same time stamp)
    ratings = pd.read_csv(folder / "ratings.csv")
    ratings.head(10).to_csv(folder / "ratings.csv", index=False)
    os.utime(folder / "ratings.csv", (time.time() + 5, time.time() + 5))
    (folder / "store.sqlite").rename(folder / "store.sqlite.away")  # the ratings file is read when no store is
    before = sorted(p.name for p in folder.iterdir())
    v2 = client.get("/state").json()["version"]
    assert v2 != v1
    assert client.get("/").text != first.text
    assert sorted(p.name for p in folder.iterdir()) == before  # serving writes nothing into the folder


def test_view_refuses_a_missing_folder_and_a_bad_option(tmp_path):
    r = run_cli("view", str(tmp_path / "nope"), "--port", "0")
    assert r.returncode == 2 and "folder not found" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    (tmp_path / "run.json").write_text("{}")
    r = run_cli("view", str(tmp_path), "--every", "0")
    assert r.returncode == 2 and "--every" in r.stderr


def test_view_answers_only_requests_addressed_to_a_loopback_name(tmp_path_factory):
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own Host: refused."""
    from starlette.testclient import TestClient

    client = TestClient(make_app(LiveReport(rate_agree_folder(tmp_path_factory), poll_ms=500)))
    for path in ("/", "/state"):
        refused = client.get(path, headers={"Host": "evil.example"})
        assert refused.status_code == 421 and "loopback" in refused.text and "<html" not in refused.text
        assert client.get(path, headers={"Host": "evil.example:8765"}).status_code == 421
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "localhost"):
        answered = client.get("/", headers={"Host": host})
        assert answered.status_code == 200 and "<title>judgelab report" in answered.text, host


def _client(folder):
    from starlette.testclient import TestClient

    return TestClient(make_app(LiveReport(folder, poll_ms=500)), base_url="http://127.0.0.1:8765")


def test_the_state_follows_a_run_from_running_to_finished_with_the_counts_it_recorded(tmp_path):
    from judgelab.datasets.items import load_items
    from judgelab.errors import ServerError
    from judgelab.models.backends.scripted import ScriptedTestJudge
    from judgelab.models.retry import RetryPolicy
    from judgelab.run import RunSpec, run_spec
    from judgelab.store import Store

    class SlowFlaky(ScriptedTestJudge):  # every 4th attempt a server error, retried at once
        retry_policy = RetryPolicy(backoff_base=0.01, backoff_cap=0.02)
        attempts = raised = 0

        async def _complete(self, request):
            self.attempts += 1
            await asyncio.sleep(0.1)
            if self.attempts % 4 == 0:
                self.raised += 1
                raise ServerError("HTTP 503: busy")
            return await super()._complete(request)

    folder = tmp_path / "run"
    folder.mkdir()
    items = load_items(write_items(tmp_path / "items.jsonl", 16))
    judge = SlowFlaky({"rules": [{"contains": "Story number 5.", "reply": "no rating here"}], "default": "4"})
    with Store(folder / "store.sqlite") as store:
        client = _client(folder)
        before = client.get("/state").json()
        assert before["run"] is None and before["checked"].startswith("checked ")
        worker = threading.Thread(target=run_spec, args=(RunSpec(samples=1, concurrency=2, criteria=["likability"]),
                                                         items, store), kwargs={"backend": judge})
        worker.start()
        seen = []
        while worker.is_alive():
            seen.append(client.get("/state").json()["run"])
            time.sleep(0.1)
        worker.join()
        after = client.get("/state").json()
        page = client.get("/").text
    running = [r for r in seen if r and r["state"] == "running"]
    assert running and {r["planned"] for r in running} == {16}
    middle = [r for r in running if 0 < r["done"] < 16]
    assert middle, seen
    r = middle[-1]
    assert r["text"]["done"] == f"{r['done']} of 16 judgments done ({100 * r['done'] // 16}%)"
    assert r["text"]["eta"].startswith("ETA 0:00:") and r["rate"] > 0 and r["text"]["state"] == "running"
    assert {"state", "rater", "done", "failed", "retries", "rate", "eta"} <= set(r["text"])
    run = after["run"]
    assert run["state"] == "finished" and run["text"]["state"] == "finished" and run["text"]["eta"] == ""
    assert (run["planned"], run["done"], run["failed"]) == (16, 16, 1)
    assert run["retries"] == judge.raised >= 3 and run["retries_by_reason"] == {"server_error": judge.raised}
    assert run["text"]["retries"] == f"{judge.raised} retries (server error {judge.raised})"
    assert run["text"]["failed"] == "1 failed"
    assert 'id="live-strip"' in page and re.search(r'<section data-live="[0-9a-f]{16}" id="items"', page)


def test_a_killed_run_is_stopped(tmp_path, stub_factory):
    """``kill -9`` leaves the run's entry open; no process holds the store's lock: stopped, not running."""
    stub = stub_factory(latency=0.15)
    items = write_items(tmp_path / "items.jsonl", 40)
    folder = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", "rate", "--items", str(items), "--judge",
                             f"openai:m@{stub.base_url}", "--criteria", "likability", "--samples", "1", "--concurrency", "1",
                             "--out", str(folder), "--quiet"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def running():
            if not (folder / "store.sqlite").exists():
                return None
            run = _client(folder).get("/state").json()["run"]
            return run if run and run["state"] == "running" and run["done"] >= 2 else None

        seen = wait_until(running, "the run's first judgments", procs=[proc], limit_s=60)
        assert seen["planned"] == 40 and seen["text"]["eta"].startswith("ETA ")
        proc.send_signal(signal.SIGKILL)
        time.sleep(0.2)
        zombie = _client(folder).get("/state").json()["run"]  # not yet waited for: its process id still exists
        proc.wait()
        waited = _client(folder).get("/state").json()["run"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for run in (zombie, waited):
        assert run["state"] == "stopped" and "killed or crashed" in run["text"]["state"]
        assert 2 <= run["done"] < run["planned"] == 40 and run["text"]["eta"] == ""


def test_the_page_marks_each_section_with_a_digest_and_carries_the_strip_and_the_script():
    from judgelab.report.live_page import live_page

    def page(b: str) -> str:
        return ('<html><body>\n<header class="top"><h1>t</h1></header><main><section id="a"><h2>A</h2></section>'
                f'<p class="note">n</p><section id="b"><h2>{b}</h2></section></main><script>x</script></body></html>')

    def digests(html: str) -> dict[str, str]:
        found = re.findall(r'<(?:section|header) data-live="([0-9a-f]{16})" (?:id="(\w+)"|class="top")', html)
        return {name or "header": digest for digest, name in found}

    one, two = live_page(page("B"), "v1", 1500), live_page(page("B changed"), "v2", 1500)
    first, second = digests(one), digests(two)
    assert set(first) == {"header", "a", "b"} and first["a"] == second["a"] and first["header"] == second["header"]
    assert first["b"] != second["b"]  # only the section that changed
    assert one.index('id="live-strip"') < one.index("<header") and 'data-version="v1"' in one
    assert 'data-every="1500"' in one and one.index('fetch("state"') > one.index("<script>x</script>")
