"""Issue 18, item 12: cases that were an internal error or said nothing are one line, exit 2, and a
refused command writes nothing (no output folder, no ``.tmp`` file, no report).

In-process (``judgelab.cli.main``) for speed; one subprocess test per family for the exit-status
contract itself."""
from __future__ import annotations

import errno
import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import judgelab_cmd, one_line_error, write_items


def refused(capsys, *args: str) -> str:
    """``judgelab ARGS`` in this process: exit 2, one ``judgelab: error:`` line, no traceback; the line."""
    from judgelab.cli import main

    with pytest.raises(SystemExit) as stop:
        main(list(args))
    captured = capsys.readouterr()
    assert stop.value.code == 2, captured
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: "), captured.err
    return lines[0]


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- --judge scripted-test-double:SCRIPT ------------------------------------------------------
@pytest.mark.parametrize("script,needle", [
    ([1, 2], "is a list; expected a JSON object"),
    ({"rules": "nope"}, "'rules' is a text; expected a list of rules"),
    ({"rules": [{"contains": "Story", "replies": "4"}]}, "replies is a text"),
])
def test_a_script_of_the_wrong_shape_is_refused_before_the_output_folder_exists(tmp_path, capsys, script, needle):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    items = write_items(tmp_path / "items.jsonl", 2)
    out = tmp_path / "out"
    line = refused(capsys, "rate", "--items", str(items), "--judge", f"scripted-test-double:{path}", "--samples", "1",
                   "--out", str(out), "--quiet")
    assert needle in line and str(path) in line
    assert not out.exists()


def test_a_bad_script_on_a_rerun_keeps_the_earlier_outputs(tmp_path, capsys):
    """Refused at parse time, before the workflow clears the previous ratings.csv of the folder."""
    from judgelab.cli import main

    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"default": "I rate it 4."}))
    bad.write_text("[1, 2]")
    items = write_items(tmp_path / "items.jsonl", 2)
    out = tmp_path / "out"
    args = ["rate", "--items", str(items), "--criteria", "grammaticality", "--samples", "1", "--out", str(out), "--quiet"]
    main([*args, "--judge", f"scripted-test-double:{good}"])
    before = {name: (out / name).read_bytes() for name in ("ratings.csv", "summary.csv", "run.json")}
    capsys.readouterr()
    refused(capsys, *args, "--judge", f"scripted-test-double:{bad}")
    assert {name: (out / name).read_bytes() for name in before} == before


def test_scripted_contract_in_a_subprocess(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('{"rules": "nope"}')
    items = write_items(tmp_path / "items.jsonl", 2)
    result = judgelab_cmd("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--out",
                          str(tmp_path / "out"), "--quiet")
    one_line_error(result, "'rules' is a text", "expected a list of rules")
    assert not (tmp_path / "out").exists()


# -- export STORE --to FILE --------------------------------------------------------------------
@pytest.fixture
def store(tmp_path) -> Path:
    from judgelab.store import Judgment, Store

    path = tmp_path / "store.sqlite"
    with Store(path) as s:
        s.put(judgments=[Judgment(f"i{k}", "sys", None, "fluency", "judge", 0, float(k % 5 + 1), float(k % 5 + 1), None,
                                  None, "ok", str(k % 5 + 1)) for k in range(6)])
    return path


def test_export_to_a_folder_is_one_line_and_leaves_no_tmp_file(tmp_path, store, capsys):
    target = tmp_path / "X.csv"
    target.mkdir()
    (target / "kept.txt").write_text("mine")
    before = listing(tmp_path)
    line = refused(capsys, "export", str(store), "--to", str(target))
    assert "it is a folder" in line and str(target) in line
    assert listing(tmp_path) == before  # no X.csv.tmp, the folder untouched


@pytest.mark.parametrize("to,needle", [
    ("ratings.xml", "unknown output format '.xml': use .csv, .jsonl or .parquet"),
    ("ratings", "has no extension: use .csv, .jsonl or .parquet"),
    ("missing/ratings.csv", "output folder does not exist"),
    ("a_file.txt/ratings.csv", "a_file.txt is a file, not a folder"),
])
def test_export_refuses_a_bad_target_before_reading_the_store_and_writes_nothing(tmp_path, capsys, to, needle):
    """--to is checked first (the store named here does not exist: its error must not be the one shown)."""
    (tmp_path / "a_file.txt").write_text("x")
    before = listing(tmp_path)
    assert needle in refused(capsys, "export", str(tmp_path / "no-store.sqlite"), "--to", str(tmp_path / to))
    assert listing(tmp_path) == before


def test_write_table_failing_mid_write_keeps_the_old_file_and_leaves_no_tmp(tmp_path, monkeypatch):
    from judgelab.errors import JudgelabError
    from judgelab.output import write_table

    target = tmp_path / "ratings.csv"
    target.write_text("old,table\n")

    def disk_full(self, path, **kw):
        Path(path).write_text("half a ta")
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(pd.DataFrame, "to_csv", disk_full)
        with pytest.raises(JudgelabError, match="cannot write .*ratings.csv: No space left on device"):
            write_table(pd.DataFrame({"a": [1]}), target)
    assert listing(tmp_path) == ["ratings.csv"] and target.read_text() == "old,table\n"
    # Without the failure every format is written, with no temporary file left beside it.
    df = pd.DataFrame({"item_id": ["a", "b"], "score": [1.0, 2.5]})
    for name in ("ratings.csv", "t.jsonl", "t.json", "t.parquet"):
        write_table(df, tmp_path / name)
    assert pd.read_csv(target).equals(df) and pd.read_json(tmp_path / "t.jsonl", lines=True).equals(df)
    assert pd.read_parquet(tmp_path / "t.parquet").equals(df)
    assert listing(tmp_path) == ["ratings.csv", "t.json", "t.jsonl", "t.parquet"]
    assert target.stat().st_mode & 0o644 == 0o644


def test_write_table_into_a_folder_it_cannot_create_a_file_in(tmp_path, monkeypatch):
    import tempfile

    from judgelab.errors import JudgelabError
    from judgelab.output import write_table

    def denied(*args, **kw):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(JudgelabError, match="cannot write .*t.jsonl: Permission denied"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.jsonl")
    assert listing(tmp_path) == []


def test_export_contract_in_a_subprocess(tmp_path, store):
    target = tmp_path / "X.csv"
    target.mkdir()
    before = listing(tmp_path)
    one_line_error(judgelab_cmd("export", str(store), "--to", str(target)), "it is a folder")
    assert listing(tmp_path) == before and "X.csv.tmp" not in before


# -- agree / hanna: --format and --out --------------------------------------------------------
def _ratings(tmp_path: Path) -> Path:
    path = tmp_path / "r.csv"
    path.write_text("item_id,system,criterion,rater,sample,score\n"
                    + "".join(f"i{i},s,c,judge,0,{i % 5 + 1}\ni{i},s,c,human:a,0,{(i * 2) % 5 + 1}\n" for i in range(6)))
    return path


def test_agree_refuses_an_unknown_format_before_writing_its_out_folder(tmp_path, capsys):
    out = tmp_path / "D"
    line = refused(capsys, "agree", str(_ratings(tmp_path)), "--format", "xml", "--out", str(out), "--n-resamples", "0")
    assert "unknown --format 'xml': table, csv, json" in line
    assert not out.exists()


def test_agree_out_that_cannot_be_a_folder_is_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "taken").write_text("x")
    line = refused(capsys, "agree", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "taken" / "sub"))
    assert "taken is a file, not a folder" in line  # the --out option, before the missing input is read


