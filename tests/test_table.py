"""The tidy table (``judgelab.table``): one column list and one normaliser for every reader, the rater's
identity carried as columns, and files and stores written before those columns read and resume the same
(``tests/table_before``: written by judgelab before this change)."""
from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.ratings import read_ratings
from judgelab.table import IDENTITY_COLUMNS, JUDGMENT_COLUMNS, TIDY_COLUMNS, normalise

BEFORE = Path(__file__).resolve().parent / "table_before"
JUDGE = "scripted-test-double@chiang-lee-story"


def _numbers(tables: dict) -> dict:
    """The tables without their ``note`` texts: the numbers are what must not change (a note's wording may,
    e.g. the few-clusters note now states the measured coverage instead of naming a docs page)."""
    return {name: [{k: v for k, v in row.items() if k != "note"} for row in rows] for name, rows in tables.items()}


def _agree_tables(*args: str) -> dict:
    result = run_cli("agree", *args, "--format", "json", "--n-resamples", "200")
    assert result.returncode == 0, result.stderr
    return _numbers(json.loads(result.stdout)["tables"])


def test_an_older_ratings_file_reads_with_the_identity_columns():
    df = read_ratings(BEFORE / "ratings.csv")
    assert list(df.columns) == TIDY_COLUMNS + IDENTITY_COLUMNS
    ids = df.drop_duplicates("rater").set_index("rater")[IDENTITY_COLUMNS]
    assert ids.loc[JUDGE].tolist() == ["judge", "scripted-test-double", "chiang-lee-story", None, False, None]
    assert ids.loc[JUDGE + "#f390e0"].tolist() == ["judge", "scripted-test-double", "chiang-lee-story", None, False,
                                                   "f390e0"]


def test_agree_on_an_older_ratings_file_gives_the_numbers_it_gave_before():
    before = _numbers(json.loads((BEFORE / "agree_main.json").read_text())["tables"])
    assert _agree_tables(str(BEFORE / "ratings.csv"), "--human", str(BEFORE / "human.csv")) == before


def _rate(out: Path, samples: int, tmp_path: Path):
    items, script = tmp_path / "items.jsonl", tmp_path / "script.json"
    for name in ("items.jsonl", "script.json"):
        if not (tmp_path / name).exists():
            shutil.copy(BEFORE / name, tmp_path / name)
    result = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--criteria",
                     "likability", "--samples", str(samples), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return result


def test_a_new_ratings_file_has_the_identity_and_gives_the_same_numbers(tmp_path):
    out = tmp_path / "out"
    _rate(out, 2, tmp_path)
    _rate(out, 1, tmp_path)
    written = pd.read_csv(out / "ratings.csv")
    assert list(written.columns[-len(IDENTITY_COLUMNS):]) == IDENTITY_COLUMNS
    assert written["digest"].tolist() == ["f390e0"] * len(written)  # the second run's label: same settings as before
    assert run_cli("export", str(out / "store.sqlite"), "--to", str(tmp_path / "all.csv")).returncode == 0
    new, old = read_ratings(tmp_path / "all.csv"), read_ratings(BEFORE / "ratings.csv")
    pd.testing.assert_frame_equal(new, old)
    before = _numbers(json.loads((BEFORE / "agree_main.json").read_text())["tables"])
    assert _agree_tables(str(tmp_path / "all.csv"), "--human", str(BEFORE / "human.csv")) == before


def test_a_store_written_before_resumes_with_no_call_and_gains_the_identity_columns(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with gzip.open(BEFORE / "store_main.sqlite.gz") as src, open(out / "store.sqlite", "wb") as dst:
        shutil.copyfileobj(src, dst)
    for samples in (2, 1):
        result = _rate(out, samples, tmp_path)
        said = result.stdout + result.stderr
        assert re.findall(r"calls made (\d+)", said) == ["0"], said
    import sqlite3

    db = sqlite3.connect(out / "store.sqlite")
    rows = db.execute("SELECT rater, rater_kind, judge, template, variant, constrained, label_digest FROM runs "
                      "ORDER BY rater").fetchall()
    db.close()
    assert rows == [(JUDGE, "judge", "scripted-test-double", "chiang-lee-story", None, 0, None),
                    (JUDGE + "#f390e0", "judge", "scripted-test-double", "chiang-lee-story", None, 0, "f390e0")]


def test_one_normaliser_for_the_reader_and_the_report():
    from judgelab.report.folder import ratings_from_file

    report = ratings_from_file(BEFORE / "ratings.csv")
    assert list(report.columns) == JUDGMENT_COLUMNS + IDENTITY_COLUMNS + ["keys"]
    tidy = read_ratings(BEFORE / "ratings.csv")
    pd.testing.assert_frame_equal(report[TIDY_COLUMNS + IDENTITY_COLUMNS], tidy)


@pytest.mark.parametrize("cell", [None, float("nan"), "", "  "])
def test_normalise_fills_what_a_source_leaves_out(cell):
    df = normalise(pd.DataFrame({"item_id": [7], "criterion": ["c"], "rater": ["human:ann"], "score": [None],
                                 "group": [cell], "sample": [cell if cell != "  " else None]}))
    row = df.iloc[0]
    assert (row["item_id"], row["system"], row["group"], row["sample"], row["status"]) == ("7", "default", None, 0,
                                                                                            "missing")
    assert (row["rater_kind"], row["judge"], row["constrained"]) == ("human", None, False)


def test_a_repeated_rating_is_named():
    from judgelab.errors import JudgelabError

    df = pd.DataFrame({"item_id": ["a", "a"], "criterion": "c", "rater": "r", "score": [1, 2]})
    with pytest.raises(JudgelabError, match="rater 'r' rates item 'a' .* more than once"):
        normalise(df, where="f.csv")


def test_identity_of_the_label_conventions():
    df = normalise(pd.DataFrame({"item_id": "a", "criterion": "c", "score": 1.0, "sample": range(5), "rater": [
        "m@t+short+constrained#1a2b3c", "jury:mean", "human:mean", "m@nle#1a2b3c+dynamic", "m@nle|pairwise"]}))
    assert df[IDENTITY_COLUMNS].values.tolist() == [
        ["judge", "m", "t", "short", True, "1a2b3c"], ["jury", None, None, None, False, None],
        ["consensus", None, None, None, False, None], ["judge", "m", "nle", "dynamic", False, None],
        ["judge", "m", "nle", None, False, None]]


def test_the_reports_store_reader_gives_the_same_table_as_the_ratings_file(tmp_path):
    from judgelab.report.folder import StoreReader, ratings_from_file

    with gzip.open(BEFORE / "store_main.sqlite.gz") as src, open(tmp_path / "store.sqlite", "wb") as dst:
        shutil.copyfileobj(src, dst)
    with StoreReader(tmp_path / "store.sqlite") as reader:
        stored = reader.judgments()
    from_file = ratings_from_file(BEFORE / "ratings.csv")
    assert list(stored.columns) == list(from_file.columns)
    key = ["rater", "item_id", "system", "sample"]
    a = stored.sort_values(key).reset_index(drop=True)[TIDY_COLUMNS + IDENTITY_COLUMNS]
    b = from_file.sort_values(key).reset_index(drop=True)[TIDY_COLUMNS + IDENTITY_COLUMNS]
    pd.testing.assert_frame_equal(a, b)
