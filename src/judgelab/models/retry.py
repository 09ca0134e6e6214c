"""Retries and adaptive concurrency: one gate every model call passes, whatever the backend.

A backend makes one attempt per call and says what went wrong by raising a
:class:`~judgelab.errors.TransientError` (rate limited, server error, timeout, connection
failure). :class:`CallGate` is the only place that retries:

* **Backoff.** Exponential with "equal jitter" (half the step fixed, half random), capped at
  ``backoff_cap``; a server's ``Retry-After`` is a floor, never the whole wait, so a server
  that says ``Retry-After: 0.2`` still sees the waits grow.
* **Rate limits are not failures.** A 429 means "slower", so it does not use up
  ``max_retries`` (which counts server errors, timeouts and broken connections); a call keeps
  retrying rate limits until ``rate_limit_patience`` seconds have passed since its first attempt.
* **Adaptive concurrency (AIMD).** At most ``limit`` calls are in flight. A failure that says the
  endpoint has more calls than it can serve — a rate limit (429), an unavailable or overloaded
  server (503, 529), a call that timed out (it waited behind others: a server that answers one
  request at a time queues the rest) — halves the limit (at most once per ``decrease_interval``
  seconds, so one burst is one decrease); each success adds ``1 / limit``, so the limit grows
  back by about one per round of calls, up to the ceiling the run was given. The lowest limit
  reached is kept (run.json's ``capabilities.concurrency``).
* **Giving up.** A call that runs out of its budget raises :class:`CallFailed`: the run records
  that judgment with status ``error`` (asked again by the next run) and carries on; the share of
  failures counts toward ``--max-failure-rate``. An endpoint that refuses connections on every
  attempt is down, not flaky: :class:`~judgelab.errors.Unreachable` ends the run with one line.
* **A permanent error is not retried.** A failure that carries a ``fingerprint`` (the server's
  status and body, for answers such as an HTTP 500 naming a rejected option) and comes back the
  same for the same call, with no call answered in between, will come back every time: the call
  gives up after those two attempts. When :data:`SAME_FAILURES_TO_STOP` calls in a row give up
  that way with the same fingerprint, and no call was answered meanwhile, the endpoint rejects
  every request: :class:`EndpointRejects` ends the run with one line naming the server's reason.
  (A flaky server answered in between is not judged permanent: its failures keep their retries.)

Counts of every retry, by reason, are kept in :attr:`CallGate.counts` (shown in the progress
line and written to run.json), and every attempt that brought no answer in
:attr:`CallGate.failed_attempts` (run.json's ``failed_attempts``, beside the answered ``calls_made``).
"""
from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Awaitable, Callable, Hashable, TypeVar

from judgelab.errors import BackendError, RateLimited, TransientError, Unreachable

__all__ = ["RetryPolicy", "AdaptiveLimit", "CallGate", "CallFailed", "EndpointRejects", "SAME_FAILURES_TO_STOP"]

T = TypeVar("T")

#: Calls in a row that must give up on the same permanent error, with no call answered meanwhile,
#: before the run stops (:class:`EndpointRejects`).
SAME_FAILURES_TO_STOP = 3


