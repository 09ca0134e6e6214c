"""The HTML report of an output folder: structure, self-containment, escaping and its data,
checked with an HTML parser on real folders made by `judgelab rate`, `agree` and `dhp`."""
from __future__ import annotations

import json
import os
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from judgelab.agree_run import run_agree
from judgelab.errors import JudgelabError
from judgelab.report.html import build_report, render_report, write_report
from judgelab.report.html_model import ReportData
from judgelab.store import Judgment, Store
from report_helpers import (
    URL,
    XSS,
    dhp_folder,
    decode_units,
    human_rows,
    parse,
    rate_agree_folder,
    store_prompt_and_raw,
    write_humans,
)


@pytest.fixture(scope="module")
def rate_run(tmp_path_factory):
    return rate_agree_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def rate_report(rate_run, tmp_path_factory):
    """`judgelab report RUN --human H.csv` on the rate + agree folder (a copy: the folder stays as made)."""
    folder = tmp_path_factory.mktemp("rate-report") / "run"
    shutil.copytree(rate_run, folder)
    before = set(os.listdir(folder))
    humans = write_humans(folder.parent / "H.csv")
    r = run_cli("report", str(folder), "--human", str(humans))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"report: {folder / 'report.html'} (") and r.stdout.count("\n") == 1
    return folder, before, (folder / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dhp_report(tmp_path_factory):
    folder = dhp_folder(tmp_path_factory)
    path = write_report(folder, tmp_path_factory.mktemp("dhp-report") / "dhp.html")
    return folder, path.read_text(encoding="utf-8")


def _no_external_references(html: str) -> None:
    assert not URL.search(html), URL.search(html).group(0)
    assert "url(" not in html.lower()
    page = parse(html)
    for tag, attrs in page.tags:
        for name in ("src", "href", "action", "formaction", "poster", "srcset", "xlink:href", "data"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("#", "data:")), (tag, name, value)
        if tag == "script":
            assert "src" not in attrs
        if tag == "link":
            assert attrs.get("rel") == "icon" and attrs.get("href") == "data:,"
    for tag in ("iframe", "object", "embed", "base", "form"):
        assert tag not in {t for t, _ in page.tags}


def _semantic(page) -> None:
    tables = [a for t, a in page.tags if t == "table"]
    assert tables
    ths = [a for t, a in page.tags if t == "th"]
    assert ths and all(a.get("scope") in {"col", "row"} for a in ths)
    svgs = [a for t, a in page.tags if t == "svg"]
    for svg in svgs:
        assert svg.get("role") == "img" and svg.get("aria-labelledby")
    assert sum(1 for t, _ in page.tags if t == "title") >= len(svgs) + 1  # the page's and one per figure
    for _, a in page.tags:
        if a.get("class") == "folder-figure":
            assert a.get("alt")


# -- the rate + agree folder --------------------------------------------------------------------------
def test_one_file_and_nothing_else_written(rate_report):
    folder, before, html = rate_report
    after = set(os.listdir(folder))  # rate already wrote report.html; `judgelab report` rewrites only it
    assert after - before <= {"report.html"} and "report.html" in after
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")


def test_no_external_url_anywhere(rate_report):
    _, _, html = rate_report
    # the data hold URLs (an item's text), written so that no URL appears literally
    assert "example.com" in html
    _no_external_references(html)


def test_sections_present(rate_report):
    _, _, html = rate_report
    page = parse(html)
    ids = page.ids()
    for section in ("what-ran", "results", "agreement", "failures", "items", "cost"):
        assert section in ids
        assert ("a", {"href": f"#{section}"}) in page.tags
    assert "discernment" not in ids
    text = "".join(page.text)
    assert "Disagreements" in text and "template SHA-256" in text
    manifest = json.loads((rate_report[0] / "run.json").read_text())
    assert manifest["runs"][0]["settings"]["template_sha256"] in text
    assert "Williams" in text and "Human baseline" in text and "95% CI" in text
    assert "Problems reading the folder" not in text
    _semantic(page)


def test_exact_prompts_of_each_criterion_shown(rate_report):
    folder, _, html = rate_report
    text = "".join(parse(html).text)
    stored = store_prompt_and_raw(folder / "store.sqlite")
    for criterion in ("grammaticality", "cohesiveness", "likability", "relevance"):
        prompts = [v["messages"][0][1] for k, v in stored.items() if k[1] == criterion]
        assert any(p in text for p in prompts), criterion


def test_disagreements_ranked_with_exact_prompts_and_answers(rate_report):
    folder, _, html = rate_report
    units = decode_units(parse(html))
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str})
    humans = pd.DataFrame(human_rows())
    assert len(units) == ratings.groupby(["criterion", "system", "item_id"]).ngroups
    # independent computation of judge mean, human mean and their difference
    ok = ratings[ratings["status"] == "ok"]
    judge = ok.groupby(["criterion", "system", "item_id"])["score"].mean()
    human = humans.groupby(["criterion", "system", "item_id", "rater"])["score"].mean().groupby(
        level=["criterion", "system", "item_id"]).mean()
    for u in units:
        key = (u["criterion"], u["system"], u["item_id"])
        if key in judge.index:
            assert u["judge"] == pytest.approx(judge[key], abs=1e-4)
            assert u["diff"] == pytest.approx(judge[key] - human[key], abs=1e-4)
        else:
            assert u["judge"] is None and u["diff"] is None
        assert u["human"] == pytest.approx(human[key], abs=1e-4)
        assert sorted(h[1] for h in u["humans"]) == sorted(
            humans[(humans["criterion"] == key[0]) & (humans["system"] == key[1]) & (humans["item_id"] == key[2])]["score"])
    diffs = [abs(u["diff"]) for u in units if u["diff"] is not None]
    assert diffs == sorted(diffs, reverse=True) and diffs[0] > diffs[-1]
    assert all(u["diff"] is None for u in units[len(diffs):])  # undefined differences last
    stored = store_prompt_and_raw(folder / "store.sqlite")
    seen = 0
    for u in units:
        for s in u["samples"]:
            record = stored[(u["rater"], u["criterion"], u["system"], u["item_id"], s["sample"])]
            assert u["prompts"][s["prompt"]] == record["messages"]
            assert s["raw"] == record["raw"]
            seen += 1
    assert seen == len(ratings)


