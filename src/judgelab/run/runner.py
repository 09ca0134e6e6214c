"""The run core's front: one spec, one judge, one store — claim the label, plan, execute, record.

:class:`Runner` ties the stages together (:mod:`~judgelab.run.plan`,
:mod:`~judgelab.run.execute`, :mod:`~judgelab.run.record`) and :func:`run_spec` is the one
synchronous entry point. Every call goes through the ledger (:class:`~judgelab.models.cache.CachedJudge`):
a call whose key is stored is never made again, so re-running or resuming after a kill repeats
no finished call.
"""
from __future__ import annotations

import asyncio
import gc
import time
from typing import Callable

from judgelab.datasets.items import Item
from judgelab.models.base import Backend
from judgelab.models.cache import Answerer, CachedJudge
from judgelab.models.retry import CallGate
from judgelab.progress import Advance, progress_display
from judgelab.prompts import Template, load_template
from judgelab.run.execute import Executor
from judgelab.parse import PARSER_VERSION
from judgelab.run.identity import identity_digest, run_identity
from judgelab.run.plan import RunPlan, Requests, outputs_of
from judgelab.run.todo import make_plan
from judgelab.run.record import Recorder, RunStats
from judgelab.run.runlog import RunLog, outcome_of
from judgelab.spec import RunSpec
from judgelab.store import GroupWriter, Store

__all__ = ["Runner", "run_spec"]


