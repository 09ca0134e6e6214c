"""benchmarks/million.py's pure helpers: the pace by thirds and the verdicts of the must-show targets
(computed from measurements; the benchmark itself is run by hand, never here)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from million import flatten, pace_by_thirds, pace_of_marks, verdicts  # noqa: E402


def test_pace_by_thirds_reads_seconds_per_1000_of_the_first_and_last_third_of_the_judgments():
    # 3,000 judgments: the first 1,000 one per ms, then steady, the last 1,000 one per 2 ms
    times = [i * 0.001 for i in range(1000)] + [1.0 + i * 0.0015 for i in range(1000)] \
        + [2.5 + i * 0.002 for i in range(1000)]
    got = pace_by_thirds(list(reversed(times)))  # order of the rows does not matter
    assert got["judgments"] == 3000
    assert got["s_per_1000_first_third"] == pytest.approx(1.0, abs=0.002)  # t[1000] - t[0] = 1.0 s
    assert got["s_per_1000_last_third"] == pytest.approx(1.998, abs=0.002)  # t[-1] - t[-1001]
    assert got["last_over_first"] == pytest.approx(2.0, abs=0.01)


def test_pace_by_thirds_of_a_flat_run_is_one_and_of_too_few_judgments_is_none():
    assert pace_by_thirds([i * 0.01 for i in range(900)])["last_over_first"] == 1.0
    assert pace_by_thirds([0.0, 1.0, 2.0])["last_over_first"] is None


def test_the_floors_four_marks_give_the_pace_the_whole_ledger_gives():
    # the same drifting run: every finish time (rate's ledger) against only the 1st, (k+1)th, (n-k)th, nth
    n = 3001
    times = [i * 0.001 * (1 + i / n) for i in range(n)]
    k = n // 3
    marks = {"1": times[0], str(k + 1): times[k], str(n - k): times[n - 1 - k], str(n): times[-1]}
    assert pace_of_marks(n, marks) == pace_by_thirds(times)
    assert pace_of_marks(n, marks)["last_over_first"] > 1.9
    assert pace_of_marks(n, {"1": 0.0})["last_over_first"] is None  # a mark missing: no pace, never a guess


@pytest.mark.parametrize("workers", [False, True])
def test_the_bare_loop_marks_when_its_first_thirds_and_last_calls_finished(workers):
    """Both shapes of the floor: a coroutine per prompt gathered at once, and --workers (CONCURRENCY workers)."""
    import asyncio

    import bare_loop

    from judgelab.testing.openai_stub import serve

    async def go() -> dict[int, float]:
        ready = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(serve(0, ready=ready))
        try:
            return await bare_loop.main([f"prompt {i}" for i in range(30)], f"http://127.0.0.1:{await ready}/v1", 4,
                                        workers=workers)
        finally:
            server.cancel()

    marks = asyncio.run(go())
    assert sorted(marks) == [1, 11, 20, 30]  # k = 10: the points pace_by_thirds reads
    assert marks[1][0] <= marks[11][0] <= marks[20][0] <= marks[30][0]  # wall (time.time(), as the ledger's)
    assert marks[1][1] <= marks[11][1] <= marks[20][1] <= marks[30][1]  # and the process's CPU seconds


def test_verdicts_pass_at_the_limit_fail_past_it_and_say_what_was_not_measured():
    measured = {"wall_ratio": 1.2, "judgelab_peak_rss_mb": 1537, "pace_last_over_first": 1.05, "first_screen_s": 1.0,
                "agree_s": 59.9, "agree_peak_rss_mb": 400, "kill_every_judgment_once": True, "kill_no_call_twice": False}
    got = {r["target"]: r["verdict"] for r in verdicts(measured)}
    assert got["wall_ratio"] == "pass"  # at most 1.2x
    assert got["judgelab_peak_rss_mb"] == "fail"  # 1.5 GB = 1536 MiB
    assert got["pace_last_over_first"] == "pass"
    assert got["first_screen_s"] == "fail"  # under 1 s
    assert got["agree_s"] == "pass" and got["agree_peak_rss_mb"] == "pass"
    assert got["audit_s"] == "not measured" and got["audit_peak_rss_mb"] == "not measured"
    assert got["kill_every_judgment_once"] == "pass" and got["kill_no_call_twice"] == "fail"


def test_a_profiled_run_is_not_judged_on_its_times():
    got = {r["target"]: r["verdict"] for r in verdicts({"wall_ratio": 3.0, "pace_last_over_first": 1.0,
                                                        "judgelab_peak_rss_mb": 900}, profiled=True)}
    assert got["wall_ratio"] == got["pace_last_over_first"] == "not judged (profiled run)"
    assert got["judgelab_peak_rss_mb"] == "pass"


def test_flatten_takes_the_ratio_from_the_two_sides_of_one_run():
    result = {"rate": {"wall_s": 120.0, "peak_rss_mb": 800, "pace": {"last_over_first": 1.02}},
              "bare": {"wall_s": 100.0}, "agree": {"agree": {"wall_s": 5.0, "peak_rss_mb": 300}},
              "kill": {"every_judgment_once": True, "no_call_twice": True}}
    got = flatten(result)
    assert got["wall_ratio"] == 1.2 and got["judgelab_peak_rss_mb"] == 800 and got["pace_last_over_first"] == 1.02
    assert got["agree_s"] == 5.0 and got["audit_s"] is None and got["first_screen_s"] is None
    assert "wall_ratio" not in flatten({"rate": {"wall_s": 1.0}})  # no floor measured: no ratio
    both = flatten({**result, "bare_workers": {"wall_s": 80.0}})
    assert both["wall_ratio"] == 1.2 and both["wall_ratio_workers"] == 1.5  # each floor judged on its own
    assert {r["target"]: r["verdict"] for r in verdicts(both)}["wall_ratio_workers"] == "fail"
