"""A fleet of replicas as one judge: identity, least-loaded routing, a replica lost mid-run."""
import threading
import time
from collections import Counter

import pytest

from conftest import write_items
from judgelab.datasets.items import load_items
from judgelab.errors import JudgelabError
from judgelab.models.backends.fleet import Fleet
from judgelab.models.backends.openai_compatible import OpenAIBackend
from judgelab.models.spec import build_judge, parse_judge
from judgelab.run import RunSpec, run_spec
from judgelab.spec import JudgeOptions, JudgeSpec
from judgelab.store import Store


def test_the_fleet_is_one_identity_whatever_its_replicas_and_their_order():
    a = build_judge("openai:m@http://127.0.0.1:9/v1,http://127.0.0.1:10/v1")
    b = build_judge("openai:m@http://127.0.0.1:10/v1,http://127.0.0.1:9/v1,http://127.0.0.1:11/v1")
    assert isinstance(a, Fleet) and a.identity() == b.identity() == {"kind": "openai", "model": "m", "style": "chat",
                                                                     "endpoint": "fleet"}
    single = build_judge("openai:m@http://127.0.0.1:9/v1")  # a single endpoint keeps its URL, as before
    assert single.identity()["base_url"] == "http://127.0.0.1:9/v1"
    assert parse_judge("openai:m@http://a/v1,http://b/v1")[1]["replicas"] == ["http://a/v1", "http://b/v1"]
    with pytest.raises(JudgelabError, match="named twice"):
        build_judge("openai:m@http://a/v1,http://a/v1")
    with pytest.raises(JudgelabError, match="two or more"):
        parse_judge("openai:m@http://a/v1,")


def _run(urls, items, concurrency, store=None):
    spec = RunSpec(judge=JudgeSpec(spec="openai:m@" + ",".join(urls), options=JudgeOptions(concurrency=concurrency)),
                   samples=1)
    backend = spec.judge.build()
    store = store or Store(":memory:")
    start = time.perf_counter()
    stats = run_spec(spec, items, store, backend=backend)
    return stats, time.perf_counter() - start, backend, store


def _peak_in_flight(spec_urls, items, concurrency):
    """Run, sampling the calls the fleet has in flight at once (summed over its replicas)."""
    spec = RunSpec(judge=JudgeSpec(spec="openai:m@" + ",".join(spec_urls), options=JudgeOptions(concurrency=concurrency)),
                   samples=1)
    backend = spec.judge.build()
    peak, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], sum(r.in_flight for r in backend.replicas))
            time.sleep(0.001)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        stats = run_spec(spec, items, Store(":memory:"), backend=backend)
    finally:
        done.set()
        watcher.join()
    return stats, peak[0], backend


def test_four_replicas_keep_more_calls_in_flight_than_one(tmp_path, stub_factory):
    """The functional check, with no clock: four replicas of 2 slots each hold more than 2 calls at
    once and share the work (benchmarks/fleet_scale.py measures the speed-up as a ratio)."""
    items = load_items(write_items(tmp_path / "items.jsonl", 30))  # 120 calls, 2 in flight per replica
    stubs = [stub_factory(latency=0.05) for _ in range(4)]
    spec = RunSpec(judge=f"openai:m@{stubs[0].base_url},{stubs[1].base_url}", samples=1)
    assert spec.judge.build().capabilities.concurrency == 32  # per replica × replicas
    four, peak, backend = _peak_in_flight([s.base_url for s in stubs], items, 2)
    assert four.statuses == {"ok": 120}
    assert 2 < peak <= 8, peak  # more than one replica's 2 slots, never more than 4 × 2
    calls = [r["calls"] for r in backend.run_facts()["replicas"]]
    assert sum(calls) == 120 and min(calls) >= 20  # spread over every replica
    answered = Counter(k for s in stubs for k in s.answered())
    assert len(answered) == 120 and set(answered.values()) == {1}  # each call paid once


def test_a_replica_killed_mid_run_loses_no_judgment_and_pays_nothing_twice(tmp_path, stub_factory):
    items = load_items(write_items(tmp_path / "items.jsonl", 60))  # 240 calls
    stubs = [stub_factory(latency=0.05) for _ in range(4)]
    def kill_when_busy():  # once the replica has answered a few calls: it dies mid-run, with calls in flight
        deadline = time.monotonic() + 60
        while len(stubs[1].answered()) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        stubs[1].proc.kill()

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    stats, _, backend, store = _run([s.base_url for s in stubs], items, 4)
    killer.join()
    assert stats.statuses == {"ok": 240} and stats.recorded == 240
    answered = Counter(k for s in stubs for k in s.answered())
    assert len(answered) == 240 and set(answered.values()) == {1}  # every call answered once, none paid twice
    facts = {r["url"]: r for r in backend.run_facts()["replicas"]}
    assert facts[stubs[1].base_url]["taken_out"] >= 1
    assert 0 < len(stubs[1].answered()) < 60  # it did part of the work before it died
    assert any("taken out of service" in note for note in backend.notes)


