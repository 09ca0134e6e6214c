"""A run records the text each rater judged (the store's ``items`` table): keyed by labels, once per
item, idempotent on resume (no duplicate rows, no extra call), the newest text after an edit, and an
old store without the table still opens, reads and resumes."""
from __future__ import annotations

import sqlite3

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.run import RunSpec, run_spec
from judgelab.store import ItemText, Store, item_row
from judgelab.store.schema import STORE_VERSION

SPEC = RunSpec(template="chiang-lee-story", samples=2)


def _items() -> list[Item]:
    # the same item id under two systems: rows are told apart by label, never by position
    return [Item("a", "Story a, told by the model.", system="gpt2", group="g1", context="Prompt a"),
            Item("a", "Story a, told by a person.", system="human", group="g1", context="Prompt a"),
            Item("b", "Story b <i>with</i> markup & \u00e9\U0001f600.", system="gpt2", context="Prompt b\nline two")]


def _judge() -> ScriptedTestJudge:
    return ScriptedTestJudge({"default": "I would rate it a 4."})


def _rows(path) -> list[tuple]:
    db = sqlite3.connect(path)
    rows = db.execute("SELECT rater, system, item_id, grp, text, context, parts FROM items ORDER BY system, item_id").fetchall()
    db.close()
    return rows


def test_a_run_records_each_items_text_and_context_by_label(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        stats = run_spec(SPEC, _items(), store, backend=_judge())
        texts = store.item_texts()
    rater = stats.rater
    assert texts == {(rater, "gpt2", "a"): ItemText("Story a, told by the model.", "Prompt a", "g1"),
                     (rater, "human", "a"): ItemText("Story a, told by a person.", "Prompt a", "g1"),
                     (rater, "gpt2", "b"): ItemText("Story b <i>with</i> markup & \u00e9\U0001f600.", "Prompt b\nline two")}
    assert len(_rows(path)) == 3  # one row per item, not per judgment (24 judgments)
    with Store(path, read_only=True) as store:
        assert store.item_texts(rater=rater) == texts and store.item_texts(rater="nobody") == {}


def test_resume_writes_no_duplicate_and_makes_no_call(tmp_path):
    path = tmp_path / "store.sqlite"
    items = _items()
    with Store(path) as store:
        run_spec(SPEC, items[:2], store, backend=_judge())  # as if killed after two items
    first = _rows(path)
    judge = _judge()
    with Store(path) as store:
        stats = run_spec(SPEC, items, store, backend=judge)
    assert stats.calls_made == len(judge.calls) == 4  # only the third item: 4 criteria, both samples in one call
    rows = _rows(path)
    assert len(rows) == 3 and [r for r in rows if r[2] == "a"] == first
    again = _judge()
    with Store(path) as store:
        stats = run_spec(SPEC, items, store, backend=again)
    assert stats.calls_made == 0 and not again.calls and _rows(path) == rows


def test_an_edited_text_replaces_the_row_with_the_text_judged_again(tmp_path):
    path = tmp_path / "store.sqlite"
    items = _items()
    with Store(path) as store:
        run_spec(SPEC, items, store, backend=_judge())
    edited = [items[0], items[1], Item("b", "Story b, second version.", system="gpt2", context="Prompt b")]
    judge = _judge()
    with Store(path) as store:
        stats = run_spec(SPEC, edited, store, backend=judge)
        texts = store.item_texts(rater=stats.rater)
    assert stats.changed == 8 and len(judge.calls) == 4
    assert texts[(stats.rater, "gpt2", "b")] == ItemText("Story b, second version.", "Prompt b")
    assert len(_rows(path)) == 3


def test_the_texts_of_a_pair_are_kept_by_name(tmp_path):
    pair = Item("x|y", "x vs y", "pair", extra={"first": {"text": "Text X."}, "second": {"text": "Text Y."}, "n": 3})
    with Store(tmp_path / "s.sqlite") as store:
        store.put(items=[item_row("r", pair)])
        assert store.item_texts() == {("r", "pair", "x|y"): ItemText("x vs y", None, None,
                                                                      (("first", "Text X."), ("second", "Text Y.")))}


def test_a_store_without_the_items_table_reads_and_resumes_without_a_call(tmp_path):
    path = tmp_path / "store.sqlite"
    items = _items()
    with Store(path) as store:
        run_spec(SPEC, items, store, backend=_judge())
    db = sqlite3.connect(path)  # as version 3 wrote it: no items table
    db.execute("DROP TABLE items")
    db.execute("UPDATE judgelab_meta SET value = '3' WHERE name = 'version'")
    db.commit()
    db.close()
    with Store(path, read_only=True) as store:
        assert store.item_texts() == {} and len(store.ratings()) == 24
    judge = _judge()
    with Store(path) as store:  # opened for writing: the table is made, the version recorded
        stats = run_spec(SPEC, items, store, backend=judge)
        assert store.item_texts(rater=stats.rater)[(stats.rater, "gpt2", "a")].text == "Story a, told by the model."
    assert stats.calls_made == 0 and not judge.calls and len(_rows(path)) == 3
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM judgelab_meta WHERE name = 'version'").fetchone() == (str(STORE_VERSION),)
    db.close()
