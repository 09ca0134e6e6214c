"""Status: one enum for the statuses, equal to the strings stores and files keep."""
import asyncio
import sqlite3

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.parse import parse_judgment, truncation_checked
from judgelab.run import Runner, RunSpec
from judgelab.status import Status
from judgelab.store import Store


def test_members_equal_the_stored_strings():
    assert [s.value for s in Status] == ["ok", "refusal", "no_rating", "out_of_range", "empty", "truncated",
                                         "no_label_mass", "missing", "error"]
    assert Status.OK == "ok" and "refusal" == Status.REFUSAL and {"ok": 1}[Status.OK] == 1
    assert f"{Status.TRUNCATED}" == "truncated" and str(Status.EMPTY) == "empty"


def test_parser_statuses_are_members():
    assert parse_judgment("I would rate it a 4.", (1, 5)).status is Status.OK
    assert parse_judgment("As an AI language model, I cannot rate this.", (1, 5)).status is Status.REFUSAL
    assert parse_judgment("", (1, 5)).status is Status.EMPTY
    assert parse_judgment("Nice story.", (1, 5)).status is Status.NO_RATING
    assert truncation_checked(parse_judgment("The story is", (1, 5)), "length").status is Status.TRUNCATED


def test_the_store_keeps_plain_strings(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        asyncio.run(Runner(ScriptedTestJudge({"default": "no idea"}), store, RunSpec(samples=1, criteria=["likability"]))
                    .run([Item("a", "A story.", context="p")]))
        assert store.ratings()["status"].tolist() == ["no_rating"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT status, typeof(status) FROM judgments").fetchall() == [("no_rating", "text")]
    db.close()
