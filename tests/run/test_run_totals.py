"""run.json's calls, tokens and time are those of the runs that made the judgments: a rerun answered by the
ledger keeps them, and says what it did itself in ``this_run`` (the store's run log)."""
import json
import time

import pytest

from conftest import write_items
from judgelab.datasets.items import load_items
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.rate import rate_items
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store

TOTALS = ("calls_made", "prompt_tokens", "completion_tokens", "wall_s", "cost_usd", "runs_with_calls")


def _rate(tmp_path, items, script):
    spec = RunSpec(judge=f"scripted-test-double:{script}", samples=2)
    rate_items(items, [spec], tmp_path / "out", progress=False, price_in=1.0, price_out=2.0)
    (run,) = json.loads((tmp_path / "out" / "run.json").read_text())["runs"]
    return run


def test_a_rerun_without_calls_keeps_the_tokens_and_time_of_the_judgments(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4 out of 5."}))
    items = load_items(write_items(tmp_path / "items.jsonl", 3))
    first = _rate(tmp_path, items, script)
    assert first["calls_made"] > 0 and first["prompt_tokens"] > 0 and first["completion_tokens"] > 0
    assert first["runs_with_calls"] == 1 and first["this_run"]["calls_made"] == first["calls_made"]
    assert first["cost_usd"] == pytest.approx((first["prompt_tokens"] + 2 * first["completion_tokens"]) / 1e6)
    time.sleep(0.01)
    again = _rate(tmp_path, items, script)
    assert {k: again[k] for k in TOTALS} == {k: first[k] for k in TOTALS}
    assert again["this_run"]["calls_made"] == 0 and again["this_run"]["prompt_tokens"] == 0
    assert again["this_run"]["wall_s"] != first["this_run"]["wall_s"]  # the rerun's own time, apart
    assert again["already_in_store"] == again["judgments"] == first["judgments"]


def test_runs_that_make_calls_add_up(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4 out of 5."}))
    items = load_items(write_items(tmp_path / "items.jsonl", 4))
    first = _rate(tmp_path, items[:2], script)
    more = _rate(tmp_path, items, script)  # two more items: their calls are made now
    assert more["this_run"]["calls_made"] == first["calls_made"] > 0
    for key in ("calls_made", "prompt_tokens", "completion_tokens"):
        assert more[key] == first[key] + more["this_run"][key]
    assert more["runs_with_calls"] == 2
    assert more["wall_s"] == pytest.approx(first["wall_s"] + more["this_run"]["wall_s"], abs=2e-3)


def test_a_failing_run_is_logged_with_the_calls_it_made(tmp_path):
    """A run that stops on an error still paid for the calls it made before."""
    class Breaks(ScriptedTestJudge):
        async def _complete(self, request):
            if len(self.calls) >= 2:
                raise RuntimeError("the judge broke")
            return await super()._complete(request)

    items = load_items(write_items(tmp_path / "items.jsonl", 3))
    with Store(tmp_path / "store.sqlite") as store:
        with pytest.raises(RuntimeError):
            run_spec(RunSpec(samples=1, concurrency=1), items, store, backend=Breaks({"default": "4"}))
        (rater,) = store.runs()
        totals = store.run_totals(rater)
    assert totals["runs_with_calls"] == 1 and totals["calls_made"] == 2 and totals["prompt_tokens"] > 0


def test_a_rater_from_a_store_without_a_run_log_has_unknown_totals(tmp_path):
    """A label claimed before its store logged runs (an older judgelab) had runs nobody counted: its totals
    are unknown (None with a note), never zeros."""
    items = load_items(write_items(tmp_path / "items.jsonl", 2))
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        stats = run_spec(RunSpec(samples=1), items, store, backend=ScriptedTestJudge({"default": "4"}))
        store._db.execute("DELETE FROM run_log")
        store._db.execute("UPDATE judgelab_meta SET value = ? WHERE name = 'run_log_since'", (repr(time.time() + 60),))
    with Store(path) as store:
        again = run_spec(RunSpec(samples=1), items, store, backend=ScriptedTestJudge({"default": "4"}))
        totals = store.run_totals(again.rater)
    assert again.rater == stats.rater and again.calls_made == 0
    assert totals["calls_made"] is None and totals["prompt_tokens"] is None and "older judgelab" in totals["totals_note"]
