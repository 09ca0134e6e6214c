"""A fleet of replicas serving one judge: ``--judge openai:MODEL@URL1,URL2,…`` is one rater.

Each replica is an :class:`~judgelab.models.backends.openai_compatible.OpenAIBackend` of the
same model (vLLM data-parallel servers, llama.cpp, TGI or SGLang servers behind no load balancer).
A call goes to the least-loaded replica that is in service (fewest calls in flight; ties by
fewest calls so far). A replica that refuses connections is taken out at once, and one that
fails three times in a row (broken connections, timeouts, server errors) too; the call is
re-sent to another replica at once, without using up a retry. A replica out of service is tried
again after a pause (2 s, doubling up to 60 s): its next call is the probe. When every replica is
out the call raises :class:`~judgelab.errors.Unreachable` for the gate
(:class:`~judgelab.models.retry.CallGate`) to handle as for a single endpoint.

The fleet's identity — part of every ledger key and of the run's identity — is the model and the
request style with ``"endpoint": "fleet"``: it does not depend on which replicas serve it or in
which order they are named, so a run can grow, shrink or reorder its fleet and keep its answers.
(A single endpoint keeps its URL in its identity, as before.)
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from judgelab.errors import (
    CallTimeout,
    ConnectionFailed,
    ServerError,
    TransientError,
    Unreachable,
)
from judgelab.models.base import Backend, Capabilities, JudgeRequest, JudgeResponse

if TYPE_CHECKING:
    from judgelab.models.backends.openai_compatible import OpenAIBackend

__all__ = ["Fleet", "Replica"]

#: Consecutive failures that take a replica out of service; first pause and longest pause (s).
FAILURES_OUT = 3
PAUSE_S = 2.0
PAUSE_MAX_S = 60.0


class Replica:
    """One replica's backend and its counters: ``calls`` it answered, ``failed_attempts`` that brought
    no answer (a refused or broken connection, a timeout, a server error), ``attempts`` sent (both,
    and those in flight; what routing balances)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.url: str = backend.base_url
        self.in_flight = 0
        self.attempts = 0
        self.calls = 0
        self.failed_attempts = 0
        self.failures = 0  # in a row
        self.out_until = 0.0
        self.pause = PAUSE_S
        self.taken_out = 0

    def in_service(self, now: float) -> bool:
        return now >= self.out_until

    def take_out(self, now: float) -> None:
        self.out_until = now + self.pause
        self.pause = min(self.pause * 2, PAUSE_MAX_S)
        self.taken_out += 1
        self.failures = 0