def test_script_in_data_is_only_escaped(rate_report):
    _, _, html = rate_report
    assert XSS not in html
    assert "<b>5</b>" not in html
    page = parse(html)
    assert sum(1 for t, _ in page.tags if t == "script") == 3  # two JSON data blocks and the page's script
    assert [a.get("type") for a, _ in page.scripts][:2] == ["application/json", "application/json"]
    assert XSS in "".join(page.text)  # shown as text (the first prompt, a failure example)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for attrs, body in page.scripts[:2]:
        assert "<" not in body and ">" not in body and "&" not in body
    units = decode_units(page)
    assert any(XSS in s["raw"] for u in units for s in u["samples"] if s["raw"])
    assert any(u["item_id"] == "s<b>5</b>" for u in units)
    assert any(XSS in content for u in units for p in u["prompts"] for _, content in p)


def test_correlation_cis_are_agrees_own_and_plausible(rate_report):
    folder, _, html = rate_report
    corr = pd.read_csv(folder / "correlations.csv")
    row = corr[(corr["level"] == "overall") & (corr["method"] == "pearson")].iloc[0]
    # the report shows agree's cluster-bootstrap interval, not a second computation of its own
    assert row["ci_low"] < row["r"] < row["ci_high"]
    text = "".join(parse(html).text)
    assert f"{row['ci_low']:.3f}" in text and f"{row['ci_high']:.3f}" in text and "cluster bootstrap" in text


