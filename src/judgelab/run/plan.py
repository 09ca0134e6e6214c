"""Plan: every call a run will make, built exactly as it will be sent — no call, no write.

A run crosses items × criteria × samples for one template, instruction variant and judge
(Chiang & Lee 2023, §3.2: the same instruction, sample and question a human rater saw; several
samples as several "annotators"). Two query modes (appendix D.2.2): ``independent`` asks each
criterion in its own conversation; ``conversation`` asks all criteria of one sample in one
conversation, in template order, each turn carrying the earlier questions and answers.

The plan decides what is still to ask from what the store already holds: a judgment recorded
for the same prompt (``prompt_key``) and not ``error`` is done; one recorded for another prompt
(an edited text, context or example) or as ``error`` is asked again. The execute stage
(:mod:`judgelab.run.execute`) runs the plan's jobs; requests are built here for both, so what
``--dry-run`` prints cannot differ from what is sent.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.parse import PARSER_VERSION
from judgelab.prompts import Template
from judgelab.spec import RunSpec
from judgelab.status import Status
from judgelab.store import prompt_key

__all__ = ["PlannedCall", "Job", "RunPlan", "Requests", "make_plan", "ANSWER_PLACEHOLDER", "Messages", "answer_format"]

Messages = tuple[tuple[str, str], ...]

#: In a planned conversation-mode call, stands for an earlier answer the judge has not given yet.
ANSWER_PLACEHOLDER = "<the judge's answer to the previous question>"

#: What the store holds of a rater's judgment: (prompt_key, status, group, parser version), by (criterion, system,
#: item, sample).
Bindings = Mapping[tuple[str, str, str, int], tuple["str | None", str, "str | None", int]]


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

    def answer_format(self, criterion: str) -> AnswerFormat:
        """The criterion's answer format (made once per criterion)."""
        if criterion not in self._formats:
            self._formats[criterion] = answer_format(self.template, criterion)
        return self._formats[criterion]

    def sampling(self, slot: int | str, attempt: int) -> Sampling:
        """The sampling of one call: no generation in score mode; a per-sample seed when a seed is set."""
        s = self.spec.sampling
        if self.scoring:
            return Sampling()  # no text is generated: sampling parameters do not matter
        if s.seed is not None and isinstance(slot, int):
            return s.model_copy(update={"seed": s.seed + slot + 1000 * attempt})
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


@dataclass(frozen=True)
class Job:
    """One unit of scheduled work: an item × criterion (independent) or an item × sample (conversation).

    Attributes:
        item: the item.
        calls: its first calls (independent: one ``n`` call or one per sample; conversation: one per criterion).
        criterion: the criterion (independent mode), else ``None``.
        samples: independent: the samples to record; conversation: ``(sample,)``.
        record: conversation: the criteria to record (every criterion is asked).
    """

    item: Item
    calls: tuple[PlannedCall, ...]
    criterion: str | None = None
    samples: tuple[int, ...] = ()
    record: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will ask, made without calling the judge or writing to the store.

    Counts are of *first calls only*: a refusal regenerated (appendix D.2.1) and the samples
    asked again one by one after a server ignored ``n`` cannot be known before the answers
    are in, so a run may make more calls than planned, never fewer uncached ones.

    Attributes:
        rater: the label the judgments will be stored under.
        calls: the first calls in the order they are scheduled, cached ones included.
        judgments: judgments the run will record (``total - already_done``).
        total: judgments the run covers.
        already_done: judgments found in the store (recorded for the same prompt, not ``error``).
        changed: stored judgments whose prompt changed since (asked again; part of ``judgments``).
        retried_errors: stored ``error`` judgments (asked again; part of ``judgments``).
        reparsed: stored judgments an earlier answer parser read (:data:`judgelab.parse.PARSER_VERSION`):
            asked again, answered by the ledger with no new call, and parsed by today's rules.
        prompts: the rendered prompt of every (system, item_id, criterion).
        jobs: the work, in scheduling order.
        regroup: ``(system, item_id, group)`` of done judgments whose item changed group.
    """

    rater: str
    calls: tuple[PlannedCall, ...]
    judgments: int
    total: int
    already_done: int
    changed: int = 0
    retried_errors: int = 0
    reparsed: int = 0
    prompts: dict[tuple[str, str, str], str] = field(default_factory=dict, repr=False)
    jobs: tuple[Job, ...] = field(default=(), repr=False, compare=False)
    regroup: tuple[tuple[str, str, str | None], ...] = field(default=(), repr=False, compare=False)

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
        for (_, _, criterion), prompt in self.prompts.items():
            out.setdefault(criterion, (("user", prompt),))
        return out

    def prompt_chars(self, include_cached: bool = False) -> int:
        """Characters of the planned calls' messages (an ``n`` call counts its prompt once)."""
        return sum(c.prompt_chars() for c in self.calls if include_cached or not c.cached)


