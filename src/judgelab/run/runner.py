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
import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field, model_validator

from judgelab.datasets.items import Item
from judgelab.models.base import Backend, Choice, JudgeRequest, JudgeResponse, Sampling
from judgelab.models.cache import CachedJudge
from judgelab.models.retry import CallFailed, CallGate
from judgelab.parse import (
    expected_score,
    parse_comparison,
    parse_judgment,
    parse_metric,
    rating_token_index,
    truncation_checked,
)
from judgelab.prompts import Template, load_template
from judgelab.status import Status
from judgelab.store import Judgment, Store, prompt_key

__all__ = ["RunSpec", "RunStats", "Runner", "RunPlan", "PlannedCall", "ANSWER_PLACEHOLDER", "run_sync", "run_to_end",
           "run_identity"]

logger = logging.getLogger(__name__)

Messages = tuple[tuple[str, str], ...]


class RunSpec(BaseModel):
    """What to ask: template, criteria, instruction variant, samples, sampling, scoring.

    Validated by pydantic: a bad value is one line. ``score="logprob"`` (G-Eval style, the
    probability-weighted mean over the scale's labels) asks one deterministic sample per
    item and criterion and needs ``query_mode="independent"``.

    Args:
        template: a shipped template's name or a YAML file (Chiang & Lee 2023's story prompt
            by default).
        criteria: the criteria to ask (all of the template's when ``None``).
        variant: an instruction variant of the template (e.g. ``explain``; section 3.3).
        samples: answers per item and criterion, the "annotators" of section 3.2.
        sampling: temperature, top-p, max tokens and seed of generated answers.
        score: ``parsed`` (read the rating from the text) or ``logprob``.
        query_mode: ``independent`` or ``conversation`` (appendix D.2.2).
        max_refusal_retries: regenerations of a refusal (appendix D.2.1).
        top_logprobs: alternatives per token to store beside a parsed rating.
        rater: a label the user insists on (reuse with other settings is an error).
        label: a preferred label, suffixed ``#<digest>`` when another run holds it.
        concurrency: calls at once (the backend's own limit when ``None``).

    Example:
        >>> RunSpec(samples=1, criteria=["likability"]).score
        'parsed'
    """

    template: str = "chiang-lee-story"
    criteria: list[str] | None = None
    variant: str | None = None
    samples: int = Field(default=3, ge=1, le=128)
    sampling: Sampling = Sampling(temperature=1.0, top_p=0.9, max_tokens=128)
    score: Literal["parsed", "logprob"] = "parsed"
    query_mode: Literal["independent", "conversation"] = "independent"
    max_refusal_retries: int = Field(default=3, ge=0, le=20)
    top_logprobs: int = Field(default=0, ge=0, le=20)
    #: A rater label the user insists on: reusing it with other settings is an error.
    rater: str | None = None
    #: A preferred label (recipes, DHP): taken as is when free, else suffixed ``#<digest>``.
    label: str | None = None
    concurrency: int | None = Field(default=None, ge=1, le=1024)

    @model_validator(mode="after")
    def _consistent(self) -> "RunSpec":
        if self.score == "logprob" and self.query_mode == "conversation":
            raise ValueError("log-probability scoring asks each criterion on its own; use --query-mode independent")
        return self


@dataclass
class RunStats:
    """What one :meth:`Runner.run` did (returned by :meth:`Runner.run`, :func:`run_sync`, :func:`run_to_end`).

    Attributes:
        rater: the run's rater label.
        total: judgments the run covers (items × outputs × samples).
        already_done: of those, found in the store (not asked again).
        recorded: judgments recorded by this run.
        calls_made: calls sent to the judge (ledger hits excluded).
        cache_hits: calls answered from the ledger.
        failures: recorded judgments whose status is not ``ok``.
        refusals_regenerated: refusals asked again (Chiang & Lee 2023, appendix D.2.1).
        prompt_tokens, completion_tokens: tokens of the calls made.
        wall_s: seconds the run took.
        statuses: recorded judgments by status.
        changed: judgments asked again because their prompt changed since they were recorded
            (an edited text, context or example).
        retried_errors: judgments asked again because the last run recorded them as ``error``.
        retries: retries by reason (``rate_limited``, ``server_error``, ``timeout``, ``connection``)
            and ``gave_up`` (calls recorded as ``error``).

    Example:
        >>> RunStats(rater="r").recorded
        0
    """

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
    changed: int = 0
    retried_errors: int = 0
    retries: dict[str, int] = field(default_factory=dict)


