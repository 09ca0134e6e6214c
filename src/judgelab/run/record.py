"""Record: an answer is parsed once, becomes one judgment per rating it carries, and goes to the store.

Two ways to score: ``parsed`` extracts the rating from generated text
(:func:`judgelab.parse.parse_judgment`, Chiang & Lee 2023, appendix D.2.1); ``logprob`` reads the
next-token distribution after the template's cue and takes the probability-weighted mean over
the scale's labels (G-Eval). In ``parsed`` mode, when the backend returns log-probabilities, the
expectation at the token that carries the rating is stored beside the parsed score. A call that
ran out of its retry budget is recorded as ``error`` (asked again by the next run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from judgelab.datasets.items import Item
from judgelab.models.base import Choice, JudgeResponse
from judgelab.models.capabilities import LOW_LABEL_MASS
from judgelab.models.retry import CallFailed
from judgelab.logprob_score import expected_score, preference_probability, rating_token_index
from judgelab.parse import (
    ParseResult,
    parse_comparison,
    parse_judgment,
    parse_metric,
    parse_preference,
    parse_structured,
    truncation_checked,
)
from judgelab.prompts import Template
from judgelab.spec import RunSpec
from judgelab.status import Status
from judgelab.store import GroupWriter, Judgment, item_row

__all__ = ["RunStats", "Answer", "Recorder"]


@dataclass
class RunStats:
    """What one run did.

    Attributes:
        rater: the run's rater label.
        total: judgments the run covers (items × outputs × samples).
        already_done: of those, found in the store (not asked again).
        recorded: judgments recorded by this run.
        calls_made: calls the judge answered (ledger hits excluded).
        failed_attempts: attempts of calls that brought no answer (each retried attempt and the last
            of a call given up: :attr:`judgelab.models.retry.CallGate.failed_attempts`).
        cache_hits: calls answered from the ledger.
        failures: recorded judgments whose status is not ``ok``.
        refusals_regenerated: refusals asked again (Chiang & Lee 2023, appendix D.2.1).
        prompt_tokens, completion_tokens: tokens of the calls made.
        wall_s: seconds the run took.
        statuses: recorded judgments by status.
        changed: judgments asked again because their prompt changed since they were recorded.
        retried_errors: judgments asked again because the last run recorded them as ``error``.
        reparsed: judgments an earlier answer parser read, read again from the ledger's answers.
        retries: retries by reason (``rate_limited``, ``server_error``, ``timeout``, ``connection``)
            and ``gave_up`` (calls recorded as ``error``).
        warnings: what the run said on the way (also logged on ``judgelab.run``).
        batches: with ``--execution batch``: batches submitted and resumed, requests submitted,
            resubmitted and given up (:class:`judgelab.run.provider_batch.BatchReport`); empty when live.
        logprob_scored: log-probability judgments recorded from answers.
        low_label_mass: of those, the ones whose scored token put less than half its probability on
            the scale's labels (none at all included): scores that rest on little mass.

    Example:
        >>> RunStats(rater="r").recorded
        0
    """

    rater: str = ""
    total: int = 0
    already_done: int = 0
    recorded: int = 0
    calls_made: int = 0
    failed_attempts: int = 0
    cache_hits: int = 0
    failures: int = 0
    refusals_regenerated: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    changed: int = 0
    retried_errors: int = 0
    reparsed: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    batches: dict[str, int] = field(default_factory=dict)
    logprob_scored: int = 0
    low_label_mass: int = 0


@dataclass(frozen=True)
class Answer:
    """One sample's final answer: the choice, its response, every attempt (refusals included) and,
    in ``parsed`` mode, the parse of the final text (parsed once, here)."""

    choice: Choice
    response: JudgeResponse
    attempts: tuple[dict[str, Any], ...]
    parsed: ParseResult | None


class Recorder:
    """Turns answers into judgments and hands them to the store's group writer.

    Args:
        spec: the run's settings.
        template: the loaded template.
        rater: the run's label.
        meta: the run's settings recorded with every judgment.
        writer: the store's group writer.
        stats: the run's counters (updated as judgments are recorded).
        on_progress: called with (judgments recorded, of which failed) after each record.
    """

    def __init__(self, spec: RunSpec, template: Template, rater: str, meta: dict[str, Any], writer: GroupWriter,
                 stats: RunStats, on_progress: Callable[[int, int], None]) -> None:
        self.spec = spec
        self.template = template
        self.scoring = spec.score_mode == "logprob"
        self.rater = rater
        self.meta = meta
        self.writer = writer
        self.stats = stats
        self.on_progress = on_progress
        self.scale = template.scale
        self.int_scale = (int(self.scale[0]), int(self.scale[1]))
        #: A pairwise verdict: +1 first, -1 second, 0 tie; by log-probabilities 2 p_first - 1 (AlpacaEval's weighting).
        self.preference = template.answer == "preference"
        #: A constrained answer may be a JSON object (a JSON-schema ``response_format``): read its fields first.
        self.structured = spec.constrain and not self.scoring
        #: Items whose text this run has written (each once per run, with its first judgment).
        self.written: set[tuple[str, str]] = set()
        self._items: list[tuple[Any, ...]] = []

    def note_items(self, items: list[Item]) -> None:
        """Queue the ``items`` rows of items not yet written by this run (written with the next record)."""
        for item in items:
            if (item.system, item.item_id) not in self.written:
                self.written.add((item.system, item.item_id))
                self._items.append(item_row(self.rater, item))

    def pending_items(self) -> list[tuple[Any, ...]]:
        """The queued ``items`` rows, handed over (the queue is emptied)."""
        rows, self._items = self._items, []
        return rows

    # -- parsing (once per answer) --------------------------------------------------------------
    def parse(self, choice: Choice) -> tuple[str, ParseResult | None]:
        """(status, parse) of an answer; the execute stage regenerates a ``refusal``."""
        if self.scoring:
            return Status.OK, None
        comparison = self.template.answer == "comparison"
        structured = (parse_structured(choice.text, "answer" if comparison else "score", None if comparison else self.scale)
                      if self.structured else None)
        if structured is not None and (structured.ok or structured.status == Status.OUT_OF_RANGE):
            parsed = structured  # a JSON answer without the field (a multi-metric one) is read as free text
        elif comparison:
            parsed = parse_comparison(choice.text)
        elif self.preference:
            parsed = parse_preference(choice.text)
        else:
            parsed = truncation_checked(parse_judgment(choice.text, self.scale), choice.finish_reason)
        return parsed.status, parsed

    def _metric(self, text: str, metric: str) -> ParseResult:
        """One metric of a multi-metric answer (a JSON object's field when the answer is one)."""
        structured = parse_structured(text, metric, self.scale) if self.structured else None
        return structured if structured is not None else parse_metric(text, metric, self.scale)

    # -- judgments ---------------------------------------------------------------------------
    def judgments(self, item: Item, criterion: str, sample: int, answer: Answer, key: str) -> list[Judgment]:
        """The ratings one answer yields: one per metric of a multi-metric criterion, else one."""
        self.note_items([item])
        metrics = self.template.criteria[criterion].metrics
        if not metrics or self.scoring:
            return [self._judgment(item, criterion, sample, answer, key, answer.parsed)]
        return [self._judgment(item, metric, sample, answer, key, self._metric(answer.choice.text, metric))
                for metric in metrics]

    def failed(self, item: Item, criterion: str, sample: int, exc: CallFailed, key: str) -> list[Judgment]:
        """The ``error`` judgments of a call that ran out of its retry budget."""
        self.note_items([item])
        outputs = [criterion] if self.scoring else self.template.outputs(criterion)
        attempts = [{"key": exc.key, "status": Status.ERROR.value, "error": str(exc)}]
        return [Judgment(item_id=item.item_id, system=item.system, group=item.group, criterion=output, rater=self.rater,
                         sample=sample, score=None, score_parsed=None, score_logprob=None, logprob_outside=None,
                         status=Status.ERROR, raw=str(exc), attempts=attempts, meta=self.meta, prompt_key=key)
                for output in outputs]

    def _judgment(self, item: Item, criterion: str, sample: int, answer: Answer, key: str,
                  parsed: ParseResult | None) -> Judgment:
        choice, response = answer.choice, answer.response
        lp_score = outside = None
        if self.scoring:
            if choice.tokens and self.preference:
                p_first, outside = preference_probability(choice.tokens[0][2])
                lp_score = None if p_first is None else 2 * p_first - 1
            elif choice.tokens:
                lp_score, outside, _ = expected_score(choice.tokens[0][2], self.int_scale)
            parsed_score, status, score = None, (Status.OK if lp_score is not None else Status.NO_LABEL_MASS), lp_score
            self.stats.logprob_scored += 1
            self.stats.low_label_mass += lp_score is None or outside is None or outside > LOW_LABEL_MASS
        else:
            assert parsed is not None
            parsed_score, status, score = parsed.score, parsed.status, parsed.score
            if parsed.score is not None and choice.tokens and float(parsed.score).is_integer() and not self.preference:
                # The distribution at the token that carries the rating itself, located by its
                # position in the answer (not the first token that happens to spell the same digit).
                index = rating_token_index(choice.tokens, choice.text, parsed.start)
                if index is not None:
                    lp_score, outside, _ = expected_score(choice.tokens[index][2], self.int_scale)
        return Judgment(item_id=item.item_id, system=item.system, group=item.group, criterion=criterion,
                        rater=self.rater, sample=sample, score=score, score_parsed=parsed_score, score_logprob=lp_score,
                        logprob_outside=outside, status=status, raw=choice.text, attempts=list(answer.attempts),
                        prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
                        latency_s=response.latency_s, meta=self.meta, prompt_key=key)

    # -- to the store ------------------------------------------------------------------------
    def record(self, judgments: list[Judgment]) -> None:
        """Queue judgments (and the texts of their items, once per run) for the next group commit and count them."""
        if not judgments:
            return
        self.writer.add(judgments=judgments, items=self.pending_items())
        failed = sum(1 for j in judgments if j.status != Status.OK)
        for j in judgments:
            self.stats.statuses[j.status] = self.stats.statuses.get(j.status, 0) + 1
        self.stats.recorded += len(judgments)
        self.stats.failures += failed
        self.on_progress(len(judgments), failed)
