"""The item browser's data: every judged unit with its exact prompt, samples and human ratings.

A *unit* is one (rater, criterion, system, item): the judge's score is the mean of its
successful samples, the human score the mean over human raters of each rater's mean
rating of that item and criterion (as ``judgelab agree`` computes it). Units are ranked by
|judge − human| (largest first; units without a human score last), or, when the folder
has no human ratings, by the spread (max − min) of the judge's own samples.

Two payloads are embedded in the page:

* ``index`` — plain JSON, columnar, one entry per unit in ranked order:
  ``raters``, ``criteria``, ``systems`` (name lists) and the per-unit arrays ``r, c, s``
  (indices into them), ``i`` (item id), ``j`` (judge mean), ``h`` (human mean),
  ``d`` (judge − human), ``sp`` (sample spread), ``n`` (samples), ``ok`` (successful
  samples), ``nh`` (human ratings);
* ``details`` — JSON ``{"S": strings, "D": units}`` compressed with gzip and base64
  encoded (decompressed in the browser with ``DecompressionStream``). Texts are interned in
  ``S``: message contents are stored as lists of line indices (a prompt's lines are
  ``"\\n".join(S[k] for k in lines)``), so a template's lines and an item's text are stored
  once however many criteria and samples share them. ``D[u]`` is
  ``[prompts, samples, humans, score_cue, rated]`` with ``prompts = [[[role, [line, …]], …], …]``
  (the distinct message lists sent for the unit), ``samples = [[sample, status, score,
  score_parsed, score_logprob, logprob_outside, raw (S index), prompt (index into prompts),
  attempts or null, distribution or null], …]``, ``attempts = [[text (S index), status,
  finish_reason, reasoning (S index or null)], …]`` (given when there was more than one
  attempt or a reasoning text), ``distribution = [[token, probability], …]`` (the ten most
  likely next tokens where the score was read), ``humans = [[rater, score], …]``, and ``rated``
  the text the judge rated as the store's ``items`` table recorded it (``null`` when it was not
  recorded): ``[text, context or null, [[name, part], …]]``, each a *text reference* — an
  ``S`` index; ``[prompt, message, start, length]`` where the text stands verbatim in a message of
  the unit's own prompts; or ``[unit, prompt, message, start, length]`` where it stands in a
  prompt of another unit of the same rater and item (a context that only one criterion's prompt
  holds). Offsets count UTF-16 code units, as JavaScript does, so a text that is in a prompt is
  not stored twice.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd

from judgelab.report.html_calls import (
    CallCache,
    _choice,
    distribution,
    messages_of,
    parse_attempts,
)
from judgelab.report.html_items_notes import items_notes
from judgelab.report.html_model import ItemBrowser, natural_key
from judgelab.report import html_parts
from judgelab.report.humans import HumanRatings
from judgelab.status import Status
from judgelab.store.items import ItemText

__all__ = ["build_items", "unit_key", "PAGE_SIZE", "CallCache", "messages_of", "distribution", "parse_attempts",
           "text_of_unit"]

PAGE_SIZE = 50
#: Units whose calls are read from the store at once (:meth:`CallCache.load`).
CALL_BLOCK_UNITS = 1000
#: After the name of a rater whose ratings were collected with ``annotate`` and kept out of the human mean.
APART = " (annotate, not in the human mean)"


def unit_key(rater: str, criterion: str, system: str, item_id: str) -> tuple[str, str, str, str]:
    """The identity of one unit of the browser."""
    return (rater, criterion, system, item_id)


def _num(value: Any, digits: int = 4) -> float | None:
    if value is None:
        return None
    if type(value) is not float:
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
    return round(value, digits) if math.isfinite(value) else None


class _Interner:
    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        k = self._index.get(text)
        if k is None:
            k = self._index[text] = len(self.strings)
            self.strings.append(text)
        return k


def _human_index(humans: HumanRatings) -> dict[tuple[str, str | None, str], dict[str, list[float]]]:
    table = humans.table
    out: dict[tuple[str, str | None, str], dict[str, list[float]]] = {}
    if table is None or table.empty:
        return out
    ok = table[(table["status"] == Status.OK) & table["score"].notna()]
    for criterion, system, item, rater, score in zip(ok["criterion"].tolist(), ok["system"].tolist(),
                                                     ok["item_id"].tolist(), ok["rater"].tolist(), ok["score"].tolist()):
        key = (str(criterion), system if isinstance(system, str) else None, str(item))
        out.setdefault(key, {}).setdefault(str(rater), []).append(float(score))
    return out


def text_of_unit(texts: dict[tuple[str, str, str], ItemText], by_item: dict[tuple[str, str], set[ItemText]],
                 rater: str, system: str, item: str) -> ItemText | None:
    """The text a unit's rater judged: recorded under its rater, else (a rater relabelled after the run,
    as a recipe's ratings file may be) the one text that every rater recorded for the same system and item."""
    found = texts.get((rater, system, item))
    if found is not None:
        return found
    others = by_item.get((system, item), set())
    return next(iter(others)) if len(others) == 1 else None


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _in_prompts(value: str, messages: list[tuple[tuple[str, str], ...]]) -> list[int] | None:
    """``[prompt, message, start, length]`` (UTF-16 units) where ``value`` stands verbatim in the messages, else None."""
    if value:
        for p, msgs in enumerate(messages):
            for m, (_, content) in enumerate(msgs):
                at = content.find(value)
                if at >= 0:
                    return [p, m, _utf16(content[:at]), _utf16(value)]
    return None


