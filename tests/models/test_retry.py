"""The one retry gate (judgelab.models.retry): backoff, Retry-After as a floor, rate limits that do
not use up the retry budget, AIMD concurrency, and giving up as a per-call failure."""
import asyncio
import random

import pytest

from judgelab.errors import CallTimeout, RateLimited, ServerError, Unreachable
from judgelab.models.retry import AdaptiveLimit, CallFailed, CallGate, RetryPolicy


def test_backoff_grows_and_retry_after_is_a_floor_not_the_wait():
    policy = RetryPolicy(backoff_base=0.5, backoff_cap=30.0)
    rng = random.Random(0)
    for retry in range(8):
        step = min(30.0, 0.5 * 2**retry)
        waits = [policy.delay(retry, None, rng) for _ in range(200)]
        assert step / 2 <= min(waits) and max(waits) <= step  # equal jitter: at least half the step
    # Retry-After: 0.2 does not shrink the backoff: seven waits span far more than 7 × 0.2 s
    assert sum(policy.delay(r, 0.2, rng) for r in range(7)) > 15
    assert policy.delay(0, 5.0, rng) >= 5.0  # a long Retry-After is respected


async def _no_wait(seconds):
    return None


def _flaky(outcomes):
    """An attempt function that raises the given exceptions in turn, then answers."""
    calls = []

    async def attempt():
        calls.append(1)
        if len(calls) <= len(outcomes):
            raise outcomes[len(calls) - 1]
        return "answer"

    return attempt, calls


def test_rate_limits_do_not_use_up_the_retry_budget():
    attempt, calls = _flaky([RateLimited("HTTP 429")] * 30 + [ServerError("HTTP 500")] * 2)
    gate = CallGate(RetryPolicy(max_retries=2), ceiling=8, sleep=_no_wait)
    assert asyncio.run(gate.call(attempt)) == "answer"
    assert len(calls) == 33 and gate.counts["rate_limited"] == 30 and gate.counts["server_error"] == 2


def test_the_budget_spent_is_a_call_failure_naming_the_cause():
    attempt, calls = _flaky([ServerError("server error: HTTP 500")] * 5)
    gate = CallGate(RetryPolicy(max_retries=3), ceiling=4, sleep=_no_wait)
    with pytest.raises(CallFailed, match="HTTP 500; gave up after 4 attempts"):
        asyncio.run(gate.call(attempt))
    assert gate.counts["gave_up"] == 1


def test_rate_limiting_is_named_as_rate_limiting_when_patience_runs_out():
    attempt, _ = _flaky([RateLimited("HTTP 429 from http://x/v1")] * 1000)
    gate = CallGate(RetryPolicy(rate_limit_patience=0.0), ceiling=4, sleep=_no_wait)
    with pytest.raises(CallFailed, match=r"^rate limited \(HTTP 429"):
        asyncio.run(gate.call(attempt))


def test_timeouts_end_as_a_failure_within_the_budget():
    attempt, calls = _flaky([CallTimeout("no answer within 2 s")] * 100)
    gate = CallGate(RetryPolicy(max_retries=4), ceiling=4, sleep=_no_wait)
    with pytest.raises(CallFailed, match="no answer within 2 s"):
        asyncio.run(gate.call(attempt))
    assert len(calls) == 5


def test_an_endpoint_that_refuses_every_connection_ends_the_run():
    attempt, _ = _flaky([Unreachable("judge endpoint http://x is unreachable")] * 100)
    gate = CallGate(RetryPolicy(max_retries=2), ceiling=4, sleep=_no_wait)
    with pytest.raises(Unreachable):
        asyncio.run(gate.call(attempt))


def test_aimd_halves_on_rate_limits_once_per_interval_and_recovers():
    limit = AdaptiveLimit(16, decrease_interval=60.0)
    limit.rate_limited()
    limit.rate_limited()  # the same burst: one decrease
    assert limit.current == 8
    for _ in range(200):
        limit.succeeded()
    assert limit.current == 16  # back to the ceiling, never above


def test_the_gate_never_has_more_calls_in_flight_than_its_limit():
    peak = 0
    gate = CallGate(RetryPolicy(), ceiling=3, sleep=_no_wait)

    async def attempt():
        nonlocal peak
        peak = max(peak, gate.limit.in_flight)
        await asyncio.sleep(0.001)
        return 1

    async def main():
        return await asyncio.gather(*(gate.call(attempt) for _ in range(40)))

    assert sum(asyncio.run(main())) == 40 and peak == 3
