"""The run's plan holds jobs, not prompts; a rerun compares with the store in SQL and reads only what is not done."""
import asyncio
import dataclasses
import gc
import tracemalloc

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.run import Runner, RunSpec
from judgelab.run.plan import Job
from judgelab.store import Store

ITEMS = [Item("a", "A fine story.", context="p1"), Item("b", "Bad bad story.", context="p2"),
         Item("c", "A third story.", context="p3", group="g1")]


def _runner(store, **spec):
    return Runner(ScriptedTestJudge({"default": "I rate it a 4."}, max_n=1), store, RunSpec(**{"samples": 2, **spec}))


def test_the_plan_of_a_run_holds_no_rendered_prompt_and_builds_no_call():
    items = [Item(str(i), f"Story number {i} about a lighthouse keeper.", context=f"prompt {i}") for i in range(50)]
    plan = _runner(Store(":memory:")).plan(items, calls=False)
    assert len(plan.jobs) == 50 * 4 and all(type(job) is Job for job in plan.jobs)
    held = [v for job in plan.jobs for v in job if isinstance(v, str)]
    assert set(held) == set(_runner(Store(":memory:")).criteria)  # the criterion's name, nothing rendered
    assert "calls" not in plan.__dict__ and not any(dataclasses.is_dataclass(f) and not isinstance(f, Item)
                                                     for job in plan.jobs for f in job)


def test_the_plan_of_a_run_is_small_per_judgment():
    """Held after planning, per judgment (1 criterion, 1 sample): the jobs, not 1,500 bytes of prompts and requests."""
    items = [Item(str(i), f"Story number {i} about a lighthouse keeper and the ships.") for i in range(3000)]
    runner = Runner(ScriptedTestJudge(), Store(":memory:"), RunSpec(samples=1, criteria=["grammaticality"]))
    gc.collect()
    tracemalloc.start()
    try:
        plan = runner.plan(items, calls=False)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert plan.judgments == 3000
    assert held / 3000 < 200, f"{held / 3000:.0f} bytes per judgment"


def test_the_dry_runs_requests_are_those_sent_byte_for_byte():
    judge = ScriptedTestJudge({"default": "4"})
    runner = Runner(judge, Store(":memory:"), RunSpec(samples=3, criteria=["cohesiveness", "likability"]))
    planned = {c.key: c.request for c in runner.plan(ITEMS).calls}
    asyncio.run(runner.run(ITEMS))
    assert {r.key: r for r in judge.calls} == planned and len(planned) == 3 * 2


