"""What a folder's judgments cost and how they ended: calls, tokens and call latency per rater, and
judgments by status — computed once, when a command writes its folder, and kept in the folder's
record (``results.json``, each step's ``calls`` result); the report's "Cost and time" and
"Failures" sections render it and compute nothing.

Calls and tokens are counted once per distinct ledger call used by a rater's judgments (a call with
``n`` samples counts once; calls answered from the ledger of an earlier identical run count too).
The latency is the judge's answer time per call, as the ledger recorded it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from judgelab.missing import finite_or_none
from judgelab.status import Status

__all__ = ["RaterCalls", "StatusCount", "CallCosts", "call_costs", "rater_calls", "with_statuses", "attempt_keys"]

_KEY = re.compile(r'"key":\s*"([^"\\]*)"')


def attempt_keys(attempts: object) -> list[str]:
    """The ledger keys of a judgment's attempts, in order, read from its ``attempts`` JSON.

    A quoted ``"key": "`` cannot occur inside a JSON string value (its quotes would be escaped),
    so the keys are found without parsing the whole list.

    Example:
        >>> attempt_keys('[{"key": "k1", "text": "say \\\\"key\\\\": \\\\"x\\\\""}, {"key": "k2"}]')
        ['k1', 'k2']
    """
    if isinstance(attempts, list):
        return [str(a.get("key")) for a in attempts if isinstance(a, dict) and a.get("key")]
    if not isinstance(attempts, str) or not attempts:
        return []
    return _KEY.findall(attempts)


_num = finite_or_none  # one reader of a recorded number (judgelab.missing)


@dataclass(frozen=True)
class RaterCalls:
    """One rater's calls: ``calls`` distinct ledger calls found for its ``judgments``; tokens summed over
    them; latency over the calls that recorded one (None when none did)."""

    rater: str
    judgments: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_sum_s: float | None
    latency_mean_s: float | None
    latency_p95_s: float | None

    @property
    def tokens_per_judgment(self) -> float | None:
        """Prompt and completion tokens per judgment (None without calls)."""
        return (self.prompt_tokens + self.completion_tokens) / self.judgments if self.calls and self.judgments else None


@dataclass(frozen=True)
class StatusCount:
    """Judgments of ``rater`` (on ``criterion``; None: all criteria) that ended with ``status``, and
    their share of the rater's judgments (of that criterion)."""

    rater: str
    criterion: str | None
    status: str
    judgments: int
    share: float


@dataclass(frozen=True)
class CallCosts:
    """A folder's calls and statuses (see the module docstring); ``to_record`` / ``from_record`` for results.json."""

    raters: tuple[RaterCalls, ...]
    statuses: tuple[StatusCount, ...]
    statuses_by_criterion: tuple[StatusCount, ...]

    @property
    def failed(self) -> int:
        """Judgments that did not end ``ok``."""
        return sum(s.judgments for s in self.statuses if s.status != Status.OK)

    @property
    def total(self) -> int:
        """Every judgment counted."""
        return sum(s.judgments for s in self.statuses)

    def to_record(self) -> dict[str, Any]:
        return {"raters": [vars(r).copy() for r in self.raters],
                "statuses": [vars(s).copy() for s in self.statuses],
                "statuses_by_criterion": [vars(s).copy() for s in self.statuses_by_criterion]}

    @classmethod
    def from_record(cls, doc: Mapping[str, Any]) -> "CallCosts":
        def calls(d: Mapping[str, Any]) -> RaterCalls:
            return RaterCalls(str(d["rater"]), int(d["judgments"]), int(d["calls"]), int(d["prompt_tokens"]),
                              int(d["completion_tokens"]), _num(d.get("latency_sum_s")), _num(d.get("latency_mean_s")),
                              _num(d.get("latency_p95_s")))

        def status(d: Mapping[str, Any]) -> StatusCount:
            criterion = d.get("criterion")
            return StatusCount(str(d["rater"]), None if criterion is None else str(criterion), str(d["status"]),
                               int(d["judgments"]), float(d["share"]))

        return cls(tuple(calls(d) for d in doc.get("raters") or []),
                   tuple(status(d) for d in doc.get("statuses") or []),
                   tuple(status(d) for d in doc.get("statuses_by_criterion") or []))


