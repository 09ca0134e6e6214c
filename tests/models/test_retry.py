"""The one retry gate (judgelab.models.retry): backoff, Retry-After as a floor, rate limits that do
not use up the retry budget, AIMD concurrency, and giving up as a per-call failure."""
import asyncio
import random

import pytest

from judgelab.errors import CallTimeout, RateLimited, ServerError, Unreachable
from judgelab.models.retry import SAME_FAILURES_TO_STOP, AdaptiveLimit, CallFailed, CallGate, EndpointRejects, RetryPolicy


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
    limit.overloaded()
    limit.overloaded()  # the same burst: one decrease
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


# -- a permanent error: the same answer twice in a row is not retried; the same for every call ends the run ------
def _rejected(body: str = "1 validation error: response_format.type") -> ServerError:
    """An HTTP 500 that names its reason (the backend gives it a fingerprint: status and body)."""
    return ServerError(f"server error: HTTP 500 {body}", fingerprint=(500, body))


def test_the_same_server_answer_twice_in_a_row_is_not_retried_further():
    attempt, calls = _flaky([_rejected()] * 50)
    gate = CallGate(RetryPolicy(max_retries=10), ceiling=4, sleep=_no_wait)
    with pytest.raises(CallFailed, match=r"HTTP 500 1 validation error: response_format.type \(the same answer twice "
                                         r"in a row: not retried\); gave up after 2 attempts"):
        asyncio.run(gate.call(attempt))
    assert len(calls) == 2 and gate.counts == {"server_error": 1, "gave_up": 1}


def test_different_answers_or_answers_without_a_fingerprint_keep_the_whole_budget():
    attempt, calls = _flaky([_rejected(f"worker {i} crashed") for i in range(50)])
    gate = CallGate(RetryPolicy(max_retries=4), ceiling=4, sleep=_no_wait)
    with pytest.raises(CallFailed, match="gave up after 5 attempts"):
        asyncio.run(gate.call(attempt))
    # 503 (overloaded), 502/504 and timeouts carry no fingerprint: retried with backoff, as before
    attempt, calls = _flaky([ServerError("server error: HTTP 503 overloaded")] * 3 + [CallTimeout("no answer")] * 3)
    gate = CallGate(RetryPolicy(max_retries=10), ceiling=4, sleep=_no_wait)
    assert asyncio.run(gate.call(attempt)) == "answer" and len(calls) == 7


def test_a_flaky_server_that_answers_other_calls_in_between_keeps_the_retries():
    """Two equal HTTP 500s for one call, but the server answered another call between them: maybe
    momentary (a flaky server's fixed error page), so the call keeps its retries and gets its answer."""
    gate = CallGate(RetryPolicy(max_retries=10), ceiling=4)

    async def ok():
        return "other"

    async def answer_another_call(seconds):
        assert await gate.call(ok) == "other"

    gate.sleep = answer_another_call
    attempt, calls = _flaky([_rejected("internal error")] * 3)
    assert asyncio.run(gate.call(attempt)) == "answer" and len(calls) == 4 and gate.answered == 4


def test_calls_that_all_fail_the_same_permanent_way_end_the_run():
    gate = CallGate(RetryPolicy(max_retries=10), ceiling=4, sleep=_no_wait)
    made = []

    async def rejected():
        made.append(1)
        raise _rejected()

    async def run():
        for _ in range(SAME_FAILURES_TO_STOP - 1):
            with pytest.raises(CallFailed):
                await gate.call(rejected)
        with pytest.raises(EndpointRejects, match=r"^server error: HTTP 500 1 validation error: response_format.type — "
                                                  r"the endpoint gave this same answer to 3 requests in a row"):
            await gate.call(rejected)

    asyncio.run(run())
    assert len(made) == 2 * SAME_FAILURES_TO_STOP


def test_an_answer_between_calls_that_fail_for_good_keeps_the_run_going():
    gate = CallGate(RetryPolicy(max_retries=10), ceiling=4, sleep=_no_wait)

    async def rejected():
        raise _rejected()

    async def ok():
        return "answer"

    async def run():
        for _ in range(3):
            for _ in range(SAME_FAILURES_TO_STOP - 1):
                with pytest.raises(CallFailed):
                    await gate.call(rejected)
            assert await gate.call(ok) == "answer"

    asyncio.run(run())