#: In a planned conversation-mode call, stands for an earlier answer the judge has not given yet.
ANSWER_PLACEHOLDER = "<the judge's answer to the previous question>"


@dataclass(frozen=True)
class PlannedCall:
    """One first call of a planned run, built exactly as :meth:`Runner.run` sends it.

    Attributes:
        criterion: the criterion asked (a multi-metric criterion's name, not its metrics).
        item_id, system: the item judged.
        messages: the chat turns sent, ``(role, text)`` pairs. In conversation mode the turns
            after the first carry earlier answers, unknown before the run: they appear as
            :data:`ANSWER_PLACEHOLDER` and ``exact`` is ``False``.
        n: answers asked for in the call (all samples in one call when the judge offers ``n``).
        samples: the sample numbers the call answers.
        cached: the store's ledger answers the call already (no call is paid for).
        key: the ledger key ("" when ``exact`` is ``False``).
        exact: the messages are exactly those sent.
        request: the request itself (sampling parameters, log-probability options).

    Example:
        >>> PlannedCall("likability", "a", "human", (("user", "Rate it."),), 1, (0,), cached=False).prompt_chars()
        8
    """

    criterion: str
    item_id: str
    system: str
    messages: Messages
    n: int
    samples: tuple[int, ...]
    cached: bool
    key: str = ""
    exact: bool = True
    request: JudgeRequest | None = field(default=None, repr=False, compare=False)

    def prompt_chars(self) -> int:
        """Characters of all messages of the call (a proxy for its prompt tokens).

        Returns:
            The summed length of the messages' texts.
        """
        return sum(len(text) for _, text in self.messages)


