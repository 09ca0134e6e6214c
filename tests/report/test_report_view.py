"""``judgelab view``: the live report app (in-process, Starlette's test client) and its refusals."""
from __future__ import annotations

import os
import shutil
import time

import pandas as pd

from conftest import run_cli
from judgelab.report.live import LiveReport, make_app
from report_helpers import rate_agree_folder


def test_the_page_is_the_report_and_is_rebuilt_when_the_ratings_change(tmp_path_factory, tmp_path):
    from starlette.testclient import TestClient

    folder = tmp_path / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), folder)
    live = LiveReport(folder, poll_ms=500)
    client = TestClient(make_app(live), base_url="http://127.0.0.1:8765")
    first = client.get("/")
    assert first.status_code == 200 and "<title>judgelab report: run</title>" in first.text
    assert 'fetch("version"' in first.text and first.text.rstrip().endswith("</html>")
    v1 = client.get("/version").json()["version"]
    assert client.get("/version").json()["version"] == v1  # nothing changed
    assert client.get("/").text == first.text  # not rebuilt (the same page, the same time stamp)
    ratings = pd.read_csv(folder / "ratings.csv")
    ratings.head(10).to_csv(folder / "ratings.csv", index=False)
    os.utime(folder / "ratings.csv", (time.time() + 5, time.time() + 5))
    (folder / "store.sqlite").rename(folder / "store.sqlite.away")  # the ratings file is read when no store is
    before = sorted(p.name for p in folder.iterdir())
    v2 = client.get("/version").json()["version"]
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
    for path in ("/", "/version"):
        refused = client.get(path, headers={"Host": "evil.example"})
        assert refused.status_code == 421 and "loopback" in refused.text and "<html" not in refused.text
        assert client.get(path, headers={"Host": "evil.example:8765"}).status_code == 421
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "localhost"):
        answered = client.get("/", headers={"Host": host})
        assert answered.status_code == 200 and "<title>judgelab report" in answered.text, host