def _hanna_scores(tmp_path: Path) -> Path:
    """A small HANNA score file: two systems, four stories, three human raters per criterion."""
    codes = ["RE", "CH", "EM", "SU", "EG", "CX"]
    criteria = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
    rows = []
    for m in range(2):
        row = {"Model": f"m{m}"}
        for c, (code, crit) in enumerate(zip(codes, criteria)):
            raters = [[(s * (k + 2) + m + c) % 5 + 1 for s in range(4)] for k in range(3)]
            for k in range(3):
                row[f"Human {k + 1} {code}"] = str(raters[k])
            row[crit] = str([sum(r[s] for r in raters) / 3 for s in range(4)])
        rows.append(row)
    path = tmp_path / "hanna.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_hanna_refuses_an_unknown_format_before_writing_its_out_folder(tmp_path, capsys):
    scores = _hanna_scores(tmp_path)
    out = tmp_path / "icc"
    assert "unknown --format 'xml'" in refused(capsys, "hanna", "icc", str(scores), "--format", "xml",
                                               "--out", str(out))
    assert not out.exists()


def test_agree_contract_in_a_subprocess(tmp_path):
    out = tmp_path / "D"
    result = judgelab_cmd("agree", str(_ratings(tmp_path)), "--format", "xml", "--out", str(out), "--n-resamples", "0")
    one_line_error(result, "unknown --format 'xml'")
    assert not out.exists()


# -- report FOLDER --human FILE -----------------------------------------------------------------
@pytest.fixture
def folder(tmp_path) -> Path:
    path = tmp_path / "run"
    path.mkdir()
    rows = [{"item_id": f"i{k}", "system": "s", "criterion": "fluency", "rater": "judge", "sample": 0, "score": k % 5 + 1}
            for k in range(6)]
    pd.DataFrame(rows).to_csv(path / "ratings.csv", index=False)
    return path


@pytest.mark.parametrize("make,needle", [
    (lambda p: None, "human ratings file not found"),
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: p.write_text("item_id,criterion,rater,score\n"), "has no rows"),
    (lambda p: p.write_text("id,what\ni0,3\n"), "share no criterion with the judgments"),  # read as wide means
    (lambda p: p.write_text("id,rater\ni0,ann\n"), "no criterion column"),
    (lambda p: p.write_bytes(b"\xff\xfeitem_id,criterion\n"), "is not UTF-8 text"),
])
def test_report_refuses_a_human_file_it_cannot_use_and_writes_no_report(tmp_path, folder, capsys, make, needle):
    human = tmp_path / "humans.csv"
    make(human)
    line = refused(capsys, "report", str(folder), "--human", str(human))
    assert needle in line and "humans.csv" in line
    assert listing(folder) == ["ratings.csv"]


def test_report_contract_in_a_subprocess(tmp_path, folder, capsys):
    from judgelab.cli import main

    one_line_error(judgelab_cmd("report", str(folder), "--human", str(tmp_path / "missing.csv")),
                   "human ratings file not found", "missing.csv")
    assert listing(folder) == ["ratings.csv"]
    # A usable --human file is still compared with (in-process).
    human = tmp_path / "humans.csv"
    pd.DataFrame([{"item_id": f"i{k}", "criterion": "fluency", "rater": "ann", "score": (k * 2) % 5 + 1}
                  for k in range(6)]).to_csv(human, index=False)
    main(["report", str(folder), "--human", str(human)])
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert f"Human ratings from: {human}." in page and "Problems reading the folder" not in page