# -- the DHP folder ---------------------------------------------------------------------------------------
def test_dhp_report(dhp_report):
    folder, html = dhp_report
    _no_external_references(html)
    page = parse(html)
    ids = page.ids()
    for section in ("what-ran", "results", "discernment", "failures", "items", "cost", "figures"):
        assert section in ids
    assert "agreement" not in ids and "fig-dhp" in ids
    text = "".join(page.text)
    assert "Discernment scores per judge" in text and "D = 1 (p = 0.05)" in text
    assert "Items" in text and "No human ratings were found" in text
    images = [a for t, a in page.tags if t == "img"]
    assert {a["src"].split(",")[0] for a in images} == {"data:image/png;base64"} and len(images) == 2
    units = decode_units(page)
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str})
    assert len(units) == ratings.groupby(["rater", "criterion", "system", "item_id"]).ngroups
    assert all(u["prompts"] and u["human"] is None for u in units)
    _semantic(page)


# -- other folders, bad input ----------------------------------------------------------------------------
def test_agree_only_folder(rate_run, tmp_path):
    out = tmp_path / "agree"
    r = run_cli("agree", str(rate_run / "ratings.csv"), "--human", str(write_humans(tmp_path / "H.csv")),
                     "--out", str(out), "--format", "csv")
    assert r.returncode == 0, r.stderr
    data = build_report(out)
    assert isinstance(data, ReportData)
    assert data.agreement is not None and data.agreement.correlations is not None
    assert not data.problems  # agree records its inputs in run.json; the report may show them
    _no_external_references(render_report(data))


def test_human_ratings_from_folder_file_and_store(rate_run, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    for name in ("correlations.csv", "williams.csv", "human_baseline.csv", "self_consistency.csv"):
        (folder / name).unlink()
    # results.json records the agree step into this folder: its human file is read without the CSVs
    assert build_report(folder).items.has_human
    record = json.loads((folder / "results.json").read_text())
    record["steps"] = [s for s in record["steps"] if s["kind"] != "agree"]
    (folder / "results.json").write_text(json.dumps(record))
    assert not build_report(folder).items.has_human
    assert build_report(folder).agreement is None
    write_humans(folder / "human_ratings.csv")
    data = build_report(folder)
    assert data.items.has_human and data.items.human_sources == ["human_ratings.csv"]
    # the report computes no agreement: without an agree step it says so and names the command
    assert data.agreement is None and data.headline is None
    assert any("No agreement step" in n and "judgelab agree" in n for n in data.notes)
    (folder / "human_ratings.csv").unlink()
    # human rows in the store, as the annotation app writes them
    with Store(folder / "store.sqlite") as store:
        store.put(judgments=[Judgment(item_id=h["item_id"], system=h["system"], group=None, criterion=h["criterion"],
                                      rater=f"human:{h['rater']}", sample=0, score=float(h["score"]),
                                      score_parsed=float(h["score"]), score_logprob=None, logprob_outside=None,
                                      status="ok", raw=None) for h in human_rows()])
    data = build_report(folder)
    assert data.items.has_human and data.items.human_sources == ["store.sqlite"]
    units = decode_units(parse(render_report(data)))
    assert all(not u["rater"].startswith("human:") for u in units)
    diffs = [abs(u["diff"]) for u in units if u["diff"] is not None]
    assert diffs == sorted(diffs, reverse=True)


def test_logprob_distribution_shown(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"t{i}", "text": f"Text {i}."}) + "\n" for i in range(3)))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "3", "default_probs": {"2": 0.25, "3": 0.5, "4": 0.2, "x": 0.05}}))
    out = tmp_path / "run"
    r = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--judge", f"scripted-test-double:{script}",
                     "--score", "logprob", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    units = decode_units(parse(write_report(out).read_text()))
    dist = units[0]["samples"][0]["dist"]
    assert dist == [["3", 0.5], ["2", 0.25], ["4", 0.2], ["x", 0.05]]
    assert units[0]["cue"] is not None


