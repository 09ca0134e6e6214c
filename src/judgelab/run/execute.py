"""Execute: run a plan's jobs — scheduling, ``n`` sampling, refusal regeneration, conversations.

Every call goes through the ledger wrapper (:class:`judgelab.models.cache.CachedJudge`): a call
whose key is stored is never made again, and a new one is made by the wrapper's executor (the
live gate around the backend, :class:`judgelab.models.retry.CallGate`, by default; a provider
batch, an offline batch file or a fleet of replicas are other executors behind the same
wrapper). Retries and concurrency limits are the executor's; what this stage decides is what to
ask next once an answer is in:

* all k samples in one request when the judge offers ``n``; when a server answers fewer, the rest
  one by one from then on (said once);
* a refusal asked again, up to ``max_refusal_retries`` (Chiang & Lee 2023, appendix D.2.1);
* conversation mode: each criterion's turn carries the earlier questions and the judge's answers;
* a call that ran out of its retry budget ends as ``error`` judgments; the run goes on.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from judgelab.models.base import Choice, JudgeResponse
from judgelab.models.cache import CachedJudge
from judgelab.models.retry import CallFailed
from judgelab.run.plan import Calls, Job, Messages, PlannedCall, Requests, RunPlan
from judgelab.run.record import Answer, Recorder, RunStats
from judgelab.status import Status
from judgelab.store import Judgment, prompt_key

__all__ = ["Executor"]

logger = logging.getLogger("judgelab.run")


class Executor:
    """Runs jobs on ``width`` workers, asking through the ledger and recording through the recorder.

    Args:
        ledger: the ledger wrapper every call goes through.
        requests: the run's request builder.
        recorder: turns answers into judgments.
        stats: the run's counters.
        max_refusal_retries: regenerations of a refusal.
    """

    def __init__(self, ledger: CachedJudge, requests: Requests, recorder: Recorder, stats: RunStats,
                 max_refusal_retries: int) -> None:
        self.ledger = ledger
        self.requests = requests
        self.recorder = recorder
        self.stats = stats
        self.max_refusal_retries = max_refusal_retries
        self.n_ignored = False  # the server returned fewer than n answers once: sample one by one
        self._n_said = False
        self._calls: Calls | None = None

    async def run(self, plan: RunPlan, width: int) -> None:
        """Run every job of the plan on ``width`` workers, with the group writer's flusher beside them; each
        job's calls are built when it is taken (:meth:`judgelab.run.plan.Calls.of`, as ``--dry-run`` shows them)."""
        jobs, self._calls = plan.jobs, plan.calls_of
        next_job = iter(jobs).__next__

        async def worker() -> None:
            while True:
                try:
                    job = next_job()
                except StopIteration:
                    return
                await (self._independent(job) if job.criterion is not None else self._conversation(job))

        tasks = [asyncio.create_task(worker()) for _ in range(min(width, max(1, len(jobs))))]
        flusher = asyncio.create_task(self.recorder.writer.flusher())
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            flusher.cancel()

    def warn(self, message: str) -> None:
        """Keep a warning in the run's stats and log it (the command line shows it)."""
        self.stats.warnings.append(message)
        logger.warning(message)

    # -- calls ---------------------------------------------------------------------------------
    async def _call(self, messages: Messages, n: int, slot: int | str, criterion: str, attempt: int = 0,
                    planned: PlannedCall | None = None) -> tuple[JudgeResponse, str]:
        """One call through the ledger (the planned request when there is one)."""
        if planned is not None and planned.exact and planned.request is not None:
            return await self.ledger.complete(planned.request, **planned.extra)
        request, extra = self.requests(messages, n, slot, attempt, criterion=criterion)
        return await self.ledger.complete(request, **extra)

    async def _answer(self, messages: Messages, sample: int, first: tuple[Choice, JudgeResponse, str] | None,
                      criterion: str, planned: PlannedCall | None = None) -> Answer:
        """One sample's final answer, regenerating refusals up to the limit."""
        attempts: list[dict[str, Any]] = []
        attempt = 0
        if first is None:
            response, key = await self._call(messages, 1, sample, criterion, planned=planned)
            choice = response.choices[0]
        else:
            choice, response, key = first
        while True:
            status, parsed = self.recorder.parse(choice)
            attempts.append({"key": key, "text": choice.text, "status": status, "finish_reason": choice.finish_reason,
                             **({"reasoning": choice.reasoning} if choice.reasoning else {})})
            if status != Status.REFUSAL or attempt >= self.max_refusal_retries:
                return Answer(choice, response, tuple(attempts), parsed)
            attempt += 1
            self.stats.refusals_regenerated += 1
            response, key = await self._call(messages, 1, sample, criterion, attempt)
            choice = response.choices[0]

    # -- jobs --------------------------------------------------------------------------------
    def _calls_of(self, job: Job) -> tuple[PlannedCall, ...]:
        assert self._calls is not None
        return self._calls.of(job, keyed=False)  # the ledger keys each call when it is sent

    async def _independent(self, job: Job) -> None:
        item, criterion = job.item, job.criterion
        assert criterion is not None
        calls = self._calls_of(job)
        messages = calls[0].messages
        key = prompt_key(messages)
        firsts: dict[int, tuple[Choice, JudgeResponse, str] | None] = {s: None for s in job.samples}
        planned = {c.samples[0]: c for c in calls if c.n == 1}
        failed: CallFailed | None = None
        first = calls[0]
        learned = self.ledger.backend.learned
        if learned is not None and learned.n_ignored:
            self.n_ignored = True  # learned by an earlier call of this judge: each sample its own call
        if first.n > 1 and not self.n_ignored:
            try:
                response, call_key = await self._call(messages, first.n, f"n{first.n}", criterion, planned=first)  # all k samples
            except CallFailed as exc:
                failed = exc  # the budget is spent for this prompt: every sample of the call is an error
            else:
                if len(response.choices) < first.n and not self._n_said:
                    self.n_ignored = self._n_said = True
                    self.warn(f"the judge answered {len(response.choices)} of n={first.n} samples in one request: "
                              "asking for the other samples one by one from now on (--no-n skips the n request)")
                for s in job.samples:
                    if s < len(response.choices):
                        firsts[s] = (response.choices[s], response, call_key)
        judgments: list[Judgment] = []
        for s in job.samples:
            if failed is None:
                try:
                    answer = await self._answer(messages, s, firsts[s], criterion, planned.get(s))
                except CallFailed as exc:
                    judgments += self.recorder.failed(item, criterion, s, exc, key)
                    continue
                judgments += self.recorder.judgments(item, criterion, s, answer, key)
            else:
                judgments += self.recorder.failed(item, criterion, s, failed, key)
        self.recorder.record(judgments)

    async def _conversation(self, job: Job) -> None:
        item, sample = job.item, job.samples[0]
        history: Messages = ()
        failed: CallFailed | None = None
        for call in self._calls_of(job):
            criterion = call.criterion
            messages = history + (call.messages[-1],)  # the earlier turns as actually answered
            key = prompt_key(messages)
            wanted = criterion in job.record
            if failed is not None:  # a later turn cannot be asked without the earlier answer
                self.recorder.record(self.recorder.failed(item, criterion, sample, failed, key) if wanted else [])
                continue
            try:
                answer = await self._answer(messages, sample, None, criterion, call if call.exact else None)
            except CallFailed as exc:
                failed = exc
                self.recorder.record(self.recorder.failed(item, criterion, sample, exc, key) if wanted else [])
                continue
            self.recorder.record(self.recorder.judgments(item, criterion, sample, answer, key) if wanted else [])
            history = messages + (("assistant", answer.choice.text),)
