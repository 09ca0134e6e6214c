"""Expand a spec into model calls and run them: concurrency, cache, resume, refusals.

A run crosses items × criteria × samples for one template, instruction variant and
judge (Chiang & Lee 2023, section 3.2: the same instruction, sample and question a
human rater saw; several samples as several "annotators"). Every call goes through
the ledger in :mod:`judgelab.store`: a call whose key is stored is never made again,
so re-running or resuming after a kill repeats no finished call.

Two query modes (appendix D.2.2): ``independent`` asks each criterion in its own
conversation; ``conversation`` asks all criteria of one sample in one conversation,
in template order, each turn carrying the earlier questions and answers.

Two ways to score: ``parsed`` extracts the rating from generated text
(:func:`judgelab.parse.parse_judgment`); ``logprob`` reads the next-token
distribution after the template's cue and takes the probability-weighted mean over
the scale's labels. In ``parsed`` mode, when the backend returns log-probabilities,
the expectation at the rating token is stored beside the parsed score.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field, model_validator

from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.models.base import Backend, Choice, JudgeRequest, JudgeResponse, Sampling
from judgelab.parse import (
    expected_score,
    parse_comparison,
    parse_judgment,
    parse_metric,
    rating_token_index,
    truncation_checked,
)
from judgelab.prompts import Template, load_template
from judgelab.store import Judgment, Store, keyed_json

__all__ = ["RunSpec", "RunStats", "Runner", "run_sync", "run_to_end"]

Messages = tuple[tuple[str, str], ...]


class RunSpec(BaseModel):
    """What to ask: template, criteria, instruction variant, samples, sampling, scoring."""

    template: str = "chiang-lee-story"
    criteria: list[str] | None = None
    variant: str | None = None
    samples: int = Field(3, ge=1, le=128)
    sampling: Sampling = Sampling(temperature=1.0, top_p=0.9, max_tokens=128)
    score: Literal["parsed", "logprob"] = "parsed"
    query_mode: Literal["independent", "conversation"] = "independent"
    max_refusal_retries: int = Field(3, ge=0, le=20)
    top_logprobs: int = Field(0, ge=0, le=20)
    #: A rater label the user insists on: reusing it with other settings is an error.
    rater: str | None = None
    #: A preferred label (recipes, DHP): taken as is when free, else suffixed ``#<digest>``.
    label: str | None = None
    concurrency: int | None = Field(None, ge=1, le=1024)

    @model_validator(mode="after")
    def _consistent(self) -> "RunSpec":
        if self.score == "logprob" and self.query_mode == "conversation":
            raise ValueError("log-probability scoring asks each criterion on its own; use --query-mode independent")
        return self


@dataclass
class RunStats:
    rater: str = ""
    total: int = 0
    already_done: int = 0
    recorded: int = 0
    calls_made: int = 0
    cache_hits: int = 0
    failures: int = 0
    refusals_regenerated: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)


class Runner:
    """Runs one spec for one judge into one store."""

    def __init__(
        self,
        backend: Backend,
        store: Store,
        spec: RunSpec,
        on_progress: Callable[[int, int], None] | None = None,
        template: Template | None = None,
    ) -> None:
        self.backend = backend
        self.store = store
        self.spec = spec
        self.template: Template = template or load_template(spec.template)
        self.criteria = spec.criteria or list(self.template.criteria)
        self.template.check(self.criteria, spec.variant)
        self.template = self.template.for_criteria(self.criteria)  # per-criterion scales (G-Eval)
        self.samples = 1 if spec.score == "logprob" else spec.samples
        self.identity = run_identity(backend, self.template, self.criteria, spec)
        preferred = spec.rater or spec.label or (
            f"{backend.model_id}@{self.template.name}" + (f"+{spec.variant}" if spec.variant else ""))
        self.rater = store.claim_rater(self.identity, preferred, forced=spec.rater is not None)
        #: Ratings one sample of one item yields over all criteria (multi-metric criteria yield several).
        self.outputs_per_sample = sum(
            1 if spec.score == "logprob" else len(self.template.outputs(c)) for c in self.criteria)
        self.stats = RunStats(rater=self.rater)
        self._on_progress = on_progress or (lambda done, failed: None)
        self._known_calls: set[str] = set()
        self.n_ignored = False  # the server returned fewer than n answers once: sample one by one
        self.warnings: list[str] = []
        self._parsed: dict[int, Any] = {}
        self._buffer_calls: list = []
        self._buffer_judgments: list[Judgment] = []
        self._buffer_since = 0.0
        self._meta = {
            "run": self.store_digest(),
            "template": self.template.name,
            "variant": spec.variant,
            "judge": backend.identity(),
            "sampling": spec.sampling.model_dump(),
            "score_mode": spec.score,
            "query_mode": spec.query_mode,
        }

    def store_digest(self) -> str:
        """A short digest of this run's identity (recorded with every judgment)."""
        import hashlib

        blob = json.dumps(self.identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    # -- planning ------------------------------------------------------------
    def _jobs(self, items: list[Item]) -> list[Callable[[], Any]]:
        # Render every prompt first: a missing field fails the run before any call is made.
        self._prompts = {(item.system, item.item_id, c): self.template.render(c, item.fields(), self.spec.variant)
                         for item in items for c in self.criteria}
        done = self.store.done()
        self._known_calls = self.store.call_keys()
        jobs: list[Callable[[], Any]] = []
        independent: list[tuple[str, Callable[[], Any]]] = []
        for item in items:
            if self.spec.query_mode == "conversation":
                for s in range(self.samples):
                    todo = [c for c in self.criteria
                            if any((self.rater, o, item.system, item.item_id, s) not in done for o in self.template.outputs(c))]
                    self.stats.total += self.outputs_per_sample
                    self.stats.already_done += sum(len(self.template.outputs(c)) for c in self.criteria if c not in todo)
                    if todo:
                        jobs.append(lambda item=item, s=s, todo=set(todo): self._conversation(item, s, todo))
                continue
            for criterion in self.criteria:
                outputs = self.template.outputs(criterion)
                todo = [s for s in range(self.samples)
                        if any((self.rater, o, item.system, item.item_id, s) not in done for o in outputs)]
                self.stats.total += self.samples * len(outputs)
                self.stats.already_done += (self.samples - len(todo)) * len(outputs)
                if todo:
                    prompt = self._prompts[(item.system, item.item_id, criterion)]
                    independent.append((prompt, lambda item=item, c=criterion, todo=todo: self._independent(item, c, todo)))
        # Independent prompts in sorted order: neighbours share the longest prefixes, which a
        # backend with a prefix cache (the embedded judge) evaluates once.
        jobs.extend(job for _, job in sorted(independent, key=lambda pair: pair[0]))
        return jobs

    # -- execution -------------------------------------------------------------
    async def run(self, items: list[Item]) -> RunStats:
        start = time.perf_counter()
        jobs = self._jobs(items)
        self._on_progress(self.stats.already_done, 0)
        width = min(self.spec.concurrency or self.backend.capabilities.concurrency, max(1, len(jobs)))
        queue: asyncio.Queue[Callable[[], Any]] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        async def worker() -> None:
            while True:
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await job()

        tasks = [asyncio.create_task(worker()) for _ in range(width)]
        flusher = asyncio.create_task(self._flusher())
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            flusher.cancel()
            self._flush()  # nothing finished is left unwritten, on success or failure
            self.stats.wall_s = time.perf_counter() - start
        return self.stats

    def _sampling(self, slot: int | str, attempt: int) -> Sampling:
        s = self.spec.sampling
        if self.spec.score == "logprob":
            return Sampling()  # no generation: sampling parameters do not matter
        if s.seed is not None and isinstance(slot, int):
            return s.model_copy(update={"seed": s.seed + slot + 1000 * attempt})
        return s

    async def _call(self, messages: Messages, n: int, slot: int | str, attempt: int = 0,
                    pending: list | None = None) -> tuple[JudgeResponse, str]:
        """One model call through the ledger. A stored call is never made again.

        With ``pending`` (a job's list), the answered call is written together with the
        job's judgments in one transaction; it is flushed first if the job makes another call.
        """
        scoring = self.spec.score == "logprob"
        sampling = self._sampling(slot, attempt)
        description = {
            "judge": self._meta["judge"],
            "messages": [list(m) for m in messages],
            "sampling": self._meta["sampling"] if sampling is self.spec.sampling else sampling.model_dump(),
            "n": n,
            "top_logprobs": 0 if scoring else self.spec.top_logprobs,
            "score_cue": self.template.logprob_cue if scoring else None,
            "slot": slot,
            "attempt": attempt,
        }
        key, request_json = keyed_json(description)
        cached = self.store.get_call(key) if key in self._known_calls else None
        if cached is not None:
            self.stats.cache_hits += 1
            return JudgeResponse.from_json(cached), key
        if pending:  # the job makes another call: its earlier answers are written first
            self._buffer_calls.extend(pending)
            pending.clear()
            self._flush()
        request = JudgeRequest(
            messages=messages,
            sampling=sampling,
            n=n,
            top_logprobs=description["top_logprobs"],
            score_cue=description["score_cue"],
            key=key,
        )
        response = await self.backend.complete(request)
        if not response.choices or len(response.choices) > n:
            raise JudgelabError(f"judge returned {len(response.choices)} answers for n={n}")
        payload = json.dumps(response.to_json(), ensure_ascii=False)
        if pending is None:
            self.store.put_call(key, request_json, payload)
        else:
            self.store.journal_call(key, request_json, payload)  # kept even if killed before the group commit
            pending.append((key, request_json, payload))
        self._known_calls.add(key)
        self.stats.calls_made += 1
        self.stats.prompt_tokens += response.prompt_tokens
        self.stats.completion_tokens += response.completion_tokens
        return response, key

    async def _answer(self, messages: Messages, sample: int, first: tuple[Choice, JudgeResponse, str] | None,
                      pending: list) -> tuple[Choice, JudgeResponse, list[dict[str, Any]]]:
        """One sample's final answer, regenerating refusals (appendix D.2.1) up to the limit."""
        attempts: list[dict[str, Any]] = []
        attempt = 0
        if first is None:
            response, key = await self._call(messages, 1, sample, pending=pending)
            choice = response.choices[0]
        else:
            choice, response, key = first
        while True:
            status = self._status(choice)
            attempts.append({"key": key, "text": choice.text, "status": status, "finish_reason": choice.finish_reason,
                             **({"reasoning": choice.reasoning} if choice.reasoning else {})})
            if status != "refusal" or attempt >= self.spec.max_refusal_retries:
                return choice, response, attempts
            attempt += 1
            self.stats.refusals_regenerated += 1
            response, key = await self._call(messages, 1, sample, attempt, pending=pending)
            choice = response.choices[0]

    def _warn(self, message: str) -> None:
        import sys

        self.warnings.append(message)
        print(f"judgelab: warning: {message}", file=sys.stderr)

    def _status(self, choice: Choice) -> str:
        if self.spec.score == "logprob":
            return "ok"
        if self.template.answer == "comparison":
            return parse_comparison(choice.text).status
        parsed = truncation_checked(parse_judgment(choice.text, self.template.scale), choice.finish_reason)
        self._parsed[id(choice)] = parsed  # reused by _judgment: each answer is parsed once
        return parsed.status

    async def _independent(self, item: Item, criterion: str, todo: list[int]) -> None:
        messages: Messages = (("user", self._prompts[(item.system, item.item_id, criterion)]),)
        k = self.samples
        pending: list = []
        firsts: dict[int, tuple[Choice, JudgeResponse, str] | None] = {s: None for s in todo}
        if len(todo) == k and k > 1 and self.backend.capabilities.max_n >= k and not self.n_ignored:
            response, key = await self._call(messages, k, f"n{k}", pending=pending)  # one call for all k samples
            if len(response.choices) < k and not self.n_ignored:
                self.n_ignored = True
                self._warn(f"the judge answered {len(response.choices)} of n={k} samples in one request: "
                           "asking for the other samples one by one from now on (--no-n skips the n request)")
            for s in todo:
                if s < len(response.choices):
                    firsts[s] = (response.choices[s], response, key)
        judgments = []
        try:
            for s in todo:
                choice, response, attempts = await self._answer(messages, s, firsts[s], pending)
                judgments.extend(self._judgments(item, criterion, s, choice, response, attempts))
        except BaseException:
            self._buffer_calls.extend(pending)  # a failing or cancelled job keeps the calls it paid for
            raise
        self._record(judgments, pending)

    async def _conversation(self, item: Item, sample: int, todo: set[str]) -> None:
        history: Messages = ()
        for criterion in self.criteria:
            messages = history + (("user", self._prompts[(item.system, item.item_id, criterion)]),)
            pending: list = []
            try:
                choice, response, attempts = await self._answer(messages, sample, None, pending)
            except BaseException:
                self._buffer_calls.extend(pending)
                raise
            self._record(self._judgments(item, criterion, sample, choice, response, attempts) if criterion in todo else [], pending)
            history = messages + (("assistant", choice.text),)

    def _judgments(self, item: Item, criterion: str, sample: int, choice: Choice, response: JudgeResponse,
                   attempts: list[dict[str, Any]]) -> list[Judgment]:
        """The ratings one answer yields: one per metric of a multi-metric criterion, else one."""
        metrics = self.template.criteria[criterion].metrics
        if not metrics or self.spec.score == "logprob":
            return [self._judgment(item, criterion, sample, choice, response, attempts)]
        out = []
        for metric in metrics:
            parsed = parse_metric(choice.text, metric, self.template.scale)
            out.append(self._judgment(item, metric, sample, choice, response, attempts, parsed))
        return out

    def _judgment(self, item: Item, criterion: str, sample: int, choice: Choice, response: JudgeResponse,
                  attempts: list[dict[str, Any]], parsed: Any = None) -> Judgment:
        scale = self.template.scale
        int_scale = (int(scale[0]), int(scale[1]))
        lp_score = outside = None
        if parsed is None and self.template.answer == "comparison" and self.spec.score != "logprob":
            parsed = parse_comparison(choice.text)
        if self.spec.score == "logprob":
            if choice.tokens:
                lp_score, outside, _ = expected_score(choice.tokens[0][2], int_scale)
            parsed_score, status = None, ("ok" if lp_score is not None else "no_label_mass")
            score = lp_score
        else:
            parsed = parsed or self._parsed.pop(id(choice), None) or truncation_checked(
                parse_judgment(choice.text, scale), choice.finish_reason)
            self._parsed.pop(id(choice), None)
            parsed_score, status, score = parsed.score, parsed.status, parsed.score
            if parsed.score is not None and choice.tokens and float(parsed.score).is_integer():
                # The distribution at the token that carries the rating itself, located by its
                # position in the answer (not the first token that happens to spell the same digit).
                index = rating_token_index(choice.tokens, choice.text, parsed.start)
                if index is not None:
                    lp_score, outside, _ = expected_score(choice.tokens[index][2], int_scale)
        return Judgment(
            item_id=item.item_id,
            system=item.system,
            group=item.group,
            criterion=criterion,
            rater=self.rater,
            sample=sample,
            score=score,
            score_parsed=parsed_score,
            score_logprob=lp_score,
            logprob_outside=outside,
            status=status,
            raw=choice.text,
            attempts=attempts,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            latency_s=response.latency_s,
            meta=self._meta,
        )

    #: Group commit: records are written at most this late, or when this many are waiting.
    FLUSH_SECONDS = 0.05
    FLUSH_RECORDS = 64

    def _record(self, judgments: list[Judgment], pending: list) -> None:
        if not self._buffer_calls and not self._buffer_judgments:
            self._buffer_since = time.monotonic()
        self._buffer_calls.extend(pending)
        self._buffer_judgments.extend(judgments)
        pending.clear()
        if (len(self._buffer_judgments) + len(self._buffer_calls) >= self.FLUSH_RECORDS
                or time.monotonic() - self._buffer_since >= self.FLUSH_SECONDS):
            self._flush()
        failed = sum(1 for j in judgments if j.status != "ok")
        for j in judgments:
            self.stats.statuses[j.status] = self.stats.statuses.get(j.status, 0) + 1
        self.stats.recorded += len(judgments)
        self.stats.failures += failed
        self._on_progress(len(judgments), failed)

    def _flush(self) -> None:
        if self._buffer_calls or self._buffer_judgments:
            self.store.put(calls=self._buffer_calls, judgments=self._buffer_judgments)
            self._buffer_calls, self._buffer_judgments = [], []

    async def _flusher(self) -> None:
        """Writes buffered records that have waited ``FLUSH_SECONDS`` while calls are slow."""
        while True:
            await asyncio.sleep(self.FLUSH_SECONDS)
            if self._buffer_judgments or self._buffer_calls:
                if time.monotonic() - self._buffer_since >= self.FLUSH_SECONDS:
                    self._flush()


def run_identity(backend: Backend, template: Template, criteria: list[str], spec: RunSpec) -> dict[str, Any]:
    """What defines a run: two runs with equal identities ask the same questions the same way.

    The judge (kind, model, endpoint without credentials), the template's name and a SHA-256
    of its full content (an edited template is a new run even under the same name), the
    criteria, instruction variant, samples, score and query modes, the sampling parameters
    (when text is generated), log-probability and refusal options.
    """
    scoring = spec.score == "logprob"
    return {
        "judge": public_identity(backend.identity()),
        "template": template.name,
        "template_sha256": template.digest(),
        "criteria": list(criteria),
        "variant": spec.variant,
        "samples": 1 if scoring else spec.samples,
        "score": spec.score,
        "query_mode": spec.query_mode,
        "sampling": None if scoring else spec.sampling.model_dump(),
        "top_logprobs": 0 if scoring else spec.top_logprobs,
        "max_refusal_retries": 0 if scoring else spec.max_refusal_retries,
    }


def public_identity(identity: dict[str, Any]) -> dict[str, Any]:
    """A judge identity with credentials removed from its URL (user:password@, query string)."""
    from urllib.parse import urlsplit, urlunsplit

    out = dict(identity)
    url = out.get("base_url")
    if isinstance(url, str):
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        out["base_url"] = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return out


def run_to_end(runner: Runner, items: list[Item]) -> RunStats:
    """Run a runner to completion from synchronous code; its backend is closed afterwards."""

    async def main() -> RunStats:
        try:
            return await runner.run(items)
        finally:
            await runner.backend.aclose()

    return asyncio.run(main())


def run_sync(backend: Backend, store: Store, spec: RunSpec, items: list[Item],
             on_progress: Callable[[int, int], None] | None = None) -> RunStats:
    """Run a spec to completion from synchronous code."""
    return run_to_end(Runner(backend, store, spec, on_progress), items)