def test_run_json_records_the_replicas(tmp_path, stub_factory):
    import json

    from conftest import run_cli

    items = write_items(tmp_path / "items.jsonl", 4)
    a, b = stub_factory(), stub_factory()
    r = run_cli("rate", "--items", str(items), "--judge", f"openai:m@{a.base_url},{b.base_url}", "--samples", "1",
                "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 0, r.stderr
    run = json.loads((tmp_path / "o" / "run.json").read_text())
    text = json.dumps(run)
    assert a.base_url in text and b.base_url in text and '"resent_to_another_replica": 0' in text
    replicas = next(v for v in _values(run) if isinstance(v, dict) and "replicas" in v)["replicas"]
    assert sorted(r["url"] for r in replicas) == sorted([a.base_url, b.base_url]) and sum(r["calls"] for r in replicas) == 16


def _values(obj):
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _values(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _values(v)


class _Fake:
    """A replica's backend answering from a list of outcomes (an exception to raise, or text)."""

    def __init__(self, url, outcomes):
        self.base_url, self.outcomes, self.calls = url, list(outcomes), 0

    async def _complete(self, request):
        from judgelab.models.base import Choice, JudgeResponse

        self.calls += 1
        outcome = self.outcomes.pop(0) if self.outcomes else "4"
        if isinstance(outcome, Exception):
            raise outcome
        return JudgeResponse([Choice(outcome, None, "stop")])


def test_a_refusing_replica_is_taken_out_its_call_resent_and_tried_again_later(monkeypatch):
    import asyncio

    from judgelab.errors import ServerError, Unreachable
    from judgelab.models.backends import fleet as fleet_module
    from judgelab.models.base import JudgeRequest, Sampling

    monkeypatch.setattr(fleet_module, "PAUSE_S", 0.05)
    fleet = Fleet("m", ["http://a/v1", "http://b/v1"], OpenAIBackend)
    a = _Fake("http://a/v1", [Unreachable("refused")])
    b = _Fake("http://b/v1", [])
    fleet.replicas[0].backend, fleet.replicas[1].backend = a, b
    for r in fleet.replicas:
        r.pause = 0.05
    request = JudgeRequest((("user", "Rate it."),), Sampling())
    assert asyncio.run(fleet.complete(request)).choices[0].text == "4"  # a refused, re-sent to b at once
    assert (a.calls, b.calls, fleet.resent, fleet.replicas[0].taken_out) == (1, 1, 1, 1)
    asyncio.run(fleet.complete(request))
    assert a.calls == 1 and b.calls == 2  # a is out of service
    time.sleep(0.06)
    asyncio.run(fleet.complete(request))
    assert a.calls == 2  # back after its pause: the next call probes it

    b.outcomes = [ServerError("500")] * 3  # three server errors in a row take b out too
    for _ in range(3):
        fleet.replicas[0].out_until = time.monotonic() + 60  # only b in service
        with pytest.raises(ServerError):
            asyncio.run(fleet.complete(request))
    assert fleet.replicas[1].taken_out == 1
    with pytest.raises(Unreachable, match="every replica"):
        asyncio.run(fleet.complete(request))


def test_run_json_counts_answered_calls_and_failed_attempts_apart(tmp_path, stub_factory):
    """A replica that only answers HTTP 500 answered no call: its attempts are failed attempts, per replica and judge."""
    import json

    from judgelab.rate import rate_items

    items = load_items(write_items(tmp_path / "items.jsonl", 4))  # 16 calls
    good, bad = stub_factory(), stub_factory(server_errors=1.0, rate_limited=0.0)
    spec = RunSpec(judge=JudgeSpec(spec=f"openai:m@{good.base_url},{bad.base_url}",
                                   options=JudgeOptions(concurrency=1, backoff_base=0.01)), samples=1)
    result = rate_items(items, [spec], tmp_path / "o", progress=False)
    stats = result.runs[0].stats
    assert stats.statuses == {"ok": 16} and stats.calls_made == 16 and not bad.answered()
    run = json.loads((tmp_path / "o" / "run.json").read_text())["runs"][0]
    replicas = {r["url"]: r for r in run["replicas"]}
    assert replicas[bad.base_url]["calls"] == 0 and replicas[good.base_url]["calls"] == 16  # answered calls only
    assert replicas[bad.base_url]["failed_attempts"] >= 3 and replicas[bad.base_url]["taken_out"] >= 1
    assert replicas[good.base_url]["failed_attempts"] == 0
    # every HTTP 500 reached the retry gate (none was re-sent inside the fleet): the judge's count is the replica's
    assert run["resent_to_another_replica"] == 0
    assert run["calls_made"] == 16 and run["failed_attempts"] == replicas[bad.base_url]["failed_attempts"]
    assert run["retries"].get("server_error") == run["failed_attempts"]
