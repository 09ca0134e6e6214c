"""Issue 18: a judgment is bound to the prompt it answers; a refused or failed run replaces no output;
rate limits and flaky endpoints never abort a run; a damaged store is repaired or refused in one line."""
import json
import sqlite3
import time

import pandas as pd
import pytest

from conftest import write_items
from judgelab.cli import main
from judgelab.datasets.items import load_items
from judgelab.spec import JudgeOptions, JudgeSpec, RunSpec
from judgelab.status import Status
from judgelab.store import Store
from judgelab.rate import rate_items, stats_line

OUTPUTS = ("ratings.csv", "summary.csv", "run.json", "README.md", "report.html")


def cli(*args: str) -> int:
    """``judgelab ARGS`` in this process; its exit status."""
    try:
        main(list(args))
    except SystemExit as ended:
        return int(ended.code or 0)
    return 0


def _items(path, texts: dict[str, str]):
    path.write_text("".join(json.dumps({"id": i, "text": t, "context": "A prompt."}) + "\n" for i, t in texts.items()))
    return path


def _script(path, rules, default="Rating: 5"):
    path.write_text(json.dumps({"rules": rules, "default": default}))
    return f"scripted-test-double:{path}"


def test_an_edited_item_is_judged_again_and_only_it(tmp_path):
    judge = _script(tmp_path / "s.json", [{"contains": "second version", "reply": "Rating: 1"}])
    items_file = _items(tmp_path / "items.jsonl", {"a": "The first version of a.", "b": "A story b."})
    spec = RunSpec(samples=1, criteria=["likability", "cohesiveness"])
    first = rate_items(load_items(items_file), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    assert first.runs[0].stats.calls_made == 4 and set(first.ratings["score"]) == {5.0}

    _items(items_file, {"a": "The second version of a.", "b": "A story b."})  # a edited, same id
    again = rate_items(load_items(items_file), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    stats = again.runs[0].stats
    assert stats.calls_made == 2 and stats.changed == 2 and stats.already_done == 2  # b: 0 calls
    scores = again.ratings.set_index(["item_id", "criterion"])["score"]
    assert (scores.loc["a"] == 1.0).all() and (scores.loc["b"] == 5.0).all()
    assert "2 asked again because their prompt changed" in stats_line(stats)
    assert again.runs[0].rater == first.runs[0].rater  # the same settings keep their label

    fresh = rate_items(load_items(items_file), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "fresh", progress=False)
    pd.testing.assert_frame_equal(again.ratings, fresh.ratings)  # as if the folder were new


def test_a_changed_group_is_updated_without_a_call(tmp_path):
    judge = _script(tmp_path / "s.json", [])
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "A story.", "context": "p", "group": "g1"}) + "\n")
    spec = RunSpec(samples=1, criteria=["likability"])
    rate_items(load_items(path), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    path.write_text(json.dumps({"id": "a", "text": "A story.", "context": "p", "group": "g2"}) + "\n")
    again = rate_items(load_items(path), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    assert again.runs[0].stats.calls_made == 0 and again.ratings["group"].tolist() == ["g2"]


def test_an_item_left_out_of_the_file_is_left_out_of_the_ratings(tmp_path):
    judge = _script(tmp_path / "s.json", [])
    spec = RunSpec(samples=1, criteria=["likability"])
    rate_items(load_items(_items(tmp_path / "i.jsonl", {"a": "A.", "b": "B."})), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out",
               progress=False)
    again = rate_items(load_items(_items(tmp_path / "i.jsonl", {"a": "A."})), [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out",
                       progress=False)
    assert again.ratings["item_id"].tolist() == ["a"]


def test_a_store_of_the_previous_version_resumes_without_a_call(tmp_path):
    judge = _script(tmp_path / "s.json", [])
    items = load_items(_items(tmp_path / "i.jsonl", {"a": "A.", "b": "B."}))
    spec = RunSpec(samples=2, criteria=["likability"])
    rate_items(items, [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    db = sqlite3.connect(tmp_path / "out" / "store.sqlite")  # as version 2 wrote it: no prompt_key
    db.execute("ALTER TABLE judgments DROP COLUMN prompt_key")
    db.execute("UPDATE judgelab_meta SET value = '2' WHERE name = 'version'")
    db.commit()
    db.close()
    again = rate_items(items, [spec.model_copy(update={"judge": JudgeSpec(spec=judge)})], tmp_path / "out", progress=False)
    assert again.runs[0].stats.calls_made == 0 and again.runs[0].stats.already_done == 4


def test_a_dry_run_reads_a_store_of_the_previous_version_as_the_resume_does_and_writes_nothing(tmp_path, capsys):
    judge = _script(tmp_path / "s.json", [])
    items = _items(tmp_path / "i.jsonl", {"a": "A.", "b": "B."})
    args = ["rate", "--items", str(items), "--judge", judge, "--samples", "2", "--criteria", "likability",
            "--out", str(tmp_path / "out"), "--quiet"]
    assert cli(*args) == 0
    store = tmp_path / "out" / "store.sqlite"
    db = sqlite3.connect(store)  # as version 2 wrote it: no prompt_key
    db.execute("ALTER TABLE judgments DROP COLUMN prompt_key")
    db.execute("UPDATE judgelab_meta SET value = '2' WHERE name = 'version'")
    db.commit()
    db.close()
    before = store.read_bytes()
    files = sorted(p.name for p in store.parent.iterdir())
    capsys.readouterr()
    assert cli(*args, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "total: 0 calls, 0 judgments" in out and "(4 already in the store)" in out, out
    assert store.read_bytes() == before and sorted(p.name for p in store.parent.iterdir()) == files  # nothing written


def test_refused_rerun_leaves_every_output_byte_identical(tmp_path, capsys):
    judge = _script(tmp_path / "s.json", [])
    items = write_items(tmp_path / "items.jsonl", 3)
    args = ["rate", "--items", str(items), "--judge", judge, "--samples", "1", "--out", str(tmp_path / "out"), "--quiet"]
    assert cli(*args, "--rater", "mine") == 0
    before = {name: (tmp_path / "out" / name).read_bytes() for name in OUTPUTS}
    capsys.readouterr()
    assert cli(*args, "--rater", "mine", "--temperature", "0.7") == 2
    assert "was run with other settings" in capsys.readouterr().err
    assert {name: (tmp_path / "out" / name).read_bytes() for name in OUTPUTS} == before
    assert not list((tmp_path / "out").glob(".judgelab-new-*"))  # nothing staged is left behind


def test_endpoint_down_on_a_rerun_leaves_every_output_byte_identical(tmp_path, stub_factory, capsys):
    stub = stub_factory()
    out = tmp_path / "out"
    args = ["--judge", "openai:m", "--base-url", stub.base_url, "--out", str(out), "--quiet", "--samples", "1",
            "--max-retries", "1"]
    assert cli("rate", "--items", str(write_items(tmp_path / "a.jsonl", 2)), *args) == 0
    before = {name: (out / name).read_bytes() for name in OUTPUTS}
    stub.stop()
    capsys.readouterr()
    assert cli("rate", "--items", str(write_items(tmp_path / "b.jsonl", 3)), *args) == 2  # one new item
    err = capsys.readouterr().err
    assert "is unreachable (connection refused" in err and "Traceback" not in err
    assert {name: (out / name).read_bytes() for name in OUTPUTS} == before


def test_a_storm_of_429s_and_500s_never_aborts_a_run(tmp_path, stub_factory):
    """30% rate limits and 10% server errors on 120 items: every run completes with every judgment ok."""
    stub = stub_factory(rate_limited=0.3, server_errors=0.1, retry_after="0")
    items = load_items(write_items(tmp_path / "items.jsonl", 120))
    options = JudgeOptions(base_url=stub.base_url, concurrency=16, backoff_base=0.02)
    for run in range(2):
        spec = RunSpec(judge=JudgeSpec(spec="openai:m", options=options), samples=3)
        result = rate_items(items, [spec], tmp_path / f"out{run}", progress=False)
        stats = result.runs[0].stats
        assert len(result.ratings) == 120 * 4 * 3 and (result.ratings["status"] == Status.OK).all()
        assert stats.retries.get("rate_limited", 0) > 50 and stats.retries.get("server_error", 0) > 10
        manifest = json.loads((tmp_path / f"out{run}" / "run.json").read_text())
        assert manifest["runs"][0]["retries"] == stats.retries  # retries are recorded


def test_a_hung_endpoint_ends_its_calls_as_errors_within_the_budget(tmp_path, stub_factory, capsys):
    stub = stub_factory(mode="hang")
    items = write_items(tmp_path / "items.jsonl", 2)
    start = time.monotonic()
    code = cli("rate", "--items", str(items), "--judge", "openai:m", "--base-url", stub.base_url, "--samples", "1",
               "--criteria", "likability", "--timeout", "0.5", "--max-retries", "1", "--out", str(tmp_path / "out"),
               "--quiet")
    elapsed = time.monotonic() - start
    assert code == 3  # every judgment failed: more than --max-failure-rate
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert ratings["status"].tolist() == ["error", "error"]
    assert "no answer from" in ratings["raw"].iloc[0] and "gave up after 2 attempts" in ratings["raw"].iloc[0]
    assert elapsed < 20, elapsed  # two attempts of 0.5 s and one short backoff per call, in parallel
    assert "error 2" in capsys.readouterr().out


def test_error_judgments_are_asked_again_by_the_next_run(tmp_path, stub_factory):
    items = load_items(write_items(tmp_path / "items.jsonl", 2))
    spec = RunSpec(samples=1, criteria=["likability"])
    hung = stub_factory(mode="hang")
    options = JudgeOptions(base_url=hung.base_url, timeout=0.3, max_retries=0)
    first = rate_items(items, [spec.model_copy(update={"judge": JudgeSpec(spec="openai:m", options=options)})],
                       tmp_path / "out", progress=False)
    assert (first.ratings["status"] == "error").all()
    hung.stop()
    ok = stub_factory(port=hung.port)  # the same endpoint, now answering
    options = JudgeOptions(base_url=ok.base_url)
    again = rate_items(items, [spec.model_copy(update={"judge": JudgeSpec(spec="openai:m", options=options)})],
                       tmp_path / "out", progress=False)
    assert again.runs[0].stats.retried_errors == 2 and again.runs[0].stats.calls_made == 2
    assert (again.ratings["status"] == "ok").all()


# -- damaged stores: repaired or refused in one line, and the next run completes ----------------

def _rated_folder(tmp_path):
    judge = _script(tmp_path / "s.json", [])
    items = write_items(tmp_path / "items.jsonl", 2)
    args = ["rate", "--items", str(items), "--judge", judge, "--samples", "1", "--criteria", "likability",
            "--out", str(tmp_path / "out"), "--quiet"]
    assert cli(*args) == 0
    return args, tmp_path / "out" / "store.sqlite"


def _one_warning(err: str, needle: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("judgelab: warning:")]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err and "internal error" not in err


def test_a_journal_that_is_a_folder_is_moved_aside(tmp_path, capsys):
    args, store = _rated_folder(tmp_path)
    (tmp_path / "out" / "store.sqlite.journal").mkdir()
    capsys.readouterr()
    assert cli(*args) == 0
    _one_warning(capsys.readouterr().err, "was not a journal file")
    assert cli(*args) == 0  # and the next run is clean


@pytest.mark.parametrize("damage", ["{", "{}"])
def test_a_damaged_answer_in_the_ledger_is_dropped_and_asked_again(tmp_path, capsys, damage):
    args, store = _rated_folder(tmp_path)
    db = sqlite3.connect(store)
    key = db.execute("SELECT key FROM calls LIMIT 1").fetchone()[0]
    db.execute("UPDATE calls SET response = ? WHERE key = ?", (damage, key))
    db.execute("DELETE FROM judgments")  # the judgments must be made again from the ledger
    db.commit()
    db.close()
    capsys.readouterr()
    assert cli(*args) == 0
    captured = capsys.readouterr()
    _one_warning(captured.err, "damaged answer in the call ledger")
    assert "calls made 1, cache hits 1" in captured.out
    with Store(store, read_only=True) as s:
        assert (s.ratings()["status"] == "ok").all() and len(s.ratings()) == 2


def test_a_damaged_journal_line_never_reaches_the_ledger(tmp_path, capsys):
    args, store = _rated_folder(tmp_path)
    db = sqlite3.connect(store)
    key = db.execute("SELECT key FROM calls LIMIT 1").fetchone()[0]
    db.execute("DELETE FROM calls WHERE key = ?", (key,))
    db.execute("DELETE FROM judgments")
    db.commit()
    db.close()
    journal = tmp_path / "out" / "store.sqlite.journal"
    journal.write_text(json.dumps({"key": key, "request": {"messages": []}, "response": "oops"}) + "\n")
    capsys.readouterr()
    assert cli(*args) == 0
    _one_warning(capsys.readouterr().err, "damaged line(s) left out")
    assert cli(*args) == 0
    with Store(store, read_only=True) as s:
        assert (s.ratings()["status"] == "ok").all()
