"""``--execution batch``: the calls a run lacks answered through a provider's batch API (OpenAI's
``/v1/files`` and ``/v1/batches``, through the official SDK), crash-safe and never paid twice.

Rounds: collect the calls a live run would send now (:func:`~judgelab.run.pending.pending_calls`),
submit them as batches (split by the request and byte limits), poll, download the results and
errors, and record every answer in the call ledger exactly as a live answer; then collect again
(failed, expired and cancelled requests, refusal regenerations, later conversation turns) until
nothing is left. The ordinary run then answers every call from the ledger; a request left without
an answer becomes an ``error`` judgment naming why, and the next run asks it again.

**Attempts.** As for a live call, a request's budget (``max_attempts``, per run) counts only the
answers that came back failed for it in the batches this run submitted. A batch that ended without
running it (expired, cancelled), one the provider did not accept
(:class:`~judgelab.run.provider_api.BatchRefused` on upload or creation, ``failed`` at validation),
a kill, and whatever happened to an earlier run's batch spend none: such a request is asked again —
after an expired or cancelled batch in this run (until ``max_attempts`` of its batches missed it),
after a refusal in the next run (the same batch would be refused again).

Crash safety — every step is written to the store before the next one leaves the process:

1. the batch and its keys (state ``prepared``): a ``prepared`` batch found on resume was never
   created at the provider; it is dropped and its calls are collected again;
2. the uploaded file's id and the endpoint holding it (``uploaded``): on resume the endpoint's
   batches are searched for ``metadata.judgelab_batch`` (a batch created just before the kill) and
   adopted, or created;
3. the provider's batch id (``submitted``) as soon as ``batches.create`` returns: a resumed run
   polls it at the endpoint recorded (a fleet in any order; a batch recorded without its endpoint
   is looked for at every replica, and one no endpoint knows is recorded ``lost`` and its requests
   asked again, with a warning) and downloads its results;
4. the answers into the ledger, then the final state: a kill while downloading downloads again
   (the ledger keeps each key once).

A request is therefore never submitted again while a batch holding it is open, and an answered
request never again.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from judgelab.models.base import JudgeRequest, JudgeResponse
from judgelab.models.retry import CallFailed
from judgelab.run.batchfile import batch_line, new_batch_id, read_output_lines, record_output, split_lines
from judgelab.run.identity import identity_digest
from judgelab.run.pending import pending_calls
from judgelab.run.provider_api import BatchRefused, BatchUnknown, ProviderAPI, provider_reason
from judgelab.store.batches import OPEN_STATES

if TYPE_CHECKING:
    from judgelab.datasets.items import Item
    from judgelab.models.cache import Answerer
    from judgelab.run.runner import Runner

__all__ = ["BatchReport", "run_batches", "unanswered"]

logger = logging.getLogger("judgelab.run")

FINAL = ("completed", "expired", "failed", "cancelled")
#: Why a batch in a provider's final state did not run a request it holds.
NOT_RUN = {"expired": "its batch expired before running it", "cancelled": "its batch was cancelled before running it",
           "completed": "its batch completed without a result for it"}


@dataclass
class BatchReport:
    """What the batch rounds of one run did.

    Attributes:
        batches: batches created by this run; resumed: open batches of the store continued.
        submitted: requests submitted; resubmitted: of those, submitted before without an answer.
        answered: answers recorded in the ledger by this run; failed: answers that came back failed.
        missed: requests a batch ended without running (expired, cancelled, refused, lost).
        refused: batches the provider did not accept; lost: batches no endpoint knows any more.
        gave_up: requests left without an answer (recorded as ``error``; the next run asks them again).
        prompt_tokens, completion_tokens: tokens of the answers recorded.
        left: ledger key → the :class:`~judgelab.models.retry.CallFailed` of each request left
            without an answer (why, and its true count of attempts).
    """

    batches: int = 0
    resumed: int = 0
    submitted: int = 0
    resubmitted: int = 0
    answered: int = 0
    failed: int = 0
    missed: int = 0
    refused: int = 0
    lost: int = 0
    gave_up: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: list[str] = field(default_factory=list)
    left: dict[str, CallFailed] = field(default_factory=dict)

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, int)}


def unanswered(report: BatchReport) -> "Answerer":
    """The executor of the run after its batches: a call they left without an answer is an ``error``
    saying why (the provider's reason, the attempts it had)."""

    async def answer(request: JudgeRequest) -> JudgeResponse:
        failed = report.left.get(request.key)
        if failed is None:  # not collected by the rounds: no batch was asked (never expected)
            raise CallFailed("no batch was submitted for this request", 0, ending="not run (0 attempts); the next "
                             "run asks it again")
        raise CallFailed(failed.reason, failed.attempts, ending=failed.ending)

    return answer


class _Batches:
    def __init__(self, runner: "Runner", on_note: Callable[[str], None], patience: float = 600.0) -> None:
        self.runner = runner
        self.store = runner.store
        self.backend = runner.backend
        self.api = ProviderAPI(runner.backend, on_note, patience)
        self.options = runner.spec.batch
        self.on_note = on_note
        self.report = BatchReport()
        self.progress: dict[str, tuple[int, int, int]] = {}
        #: This run's count, per request, of answers that came back failed (its attempts) and of
        #: batches that ended without running it; the last reason of either.
        self.failures: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self.why: dict[str, str] = {}
        #: Requests of batches the provider refused (not asked again in this run), with the reason.
        self.refused: dict[str, str] = {}
        #: The batches this run submitted: only their outcomes spend its budgets (an earlier run's
        #: batch, resumed, spends none: whatever happened to it, its requests are asked again).
        self.own: set[str] = set()

    def _warn(self, text: str) -> None:
        """A warning of the batch rounds: kept in the report (the run's warnings) and shown."""
        self.report.notes.append(text)
        logger.warning("%s", text)

    # -- submit ------------------------------------------------------------------------------
    async def submit(self, calls: list[Any], lines: list[str], url: str, run: str, rater: str) -> str:
        batch = new_batch_id()
        self.own.add(batch)
        self.store.add_batch(batch, "openai", run, rater, [(c.key, c.request_json) for c in calls],
                             endpoint=self.api.home, detail={"url": url, "requests": len(calls)})
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            endpoint, file = await self.api.upload("a file upload", lambda c: c.files.create(
                file=(f"{batch}.jsonl", data, "application/jsonl"), purpose="batch"))
            self.store.update_batch(batch, state="uploaded", provider_file=file.id, endpoint=endpoint)
            await self._create(batch, endpoint, file.id, url)
        except BatchRefused as exc:
            self._refused(batch, str(exc))
        return batch

    async def _create(self, batch: str, endpoint: str, file_id: str, url: str) -> None:
        created = await self.api.submit(endpoint, "a batch creation", lambda c: c.batches.create(
            input_file_id=file_id, endpoint=url, completion_window=self.options.window,
            metadata={"judgelab_batch": batch}))
        self.store.update_batch(batch, state="submitted", provider_batch=created.id)  # before anything else
        self.report.batches += 1

    def _refused(self, batch: str, why: str) -> None:
        """A batch the provider did not accept: none of its requests ran (none spent an attempt)."""
        record = self.store.batch(batch)
        assert record is not None
        keys = list(self.store.batch_requests(batch))
        self.store.set_request_states(batch, [(k, "missed") for k in keys])
        self.store.update_batch(batch, state="refused", detail={**record.detail, "reason": why})
        self.report.refused += 1
        self.report.missed += len(keys)
        self.why.update((k, why) for k in keys)
        if batch in self.own:
            self.refused.update((k, why) for k in keys)

    async def _adopt(self, batch: str, endpoint: str | None, file_id: str, url: str) -> bool:
        """A batch whose file was uploaded: find the provider's batch made for it (killed just after
        creating it), or create it now; ``False`` when there is nothing to wait for."""
        for where in [endpoint] if endpoint else self.api.endpoints:
            page = await self.api.submit(where, "the batch list", lambda c: c.batches.list(limit=100))
            async for found in page:
                if (found.metadata or {}).get("judgelab_batch") == batch:
                    self.store.update_batch(batch, state="submitted", provider_batch=found.id, endpoint=where)
                    return True
        if not endpoint:  # recorded without the endpoint holding its file: nothing was made from it
            self.store.drop_batch(batch)
            return False
        try:
            await self._create(batch, endpoint, file_id, url)
        except BatchRefused as exc:
            self._refused(batch, str(exc))
            return False
        return True

    # -- poll and record ------------------------------------------------------------------------
    async def _locate(self, batch: str, endpoint: str | None, provider_id: str) -> tuple[str, Any] | None:
        """``(endpoint, status)`` of a submitted batch: at the endpoint recorded, else at each of the judge's."""
        tried = []
        for where in self.api.candidates(endpoint):
            try:
                state = await self.api.wait(where, f"batch {provider_id}",
                                            lambda c: c.batches.retrieve(provider_id))
            except BatchUnknown:
                tried.append(where)
                continue
            if where != endpoint:
                self.store.update_batch(batch, endpoint=where)
            return where, state
        record = self.store.batch(batch)
        assert record is not None
        keys = list(self.store.batch_requests(batch))
        why = f"its batch {provider_id} is known at none of {', '.join(tried)}"
        self.store.set_request_states(batch, [(k, "missed") for k in keys])
        self.store.update_batch(batch, state="lost", detail={**record.detail, "tried": tried})
        self.report.lost += 1
        self.report.missed += len(keys)
        self.why.update((k, why) for k in keys)
        if batch in self.own:
            self.misses.update(keys)
        self._warn(f"batch {batch} (provider batch {provider_id}) is known at none of {', '.join(tried)}: "
                                 f"recorded as lost; its {len(keys)} request(s) were asked again (paid twice if it ran)")
        return None

    async def finish(self, batch: str) -> None:
        record = self.store.batch(batch)
        assert record is not None
        url = str(record.detail.get("url", "/v1/chat/completions"))
        if record.state == "uploaded":
            assert record.provider_file is not None
            if not await self._adopt(batch, record.endpoint, record.provider_file, url):
                return
            record = self.store.batch(batch)
            assert record is not None
        provider_id = str(record.provider_batch)
        found = await self._locate(batch, record.endpoint, provider_id)
        if found is None:
            return
        endpoint, state = found
        while True:
            self._note(batch, state)
            if state.status in FINAL:
                break
            await asyncio.sleep(self.options.poll_seconds)
            state = await self.api.wait(endpoint, "a batch status", lambda c: c.batches.retrieve(provider_id))
        lines = []
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                content = await self.api.wait(endpoint, "a result download", lambda c: c.files.content(file_id))
                lines += read_output_lines(content.text, f"batch {provider_id} file {file_id}")
        self._record(batch, endpoint, state, lines)

    def _record(self, batch: str, endpoint: str, state: Any, lines: list[Any]) -> None:
        """Answers into the ledger; per request: answered, failed (an attempt) or missed (not run)."""
        record = self.store.batch(batch)
        assert record is not None
        requests = {k: q for k, (q, _) in self.store.batch_requests(batch).items()}
        known = self.store.call_keys() & set(requests)
        ran = [line for line in lines if line.custom_id in requests and not line.missed]
        answers, failures = record_output(self.store, ran, requests, self.backend.read_batch_answer)
        said = {line.custom_id: line.error for line in lines if line.missed}
        refused = state.status == "failed"
        reason = provider_reason(state) if refused else ""
        missed = {k: (f"the batch API at {endpoint} refused its batch: {reason}" if refused else
                      said.get(k) or NOT_RUN.get(state.status, f"its batch ended {state.status}"))
                  for k in requests if k not in answers and k not in failures}
        self.store.set_request_states(batch, [(k, "answered" if k in answers else "failed" if k in failures else "missed")
                                              for k in requests])
        counts = {"total": len(requests), "answered": len(answers), "failed": len(failures), "missed": len(missed)}
        detail = {**record.detail, "counts": counts, "status": state.status, **({"reason": reason} if refused else {})}
        self.store.update_batch(batch, state="done" if state.status == "completed" else state.status, detail=detail)
        for key, response in answers.items():
            if key not in known:
                self.report.answered += 1
                self.report.prompt_tokens += response.prompt_tokens
                self.report.completion_tokens += response.completion_tokens
        self.why.update(failures)
        self.why.update(missed)
        if batch in self.own:
            self.failures.update(list(failures))
            if refused:
                self.refused.update(missed)
            else:
                self.misses.update(list(missed))
        self.report.refused += refused
        self.report.failed += len(failures)
        self.report.missed += len(missed)

    def _note(self, batch: str, state: Any) -> None:
        counts = state.request_counts
        total, done, failed = (counts.total, counts.completed, counts.failed) if counts else (0, 0, 0)
        self.progress[batch] = (total, done, failed)
        record = self.store.batch(batch)
        if record is not None and record.detail.get("progress") != [total, done, failed]:  # what a watcher reads
            self.store.update_batch(batch, detail={**record.detail, "progress": [total, done, failed]})
        total_all = sum(t for t, _, _ in self.progress.values())
        done_all = sum(d + f for _, d, f in self.progress.values())
        failed_all = sum(f for _, _, f in self.progress.values())
        elapsed = max(0.0, time.time() - float(state.created_at or time.time()))
        eta = ""
        if 0 < done + failed < total and elapsed > 0:
            eta = f", ETA {elapsed / (done + failed) * (total - done - failed):.0f} s"
        self.on_note(f"batches: {done_all}/{total_all} done, {failed_all} failed; {state.id} {state.status}{eta}")

    # -- the rounds ------------------------------------------------------------------------------
    def _left(self, key: str) -> CallFailed | None:
        """Why a request is not asked again in this run (``None``: it is)."""
        attempts, most = self.failures[key], self.options.max_attempts
        if key in self.refused:
            return CallFailed(self.refused[key], attempts, ending=f"not run ({attempts} failed attempts before); "
                              "the next run asks it again")
        if attempts >= most:
            return CallFailed(f"the batch API answered it with an error each time (last: {self.why[key]})", attempts)
        if self.misses[key] >= most:
            return CallFailed(f"{self.misses[key]} batches ended without running it (last: {self.why[key]})", attempts,
                              ending=f"not run ({attempts} failed attempts); the next run asks it again")
        return None

    async def run(self, items: "list[Item]") -> BatchReport:
        runner, store = self.runner, self.store
        rater = runner.claim()
        run = identity_digest(runner.identity)
        mine = [b for b in store.batches(kind="openai", states=OPEN_STATES) if b.run == run or b.endpoint in self.api.clients]
        for record in mine:
            if record.state == "prepared":
                store.drop_batch(record.id)  # never created at the provider: its calls are collected again
        resumed = [b.id for b in mine if b.state != "prepared"]
        self.report.resumed = len(resumed)
        await asyncio.gather(*(self.finish(b) for b in resumed))
        max_bytes = int(self.options.max_mb * 1024 * 1024)
        while True:
            calls = await pending_calls(runner, items)
            self.report.left = {c.key: why for c in calls if (why := self._left(c.key)) is not None}
            todo = [c for c in calls if c.key not in self.report.left]
            if not todo:
                break
            submissions = store.submissions([c.key for c in todo])
            by_url: dict[str, list[tuple[Any, str]]] = {}
            for call in todo:
                url = self.backend.batch_request(call.request)[0]
                by_url.setdefault(url, []).append((call, batch_line(self.backend, call)))
            batches = []
            for url, pairs in by_url.items():
                start = 0
                for chunk in split_lines([line for _, line in pairs], self.options.max_requests, max_bytes):
                    chosen = [c for c, _ in pairs[start:start + len(chunk)]]
                    start += len(chunk)
                    batches.append(await self.submit(chosen, chunk, url, run, rater))
            self.report.submitted += len(todo)
            self.report.resubmitted += sum(1 for c in todo if submissions[c.key])
            await asyncio.gather(*(self.finish(b) for b in batches))
        self._summarise()
        return self.report

    def _summarise(self) -> None:
        left, most = self.report.left, self.options.max_attempts
        self.report.gave_up = len(left)
        refused = [k for k in left if k in self.refused]
        failing = [k for k in left if k not in self.refused and self.failures[k] >= most]
        missed = len(left) - len(refused) - len(failing)
        end = "recorded as error, asked again by the next run"
        if refused:
            self._warn(f"{len(refused)} request(s) were not run: {self.refused[refused[0]]}; {end} (a batch's size "
                       "is set by --batch-max-requests and --batch-max-mb)")
        if failing:
            self._warn(f"{len(failing)} request(s) were answered with an error in each of their {most} "
                                     f"batch attempts (--batch-max-attempts): {end}")
        if missed:
            self._warn(f"{missed} request(s) were not run by {most} batches (expired or cancelled): {end}")


async def run_batches(runner: "Runner", items: "list[Item]", on_note: Callable[[str], None] | None = None,
                      patience: float = 600.0) -> BatchReport:
    """Answer every call a run of ``runner`` over ``items`` lacks through the provider's batch API.

    Args:
        runner: the run (its judge must offer a batch API: ``openai:MODEL``; ``runner.spec.batch`` its limits).
        items: the items.
        on_note: shown the progress line (the provider's counters, ETA).
        patience: seconds a provider that goes away while a batch runs is tried again before the run ends in one line.

    Returns:
        :class:`BatchReport`; the answers are in the store's ledger, and ``left`` says why any request has none
        (:func:`unanswered` makes the run's executor from it).

    Raises:
        JudgelabError: a judge without a batch API, an endpoint that is down when submitting, a provider refusing
            the key or the endpoint, an API gone for ``patience`` while a batch runs.
    """
    note = on_note or (lambda text: logger.info("%s", text))
    return await _Batches(runner, note, patience).run(items)
