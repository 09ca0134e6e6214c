"""The runner with the scripted test double: samples, n, refusals, resume, query modes."""
import asyncio

import pytest

from judgelab.datasets.items import Item
from judgelab.errors import CapabilityError
from judgelab.models.base import Sampling
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.run import RunSpec, Runner
from judgelab.store import Store

ITEMS = [Item("a", "A fine story.", system="human", context="p1"), Item("b", "Bad bad story.", system="gpt2", context="p2")]


def run(judge, store, spec, items=ITEMS):
    return asyncio.run(Runner(judge, store, spec).run(items))


def test_n_samples_in_one_call_and_rows():
    judge = ScriptedTestJudge({"rules": [{"contains": "Bad bad", "reply": "I would rate it a 2."}], "default": "Rating: 4/5"})
    store = Store(":memory:")
    stats = run(judge, store, RunSpec(samples=3))
    ratings = store.ratings()
    assert len(ratings) == 2 * 4 * 3 and stats.recorded == 24
    assert len(judge.calls) == 8 and all(c.n == 3 for c in judge.calls)  # one call per item × criterion
    assert set(ratings.loc[ratings.item_id == "b", "score"]) == {2.0}
    assert set(ratings.loc[ratings.item_id == "a", "score"]) == {4.0}
    assert list(ratings.columns[:7]) == ["item_id", "system", "group", "criterion", "rater", "sample", "score"]


def test_single_sample_calls_when_backend_has_no_n():
    judge = ScriptedTestJudge({"default": "3"}, max_n=1)
    store = Store(":memory:")
    run(judge, store, RunSpec(samples=3, criteria=["likability"], sampling=Sampling(temperature=0.7, seed=11)))
    assert len(judge.calls) == 6 and all(c.n == 1 for c in judge.calls)
    assert sorted({c.sampling.seed for c in judge.calls}) == [11, 12, 13]


def test_refusal_is_regenerated_and_every_attempt_kept():
    script = {"rules": [{"contains": "A fine story", "replies": ["I am an AI and I do not have the ability to experience enjoyment.", "I would rate it a 5."]}], "default": "3"}
    judge = ScriptedTestJudge(script, max_n=1)
    store = Store(":memory:")
    stats = run(judge, store, RunSpec(samples=1, criteria=["likability"]))
    ratings = store.ratings(with_meta=True)
    row = ratings[ratings.item_id == "a"].iloc[0]
    assert row.score == 5 and row.status == "ok" and stats.refusals_regenerated == 1
    import json
    attempts = json.loads(row.attempts)
    assert [a["status"] for a in attempts] == ["refusal", "ok"] and "I am an AI" in attempts[0]["text"]


def test_refusal_limit_leaves_a_failure_not_a_score():
    judge = ScriptedTestJudge({"default": "As an AI language model, I cannot rate this."}, max_n=1)
    store = Store(":memory:")
    stats = run(judge, store, RunSpec(samples=1, criteria=["likability"], max_refusal_retries=2))
    ratings = store.ratings()
    assert ratings.score.isna().all() and set(ratings.status) == {"refusal"}
    assert len(judge.calls) == 2 * 3 and stats.failures == 2


def test_resume_repeats_no_call(tmp_path):
    path = tmp_path / "s.sqlite"
    judge = ScriptedTestJudge({"default": "4"}, max_n=1)
    with Store(path) as store:
        run(judge, store, RunSpec(samples=2), ITEMS[:1])
    first_calls = len(judge.calls)
    judge2 = ScriptedTestJudge({"default": "4"}, max_n=1)
    with Store(path) as store:
        stats = run(judge2, store, RunSpec(samples=2), ITEMS)  # one item already done
        assert len(store.ratings()) == 2 * 4 * 2
    assert stats.already_done == 8 and len(judge2.calls) == first_calls  # only the new item is asked
    judge3 = ScriptedTestJudge({"default": "4"}, max_n=1)
    with Store(path) as store:
        stats = run(judge3, store, RunSpec(samples=2), ITEMS)
    assert len(judge3.calls) == 0 and stats.already_done == 16


def test_cached_calls_are_reused_for_lost_judgments(tmp_path):
    path = tmp_path / "s.sqlite"
    judge = ScriptedTestJudge({"default": "4"})
    with Store(path) as store:
        run(judge, store, RunSpec(samples=3), ITEMS)
        store._db.execute("DELETE FROM judgments")  # as if killed after the calls were stored
    judge2 = ScriptedTestJudge({"default": "4"})
    with Store(path) as store:
        stats = run(judge2, store, RunSpec(samples=3), ITEMS)
        assert len(store.ratings()) == 24
    assert len(judge2.calls) == 0 and stats.cache_hits == 8


def test_conversation_mode_carries_history():
    judge = ScriptedTestJudge({"default": "I rate it a 3."})
    store = Store(":memory:")
    run(judge, store, RunSpec(samples=1, query_mode="conversation"), ITEMS[:1])
    turns = [len(c.messages) for c in judge.calls]
    assert turns == [1, 3, 5, 7]
    last = judge.calls[-1].messages
    assert last[1] == ("assistant", "I rate it a 3.") and "relevant" in last[-1][1]


