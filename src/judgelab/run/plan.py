"""Plan: every call a run will make, built exactly as it will be sent — no call, no write.

A run crosses items × criteria × samples for one template, instruction variant and judge
(Chiang & Lee 2023, §3.2: the same instruction, sample and question a human rater saw; several
samples as several "annotators"). Two query modes (appendix D.2.2): ``independent`` asks each
criterion in its own conversation; ``conversation`` asks all criteria of one sample in one
conversation, in template order, each turn carrying the earlier questions and answers.

The plan (made by :func:`judgelab.run.todo.make_plan`) decides what is still to ask from what the
store already holds: a judgment recorded for the same prompt (``prompt_key``) and not ``error`` is
done; one recorded for another prompt (an edited text, context or example) or as ``error`` is asked
again. The execute stage (:mod:`judgelab.run.execute`) runs the plan's jobs; a job's calls are built
here (:class:`Calls`) for both, so what ``--dry-run`` prints cannot differ from what is sent.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, NamedTuple

from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.prompts import Template
from judgelab.spec import RunSpec

__all__ = ["PlannedCall", "Job", "Calls", "RunPlan", "Requests", "ANSWER_PLACEHOLDER", "Messages", "answer_format",
           "outputs_of"]

Messages = tuple[tuple[str, str], ...]

#: The sampling of score-mode calls (frozen: one object serves every call).
_NO_SAMPLING = Sampling()

#: In a planned conversation-mode call, stands for an earlier answer the judge has not given yet.
ANSWER_PLACEHOLDER = "<the judge's answer to the previous question>"


def answer_format(template: Template, criterion: str) -> AnswerFormat:
    """The answer format of a constrained call (``--constrain``): the template's scale (whole points),
    the criterion's metrics, or a Yes / No / Neutral comparison.

    Raises:
        JudgelabError: the scale's ends are not whole numbers (a grammar or schema of points needs them).

    Example:
        >>> from judgelab.prompts import load_template
        >>> answer_format(load_template("nle-esnli"), "quality")
        AnswerFormat(kind='rating', low=1, high=7, metrics=('informativeness', 'clarity'))
    """
    if template.answer == "comparison":
        return AnswerFormat("comparison", 0, 0)
    if template.answer == "preference":
        raise JudgelabError(f"template {template.name!r} asks for a pairwise verdict ([[A]], [[B]], [[tie]]): --constrain "
                            "is offered for ratings and Yes/No comparisons; leave it out")
    lo, hi = (float(v) for v in template.scale_of(criterion))
    if not (lo.is_integer() and hi.is_integer()):
        raise JudgelabError(f"template {template.name!r}: --constrain needs a scale of whole numbers, not {lo:g}-{hi:g}")
    return AnswerFormat("rating", int(lo), int(hi), tuple(template.criteria[criterion].metrics))


class Requests:
    """Builds every request of a run (planning and executing use this one builder).

    Args:
        spec: the run's settings.
        template: the loaded template (its log-probability cue).
        key: the ledger's key function ``(request, **extra) -> (key, json)``.

    Example:
        >>> from judgelab.prompts import load_template
        >>> from judgelab.digest import keyed_json
        >>> spec = RunSpec(judge="openai:m", samples=2, sampling={"temperature": 0.7, "seed": 10})
        >>> build = Requests(spec, load_template("chiang-lee-story"), lambda r, **e: keyed_json(e))
        >>> request, extra = build((("user", "Rate it."),), 1, 1)
        >>> request.sampling.seed, extra["slot"], extra["attempt"]
        (11, 1, 0)
    """

    def __init__(self, spec: RunSpec, template: Template, key: Callable[..., tuple[str, str]]) -> None:
        self.spec = spec
        self.scoring = spec.score_mode == "logprob"
        self.cue = template.logprob_cue if self.scoring else None
        self.key = key
        self.template = template
        #: Whether calls carry an answer format (``constrain``; generated answers only).
        self.constrained = spec.constrain and not self.scoring
        self._formats: dict[str, AnswerFormat] = {}
        self._seeded: dict[tuple[int, int], Sampling] = {}

    def answer_format(self, criterion: str) -> AnswerFormat:
        """The criterion's answer format (made once per criterion)."""
        if criterion not in self._formats:
            self._formats[criterion] = answer_format(self.template, criterion)
        return self._formats[criterion]

    def sampling(self, slot: int | str, attempt: int) -> Sampling:
        """The sampling of one call: no generation in score mode; a per-sample seed when a seed is set."""
        s = self.spec.sampling
        if self.scoring:
            return _NO_SAMPLING  # no text is generated: sampling parameters do not matter
        if s.seed is not None and isinstance(slot, int):
            seeded = self._seeded.get((slot, attempt))
            if seeded is None:  # one object per sample and attempt (the ledger keys a request's frame once)
                seeded = self._seeded[(slot, attempt)] = s.model_copy(update={"seed": s.seed + slot + 1000 * attempt})
            return seeded
        return s

    def __call__(self, messages: Messages, n: int, slot: int | str, attempt: int = 0,
                 criterion: str | None = None) -> tuple[JudgeRequest, dict[str, Any]]:
        """(request without its key, the extra fields of its ledger key).

        Args:
            messages: the chat turns.
            n: answers asked for.
            slot: the sample number, or ``"n<k>"`` for one call answering all k samples.
            attempt: 0, or the number of the refusal regeneration.
            criterion: the criterion asked (its answer format, with ``constrain``).
        """
        fmt = None
        if self.constrained:
            if criterion is None:
                raise JudgelabError("a constrained call needs its criterion (its answer format)")
            fmt = self.answer_format(criterion)
        request = JudgeRequest(messages=messages, sampling=self.sampling(slot, attempt), n=n,
                               top_logprobs=0 if self.scoring else self.spec.top_logprobs, score_cue=self.cue,
                               answer_format=fmt)
        extra: dict[str, Any] = {"top_logprobs": request.top_logprobs, "score_cue": request.score_cue, "slot": slot,
                                 "attempt": attempt}
        if fmt is not None:  # only when constrained: the keys of free calls stay those of earlier versions
            extra["answer_format"] = fmt.to_json()
        return request, extra

    def keyed(self, messages: Messages, n: int, slot: int | str,
              criterion: str | None = None) -> tuple[JudgeRequest, dict[str, Any]]:
        """A first request with its ledger key set (what :class:`PlannedCall` carries)."""
        request, extra = self(messages, n, slot, criterion=criterion)
        return dataclasses.replace(request, key=self.key(request, **extra)[0]), extra