def outputs_of(spec: RunSpec, template: Template, criterion: str) -> list[str]:
    """The ratings one answer to ``criterion`` is recorded as: a multi-metric criterion's metrics
    when the rating is read from text, the criterion itself in log-probability mode."""
    return [criterion] if spec.score_mode == "logprob" else template.outputs(criterion)


def make_plan(spec: RunSpec, template: Template, criteria: list[str], items: list[Item], rater: str,
              bindings: Bindings, requests: Requests, is_cached: Callable[[str], bool], max_n: int) -> RunPlan:
    """Render every prompt and build every first request of a run (pure: its inputs say what the store holds).

    Args:
        spec: the run's settings.
        template: the loaded template (narrowed to ``criteria``).
        criteria: the criteria asked.
        items: the items to judge.
        rater: the run's label.
        bindings: the rater's stored judgments (:meth:`judgelab.store.Store.bindings`).
        requests: the request builder.
        is_cached: whether the ledger answers a key.
        max_n: the most answers the judge returns per request.

    Returns:
        The :class:`RunPlan`.

    Raises:
        JudgelabError: a template field missing from an item (before any call is made).
    """
    prompts = {(item.system, item.item_id, c): template.render(c, item.fields(), spec.variant)
               for item in items for c in criteria}
    counts = {"total": 0, "done": 0, "changed": 0, "error": 0, "reparsed": 0}
    parsed = spec.score_mode != "logprob"  # log-probability scores are not read from the answer's text
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
            elif parsed and found[3] != PARSER_VERSION and state == "done":
                state = "reparsed"
            elif found[2] != item.group:
                regroup[(item.system, item.item_id)] = item.group
        if state == "done":
            counts["done"] += len(outputs)
        elif state in ("changed", "error", "reparsed"):
            counts[state] += len(outputs)
        return state != "done"

    def planned(item: Item, criterion: str, messages: Messages, n: int, slot: int | str, samples: tuple[int, ...],
                exact: bool = True) -> PlannedCall:
        request, extra = (requests.keyed(messages, n, slot, criterion) if exact
                          else requests(messages, n, slot, criterion=criterion))
        return PlannedCall(criterion, item.item_id, item.system, messages, n, samples,
                           cached=exact and is_cached(request.key), key=request.key, exact=exact, request=request,
                           extra=extra)

    jobs: list[Job] = []
    independent: list[tuple[str, Job]] = []
    k = spec.effective_samples
    for item in items:
        if spec.query_mode == "conversation":
            for s in range(k):
                turn_calls: list[PlannedCall] = []
                todo: list[str] = []
                history: Messages = ()
                exact = True
                for c in criteria:  # every criterion is asked: later turns carry the earlier ones
                    turn = history + (("user", prompts[(item.system, item.item_id, c)]),)
                    turn_calls.append(planned(item, c, turn, 1, s, (s,), exact))
                    if to_ask(item, outputs_of(spec, template, c), s, prompt_key(turn)):
                        todo.append(c)
                    history, exact = turn + (("assistant", ANSWER_PLACEHOLDER),), False
                if todo:
                    jobs.append(Job(item, tuple(turn_calls), samples=(s,), record=frozenset(todo)))
            continue
        for criterion in criteria:
            prompt = prompts[(item.system, item.item_id, criterion)]
            messages: Messages = (("user", prompt),)
            key = prompt_key(messages)
            outputs = outputs_of(spec, template, criterion)
            todo_samples = tuple(s for s in range(k) if to_ask(item, outputs, s, key))
            if not todo_samples:
                continue
            calls: tuple[PlannedCall, ...]
            single = lambda: tuple(planned(item, criterion, messages, 1, s, (s,)) for s in todo_samples)  # noqa: E731
            if len(todo_samples) == k and k > 1 and max_n >= k:
                calls = (planned(item, criterion, messages, k, f"n{k}", todo_samples),)  # one call for all k samples
                recorded = any((o, item.system, item.item_id, s) in bindings for o in outputs for s in todo_samples)
                if recorded and not calls[0].cached:  # answered one sample per call before (a resumed run): the ledger has those
                    singles = single()
                    calls = singles if all(c.cached for c in singles) else calls
            else:
                calls = single()
            independent.append((prompt, Job(item, calls, criterion=criterion, samples=todo_samples)))
    # Independent prompts in sorted order: neighbours share the longest prefixes, which a backend
    # with a prefix cache (the embedded judge) evaluates once.
    jobs.extend(job for _, job in sorted(independent, key=lambda pair: pair[0]))
    total, already = counts["total"], counts["done"]
    return RunPlan(rater=rater, calls=tuple(c for job in jobs for c in job.calls), judgments=total - already, total=total,
                   already_done=already, changed=counts["changed"], retried_errors=counts["error"],
                   reparsed=counts["reparsed"], prompts=prompts,
                   jobs=tuple(jobs), regroup=tuple((s, i, g) for (s, i), g in regroup.items()))
