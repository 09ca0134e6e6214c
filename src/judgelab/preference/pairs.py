"""Pairs to judge: two systems' responses to one instruction, shown in an order (``docs/preference-judging.md``).

A pair is asked as one prompt holding both responses in the order shown, so each order is an item of
its own: ``item_id`` the instruction's id, ``system`` the two systems in order (``"A vs B"``), ``text``
the instruction, and the template fields ``first`` / ``second`` (``{text, system, turns}``),
``instruction``, ``reference``, ``turns`` and ``ties``. The store's judgment key (rater, criterion,
system, item, sample) therefore names the item, both systems in order, the criterion and the sample, and
the prompt holds both texts: a swapped order or an edited response is a new prompt, never an old answer.

Which pairs: ``baseline:SYSTEM`` (every other system against it, the baseline shown first, as
AlpacaEval's ``output_1``), ``all`` (every two systems, in input order) or a file of pairs (columns
``first, second`` and optionally ``item_id``: without it the pair is judged on every instruction). Both
orders by default (``orders="given"``: only as listed). A verdict comes back from the ratings table
(+1 first, -1 second, 0 tie; by log-probabilities ``2 p_first - 1``) as a row of the verdicts table
(:func:`verdicts_of`).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.choices import PairOrders
from judgelab.datasets.items import Item
from judgelab.datasets.readers import read_records
from judgelab.datasets.responses import Response, Responses
from judgelab.errors import JudgelabError
from judgelab.preference.verdicts import normalise_verdicts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Pair", "PairSet", "build_pairs", "verdicts_of", "verdict_summary", "pair_label"]


def pair_label(first: str, second: str) -> str:
    """The ``system`` of a pair's judgments: the two systems in the order shown.

    Example:
        >>> pair_label("gpt", "baseline")
        'gpt vs baseline'
    """
    return f"{first} vs {second}"


@dataclass(frozen=True)
class Pair:
    """One instruction's two responses in the order shown."""

    item_id: str
    first: str
    second: str


@dataclass(frozen=True)
class PairSet:
    """The pairs of a run, each in the orders asked, and the items that ask them.

    Attributes:
        pairs: the pairs as chosen (one order each).
        asked: every pair in every order asked (``pairs`` and, with both orders, each swapped).
        orders: ``both`` or ``given``.
        ties: whether the template offers a tie (the ``ties`` field of every item).
        responses: the responses the pairs are made of.
    """

    pairs: tuple[Pair, ...]
    asked: tuple[Pair, ...]
    orders: str
    ties: bool
    responses: Responses = field(repr=False)

    @property
    def n_orders(self) -> int:
        return 2 if self.orders == "both" else 1

    def describe(self) -> str:
        """``12 pairs × 2 orders = 24 prompts per criterion and sample``."""
        n = len(self.pairs)
        return (f"{n} pair{'s' * (n != 1)} × {self.n_orders} order{'s' * (self.n_orders != 1)} = {len(self.asked)} "
                "prompts per criterion and sample")

    def items(self) -> list[Item]:
        """One item per pair and order (see the module docstring for its fields)."""
        return [_item(self.responses.get(p.item_id, p.first), self.responses.get(p.item_id, p.second), self.ties)
                for p in self.asked]

    def by_label(self) -> dict[str, tuple[str, str]]:
        """``system`` of a pair's judgments → (first, second)."""
        return {pair_label(p.first, p.second): (p.first, p.second) for p in self.asked}


def _side(r: Response | None) -> dict[str, Any]:
    assert r is not None
    return {"text": r.response, "system": r.system, "turns": [{"role": a, "content": b} for a, b in r.turns]}


def _item(first: Response | None, second: Response | None, ties: bool) -> Item:
    assert first is not None and second is not None
    extra = {"instruction": first.instruction, "first": _side(first), "second": _side(second),
             "reference": first.reference, "turns": _side(first)["turns"], "ties": ties}
    return Item(first.item_id, first.instruction, pair_label(first.system, second.system), None, None, extra)


