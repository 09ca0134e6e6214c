"""Runner.plan: every first request built as the run sends it, with no call and no write."""
import asyncio
import sqlite3
from collections import Counter

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.run import ANSWER_PLACEHOLDER, Runner, RunSpec
from judgelab.store import Store

ITEMS = [Item("a", "A fine story.", system="human", context="p1"), Item("b", "Bad bad story.", system="gpt2", context="p2")]


def _rows(path, table):
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        db.close()


def test_plan_calls_nothing_and_writes_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    judge = ScriptedTestJudge({"default": "4"})
    with Store(path) as store:
        plan = Runner(judge, store, RunSpec(samples=3)).plan(ITEMS)
    assert judge.calls == []
    assert _rows(path, "runs") == 0 and _rows(path, "calls") == 0 and _rows(path, "judgments") == 0
    assert plan.total == 2 * 4 * 3 and plan.judgments == 24 and plan.already_done == 0
    assert len(plan.calls) == plan.n_calls == 8 and all(c.n == 3 and not c.cached for c in plan.calls)


def test_the_run_sends_exactly_the_planned_requests():
    judge = ScriptedTestJudge({"default": "4"}, max_n=1)
    store = Store(":memory:")
    runner = Runner(judge, store, RunSpec(samples=2, criteria=["cohesiveness", "likability"]))
    plan = runner.plan(ITEMS)
    asyncio.run(runner.run(ITEMS))
    sent = Counter((c.messages, c.n, c.sampling, c.key) for c in judge.calls)
    planned = Counter((c.messages, c.n, c.request.sampling, c.key) for c in plan.calls)
    assert sent == planned and len(plan.calls) == 2 * 2 * 2
    assert plan.rater == runner.rater and store.runs().keys() == {runner.rater}


def test_a_plan_after_a_run_sees_the_store():
    store = Store(":memory:")
    spec = RunSpec(samples=3)
    asyncio.run(Runner(ScriptedTestJudge({"default": "4"}), store, spec).run(ITEMS))
    done = Runner(ScriptedTestJudge({"default": "4"}), store, spec).plan(ITEMS)
    assert done.calls == () and done.already_done == 24 and done.judgments == 0
    store._db.execute("DELETE FROM judgments")  # judgments lost, calls kept: the ledger answers
    again = Runner(ScriptedTestJudge({"default": "4"}), store, spec).plan(ITEMS)
    assert len(again.calls) == 8 and all(c.cached for c in again.calls) and again.n_calls == 0
    assert again.prompt_chars() == 0 and again.prompt_chars(include_cached=True) > 0


def test_first_prompt_per_criterion_is_the_sent_prompt():
    judge = ScriptedTestJudge({"default": "4"})
    runner = Runner(judge, Store(":memory:"), RunSpec(samples=1))
    plan = runner.plan(ITEMS)
    first = plan.first_prompt_per_criterion()
    assert list(first) == sorted(first, key=lambda c: next(i for i, p in enumerate(plan.calls) if p.criterion == c))
    assert set(first) == set(runner.criteria)
    asyncio.run(runner.run(ITEMS))
    sent = {c.messages for c in judge.calls}
    assert all(messages in sent for messages in first.values())
    assert plan.prompt_chars() == sum(len(c.messages[0][1]) for c in judge.calls)


def test_conversation_plan_marks_unknown_answers():
    runner = Runner(ScriptedTestJudge({"default": "I rate it a 3."}), Store(":memory:"),
                    RunSpec(samples=1, query_mode="conversation"))
    plan = runner.plan(ITEMS[:1])
    assert [len(c.messages) for c in plan.calls] == [1, 3, 5, 7]
    assert plan.calls[0].exact and not any(c.exact for c in plan.calls[1:])
    assert plan.calls[1].messages[1] == ("assistant", ANSWER_PLACEHOLDER)


def test_a_forced_rater_conflict_is_found_by_planning_too(tmp_path):
    import pytest

    from judgelab.errors import JudgelabError

    store = Store(":memory:")
    asyncio.run(Runner(ScriptedTestJudge(), store, RunSpec(samples=1, rater="me")).run(ITEMS))
    with pytest.raises(JudgelabError, match="other settings"):
        Runner(ScriptedTestJudge(), store, RunSpec(samples=2, rater="me")).plan(ITEMS)
