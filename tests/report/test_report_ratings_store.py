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
    judged = pd.read_csv(run / "ratings.csv", dtype=str, keep_default_na=False)
    judged = judged[~judged["rater"].str.startswith("human:")]
    left = int((~judged["item_id"].isin(RATED)).sum())  # the judgments (samples) of the 16 units left out
    assert 0 < left < len(judged)
    assert WITHOUT_HUMANS.format(left=left, all=len(judged)) in data.items.notes
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


def test_a_comparison_page_is_the_same_from_the_rows_it_reads_as_from_every_row(run, tmp_path, monkeypatch):
    """The temporary store of a comparison holds only the rows its page reads (the human-rated units, the first
    row and failure examples of each judge rater): the page is the one a store of every row gives."""
    from judgelab.report import html

    mine = tmp_path / "run"
    shutil.copytree(run, mine)
    (mine / "store.sqlite").unlink()  # no store made the file: the temporary-store route
    out = tmp_path / "agree"
    run_agree([mine / "ratings.csv"], _humans(tmp_path / "H.csv"), out=out)
    _caps(monkeypatch)
    monkeypatch.setattr(ratings_store, "CHUNK_ROWS", 7)  # first rows and failure examples across chunks
    copied = []
    real = ratings_store.ratings_store
    monkeypatch.setattr(html_parts, "PART_UNITS", 4)

    def spy(paths, target, mapping=None, rated=None):
        made = real(paths, target, mapping, rated)
        with sqlite3.connect(made) as db:
            copied.append(db.execute("SELECT count(*) FROM judgments").fetchone()[0])
        return made
    monkeypatch.setattr("judgelab.report.folder_ratings.ratings_store", spy)
    shown = build_report(out)
    (tmp_path / "shown").mkdir()
    shown_units = _paged(out, tmp_path / "shown")
    monkeypatch.setattr(html, "_rated", lambda *a: None)  # copy every row
    every = build_report(out)
    (tmp_path / "every").mkdir()
    every_units = _paged(out, tmp_path / "every")
    rows = len(pd.read_csv(mine / "ratings.csv"))
    assert copied[0] == copied[1] < copied[2] == copied[3] == rows  # the comparison's page copies fewer rows
    assert shown_units == every_units and {u["item_id"] for u in shown_units} == RATED
    assert shown.items.notes == every.items.notes and shown.items.units == every.items.units == 16
    assert shown.what_ran == every.what_ran  # (its failures and first rows: the test below)


def _mixed(n_items=30):
    """Two judge raters x 2 criteria x n items x 2 samples with failures, and a human rating items 25-27 of c1."""
    rows = []
    for k in range(n_items):
        for rater in ("m@t", "n@t"):
            for criterion in ("c0", "c1"):
                for sample in (0, 1):
                    bad = (k + sample) % 7 == 3
                    rows.append({"item_id": f"i{k}", "criterion": criterion, "rater": rater, "sample": sample,
                                 "score": "" if bad else 1 + (k + sample) % 5, "status": "error" if k % 11 == 5 and bad
                                 else "ok", "raw": f"{rater} {criterion} {k}/{sample}"})
        if 25 <= k <= 27:
            rows.append({"item_id": f"i{k}", "criterion": "c1", "rater": "human:a", "sample": 0, "score": 3,
                         "status": "ok", "raw": ""})
    return rows


def _read(path):
    from judgelab.report.store_reads import StoreRows

    db = sqlite3.connect(path)
    return db, StoreRows(db)


def test_the_rows_a_comparison_page_reads_are_those_of_every_row(tmp_path, monkeypatch):
    from judgelab.report.html_items_stream import RatedUnits

    monkeypatch.setattr(ratings_store, "CHUNK_ROWS", 9)
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    source = _write(tmp_path / "r.csv", _mixed())
    rated = RatedUnits(frozenset({("c0", "default", "i3")}), frozenset({("c0", "i0"), ("c0", "i1")}))
    every_db, every = _read(ratings_store.ratings_store([source], tmp_path / "every.sqlite"))
    part_db, part = _read(ratings_store.ratings_store([source], tmp_path / "part.sqlite", None, rated))
    assert every.left_out == 0 and part.left_out > 0
    assert part.count() == every.count() == 240
    kept = part_db.execute("SELECT count(*) FROM judgments").fetchone()[0]
    assert kept + part.left_out == 243  # every row is copied or counted
    pd.testing.assert_frame_equal(part.shown_rows(), every.shown_rows())  # "What ran", "Failures", the humans
    # every unit humans rate: those given, and those the file's own human rows rate (read again to copy them)
    units = [(r, "c0", "default", f"i{k}") for r in ("m@t", "n@t") for k in (0, 1, 3)] + \
            [(r, "c1", "default", f"i{k}") for r in ("m@t", "n@t") for k in (25, 26, 27)]
    for unit in units:
        assert part.unit_rows(unit) == every.unit_rows(unit) and len(part.unit_rows(unit)) == 2, unit
    assert part.unit_rows(("m@t", "c1", "default", "i8")) == []  # a unit no human rates: counted, not copied
    every_db.close()
    part_db.close()


def test_a_comparison_store_copies_every_row_when_no_judge_row_is_rated(tmp_path, monkeypatch):
    from judgelab.report.html_items_stream import RatedUnits

    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    source = _write(tmp_path / "r.csv", [r for r in _mixed() if not r["rater"].startswith("human:")])
    made = ratings_store.ratings_store([source], tmp_path / "s.sqlite", None,
                                       RatedUnits(frozenset(), frozenset({("c9", "i0")})))
    db, rows = _read(made)
    assert rows.left_out == 0 and db.execute("SELECT count(*) FROM judgments").fetchone()[0] == 240
    db.close()


def test_a_rating_given_twice_among_the_rows_left_out_is_still_found(tmp_path, monkeypatch):
    from judgelab.report.html_items_stream import RatedUnits

    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    rows = _mixed()
    twice = [r for r in rows if r["item_id"] == "i20" and r["rater"] == "m@t"][1]
    source = _write(tmp_path / "r.csv", rows + [dict(twice, raw="again")])
    rated = RatedUnits(frozenset(), frozenset({("c0", "i0")}))
    assert ratings_store.ratings_store([source], tmp_path / "s.sqlite", None, rated) is None
    assert not (tmp_path / "s.sqlite").exists()