def build_pairs(responses: Responses, pairs: str, orders: PairOrders = "both", ties: bool = True) -> PairSet:
    """The pairs ``pairs`` names (``baseline:SYSTEM``, ``all`` or a file) over ``responses``.

    Raises:
        JudgelabError: an unknown baseline or system, a system without a response to an instruction a pair
            needs, fewer than two systems, a pair of a system with itself, a repeated pair, a bad ``orders``,
            two pairs whose labels collide — one line saying what to change.

    Example:
        >>> import pandas as pd
        >>> from judgelab.datasets.responses import load_responses
        >>> r = load_responses(pd.DataFrame({"item_id": ["q"] * 3, "instruction": ["Why?"] * 3,
        ...                                  "system": ["base", "x", "y"], "response": ["A.", "B.", "C."]}))
        >>> build_pairs(r, "baseline:base").describe()
        '2 pairs × 2 orders = 4 prompts per criterion and sample'
    """
    if orders not in ("both", "given"):
        raise JudgelabError(f"--orders {orders!r}: both (each pair in both orders) or given (as listed)")
    chosen = _chosen(responses, pairs)
    seen: set[tuple[str, str, str]] = set()
    for p in chosen:
        if p.first == p.second:
            raise JudgelabError(f"--pairs: item {p.item_id!r} pairs {p.first!r} with itself")
        for a, b in ((p.first, p.second), (p.second, p.first)) if orders == "both" else ((p.first, p.second),):
            if (p.item_id, a, b) in seen:
                raise JudgelabError(f"--pairs: {a!r} and {b!r} on item {p.item_id!r} are listed twice "
                                    f"(with --orders both each pair is asked in both orders: list it once)")
            seen.add((p.item_id, a, b))
        for system in (p.first, p.second):
            if responses.get(p.item_id, system) is None:
                raise JudgelabError(f"{responses.path}: system {system!r} has no response to item {p.item_id!r}; "
                                    "every system of a pair needs one (add it, or list the pairs in a --pairs file)")
    asked = [q for p in chosen for q in ((p, Pair(p.item_id, p.second, p.first)) if orders == "both" else (p,))]
    labels: dict[str, tuple[str, str]] = {}
    for q in asked:
        if labels.setdefault(pair_label(q.first, q.second), (q.first, q.second)) != (q.first, q.second):
            raise JudgelabError(f"systems {q.first!r} and {q.second!r} give the pair label {pair_label(q.first, q.second)!r} "
                                "another pair has too; rename a system")
    if not chosen:
        raise JudgelabError(f"--pairs {pairs}: no pair to judge")
    return PairSet(tuple(chosen), tuple(asked), orders, ties, responses)


def _chosen(responses: Responses, pairs: str) -> list[Pair]:
    """The pairs as named, one order each (the baseline first; all pairs in input order)."""
    systems = responses.systems
    items = list(responses.instructions)
    kind, _, rest = pairs.partition(":")
    if kind == "baseline":
        if rest not in systems:
            raise JudgelabError(f"--pairs baseline:{rest}: no system {rest!r} in {responses.path} "
                                f"(systems: {', '.join(systems)})")
        others = [s for s in systems if s != rest]
        if not others:
            raise JudgelabError(f"--pairs baseline:{rest}: {responses.path} has no other system to compare with it")
        return [Pair(i, rest, s) for i in items for s in others]
    if pairs == "all":
        if len(systems) < 2:
            raise JudgelabError(f"--pairs all: {responses.path} has {len(systems)} system; pairs need two or more")
        return [Pair(i, a, b) for i in items for a, b in itertools.combinations(systems, 2)]
    path = Path(pairs)
    if not path.suffix:
        raise JudgelabError(f"--pairs {pairs!r}: baseline:SYSTEM, all, or a .csv/.jsonl file of pairs (first, second, "
                            "optionally item_id)")
    out: list[Pair] = []
    rows = read_records(path)
    for index, row in enumerate(rows):
        where = f"{path}: row {index + 1} ({rows.where(index)})"
        first, second, item = (_cell(row.get(k)) for k in ("first", "second", "item_id"))
        if first is None or second is None:
            raise JudgelabError(f"{where}: a pair needs 'first' and 'second' (systems; optionally 'item_id')")
        for system in (first, second):
            if system not in systems:
                raise JudgelabError(f"{where}: no system {system!r} in {responses.path} (systems: {', '.join(systems)})")
        if item is not None and item not in responses.instructions:
            raise JudgelabError(f"{where}: no item {item!r} in {responses.path}")
        out += [Pair(i, first, second) for i in ([item] if item is not None else items)]
    return out