def test_damaged_data_still_gives_a_report(rate_run, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    (folder / "run.json").write_text("{not json")
    (folder / "williams.csv").write_text("")
    (folder / "welch.csv").write_text("rater,criterion\n")
    (folder / "extra.csv").write_text("a,b\n1,x\n")
    html = write_report(folder).read_text()
    page = parse(html)
    text = "".join(page.text)
    assert "run.json could not be read" in text
    assert {"what-ran", "results", "agreement", "items", "tables"} <= page.ids()
    assert "extra.csv" in text


def test_folder_without_a_store(rate_run, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(rate_run / "ratings.csv", folder / "ratings.csv")
    data = build_report(folder, human=[write_humans(tmp_path / "H.csv")])
    assert data.items.has_human and not data.items.prompts_available
    assert data.failures is not None and not data.problems
    assert data.results is None  # a ratings file alone records no summary: the report computes none


def test_bad_input_is_one_line_exit_2(rate_run, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (["report", str(tmp_path / "missing")], "folder not found"),
        (["report", str(empty)], "is not a judgelab output folder"),
        (["report", str(rate_run / "ratings.csv")], "is not a folder"),
        (["report", str(rate_run), "--out", str(tmp_path / "no" / "such" / "r.html")], "does not exist"),
        (["report", str(rate_run), "--out", str(tmp_path)], "is a folder"),
    ]
    for args, message in cases:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and message in r.stderr and r.stderr.startswith("judgelab: error: "), r.stderr
    with pytest.raises(JudgelabError):
        write_report(tmp_path / "missing")


def test_library_does_not_print(rate_run, tmp_path, capsys):
    write_report(rate_run, tmp_path / "r.html")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_render_is_pure_and_escapes_everything(rate_run):
    data = build_report(rate_run)
    data.title = XSS
    data.notes.append("see http://evil.example/" + XSS)
    html = render_report(data)
    assert XSS not in html and not URL.search(html)
    assert re.search(r"<title>&lt;script&gt;alert\(1\)&lt;/script&gt;</title>", html)


def test_human_ratings_of_a_recorded_agree_command(rate_run, tmp_path):
    """A folder of an older judgelab (no results.json) whose run.json records `judgelab agree … --human FILE`
    (wide layout, other column names): the record rebuilt from its files reads the recorded command line."""
    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    (folder / "results.json").unlink()
    wide = pd.DataFrame(human_rows()).pivot_table(index=["item_id", "rater", "system"], columns="criterion",
                                                  values="score").reset_index()
    wide = wide.rename(columns={"item_id": "story", "rater": "teacher"})
    wide.to_csv(tmp_path / "teachers.csv", index=False)
    manifest = json.loads((folder / "run.json").read_text())
    manifest.update(command="agree", argv=["judgelab", "agree", "ratings.csv", "--human", str(tmp_path / "teachers.csv"),
                                           "--human-layout", "wide", "--criteria-fields",
                                           "grammaticality,cohesiveness,likability,relevance", "--id-field", "story",
                                           "--rater-field", "teacher", "--out", str(folder)])
    (folder / "run.json").write_text(json.dumps(manifest))
    data = build_report(folder)
    assert data.items.has_human and "teachers.csv" in data.items.human_sources[0] and not data.problems
    units = decode_units(parse(render_report(data)))
    assert all(u["human"] is not None for u in units)


def test_store_with_human_ratings_only_and_a_readme(tmp_path):
    """An annotation folder (human rows only) with a README: results of the humans, the README as text."""
    folder = tmp_path / "annotations"
    folder.mkdir()
    with Store(folder / "store.sqlite") as store:
        store.put(judgments=[Judgment(item_id=h["item_id"], system=h["system"], group=None, criterion=h["criterion"],
                                      rater=f"human:{h['rater']}", sample=0, score=float(h["score"]),
                                      score_parsed=float(h["score"]), score_logprob=None, logprob_outside=None,
                                      status="ok", raw=None) for h in human_rows()])
    (folder / "README.md").write_text(f"# Notes\nSee https://example.org/guide {XSS}\n")
    data = build_report(folder)
    assert not data.problems and data.items is None and data.failures is None and data.agreement is None
    assert data.results is None  # no step recorded a summary, and the report computes none
    html = render_report(data)
    _no_external_references(html)
    assert XSS not in html and XSS in "".join(parse(html).text)
    assert "readme" in parse(html).ids()
    assert not (folder / "store.sqlite-wal").exists() and not (folder / "store.sqlite-shm").exists()


def _small_folder(tmp_path, n_items: int, groups: int = 1, humans=("human:ann", "human:bob")):
    """A ratings.csv with one judge and human raters (two by default) on ``n_items`` items (one system)."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(n_items):
        truth = rng.integers(1, 6)
        for rater, noise in (("judge", 1.0), *((h, 0.5) for h in humans)):
            rows.append({"item_id": f"i{i}", "system": "s", "group": f"g{i % groups}", "criterion": "quality",
                         "rater": rater, "sample": 0, "status": "ok",
                         "score": float(np.clip(np.round(truth + rng.normal(0, noise)), 1, 5))})
    folder = tmp_path / f"small{n_items}-{len(humans)}"
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "ratings.csv", index=False)
    run_agree([folder / "ratings.csv"], out=folder)  # the agree step the report renders
    return folder


def test_small_n_is_said_in_words_never_drawn_as_an_interval(tmp_path):
    """4 items: no interval anywhere on the first screen or in the chart, the reason instead; a single
    group is said to be one; 2 raters: the pairwise value is named the baseline."""
    data = build_report(_small_folder(tmp_path, 4))
    rows = {(r.level, r.judge): r for r in data.headline.rows}
    card = rows[("overall", "judge")]
    assert card.interval.startswith("no 95% interval: only 4 item_id value(s)") and "[" not in card.interval
    assert "two humans agree at" in card.baseline and "with 2 raters" in card.baseline
    html = render_report(data)
    headline = html[html.index('id="headline"'):html.index('id="results"')]
    assert "95% CI [" not in headline and "no 95% interval" in headline
    chart = html[html.index('id="fig-corr-0"'):]
    chart = chart[:chart.index("</svg>")]
    assert "<circle" not in chart and "only 4 item_id value(s)" in chart  # the reason written, no bare dot
    from judgelab.report.headline import interval_words

    words, caveat = interval_words(0.5, 0.1, 0.9, "", 1, "group")
    assert words.startswith("no interval: a single group") and not caveat


def test_enough_items_give_an_interval_with_the_few_clusters_caveat(tmp_path):
    data = build_report(_small_folder(tmp_path, 12))
    card = next(r for r in data.headline.rows if r.level == "overall")
    assert card.interval.startswith("95% CI [") and card.caveat.startswith("only 12 item_id values")
    assert card.items == 12 and card.judge_mean is not None and card.figure is not None  # human means: a scatter
    html = render_report(data)
    assert "Caution: only 12 item_id values" in html
    one = build_report(_small_folder(tmp_path / "one", 12, humans=("human:ann",)))
    card = next(r for r in one.headline.rows if r.level == "overall")
    assert card.figure is None and card.confusion is not None  # whole scores on both sides: a confusion table
    assert sum(sum(row[1:]) for row in card.confusion.rows) == 12
    assert "needs at least two individual human raters" in card.baseline


def test_one_rounding_rule_per_column_and_thousands_separators():
    from judgelab.report.html_model import Table
    from judgelab.report.html_render import format_cell, table_styles

    t = Table("t", "c", ["a", "b", "c", "d", "p"], ["num", "num", "int", "num", "p"],
              [[0.5, 0.0004, 100000, 1234.56, 0.0002], [0.000423, 0.0001, 20, 2.0, 0.2]])
    styles = table_styles(t)
    assert styles == ["fixed", "sci", "int", "thousands", "p"]
    column = lambda k: [format_cell(row[k], t.kinds[k], styles[k])[0] for row in t.rows]  # noqa: E731
    assert column(0) == ["0.500", "0.000"]  # not "4.23e-04" beside three decimals
    assert column(1) == ["4.00e-04", "1.00e-04"]
    assert column(2) == ["100,000", "20"]
    assert column(3) == ["1,234.6", "2.0"]
    assert column(4) == ["< 0.001", "0.200"]


def test_never_no_human_ratings_beside_an_agreement_table(rate_run, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    record = json.loads((folder / "results.json").read_text())
    for step in record["steps"]:
        for given in step["inputs"]:
            if given["role"] == "human":
                given["path"] = given["absolute"] = str(tmp_path / "gone.csv")
    (folder / "results.json").write_text(json.dumps(record))
    data = build_report(folder)
    assert data.agreement is not None and data.agreement.correlations is not None and not data.items.has_human
    assert not any("No human ratings were found" in n for n in data.items.notes)
    assert "could not be matched to these items here" in data.items.notes[0] and "gone.csv" in data.items.notes[0]


def test_two_raters_baseline_marker_is_their_pairwise_correlation(tmp_path):
    data = build_report(_small_folder(tmp_path, 30))
    rows = data.agreement.human_baseline.rows
    columns = data.agreement.human_baseline.columns
    overall = next(r for r in rows if r[columns.index("level")] == "overall")
    pairwise, vs_mean = overall[columns.index("pairwise")], overall[columns.index("vs_mean")]
    assert vs_mean > pairwise
    svg = data.agreement.figures[0].svg
    assert f"human baseline: {pairwise:.3f}" in svg and f": {vs_mean:.3f}</title>" not in svg


# -- cards: the rated text first -------------------------------------------------------------------------
def test_cards_carry_the_rated_text_and_context_as_the_run_recorded_them(rate_report, rate_run):
    _, _, html = rate_report
    units = decode_units(parse(html))
    given = {(r.get("system") or "default", str(r["id"])): r
             for r in map(json.loads, (rate_run.parent / "items.jsonl").read_text().splitlines())}
    assert units and all(u["rated"] is not None for u in units)
    for u in units:
        item = given[(u["system"], u["item_id"])]
        assert u["rated"]["text"] == item["text"] and u["rated"]["context"] == item["context"]
        assert u["rated"]["parts"] == {}
    # the rated text is in the prompt, so the payload points into it instead of storing it twice
    details = json.loads(__import__("gzip").decompress(__import__("base64").b64decode(
        json.loads(parse(html).script("jl-details"))["data"])))["D"]
    assert all(isinstance(d[4][0], list) and len(d[4][0]) == 4 for d in details)  # in the unit's own prompt
    for u, d in zip(units, details):  # the context stands only in the relevance prompt: the others point there
        ref = d[4][1]
        if u["criterion"] == "relevance":
            assert len(ref) == 4
        else:
            other = units[ref[0]]
            assert len(ref) == 5 and other["criterion"] == "relevance"
            assert (other["rater"], other["system"], other["item_id"]) == (u["rater"], u["system"], u["item_id"])
    assert "The rated text was not recorded for" not in html  # the section's note is for stores without texts


def test_a_store_without_the_items_table_still_reports_and_says_where_the_text_is(rate_run, tmp_path):
    import sqlite3

    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    db = sqlite3.connect(folder / "store.sqlite")  # as a store of version 3 is: no items table
    db.execute("DROP TABLE items")
    db.execute("UPDATE judgelab_meta SET value = '3' WHERE name = 'version'")
    db.commit()
    db.close()
    data = build_report(folder, human=[write_humans(tmp_path / "H.csv")])
    assert not data.problems and data.items is not None and data.items.prompts_available
    n = data.items.units
    assert f"The rated text was not recorded for {n} of {n} items" in " ".join(data.items.notes)
    html = render_report(data)
    units = decode_units(parse(html))
    assert all(u["rated"] is None for u in units) and all(u["prompts"] for u in units)
    assert f"The rated text was not recorded for {n} of {n} items" in "".join(parse(html).text)


def test_rated_text_not_in_the_prompt_is_stored_and_only_escaped(rate_run, tmp_path):
    import sqlite3

    folder = tmp_path / "run"
    shutil.copytree(rate_run, folder)
    context = f"A context {XSS} that no prompt holds </script><!-- & \u00e9\U0001f600"
    db = sqlite3.connect(folder / "store.sqlite")
    db.execute("UPDATE items SET context = ? WHERE item_id = 's<b>5</b>'", (context,))
    db.commit()
    db.close()
    html = write_report(folder).read_text(encoding="utf-8")
    assert XSS not in html and "</script><!--" not in html
    units = decode_units(parse(html))
    mine = [u for u in units if u["item_id"] == "s<b>5</b>"]
    assert mine and all(u["rated"]["context"] == context for u in mine)
    assert all(u["rated"]["text"].startswith("Story number 5.") for u in mine)


def test_text_references_count_utf16_units_as_the_page_does(tmp_path):
    """A context that follows a text with characters outside the BMP in the same prompt: its reference
    into the prompt is counted in UTF-16 code units (JavaScript's substr), so it reads back exactly."""
    from judgelab.datasets.items import Item
    from judgelab.models.backends.scripted import ScriptedTestJudge
    from judgelab.run import RunSpec, run_spec

    folder = tmp_path / "run"
    folder.mkdir()
    items = [Item("e1", "Caf\u00e9 \U0001f600\U0001f680 story, line one.\nLine two \u00e9.", context="Prompt \U0001f4da \u00e9"),
             Item("e2", "A plain story.", context="Prompt two")]
    with Store(folder / "store.sqlite") as store:
        run_spec(RunSpec(template="chiang-lee-story", samples=1), items, store,
                 backend=ScriptedTestJudge({"default": "I would rate it a 3."}))
    page = parse(render_report(build_report(folder)))
    units = decode_units(page)
    assert len(units) == 8
    for u in units:
        item = next(i for i in items if i.item_id == u["item_id"])
        assert u["rated"]["text"] == item.text and u["rated"]["context"] == item.context
    import base64
    import gzip

    details = json.loads(gzip.decompress(base64.b64decode(json.loads(page.script("jl-details"))["data"])))["D"]
    k = next(k for k, u in enumerate(units) if u["item_id"] == "e1" and u["criterion"] == "relevance")
    ref = details[k][4][1]  # the context, found in the relevance prompt after the text
    content = units[k]["prompts"][ref[0]][ref[1]][1]
    assert isinstance(ref, list) and ref[2] == content.index("Prompt \U0001f4da") + 2  # two emoji before it: 2 extra UTF-16 units


def test_a_pairs_card_carries_both_texts_by_name(tmp_path):
    from judgelab.datasets.items import Item
    from judgelab.models.backends.scripted import ScriptedTestJudge
    from judgelab.run import RunSpec, run_spec

    folder = tmp_path / "run"
    folder.mkdir()
    facts = {"premise": "A man reads.", "hypothesis": "A person reads.", "relationship": "entailment"}
    pair = Item("a|b", "a vs b", "pair", extra={"first": {**facts, "text": "A man is a person."},
                                                 "second": {**facts, "text": f"Because {XSS}."}})
    with Store(folder / "store.sqlite") as store:
        run_spec(RunSpec(template="nle-esnli-pairwise", samples=1, criteria=["informativeness"]), [pair], store,
                 backend=ScriptedTestJudge({"default": "Yes"}))
    html = render_report(build_report(folder))
    assert XSS not in html
    (unit,) = decode_units(parse(html))
    assert unit["rated"]["parts"] == {"first": "A man is a person.", "second": f"Because {XSS}."}
    assert unit["rated"]["text"] == "a vs b" and unit["rated"]["context"] is None
