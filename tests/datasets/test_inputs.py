"""Inputs read faithfully: every user file reaches the judge and the statistics exactly as written,
and every bad file is one line (exit 2), never a traceback or a silent change."""
import csv
import json
import sqlite3

import pytest

from conftest import SHARED_DATA, run_cli
from judgelab.datasets.items import FieldMap, load_items
from judgelab.datasets.readers import read_csv, read_csv_columns, read_json, read_jsonl, read_records
from judgelab.errors import JudgelabError

STORY = "First paragraph, with a comma.\n\nSecond paragraph says \"hi\".\r\nThird line\u2028same line\n  indented\n"


def check(result, *needles):
    """Exit 2, one line on stderr naming the problem, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in result.stderr + result.stdout
    assert len(err.splitlines()) == 1, err
    assert err.startswith("judgelab: error: "), err
    for needle in needles:
        assert needle in err, err
    return err


def one_line_error(fn, *needles):
    with pytest.raises(JudgelabError) as info:
        fn()
    message = str(info.value)
    assert len(message.splitlines()) == 1, message
    for needle in needles:
        assert needle in message, message
    return message


def write_csv(path, header, rows, bom=False):
    with path.open("w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def scripted(tmp_path, out="out"):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I rate it 4."}))
    return ["--judge", f"scripted-test-double:{script}", "--quiet", "--out", str(tmp_path / out)]


def stored_prompts(store_path):
    with sqlite3.connect(store_path) as db:
        requests = [json.loads(r[0]) for r in db.execute("SELECT request FROM calls")]
    return ["\n".join(m[1] for m in req["messages"]) for req in requests]


# -- CSV -----------------------------------------------------------------------------
def test_csv_with_bom_and_multiline_text_reaches_the_judge_byte_for_byte(tmp_path):
    items = write_csv(tmp_path / "items.csv", ["id", "text", "self"], [["007", STORY, "me"], ["8", "Short.", "x"]], bom=True)
    assert items.read_bytes().startswith(b"\xef\xbb\xbf")
    result = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--samples", "1", *scripted(tmp_path))
    assert result.returncode == 0, result.stderr
    prompts = stored_prompts(tmp_path / "out" / "store.sqlite")
    assert sum(STORY in p for p in prompts) == 2  # fluency and coherence, text exactly as in the file
    ratings = list(csv.DictReader((tmp_path / "out" / "ratings.csv").open(newline="", encoding="utf-8")))
    assert {r["item_id"] for r in ratings} == {"007", "8"}  # ids as written, not numbers


def test_read_csv_keeps_quoted_line_breaks_ids_and_big_fields(tmp_path):
    big = "x" * 300_000 + "\n" + "y" * 10
    path = write_csv(tmp_path / "a.csv", ["id", "text"], [["007", STORY], ["0x1", big], ["1e3", ""]], bom=True)
    rows = read_csv(path)
    assert [r["id"] for r in rows] == ["007", "0x1", "1e3"]
    assert rows[0]["text"] == STORY and rows[1]["text"] == big and rows[2]["text"] == ""
    assert list(rows[0]) == ["id", "text"]  # the BOM is not part of the first column's name
    assert rows.where(0) == "line 2" and rows.where(1) == "line 8"  # the line each row starts on


def test_read_csv_columns_gives_read_csvs_values_and_lines(tmp_path):
    """The column-wise reader (large ratings files) parses as read_csv does: quoted line breaks of every kind,
    a BOM, short rows, blank lines; only the columns asked for are held, each repeated label once."""
    path = write_csv(tmp_path / "a.csv", ["id", "text", "label"], [["007", STORY, "ok"], ["8", "a\rb\r\nc", "ok"]], bom=True)
    with path.open("a", newline="", encoding="utf-8") as fh:
        fh.write("\n9\n")  # a blank line, then a row that ends early
    rows = read_csv(path)
    columns, lines, header = read_csv_columns(path, ["label", "id", "absent"])
    assert header == ["id", "text", "label"] and list(columns) == ["label", "id"]  # no text column held
    assert columns["id"] == [r["id"] for r in rows] and columns["label"] == [r["label"] for r in rows] == ["ok", "ok", None]
    assert [f"line {n}" for n in lines] == [rows.where(i) for i in range(len(rows))]
    assert columns["label"][0] is columns["label"][1]  # one string for a label every row repeats
    for content, needle in [('id,text\n1,"never closed\n2,x\n', "record starting at line 2"), ("", "empty file"),
                            ('id,text\n1,"one\ntwo"\n2,fine,extra\n', "line 4")]:
        (tmp_path / "bad.csv").write_text(content)
        one_line_error(lambda: read_csv_columns(tmp_path / "bad.csv", ["id"]), "bad.csv", needle)


def test_csv_rows_with_more_fields_than_the_header(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text('id,text\n1,"one\ntwo"\n2,fine,extra\n')
    one_line_error(lambda: read_csv(path), "bad.csv", "line 4", "3 fields", "header has 2")
    check(run_cli("rate", "--items", str(path), *scripted(tmp_path)), "bad.csv", "line 4")


@pytest.mark.parametrize("content,needle", [
    ('id,text\n1,"never closed\n2,x\n', "record starting at line 2"),
    ('id,text\n1,"quoted"tail\n', "line 2"),
    ("id,id\n1,2\n", "appears twice"),
    ("", "empty file"),
    ("\n\n", "empty file"),
])
def test_malformed_csv_is_one_line(tmp_path, content, needle):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    one_line_error(lambda: read_csv(path), "bad.csv", needle)


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"id,text\n1,fine\n2,caf\xe9\n")
    one_line_error(lambda: read_csv(path), "not UTF-8", "line 3")
    check(run_cli("rate", "--items", str(path), *scripted(tmp_path)), "not UTF-8", "line 3")


# -- JSON lines ------------------------------------------------------------------------
def test_jsonl_splits_on_newline_only(tmp_path):
    path = tmp_path / "items.jsonl"
    rows = [{"id": "007", "text": "a\u2028b\u2029c\x85d\x0ce"}, {"id": 8, "text": STORY}]
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n\r\n", encoding="utf-8", newline="")
    assert "\u2028".encode() in path.read_bytes()  # raw, not escaped
    got = read_jsonl(path)
    assert list(got) == rows and got.where(1) == "line 2"
    items = load_items(path)
    assert [i.item_id for i in items] == ["007", "8"] and items[0].text == rows[0]["text"]


def test_jsonl_items_are_read_a_line_at_a_time_with_the_same_errors(tmp_path):
    """load_items reads a JSON-lines file a line at a time (never its text and every row at once): the items,
    the byte-order mark, a line's bytes that are not UTF-8 and a file of blank lines are as read_jsonl has them."""
    import gc
    import tracemalloc

    path = tmp_path / "items.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(b'{"id": %d, "text": "Story %d: the keeper counted the ships."}\n'
                                                 % (i, i) for i in range(3000)))
    assert [(i.item_id, i.text) for i in load_items(path)] == [(str(r["id"]), r["text"]) for r in read_jsonl(path)]
    gc.collect()
    tracemalloc.start()
    try:
        items = load_items(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(items) == 3000 and peak < 1.5 * held, (held, peak)  # the whole-file read: twice what is held
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": 1, "text": "fine"}\n\n{"id": 2, "text": "caf\xe9"}\n')
    one_line_error(lambda: load_items(bad), "not UTF-8", "line 3")
    one_line_error(lambda: read_jsonl(bad), "not UTF-8", "line 3")
    (tmp_path / "blank.jsonl").write_text("\n  \n")
    one_line_error(lambda: load_items(tmp_path / "blank.jsonl"), "no items")


@pytest.mark.parametrize("line,needles", [
    ("[" * 100_000 + "]" * 100_000, ["line 2", "nested too deeply"]),
    ('{"id": "1", "text": "\\ud800"}', ["line 2", "lone surrogate"]),
    ('{"id": "1", "id": "2", "text": "x"}', ["line 2", "'id' appears twice"]),
    ('{"id": "1", "text": "x"', ["line 2", "malformed JSON"]),
    ("[1, 2]", ["line 2", "not a JSON object"]),
])
def test_bad_jsonl_lines_are_one_line(tmp_path, line, needles):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "0", "text": "fine"}\n' + line + "\n")
    one_line_error(lambda: read_records(path), "bad.jsonl", *needles)
    check(run_cli("rate", "--items", str(path), *scripted(tmp_path)), "bad.jsonl", *needles)