class _Texts:
    """Text references of the cards (module docstring): in the unit's own prompts at once; otherwise
    resolved when every unit is known — in another unit's prompt of the same rater and item, else S."""

    def __init__(self, strings: _Interner) -> None:
        self.strings = strings
        self.found: dict[tuple[str, str, str, str], tuple[dict[str, Any], list[int]]] = {}
        self.pending: list[tuple[list[Any], int, tuple[str, str, str, str], dict[str, Any]]] = []

    def ref(self, value: str, messages: list[tuple[tuple[str, str], ...]], unit: tuple[str, str, str, str],
            owner: dict[str, Any], slot: list[Any], index: int) -> None:
        """Set ``slot[index]`` to the reference of ``value`` (now, or in :meth:`resolve`)."""
        key = (unit[0], unit[2], unit[3], value)  # rater, system, item, the text
        here = _in_prompts(value, messages)
        if here is not None:
            slot[index] = here
            self.found.setdefault(key, (owner, here))
        else:
            self.pending.append((slot, index, key, owner))

    def resolve(self, order: dict[int, int], together: Callable[[int, int], bool]) -> None:
        """Fill the pending references once units have their final positions (``id(unit) → index``); a unit
        points into another's prompt only when ``together(its position, the other's)`` (the same part)."""
        for slot, index, key, owner in self.pending:
            hit = self.found.get(key)
            if hit is not None and together(order[id(hit[0])], order[id(owner)]):
                slot[index] = [order[id(hit[0])], *hit[1]]
            else:
                slot[index] = self.strings(key[3])


#: The fields of one judgment as a card reads it (:meth:`_Cards.unit`), in this order.
ROW_FIELDS = ("sample", "status", "score", "score_parsed", "score_logprob", "logprob_outside", "raw", "attempts",
              "keys")


def humans_of(human_idx: dict[tuple[str, str | None, str], dict[str, list[float]]], humans: HumanRatings,
              criterion: str, system: str, item: str) -> tuple[list[float], list[list[Any]]]:
    """A unit's per-rater human means (those in the human mean) and its ``[[rater, score], …]`` list."""
    if not human_idx:
        return [], []
    apart = humans.apart
    human_scores: dict[str, list[float]] = {}
    for source in (human_idx.get((criterion, system, item)), human_idx.get((criterion, None, item))):
        for name, values in (source or {}).items():
            human_scores.setdefault(name, []).extend(values)
    per_rater = [sum(v) / len(v) for name, v in human_scores.items() if not (apart and name in humans.collected)]
    hlist = [[name + (APART if apart and name in humans.collected else ""), round(v, 4)]
             for name, values in sorted(human_scores.items()) for v in values]
    return per_rater, hlist


def unit_numbers(scores: list[float], per_rater: list[float]) -> tuple[Any, Any, Any, Any]:
    """A unit's index numbers ``j, h, d, sp`` from its successful sample scores and per-rater human means."""
    jmean = sum(scores) / len(scores) if scores else None
    hmean = sum(per_rater) / len(per_rater) if per_rater else None
    return (_num(jmean), _num(hmean), _num(jmean - hmean) if jmean is not None and hmean is not None else None,
            _num(max(scores) - min(scores)) if scores else None)


def ok_scores(rows: list[tuple[Any, ...]]) -> list[float]:
    """The scores of a unit's successful samples (rows in :data:`ROW_FIELDS` order)."""
    return [float(r[2]) for r in rows if str(r[1]) == Status.OK and _num(r[2]) is not None]


def rank_key(has_human: bool) -> Callable[[dict[str, Any]], Any]:
    """The default order of the cards: |judge − human| largest first, else the sample spread; then by key."""
    if has_human:
        return lambda u: (u["d"] is None, -abs(u["d"]) if u["d"] is not None else 0.0, u["key"])
    return lambda u: (u["sp"] is None, -(u["sp"] or 0.0), u["key"])


def part_order(u: dict[str, Any]) -> tuple[str, str, str, str]:
    """The order of the units in the parts: by rater, system, item and criterion (an item's texts in one part)."""
    return (u["key"][3], u["key"][1], u["key"][2], u["key"][0])