def test_logprob_mode_expected_score():
    judge = ScriptedTestJudge({"default_probs": {"1": 0.0, "2": 0.25, "3": 0.25, "4": 0.25, "5": 0.25}})
    store = Store(":memory:")
    run(judge, store, RunSpec(score="logprob", samples=3, criteria=["grammaticality"]))
    ratings = store.ratings()
    assert len(ratings) == 2 and (ratings["sample"] == 0).all()  # one deterministic score per item
    assert ratings.score.tolist() == pytest.approx([3.5, 3.5])
    assert ratings.logprob_outside.tolist() == pytest.approx([0.0, 0.0])
    assert ratings.score_parsed.isna().all()


def test_capability_errors_are_loud():
    judge = ScriptedTestJudge({"default": "3"})
    judge.capabilities = type(judge.capabilities)(max_n=1, top_logprobs=0, seed=False, score_mode=False)
    with pytest.raises(CapabilityError, match="cannot score"):
        run(judge, Store(":memory:"), RunSpec(score="logprob"))
    with pytest.raises(CapabilityError, match="seed"):
        run(judge, Store(":memory:"), RunSpec(samples=1, sampling=Sampling(seed=3)))


def test_export_from_the_store_without_a_model(tmp_path):
    import pandas as pd

    from conftest import judgelab_cmd

    with Store(tmp_path / "s.sqlite") as store:
        run(ScriptedTestJudge({"default": "4"}), store, RunSpec(samples=2), ITEMS)
        expected = store.ratings()
    for name in ("r.parquet", "r.csv", "r.jsonl"):
        result = judgelab_cmd("export", str(tmp_path / "s.sqlite"), "--to", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back[["item_id", "criterion", "sample", "score"]].equals(expected[["item_id", "criterion", "sample", "score"]])
    bad = judgelab_cmd("export", str(tmp_path / "s.sqlite"), "--to", str(tmp_path / "r.xlsx"))
    assert bad.returncode == 2 and "unknown output format" in bad.stderr


def test_journal_keeps_answers_written_before_a_kill(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.journal_call("k1", {"q": 1}, {"choices": [{"text": "4"}]})
    store.journal_call("k2", {"q": 2}, {"choices": [{"text": "5"}]})
    with open(str(path) + ".journal", "a") as f:
        f.write('{"key": "k3", "request": {"q"')  # a line torn by the kill
    # the process dies here: no close(), no database write of k1/k2; its lock dies with it
    store._unlock()
    with Store(path) as reopened:
        assert reopened.call_keys() == {"k1", "k2"}
        assert reopened.get_call("k2") == {"choices": [{"text": "5"}]}
    assert not (tmp_path / "s.sqlite.journal").exists()


def test_a_server_that_ignores_n_is_sampled_one_by_one():
    class IgnoresN(ScriptedTestJudge):
        async def _complete(self, request):
            response = await super()._complete(request)
            response.choices = response.choices[:1]
            return response

    judge = IgnoresN({"default": "I rate it 4."})
    store = Store(":memory:")
    runner = Runner(judge, store, RunSpec(samples=3))
    asyncio.run(runner.run(ITEMS[:1]))
    ratings = store.ratings()
    assert len(ratings) == 4 * 3 and set(ratings["score"]) == {4.0}
    assert "one by one" in runner.stats.warnings[0]
    assert sum(c.n == 3 for c in judge.calls) == 1  # asked once with n, then never again


def test_a_runs_meta_is_stored_as_it_is_when_written():
    """The meta JSON is encoded once per run and reused; a dict changed in place, an equal dict
    and another dict are each stored as they are at the time they are written."""
    from judgelab.store import Judgment

    store = Store(":memory:")
    meta: dict = {"b": {"x": (1, 2)}, "a": 1}

    def put(i: int, m: dict) -> None:
        store.put(judgments=[Judgment(str(i), "s", None, "c", "r", 0, 4.0, 4.0, None, None, "ok", "4", meta=m)])

    put(0, meta)
    put(1, meta)
    meta["b"]["x"] = (1, 3)  # changed in place, nested
    put(2, meta)
    put(3, {"a": True, "b": {"x": [1, 3]}})  # equal to the last (True == 1) but encoded differently
    stored = store.ratings(with_meta=True).set_index("item_id")["meta"].to_dict()
    assert stored == {"0": '{"a": 1, "b": {"x": [1, 2]}}', "1": '{"a": 1, "b": {"x": [1, 2]}}',
                      "2": '{"a": 1, "b": {"x": [1, 3]}}', "3": '{"a": true, "b": {"x": [1, 3]}}'}


def test_a_large_run_keeps_its_workers_not_a_task_per_judgment():
    """The executor runs ``concurrency`` workers over one queue of planned jobs: the tasks alive
    during a run do not grow with the number of judgments (100,000 would be 100,000 tasks)."""
    alive: list[int] = []

    class Counting(ScriptedTestJudge):
        async def _complete(self, request):
            alive.append(len(asyncio.all_tasks()))
            await asyncio.sleep(0)
            return await super()._complete(request)

    items = [Item(str(i), f"Story {i}.", context="a prompt") for i in range(600)]
    stats = asyncio.run(Runner(Counting({"default": "Rating: 4"}), Store(":memory:"),
                               RunSpec(samples=1, criteria=["grammaticality"], concurrency=8)).run(items))
    assert stats.recorded == 600 and len(alive) == 600
    assert max(alive) <= 8 + 2  # the workers, the group writer's flusher and the main task
