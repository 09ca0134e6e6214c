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
    client = TestClient(make_app(live))
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