def _statuses(counts: pd.DataFrame, by: list[str]) -> tuple[StatusCount, ...]:
    """Judgments by ``by`` and status, with their share, from a table of counts (``judgments`` per rater, criterion, status)."""
    grouped = counts.groupby(by + ["status"], sort=True)["judgments"].sum()
    totals = counts.groupby(by, sort=True)["judgments"].sum()
    out = []
    for index, n in grouped.items():
        rater, criterion = (index[0], index[1]) if len(by) == 2 else (index[0], None)
        whole = totals[(rater, criterion)] if len(by) == 2 else totals[rater]
        out.append(StatusCount(str(rater), None if criterion is None else str(criterion), str(index[-1]), int(n),
                               float(n) / float(whole)))
    return tuple(out)


def call_costs(judgments: pd.DataFrame, responses: Mapping[str, str]) -> CallCosts:
    """The calls, tokens, latency and statuses of ``judgments``.

    Args:
        judgments: the judgments (columns ``rater``, ``criterion``, ``status`` and ``attempts`` or ``keys``).
        responses: ledger key → the stored response JSON (keys absent from it are not counted).

    Returns:
        A :class:`CallCosts`.

    Example:
        >>> df = pd.DataFrame({"rater": ["j", "j"], "criterion": ["c", "c"], "status": ["ok", "no_rating"],
        ...                    "attempts": ['[{"key": "k"}]', '[{"key": "k"}]']})
        >>> costs = call_costs(df, {"k": '{"prompt_tokens": 10, "completion_tokens": 2, "latency_s": 0.5}'})
        >>> costs.raters[0].calls, costs.raters[0].prompt_tokens, costs.raters[0].latency_p95_s, costs.failed
        (1, 10, 0.5, 1)
    """
    if judgments.empty:
        return CallCosts((), (), ())
    keys_of = judgments["keys"] if "keys" in judgments.columns else judgments["attempts"].map(attempt_keys)
    raters = []
    for rater, keys in keys_of.groupby(judgments["rater"].astype(str), sort=True):
        distinct: set[str] = set()
        for row in keys:
            distinct.update(row)
        raters.append(rater_calls(str(rater), int(len(keys)), (responses.get(key) for key in distinct)))
    counts = judgments.assign(rater=judgments["rater"].astype(str), criterion=judgments["criterion"].astype(str),
                              status=judgments["status"].astype(str)).groupby(["rater", "criterion", "status"]).size()
    return with_statuses(tuple(raters), [(r, c, s, int(n)) for (r, c, s), n in counts.items()])


def rater_calls(rater: str, judgments: int, responses: Iterable[str | None]) -> RaterCalls:
    """One rater's :class:`RaterCalls` from the stored response JSON of each distinct call its ``judgments``
    used (None: a call the ledger does not hold; a response that is not a JSON object is not counted)."""
    prompt = completion = found = 0
    latencies: list[float] = []
    for text in responses:
        if text is None:
            continue
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            continue
        if not isinstance(doc, dict):
            continue
        found += 1
        prompt += int(doc.get("prompt_tokens") or 0)
        completion += int(doc.get("completion_tokens") or 0)
        latency = _num(doc.get("latency_s"))
        if latency is not None:
            latencies.append(latency)
    lat = np.sort(np.asarray(latencies, float))  # sorted: the sum does not depend on the order the calls come in
    return RaterCalls(rater, judgments, found, prompt, completion, float(lat.sum()) if lat.size else None,
                      float(lat.mean()) if lat.size else None, float(np.percentile(lat, 95)) if lat.size else None)


def with_statuses(raters: tuple[RaterCalls, ...], counts: Iterable[tuple[str, str, str, int]]) -> CallCosts:
    """:class:`CallCosts` of ``raters`` with the judgments by status from ``(rater, criterion, status, judgments)``
    counts (by criterion too when there are several criteria)."""
    frame = pd.DataFrame(list(counts), columns=["rater", "criterion", "status", "judgments"])
    if frame.empty:
        return CallCosts(raters, (), ())
    by_criterion = _statuses(frame, ["rater", "criterion"]) if frame["criterion"].nunique() > 1 else ()
    return CallCosts(raters, _statuses(frame, ["rater"]), by_criterion)