class Runner:
    """Runs one spec for one judge into one store: plan, execute, record.

    :meth:`plan` renders every prompt and builds every first request (no call, no write);
    :meth:`run` claims the rater label and executes that same plan. The runner prints nothing:
    warnings are logged on ``judgelab.run`` and kept in ``stats.warnings``.

    Args:
        backend: the judge (its kind decides ``score="auto"``).
        store: the store (ledger and judgments).
        spec: what to ask.
        on_progress: ``advance(judgments recorded, of which failed, retries in words)``.
        template: a loaded template (else ``spec.template`` is loaded).
        executor: what answers calls the ledger does not hold (default: the live gate around
            the backend); the scale-out executors plug in here.

    Raises:
        JudgelabError: unknown criteria or variant, or a forced ``--rater`` used before with
            other settings.

    Example:
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> store = Store(":memory:")
        >>> runner = Runner(ScriptedTestJudge({"default": "Rating: 4"}), store, RunSpec(samples=1))
        >>> stats = asyncio.run(runner.run([Item("a", "Once upon a time.", context="a prompt")]))
        >>> stats.recorded, stats.calls_made, set(store.ratings()["score"])
        (4, 4, {4.0})
    """

    def __init__(self, backend: Backend, store: Store, spec: RunSpec, on_progress: Advance | None = None,
                 template: Template | None = None, executor: Answerer | None = None) -> None:
        self.backend = backend
        self.store = store
        self.spec = spec = spec.resolved(backend.kind)
        template = template or load_template(spec.template)
        self.criteria = spec.criteria or list(template.criteria)
        template.check(self.criteria, spec.variant)
        self.template = template.for_criteria(self.criteria)  # per-criterion scales (G-Eval)
        self.samples = spec.effective_samples
        self.identity = run_identity(spec, backend.identity(), self.template, self.criteria)
        self._preferred = spec.preferred_label(backend.model_id, self.template.name)
        # Read only: the label is written when the run starts (a plan writes nothing).
        self.rater = store.claim_rater(self.identity, self._preferred, forced=spec.rater is not None, record=False)
        #: Ratings one sample of one item yields over all criteria (multi-metric criteria yield several).
        self.outputs_per_sample = sum(len(outputs_of(spec, self.template, c)) for c in self.criteria)
        self.stats = RunStats(rater=self.rater)
        #: The label is claimed in the store (the run started): its run is logged when it ends.
        self.claimed = False
        self.on_progress: Advance = on_progress or _no_progress
        #: The run's entry in the store's run log (set by :func:`run_spec`): its plan and progress are written there.
        self.run_log: RunLog | None = None
        self.width = spec.concurrency or backend.capabilities.concurrency
        self.writer = GroupWriter(store)
        self.ledger = CachedJudge(backend, store, writer=self.writer, gate=CallGate(backend.retry_policy, self.width),
                                  executor=executor)
        self.requests = Requests(spec, self.template, self.ledger.key)
        if self.requests.constrained:  # refused before any work: no mechanism, or a scale without whole points
            if not backend.capabilities.constrain:
                from judgelab.errors import CapabilityError

                raise CapabilityError(f"the {backend.kind} judge {backend.model_id!r} cannot constrain its answers "
                                      "(--constrain needs the embedded judge or an OpenAI-compatible chat endpoint)")
            for criterion in self.criteria:
                self.requests.answer_format(criterion)
        self.meta = {"run": identity_digest(self.identity), "template": self.template.name, "variant": spec.variant,
                     "judge": backend.identity(), "sampling": spec.sampling.model_dump(), "score_mode": spec.score_mode,
                     "query_mode": spec.query_mode, "parser": PARSER_VERSION,
                     **({"constrain": backend.capabilities.constrain} if self.requests.constrained else {})}

    @property
    def total(self) -> int:
        """Judgments a run over ``n`` items covers per item (outputs × samples)."""
        return self.outputs_per_sample * self.samples

    def plan(self, items: list[Item], calls: bool = True) -> RunPlan:
        """Decide what is left to ask and build every first request, without calling the judge or writing.

        Args:
            items: the items to judge.
            calls: build the plan's :attr:`~judgelab.run.plan.RunPlan.calls` now, with the ledger's look-ups
                (``--dry-run``); without, the plan holds its jobs only and the run builds each job's calls
                when it sends them.

        Returns:
            The :class:`~judgelab.run.plan.RunPlan` that :meth:`run` executes.

        Example:
            >>> from judgelab.models.backends.scripted import ScriptedTestJudge
            >>> judge = ScriptedTestJudge()
            >>> plan = Runner(judge, Store(":memory:"), RunSpec(samples=3)).plan([Item("a", "A story.", context="p")])
            >>> plan.n_calls, plan.judgments, len(judge.calls)
            (4, 12, 0)
        """
        learned, max_n = self.backend.learned, self.backend.capabilities.max_n
        parser = PARSER_VERSION if self.spec.score_mode != "logprob" else None  # log-probability scores are not parsed
        plan = make_plan(self.spec, self.template, self.criteria, items, self.rater,
                         lambda rows: self.store.unsettled(self.rater, rows, parser), self.requests,
                         self.ledger.is_cached, learned.max_n(max_n) if learned is not None else max_n)
        if calls:
            _ = plan.calls  # built while the store is open (it answers whether the ledger holds each call)
        return plan

    def claim(self) -> str:
        """Claim the run's rater label in the store (written: the run starts) and return it."""
        self.rater = self.store.claim_rater(self.identity, self._preferred, forced=self.spec.rater is not None)
        self.stats.rater = self.rater
        self.claimed = True
        return self.rater

    async def run(self, items: list[Item]) -> RunStats:
        """Claim the rater label, plan, and execute the plan; finished work is never lost.

        Args:
            items: the items to judge.

        Returns:
            The run's :class:`~judgelab.run.record.RunStats`.

        Raises:
            JudgelabError: bad input, an unwritable store, an unreachable judge.
        """
        start = time.perf_counter()
        self.claim()
        plan = self.plan(items, calls=False)
        s = self.stats
        s.total += plan.total
        s.already_done += plan.already_done
        s.changed += plan.changed
        s.retried_errors += plan.retried_errors
        s.reparsed += plan.reparsed
        recorder = Recorder(self.spec, self.template, self.rater, self.meta, self.writer, s, self._advance)
        executor = Executor(self.ledger, self.requests, recorder, s, self.spec.max_refusal_retries)
        # the texts of items judged before (nothing left to ask) now; the others with their first judgment
        recorder.note_items(list(plan.finished_items))
        self.writer.add(items=recorder.pending_items())
        if plan.changed:
            executor.warn(f"{plan.changed} judgment(s) of {self.rater} were recorded for another prompt (an edited "
                          "text, context or example): asked again")
        if plan.reparsed:
            executor.warn(f"{plan.reparsed} judgment(s) of {self.rater} were read by an earlier version of the answer "
                          "parser: read again from their recorded answers")
        self.store.regroup(self.rater, plan.regroup)
        self.on_progress(plan.already_done, 0, "")
        if self.run_log is not None:
            self.run_log.begin(self.rater, plan.total, plan.already_done)
        learned = self.backend.learned
        ticker = asyncio.create_task(self.run_log.ticking(lambda: dict(self.ledger.gate.counts))) \
            if self.run_log is not None else None
        # What is alive now (the items, the plan's jobs) stays alive to the end: the collector need not walk
        # it on every full collection. Not when the program froze objects of its own (it unfreezes them).
        frozen = gc.get_freeze_count() == 0
        if frozen:
            gc.freeze()
        try:
            await executor.run(plan, self.width)
            advice = learned.label_mass_advice(s.low_label_mass, s.logprob_scored) if learned is not None else None
            if advice:
                executor.warn(advice)
        finally:
            if frozen:
                gc.unfreeze()
            if ticker is not None:
                ticker.cancel()
            if learned is not None:
                limit = self.ledger.gate.limit
                learned.saw_concurrency(limit.ceiling, limit.lowest, limit.current)
            self.writer.flush()  # nothing finished is left unwritten, on success or failure
            s.calls_made, s.cache_hits = self.ledger.calls_made, self.ledger.cache_hits
            s.prompt_tokens, s.completion_tokens = self.ledger.prompt_tokens, self.ledger.completion_tokens
            s.retries = dict(self.ledger.gate.counts)
            s.failed_attempts = self.ledger.gate.failed_attempts
            s.wall_s = time.perf_counter() - start
        return s

    def _advance(self, done: int, failed: int) -> None:
        if self.run_log is not None:
            self.run_log.advance(done, failed)
        self.on_progress(done, failed, self.ledger.gate.summary())