@dataclass(frozen=True)
class RetryPolicy:
    """How a call is retried.

    Attributes:
        max_retries: retries after server errors, timeouts and broken connections (0: none).
        backoff_base: the first wait's scale in seconds; each retry doubles it.
        backoff_cap: the longest wait between two attempts.
        rate_limit_patience: seconds a call keeps retrying rate limits (429) after its first attempt.

    Example:
        >>> import random
        >>> policy = RetryPolicy(backoff_base=0.5, backoff_cap=30.0)
        >>> 0.25 <= policy.delay(0, None, random.Random(0)) <= 0.5, policy.delay(0, 3.0, random.Random(0)) >= 3.0
        (True, True)
    """

    max_retries: int = 10
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    rate_limit_patience: float = 600.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (from 0).

        Args:
            retry: how many retries this call has had.
            retry_after: the server's ``Retry-After`` in seconds, if it sent one (a floor).
            rng: the jitter's random generator.

        Returns:
            ``max(retry_after, step / 2 + uniform(0, step / 2))`` with
            ``step = min(backoff_cap, backoff_base * 2 ** retry)``.
        """
        step = min(self.backoff_cap, self.backoff_base * (2 ** min(retry, 30)))
        wait = step / 2 + rng.uniform(0, step / 2)
        return max(wait, retry_after or 0.0)


class AdaptiveLimit:
    """An additive-increase / multiplicative-decrease limit on the calls in flight.

    Args:
        ceiling: the most calls at once (the run's ``--concurrency``).
        decrease_interval: a rate limit within this many seconds of the last decrease does not
            decrease the limit again.

    Example:
        >>> limit = AdaptiveLimit(16)
        >>> limit.overloaded(); limit.current
        8
        >>> for _ in range(9): limit.succeeded()
        >>> limit.current, limit.lowest
        (9, 8)
    """

    def __init__(self, ceiling: int, decrease_interval: float = 1.0) -> None:
        self.ceiling = max(1, int(ceiling))
        self.decrease_interval = decrease_interval
        self._limit = float(self.ceiling)
        #: The lowest limit reached so far.
        self.lowest = self.ceiling
        self._in_flight = 0
        self._last_decrease = -float("inf")
        self._changed = asyncio.Condition() if _has_loop() else None

    @property
    def current(self) -> int:
        """The calls allowed in flight now."""
        return max(1, int(self._limit))

    @property
    def in_flight(self) -> int:
        """The calls in flight now."""
        return self._in_flight

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def acquire(self) -> None:
        """Wait until a call may start, then count it in flight."""
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self._in_flight < self.current)
            self._in_flight += 1

    async def release(self) -> None:
        """A call ended (whatever its outcome): let a waiting call start."""
        changed = self._condition()
        async with changed:
            self._in_flight -= 1
            changed.notify_all()

    def overloaded(self) -> None:
        """Halve the limit (once per ``decrease_interval``): a rate limit, an overloaded server, a timeout."""
        now = time.monotonic()
        if now - self._last_decrease >= self.decrease_interval:
            self._limit = max(1.0, self._limit / 2)
            self._last_decrease = now
            self.lowest = min(self.lowest, self.current)

    def succeeded(self) -> None:
        """Grow the limit by ``1 / limit`` (about one per round of calls), up to the ceiling."""
        self._limit = min(float(self.ceiling), self._limit + 1.0 / self._limit)


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class CallFailed(BackendError):
    """A call that ran out of its retry budget; the run records its judgments as ``error``.

    Attributes:
        reason: what kept failing, in words (``rate limited (HTTP 429)``, ``server error (HTTP 500)`` …).
        attempts: how many attempts were made.
        key: the call's ledger key (set by the ledger wrapper).
        ending: how the call ended, when not "gave up after N attempts" (a call that was never
            tried: ``not run (0 attempts)``).
    """

    def __init__(self, reason: str, attempts: int, key: str = "", ending: str | None = None) -> None:
        super().__init__(f"{reason}; {ending if ending is not None else f'gave up after {attempts} attempts'}")
        self.reason = reason
        self.attempts = attempts
        self.key = key
        self.ending = ending


class EndpointRejects(BackendError):
    """Every call fails with the same permanent error (:data:`SAME_FAILURES_TO_STOP` calls in a row,
    none answered): the run ends with one line, since the calls not yet made would fail alike."""


class CallGate:
    """The one place calls are retried and their concurrency adapted (see the module docstring).

    Args:
        policy: the retry policy.
        ceiling: the most calls in flight.
        rng: the jitter's random generator (seeded in tests).
        sleep: the wait function (``asyncio.sleep``; replaced in tests).

    Attributes:
        counts: retries by reason (``rate_limited``, ``server_error``, ``timeout``, ``connection``)
            and ``gave_up`` (calls that raised :class:`CallFailed`).
        failed_attempts: attempts that raised instead of answering (each retried one, the last of a
            call given up, one refused for good); answered attempts are the calls made.

    Example:
        >>> import asyncio
        >>> from judgelab.errors import ServerError
        >>> tries = []
        >>> async def flaky():
        ...     tries.append(1)
        ...     if len(tries) < 3:
        ...         raise ServerError("HTTP 500")
        ...     return "ok"
        >>> async def no_wait(seconds): pass
        >>> gate = CallGate(RetryPolicy(), ceiling=4, sleep=no_wait)
        >>> asyncio.run(gate.call(flaky)), dict(gate.counts), gate.failed_attempts
        ('ok', {'server_error': 2}, 2)
    """

    def __init__(self, policy: RetryPolicy, ceiling: int, rng: random.Random | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.policy = policy
        self.limit = AdaptiveLimit(ceiling)
        self.rng = rng or random.Random()
        self.sleep = sleep
        self.counts: Counter[str] = Counter()
        self.failed_attempts = 0
        #: Calls answered so far (a failure seen again after one of these may have been momentary).
        self.answered = 0
        #: The permanent error of the last calls that gave up on one: (fingerprint, calls, answered then).
        self._permanent: tuple[Hashable, int, int] | None = None

    def summary(self) -> str:
        """The retries so far in a few words, for the progress line (``""`` when none)."""
        if not self.counts:
            return ""
        parts = [f"{reason.replace('_', ' ')} {n}" for reason, n in sorted(self.counts.items())]
        return "retries: " + ", ".join(parts) + f"; {self.limit.current} in flight at most"

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt()`` until it succeeds or the budget is spent.

        Args:
            attempt: makes one attempt (a backend's ``complete`` for one request).

        Returns:
            What the successful attempt returned.

        Raises:
            CallFailed: the budget is spent (recorded as an ``error`` judgment by the run).
            Unreachable: the endpoint still refuses connections when the budget is spent (it is
                down: the run ends with one line rather than recording every item as an error).
            EndpointRejects: this call and the calls before it failed with the same permanent error.
            Exception: anything that is not a :class:`~judgelab.errors.TransientError` (a refused
                request, a bad answer) at once.
        """
        first = time.monotonic()
        failures = 0  # server errors, timeouts and broken connections
        tries = 0
        seen: tuple[Hashable, int] | None = None  # the last failure's fingerprint, and the calls answered then
        while True:
            await self.limit.acquire()
            tries += 1
            try:
                result = await attempt()
            except TransientError as exc:
                self.failed_attempts += 1
                await self.limit.release()
                if exc.overloaded:
                    self.limit.overloaded()
                if isinstance(exc, RateLimited):
                    if time.monotonic() - first >= self.policy.rate_limit_patience:
                        self.counts["gave_up"] += 1
                        raise CallFailed(f"rate limited ({exc}) for {self.policy.rate_limit_patience:g} s", tries) from None
                else:
                    failures += 1
                    if exc.fingerprint is not None and seen == (exc.fingerprint, self.answered):
                        self.counts["gave_up"] += 1
                        self._gave_up_for_good(exc)
                        raise CallFailed(f"{exc} (the same answer twice in a row: not retried)", tries) from None
                    seen = (exc.fingerprint, self.answered)
                    if failures > self.policy.max_retries:
                        if isinstance(exc, Unreachable):
                            raise
                        self.counts["gave_up"] += 1
                        raise CallFailed(str(exc), tries) from None
                self.counts[exc.reason] += 1
                await self.sleep(self.policy.delay(tries - 1, exc.retry_after, self.rng))
                continue
            except BaseException as exc:
                if isinstance(exc, Exception):  # a refused request, a bad answer (not a cancelled call)
                    self.failed_attempts += 1
                await self.limit.release()
                raise
            self.answered += 1
            self.limit.succeeded()
            await self.limit.release()
            return result

    def _gave_up_for_good(self, exc: TransientError) -> None:
        """Count a call that gave up on a permanent error; raise :class:`EndpointRejects` when the
        last :data:`SAME_FAILURES_TO_STOP` calls gave up on this same one and none was answered since."""
        same = self._permanent
        calls = same[1] + 1 if same is not None and same[0] == exc.fingerprint and same[2] == self.answered else 1
        self._permanent = (exc.fingerprint, calls, self.answered)
        if calls >= SAME_FAILURES_TO_STOP:
            raise EndpointRejects(f"{exc} — the endpoint gave this same answer to {calls} requests in a row (twice "
                                  "each) and answered none, so the run stopped; change the option or model it rejects "
                                  "and run again (finished judgments are kept)")