def test_a_rerun_counts_changed_error_reparsed_and_regrouped_rows_and_reads_only_those(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    rater = _runner(store).claim()
    asyncio.run(_runner(store).run(ITEMS))  # 3 items × 4 criteria × 2 samples
    db = store._db
    where = "WHERE rater = ? AND item_id = ? AND criterion = ? AND sample = ?"
    db.execute(f"UPDATE judgments SET prompt_key = 'another prompt' {where}", (rater, "a", "grammaticality", 0))
    db.execute(f"UPDATE judgments SET status = 'error' {where}", (rater, "a", "cohesiveness", 1))
    db.execute(f"UPDATE judgments SET meta = json_set(meta, '$.parser', 1) {where}", (rater, "b", "likability", 0))
    db.execute(f"DELETE FROM judgments {where}", (rater, "b", "relevance", 1))
    read: list = []
    unsettled = store.unsettled

    def counting(*args, **kwargs):
        rows = unsettled(*args, **kwargs)
        return None if rows is None else (read.append(row) or row for row in rows)

    store.unsettled = counting  # type: ignore[method-assign]
    items = ITEMS[:2] + [dataclasses.replace(ITEMS[2], group="g2")]
    plan = _runner(store).plan(items, calls=False)
    assert (plan.total, plan.already_done, plan.judgments) == (24, 20, 4)
    assert (plan.changed, plan.retried_errors, plan.reparsed) == (1, 1, 1)
    assert plan.regroup == (("default", "c", "g2"),) and plan.finished_items == (items[2],)
    assert sorted((j.item.item_id, j.criterion, j.samples) for j in plan.jobs) == [
        ("a", "cohesiveness", (1,)), ("a", "grammaticality", (0,)), ("b", "likability", (0,)), ("b", "relevance", (1,))]
    assert len(read) == 4 + 8  # the four asked again and item c's eight (its group): none of the twelve plainly done


def test_a_conversation_rerun_asks_again_only_the_turn_whose_prompt_changed():
    store = Store(":memory:")
    spec = {"samples": 1, "query_mode": "conversation"}
    runner = _runner(store, **spec)
    asyncio.run(runner.run(ITEMS[:1]))
    again = _runner(store, **spec).plan(ITEMS[:1], calls=False)
    assert (again.already_done, again.jobs) == (4, ())
    store._db.execute("UPDATE judgments SET prompt_key = 'x' WHERE criterion = 'likability'")
    plan = _runner(store, **spec).plan(ITEMS[:1], calls=False)
    assert (plan.changed, plan.already_done) == (1, 3)
    assert [(j.samples, j.record) for j in plan.jobs] == [((0,), frozenset({"likability"}))]


def test_another_raters_judgments_are_not_read_by_a_first_run():
    store = Store(":memory:")
    asyncio.run(_runner(store, rater="someone").run(ITEMS))
    assert store.unsettled("someone else", iter(()), 3) is None
    plan = _runner(store).plan(ITEMS, calls=False)
    assert (plan.already_done, plan.judgments) == (0, 24)


def test_a_read_only_store_is_compared_too(tmp_path):
    """``--dry-run`` of a folder opens its store read-only: the comparison writes nothing to it."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        asyncio.run(_runner(store).run(ITEMS[:1]))
    before = path.read_bytes()
    with Store(path, read_only=True) as store:
        plan = _runner(store).plan(ITEMS[:2])
    assert (plan.already_done, plan.judgments, plan.n_calls) == (8, 8, 8) and path.read_bytes() == before


def test_jobs_are_ordered_as_their_prompts_sort_without_holding_the_prompts():
    import random

    from judgelab.run.todo import _sort_key

    rng = random.Random(7)
    for _ in range(2000):
        alphabet = rng.choice(["ab", "abc", "xyzABC"])
        word = lambda: "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))  # noqa: E731
        reference = word()
        prompts = [word() for _ in range(20)] + [reference, reference[:3], reference + "a"]
        by_prompt = sorted(range(len(prompts)), key=prompts.__getitem__)
        assert sorted(range(len(prompts)), key=lambda i: _sort_key(reference, prompts[i])) == by_prompt, prompts
    plan = _runner(Store(":memory:")).plan(list(reversed(ITEMS)), calls=False)
    calls = plan.calls_of
    rendered = [calls.prompt(job.item, job.criterion) for job in plan.jobs]
    assert rendered == sorted(rendered) and len(rendered) == 12


def test_the_compact_prompt_order_is_the_prompts_order(monkeypatch):
    """Keys cut to a few bytes, in blocks: where cut keys tie, the prompts are rendered again, so the order is
    the prompts' own (Python's string order; ties in job order) — with long shared stretches, non-ASCII
    characters of one to four bytes, a NUL, a lone surrogate and prompts given twice."""
    import random

    from judgelab.run.todo import _PromptOrder

    monkeypatch.setattr(_PromptOrder, "BLOCK", 7)
    rng = random.Random(11)
    for _ in range(300):
        alphabet = rng.choice(["ab", "a\u00e9\u20ac\U0001f600", "ab\0", "a\ud800b"])
        long = "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 40)))  # longer than the cut head
        word = lambda: "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))  # noqa: E731
        prompts = [rng.choice(["", long]) + word() + rng.choice(["", long]) + word() for _ in range(40)]
        prompts += prompts[:5]
        order = _PromptOrder()
        for p in prompts:
            order.add(p)
        rendered = []
        got = order.sorted(lambda j: rendered.append(j) or prompts[j])
        assert got == sorted(range(len(prompts)), key=lambda i: (prompts[i], i)), prompts
        assert len(rendered) < 4 * len(prompts)