@dataclass(frozen=True)
class _Job:
    """One unit of scheduled work: an item × criterion (independent) or an item × sample (conversation)."""

    item: Item
    calls: tuple[PlannedCall, ...]
    criterion: str | None = None  # independent mode
    samples: tuple[int, ...] = ()  # independent: the samples to record; conversation: (sample,)
    record: frozenset[str] = frozenset()  # conversation: the criteria to record (all are asked)


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will ask, made without calling the judge or writing to the store.

    Counts are of *first calls only*: a refusal regenerated (appendix D.2.1) and the samples
    asked again one by one after a server ignored ``n`` cannot be known before the answers
    are in, so a run may make more calls than planned, never fewer uncached ones.

    Attributes:
        rater: the label the judgments will be stored under.
        calls: the first calls in the order they are scheduled, cached ones included
            (``PlannedCall.cached``).
        judgments: judgments the run will record (``total - already_done``).
        total: judgments the run covers.
        already_done: judgments found in the store (recorded for the same prompt, not ``error``).
        changed: stored judgments whose prompt changed since (asked again; part of ``judgments``).
        retried_errors: stored ``error`` judgments (asked again; part of ``judgments``).
        prompts: the rendered prompt of every (system, item_id, criterion).

    Example:
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> runner = Runner(ScriptedTestJudge(), Store(":memory:"), RunSpec(samples=2, criteria=["cohesiveness"]))
        >>> plan = runner.plan([Item("a", "Once upon a time.", context="a prompt")])
        >>> plan.n_calls, plan.judgments, plan.calls[0].n
        (1, 2, 2)
    """

    rater: str
    calls: tuple[PlannedCall, ...]
    judgments: int
    total: int
    already_done: int
    changed: int = 0
    retried_errors: int = 0
    prompts: dict[tuple[str, str, str], str] = field(default_factory=dict, repr=False)
    jobs: tuple[_Job, ...] = field(default=(), repr=False, compare=False)
    regroup: tuple[tuple[str, str, str | None], ...] = field(default=(), repr=False, compare=False)

    @property
    def n_calls(self) -> int:
        """First calls that would be sent to the judge (those the ledger does not answer)."""
        return sum(1 for c in self.calls if not c.cached)

    def first_prompt_per_criterion(self) -> dict[str, Messages]:
        """Criterion → the messages of its first planned call (exactly as sent), for ``--dry-run``.

        A criterion with no call left (all done) gets its first item's rendered prompt as one
        user turn.

        Returns:
            ``{criterion: ((role, text), ...)}`` in the order the criteria are first called.

        Example:
            >>> from judgelab.models.scripted import ScriptedTestJudge
            >>> runner = Runner(ScriptedTestJudge(), Store(":memory:"), RunSpec(samples=1, criteria=["likability"]))
            >>> messages = runner.plan([Item("a", "Once upon a time.", context="p")]).first_prompt_per_criterion()["likability"]
            >>> messages[0][0], "Once upon a time." in messages[0][1]
            ('user', True)
        """
        out: dict[str, Messages] = {}
        for call in self.calls:
            out.setdefault(call.criterion, call.messages)
        for (_, _, criterion), prompt in self.prompts.items():
            out.setdefault(criterion, (("user", prompt),))
        return out

    def prompt_chars(self, include_cached: bool = False) -> int:
        """Characters of the planned calls' messages, a basis for a token and cost estimate.

        Args:
            include_cached: count calls the ledger answers too (they cost nothing).

        Returns:
            The summed length of the messages (an ``n`` call counts its prompt once).
        """
        return sum(c.prompt_chars() for c in self.calls if include_cached or not c.cached)


class Runner:
    """Runs one spec for one judge into one store: plan, schedule, record.

    :meth:`plan` renders every prompt and builds every first request; :meth:`run` claims
    the rater label, plans the same way and schedules the plan's jobs on a pool of
    ``concurrency`` workers; answers are parsed into judgments and recorded with the calls
    that produced them (group commit). Every call goes through :class:`CachedJudge`.
    Warnings (e.g. a server that ignores ``n``) are logged on ``judgelab.run`` and kept
    in :attr:`warnings`; the runner prints nothing.

    Args:
        backend: the judge.
        store: the store (ledger and judgments).
        spec: what to ask.
        on_progress: called with (judgments recorded, of which failed, the retries so far in
            words or ``""``) as they are recorded.
        template: a loaded template (else ``spec.template`` is loaded).

    Raises:
        JudgelabError: unknown criteria or variant, or a forced ``--rater`` used before with
            other settings.

    Example:
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> store = Store(":memory:")
        >>> runner = Runner(ScriptedTestJudge({"default": "Rating: 4"}), store, RunSpec(samples=1))
        >>> stats = run_to_end(runner, [Item("a", "Once upon a time.", context="a prompt")])
        >>> stats.recorded, stats.calls_made, set(store.ratings()["score"])
        (4, 4, {4.0})
    """

    def __init__(
        self,
        backend: Backend,
        store: Store,
        spec: RunSpec,
        on_progress: Callable[[int, int, str], None] | None = None,
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
        self._preferred = spec.rater or spec.label or (
            f"{backend.model_id}@{self.template.name}" + (f"+{spec.variant}" if spec.variant else ""))
        # Read only: the label is written when the run starts (a plan writes nothing).
        self.rater = store.claim_rater(self.identity, self._preferred, forced=spec.rater is not None, record=False)
        #: Ratings one sample of one item yields over all criteria (multi-metric criteria yield several).
        self.outputs_per_sample = sum(len(self._outputs(c)) for c in self.criteria)
        self.stats = RunStats(rater=self.rater)
        self._on_progress = on_progress or (lambda done, failed, retries: None)
        self.width = spec.concurrency or backend.capabilities.concurrency
        self.cache = CachedJudge(backend, store, gate=CallGate(backend.retry_policy, self.width))
        self.writer = self.cache.writer
        self.n_ignored = False  # the server returned fewer than n answers once: sample one by one
        self.warnings: list[str] = []
        self._parsed: dict[int, Any] = {}
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
        """A short digest of this run's identity (recorded with every judgment).

        Returns:
            The first 12 hex digits of the SHA-256 of :func:`run_identity`'s canonical JSON.
        """
        import hashlib

        blob = json.dumps(self.identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    # -- requests: one builder for planning and running ---------------------------
    def _sampling(self, slot: int | str, attempt: int) -> Sampling:
        s = self.spec.sampling
        if self.spec.score == "logprob":
            return Sampling()  # no generation: sampling parameters do not matter
        if s.seed is not None and isinstance(slot, int):
            return s.model_copy(update={"seed": s.seed + slot + 1000 * attempt})
        return s

    def request(self, messages: Messages, n: int, slot: int | str, attempt: int = 0) -> tuple[JudgeRequest, dict[str, Any]]:
        """The request for one call and the extra fields of its ledger key (planning and running use this one builder).

        Args:
            messages: the chat turns.
            n: answers asked for.
            slot: the sample number, or ``"n<k>"`` for one call answering all k samples.
            attempt: 0, or the number of the refusal regeneration.

        Returns:
            (request without its key, ``extra`` for :meth:`CachedJudge.complete`).

        Example:
            >>> from judgelab.models.scripted import ScriptedTestJudge
            >>> spec = RunSpec(samples=2, sampling=Sampling(temperature=0.7, seed=10))
            >>> request, extra = Runner(ScriptedTestJudge(), Store(":memory:"), spec).request((("user", "Rate it."),), 1, 1)
            >>> request.sampling.seed, extra["slot"], extra["attempt"]
            (11, 1, 0)
        """
        scoring = self.spec.score == "logprob"
        request = JudgeRequest(
            messages=messages,
            sampling=self._sampling(slot, attempt),
            n=n,
            top_logprobs=0 if scoring else self.spec.top_logprobs,
            score_cue=self.template.logprob_cue if scoring else None,
        )
        return request, {"top_logprobs": request.top_logprobs, "score_cue": request.score_cue,
                         "slot": slot, "attempt": attempt}

    def _planned(self, item: Item, criterion: str, messages: Messages, n: int, slot: int | str,
                 samples: tuple[int, ...], exact: bool = True) -> PlannedCall:
        request, extra = self.request(messages, n, slot)
        key = self.cache.key(request, **extra)[0] if exact else ""
        return PlannedCall(criterion, item.item_id, item.system, messages, n, samples,
                           cached=exact and self.cache.is_cached(key), key=key, exact=exact,
                           request=dataclasses.replace(request, key=key))

    # -- planning ------------------------------------------------------------
    def plan(self, items: list[Item]) -> RunPlan:
        """Render every prompt and build every first request, without calling the judge or writing.

        Args:
            items: the items to judge.

        Returns:
            The :class:`RunPlan` that :meth:`run` executes (counts of first calls only).

        Raises:
            JudgelabError: a template field missing from an item (before any call is made).

        Example:
            >>> from judgelab.models.scripted import ScriptedTestJudge
            >>> judge = ScriptedTestJudge()
            >>> plan = Runner(judge, Store(":memory:"), RunSpec(samples=3)).plan([Item("a", "A story.", context="p")])
            >>> plan.n_calls, plan.judgments, len(judge.calls)
            (4, 12, 0)
        """
        # Render every prompt first: a missing field fails the run before any call is made.
        prompts = {(item.system, item.item_id, c): self.template.render(c, item.fields(), self.spec.variant)
                   for item in items for c in self.criteria}
        bindings = self.store.bindings(self.rater)
        counts = {"total": 0, "done": 0, "changed": 0, "error": 0}
        regroup: dict[tuple[str, str], str | None] = {}

        def to_ask(item: Item, outputs: list[str], sample: int, key: str) -> bool:
            """Whether a judgment must be asked: none stored, stored for another prompt, or ``error``."""
            counts["total"] += len(outputs)
            state = "done"
            for output in outputs:
                found = bindings.get((output, item.system, item.item_id, sample))
                if found is None:
                    state = "new"
                    break
                if found[0] != key:
                    state = "changed"
                elif found[1] == Status.ERROR and state == "done":
                    state = "error"
                elif found[2] != item.group:
                    regroup[(item.system, item.item_id)] = item.group
            if state == "done":
                counts["done"] += len(outputs)
            elif state in ("changed", "error"):
                counts[state] += len(outputs)
            return state != "done"

        jobs: list[_Job] = []
        independent: list[tuple[str, _Job]] = []
        k = self.samples
        for item in items:
            if self.spec.query_mode == "conversation":
                for s in range(k):
                    turn_calls: list[PlannedCall] = []
                    todo_criteria: list[str] = []
                    history: Messages = ()
                    exact = True
                    for c in self.criteria:  # every criterion is asked: later turns carry the earlier ones
                        turn = history + (("user", prompts[(item.system, item.item_id, c)]),)
                        turn_calls.append(self._planned(item, c, turn, 1, s, (s,), exact))
                        if to_ask(item, self._outputs(c), s, prompt_key(turn)):
                            todo_criteria.append(c)
                        history, exact = turn + (("assistant", ANSWER_PLACEHOLDER),), False
                    if todo_criteria:
                        jobs.append(_Job(item, tuple(turn_calls), samples=(s,), record=frozenset(todo_criteria)))
                continue
            for criterion in self.criteria:
                outputs = self._outputs(criterion)
                prompt = prompts[(item.system, item.item_id, criterion)]
                messages: Messages = (("user", prompt),)
                key = prompt_key(messages)
                todo = tuple(s for s in range(k) if to_ask(item, outputs, s, key))
                if not todo:
                    continue
                calls: tuple[PlannedCall, ...]
                if len(todo) == k and k > 1 and self.backend.capabilities.max_n >= k and not self.n_ignored:
                    calls = (self._planned(item, criterion, messages, k, f"n{k}", todo),)  # one call for all k samples
                else:
                    calls = tuple(self._planned(item, criterion, messages, 1, s, (s,)) for s in todo)
                independent.append((prompt, _Job(item, calls, criterion=criterion, samples=todo)))
        # Independent prompts in sorted order: neighbours share the longest prefixes, which a
        # backend with a prefix cache (the embedded judge) evaluates once.
        jobs.extend(job for _, job in sorted(independent, key=lambda pair: pair[0]))
        total, already = counts["total"], counts["done"]
        return RunPlan(rater=self.rater, calls=tuple(c for job in jobs for c in job.calls),
                       judgments=total - already, total=total, already_done=already, changed=counts["changed"],
                       retried_errors=counts["error"], prompts=prompts, jobs=tuple(jobs),
                       regroup=tuple((system, item_id, group) for (system, item_id), group in regroup.items()))

    # -- scheduling -------------------------------------------------------------
    async def run(self, items: list[Item]) -> RunStats:
        """Claim the rater label, plan, and run the plan's jobs; finished work is never lost.

        Args:
            items: the items to judge.

        Returns:
            The run's :class:`RunStats`.

        Raises:
            JudgelabError: bad input, an unwritable store, a judge that cannot answer.

        Example:
            >>> import asyncio
            >>> from judgelab.models.scripted import ScriptedTestJudge
            >>> runner = Runner(ScriptedTestJudge({"default": "4"}), Store(":memory:"), RunSpec(samples=1))
            >>> asyncio.run(runner.run([Item("a", "A story.", context="p")])).recorded
            4
        """
        start = time.perf_counter()
        self.rater = self.store.claim_rater(self.identity, self._preferred, forced=self.spec.rater is not None)
        self.stats.rater = self.rater
        plan = self.plan(items)
        self.stats.total += plan.total
        self.stats.already_done += plan.already_done
        self.stats.changed += plan.changed
        self.stats.retried_errors += plan.retried_errors
        if plan.changed:
            self._warn(f"{plan.changed} judgment(s) of {self.rater} were recorded for another prompt (an edited "
                       "text, context or example): asked again")
        self.store.regroup(self.rater, plan.regroup)
        self._on_progress(plan.already_done, 0, "")
        try:
            await self._schedule(plan.jobs)
        finally:
            self.writer.flush()  # nothing finished is left unwritten, on success or failure
            self.stats.calls_made = self.cache.calls_made
            self.stats.cache_hits = self.cache.cache_hits
            self.stats.prompt_tokens = self.cache.prompt_tokens
            self.stats.completion_tokens = self.cache.completion_tokens
            self.stats.retries = dict(self.cache.gate.counts)
            self.stats.wall_s = time.perf_counter() - start
        return self.stats

    async def _schedule(self, jobs: tuple[_Job, ...]) -> None:
        """Run jobs on ``concurrency`` workers with the group writer's flusher beside them."""
        width = min(self.width, max(1, len(jobs)))
        queue: asyncio.Queue[_Job] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        async def worker() -> None:
            while True:
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await (self._independent(job) if job.criterion is not None else self._conversation(job))

        tasks = [asyncio.create_task(worker()) for _ in range(width)]
        flusher = asyncio.create_task(self.writer.flusher())
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            flusher.cancel()

    # -- execution -------------------------------------------------------------
    async def _call(self, messages: Messages, n: int, slot: int | str, attempt: int = 0,
                    pending: list | None = None, planned: PlannedCall | None = None) -> tuple[JudgeResponse, str]:
        """One model call through the ledger (the planned request when given)."""
        request, extra = self.request(messages, n, slot, attempt)
        if planned is not None and planned.exact:
            request = planned.request or request
        return await self.cache.complete(request, pending, **extra)

    async def _answer(self, messages: Messages, sample: int, first: tuple[Choice, JudgeResponse, str] | None,
                      pending: list, planned: PlannedCall | None = None) -> tuple[Choice, JudgeResponse, list[dict[str, Any]]]:
        """One sample's final answer, regenerating refusals (appendix D.2.1) up to the limit."""
        attempts: list[dict[str, Any]] = []
        attempt = 0
        if first is None:
            response, key = await self._call(messages, 1, sample, pending=pending, planned=planned)
            choice = response.choices[0]
        else:
            choice, response, key = first
        while True:
            status = self._status(choice)
            attempts.append({"key": key, "text": choice.text, "status": status, "finish_reason": choice.finish_reason,
                             **({"reasoning": choice.reasoning} if choice.reasoning else {})})
            if status != Status.REFUSAL or attempt >= self.spec.max_refusal_retries:
                return choice, response, attempts
            attempt += 1
            self.stats.refusals_regenerated += 1
            response, key = await self._call(messages, 1, sample, attempt, pending=pending)
            choice = response.choices[0]

    def _outputs(self, criterion: str) -> list[str]:
        """The ratings one answer to ``criterion`` is recorded as (a multi-metric criterion's metrics
        when the rating is read from text; the criterion itself in log-probability mode)."""
        return [criterion] if self.spec.score == "logprob" else self.template.outputs(criterion)

    def _warn(self, message: str) -> None:
        """Keep a warning for the caller and log it on ``judgelab.run`` (the command line shows it)."""
        self.warnings.append(message)
        logger.warning(message)

    def _status(self, choice: Choice) -> str:
        if self.spec.score == "logprob":
            return Status.OK
        if self.template.answer == "comparison":
            return parse_comparison(choice.text).status
        parsed = truncation_checked(parse_judgment(choice.text, self.template.scale), choice.finish_reason)
        self._parsed[id(choice)] = parsed  # reused by _judgment: each answer is parsed once
        return parsed.status

    async def _independent(self, job: _Job) -> None:
        item, criterion = job.item, job.criterion
        assert criterion is not None
        messages = job.calls[0].messages
        key_of_prompt = prompt_key(messages)
        k = self.samples
        pending: list = []
        firsts: dict[int, tuple[Choice, JudgeResponse, str] | None] = {s: None for s in job.samples}
        planned = {c.samples[0]: c for c in job.calls if c.n == 1}
        judgments: list[Judgment] = []
        failed: CallFailed | None = None
        if job.calls[0].n > 1 and not self.n_ignored:
            try:
                response, key = await self._call(messages, k, f"n{k}", pending=pending, planned=job.calls[0])  # all k samples
            except CallFailed as exc:
                failed = exc  # the budget is spent for this prompt: every sample of the call is an error
            else:
                if len(response.choices) < k and not self.n_ignored:
                    self.n_ignored = True
                    self._warn(f"the judge answered {len(response.choices)} of n={k} samples in one request: "
                               "asking for the other samples one by one from now on (--no-n skips the n request)")
                for s in job.samples:
                    if s < len(response.choices):
                        firsts[s] = (response.choices[s], response, key)
        try:
            for s in job.samples:
                if failed is not None:
                    judgments.extend(self._failed(item, criterion, s, failed, key_of_prompt))
                    continue
                try:
                    choice, response, attempts = await self._answer(messages, s, firsts[s], pending, planned.get(s))
                except CallFailed as exc:
                    judgments.extend(self._failed(item, criterion, s, exc, key_of_prompt))
                    continue
                judgments.extend(self._judgments(item, criterion, s, choice, response, attempts, key_of_prompt))
        except BaseException:
            self.writer.keep(pending)  # a failing or cancelled job keeps the calls it paid for
            raise
        self._record(judgments, pending)

    async def _conversation(self, job: _Job) -> None:
        item, sample = job.item, job.samples[0]
        history: Messages = ()
        failed: CallFailed | None = None
        for call in job.calls:
            criterion = call.criterion
            messages = history + (call.messages[-1],)  # the earlier turns as actually answered
            key_of_prompt = prompt_key(messages)
            if failed is not None:  # a later turn cannot be asked without the earlier answer
                self._record(self._failed(item, criterion, sample, failed, key_of_prompt)
                             if criterion in job.record else [], [])
                continue
            pending: list = []
            try:
                choice, response, attempts = await self._answer(messages, sample, None, pending,
                                                                call if call.exact else None)
            except CallFailed as exc:
                failed = exc
                self._record(self._failed(item, criterion, sample, exc, key_of_prompt)
                             if criterion in job.record else [], pending)
                continue
            except BaseException:
                self.writer.keep(pending)
                raise
            self._record(self._judgments(item, criterion, sample, choice, response, attempts, key_of_prompt)
                         if criterion in job.record else [], pending)
            history = messages + (("assistant", choice.text),)

    # -- recording -------------------------------------------------------------
    def _judgments(self, item: Item, criterion: str, sample: int, choice: Choice, response: JudgeResponse,
                   attempts: list[dict[str, Any]], key_of_prompt: str) -> list[Judgment]:
        """The ratings one answer yields: one per metric of a multi-metric criterion, else one."""
        metrics = self.template.criteria[criterion].metrics
        if not metrics or self.spec.score == "logprob":
            return [self._judgment(item, criterion, sample, choice, response, attempts, key_of_prompt)]
        out = []
        for metric in metrics:
            parsed = parse_metric(choice.text, metric, self.template.scale)
            out.append(self._judgment(item, metric, sample, choice, response, attempts, key_of_prompt, parsed))
        return out

    def _failed(self, item: Item, criterion: str, sample: int, exc: CallFailed, key_of_prompt: str) -> list[Judgment]:
        """The ``error`` judgments of a call that ran out of its retry budget (asked again by the next run)."""
        outputs = self._outputs(criterion)
        attempts = [{"key": exc.key, "status": Status.ERROR.value, "error": str(exc)}]
        return [Judgment(item_id=item.item_id, system=item.system, group=item.group, criterion=output, rater=self.rater,
                         sample=sample, score=None, score_parsed=None, score_logprob=None, logprob_outside=None,
                         status=Status.ERROR, raw=str(exc), attempts=attempts, meta=self._meta, prompt_key=key_of_prompt)
                for output in outputs]

    def _judgment(self, item: Item, criterion: str, sample: int, choice: Choice, response: JudgeResponse,
                  attempts: list[dict[str, Any]], key_of_prompt: str, parsed: Any = None) -> Judgment:
        scale = self.template.scale
        int_scale = (int(scale[0]), int(scale[1]))
        lp_score = outside = None
        if parsed is None and self.template.answer == "comparison" and self.spec.score != "logprob":
            parsed = parse_comparison(choice.text)
        if self.spec.score == "logprob":
            if choice.tokens:
                lp_score, outside, _ = expected_score(choice.tokens[0][2], int_scale)
            parsed_score, status = None, (Status.OK if lp_score is not None else Status.NO_LABEL_MASS)
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
            prompt_key=key_of_prompt,
        )

    def _record(self, judgments: list[Judgment], pending: list) -> None:
        self.writer.add(calls=pending, judgments=judgments)
        pending.clear()
        failed = sum(1 for j in judgments if j.status != Status.OK)
        for j in judgments:
            self.stats.statuses[j.status] = self.stats.statuses.get(j.status, 0) + 1
        self.stats.recorded += len(judgments)
        self.stats.failures += failed
        self._on_progress(len(judgments), failed, self.cache.gate.summary())


