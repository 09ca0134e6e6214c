"""The report's "Cost and time" and "The folder's README": a command's wall time counts its analysis (not only
the writing of its folder), a later step's time is its own, a run with nothing recorded has no empty row, and
the README is shown as headings, tables and lists, never as raw Markdown."""
from __future__ import annotations

import json
import time

from judgelab.output import OutputFolder
from judgelab.report.html import build_report, render_report
from test_report_records import _humans, _rate_folder
from report_helpers import parse


def _slow_agreement(monkeypatch, seconds: float) -> None:
    import judgelab.agree as agree

    real = agree.agreement

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)

    monkeypatch.setattr(agree, "agreement", slow)


def test_agree_in_its_own_folder_records_the_time_of_its_analysis(tmp_path, monkeypatch):
    from judgelab.agree_run import run_agree

    out = _rate_folder(tmp_path)
    _slow_agreement(monkeypatch, 1.0)
    run_agree([out / "ratings.csv"], _humans(tmp_path), n_resamples=20, out=tmp_path / "agree")
    manifest = json.loads((tmp_path / "agree" / "run.json").read_text())
    assert manifest["command"] == "agree" and manifest["wall_s"] >= 1.0, manifest["wall_s"]
    assert build_report(tmp_path / "agree").what_ran.wall_s >= 1.0  # "What ran": wall time


def test_a_later_step_names_its_own_time(tmp_path, monkeypatch):
    from judgelab.agree_run import run_agree

    out = _rate_folder(tmp_path)
    _slow_agreement(monkeypatch, 1.0)
    run_agree([out / "ratings.csv"], _humans(tmp_path), n_resamples=20, out=out)
    [step] = json.loads((out / "run.json").read_text())["steps"]
    assert step["command"] == "agree" and step["wall_s"] >= 1.0
    notes = build_report(out).cost.notes
    assert any(n.startswith("A later step, agree, took ") for n in notes), notes
    assert any(n.startswith("The command (rate) took") for n in notes), notes


def test_a_run_with_nothing_recorded_has_no_empty_row(tmp_path):
    out = _rate_folder(tmp_path)
    manifest = json.loads((out / "run.json").read_text())
    manifest["runs"].append({"rater": "judge@tpl/1-3", "settings": {}})  # a run of which nothing was recorded
    (out / "run.json").write_text(json.dumps(manifest))
    cost = build_report(out).cost
    assert [r[0] for r in cost.table.rows] == [manifest["runs"][0]["rater"]]
    assert any("judge@tpl/1-3" in n and "has no row" in n for n in cost.notes), cost.notes


def test_the_readme_is_rendered_not_shown_as_markdown(tmp_path):
    folder = tmp_path / "f"
    import pandas as pd

    with OutputFolder(folder, "A study", command="demo") as output:
        output.table(pd.DataFrame({"a": [1]}), "scores", "scores per item, **bold** and `code`", show=False)
        output.finish(["data: `items.jsonl` <script>alert(1)</script>", "second note"], report=False)
    html = render_report(build_report(folder))
    page = parse(html)
    start, end = html.index('<section id="readme"'), html.index("</section>", html.index('<section id="readme"'))
    section = html[start:end]
    text = section.replace("<code>", "").replace("</code>", "")
    for raw in ("| --- |", "| file |", "`", "**", "# A study", "\n- "):
        assert raw not in text, raw  # no Markdown left in the page
    assert "<h3>A study</h3>" in section and '<th scope="col">file</th>' in section
    assert "<td><code>scores.csv</code></td>" in section and "<strong>bold</strong>" in section
    assert "<li>second note</li>" in section
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in section
    assert "readme" in page.ids()
