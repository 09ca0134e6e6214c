"""``--execution batch``: the calls a run lacks answered through a provider's batch API (OpenAI's
``/v1/files`` and ``/v1/batches``, through the official SDK), crash-safe and never paid twice.

Rounds: collect the calls a live run would send now (:func:`~judgelab.run.pending.pending_calls`),
submit them as batches (split by the request and byte limits), poll, download the results and
errors, and record every answer in the call ledger exactly as a live answer; then collect again
(failed, expired and cancelled requests, refusal regenerations, later conversation turns) until
nothing is left or only requests that used up ``max_attempts`` submissions remain. The ordinary
run then answers every call from the ledger (requests that never got an answer become ``error``
judgments, asked again by the next run).

Crash safety — every step is written to the store before the next one leaves the process:

1. the batch and its keys (state ``prepared``): a ``prepared`` batch found on resume was never
   created at the provider; it is dropped and its calls are collected again;
2. the uploaded file's id (``uploaded``): on resume the provider's batches are searched for
   ``metadata.judgelab_batch`` (a batch created just before the kill) and adopted, or created;
3. the provider's batch id (``submitted``) as soon as ``batches.create`` returns: a resumed run
   polls it and downloads its results;
4. the answers into the ledger, then the final state: a kill while downloading downloads again
   (the ledger keeps each key once).

A request is therefore never submitted again while a batch holding it is open, and an answered
request never again.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from judgelab.errors import JudgelabError
from judgelab.models.base import JudgeRequest, JudgeResponse
from judgelab.models.retry import CallFailed
from judgelab.run.batchfile import batch_line, new_batch_id, read_output_lines, record_output, split_lines
from judgelab.run.identity import identity_digest
from judgelab.run.pending import pending_calls
from judgelab.store.batches import OPEN_STATES

if TYPE_CHECKING:
    from pathlib import Path

    from judgelab.datasets.items import Item
    from judgelab.run.runner import Runner

__all__ = ["BatchReport", "run_batches", "unanswered", "cancel_batches"]

logger = logging.getLogger("judgelab.run")

FINAL = ("completed", "expired", "failed", "cancelled")


@dataclass
class BatchReport:
    """What the batch rounds of one run did.

    Attributes:
        batches: batches created by this run; resumed: open batches of the store continued.
        submitted: requests submitted; resubmitted: of those, submitted before (failed, expired, cancelled).
        answered: answers recorded in the ledger by this run; failed: requests a batch reported failed.
        gave_up: requests left without an answer after ``max_attempts`` submissions.
        prompt_tokens, completion_tokens: tokens of the answers recorded.
    """

    batches: int = 0
    resumed: int = 0
    submitted: int = 0
    resubmitted: int = 0
    answered: int = 0
    failed: int = 0
    gave_up: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, int)}


def _bind(method: Callable[[str], Awaitable[Any]], argument: str) -> Callable[[], Awaitable[Any]]:
    return lambda: method(argument)


async def unanswered(request: JudgeRequest) -> JudgeResponse:
    """The executor of the run after its batches: a call the batches could not answer is an ``error``."""
    raise CallFailed("no answer from the batch API (failed, expired or cancelled each time it was submitted)", 0)


class _Batches:
    def __init__(self, runner: "Runner", on_note: Callable[[str], None], patience: float = 600.0) -> None:
        self.runner = runner
        self.store = runner.store
        self.backend = runner.backend
        self.client = runner.backend.batch_client()
        self.options = runner.spec.batch
        self.endpoint = str(runner.backend.identity().get("base_url", ""))
        self.on_note = on_note
        self.patience = patience
        self.report = BatchReport()
        self.progress: dict[str, tuple[int, int, int]] = {}

    # -- the provider, with patience for a restarting server --------------------------------------
    async def _api(self, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        import openai

        start, wait = time.monotonic(), 0.25
        while True:
            try:
                return await call()
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                if time.monotonic() - start > self.patience:
                    raise JudgelabError(f"the batch API at {self.endpoint} did not answer {what} for "
                                        f"{self.patience:.0f} s ({type(exc).__name__}); run the same command again "
                                        "to continue the batches recorded in the store") from None
                self.on_note(f"batch API: {what} failed ({type(exc).__name__}); trying again")
                await asyncio.sleep(wait)
                wait = min(wait * 2, 10.0)
            except openai.APIStatusError as exc:
                raise JudgelabError(f"the batch API at {self.endpoint} refused {what}: HTTP {exc.status_code} "
                                    f"{str(exc.message)[:160]}") from None

    # -- submit ------------------------------------------------------------------------------
    async def submit(self, calls: list[Any], lines: list[str], url: str, run: str, rater: str) -> str:
        batch = new_batch_id()
        self.store.add_batch(batch, "openai", run, rater, [(c.key, c.request_json) for c in calls],
                             endpoint=self.endpoint, detail={"url": url, "requests": len(calls)})
        data = ("\n".join(lines) + "\n").encode("utf-8")
        file = await self._api("a file upload", lambda: self.client.files.create(
            file=(f"{batch}.jsonl", data, "application/jsonl"), purpose="batch"))
        self.store.update_batch(batch, state="uploaded", provider_file=file.id)
        await self._create(batch, file.id, url)
        return batch

    async def _create(self, batch: str, file_id: str, url: str) -> None:
        created = await self._api("a batch creation", lambda: self.client.batches.create(
            input_file_id=file_id, endpoint=url, completion_window=self.options.window,
            metadata={"judgelab_batch": batch}))
        self.store.update_batch(batch, state="submitted", provider_batch=created.id)  # before anything else
        self.report.batches += 1

    async def _adopt(self, batch: str, file_id: str, url: str) -> None:
        """A batch whose file was uploaded: find the provider's batch made for it (killed just after
        creating it), or create it now."""
        page = await self._api("the batch list", lambda: self.client.batches.list(limit=100))
        async for found in page:
            if (found.metadata or {}).get("judgelab_batch") == batch:
                self.store.update_batch(batch, state="submitted", provider_batch=found.id)
                return
        await self._create(batch, file_id, url)

    # -- poll and record ------------------------------------------------------------------------
    async def finish(self, batch: str) -> None:
        record = self.store.batch(batch)
        assert record is not None
        url = str(record.detail.get("url", "/v1/chat/completions"))
        if record.state == "uploaded":
            assert record.provider_file is not None
            await self._adopt(batch, record.provider_file, url)
            record = self.store.batch(batch)
            assert record is not None
        provider_id = str(record.provider_batch)
        while True:
            state = await self._api("a batch status", lambda: self.client.batches.retrieve(provider_id))
            self._note(batch, state)
            if state.status in FINAL:
                break
            await asyncio.sleep(self.options.poll_seconds)
        lines = []
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                content = await self._api("a result download", _bind(self.client.files.content, file_id))
                lines += read_output_lines(content.text, f"batch {provider_id} file {file_id}")
        requests = {k: q for k, (q, _) in self.store.batch_requests(batch).items()}
        known = self.store.call_keys() & set(requests)
        answers, failures = record_output(self.store, [line for line in lines if line.custom_id in requests], requests,
                                          self.backend.read_batch_answer)
        for key in requests:
            if key not in answers and key not in failures:
                failures[key] = f"no result for this request (batch {state.status})"
        self.store.set_request_states(batch, [(k, "answered" if k in answers else "failed") for k in requests])
        counts = {"total": len(requests), "answered": len(answers), "failed": len(failures)}
        self.store.update_batch(batch, state="done" if state.status == "completed" else state.status,
                                detail={**record.detail, "counts": counts, "status": state.status})
        for key, response in answers.items():
            if key not in known:
                self.report.answered += 1
                self.report.prompt_tokens += response.prompt_tokens
                self.report.completion_tokens += response.completion_tokens
        self.report.failed += len(failures)
        self.runner.ledger.refresh()

    def _note(self, batch: str, state: Any) -> None:
        counts = state.request_counts
        total, done, failed = (counts.total, counts.completed, counts.failed) if counts else (0, 0, 0)
        self.progress[batch] = (total, done, failed)
        total_all = sum(t for t, _, _ in self.progress.values())
        done_all = sum(d + f for _, d, f in self.progress.values())
        failed_all = sum(f for _, _, f in self.progress.values())
        elapsed = max(0.0, time.time() - float(state.created_at or time.time()))
        eta = ""
        if 0 < done + failed < total and elapsed > 0:
            eta = f", ETA {elapsed / (done + failed) * (total - done - failed):.0f} s"
        self.on_note(f"batches: {done_all}/{total_all} done, {failed_all} failed; {state.id} {state.status}{eta}")

    # -- the rounds ------------------------------------------------------------------------------
    async def run(self, items: "list[Item]") -> BatchReport:
        runner, store = self.runner, self.store
        rater = runner.claim()
        run = identity_digest(runner.identity)
        for record in store.batches(kind="openai", states=("prepared",)):
            if record.endpoint == self.endpoint:
                store.drop_batch(record.id)  # never created at the provider: its calls are collected again
        resumed = [b.id for b in store.batches(kind="openai", states=OPEN_STATES) if b.endpoint == self.endpoint]
        self.report.resumed = len(resumed)
        await asyncio.gather(*(self.finish(b) for b in resumed))
        max_bytes = int(self.options.max_mb * 1024 * 1024)
        while True:
            calls = await pending_calls(runner, items)
            submissions = store.submissions([c.key for c in calls])
            todo = [c for c in calls if submissions[c.key] < self.options.max_attempts]
            self.report.gave_up = len(calls) - len(todo)
            if not todo:
                break
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
        if self.report.gave_up:
            self.report.notes.append(f"{self.report.gave_up} request(s) got no answer in {self.options.max_attempts} "
                                     "batch submissions: recorded as error, asked again by the next run")
        return self.report


async def run_batches(runner: "Runner", items: "list[Item]", on_note: Callable[[str], None] | None = None,
                      patience: float = 600.0) -> BatchReport:
    """Answer every call a run of ``runner`` over ``items`` lacks through the provider's batch API.

    Args:
        runner: the run (its judge must offer a batch API: ``openai:MODEL``; ``runner.spec.batch`` its limits).
        items: the items.
        on_note: shown the progress line (the provider's counters, ETA).
        patience: seconds an unreachable batch API is tried again before the run ends in one line.

    Returns:
        :class:`BatchReport`; the answers are in the store's ledger.

    Raises:
        JudgelabError: a judge without a batch API, a provider refusing a request, an API down for ``patience``.
    """
    note = on_note or (lambda text: logger.info("%s", text))
    return await _Batches(runner, note, patience).run(items)


def cancel_batches(out: "Path | str", batch: str | None = None, api_key: str | None = None) -> list[tuple[Any, str]]:
    """Ask the provider to cancel the open batches of ``out/store.sqlite`` (or the one named ``batch``).

    Args:
        out: the run's output folder; batch: judgelab's or the provider's id; api_key: the key
            (``$OPENAI_API_KEY`` when ``None``; a local server takes any).

    Returns:
        ``(batch record, provider status after the request)`` per batch.

    Raises:
        JudgelabError: no store, no such batch, nothing open, a provider refusing.
    """
    import os
    from pathlib import Path

    import openai

    from judgelab.store import Store

    path = Path(out) / "store.sqlite"
    if not path.is_file():
        raise JudgelabError(f"no store in {out}")
    with Store(path, read_only=True) as store:
        records = [b for b in store.batches(kind="openai", states=OPEN_STATES) if b.provider_batch]
    if batch is not None:
        records = [b for b in records if batch in (b.id, b.provider_batch)]
        if not records:
            raise JudgelabError(f"no open provider batch {batch!r} in {path} (judgelab batch list {out})")
    if not records:
        raise JudgelabError(f"no open provider batch in {path}")
    done = []
    for record in records:
        client = openai.OpenAI(base_url=record.endpoint, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
                               max_retries=2)
        try:
            state = client.batches.cancel(str(record.provider_batch))
        except openai.APIError as exc:
            raise JudgelabError(f"the batch API at {record.endpoint} did not cancel {record.provider_batch}: "
                                f"{type(exc).__name__}") from None
        finally:
            client.close()
        done.append((record, str(state.status)))
    return done