class _Cards:
    """The details of units, one at a time (:meth:`unit`), with the texts and names they share."""

    def __init__(self, humans: HumanRatings, calls: CallCache, templates: dict[str, str] | None,
                 texts: dict[tuple[str, str, str], ItemText], by_item: dict[tuple[str, str], set[ItemText]],
                 human_idx: dict[tuple[str, str | None, str], dict[str, list[float]]],
                 raters: dict[str, int], criteria: dict[str, int], systems: dict[str, int]) -> None:
        self.humans, self.calls, self.templates, self.texts, self.by_item = humans, calls, templates or {}, texts, by_item
        self.human_idx, self.raters, self.criteria, self.systems = human_idx, raters, criteria, systems
        self.strings = _Interner()
        self.encoded: dict[tuple[tuple[str, str], ...], list[Any]] = {}
        self.refs = _Texts(self.strings)
        self.prompts_available = False
        self.texts_shown = 0

    def prompts(self, rows: list[tuple[Any, ...]]) -> tuple[list[tuple[tuple[str, str], ...]], list[int | None]]:
        """The distinct message lists of a unit's samples (in sample order) and each sample's index into them."""
        ids: dict[tuple[tuple[str, str], ...], int] = {}
        msgs_of: list[tuple[tuple[str, str], ...]] = []
        at: list[int | None] = []
        for row in rows:
            keys = row[8]
            msgs = self.calls.messages(keys[-1] if keys else None)
            if msgs is None:
                at.append(None)
                continue
            if msgs not in ids:
                ids[msgs] = len(msgs_of)
                msgs_of.append(msgs)
            at.append(ids[msgs])
        return msgs_of, at

    def unit(self, unit: tuple[str, str, str, str], rows: list[tuple[Any, ...]]) -> dict[str, Any]:
        """The index entry and details of one unit (``rows`` in :data:`ROW_FIELDS` order, by sample)."""
        rater, criterion, system, item = unit
        template = self.templates.get(rater)
        calls, strings = self.calls, self.strings
        prompt_msgs, at = self.prompts(rows)
        prompts: list[list[Any]] = []
        samples: list[list[Any]] = []
        cue = None
        for row, p_index in zip(rows, at):
            if p_index == len(prompts):  # a message list first seen: its lines interned before this sample's texts
                self.prompts_available = True
                msgs = prompt_msgs[p_index]
                lines = self.encoded.get(msgs)
                if lines is None:
                    lines = self.encoded[msgs] = [[role, [strings(line) for line in content.split("\n")]]
                                                  for role, content in msgs]
                prompts.append(lines)
            sample_no, status, score, parsed, logprob, outside, raw, attempts_text, keys = row
            last_key = keys[-1] if keys else None
            request = calls.request(last_key)
            if p_index is not None and request.get("score_cue") is not None:  # type: ignore[union-attr]
                cue = str(request["score_cue"])  # type: ignore[index]
            raw = None if raw is None or (isinstance(raw, float) and math.isnan(raw)) else str(raw)
            att = None
            if len(keys) > 1 or (isinstance(attempts_text, str) and '"reasoning"' in attempts_text):
                att = [[strings(str(a.get("text") or "")), str(a.get("status") or ""), a.get("finish_reason"),
                        strings(a["reasoning"]) if a.get("reasoning") else None] for a in parse_attempts(attempts_text)]
            dist = None
            sample = int(sample_no)
            if request is not None and calls.has_tokens(last_key):
                response = calls.response(last_key)
                choice = _choice(request, response, sample)
                if choice and choice.get("tokens"):
                    dist = distribution(request, response, sample, raw, template)
            samples.append([sample, str(status), _num(score), _num(parsed), _num(logprob), _num(outside), strings(raw),
                            p_index, att, dist])
        scores = ok_scores(rows)
        per_rater, hlist = humans_of(self.human_idx, self.humans, criterion, system, item)
        rated: list[Any] | None = None
        record: dict[str, Any] = {}
        shown = text_of_unit(self.texts, self.by_item, rater, system, item)
        if shown is not None:
            rated = [None, None, [[name, None] for name, _ in shown.parts]]
            self.refs.ref(shown.text, prompt_msgs, unit, record, rated, 0)
            if shown.context is not None:
                self.refs.ref(shown.context, prompt_msgs, unit, record, rated, 1)
            for slot, (_, part) in zip(rated[2], shown.parts):
                self.refs.ref(part, prompt_msgs, unit, record, slot, 1)
            self.texts_shown += 1
        j, h, d, sp = unit_numbers(scores, per_rater)
        record.update({
            "r": self.raters.setdefault(rater, len(self.raters)),
            "c": self.criteria.setdefault(criterion, len(self.criteria)),
            "s": self.systems.setdefault(system, len(self.systems)), "i": item, "j": j, "h": h, "d": d, "sp": sp,
            "n": len(rows), "ok": len(scores), "nh": len(hlist), "key": (criterion, system, item, rater),
            "detail": [prompts, samples, hlist, cue, rated],
        })
        return record


