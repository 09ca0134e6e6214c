"""The page of a comparison (``agree``, ``audit``) of many judgments, read a chunk at a time, never whole.

The caps are lowered (the folder of ``report_helpers.rate_agree_folder`` has 32 units; humans here rate the
items of 16 of them) so that its agree folder counts as one of many judgments. Its ratings file is read through
the store that made it when the two hold the same judgments, else through a temporary store of the file's rows;
either way the page's cards are the units humans rated, the same cards (read back without judgelab's code) as
the whole page of every unit holds for them.
"""
from __future__ import annotations

import csv
import shutil
import sqlite3

import pandas as pd
import pytest

from judgelab.agree_run import run_agree
from judgelab.report import html_parts, ratings_store
from judgelab.report.html import build_report, render_report, write_report
from judgelab.report.html_items_stream import WITHOUT_HUMANS
from report_helpers import decode_units, human_rows, parse, rate_agree_folder

RATED = {"s0", "s1", "s2", "s3"}  # the items humans rated here: 4 items x 4 criteria = 16 of the 32 units


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("many") / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), out)
    return out


def _humans(path):
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["item_id", "rater", "criterion", "score", "system"])
        w.writeheader()
        w.writerows(r for r in human_rows() if r["item_id"] in RATED)
    return path


def _caps(monkeypatch):
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    monkeypatch.setattr(html_parts, "PART_UNITS", 4)


def _paged(folder, tmp_path):
    (tmp_path / "page").mkdir()
    path = write_report(folder, tmp_path / "page" / "report.html")
    units = decode_units(parse(path.read_text(encoding="utf-8")), tmp_path / "page" / "report-items")
    return sorted(units, key=lambda u: u.pop("place"))


def test_the_cards_are_the_human_rated_units_of_the_store_that_made_the_file(run, tmp_path, monkeypatch):
    out = tmp_path / "agree"
    run_agree([run / "ratings.csv"], _humans(tmp_path / "H.csv"), out=out)
    whole = decode_units(parse(render_report(build_report(out))))  # below the cap: every unit, read whole
    assert len(whole) == 32
    _caps(monkeypatch)
    data = build_report(out)
    assert data.items.units == 16 and data.items.prompts_available
    assert WITHOUT_HUMANS.format(left=16, all=32) in data.items.notes
    assert "store.sqlite" in data.what_ran.sources
    paged = _paged(out, tmp_path)
    assert {u["item_id"] for u in paged} == RATED
    # the same cards (texts, prompts, samples, humans), in the same order, as the whole page's human-rated units
    assert paged == [{k: v for k, v in u.items() if k != "place"} for u in whole if u["item_id"] in RATED]


def test_a_ratings_file_edited_after_the_run_is_read_from_itself(run, tmp_path, monkeypatch):
    mine = tmp_path / "run"
    shutil.copytree(run, mine)
    table = pd.read_csv(mine / "ratings.csv", dtype=str, keep_default_na=False)
    row = table.index[(table["item_id"] == "s0") & (table["criterion"] == "grammaticality")
                      & ~table["rater"].str.startswith("human:") & (table["status"] == "ok")][0]
    assert table.loc[row, "score"] == "5.0"
    table.loc[row, ["score", "score_parsed"]] = "2.0"  # not what the store holds
    table.to_csv(mine / "ratings.csv", index=False)
    out = tmp_path / "agree"
    run_agree([mine / "ratings.csv"], _humans(tmp_path / "H.csv"), out=out)
    _caps(monkeypatch)
    data = build_report(out)
    assert "ratings.csv (read a chunk at a time)" in data.what_ran.sources and not data.items.prompts_available
    paged = _paged(out, tmp_path)
    edited = [u for u in paged if u["item_id"] == "s0" and u["criterion"] == "grammaticality"
              and u["rater"] == table.loc[row, "rater"]]
    unit = table[(table["item_id"] == "s0") & (table["criterion"] == "grammaticality")
                 & (table["rater"] == table.loc[row, "rater"])].sort_values("sample")
    assert [s["score"] for u in edited for s in u["samples"]] == [float(x) for x in unit["score"]]
    assert 2.0 in [s["score"] for s in edited[0]["samples"]]  # the file agree read, not the store


def _write(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _rows(n, criterion="c"):
    return [{"item_id": f"i{k}", "criterion": criterion, "rater": "m@t", "score": 1 + k % 5, "sample": 0,
             "raw": f"answer {k}"} for k in range(n)]


def test_ratings_store_copies_every_row_a_chunk_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(ratings_store, "CHUNK_ROWS", 3)
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    rows = _rows(10)
    for suffix, write in ((".csv", lambda p: _write(p, rows)),
                          (".jsonl", lambda p: pd.DataFrame(rows).to_json(p, orient="records", lines=True)),
                          (".parquet", lambda p: pd.DataFrame(rows).to_parquet(p))):
        source = tmp_path / f"r{suffix}"
        write(source)
        made = ratings_store.ratings_store([source], tmp_path / f"s{suffix}.sqlite", {"c": "renamed"})
        assert made is not None, suffix
        with sqlite3.connect(made) as db:
            got = db.execute("SELECT item_id, criterion, score, raw, status, seq FROM judgments ORDER BY seq").fetchall()
        assert got == [(f"i{k}", "renamed", float(1 + k % 5), f"answer {k}", "ok", k + 1) for k in range(10)], suffix


def test_ratings_store_leaves_to_the_whole_read_what_it_cannot_hold(tmp_path, monkeypatch):
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    target = tmp_path / "s.sqlite"
    assert ratings_store.ratings_store([_write(tmp_path / "few.csv", _rows(5))], target) is None  # no more than the page
    assert ratings_store.ratings_store([_write(tmp_path / "twice.csv", _rows(8) + _rows(1))], target) is None
    (tmp_path / "other.csv").write_text("question_id,model,judge,score\n1,a,b,3\n")
    assert ratings_store.ratings_store([tmp_path / "other.csv"], target) is None  # not the tidy layout
    assert not target.exists()
