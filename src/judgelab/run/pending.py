"""The calls a run would make next: the execute stage, run with an executor that answers nothing.

A batch (an exported file for ``vllm run-batch``, a provider's batch API) needs every request
before any answer is in. :func:`pending_calls` runs the run's own
:class:`~judgelab.run.execute.Executor` over its own plan with an executor that *collects* each
request the ledger lacks and answers none of them, and a recorder that writes nothing: what it
collects is exactly what a live run would send now — the planned first calls, and, once their
answers are in the ledger, the refusal regenerations, the samples asked one by one after a server
ignored ``n`` and the later turns of conversation mode. Rounds of "collect, answer in a batch,
record in the ledger" end when nothing is pending; the ordinary run then answers every call from
the ledger, so its judgments are those of a live run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgelab.models.base import JudgeRequest, JudgeResponse
from judgelab.models.retry import CallFailed
from judgelab.run.execute import Executor
from judgelab.run.record import Recorder, RunStats

if TYPE_CHECKING:
    from judgelab.datasets.items import Item
    from judgelab.run.runner import Runner

__all__ = ["PendingCall", "pending_calls"]


@dataclass(frozen=True)
class PendingCall:
    """One call the ledger lacks, as a live run would send it now.

    Attributes:
        key: the ledger key (the batch line's ``custom_id``).
        request_json: the canonical request description the ledger records with the answer.
        request: the request (its ``key`` set).
    """

    key: str
    request_json: str
    request: JudgeRequest


class _Deferred(CallFailed):
    """Raised by the collecting executor: the call is answered later, by a batch."""


class _NoWriter:
    """A recorder's writer that keeps nothing (the collecting pass records no judgment)."""

    def add(self, calls: Any = (), judgments: Any = (), items: Any = ()) -> None:
        return None

    def flush(self) -> None:
        return None

    async def flusher(self) -> None:
        import asyncio

        await asyncio.Event().wait()


async def pending_calls(runner: "Runner", items: "list[Item]") -> list[PendingCall]:
    """The calls the ledger lacks that a live run of ``runner`` over ``items`` would send now.

    Nothing is called and nothing is written (the run's label is not claimed either).

    Args:
        runner: the run (its plan, request builder and ledger).
        items: the items.

    Returns:
        The calls in the order the run asks them, each once.

    Example:
        >>> import asyncio
        >>> from judgelab.datasets.items import Item
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> from judgelab.run import Runner, RunSpec
        >>> from judgelab.store import Store
        >>> runner = Runner(ScriptedTestJudge(), Store(":memory:"), RunSpec(samples=2))
        >>> len(asyncio.run(pending_calls(runner, [Item("a", "A story.", context="p")])))
        4
    """
    ledger = runner.ledger
    collected: dict[str, PendingCall] = {}

    async def collect(request: JudgeRequest) -> JudgeResponse:
        if request.key not in collected:
            collected[request.key] = PendingCall(request.key, ledger.in_flight[request.key], request)
        raise _Deferred("answered later by a batch", 0)

    plan = runner.plan(items, calls=False)
    stats = RunStats(rater=runner.rater)
    recorder = Recorder(runner.spec, runner.template, runner.rater, runner.meta, _NoWriter(),  # type: ignore[arg-type]
                        stats, lambda done, failed: None)
    executor = Executor(ledger, runner.requests, recorder, stats, runner.spec.max_refusal_retries)
    saved, failed_before, hits_before = ledger.executor, ledger.calls_failed, ledger.cache_hits
    ledger.executor = collect
    try:
        await executor.run(plan, runner.width)
    finally:  # the collecting pass is no part of the run's counts
        ledger.executor, ledger.calls_failed, ledger.cache_hits = saved, failed_before, hits_before
    return list(collected.values())