async def _batched(runner: Runner, items: list[Item], advance: Advance) -> RunStats:
    """``--execution batch``: the batch rounds answer what the ledger lacks, then the run records from the ledger."""
    from judgelab.run.provider_batch import run_batches, unanswered

    start = time.perf_counter()
    if runner.run_log is not None:  # the entry is open while the batches run: the live view shows their progress
        runner.run_log.begin(runner.claim(), len(items) * runner.total, 0)
    report = await run_batches(runner, items, on_note=lambda note: advance(0, 0, note))
    runner.ledger.executor = unanswered(report)  # nothing is called live: a call without an answer is an error
    stats = await runner.run(items)
    stats.calls_made += report.answered
    stats.cache_hits = max(0, stats.cache_hits - report.answered)
    stats.prompt_tokens += report.prompt_tokens
    stats.completion_tokens += report.completion_tokens
    stats.batches = report.to_dict()
    stats.wall_s = time.perf_counter() - start
    for note in report.notes:
        stats.warnings.append(note)
    return stats


def _no_progress(done: int, failed: int, note: str = "") -> None:
    return None


def run_spec(spec: RunSpec, items: list[Item], store: Store, *, backend: Backend | None = None,
        template: Template | None = None, progress: bool = False, label: str | None = None,
        executor: Callable[[Backend], Answerer] | None = None) -> RunStats:
    """Run a spec over items into a store, to the end (the run core's one synchronous entry point).

    Args:
        spec: what to ask (its judge is built unless ``backend`` is given).
        items: the items to judge.
        store: the store (ledger and judgments).
        backend: a judge already built (closed afterwards either way).
        template: a loaded template (else ``spec.template``).
        progress: advance the installed progress display (:mod:`judgelab.progress`).
        label: the progress display's label.
        executor: makes the executor of calls the ledger does not hold, from the backend (default: live).

    Returns:
        The run's :class:`~judgelab.run.record.RunStats`; the ratings are in ``store.ratings(rater=stats.rater)``.

    Example:
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> store = Store(":memory:")
        >>> stats = run_spec(RunSpec(samples=1), [Item("a", "A story.", context="p")], store,
        ...             backend=ScriptedTestJudge({"default": "I rate it a 4."}))
        >>> store.ratings(rater=stats.rater)["score"].tolist()
        [4.0, 4.0, 4.0, 4.0]
    """
    judge = backend if backend is not None else spec.judge.build()

    async def main() -> RunStats:
        runner: Runner | None = None
        run_log = RunLog(store, time.time())
        start = time.perf_counter()
        try:
            runner = Runner(judge, store, spec, template=template, executor=executor(judge) if executor else None)
            runner.run_log = run_log
            with progress_display(len(items) * runner.total, label or f"judging ({judge.model_id})",
                                  enabled=progress) as advance:
                runner.on_progress = advance
                if spec.execution == "batch" and executor is None:
                    stats = await _batched(runner, items, advance)
                else:
                    stats = await runner.run(items)
        except BaseException as exc:  # a failed or interrupted run is logged too (what it called was paid for)
            if runner is not None and runner.claimed:
                _log_run(run_log, runner, time.perf_counter() - start, outcome_of(exc))
            raise
        finally:
            await judge.aclose()
        _log_run(run_log, runner, stats.wall_s)
        return stats

    return asyncio.run(main())


def _log_run(run_log: RunLog, runner: Runner, wall_s: float, outcome: str = "finished") -> None:
    """The end of the run in its run-log entry (:meth:`judgelab.run.runlog.RunLog.end`)."""
    s = runner.stats
    run_log.end(s.rater, s.wall_s, wall_s, s.calls_made, s.prompt_tokens, s.completion_tokens,
                dict(runner.ledger.gate.counts), outcome)