def test_json_file_errors(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(lambda: read_json(deep), "deep.json", "nested too deeply")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a":\n "\xff"}')
    one_line_error(lambda: read_json(bad), "not UTF-8", "line 2")


def test_valid_surrogate_pairs_are_text(tmp_path):
    path = tmp_path / "ok.jsonl"
    path.write_text('{"id": "1", "text": "smile \\ud83d\\ude00"}\n')
    assert read_jsonl(path)[0]["text"] == "smile \U0001F600"


# -- fields named like Python keywords -----------------------------------------------
def test_item_fields_named_like_keyword_arguments_render():
    from judgelab.prompts import load_template

    t = load_template("plain-quality")
    item = {"text": "The cat sat.", "self": "x", "source": "y", "args": "z", "kwargs": "w"}
    assert "The cat sat." in t.render("fluency", item)


# -- human ratings ---------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "Infinity", "four", "1e999"])
def test_non_finite_human_scores_are_refused(tmp_path, value):
    from judgelab.ratings import import_long, import_wide, read_ratings

    long = write_csv(tmp_path / "long.csv", ["item_id", "rater", "criterion", "score"], [["1", "a", "c", "3"], ["2", "a", "c", value]])
    one_line_error(lambda: import_long(long), "long.csv", "line 3", repr(value))
    wide = write_csv(tmp_path / "wide.csv", ["item_id", "rater", "c"], [["1", "a", "3"], ["2", "a", value]])
    one_line_error(lambda: import_wide(wide, ["c"]), "wide.csv", "line 3", "column 'c'")
    one_line_error(lambda: read_ratings(long), "long.csv", "line 3")
    check(run_cli("agree", "--human", str(long)), "long.csv", "line 3")


def test_json_nan_score_is_refused_but_null_is_missing(tmp_path):
    from judgelab.ratings import import_long

    path = tmp_path / "h.jsonl"
    path.write_text('{"item_id": "1", "rater": "a", "criterion": "c", "score": null}\n'
                    '{"item_id": "2", "rater": "a", "criterion": "c"}\n')
    df = import_long(path)
    assert df["score"].isna().all() and set(df["status"]) == {"missing"}
    path.write_text('{"item_id": "1", "rater": "a", "criterion": "c", "score": NaN}\n')
    one_line_error(lambda: import_long(path), "h.jsonl", "line 1", "not a finite number")


def test_human_ids_stay_text(tmp_path):
    from judgelab.ratings import import_long

    path = write_csv(tmp_path / "h.csv", ["item_id", "rater", "criterion", "score", "system"],
                     [["007", "01", "c", "4", "0"], ["7", "01", "c", "2", "0"]])
    df = import_long(path)
    assert list(df["item_id"]) == ["007", "7"] and list(df["rater"]) == ["human:01"] * 2 and list(df["system"]) == ["0", "0"]


def test_nle_human_scores_must_be_finite(tmp_path):
    from judgelab.recipes.nle import load_human_scores

    ok = write_csv(tmp_path / "h.csv", ["id", "informativeness", "clarity"], [["007", "5", "6"], ["007", "3", "4"]])
    assert load_human_scores(ok).loc["007"].tolist() == [4.0, 5.0]
    bad = write_csv(tmp_path / "bad.csv", ["id", "informativeness", "clarity"], [["1", "5", "inf"]])
    one_line_error(lambda: load_human_scores(bad), "bad.csv", "line 2", "clarity")


def test_chiang_lee_ratings_must_be_finite_numbers(tmp_path):
    from judgelab.recipes.chiang_lee_data import load_wp

    story = {"prompt": "p", "story": "s", "human_written": 1, "grammar": [1, 2, 3], "cohesive": [1, 2, 3],
             "enjoy": [1, 2, 3], "relevant": [1, 2, 3]}
    path = tmp_path / "wp.json"
    for bad, needle in (({"enjoy": [1, "NaN", 3]}, "not a finite number"), ({"enjoy": [1, [2], 3]}, "not a number"),
                        ({"enjoy": 3}, "list of ratings"), ({"human_written": "yes"}, "human_written")):
        path.write_text(json.dumps({"0": {**story, **bad}}))
        one_line_error(lambda: load_wp(path), "wp.json", "story '0'", needle)
    path.write_text(json.dumps({"0": story}))
    assert load_wp(path)["0"]["story"] == "s"


# -- expert votes ----------------------------------------------------------------------
@pytest.mark.parametrize("votes,needle", [
    ({"typos": {"fluency": [1, 2]}}, "not a number"),
    ({"typos": {"fluency": float("nan")}}, "not a finite number"),
    ({"typos": {"fluency": -1}}, "negative"),
    ({"typos": {"fluency": "many"}}, "not a number"),
    ({"typos": [1, 2]}, "must be an object"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_expert_votes_are_one_line(tmp_path, votes, needle):
    path = tmp_path / "votes.json"
    path.write_text(json.dumps(votes))
    ratings = write_csv(tmp_path / "r.csv", ["item_id", "system", "criterion", "rater", "score"], [["1", "original", "fluency", "j", "4"]])
    check(run_cli("dhp", "analyze", str(ratings), "--task", "summarization", "--expert-weights", str(path)), "votes.json", needle)


@pytest.mark.parametrize("content,needle", [
    ("perturbation,metric,votes\ntypos,fluency,lots\n", "line 2"),
    ("perturbation,metric,votes\ntypos,fluency,-2\n", "negative"),
    ("perturbation,metric,votes\ntypos,fluency,nan\n", "line 2"),
    ("perturbation,fluency\ntypos,inf\n", "column 'fluency'"),
])
def test_bad_expert_votes_csv(tmp_path, content, needle):
    from judgelab.dhp.analysis import load_votes
    from judgelab.dhp.task import load_task

    path = tmp_path / "votes.csv"
    path.write_text(content)
    one_line_error(lambda: load_votes(path, load_task("summarization")), "votes.csv", needle)


# -- HANNA files and the user study ------------------------------------------------------
CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]


def hanna_scores(path, cell=None):
    rows = []
    for k, system in enumerate(["Human", "A", "B", "C", "D"]):
        values = {c: str([1.0 + k, 2.0 + (k * 7) % 5]) for c in CRITERIA}
        rows.append([system, *values.values(), str([0.1 * k, 0.3 * ((k * 3) % 4)])])
    if cell is not None:
        rows[2][2] = cell
    return write_csv(path, ["Model", *CRITERIA, "BLEU"], rows)


def test_hanna_correlations_bad_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    check(run_cli("hanna", "correlations", str(empty)), "empty.csv", "empty file")
    header_only = tmp_path / "header.csv"
    header_only.write_text("Model," + ",".join(CRITERIA) + "\n")
    check(run_cli("hanna", "correlations", str(header_only)), "header.csv", "no rows")
    for cell, needle in (("[1.0, Infinity]", "not a finite number"), ("[1.0, nan]", "not a finite number"),
                         ("1e999", "not a finite number"), ("[1.0, inf]", "not a list of numbers"),
                         ("[[1.0], 2.0]", "is not a number"), ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                         ("words", "not a list of numbers")):
        path = hanna_scores(tmp_path / "scores.csv", cell)
        check(run_cli("hanna", "correlations", str(path)), "scores.csv", "line 4", "'Coherence'", needle)
    ok = hanna_scores(tmp_path / "ok.csv")
    assert run_cli("hanna", "correlations", str(ok), "--format", "csv").returncode == 0


def test_recipe_hanna_and_user_study_refuse_empty_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    check(run_cli("recipe", "hanna", "--items", str(empty), *scripted(tmp_path)[:2], "--quiet",
                       "--out", str(tmp_path / "h")), "empty.csv", "empty file")
    check(run_cli("recipe", "user-study", str(empty)), "empty.csv", "empty file")
    header = tmp_path / "header.csv"
    header.write_text(",Prompt,Human,Story,Model\n")
    check(run_cli("recipe", "hanna", "--items", str(header), "--quiet", "--out", str(tmp_path / "h")), "no stories")


USER_STUDY_HEADER = ["Input.story_id", "Input.explanation", "Answer.a-1-guidelines.1", "Answer.a-2-syntax.1"]


def test_user_study_values_outside_zero_one(tmp_path):
    rows = [["007", "Expl.\nTwo lines", "1", "0"], ["007", "Expl.\nTwo lines", "7", "0"]]
    path = write_csv(tmp_path / "us.csv", USER_STUDY_HEADER, rows)
    check(run_cli("recipe", "user-study", str(path)), "us.csv", "line 4", "'7'", "Answer.a-1-guidelines.1")
    rows[1][2] = "yes"
    path = write_csv(tmp_path / "us.csv", USER_STUDY_HEADER, rows)
    check(run_cli("recipe", "user-study", str(path)), "line 4", "'yes'")
    rows[1][2] = "1"
    path = write_csv(tmp_path / "us.csv", USER_STUDY_HEADER, rows)
    result = run_cli("recipe", "user-study", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    by_cat = {r["category"]: r for r in json.loads(result.stdout)["rows"]}
    assert by_cat["guidelines"]["explanations"] == 1 and by_cat["guidelines"]["rate"] == 1.0


# -- real data, and small files of the same layout ----------------------------------------
HANNA_STORIES = SHARED_DATA / "hanna" / "hanna_llm_stories.csv"


def check_stories_keep_their_line_breaks(path, at_least):
    with path.open(newline="", encoding="utf-8") as f:
        truth = list(csv.DictReader(f))
    with_breaks = [r["Story"] for r in truth if "\n" in r["Story"]]
    assert len(with_breaks) >= at_least
    items = load_items(path, FieldMap(id="", text="Story", context="Prompt", system="Model"))
    assert [i.text for i in items] == [r["Story"] for r in truth]
    assert [i.item_id for i in items] == [r[""] for r in truth]
    from judgelab.recipes.hanna_run import hanna_items

    generated = [i.text for i in hanna_items(path, None) if i.system != "Human"]
    assert generated == [r["Story"] for r in truth]


@pytest.mark.needs_shared_data("hanna/hanna_llm_stories.csv")
def test_hanna_llm_stories_keep_their_line_breaks():
    check_stories_keep_their_line_breaks(HANNA_STORIES, at_least=501)  # 573 of 576 stories have paragraphs


def test_stories_in_the_hanna_layout_keep_their_line_breaks(tmp_path):
    """The reader on a small file written here in the layout of hanna_llm_stories.csv (index, Prompt,
    Human, Story, Model), so it is covered without ../shared/data."""
    rows = [[str(k), f"Prompt {k // 2}, with a comma", f"The human story {k // 2}.\n\nIts second paragraph.",
             f"Model story {k}.\n\nIt said \"hello\",\r\nthen left.\n" if k != 3 else "One paragraph only.", f"LLM-{k % 2}"]
            for k in range(4)]
    path = write_csv(tmp_path / "stories.csv", ["", "Prompt", "Human", "Story", "Model"], rows)
    check_stories_keep_their_line_breaks(path, at_least=3)


USER_STUDY = SHARED_DATA / "hanna" / "user_study.csv"


@pytest.mark.needs_shared_data("hanna/user_study.csv")
def test_user_study_real_file_reads_every_annotation():
    from judgelab.recipes.explanations import error_annotations

    table = error_annotations(USER_STUDY).set_index("category")
    assert table.loc["guidelines", "annotations"] == 300 and table.loc["guidelines", "rate"] == pytest.approx(282 / 300)
    assert table.loc["syntax", "rate"] == pytest.approx(5 / 300)


def test_journal_replay_keeps_calls_with_unicode_line_separators(tmp_path):
    """The store's journal is JSON lines too: a raw U+2028 in a request must not split its line."""
    from judgelab.store import Store

    store = Store(tmp_path / "s.sqlite")
    store.journal_call("k1", {"messages": [["user", "a\u2028b\u2029c\x85d"]]}, {"choices": [{"text": "4"}]})
    store._journal.close()  # as if killed before the group commit
    store._journal = None
    store._unlock()  # a killed process's lock dies with it
    with Store(tmp_path / "s.sqlite") as again:
        assert again.get_call("k1") == {"choices": [{"text": "4"}]}


def test_dhp_references_must_be_text(tmp_path):
    from judgelab.datasets.dhp_sources import load_reference_items

    path = tmp_path / "refs.jsonl"
    path.write_text('{"id": "007", "text": "A reference.\\n\\nTwo paragraphs."}\n{"id": "2", "text": ["a", "list"]}\n')
    one_line_error(lambda: load_reference_items(path), "refs.jsonl", "line 2", "must be text")
    path.write_text('{"id": "007", "text": "A reference.\\n\\nTwo paragraphs."}\n')
    assert [(i.item_id, i.text) for i in load_reference_items(path)] == [("007", "A reference.\n\nTwo paragraphs.")]
