"""What is left to ask: a run's plan, from its items and what the store holds of its rater.

A judgment is one ``unit`` of the plan: an item × criterion × sample (its outputs: the criterion, or a
multi-metric criterion's metrics, recorded from one answer). The store compares the planned units with
its judgments in SQL (:meth:`judgelab.store.Store.unsettled`) and returns only the units that are not
plainly done — nothing stored, another prompt, ``error``, an earlier answer parser, another group —
so a rerun of a million done judgments reads no million rows into Python, and a first run (nothing
stored for the rater) compares nothing. Each returned unit is then decided here, by the same rule
for every unit:

* an output not stored: asked (``new``);
* stored for another prompt: asked again (``changed``);
* stored as ``error``: asked again (``retried_errors``);
* read by an earlier answer parser: asked again, answered by the ledger (``reparsed``);
* done, but its item's group changed: the stored judgments' group is set (``regroup``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional

from judgelab.datasets.items import Item
from judgelab.parse import PARSER_VERSION
from judgelab.prompts import Template
from judgelab.run.plan import Calls, Job, Messages, RunPlan, Requests, outputs_of
from judgelab.spec import RunSpec
from judgelab.status import Status
from judgelab.store import prompt_key

__all__ = ["make_plan", "PlannedRow", "Found", "Unsettled"]

#: One planned output of a unit: (unit, output, system, item_id, sample, prompt key, group).
PlannedRow = tuple[int, str, str, str, int, str, Optional[str]]
#: What the store holds of one output: (prompt key, status, group, parser version as stored), or None.
Found = Optional[tuple[Optional[str], str, Optional[str], Any]]
#: The store's comparison: planned rows in → ``(unit, planned prompt key, found)`` of every output of each
#: unit that is not plainly done, in planned order; ``None`` when the rater has nothing stored (the rows
#: are not read).
Unsettled = Callable[[Iterable[PlannedRow]], Optional[Iterator[tuple[int, str, Found]]]]


class _Left:
    """The units to ask and the counts of why (filled from the store's unsettled rows)."""

    def __init__(self) -> None:
        self.asked: set[int] | None = set()  # None: every unit (nothing stored)
        self.recorded: set[int] = set()  # item × criterion pairs with a stored output among units asked
        self.counts = {"changed": 0, "error": 0, "reparsed": 0, "asked": 0}
        self.regroup: dict[tuple[str, str], str | None] = {}

    def decide(self, unit: int, item: Item, key: str, found: list[Found], parsed: bool, samples: int) -> None:
        """One unit (planned for prompt ``key``) from every one of its outputs as stored (in output order)."""
        state = "done"
        for row in found:
            if row is None:
                state = "new"
                break
            if row[0] != key:
                state = "changed"
            elif row[1] == Status.ERROR and state == "done":
                state = "error"
            elif parsed and int(row[3] or 1) != PARSER_VERSION and state == "done":
                state = "reparsed"
            elif row[2] != item.group:
                self.regroup[(item.system, item.item_id)] = item.group
        if state == "done":
            return
        assert self.asked is not None
        self.asked.add(unit)
        self.counts["asked"] += len(found)
        if state != "new":
            self.counts[state] += len(found)
        if any(row is not None for row in found):
            self.recorded.add(unit // samples)


def make_plan(spec: RunSpec, template: Template, criteria: list[str], items: list[Item], rater: str,
              unsettled: Unsettled, requests: Requests, is_cached: Callable[[str], bool], max_n: int) -> RunPlan:
    """Decide what is left to ask and build the run's jobs (pure: ``unsettled`` says what the store holds).

    Args:
        spec: the run's settings.
        template: the loaded template (narrowed to ``criteria``).
        criteria: the criteria asked.
        items: the items to judge.
        rater: the run's label.
        unsettled: the store's comparison of planned judgments with stored ones
            (:meth:`judgelab.store.Store.unsettled` for the rater).
        requests: the request builder.
        is_cached: whether the ledger answers a key.
        max_n: the most answers the judge returns per request.

    Returns:
        The :class:`~judgelab.run.plan.RunPlan`: its jobs hold no rendered text.

    Raises:
        JudgelabError: a template field missing from an item (before any call is made).
    """
    calls = Calls(spec, template, criteria, requests, is_cached)
    k, n_criteria = spec.effective_samples, len(criteria)
    outputs = {c: outputs_of(spec, template, c) for c in criteria}
    conversation = spec.query_mode == "conversation"
    left = _left(calls, items, outputs, k, conversation, unsettled, parsed=spec.score_mode != "logprob")
    total = len(items) * k * sum(len(o) for o in outputs.values())
    samples_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # one tuple object per distinct samples tuple
    record_of: dict[frozenset[str], frozenset[str]] = {}
    jobs: list[Job] = []
    finished: list[Item] = []  # items with nothing left to ask
    order = _PromptOrder()
    asked = left.asked
    for i, item in enumerate(items):
        before = len(jobs)
        for s in range(k) if conversation else ():
            todo = frozenset(c for ci, c in enumerate(criteria) if asked is None or (i * n_criteria + ci) * k + s in asked)
            if todo:
                jobs.append(Job(item, None, samples_of.setdefault((s,), (s,)), 1, record_of.setdefault(todo, todo)))
        for ci, criterion in enumerate(() if conversation else criteria):
            pair = i * n_criteria + ci
            todo_samples = tuple(s for s in range(k) if asked is None or pair * k + s in asked)
            if not todo_samples:
                continue
            n = k if len(todo_samples) == k and k > 1 and max_n >= k else 1  # one call for all k samples
            if n > 1 and pair in left.recorded:  # answered one sample per call before (a resumed run)
                whole = calls.of(Job(item, criterion, todo_samples, n))
                if not whole[0].cached and all(c.cached for c in calls.of(Job(item, criterion, todo_samples, 1))):
                    n = 1  # the ledger has those
            jobs.append(Job(item, criterion, samples_of.setdefault(todo_samples, todo_samples), n))
            order.add(calls.prompt(item, criterion))
        if len(jobs) == before:
            finished.append(item)
    if len(order):  # independent prompts in sorted order: neighbours share the longest prefixes, which a
        # backend with a prefix cache (the embedded judge) evaluates once; the prompts are not kept
        ranked = order.sorted(lambda j: calls.prompt(jobs[j].item, jobs[j].criterion or ""))
        jobs = [jobs[j] for j in ranked]
    done = total - (total if asked is None else left.counts["asked"])
    return RunPlan(rater=rater, judgments=total - done, total=total, already_done=done, changed=left.counts["changed"],
                   retried_errors=left.counts["error"], reparsed=left.counts["reparsed"], jobs=tuple(jobs),
                   regroup=tuple((s, i, g) for (s, i), g in left.regroup.items()), calls_of=calls,
                   first_item=items[0] if items else None, finished_items=tuple(finished))


def _left(calls: Calls, items: list[Item], outputs: dict[str, list[str]], k: int, conversation: bool,
          unsettled: Unsettled, parsed: bool) -> _Left:
    """The units to ask: the store compares every planned output with what it holds (see the module)."""
    criteria = calls.criteria
    keys: list[str] = []  # the prompt keys of the item whose rows are being read (one item at a time)

    def rows() -> Iterator[PlannedRow]:
        for i, item in enumerate(items):
            keys.clear()
            history: Messages = ()
            for c in criteria:  # conversation: a turn's key is that of every question up to it (answers left out)
                history = (history if conversation else ()) + (("user", calls.prompt(item, c)),)
                keys.append(prompt_key(history))
            for ci, c in enumerate(criteria):
                for s in range(k):
                    unit = (i * len(criteria) + ci) * k + s
                    for output in outputs[c]:
                        yield unit, output, item.system, item.item_id, s, keys[ci], item.group

    left = _Left()
    found_rows = unsettled(rows())
    if found_rows is None:  # nothing stored for the rater: every unit is asked
        left.asked = None
        return left
    per_item = len(criteria) * k
    unit, key = -1, ""
    found: list[Found] = []
    for row_unit, row_key, row in _with_end(found_rows):
        if row_unit != unit and unit >= 0:
            left.decide(unit, items[unit // per_item], key, found, parsed, k)
            found = []
        unit, key = row_unit, row_key
        found.append(row)
    return left


class _PromptOrder:
    """The jobs' prompts in sorted order, without holding a key of every prompt as Python objects (at 10⁶ jobs
    those keys, freed after the sort, left 400 bytes a job in the allocator): each prompt's :func:`_sort_key`
    is kept as a number (which side of the first prompt it leaves, and where) and the first
    :data:`HEAD_BYTES` bytes of what follows in UTF-8 (whose byte order is the characters' order), in numpy
    arrays filled a block at a time. Prompts whose cut keys tie, where a key was cut, are rendered again and
    ordered by their whole key: the order is :func:`_sort_key`'s, ties kept in job order."""

    HEAD_BYTES = 24
    BLOCK = 65_536

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        self.reference: str | None = None
        self.where: list[Any] = []  # int64 blocks: side and place of leaving the reference, one number
        self.heads: list[Any] = []  # S24 blocks
        self.cut: list[Any] = []  # bool blocks: the head is not the whole rest (or holds a NUL, which numpy drops)
        self._block: tuple[list[int], list[bytes], list[bool]] = ([], [], [])
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def add(self, prompt: str) -> None:
        """The next job's prompt."""
        self.reference = prompt if self.reference is None else self.reference
        side, at, rest = _sort_key(self.reference, prompt)
        head = rest[:self.HEAD_BYTES].encode("utf-8", "surrogatepass")
        where, heads, cut = self._block
        where.append(side << 40 | (at + (1 << 39)))
        heads.append(head[:self.HEAD_BYTES])
        cut.append(len(rest) > self.HEAD_BYTES or len(head) > self.HEAD_BYTES or b"\0" in head)
        self.n += 1
        if len(where) == self.BLOCK:
            self._flush()

    def _flush(self) -> None:
        np = self.np
        where, heads, cut = self._block
        if where:
            self.where.append(np.array(where, dtype=np.int64))
            self.heads.append(np.array(heads, dtype=f"S{self.HEAD_BYTES}"))
            self.cut.append(np.array(cut, dtype=bool))
        self._block = ([], [], [])

    def sorted(self, prompt_of: Callable[[int], str]) -> list[int]:
        """The jobs' numbers in their prompts' order (``prompt_of(j)`` renders job ``j``'s prompt again)."""
        np = self.np
        self._flush()
        where, heads, cut = (np.concatenate(x) for x in (self.where, self.heads, self.cut))
        self.where, self.heads, self.cut = [], [], []
        ranked = np.lexsort((np.arange(self.n), heads, where))
        w, h = where[ranked], heads[ranked]
        starts = np.concatenate(([True], (w[1:] != w[:-1]) | (h[1:] != h[:-1])))
        run = np.cumsum(starts) - 1  # the run of equal cut keys each place is in
        sizes = np.bincount(run)
        open_runs = np.nonzero((sizes > 1) & (np.bincount(run, weights=cut[ranked]) > 0))[0]
        firsts = np.nonzero(starts)[0]
        reference = self.reference or ""
        for r in open_runs.tolist():
            a, b = int(firsts[r]), int(firsts[r] + sizes[r])
            ranked[a:b] = sorted(ranked[a:b].tolist(), key=lambda j: (_sort_key(reference, prompt_of(j)), j))
        return ranked.tolist()


def _sort_key(reference: str, prompt: str) -> tuple[int, int, str]:
    """A key that sorts prompts as the prompts themselves sort, holding only what follows the prefix a prompt
    shares with ``reference`` (the template's wording before an item's text is not held once per job).

    A prompt that leaves ``reference`` at ``d`` below it (a smaller character, or its end) is smaller the
    earlier it leaves; one that leaves above it is larger the earlier it leaves; two that leave at the same
    place on the same side compare by what follows.

    Example:
        >>> keys = ["ab", "abc", "b", "", "aa", "abd", "a"]
        >>> sorted(keys, key=lambda p: _sort_key("abc", p)) == sorted(keys)
        True
    """
    lo, hi = 0, min(len(reference), len(prompt))
    while lo < hi:  # the length of the shared prefix
        mid = (lo + hi + 1) // 2
        if prompt.startswith(reference[:mid]):
            lo = mid
        else:
            hi = mid - 1
    rest = prompt[lo:]
    if not rest and lo == len(reference):
        return (1, 0, "")
    below = not rest or (lo < len(reference) and rest[0] < reference[lo])
    return (0, lo, rest) if below else (2, -lo, rest)


def _with_end(rows: Iterator[tuple[int, str, Found]]) -> Iterator[tuple[int, str, Found]]:
    """The rows, then an end marker (unit -2) that closes the last unit."""
    yield from rows
    yield -2, "", None