def _cell(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
        return None
    return str(value)


def verdicts_of(ratings: "pd.DataFrame", pairs: PairSet) -> "pd.DataFrame":
    """The verdicts table of a run's pair judgments (``ratings``: the ratings table of those judgments).

    A parsed verdict's score is +1 (first), -1 (second) or 0 (tie); a log-probability one
    (``score_parsed`` empty, ``score_logprob`` set) is ``2 p_first - 1``, so ``p_first`` is given and the
    choice follows from it (:func:`judgelab.preference.verdicts.normalise_verdicts`). A failed judgment is a
    row without a choice and its status. Rows of other systems (not pairs of this run) are left out.

    Example:
        >>> import pandas as pd
        >>> from judgelab.datasets.responses import load_responses
        >>> r = load_responses(pd.DataFrame({"item_id": ["q"] * 2, "instruction": ["Why?"] * 2,
        ...                                  "system": ["a", "b"], "response": ["A.", "B."]}))
        >>> ratings = pd.DataFrame({"item_id": ["q", "q"], "system": ["a vs b", "b vs a"], "criterion": ["overall"] * 2,
        ...                         "rater": ["m@t"] * 2, "sample": [0, 0], "score": [1.0, -1.0], "status": ["ok"] * 2,
        ...                         "raw": ["[[A]]", "[[B]]"]})
        >>> verdicts_of(ratings, build_pairs(r, "all"))[["first", "second", "choice"]].values.tolist()
        [['a', 'b', 'first'], ['b', 'a', 'second']]
    """
    import pandas as pd

    labels = pairs.by_label()
    texts = {(p.item_id, p.first, p.second): _texts(pairs.responses, p) for p in pairs.asked}
    rows = []
    for r in ratings.itertuples(index=False):
        if r.system not in labels or (r.item_id, *labels[r.system]) not in texts:
            continue
        first, second = labels[r.system]
        parsed = getattr(r, "score_parsed", math.nan)
        logprob = getattr(r, "score_logprob", math.nan)
        soft = _missing(parsed) and not _missing(logprob)
        ok = r.status == "ok" and not _missing(r.score)
        choice = None if not ok or soft else "first" if r.score > 0 else "second" if r.score < 0 else "tie"
        rows.append({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater, "sample": r.sample,
                     "first": first, "second": second, "choice": choice,
                     "p_first": (float(logprob) + 1) / 2 if ok and soft else math.nan, "status": r.status, "raw": r.raw,
                     **dict(zip(("instruction", "first_text", "second_text"), texts[(r.item_id, first, second)]))})
    columns = ["item_id", "criterion", "rater", "sample", "first", "second", "choice", "p_first", "status", "raw"]
    return normalise_verdicts(pd.DataFrame(rows, columns=columns if not rows else None))


def _texts(responses: Responses, p: Pair) -> tuple[str, str, str]:
    a, b = responses.get(p.item_id, p.first), responses.get(p.item_id, p.second)
    assert a is not None and b is not None
    return a.instruction, a.response, b.response


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def verdict_summary(verdicts: "pd.DataFrame", pairs: PairSet) -> dict[str, Any]:
    """What results.json records (and the terminal says) of a run's verdicts: the pairs and orders asked and,
    per rater, its verdicts by choice and the failed ones (no verdict read).

    Example:
        >>> import pandas as pd
        >>> from judgelab.datasets.responses import load_responses
        >>> r = load_responses(pd.DataFrame({"item_id": ["q"] * 2, "instruction": ["Why?"] * 2,
        ...                                  "system": ["a", "b"], "response": ["A.", "B."]}))
        >>> v = pd.DataFrame({"item_id": ["q"], "rater": ["m"], "first": ["a"], "second": ["b"], "choice": ["tie"]})
        >>> verdict_summary(normalise_verdicts(v), build_pairs(r, "all"))["raters"]
        {'m': {'verdicts': 1, 'first': 0, 'second': 0, 'tie': 1, 'failed': 0}}
    """
    raters: dict[str, dict[str, int]] = {}
    for rater, group in verdicts.groupby("rater", sort=True):
        counts = group["choice"].value_counts()
        raters[str(rater)] = {"verdicts": len(group), **{c: int(counts.get(c, 0)) for c in ("first", "second", "tie")},
                              "failed": int((group["status"] != "ok").sum())}
    return {"pairs": len(pairs.pairs), "orders": pairs.orders, "prompts": len(pairs.asked), "ties": pairs.ties,
            "raters": raters}
