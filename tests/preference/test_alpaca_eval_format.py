"""AlpacaEval's annotations.json read into the verdicts table (judgelab.preference.formats.alpaca_eval)."""
from __future__ import annotations

import math

import pytest

from alpaca_fixture import ANNOTATOR, annotation, write
from judgelab.errors import JudgelabError
from judgelab.preference.formats import read_verdicts


def test_preferences_map_to_p_first_choice_and_status(tmp_path):
    prefs = [1.0, 2.0, 1.5, 0, None, 1.25, 3.0, float("nan"), 1.9999]
    path = write(tmp_path / "annotations.json", [annotation(i, "sys", p) for i, p in enumerate(prefs)])
    v = read_verdicts(path)
    assert v["rater"].unique().tolist() == [ANNOTATOR]
    assert (v["first"] == "base").all() and (v["second"] == "sys").all()
    got = [(None if math.isnan(p) else round(p, 6), c, s) for p, c, s in zip(v["p_first"], v["choice"], v["status"])]
    assert got == [(1.0, "first", "ok"), (0.0, "second", "ok"), (0.5, "tie", "ok"), (0.5, "tie", "ok"),
                   (None, None, "missing"), (0.75, "first", "ok"), (None, None, "out_of_range"),
                   (None, None, "missing"), (0.0001, "second", "ok")]
    assert v.loc[0, "item_id"] == "Describe the colour of object number 0."
    assert v.loc[0, "first_text"] == "Object 0 is blue." and v.loc[0, "second_text"].startswith("Object 0 looks")
    assert v.loc[0, "instruction"] == v.loc[0, "item_id"] and '"finish_reason": "stop"' in v.loc[0, "raw"]


def test_index_field_is_the_item_and_no_annotator_gives_the_default_rater(tmp_path):
    rows = [annotation(i, "sys", 2) for i in range(2)]
    for i, r in enumerate(rows):
        r["index"] = 10 + i
        del r["annotator"]
    v = read_verdicts(write(tmp_path / "a.json", rows))
    assert v["item_id"].tolist() == ["10", "11"] and v["rater"].unique().tolist() == ["alpaca_eval"]


def test_a_later_annotation_without_a_field_is_one_error_naming_it(tmp_path):
    rows = [annotation(0, "sys", 1), annotation(1, "sys", 1)]
    del rows[1]["output_2"]
    with pytest.raises(JudgelabError, match=r"annotation 2 has no field 'output_2'"):
        read_verdicts(write(tmp_path / "a.json", rows))
