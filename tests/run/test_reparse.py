"""A judgment read by an earlier version of the answer parser is read again from its recorded answer
on the next run: no new call, today's score, and the run says how many."""
from __future__ import annotations

import json
import sqlite3

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.parse import PARSER_VERSION, parse_judgment
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store

SPEC = RunSpec(template="chiang-lee-story", criteria=["likability"], samples=1)
# the embedded judge's kind of answer: a restated anchor list, then the rating
ANSWER = "1-5 (1: not at all, 2: a little, 3: somewhat, 4: quite, 5: very). I would rate it a 4."


def _items() -> list[Item]:
    return [Item("a", "Story a.", system="s1"), Item("a", "Story a, again.", system="s2"), Item("b", "Story b.", system="s1")]


def _scores(path) -> dict[tuple[str, str], float]:
    db = sqlite3.connect(path)
    out = {(s, i): v for s, i, v in db.execute("SELECT system, item_id, score FROM judgments")}
    db.close()
    return out


def test_judgments_of_an_earlier_parser_are_read_again_without_a_call(tmp_path, caplog):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        first = run_spec(SPEC, _items(), store, backend=ScriptedTestJudge({"default": ANSWER}))
    assert first.calls_made == 3 and set(_scores(path).values()) == {4.0}
    assert parse_judgment(ANSWER).score == 4.0
    # as an earlier parser left it: no parser version in meta, and the anchor's 1 read as the rating (s2/a only)
    db = sqlite3.connect(path)
    for (meta,) in db.execute("SELECT DISTINCT meta FROM judgments").fetchall():
        old = json.loads(meta)
        assert old["parser"] == PARSER_VERSION
        del old["parser"]
        db.execute("UPDATE judgments SET meta = ? WHERE meta = ?", (json.dumps(old), meta))
    db.execute("UPDATE judgments SET score = 1 WHERE system = 's2'")
    db.commit()
    db.close()
    judge = ScriptedTestJudge({"default": ANSWER})
    with Store(path) as store:
        again = run_spec(SPEC, _items(), store, backend=judge)
    assert judge.calls == [] and again.calls_made == 0 and again.reparsed == 3
    assert _scores(path) == {("s1", "a"): 4.0, ("s2", "a"): 4.0, ("s1", "b"): 4.0}
    assert "read by an earlier version of the answer parser" in caplog.text
    judge = ScriptedTestJudge({"default": ANSWER})
    with Store(path) as store:  # now current: nothing to read again
        third = run_spec(SPEC, _items(), store, backend=judge)
    assert third.reparsed == 0 and third.already_done == 3 and judge.calls == []



def test_samples_first_asked_one_per_call_are_read_again_from_those_calls(tmp_path):
    """A judge that answered one sample per call (max_n 1) recorded per-sample calls; reading its
    judgments again must use them, not plan a new k-sample call."""
    spec = RunSpec(template="chiang-lee-story", criteria=["likability"], samples=3)
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        first = run_spec(spec, _items(), store, backend=ScriptedTestJudge({"default": ANSWER}, max_n=1))
    assert first.calls_made == 9
    db = sqlite3.connect(path)
    for (meta,) in db.execute("SELECT DISTINCT meta FROM judgments").fetchall():
        old = json.loads(meta)
        del old["parser"]
        db.execute("UPDATE judgments SET meta = ? WHERE meta = ?", (json.dumps(old), meta))
    db.commit()
    db.close()
    judge = ScriptedTestJudge({"default": ANSWER})  # offers n up to 16: the plan would ask all 3 samples at once
    with Store(path) as store:
        again = run_spec(spec, _items(), store, backend=judge)
    assert judge.calls == [] and again.calls_made == 0 and again.reparsed == 9