@dataclass(frozen=True)
class PlannedCall:
    """One first call of a planned run, built exactly as the run sends it.

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
        request: the request itself (sampling parameters, log-probability options, key).

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
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def prompt_chars(self) -> int:
        """Characters of all messages of the call (a proxy for its prompt tokens)."""
        return sum(len(text) for _, text in self.messages)


class Job(NamedTuple):
    """One unit of scheduled work: an item × criterion (independent) or an item × sample (conversation).

    A job holds no rendered text and no request: :meth:`Calls.of` builds its calls from it when it is
    sent (and for ``--dry-run``), so a plan of a million jobs is a million small tuples.

    Attributes:
        item: the item.
        criterion: the criterion (independent mode), else ``None``.
        samples: independent: the samples to record; conversation: ``(sample,)``.
        n: independent: answers asked in its first call (all samples in one call when > 1, else one call
            per sample); conversation: 1.
        record: conversation: the criteria to record (every criterion is asked).
    """

    item: Item
    criterion: str | None
    samples: tuple[int, ...]
    n: int = 1
    record: frozenset[str] = frozenset()


class Calls:
    """Builds a job's first calls (the one code path of both ``--dry-run`` and the execute stage).

    Args:
        spec: the run's settings.
        template: the loaded template.
        criteria: the criteria asked (conversation mode asks them in this order).
        requests: the request builder.
        is_cached: whether the ledger answers a key.
    """

    def __init__(self, spec: RunSpec, template: Template, criteria: list[str], requests: Requests,
                 is_cached: Callable[[str], bool]) -> None:
        self.spec, self.template, self.criteria = spec, template, criteria
        self.requests, self.is_cached = requests, is_cached

    def prompt(self, item: Item, criterion: str) -> str:
        """The rendered prompt of an item and criterion."""
        return self.template.render(criterion, item.fields(), self.spec.variant)

    def of(self, job: Job, keyed: bool = True) -> tuple[PlannedCall, ...]:
        """The job's first calls; with ``keyed`` their ledger keys and whether the ledger answers them
        (for the plan's counts; the ledger keys a call again when it is sent)."""
        item = job.item
        if job.criterion is None:  # conversation: every criterion, each turn carrying the earlier ones
            s = job.samples[0]
            calls: list[PlannedCall] = []
            history: Messages = ()
            for i, c in enumerate(self.criteria):
                turn = history + (("user", self.prompt(item, c)),)
                calls.append(self._planned(item, c, turn, 1, s, (s,), keyed, exact=i == 0))
                history = turn + (("assistant", ANSWER_PLACEHOLDER),)
            return tuple(calls)
        criterion = job.criterion
        messages: Messages = (("user", self.prompt(item, criterion)),)
        if job.n > 1:
            return (self._planned(item, criterion, messages, job.n, f"n{job.n}", job.samples, keyed),)
        return tuple(self._planned(item, criterion, messages, 1, s, (s,), keyed) for s in job.samples)

    def _planned(self, item: Item, criterion: str, messages: Messages, n: int, slot: int | str,
                 samples: tuple[int, ...], keyed: bool, exact: bool = True) -> PlannedCall:
        if keyed and exact:
            request, extra = self.requests.keyed(messages, n, slot, criterion)
        else:
            request, extra = self.requests(messages, n, slot, criterion=criterion)
        cached = keyed and exact and self.is_cached(request.key)
        return PlannedCall(criterion, item.item_id, item.system, messages, n, samples, cached=cached,
                           key=request.key if keyed else "", exact=exact, request=request, extra=extra)


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will ask, made without calling the judge or writing to the store.

    Counts are of *first calls only*: a refusal regenerated (appendix D.2.1) and the samples
    asked again one by one after a server ignored ``n`` cannot be known before the answers
    are in, so a run may make more calls than planned, never fewer uncached ones.

    What a plan holds while its run goes is its :class:`Job` tuples (an item, a criterion, samples):
    no rendered prompt and no request. :attr:`calls` builds them (with :meth:`Calls.of`, as the
    execute stage does when it sends each job) when it is first read.

    Attributes:
        rater: the label the judgments will be stored under.
        judgments: judgments the run will record (``total - already_done``).
        total: judgments the run covers.
        already_done: judgments found in the store (recorded for the same prompt, not ``error``).
        changed: stored judgments whose prompt changed since (asked again; part of ``judgments``).
        retried_errors: stored ``error`` judgments (asked again; part of ``judgments``).
        reparsed: stored judgments an earlier answer parser read (:data:`judgelab.parse.PARSER_VERSION`):
            asked again, answered by the ledger with no new call, and parsed by today's rules.
        jobs: the work, in scheduling order.
        regroup: ``(system, item_id, group)`` of done judgments whose item changed group.
        calls_of: builds a job's calls.
        first_item: the first item (the prompt shown for a criterion with nothing left to ask).
        finished_items: the items with nothing left to ask.
    """

    rater: str
    judgments: int
    total: int
    already_done: int
    changed: int = 0
    retried_errors: int = 0
    reparsed: int = 0
    jobs: tuple[Job, ...] = field(default=(), repr=False, compare=False)
    regroup: tuple[tuple[str, str, str | None], ...] = field(default=(), repr=False, compare=False)
    calls_of: Calls | None = field(default=None, repr=False, compare=False)
    first_item: Item | None = field(default=None, repr=False, compare=False)
    finished_items: tuple[Item, ...] = field(default=(), repr=False, compare=False)

    @cached_property
    def calls(self) -> tuple[PlannedCall, ...]:
        """The first calls in the order they are scheduled, cached ones included (built when first read)."""
        if self.calls_of is None:
            return ()
        return tuple(c for job in self.jobs for c in self.calls_of.of(job))

    @property
    def n_calls(self) -> int:
        """First calls that would be sent to the judge (those the ledger does not answer)."""
        return sum(1 for c in self.calls if not c.cached)

    def first_prompt_per_criterion(self) -> dict[str, Messages]:
        """Criterion → the messages of its first planned call (exactly as sent), for ``--dry-run``.

        A criterion with no call left (all done) gets its first item's rendered prompt as one user turn.
        """
        out: dict[str, Messages] = {}
        for call in self.calls:
            out.setdefault(call.criterion, call.messages)
        if self.calls_of is not None and self.first_item is not None:
            for criterion in self.calls_of.criteria:
                if criterion not in out:
                    out[criterion] = (("user", self.calls_of.prompt(self.first_item, criterion)),)
        return out

    def prompt_chars(self, include_cached: bool = False) -> int:
        """Characters of the planned calls' messages (an ``n`` call counts its prompt once)."""
        return sum(c.prompt_chars() for c in self.calls if include_cached or not c.cached)


def outputs_of(spec: RunSpec, template: Template, criterion: str) -> list[str]:
    """The ratings one answer to ``criterion`` is recorded as: a multi-metric criterion's metrics
    when the rating is read from text, the criterion itself in log-probability mode."""
    return [criterion] if spec.score_mode == "logprob" else template.outputs(criterion)
