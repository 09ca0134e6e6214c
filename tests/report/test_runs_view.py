"""``judgelab view DIR`` of a folder of runs, in-process: the list (what each run.json says), each run's live report,
two runs compared when asked, and what is refused (a name the list does not hold, another host)."""
from __future__ import annotations

import json
import shutil

import pytest

from judgelab.errors import JudgelabError
from judgelab.report.runs_list import is_runs_folder, list_runs, render_runs
from judgelab.view_runs import RunsView, make_runs_app
from report_helpers import three_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return three_runs(tmp_path_factory.mktemp("runs-view"))


def test_the_list_says_what_each_run_json_says(runs, tmp_path):
    entries = list_runs(runs)
    assert [e.name for e in entries] == ["lenient", "strict", "third"]
    strict = entries[1]
    assert (strict.command, strict.template, strict.criteria, strict.judgments, strict.failures) == \
        ("rate", "chiang-lee-story", ("likability",), 10, 1)
    assert strict.judges == ("scripted-test-double@chiang-lee-story",) and strict.when.startswith("20")
    # a damaged run.json is said on its row, never a crash
    copy = tmp_path / "runs"
    shutil.copytree(runs, copy)
    (copy / "third" / "run.json").write_text("{not json")
    third = list_runs(copy)[2]
    assert third.problem.startswith("run.json not read") and third.judgments is None
    page = render_runs(copy, list_runs(copy))
    assert 'href="run/strict/"' in page and "run.json not read" in page and "://" not in page


def test_a_folder_of_runs_is_told_from_a_run_and_from_an_empty_folder(runs, tmp_path):
    assert is_runs_folder(runs) and not is_runs_folder(runs / "strict") and not is_runs_folder(tmp_path)
    with pytest.raises(JudgelabError, match="holds no judgelab output folder"):
        list_runs(tmp_path)


def test_the_app_serves_the_list_each_run_and_a_comparison(runs):
    from starlette.testclient import TestClient

    client = TestClient(make_runs_app(RunsView(runs, poll_ms=500)), base_url="http://127.0.0.1:8765")
    assert 'data-run="third"' in client.get("/").text
    page = client.get("/run/strict/")
    assert page.status_code == 200 and 'id="live-strip"' in page.text  # the run's live report
    assert client.get("/run/strict/state").json()["run"]["state"] == "finished"
    assert client.get("/run/nothere/").status_code == 404
    compared = client.get("/compare", params={"a": "lenient", "b": "strict"})
    assert compared.status_code == 200 and 'id="cmp-rows"' in compared.text
    rows = json.loads(compared.text.split('id="cmp-rows">', 1)[1].split("</script>", 1)[0])
    assert [r[0] for r in rows["rows"][:3]] == ["s1", "s6", "s8"]
    refused = client.get("/compare", params={"a": "lenient", "b": "../strict"})
    assert refused.status_code == 400 and "no run '../strict'" in refused.text
    other = TestClient(make_runs_app(RunsView(runs)), base_url="http://attacker.example")
    assert other.get("/").status_code == 421


def test_view_of_a_folder_of_runs_refuses_human_files_in_one_line(runs, tmp_path):
    from conftest import run_cli

    humans = tmp_path / "h.csv"
    humans.write_text("item_id,rater,criterion,score\ns0,ann,likability,3\n")
    r = run_cli("view", str(runs), "--human", str(humans), "--port", "0")
    assert r.returncode == 2 and "--human is for one run's folder" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