def run_identity(backend: Backend, template: Template, criteria: list[str], spec: RunSpec) -> dict[str, Any]:
    """What defines a run: two runs with equal identities ask the same questions the same way.

    The judge (kind, model, endpoint without credentials), the template's name and a SHA-256
    of its full content (an edited template is a new run even under the same name), the
    criteria, instruction variant, samples, score and query modes, the sampling parameters
    (when text is generated), log-probability and refusal options.

    Args:
        backend: the judge.
        template: the loaded template.
        criteria: the criteria asked.
        spec: the run's settings.

    Returns:
        A JSON-serialisable dict; :meth:`Store.claim_rater` keys rater labels by it.

    Example:
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> identity = run_identity(ScriptedTestJudge(), load_template("chiang-lee-story"), ["likability"], RunSpec())
        >>> identity["judge"], identity["samples"]
        ({'kind': 'scripted-test-double', 'model': 'scripted-test-double'}, 3)
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
    """A judge identity with credentials removed from its URL (user:password@, query string).

    Args:
        identity: a backend's :meth:`~judgelab.models.base.Backend.identity`.

    Returns:
        A copy whose ``base_url`` keeps only scheme, host, port and path.

    Example:
        >>> public_identity({"kind": "openai", "base_url": "http://user:pw@host:8000/v1?key=s"})["base_url"]
        'http://host:8000/v1'
    """
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
    """Run a runner to completion from synchronous code; its backend is closed afterwards.

    Args:
        runner: a :class:`Runner` (its progress callback may be set).
        items: the items to judge.

    Returns:
        The run's :class:`RunStats`.

    Example:
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> runner = Runner(ScriptedTestJudge({"default": "4"}), Store(":memory:"), RunSpec(samples=2))
        >>> run_to_end(runner, [Item("a", "A story.", context="p")]).recorded
        8
    """

    async def main() -> RunStats:
        try:
            return await runner.run(items)
        finally:
            await runner.backend.aclose()

    return asyncio.run(main())


def run_sync(backend: Backend, store: Store, spec: RunSpec, items: list[Item],
             on_progress: Callable[[int, int, str], None] | None = None) -> RunStats:
    """Run a spec to completion from synchronous code (the library's one-call entry point).

    Args:
        backend: the judge (closed afterwards).
        store: the store (ledger and judgments).
        spec: what to ask.
        items: the items to judge.
        on_progress: called with (judgments recorded, of which failed, the retries in words).

    Returns:
        The run's :class:`RunStats`; the ratings are in ``store.ratings(rater=stats.rater)``.

    Example:
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> store = Store(":memory:")
        >>> stats = run_sync(ScriptedTestJudge({"default": "I rate it a 4."}), store, RunSpec(samples=1),
        ...                  [Item("a", "A story.", context="p")])
        >>> store.ratings(rater=stats.rater)["score"].tolist()
        [4.0, 4.0, 4.0, 4.0]
    """
    return run_to_end(Runner(backend, store, spec, on_progress), items)