def build_items(judge: pd.DataFrame, humans: HumanRatings, calls: CallCache,
                page_size: int = PAGE_SIZE, templates: dict[str, str] | None = None,
                texts: dict[tuple[str, str, str], ItemText] | None = None, embedded: int | None = None,
                part_units: int | None = None) -> ItemBrowser:
    """The item browser over the judge's judgments (see the module docstring for the payload).

    ``judge`` has the judgments columns and ``keys`` (the ledger keys of each judgment's
    attempts); ``templates`` maps a rater to its template's name (for the rating scale);
    ``texts`` the texts each rater judged (``Store.item_texts``), shown first on each card. Above ``embedded``
    units the page holds the first ``embedded`` and the rest go to parts of ``part_units``
    (:mod:`judgelab.report.html_parts`: ``EMBEDDED_UNITS`` and ``PART_UNITS`` when not given).
    :mod:`judgelab.report.html_items_stream` builds the same browser from a store in bounded memory.
    """
    embedded = html_parts.EMBEDDED_UNITS if embedded is None else embedded
    part_units = html_parts.PART_UNITS if part_units is None else part_units
    texts = texts or {}
    by_item = texts_by_item(texts)
    systems: dict[str, int] = {str(s): k for k, s in enumerate(sorted({str(s) for s in judge["system"]}, key=natural_key))}
    cards = _Cards(humans, calls, templates, texts, by_item, _human_index(humans), {}, {}, systems)
    units: list[dict[str, Any]] = []
    col = {c: judge[c].tolist() for c in ("rater", "criterion", "system", "item_id", *ROW_FIELDS)}
    rows_of = list(zip(*(col[c] for c in ROW_FIELDS)))
    ids = [(str(r), str(c), str(s), str(i)) for r, c, s, i in zip(col["rater"], col["criterion"], col["system"], col["item_id"])]
    order = sorted(range(len(ids)), key=lambda k: (ids[k], col["sample"][k]))

    groups: list[tuple[tuple[str, str, str, str], list[int]]] = []
    for k in order:
        if not groups or ids[k] != groups[-1][0]:
            groups.append((ids[k], []))
        groups[-1][1].append(k)
    for start in range(0, len(groups), CALL_BLOCK_UNITS):  # the store's calls read a block of units at a time
        block = groups[start:start + CALL_BLOCK_UNITS]
        calls.load(key for _, rows in block for k in rows for key in col["keys"][k])
        cards.encoded.clear()  # a block's prompts are its own (a unit's calls are asked by that unit alone)
        for unit, rows in block:
            units.append(cards.unit(unit, [rows_of[k] for k in rows]))

    has_human = any(u["h"] is not None for u in units)
    default_sort = "absdiff" if has_human else "spread"
    units.sort(key=rank_key(has_human))
    columns = ["r", "c", "s", "i", "j", "h", "d", "sp", "n", "ok", "nh"]
    if len(units) > embedded:  # the parts hold the rest by rater and item (an item's texts in one part), ranked by o
        for rank, u in enumerate(units):
            u["o"] = rank
        units[embedded:] = sorted(units[embedded:], key=part_order)
        columns.append("o")
    cards.refs.resolve({id(u): k for k, u in enumerate(units)}, html_parts.same_part(embedded, part_units))
    index: dict[str, Any] = {
        "raters": list(cards.raters), "criteria": list(cards.criteria), "systems": list(cards.systems),
        **{k: [u[k] for u in units] for k in columns},
    }
    split = html_parts.split_units(index, [u.pop("detail") for u in units], cards.strings.strings, embedded,
                                   part_units)
    notes = items_notes(humans, has_human, cards.prompts_available, len(units), cards.texts_shown)
    return ItemBrowser(units=len(units), has_human=has_human, human_sources=list(humans.sources),
                       prompts_available=cards.prompts_available, index=split.index,
                       details_gzip_base64=split.details_gzip_base64, page_size=page_size, default_sort=default_sort,
                       notes=notes, embedded=split.embedded, part_units=split.part_units, parts=split.parts,
                       version=split.version)


def texts_by_item(texts: dict[tuple[str, str, str], ItemText]) -> dict[tuple[str, str], set[ItemText]]:
    """The texts recorded for each (system, item), whichever rater recorded them (:func:`text_of_unit`)."""
    by_item: dict[tuple[str, str], set[ItemText]] = {}
    for (_, s, i), t in texts.items():
        by_item.setdefault((s, i), set()).add(t)
    return by_item