class Fleet(Backend):
    """Several OpenAI-compatible endpoints of one model as one judge.

    Args:
        model: the model every replica serves.
        replicas: the base URLs (two or more, each once).
        replica: makes one replica from the model, ``base_url=`` and the options
            (:class:`~judgelab.models.backends.openai_compatible.OpenAIBackend`; the ``openai`` kind
            passes it, so this module does not import the backend it serves).
        **options: the options of each replica's :class:`~judgelab.models.backends.openai_compatible.OpenAIBackend`
            (``concurrency`` is per replica; the fleet's is their sum).

    Example:
        >>> from judgelab.models.backends.openai_compatible import OpenAIBackend
        >>> fleet = Fleet("m", ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], OpenAIBackend)
        >>> fleet.identity() == Fleet("m", ["http://127.0.0.1:10/v1", "http://127.0.0.1:9/v1"], OpenAIBackend).identity()
        True
        >>> fleet.capabilities.concurrency
        32
    """

    kind = "openai"

    def __init__(self, model: str, replicas: list[str], replica: Callable[..., OpenAIBackend], **options: Any) -> None:
        from judgelab.errors import JudgelabError

        urls = [u.strip() for u in replicas if u.strip()]
        if len(urls) < 2:
            raise JudgelabError("a fleet names two or more replicas: openai:MODEL@URL1,URL2")
        if len(set(urls)) != len(urls):
            raise JudgelabError(f"a replica is named twice in the fleet: {', '.join(sorted({u for u in urls if urls.count(u) > 1}))}")
        options.pop("base_url", None)
        self.replicas = [Replica(replica(model, base_url=url, **options)) for url in urls]
        first = self.replicas[0].backend
        self.model_id = model
        self.style = first.style
        self.retry_policy = first.retry_policy
        caps = first.capabilities
        self.capabilities = Capabilities(max_n=caps.max_n, top_logprobs=caps.top_logprobs, seed=caps.seed,
                                         score_mode=caps.score_mode, concurrency=caps.concurrency * len(urls),
                                         constrain=caps.constrain)
        self.resent = 0
        #: One record of what the endpoints showed for the whole fleet (replicas of one model and server).
        self.learned = first.caps
        for each in self.replicas:
            each.backend.share_capabilities(first.caps)

    def identity(self) -> dict[str, Any]:
        """Kind, model and request style, with ``"endpoint": "fleet"`` (not the replica list)."""
        return {"kind": self.kind, "model": self.model_id, "style": self.style, "endpoint": "fleet"}

    @property
    def notes(self) -> tuple[str, ...]:
        notes: list[str] = []
        for r in self.replicas:
            notes += [n for n in r.backend.notes if n not in notes]
        out = [r for r in self.replicas if r.taken_out]
        if out:
            notes.append("replicas taken out of service (refused or failing): "
                         + ", ".join(f"{r.url} ×{r.taken_out}" for r in out)
                         + f"; {self.resent} call(s) re-sent to another replica")
        return tuple(notes)

    def run_facts(self) -> dict[str, Any]:
        """The replicas, the calls each answered, its failed attempts and how often it was taken out (run.json)."""
        facts = dict(self.replicas[0].backend.run_facts())
        facts["replicas"] = [{"url": r.url, "calls": r.calls, "failed_attempts": r.failed_attempts,
                              "taken_out": r.taken_out} for r in self.replicas]
        facts["resent_to_another_replica"] = self.resent
        return facts

    def batch_client(self) -> Any:
        return self.replicas[0].backend.batch_client()

    def batch_endpoints(self) -> list[tuple[str, Any]]:
        """Every replica's URL and client: a batch is collected at the replica that holds it, whatever the order."""
        return [(r.url, r.backend.batch_client()) for r in self.replicas]

    def batch_request(self, request: JudgeRequest) -> tuple[str, dict[str, Any]]:
        return self.replicas[0].backend.batch_request(request)

    def read_batch_answer(self, body: Any) -> JudgeResponse:
        return self.replicas[0].backend.read_batch_answer(body)

    def pick(self, exclude: set[int] | None = None) -> Replica | None:
        """The least-loaded replica in service (fewest in flight, then fewest attempts), or None."""
        now = time.monotonic()
        ready = [r for r in self.replicas if r.in_service(now) and id(r) not in (exclude or set())]
        if not ready:
            return None
        return min(ready, key=lambda r: (r.in_flight, r.attempts))

    async def _complete(self, request: JudgeRequest) -> JudgeResponse:
        tried: set[int] = set()
        last: TransientError | None = None
        while True:
            replica = self.pick(tried)
            if replica is None:
                if last is not None and not isinstance(last, Unreachable):
                    raise last  # a broken connection on every replica tried: the gate retries later
                soonest = min(self.replicas, key=lambda r: r.out_until)
                raise Unreachable(f"every replica of the fleet is out of service (the first back: {soonest.url})")
            tried.add(id(replica))
            replica.in_flight += 1
            replica.attempts += 1
            try:
                response = await replica.backend._complete(request)
            except Unreachable as exc:
                replica.failed_attempts += 1
                replica.take_out(time.monotonic())  # refused: out at once, the call goes elsewhere
                self.resent += 1
                last = exc
                continue
            except (ConnectionFailed, CallTimeout, ServerError) as exc:
                replica.failed_attempts += 1
                replica.failures += 1
                if replica.failures >= FAILURES_OUT:
                    replica.take_out(time.monotonic())
                if isinstance(exc, ConnectionFailed):  # a broken connection: nothing was answered; re-send
                    self.resent += 1
                    last = exc
                    continue
                now = time.monotonic()
                if any(r is not replica and r.in_service(now) for r in self.replicas):
                    exc.fingerprint = None  # one replica's answer, not the fleet's: never a permanent error
                raise
            except Exception:  # a refused request or a bad answer (a cancelled call is no failed attempt)
                replica.failed_attempts += 1
                raise
            finally:
                replica.in_flight -= 1
            replica.calls += 1
            replica.failures = 0
            replica.pause = PAUSE_S
            return response

    async def aclose(self) -> None:
        for r in self.replicas:
            await r.backend.aclose()
