"""Ledger keys made from a frame per (n, sampling, extra): the same key as the request described whole,
and never a key a request does not match."""
import asyncio
import dataclasses

import pytest

from judgelab.digest import keyed_json
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.models.cache import CachedJudge
from judgelab.store import Store

MESSAGES = [(("user", "Rate it."),), (("system", "Be brief. é 😀 \"q\" \u2028"), ("user", "Rate\nit."), ("assistant", "4"),
                                      ("user", "Again?"))]
CASES = [
    (Sampling(), 1, {}),
    (Sampling(temperature=0.7, seed=11), 3, {"top_logprobs": 5, "score_cue": None, "slot": "n3", "attempt": 0}),
    (Sampling(temperature=0.0), 1, {"slot": 1, "attempt": 2}),
    (Sampling(temperature=-0.0), 1, {"slot": 1, "attempt": 2}),  # equal to the one above, not the same text
    (Sampling(), 1, {"slot": True}),  # equal to slot=1, not the same text
    (Sampling(), 1, {"slot": 1.0}),
    (Sampling(), 2, {"answer_format": AnswerFormat("rating", 1, 5).to_json(), "slot": 0}),
    (Sampling(), 1, {"purpose": "perturb"}),
]


def _whole(cached, request, extra):
    return keyed_json(cached.describe(request, **extra))


def test_every_key_is_that_of_the_request_described_whole():
    cached = CachedJudge(ScriptedTestJudge(), Store(":memory:"))
    for _ in range(2):  # the second time from the kept frames
        for sampling, n, extra in CASES:
            for messages in MESSAGES:
                request = JudgeRequest(messages=messages, sampling=sampling, n=n)
                assert cached.key(request, **extra) == _whole(cached, request, extra)


class _Identity(ScriptedTestJudge):
    def identity(self):
        return {**super().identity(), "note": {"messages": []}}  # the text the messages are found by, twice


def test_a_judge_whose_identity_holds_the_messages_text_is_keyed_whole():
    cached = CachedJudge(_Identity(), Store(":memory:"))
    request = JudgeRequest(messages=MESSAGES[1], sampling=Sampling())
    assert cached.key(request, slot=0) == cached.key(request, slot=0) == _whole(cached, request, {"slot": 0})


def test_the_judge_sampling_and_extra_are_encoded_once_per_frame(monkeypatch):
    cached = CachedJudge(ScriptedTestJudge(), Store(":memory:"))
    described = []
    describe = cached.describe
    monkeypatch.setattr(cached, "describe", lambda request, **extra: described.append(1) or describe(request, **extra))
    sampling = Sampling(seed=3)
    keys = {cached.key(JudgeRequest(messages=(("user", f"Rate item {i}."),), sampling=sampling), slot=0, attempt=0)
            for i in range(50)}
    assert len(keys) == 50 and len(described) == 1


@pytest.mark.parametrize("change", [{"messages": (("user", "Rate another."),)}, {"n": 2},
                                    {"sampling": Sampling(temperature=0.3)}])
def test_a_request_changed_after_keying_is_keyed_again(change):
    judge = ScriptedTestJudge({"default": "4"})
    cached = CachedJudge(judge, Store(":memory:"))
    request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
    keyed = dataclasses.replace(request, key=cached.key(request, slot=0)[0])
    stale = dataclasses.replace(keyed, **change)  # carries the first request's key
    _, key = asyncio.run(cached.complete(stale, slot=0))
    assert key == judge.calls[0].key == _whole(cached, stale, {"slot": 0})[0] != keyed.key
    _, again = asyncio.run(cached.complete(keyed, slot=0))
    assert again == keyed.key and judge.calls[1] is keyed  # a request with its own key is sent as it is
