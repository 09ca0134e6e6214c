"""DataFrames in, DataFrames out: items and human ratings from pandas DataFrames give what the same
rows in a file give (one code path), bad frames are one JudgelabError naming the column or row, and
the notebook's functions are exported from ``judgelab`` without slowing ``import judgelab``."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from judgelab.datasets.items import FieldMap, load_items
from judgelab.errors import JudgelabError
from judgelab.ratings import import_human, read_ratings

ITEMS = [
    {"id": "a1", "text": "First text.\r\nWith a CRLF and {{ braces }}.", "system": "human", "group": "g1",
     "context": "prompt 1", "topic": "sports"},
    {"id": "a2", "text": "  Second text, leading spaces kept.", "system": "gpt", "group": "g1", "context": "prompt 1",
     "topic": "news"},
    {"id": "007", "text": "Third.", "system": "gpt", "group": "g2", "context": "prompt 2", "topic": "sports"},
]


def test_items_from_a_dataframe_are_the_items_of_the_same_rows_in_a_file(tmp_path):
    frame = pd.DataFrame(ITEMS)
    csv = tmp_path / "items.csv"
    frame.to_csv(csv, index=False)
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    from_frame = load_items(frame)
    assert from_frame == load_items(csv) == load_items(jsonl)
    assert from_frame[0].text == ITEMS[0]["text"] and from_frame[2].item_id == "007"
    assert from_frame[0].extra == {"topic": "sports"} and from_frame[1].system == "gpt"
    renamed = frame.rename(columns={"id": "doc", "text": "body"})
    assert load_items(renamed, FieldMap(id="doc", text="body"), limit=2) == from_frame[:2]


def test_a_dataframe_item_without_optional_values_or_with_numbers():
    frame = pd.DataFrame({"id": [1, 2], "text": ["x", "y"], "system": [None, "b"], "group": [pd.NA, "g"],
                          "score_hint": [1.5, np.nan]})
    items = load_items(frame)
    assert [i.item_id for i in items] == ["1", "2"]
    assert (items[0].system, items[0].group, items[1].group) == ("default", None, "g")
    assert items[0].extra == {"score_hint": 1.5} and items[1].extra == {"score_hint": None}


@pytest.mark.parametrize("frame, match", [
    (pd.DataFrame({"id": ["a"], "body": ["x"]}), r"items DataFrame: no column 'text' \(columns: id, body\); .*FieldMap\(text="),
    (pd.DataFrame({"doc": ["a"], "text": ["x"]}), r"no column 'id'.*FieldMap\(id="),
    (pd.DataFrame({"id": ["a", "b"], "text": ["x", np.nan]}), r"item 2 \(row 2\) has no field 'text'"),
    (pd.DataFrame({"id": ["a"], "text": [3]}), r"row 1.*'text' must be text"),
    (pd.DataFrame({"id": ["a", "a"], "text": ["x", "y"]}), r"row 2.*duplicate id 'a'"),
    (pd.DataFrame({"id": [], "text": []}), r"no items"),
    (pd.DataFrame([[1, "x"]], columns=[0, 1]), r"column names must be text"),
    (["not", "a", "frame"], r"expected a file path or a pandas DataFrame, not list"),
])
def test_bad_item_frames_are_one_error_naming_the_column_or_row(frame, match):
    with pytest.raises(JudgelabError, match=match):
        load_items(frame)


def test_a_csv_without_the_text_column_names_the_column(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("id,body\n1,x\n")
    with pytest.raises(JudgelabError, match=r"items.csv: no column 'text' \(columns: id, body\); name the text column with --text-field"):
        load_items(path)


HUMANS_LONG = pd.DataFrame({
    "item_id": ["a1", "a2", "007", "a1", "a2", "007"], "rater": ["ann", "ann", "ann", "human:bo", "human:bo", "human:bo"],
    "criterion": "fluency", "score": [4, 2, 5, 5, 1, np.nan], "system": ["human", "gpt", "gpt"] * 2,
})


def test_human_ratings_from_a_dataframe_are_those_of_the_same_rows_in_a_file(tmp_path):
    path = tmp_path / "humans.csv"
    HUMANS_LONG.to_csv(path, index=False)
    from_frame, from_file = import_human(HUMANS_LONG), import_human(path)
    pd.testing.assert_frame_equal(from_frame, from_file)
    assert sorted(set(from_frame["rater"])) == ["human:ann", "human:bo"]  # plain ids prefixed, human:<id> kept
    assert list(from_frame["status"]) == ["ok"] * 5 + ["missing"]  # no status column: a score is an ok rating
    assert list(from_frame["item_id"])[:3] == ["a1", "a2", "007"]
    wide = HUMANS_LONG.rename(columns={"score": "fluency"}).drop(columns="criterion").assign(coherence=[3, 4, 5, 1, 2, 3])
    wide_path = tmp_path / "wide.csv"
    wide.to_csv(wide_path, index=False)
    pd.testing.assert_frame_equal(import_human(wide), import_human(wide_path))
    assert set(import_human(wide)["criterion"]) == {"fluency", "coherence"}


@pytest.mark.parametrize("change, match", [
    (lambda d: d.drop(columns="score"), r"human ratings DataFrame: no criterion column .*; columns: item_id, rater, criterion, system"),
    (lambda d: d.assign(score=["4", "x", 1, 2, 3, 4]), r"human ratings DataFrame: row 2, column 'score': score 'x' is not a number"),
    (lambda d: d.assign(score=[1, np.inf, 1, 2, 3, 4]), r"row 2, column 'score': score inf is not a finite number"),
    (lambda d: d.assign(rater=["ann", None, "ann", "bo", "bo", "bo"]), r"row 2: no rater"),
    (lambda d: d.assign(item_id=["a1", "a2", np.nan, "a1", "a2", "007"]), r"row 3: no item id"),
    (lambda d: pd.concat([d, d.iloc[:1]]), r"rater 'human:ann' rates item 'a1' .* more than once"),
])
def test_bad_human_frames_are_one_error_naming_the_column_or_row(change, match):
    with pytest.raises(JudgelabError, match=match):
        import_human(change(HUMANS_LONG))


def test_a_rater_already_named_human_keeps_its_name_in_a_file_too(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"item_id": "a", "rater": "human:ann", "criterion": "c", "score": 3}\n')
    assert list(import_human(path)["rater"]) == ["human:ann"]


def test_agreement_of_judge_ratings_and_a_human_frame_without_status():
    """Human rows stacked as they are (raters human:<id>, no status column) count as human ratings."""
    from judgelab import agreement

    items = [f"t{i}" for i in range(8)]
    truth = [1, 2, 3, 4, 5, 2, 4, 3]
    judge = pd.DataFrame({"item_id": items, "system": "default", "group": None, "criterion": "fluency",
                          "rater": "judge", "sample": 0, "score": [float(t) for t in truth], "status": "ok"})
    humans = pd.DataFrame({"item_id": items * 2, "rater": ["human:1"] * 8 + ["human:2"] * 8, "criterion": "fluency",
                           "score": truth + [min(5, t + 1) for t in truth]})
    report = agreement(pd.concat([judge, humans]), levels=["overall"], n_resamples=50)
    row = report.correlations.iloc[0]
    assert row["rater"] == "judge" and row["n"] == 8 and row["r"] > 0.9
    with pytest.raises(JudgelabError, match=r"ratings DataFrame: missing column 'score'"):
        agreement(judge.drop(columns="score"))
    assert read_ratings(humans)["status"].eq("ok").all()


def test_the_notebook_functions_are_exported_and_import_stays_light():
    code = ("import sys, judgelab; light = 'pandas' not in sys.modules; "
            "names = [judgelab.load_items, judgelab.rate_items, judgelab.import_human, judgelab.agreement, "
            "judgelab.RateResult, judgelab.AgreeReport, judgelab.JudgeRun, judgelab.FieldMap, judgelab.read_ratings]; "
            "print(light, all(n.__module__.startswith('judgelab.') for n in names))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True"], out.stderr
